//! The cache room's unit tests.

use super::{depfile::*, dirs::*, record::*, stamps::*};
use std::path::PathBuf;

#[test]
fn stamp_table_spares_reading_unchanged_files_and_never_hides_a_change() {
    use std::time::{Duration, SystemTime};
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.h"), dir.path().join("b.h"));
    std::fs::write(&a, "one").unwrap();
    std::fs::write(&b, "two").unwrap();
    // Older than the build by more than a tick.
    std::thread::sleep(Duration::from_millis(120));
    let started = SystemTime::now();
    let h = ContentHashes::with_stamps(dir.path());
    let (ha, hb) = (h.file(&a).unwrap(), h.file(&b).unwrap());
    assert_eq!(h.reads(), 2);
    h.save_stamps(dir.path(), started);
    // The next build reads neither.
    let h = ContentHashes::with_stamps(dir.path());
    assert_eq!((h.file(&a), h.file(&b)), (Some(ha), Some(hb)));
    assert_eq!(h.reads(), 0);
    // A write of the same size moves the change time: read again, the new hash.
    std::fs::write(&a, "ONE").unwrap();
    let started = SystemTime::now();
    let h = ContentHashes::with_stamps(dir.path());
    let new_a = h.file(&a);
    assert!(new_a.is_some() && new_a != Some(ha));
    assert_eq!(h.file(&b), Some(hb));
    assert_eq!(h.reads(), 1);
    // a.h changed less than a tick before that build: not kept, read again.
    h.save_stamps(dir.path(), started);
    let h = ContentHashes::with_stamps(dir.path());
    assert_eq!((h.file(&a), h.file(&b)), (new_a, Some(hb)));
    assert_eq!(h.reads(), 1);
    // A damaged table (one digit of a hash changed) is not used.
    let table = dir.path().join("stamps");
    let text = std::fs::read_to_string(&table).unwrap();
    assert!(text.lines().count() == 4 && text.lines().last().unwrap().starts_with("# "));
    let line = text.lines().nth(1).unwrap();
    let flipped = if line.starts_with('0') { "1" } else { "0" };
    let damaged = format!("{flipped}{}", &line[1..]);
    std::fs::write(&table, text.replacen(line, &damaged, 1)).unwrap();
    let h = ContentHashes::with_stamps(dir.path());
    assert_eq!((h.file(&a), h.file(&b)), (new_a, Some(hb)));
    assert_eq!(h.reads(), 2);
}

#[test]
fn depfiles() {
    let d = parse_depfile(b"out/k.o: src/k.hip inc/a.h \\\n  inc/my\\ dir/b.h C:/x/c.h\n");
    assert_eq!(
        d,
        ["src/k.hip", "inc/a.h", "inc/my dir/b.h", "C:/x/c.h"]
            .map(PathBuf::from)
            .to_vec()
    );
    let d = parse_depfile(b"C:/out/k.o: C:/src/k.hip\n");
    assert_eq!(d, [PathBuf::from("C:/src/k.hip")]);
    let d = parse_depfile(b"k.o: k.hip a.h\na.h:\n");
    assert_eq!(d, ["k.hip", "a.h"].map(PathBuf::from).to_vec());
    // Backslashes as make and Ninja read clang's escaping.
    let d = parse_depfile(b"k.o: a\\\\\\ b.h c\\d.h e\\\\f\\#g.h h\\\\ $$i.h\n");
    assert_eq!(
        d,
        ["a\\ b.h", "c\\d.h", "e\\\\f#g.h", "h\\", "$i.h"]
            .map(PathBuf::from)
            .to_vec()
    );
}

#[test]
fn records_round_trip_and_freshness() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.h");
    std::fs::write(&a, "one").unwrap();
    let h = ContentHashes::default();
    let rec = Record {
        context: 7,
        outputs: vec![(dir.path().join("k.o"), 3, 9)],
        deps: vec![(a.clone(), h.file(&a).unwrap())],
        probes: vec![PathBuf::from("/x/y.h")],
        stderr: vec!["k.hip:1:2: warning: w".into(), "    1 | int x;".into()],
    };
    let rp = dir.path().join("r.rec");
    rec.store(&rp).unwrap();
    let back = Record::load(&rp).unwrap();
    assert_eq!(back, rec);
    assert!(back.is_fresh(&ContentHashes::default()));
    std::fs::write(&a, "two").unwrap();
    assert!(!back.is_fresh(&ContentHashes::default()));
}

#[test]
fn leftovers_of_killed_runs_go_and_running_jobs_stay() {
    let dir = tempfile::tempdir().unwrap();
    let running = JobDir::new(dir.path()).unwrap();
    let killed = JobDir::new(dir.path()).unwrap();
    let killed_path = killed.path().to_path_buf();
    // A killed run: its directory stays, its lock is released with the process.
    let _ = killed.dir.keep();
    drop(killed._lock);
    let young = dir.path().join(".job-without-lock");
    std::fs::create_dir(&young).unwrap();
    remove_leftovers(dir.path());
    assert!(running.path().is_dir());
    assert!(!killed_path.exists());
    assert!(
        young.is_dir(),
        "a young directory without a lock may be a job starting"
    );
}

#[test]
fn a_file_changed_after_the_job_started_is_not_vouched_for() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.h");
    std::fs::write(&a, "one").unwrap();
    let hashes = ContentHashes::default();
    let before = hashes.file(&a).unwrap();
    std::thread::sleep(CHANGE_SLACK * 2);
    let started = std::time::SystemTime::now();
    // Unchanged since the job started: the hash known from before stands.
    assert_eq!(hashes.as_read_since(&a, started), Ok(Some(before)));
    // Changed during the job: what the compiler read is not known.
    std::fs::write(&a, "two").unwrap();
    assert_eq!(hashes.as_read_since(&a, started), Err(()));
    let missing = dir.path().join("gone.h");
    assert_eq!(hashes.as_read_since(&missing, started), Ok(None));
}

#[test]
fn builds_starting_together_ask_a_tool_once() {
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("tool-1.txt");
    let asked = std::sync::atomic::AtomicUsize::new(0);
    let read = || std::fs::read_to_string(&record).ok();
    let answers: Vec<Option<String>> = std::thread::scope(|s| {
        let run = || {
            super::read_or_ask(&record, read, || {
                asked.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                std::thread::sleep(std::time::Duration::from_millis(150));
                std::fs::write(&record, "answer").unwrap();
                Some("answer".to_string())
            })
        };
        let (a, b) = (s.spawn(run), s.spawn(run));
        vec![a.join().unwrap(), b.join().unwrap()]
    });
    assert_eq!(answers, [Some("answer".into()), Some("answer".into())]);
    assert_eq!(
        asked.into_inner(),
        1,
        "the second read what the first asked"
    );
}

//! Reading a compiler's depfile: the inputs of a job, its source first.

use foldhash::{HashSet, HashSetExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

/// The prerequisites of a Make-style depfile (`out.o: a.hip b.h \` …), unescaped as GNU make
/// and Ninja read what clang writes: `2N+1` backslashes before a space are `N` backslashes and
/// a space within the name (`2N` end it after `N`), `\#` is `#` (other backslashes before it
/// kept), `$$` is `$`, and any other backslash is itself. Names are bytes (a file name need
/// not be UTF-8).
pub(crate) fn parse_depfile(text: &[u8]) -> Vec<PathBuf> {
    let mut deps: Vec<PathBuf> = Vec::new();
    // Hundreds of headers: a set keeps the first of each, in order, in linear time.
    let mut seen: HashSet<PathBuf> = HashSet::new();
    let mut cur: Vec<u8> = Vec::new();
    let mut seen_colon = false;
    let mut flush = |cur: &mut Vec<u8>, seen_colon: bool, deps: &mut Vec<PathBuf>| {
        if seen_colon && !cur.is_empty() {
            let p = path_from_bytes(std::mem::take(cur));
            if seen.insert(p.clone()) {
                deps.push(p);
            }
        }
        cur.clear();
    };
    let mut i = 0;
    while i < text.len() {
        let c = text[i];
        i += 1;
        match c {
            b'\\' => {
                let mut n = 1;
                while text.get(i) == Some(&b'\\') {
                    n += 1;
                    i += 1;
                }
                match text.get(i) {
                    Some(b' ') => {
                        cur.extend(std::iter::repeat_n(b'\\', n / 2));
                        i += 1;
                        if n % 2 == 1 {
                            cur.push(b' ');
                        } else {
                            flush(&mut cur, seen_colon, &mut deps);
                        }
                    }
                    Some(b'#') => {
                        cur.extend(std::iter::repeat_n(b'\\', n - 1));
                        cur.push(b'#');
                        i += 1;
                    }
                    Some(b'\n') | Some(b'\r') => {
                        // A line continuation (after any literal backslashes).
                        cur.extend(std::iter::repeat_n(b'\\', n - 1));
                        if text.get(i) == Some(&b'\r') {
                            i += 1;
                        }
                        if text.get(i) == Some(&b'\n') {
                            i += 1;
                        }
                        flush(&mut cur, seen_colon, &mut deps);
                    }
                    _ => cur.extend(std::iter::repeat_n(b'\\', n)),
                }
            }
            b'$' if text.get(i) == Some(&b'$') => {
                i += 1;
                cur.push(b'$');
            }
            b':' if !seen_colon
                && matches!(text.get(i), Some(b' ' | b'\n' | b'\r' | b'\t') | None) =>
            {
                seen_colon = true;
                cur.clear();
            }
            b' ' | b'\t' | b'\r' => flush(&mut cur, seen_colon, &mut deps),
            b'\n' => {
                flush(&mut cur, seen_colon, &mut deps);
                // A new rule (for example `-MP` phony targets) starts on the next line.
                seen_colon = false;
            }
            _ => cur.push(c),
        }
    }
    flush(&mut cur, seen_colon, &mut deps);
    deps
}

#[cfg(unix)]
pub(crate) fn path_from_bytes(b: Vec<u8>) -> PathBuf {
    use std::os::unix::ffi::OsStringExt;
    PathBuf::from(std::ffi::OsString::from_vec(b))
}

#[cfg(not(unix))]
pub(crate) fn path_from_bytes(b: Vec<u8>) -> PathBuf {
    PathBuf::from(String::from_utf8_lossy(&b).into_owned())
}

/// The file a depfile names when clang changed its backslashes: clang writes file names
/// through `llvm::sys::path::native`, which on POSIX turns each `\\` into `/`, so that
/// `inc/a\\b.h` is listed as `inc/a/b.h`. For a `path` that does not exist, every `/` after
/// the first existing directory is tried as either (a `/` only where the name so far is a
/// directory); the first existing file is returned, `None` when there is none.
pub(crate) fn restore_backslashes(path: &Path) -> Option<PathBuf> {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        if path.exists() {
            return None;
        }
        let bytes = path.as_os_str().as_bytes();
        let parts: Vec<&[u8]> = bytes.split(|&b| b == b'/').collect();
        if parts.len() < 2 {
            return None;
        }
        fn search(prefix: Vec<u8>, rest: &[&[u8]], budget: &mut usize) -> Option<PathBuf> {
            let Some((next, rest)) = rest.split_first() else {
                let p = path_from_bytes(prefix);
                return p.is_file().then_some(p);
            };
            if *budget == 0 {
                return None;
            }
            *budget -= 1;
            let is_dir = prefix.is_empty() || path_from_bytes(prefix.clone()).is_dir();
            if is_dir {
                let mut slash = prefix.clone();
                slash.push(b'/');
                slash.extend_from_slice(next);
                if let Some(p) = search(slash, rest, budget) {
                    return Some(p);
                }
            }
            if prefix.is_empty() || prefix.ends_with(b"/") {
                return None;
            }
            let mut backslash = prefix;
            backslash.push(b'\\');
            backslash.extend_from_slice(next);
            search(backslash, rest, budget)
        }
        let mut budget = 4096;
        search(parts[0].to_vec(), &parts[1..], &mut budget)
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        None
    }
}

/// A job's inputs: its source, then every file its depfile names (`no_depfile` set when
/// there is none) (a relative name is
/// taken from `dir`, the directory the command ran in, else this process's).
pub(crate) fn read_deps(
    no_depfile: &AtomicBool,
    source: &Path,
    depfile: &Path,
    dir: Option<&Path>,
) -> Vec<PathBuf> {
    let text = std::fs::read(depfile).unwrap_or_else(|_| {
        no_depfile.store(true, Ordering::Relaxed);
        Vec::new()
    });
    let mut deps = vec![source.to_path_buf()];
    let mut seen: HashSet<PathBuf> = deps.iter().cloned().collect();
    for dep in parse_depfile(&text) {
        let dep = if dep.is_absolute() {
            dep
        } else {
            // The compiler ran in the job's directory (the root), else in this process's.
            match dir {
                Some(d) => d.join(&dep),
                None => std::env::current_dir().map(|c| c.join(&dep)).unwrap_or(dep),
            }
        };
        // A name with a backslash, which clang listed with a `/` instead.
        let dep = restore_backslashes(&dep).unwrap_or(dep);
        if seen.insert(dep.clone()) {
            deps.push(dep);
        }
    }
    deps
}

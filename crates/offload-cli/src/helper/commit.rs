//! `compile`'s outputs, all or nothing: the output and the depfile are prepared (their
//! directories checked) before any compile runs, refused when one names an input of the build
//! (a source, a header it read) or the other, and committed together
//! ([`OutputFile::commit_all`]: both or neither, the old pair kept on failure). Runs that
//! share an out-dir take turns on each library name ([`NameLock`]), so that one never packs
//! or copies another's intermediates.

use std::fs::File;
use std::path::{Path, PathBuf};

use crate::fileio::{OutputFile, error_text, os_path};

/// What tells whether two names are the same file: the device and inode when the file
/// exists, and the absolute path.
struct Identity {
    inode: Option<(u64, u64)>,
    /// The absolute path, when it can be made.
    absolute: Option<PathBuf>,
    path: PathBuf,
}

impl Identity {
    /// One `stat` of `p`.
    fn of(p: &Path) -> Identity {
        #[cfg(unix)]
        let inode = {
            use std::os::unix::fs::MetadataExt;
            std::fs::metadata(p).ok().map(|m| (m.dev(), m.ino()))
        };
        #[cfg(not(unix))]
        let inode = None;
        Identity {
            inode,
            absolute: std::path::absolute(p).ok(),
            path: p.to_path_buf(),
        }
    }

    /// Whether both name the same file: the same inode when both exist, else the same
    /// absolute path (the same name when one cannot be made absolute).
    fn same(&self, other: &Identity) -> bool {
        if let (Some(a), Some(b)) = (self.inode, other.inode) {
            return a == b;
        }
        match (&self.absolute, &other.absolute) {
            (Some(a), Some(b)) => a == b,
            _ => self.path == other.path,
        }
    }
}

/// The outputs of one `compile`: `(what, path)` pairs (`"output"`, `"depfile"`).
pub(crate) struct Outputs<'a> {
    named: Vec<(&'static str, &'a str)>,
}

impl<'a> Outputs<'a> {
    pub(crate) fn new(output: &'a str, depfile: Option<&'a str>) -> Outputs<'a> {
        let mut named = vec![("output", output)];
        named.extend(depfile.map(|d| ("depfile", d)));
        Outputs { named }
    }

    /// An error when an output names one of `inputs` (`kind`: "source", "header") or
    /// another output.
    pub(crate) fn refuse_inputs(&self, kind: &str, inputs: &[PathBuf]) -> Result<(), String> {
        // Each name is looked at once (a build reads hundreds of headers).
        let known: Vec<Identity> = inputs.iter().map(|i| Identity::of(i)).collect();
        for (what, path) in &self.named {
            let p = Identity::of(&os_path(path));
            if let Some((input, _)) = inputs.iter().zip(&known).find(|(_, k)| p.same(k)) {
                return Err(format!(
                    "'{path}': the {what} is {} {kind} of this build ({}), which it would \
                     overwrite; choose another {what}",
                    if kind == "header" { "a" } else { "also a" },
                    input.display()
                ));
            }
        }
        if let [(_, out), (_, dep)] = self.named[..] {
            if Identity::of(&os_path(out)).same(&Identity::of(&os_path(dep))) {
                return Err(format!(
                    "'{dep}': the depfile is also the output; choose another depfile"
                ));
            }
        }
        Ok(())
    }

    /// Opens a staged file for every output (a missing directory, a directory in the way or
    /// a file that may not be written is an error now, before anything runs), and removes the
    /// staged files of earlier runs killed with `SIGKILL` beside each.
    pub(crate) fn prepare(&self) -> Result<Vec<OutputFile>, String> {
        self.named
            .iter()
            .map(|(_, path)| {
                let f = OutputFile::create(path)
                    .map_err(|e| format!("'{path}': {}", error_text(&e)))?;
                if let Some(target) = f.target() {
                    crate::fileio::remove_stale_temporaries(target);
                }
                Ok(f)
            })
            .collect()
    }
}

/// Writes `contents` into the staged `files` and moves them into place together; or, when
/// every target holds its contents already (a no-op build), only moves their modification
/// times to now ([`touch_unchanged`]).
pub(crate) fn commit(mut files: Vec<OutputFile>, contents: &[&[u8]]) -> Result<(), String> {
    if touch_unchanged(&files, contents) {
        return Ok(()); // the staged temporaries go with `files`
    }
    for (f, data) in files.iter_mut().zip(contents) {
        std::io::Write::write_all(f.file(), data)
            .map_err(|e| format!("'{}': {}", f.path().display(), error_text(&e)))?;
    }
    OutputFile::commit_all(files).map_err(|(p, e)| format!("'{}': {}", p.display(), error_text(&e)))
}

/// When every staged output's target is a regular file holding its contents already: moves
/// their modification times to now, as writing them would (make and ninja compare them with
/// their inputs'), and says so. Replacing a file by a rename costs a no-op build more than
/// anything else it does (ext4 flushes the new file's blocks when it replaces one). `false`
/// (nothing done, or times moved that the commit will move again) otherwise.
fn touch_unchanged(files: &[OutputFile], contents: &[&[u8]]) -> bool {
    let holds = |t: &Path, data: &[u8]| {
        std::fs::symlink_metadata(t).is_ok_and(|m| m.is_file() && m.len() == data.len() as u64)
            && std::fs::read(t).is_ok_and(|d| d == data)
    };
    let same = files.len() == contents.len()
        && files
            .iter()
            .zip(contents)
            .all(|(f, data)| f.target().is_some_and(|t| holds(t, data)));
    if !same {
        return false;
    }
    let now = std::fs::FileTimes::new().set_modified(std::time::SystemTime::now());
    files.iter().all(|f| {
        f.target()
            .and_then(|t| std::fs::OpenOptions::new().write(true).open(t).ok())
            .is_some_and(|h| h.set_times(now).is_ok())
    })
}

/// An exclusive lock on one library name in an out-dir (`.<name>.lock`), held while a run
/// builds and copies it: runs that share the out-dir write the same intermediate names.
pub(crate) struct NameLock(#[allow(dead_code)] File);

impl NameLock {
    pub(crate) fn take(out_dir: &Path, name: &str) -> Result<NameLock, String> {
        let fail = |what: &str, p: &Path, e: std::io::Error| {
            format!("{what} '{}': {}", p.display(), error_text(&e))
        };
        std::fs::create_dir_all(out_dir).map_err(|e| fail("creating", out_dir, e))?;
        let path = out_dir.join(format!(".{name}.lock"));
        let f = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|e| fail("creating", &path, e))?;
        #[cfg(unix)]
        rustix::fs::flock(&f, rustix::fs::FlockOperation::LockExclusive)
            .map_err(|e| fail("locking", &path, e.into()))?;
        Ok(NameLock(f))
    }
}

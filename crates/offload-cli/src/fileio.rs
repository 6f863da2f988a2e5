//! File handling shared by the command-line tools and the build layer: inputs are
//! mapped rather than read, and outputs appear atomically.
//!
//! [`OutputFile`] writes to a temporary file beside the target and renames it into
//! place on [`OutputFile::commit`]; dropped without a commit, it leaves nothing
//! behind and an existing target untouched. Symbolic links are followed to their file;
//! targets that are not regular files (`/dev/null`, a FIFO, `-` for standard output,
//! `/dev/stdout`) are written directly, and shared files (hard links, another owner's)
//! in place at commit: see [`OutputFile`] for the whole policy.
//!
//! The parent keeps the names and messages every tool shares (an argument's file, a path's
//! text, an I/O error's text); the inputs (`input.rs`), the outputs (`output.rs`) and the
//! cleanup of uncommitted outputs on a signal (`temporaries.rs`) are its children, re-exported
//! here under their old names.

use std::io;
use std::path::{Path, PathBuf};

mod input;
mod output;
mod temporaries;

pub use input::{CopySource, Input, InputData, Memory};
pub use output::{OutputFile, remove_stale_temporaries};
pub use temporaries::on_terminating_signal;

/// The text of an I/O error as LLVM prints it: the C library's message, without
/// Rust's ` (os error N)` suffix.
pub fn error_text(e: &io::Error) -> String {
    if let Some(code) = e.raw_os_error() {
        return strip_os_suffix(io::Error::from_raw_os_error(code).to_string());
    }
    // tempfile wraps the OS error with the temporary file's path: report the cause.
    let cause = e
        .get_ref()
        .and_then(|inner| inner.source())
        .and_then(|s| s.downcast_ref::<io::Error>());
    match cause {
        Some(cause) => error_text(cause),
        None => strip_os_suffix(e.to_string()),
    }
}

/// Cuts Rust's ` (os error N)` and anything after it (tempfile adds ` at path …`).
fn strip_os_suffix(s: String) -> String {
    match s.find(" (os error ") {
        Some(i) => s[..i].to_owned(),
        None => s,
    }
}

/// The file a path argument names: arguments are text holding the bytes given (see
/// [`offload_formats::id::spell`]), so a name that is not UTF-8 is the same name here.
pub fn os_path(path: &str) -> PathBuf {
    PathBuf::from(offload_formats::id::spell::os(path))
}

/// A path as the tools' text holds it (its bytes, for messages; the inverse of [`os_path`]).
pub fn path_text(path: &Path) -> String {
    offload_formats::id::spell::text_of_os(path.as_os_str()).into_owned()
}

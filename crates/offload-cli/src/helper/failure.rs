//! How the subcommands of `offload-build` fail ([`Failure`]: a message, or a standard output
//! closed by its reader, which ends the program quietly), and the reads and writes of whole
//! files whose errors become such messages.

use std::io::{self, Write};

use crate::fileio::{Input, OutputFile, error_text};
use offload_formats::inspect;

pub(crate) enum Failure {
    BrokenPipe,
    Message(String),
}

impl From<String> for Failure {
    fn from(m: String) -> Self {
        Failure::Message(m)
    }
}

impl From<inspect::ExtractError> for Failure {
    fn from(e: inspect::ExtractError) -> Self {
        Failure::Message(e.to_string())
    }
}

impl From<&str> for Failure {
    fn from(m: &str) -> Self {
        Failure::Message(m.to_owned())
    }
}

pub(crate) fn output_error(e: io::Error) -> Failure {
    if e.kind() == io::ErrorKind::BrokenPipe {
        Failure::BrokenPipe
    } else {
        Failure::Message(format!("cannot write the output: {}", error_text(&e)))
    }
}

/// Writes `value` as pretty-printed JSON and a newline.
pub(crate) fn print_json(out: &mut dyn Write, value: &[serde_json::Value]) -> Result<(), Failure> {
    serde_json::to_writer_pretty(&mut *out, value)
        .map_err(|e| output_error(io::Error::other(e)))?;
    writeln!(out).map_err(output_error)
}

pub(crate) fn read(path: &str) -> Result<Input, Failure> {
    Input::open(path).map_err(|e| Failure::Message(format!("'{path}': {}", error_text(&e))))
}

pub(crate) fn write_output(path: &str, bytes: &[u8]) -> Result<(), Failure> {
    let fail = |e: io::Error| Failure::Message(format!("'{path}': {}", error_text(&e)));
    let mut f = OutputFile::create(path).map_err(fail)?;
    f.file().write_all(bytes).map_err(fail)?;
    f.commit().map_err(fail)
}

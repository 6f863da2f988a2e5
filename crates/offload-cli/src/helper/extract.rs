//! `offload-build extract`: one entry, or any byte range, of a file written to an output.

use clap::Args;

use super::failure::{Failure, read, write_output};
use offload_formats::inspect::{self, Selected, Selector};

#[derive(Args, Debug)]
pub(crate) struct ExtractArgs {
    /// The file to read (optional with --uri, which names it).
    file: Option<String>,
    /// The entry's index, as `inspect` shows it.
    #[arg(long, conflicts_with_all = ["id", "uri"])]
    index: Option<usize>,
    /// The entry's ID, as `inspect` shows it.
    #[arg(long, conflicts_with = "uri")]
    id: Option<String>,
    /// Which of several entries with the same ID (0-based).
    #[arg(long, requires = "id")]
    nth: Option<usize>,
    /// A `file://PATH#offset=N&size=M` URI: an entry, or any byte range of the file.
    #[arg(long)]
    uri: Option<String>,
    /// Output file.
    #[arg(short, long)]
    output: String,
}

pub(crate) fn extract(a: &ExtractArgs) -> Result<(), Failure> {
    let (path, selector) = if let Some(u) = &a.uri {
        let (p, offset, size) = inspect::parse_uri(u)
            .ok_or_else(|| format!("'{u}' is not a file://PATH#offset=N&size=M URI"))?;
        if let Some(f) = &a.file {
            if f != p {
                return Err(format!("the URI names '{p}' but the file given is '{f}'").into());
            }
        }
        (p.to_owned(), Selector::Range { offset, size })
    } else {
        let file = a
            .file
            .clone()
            .ok_or_else(|| "a FILE is needed unless --uri names it".to_owned())?;
        let selector = match (&a.index, &a.id) {
            (Some(i), _) => Selector::Index(*i),
            (None, Some(id)) => Selector::Id {
                id: id.clone(),
                nth: a.nth,
            },
            (None, None) => {
                return Err("choose the entry with --index, --id or --uri"
                    .to_owned()
                    .into());
            }
        };
        (file, selector)
    };
    let input = read(&path)?;
    let data = &input.data[..];
    let report = inspect::inspect(data, &path).map_err(|e| e.to_string());
    let bytes = match (&selector, report) {
        // A raw range of a file that cannot be inspected is still a range.
        (Selector::Range { offset, size }, Err(_)) => {
            std::borrow::Cow::Borrowed(inspect::range(data, *offset, *size)?)
        }
        (_, Err(e)) => return Err(e.into()),
        (_, Ok(report)) => match inspect::select(&report, &selector)? {
            Selected::Entry(c, e) => inspect::entry_bytes(data, c, e)?,
            Selected::Range(offset, size) => {
                std::borrow::Cow::Borrowed(inspect::range(data, offset, size)?)
            }
        },
    };
    write_output(&a.output, &bytes)
}

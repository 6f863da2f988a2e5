//! The text bundle layout (clang-offload-bundler's `TextFileHandler`).
//!
//! Each entry is framed by two comment lines, with `C` the type's comment string
//! (`//`, `#` or `;`):
//!
//! ```text
//! \n C __CLANG_OFFLOAD_BUNDLE____START__ <ID>\n
//! <payload, verbatim>
//! \n C __CLANG_OFFLOAD_BUNDLE____END__ <ID>\n
//! ```
//!
//! The payload ends right before the `\n` that starts the end line, so a payload
//! that ends in a newline leaves an empty line there, and one without a final
//! newline round-trips exactly. Entries are read in file order. LLVM loops forever
//! on a start line without an end line; [`TextBundle::parse`] reports it.

use std::borrow::Cow;
use std::io::{self, Write};

use super::{BundleReadError, BundleReadErrorKind};

/// One entry of a text bundle, borrowing from the input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TextEntry<'data> {
    /// The entry ID as written after the start marker.
    pub id: &'data [u8],
    /// Offset of the payload in the input.
    pub offset: u64,
    /// The payload.
    pub data: &'data [u8],
}

impl TextEntry<'_> {
    /// The ID as text (bytes that are not UTF-8 held as [`crate::id::spell`] holds them).
    pub fn id_str(&self) -> Cow<'_, str> {
        crate::id::spell::text(self.id)
    }
}

/// A parsed text bundle.
#[derive(Clone, Debug)]
pub struct TextBundle<'data> {
    entries: Vec<TextEntry<'data>>,
}

fn start_marker(comment: &str) -> Vec<u8> {
    format!("\n{comment} __CLANG_OFFLOAD_BUNDLE____START__ ").into_bytes()
}

fn end_marker(comment: &str) -> Vec<u8> {
    format!("\n{comment} __CLANG_OFFLOAD_BUNDLE____END__ ").into_bytes()
}

fn find(haystack: &[u8], needle: &[u8], from: usize) -> Option<usize> {
    if from > haystack.len() {
        return None;
    }
    memchr_find(&haystack[from..], needle).map(|i| i + from)
}

fn memchr_find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    let (&first, rest) = needle.split_first()?;
    let mut base = 0;
    while let Some(i) = haystack[base..].iter().position(|&b| b == first) {
        let at = base + i;
        if haystack[at + 1..].starts_with(rest) {
            return Some(at);
        }
        base = at + 1;
    }
    None
}

impl<'data> TextBundle<'data> {
    /// Parses `data` as a text bundle whose markers use `comment`.
    ///
    /// Input without any start marker is a bundle with no entries. A start marker
    /// whose ID line never ends is ignored, as in LLVM. A start marker with no end
    /// marker after it is an error.
    pub fn parse(data: &'data [u8], comment: &str) -> Result<Self, BundleReadError> {
        let start = start_marker(comment);
        let end = end_marker(comment);
        let mut entries = Vec::new();
        let mut cursor = 0usize;
        let mut index = 0u64;
        while let Some(s) = find(data, &start, cursor) {
            let id_start = s + start.len();
            let Some(id_end) = find(data, b"\n", id_start) else {
                break;
            };
            let id = &data[id_start..id_end];
            let payload_start = id_end + 1;
            let Some(payload_end) = find(data, &end, payload_start) else {
                return Err(BundleReadError::new(
                    BundleReadErrorKind::MissingEnd {
                        id: crate::id::spell::text(id).into_owned(),
                    },
                    s as u64,
                    Some(index),
                ));
            };
            entries.push(TextEntry {
                id,
                offset: payload_start as u64,
                data: &data[payload_start..payload_end],
            });
            index += 1;
            // Skip the end line: up to and including its terminating newline.
            match find(data, b"\n", payload_end + 1) {
                Some(nl) => cursor = nl + 1,
                None => break,
            }
        }
        Ok(TextBundle { entries })
    }

    /// Entries in file order (the order LLVM lists and unbundles them).
    pub fn entries(&self) -> &[TextEntry<'data>] {
        &self.entries
    }
}

/// Writes the start line of a text bundle entry.
pub fn write_start<W: Write>(out: &mut W, comment: &str, id: &[u8]) -> io::Result<()> {
    out.write_all(&start_marker(comment))?;
    out.write_all(id)?;
    out.write_all(b"\n")
}

/// Writes the end line of a text bundle entry.
pub fn write_end<W: Write>(out: &mut W, comment: &str, id: &[u8]) -> io::Result<()> {
    out.write_all(&end_marker(comment))?;
    out.write_all(id)?;
    out.write_all(b"\n")
}

/// Builds a whole text bundle in memory from `(id, payload)` pairs.
pub fn write_bundle(comment: &str, entries: &[(&[u8], &[u8])]) -> Vec<u8> {
    let mut out = Vec::new();
    for (id, data) in entries {
        write_start(&mut out, comment, id).expect("memory");
        out.extend_from_slice(data);
        write_end(&mut out, comment, id).expect("memory");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_spec_example() {
        let b = write_bundle(
            "//",
            &[
                (b"host-x86_64-unknown-linux-gnu-", b"int host;\n"),
                (b"hip-amdgcn-amd-amdhsa--gfx906", b"int dev;"),
            ],
        );
        let expected = "\n// __CLANG_OFFLOAD_BUNDLE____START__ host-x86_64-unknown-linux-gnu-\nint host;\n\n// __CLANG_OFFLOAD_BUNDLE____END__ host-x86_64-unknown-linux-gnu-\n\n// __CLANG_OFFLOAD_BUNDLE____START__ hip-amdgcn-amd-amdhsa--gfx906\nint dev;\n// __CLANG_OFFLOAD_BUNDLE____END__ hip-amdgcn-amd-amdhsa--gfx906\n";
        assert_eq!(String::from_utf8(b).unwrap(), expected);
    }

    #[test]
    fn round_trips_with_and_without_final_newline() {
        for comment in ["//", "#", ";"] {
            let entries: [(&[u8], &[u8]); 3] = [(b"a-b", b"x\n"), (b"c-d", b"y"), (b"e-f", b"")];
            let b = write_bundle(comment, &entries);
            let t = TextBundle::parse(&b, comment).unwrap();
            let got: Vec<(&[u8], &[u8])> = t.entries().iter().map(|e| (e.id, e.data)).collect();
            assert_eq!(got, entries);
        }
    }

    #[test]
    fn wrong_comment_finds_nothing() {
        let b = write_bundle("//", &[(b"a", b"x")]);
        assert!(TextBundle::parse(&b, ";").unwrap().entries().is_empty());
    }

    #[test]
    fn start_without_end_is_an_error() {
        let mut b = write_bundle("#", &[(b"a", b"x"), (b"bb", b"y")]);
        let cut = b.len() - "\n# __CLANG_OFFLOAD_BUNDLE____END__ bb\n".len();
        b.truncate(cut);
        let e = TextBundle::parse(&b, "#").unwrap_err();
        assert_eq!(e.entry, Some(1));
        assert!(e.to_string().contains("'bb'"), "{e}");
    }
}

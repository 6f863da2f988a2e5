//! Names that are bytes, spelled as text.
//!
//! LLVM's tools treat file names, targets and entry IDs as bytes: a target may hold a byte that
//! is not UTF-8 (`hip-amdgcn-amd-amdhsa\xff--gfx90a`), and the bundle ID LLVM writes keeps it.
//! The readers and writers here work on text (`&str`), so such names are carried losslessly in
//! it: a byte that is not part of valid UTF-8 is held as the private-use code point
//! `U+10FF00 + byte` (`U+10FF80..=U+10FFFF`), and a genuine code point of that range is held
//! as its four UTF-8 bytes, each so escaped. [`text`] and [`bytes`] are exact inverses, and
//! valid UTF-8 outside that range (every name in practice) is its own text, unchanged.
//!
//! Every place where a name leaves as bytes (a file name to the OS, an ID written into a
//! bundle, a section name, a message) turns it back with [`bytes`] (or [`os`]); every place
//! where bytes become a name uses [`text`] (or [`text_of_os`]).

use std::borrow::Cow;

/// The first code point of the range that holds raw bytes (`U+10FF00 + byte`, bytes `0x80..`).
const BASE: u32 = 0x10FF00;

fn reserved(c: char) -> bool {
    (BASE + 0x80..=BASE + 0xFF).contains(&(c as u32))
}

fn escaped(b: u8) -> char {
    // `b >= 0x80` always (ASCII is valid UTF-8), so this is a valid scalar value.
    char::from_u32(BASE + u32::from(b)).unwrap_or(char::REPLACEMENT_CHARACTER)
}

/// The text that holds `bytes` (borrowed when they are UTF-8 without reserved code points).
pub fn text(bytes: &[u8]) -> Cow<'_, str> {
    if let Ok(s) = std::str::from_utf8(bytes) {
        if !s.chars().any(reserved) {
            return Cow::Borrowed(s);
        }
    }
    let mut out = String::with_capacity(bytes.len() + 8);
    for chunk in bytes.utf8_chunks() {
        for c in chunk.valid().chars() {
            if reserved(c) {
                let mut buf = [0; 4];
                for &b in c.encode_utf8(&mut buf).as_bytes() {
                    out.push(escaped(b));
                }
            } else {
                out.push(c);
            }
        }
        out.extend(chunk.invalid().iter().map(|&b| escaped(b)));
    }
    Cow::Owned(out)
}

/// The bytes a text from [`text`] holds (borrowed when it holds no raw byte).
pub fn bytes(text: &str) -> Cow<'_, [u8]> {
    if !text.chars().any(reserved) {
        return Cow::Borrowed(text.as_bytes());
    }
    let mut out = Vec::with_capacity(text.len());
    for c in text.chars() {
        if reserved(c) {
            out.push((c as u32 - BASE) as u8);
        } else {
            let mut buf = [0; 4];
            out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
        }
    }
    Cow::Owned(out)
}

/// The OS string (a file name, an argument) a text holds.
pub fn os(text: &str) -> std::ffi::OsString {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStringExt;
        std::ffi::OsString::from_vec(bytes(text).into_owned())
    }
    #[cfg(not(unix))]
    {
        std::ffi::OsString::from(String::from_utf8_lossy(&bytes(text)).into_owned())
    }
}

/// The text that holds an OS string (a file name, an argument).
pub fn text_of_os(s: &std::ffi::OsStr) -> Cow<'_, str> {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        text(s.as_bytes())
    }
    #[cfg(not(unix))]
    {
        s.to_string_lossy()
    }
}

/// Writes text holding raw bytes as those bytes: the messages of the tools go through it,
/// so that a file name or target is printed as the bytes given, as LLVM prints it.
#[derive(Debug)]
pub struct BytesWriter<W>(pub W);

impl<W: std::io::Write> std::io::Write for BytesWriter<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        // Text pieces are whole code points; bytes that are not text pass through.
        match std::str::from_utf8(buf) {
            Ok(s) => self.0.write_all(&bytes(s)),
            Err(_) => self.0.write_all(buf),
        }?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_round_trip() {
        let cases: [&[u8]; 6] = [
            b"hip-amdgcn-amd-amdhsa--gfx90a",
            b"in\xff.o",
            b"\xfe\xff\x80",
            "caf\u{e9} \u{10FF80}\u{10FFFF}".as_bytes(),
            b"\xf4\x8f\xbe\x80",
            b"a\xf4\x8f",
        ];
        for c in cases {
            let t = text(c);
            assert_eq!(&*bytes(&t), c, "{t:?}");
        }
        assert!(matches!(text(b"plain"), Cow::Borrowed("plain")));
        assert_eq!(text(b"a\xffb"), "a\u{10FFFF}b");
        let mut out = BytesWriter(Vec::new());
        std::io::Write::write_all(&mut out, text(b"x\xfey").as_bytes()).unwrap();
        assert_eq!(out.0, b"x\xfey");
    }
}

//! A sequence of bundles, as a linker leaves them in a `.hip_fatbin` section.
//!
//! Every translation unit of a HIP program contributes one bundle to `.hip_fatbin`; the
//! linker concatenates the sections, each at a 4096-byte boundary, so the output section
//! holds binary bundles (`__CLANG_OFFLOAD_BUNDLE__`) and compressed bundles (`CCOB`)
//! separated by zero padding. [`Sequence`] walks such a region:
//!
//! - zero bytes between (and before) bundles are skipped;
//! - a binary bundle ends at the end of its farthest payload (or header);
//! - a compressed bundle of version 2 or 3 ends where its total-size field says, one of
//!   version 1 where its zstd frame or zlib stream ends;
//! - any other non-zero byte is an error, and the walk stops there.
//!
//! LLVM 23's `-list` and `llvm-objdump --offloading` find the next bundle by searching for
//! the next magic string instead; the walk here never looks inside a bundle for a magic, so
//! a code object that happens to contain the magic bytes cannot confuse it.
//!
//! ```
//! use offload_formats::bundle::binary::write_bundle;
//! use offload_formats::bundle::sequence::{Sequence, Item};
//! let one = write_bundle(&[(b"hipv4-amdgcn-amd-amdhsa--gfx1100", b"\x7fELF-1")], 1)?;
//! let two = write_bundle(&[(b"hipv4-amdgcn-amd-amdhsa--gfx90a", b"\x7fELF-2")], 1)?;
//! let mut section = one.clone();
//! section.resize(4096, 0);
//! section.extend_from_slice(&two);
//! let found: Vec<_> = Sequence::new(&section).collect::<Result<_, _>>()?;
//! assert_eq!(found.len(), 2);
//! assert_eq!(found[1].offset, 4096);
//! assert!(matches!(found[1].item, Item::Binary(_)));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use crate::kind::FileKind;
use std::fmt;

use super::compressed::{CompressedError, is_compressed};
use super::{BinaryBundle, BundleReadError, CompressedBundle};

/// One bundle of a sequence.
#[derive(Clone, Debug)]
pub enum Item<'data> {
    /// An uncompressed binary bundle (offsets relative to its own start).
    Binary(BinaryBundle<'data>),
    /// A compressed bundle (not decompressed yet).
    Compressed(CompressedBundle<'data>),
}

/// A bundle found in a region, with where it lies.
#[derive(Clone, Debug)]
pub struct Segment<'data> {
    /// Offset of the bundle from the start of the region.
    pub offset: u64,
    /// Bytes the bundle occupies (header, payloads; no trailing padding).
    pub len: u64,
    /// The bundle's bytes.
    pub data: &'data [u8],
    /// The parsed bundle.
    pub item: Item<'data>,
}

/// Why a sequence cannot be walked further.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SequenceError {
    /// A malformed binary bundle at `offset`.
    Binary {
        /// Offset of the bundle in the region.
        offset: u64,
        /// What is wrong (its offset is relative to the bundle).
        error: BundleReadError,
    },
    /// A malformed compressed bundle at `offset`.
    Compressed {
        /// Offset of the bundle in the region.
        offset: u64,
        /// What is wrong.
        error: CompressedError,
    },
    /// A non-zero byte that does not start a bundle.
    Garbage {
        /// Offset of the byte in the region.
        offset: u64,
    },
}

impl fmt::Display for SequenceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SequenceError::Binary { offset, error } => {
                write!(f, "malformed bundle at offset {offset:#x}: {error}")
            }
            SequenceError::Compressed { offset, error } => {
                write!(
                    f,
                    "malformed compressed bundle at offset {offset:#x}: {error}"
                )
            }
            SequenceError::Garbage { offset } => write!(
                f,
                "data at offset {offset:#x} is neither zero padding nor the start of a bundle"
            ),
        }
    }
}

impl std::error::Error for SequenceError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            SequenceError::Binary { error, .. } => Some(error),
            SequenceError::Compressed { error, .. } => Some(error),
            SequenceError::Garbage { .. } => None,
        }
    }
}

/// Iterator over the bundles of a region; see the [module docs](self).
#[derive(Clone, Debug)]
pub struct Sequence<'data> {
    data: &'data [u8],
    at: usize,
    done: bool,
    check_frames: bool,
}

impl<'data> Sequence<'data> {
    /// Walks `data` from its start.
    pub fn new(data: &'data [u8]) -> Self {
        Sequence {
            data,
            at: 0,
            done: false,
            check_frames: true,
        }
    }

    /// Walks `data` reading compressed bundles with [`CompressedBundle::parse_bounded`]: a
    /// version 2 or 3 bundle's frame is not walked, so nothing past each header is read.
    pub fn headers_only(data: &'data [u8]) -> Self {
        Sequence {
            check_frames: false,
            ..Sequence::new(data)
        }
    }

    /// Whether `data` starts with a binary or compressed bundle magic.
    pub fn starts_with_bundle(data: &[u8]) -> bool {
        matches!(
            FileKind::sniff(data),
            FileKind::Bundle | FileKind::CompressedBundle
        )
    }
}

impl<'data> Iterator for Sequence<'data> {
    type Item = Result<Segment<'data>, SequenceError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let skip = self.data[self.at..].iter().position(|&b| b != 0);
        let Some(skip) = skip else {
            self.done = true;
            return None;
        };
        let start = self.at + skip;
        let rest = &self.data[start..];
        let offset = start as u64;
        let parsed = if FileKind::sniff(rest) == FileKind::Bundle {
            match BinaryBundle::parse(rest) {
                Ok(Some(b)) => Ok((b.end(), Item::Binary(b))),
                Ok(None) => Err(SequenceError::Garbage { offset }),
                Err(error) => Err(SequenceError::Binary { offset, error }),
            }
        } else if is_compressed(rest) {
            let c = if self.check_frames {
                CompressedBundle::parse(rest)
            } else {
                CompressedBundle::parse_bounded(rest)
            };
            match c {
                Ok(c) => Ok((c.len() as u64, Item::Compressed(c))),
                Err(error) => Err(SequenceError::Compressed { offset, error }),
            }
        } else {
            Err(SequenceError::Garbage { offset })
        };
        match parsed {
            Ok((len, item)) => {
                // A bundle always occupies at least its magic, so the walk advances.
                let len = len.max(4);
                self.at = start + len as usize;
                Some(Ok(Segment {
                    offset,
                    len,
                    data: &rest[..len as usize],
                    item,
                }))
            }
            Err(e) => {
                self.done = true;
                Some(Err(e))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_keep_their_source() {
        use std::error::Error as _;
        let compressed = compress(b"bundle", &CompressOptions::default()).unwrap();
        let mut bad = compressed.clone();
        bad[4] = 9; // Unknown version.
        let e = Sequence::new(&bad).find_map(Result::err).unwrap();
        let SequenceError::Compressed { error, .. } = &e else {
            panic!("{e:?}");
        };
        assert_eq!(error, &CompressedError::UnknownVersion(9));
        assert_eq!(
            e.source().and_then(|s| s.downcast_ref::<CompressedError>()),
            Some(error)
        );
    }
    use crate::bundle::binary::write_bundle;
    use crate::bundle::compressed::{CompressOptions, Version, compress};

    fn bundle(tag: &[u8]) -> Vec<u8> {
        write_bundle(&[(b"hipv4-amdgcn-amd-amdhsa--gfx1100", tag)], 4096).unwrap()
    }

    #[test]
    fn mixed_sequence_with_padding() {
        let opts = CompressOptions {
            version: Version::V2,
            ..CompressOptions::default()
        };
        let mut region = vec![0u8; 16];
        let c1 = compress(&bundle(b"one"), &opts).unwrap();
        region.extend_from_slice(&c1);
        region.resize(4096, 0);
        region.extend_from_slice(&bundle(b"two"));
        region.resize(3 * 4096 + 3, 0);
        let c3 = compress(&bundle(b"three"), &CompressOptions::default()).unwrap();
        region.extend_from_slice(&c3);
        region.extend_from_slice(&[0; 5]);
        let all: Vec<_> = Sequence::new(&region).collect::<Result<_, _>>().unwrap();
        assert_eq!(all.len(), 3);
        assert_eq!(all[0].offset, 16);
        assert_eq!(all[0].len, c1.len() as u64);
        assert_eq!(all[1].offset, 4096);
        assert!(matches!(all[1].item, Item::Binary(_)));
        assert_eq!(all[2].offset, 3 * 4096 + 3);
        assert_eq!(all[2].data, &c3[..]);
    }

    #[test]
    fn garbage_and_truncation_are_errors() {
        let mut region = bundle(b"x");
        region.push(7);
        let r: Vec<_> = Sequence::new(&region).collect();
        assert_eq!(r.len(), 2);
        assert_eq!(
            r[1].clone().unwrap_err(),
            SequenceError::Garbage {
                offset: region.len() as u64 - 1
            }
        );
        let c = compress(&bundle(b"y"), &CompressOptions::default()).unwrap();
        for cut in [3usize, 10, c.len() - 1] {
            let r: Vec<_> = Sequence::new(&c[..cut]).collect();
            assert_eq!(r.len(), 1, "cut {cut}");
            assert!(r[0].is_err(), "cut {cut}");
        }
        let b = bundle(b"zz");
        for cut in [25usize, 40, b.len() - 1] {
            let r: Vec<_> = Sequence::new(&b[..cut]).collect();
            assert!(r[0].is_err(), "cut {cut}");
        }
        assert_eq!(Sequence::new(&[0; 64]).count(), 0);
    }
}

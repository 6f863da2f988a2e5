//! Decoding only the start of a compressed bundle: what listing its entries, or extracting
//! one of them, needs. The output grows as the caller asks for more, so a listing costs the
//! few kilobytes of the bundle header, not the whole decompressed bundle.

use super::compressed::{CompressedBundle, CompressedError, Stream, with_stream};

/// Output produced per decoding step: one zstd block is at most 128 KiB.
const STEP: usize = 128 << 10;

/// The first bytes of a decompressed bundle, from [`CompressedBundle::decompress_prefix`].
#[derive(Debug)]
pub struct Prefix {
    /// The decoded bytes: at least what was last asked for, unless the data ends before.
    pub data: Vec<u8>,
    /// Whether the compressed data ended (so `data` is the whole bundle).
    pub complete: bool,
}

impl CompressedBundle<'_> {
    /// Decodes the start of the bundle, as far as `need` asks: `need` sees the bytes decoded
    /// so far and returns how many it needs in all (`None` when it has enough). Decoding stops
    /// as soon as the request is met, or when the data ends; the output is never larger than
    /// the request plus one step (128 KiB). No hash is checked (the hash covers the whole
    /// bundle).
    ///
    /// Errors are the decoder's: corrupt data, or a buffer that cannot be allocated
    /// ([`CompressedError::OutOfMemory`]).
    pub fn decompress_prefix(
        &self,
        need: impl FnMut(&[u8]) -> Option<u64>,
    ) -> Result<Prefix, CompressedError> {
        with_stream(self.header().method, self.payload(), |stream| {
            decode_until(need, stream)
        })
    }
}

/// Asks `need` how far to go and lets `stream` decode into the room made for it.
fn decode_until(
    mut need: impl FnMut(&[u8]) -> Option<u64>,
    stream: &mut Stream<'_>,
) -> Result<Prefix, CompressedError> {
    let mut out = Vec::new();
    loop {
        let want = match need(&out) {
            Some(want) if want > out.len() as u64 => want,
            _ => {
                return Ok(Prefix {
                    data: out,
                    complete: false,
                });
            }
        };
        let target = usize::try_from(want)
            .unwrap_or(usize::MAX)
            .min(out.len().saturating_add(STEP));
        out.try_reserve(target - out.len())
            .map_err(|_| CompressedError::OutOfMemory {
                size: target as u64,
            })?;
        if stream.step(&mut out)? {
            return Ok(Prefix {
                data: out,
                complete: true,
            });
        }
    }
}

#[cfg(all(test, feature = "compression"))]
mod tests {
    use super::super::binary::{HeaderRead, read_header, write_bundle};
    use super::super::compressed::{CompressOptions, Method, compress};
    use super::*;

    fn bundle() -> Vec<u8> {
        let big: Vec<u8> = (0..3_000_000u32).map(|i| (i * 7 % 251) as u8).collect();
        write_bundle(
            &[
                (b"host-x86_64-unknown-linux-gnu-".as_slice(), b"".as_slice()),
                (b"hipv4-amdgcn-amd-amdhsa--gfx90a", &big),
                (b"hipv4-amdgcn-amd-amdhsa--gfx942", b"tail entry"),
            ],
            4096,
        )
        .unwrap()
    }

    fn each_method(f: impl Fn(&CompressedBundle<'_>, &[u8])) {
        let plain = bundle();
        for method in [Method::Zstd, Method::Zlib] {
            let options = CompressOptions {
                method,
                ..CompressOptions::default()
            };
            let stored = compress(&plain, &options).unwrap();
            let c = CompressedBundle::parse(&stored).unwrap();
            f(&c, &plain);
        }
    }

    #[test]
    fn the_header_alone_is_decoded_for_a_listing() {
        each_method(|c, plain| {
            let total = plain.len() as u64;
            let p = c
                .decompress_prefix(|d| match read_header(d, total).unwrap().unwrap() {
                    HeaderRead::NeedMore(n) => Some(n),
                    HeaderRead::Complete(..) => None,
                })
                .unwrap();
            assert!(!p.complete);
            assert!(
                p.data.len() <= STEP + 4096,
                "decoded {} bytes",
                p.data.len()
            );
            assert_eq!(p.data[..], plain[..p.data.len()]);
            let Some(HeaderRead::Complete(entries, _)) = read_header(&p.data, total).unwrap()
            else {
                panic!("no header");
            };
            assert_eq!(entries.len(), 3);
            assert_eq!(entries[2].id, b"hipv4-amdgcn-amd-amdhsa--gfx942");
            assert_eq!(entries[1].size, 3_000_000);
        });
    }

    #[test]
    fn decoding_stops_at_the_requested_end_or_at_the_end_of_data() {
        each_method(|c, plain| {
            let p = c.decompress_prefix(|_| Some(1_000_000)).unwrap();
            assert!(p.data.len() >= 1_000_000 && p.data.len() <= 1_000_000 + STEP);
            assert_eq!(p.data[..], plain[..p.data.len()]);
            let all = c.decompress_prefix(|_| Some(u64::MAX)).unwrap();
            assert!(all.complete);
            assert_eq!(all.data, plain);
        });
    }

    #[test]
    fn a_cut_frame_is_an_error_not_a_hang() {
        let plain = bundle();
        let stored = compress(&plain, &CompressOptions::default()).unwrap();
        let c = CompressedBundle::parse(&stored).unwrap();
        let cut = &c.payload()[..c.payload().len() / 2];
        let r = with_stream(Method::Zstd, cut, |s| decode_until(|_| Some(u64::MAX), s));
        assert!(matches!(r, Err(CompressedError::TruncatedFrame)), "{r:?}");
    }
}

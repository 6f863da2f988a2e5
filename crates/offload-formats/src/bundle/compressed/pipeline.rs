//! The threads around a compressed bundle: compression beside the MD5 of its input, and
//! decompression into one buffer that a hasher and the caller read while it fills
//! ([`Progress`]).

use std::time::Instant;

use md5::{Digest, Md5};

use super::buffer::{Progress, Shared};
use super::codec::{compress_payload, inflate_growing, inflate_zlib, inflate_zstd};
use super::error::{CompressError, CompressedError};
use super::header::{Header, Method, Version};
use super::header::{low_u64, truncated_md5_of};
use super::options::{CompressOptions, Hooks, Limits, check_size, try_zeroed};
use super::reader::{CompressedBundle, Decompressed};

/// Compresses a finished bundle into a compressed bundle (header plus data).
///
/// The MD5 of the input is computed on a second thread while the compression runs.
pub fn compress(bundle: &[u8], options: &CompressOptions) -> Result<Vec<u8>, CompressError> {
    compress_pieces(&[bundle], options)
}

/// Compresses the bundle made of `pieces` concatenated (see
/// [`BinaryLayout::pieces`](crate::bundle::BinaryLayout::pieces)). The pieces are gathered and
/// compressed on a second thread while this one hashes them, so the MD5 adds no wall time
/// beyond its own (on large bundles it is the longer of the two).
pub fn compress_pieces(
    pieces: &[&[u8]],
    options: &CompressOptions,
) -> Result<Vec<u8>, CompressError> {
    compress_pieces_with(pieces, options, &Hooks::default())
}

/// [`compress_pieces`], running the caller's `hooks` on the compressing thread and buffers.
pub fn compress_pieces_with(
    pieces: &[&[u8]],
    options: &CompressOptions,
    hooks: &Hooks,
) -> Result<Vec<u8>, CompressError> {
    if options.version == Version::V1 {
        return Err(CompressError::ReadOnlyVersion);
    }
    let len: u64 = pieces.iter().map(|p| p.len() as u64).sum();
    if options.version == Version::V2 && len > u64::from(u32::MAX) {
        return Err(CompressError::UncompressedTooLarge);
    }
    let header_len = options.version.header_len();
    let (data, hash) = std::thread::scope(|s| {
        let compressor = s.spawn(|| {
            if options.threads > 0 {
                // The hash is the critical path and cannot be split: zstd's workers (which
                // inherit this thread's settings) take what the hash leaves of the CPUs.
                hooks.compressor_thread();
            }
            if let [one] = pieces {
                compress_payload(one, options, header_len, hooks)
            } else {
                let mut whole = try_zeroed(len as usize).map_err(|_| CompressError::OutOfMemory)?;
                hooks.fresh_buffer(&mut whole);
                let mut at = 0;
                for piece in pieces {
                    whole[at..at + piece.len()].copy_from_slice(piece);
                    at += piece.len();
                }
                compress_payload(&whole, options, header_len, hooks)
            }
        });
        let hash = truncated_md5_of(pieces);
        let data = compressor
            .join()
            .unwrap_or_else(|p| std::panic::resume_unwind(p));
        (data, hash)
    });
    let mut data = data?;
    let header = Header {
        version: options.version,
        method: options.method,
        total_size: Some(data.len() as u64),
        uncompressed_size: len,
        hash,
    };
    data[..header_len].copy_from_slice(&header.to_bytes()?);
    Ok(data)
}

/// Below this decompressed size, a bundle is decompressed and hashed on the calling thread.
const INLINE_BELOW: u64 = 1 << 20;

/// Bytes handed to the hasher and to consumers at a time.
const HASH_CHUNK: usize = 1 << 20;

fn hash_progress(p: &Progress<'_>) -> Option<u64> {
    let mut h = Md5::new();
    let mut done = 0usize;
    loop {
        let data = p.wait(done + HASH_CHUNK)?;
        if data.len() > done {
            h.update(&data[done..]);
            done = data.len();
        } else if let Some(ok) = p.finished() {
            let data = p.wait(usize::MAX)?;
            h.update(&data[done..]);
            return ok.then(|| low_u64(&h.finalize()));
        }
    }
}

impl CompressedBundle<'_> {
    /// Decompresses, hashing on a second thread, while `consume` runs on the calling thread
    /// and reads the bytes as they arrive through [`Progress::wait`]. Returns the bundle and
    /// what `consume` returned.
    ///
    /// Memory: when the zstd frame records its content size (LLVM's always do), that size is
    /// checked against the header, the compressed bytes and `limits`, then allocated at once
    /// and filled while `consume` and the hasher read it. Otherwise (a zstd frame without a
    /// content size, zlib) nothing is allocated for what the header claims: the output grows
    /// as the data arrives, up to the claimed size (more is [`CompressedError::SizeTooSmall`]),
    /// and `consume` and the hasher start when it is complete. An allocation the system
    /// refuses is [`CompressedError::OutOfMemory`], never an abort.
    pub fn decompress_with<R>(
        &self,
        limits: &Limits,
        consume: impl FnOnce(&Progress<'_>) -> R,
    ) -> Result<(Decompressed, R), CompressedError> {
        let claimed = self.header.uncompressed_size;
        let mut warnings = Vec::new();
        let (size, exact) = self.output_size(&mut warnings)?;
        check_size(size, limits)?;
        let start = Instant::now();
        // The decompressed length and time, when decompression is already over.
        let mut done = None;
        let mut buffer = if exact {
            let mut buffer = try_zeroed(size as usize)?;
            limits.hooks.fresh_buffer(&mut buffer);
            buffer
        } else {
            let buffer = inflate_growing(self.header.method, self.payload, size as usize, claimed)?;
            done = Some((buffer.len(), start.elapsed()));
            buffer
        };
        // A small bundle is decompressed and hashed on the calling thread: starting threads
        // would cost more than they save (100,000 tiny bundles in one file).
        let small = done.map_or(size, |(len, _)| len as u64) < INLINE_BELOW;
        let shared = Shared::new(&mut buffer, !small);
        if let Some((len, _)) = done {
            shared.publish(len);
            shared.finish(true);
        }
        let verify = limits.verify_hash || limits.strict_hash;
        let inflate = || {
            let r = match self.header.method {
                Method::Zstd => inflate_zstd(self.payload, &shared, claimed),
                Method::Zlib => inflate_zlib(self.payload, &shared, claimed),
            };
            shared.finish(r.is_ok());
            (r, start.elapsed())
        };
        let (result, hash, value, elapsed) = if small {
            let (result, elapsed) = match done {
                Some((len, elapsed)) => (Ok(len), elapsed),
                None => inflate(),
            };
            let progress = Progress::of(&shared);
            let hash = verify.then(|| hash_progress(&progress));
            let value = consume(&progress);
            (result, hash, value, elapsed)
        } else {
            std::thread::scope(|s| {
                let progress = Progress::of(&shared);
                let hasher = verify.then(|| s.spawn(move || hash_progress(&progress)));
                let worker = done.is_none().then(|| s.spawn(inflate));
                let value = consume(&progress);
                let (result, elapsed) = match (worker, done) {
                    (Some(worker), _) => worker
                        .join()
                        .unwrap_or_else(|p| std::panic::resume_unwind(p)),
                    (None, Some((len, elapsed))) => (Ok(len), elapsed),
                    (None, None) => unreachable!("decompressed already or by the worker"),
                };
                let hash =
                    hasher.map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)));
                (result, hash, value, elapsed)
            })
        };
        let len = result?;
        buffer.truncate(len);
        // Decompression succeeded, so a hasher that ran has a hash.
        let hash = hash.flatten();
        self.check_output(len as u64, hash, limits, &mut warnings)?;
        Ok((
            Decompressed {
                data: buffer,
                hash,
                warnings,
                elapsed,
            },
            value,
        ))
    }
}

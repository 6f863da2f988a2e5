//! The threads around a compressed bundle: compression beside the MD5 of its input, and
//! decompression into one buffer that a hasher and the caller read while it fills
//! ([`Progress`]).

use std::fmt;
use std::sync::{Condvar, Mutex};
use std::time::Instant;

use md5::{Digest, Md5};

use super::codec::{compress_payload, inflate_growing, inflate_zlib, inflate_zstd};
use super::header::{low_u64, truncated_md5_of};
use super::{
    CompressError, CompressOptions, CompressedBundle, CompressedError, Decompressed, Header, Hooks,
    Limits, Method, Version, check_size, try_zeroed,
};

/// Compresses a finished bundle into a compressed bundle (header plus data).
///
/// The MD5 of the input is computed on a second thread while the compression runs.
pub fn compress(bundle: &[u8], options: &CompressOptions) -> Result<Vec<u8>, CompressError> {
    compress_pieces(&[bundle], options)
}

/// Compresses the bundle made of `pieces` concatenated (see
/// [`BinaryLayout::pieces`](super::BinaryLayout::pieces)). The pieces are gathered and
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

/// The output buffer shared between the decompressing thread (the only writer, always past
/// the published length) and readers (only below it). Raw because safe Rust cannot lend the
/// front of a buffer while its tail is written: decoding first and reading after, the safe
/// way, was 11% slower on an 88 MiB bundle with its hash verified (`unbundle -verify-hash`).
pub(super) struct Shared {
    ptr: *mut u8,
    pub(super) cap: usize,
    state: Mutex<State>,
    changed: Condvar,
    /// Whether other threads may wait (otherwise nobody is woken: each wake is a system call).
    threads: bool,
}

#[derive(Clone, Copy)]
struct State {
    published: usize,
    done: bool,
    ok: bool,
}

// SAFETY: the pointer is written only by the one decompressing thread, past `published`, and
// read by others only below `published`, which the mutex orders.
unsafe impl Sync for Shared {}

impl Shared {
    fn new(buffer: &mut [u8], threads: bool) -> Shared {
        Shared {
            ptr: buffer.as_mut_ptr(),
            cap: buffer.len(),
            state: Mutex::new(State {
                published: 0,
                done: false,
                ok: false,
            }),
            changed: Condvar::new(),
            threads,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub(super) fn publish(&self, len: usize) {
        self.lock().published = len;
        if self.threads {
            self.changed.notify_all();
        }
    }

    pub(super) fn finish(&self, ok: bool) {
        let mut s = self.lock();
        s.done = true;
        s.ok = ok;
        drop(s);
        if self.threads {
            self.changed.notify_all();
        }
    }
}

/// The decompressing thread's view of the shared buffer, as zstd's output buffer: zstd
/// writes only past `filled` (the position it reports) and reads back below it (its window).
#[cfg(feature = "compression")]
pub(super) struct Tail<'a> {
    shared: &'a Shared,
    filled: usize,
}

#[cfg(feature = "compression")]
impl<'a> Tail<'a> {
    /// The writer of `shared`, nothing filled yet. One decompression makes one.
    pub(super) fn new(shared: &'a Shared) -> Tail<'a> {
        Tail { shared, filled: 0 }
    }

    /// Up to `len` bytes after the filled ones, for a decoder that writes into a slice (zlib);
    /// [`wrote`](Self::wrote) then counts what it wrote.
    pub(super) fn spare(&mut self, len: usize) -> &mut [u8] {
        let len = len.min(self.shared.cap - self.filled);
        // SAFETY: past `filled` the buffer is written by this thread only (through `&mut
        // self`, the one `Tail`) and read by nobody before it is published.
        unsafe { std::slice::from_raw_parts_mut(self.shared.ptr.add(self.filled), len) }
    }

    /// Counts `n` more bytes filled (written through [`spare`](Self::spare)).
    pub(super) fn wrote(&mut self, n: usize) {
        assert!(n <= self.shared.cap - self.filled, "wrote past the buffer");
        self.filled += n;
    }
}

// SAFETY: `as_mut_ptr` and `capacity` describe the whole buffer, which outlives `shared`'s
// borrow and which only this thread writes; `as_slice` covers the first `filled` bytes, which
// are initialised (the buffer starts zeroed) and never written again, so they may be shared
// with the readers of the published part.
#[cfg(feature = "compression")]
unsafe impl zstd_safe::WriteBuf for Tail<'_> {
    fn as_slice(&self) -> &[u8] {
        // SAFETY: see the impl: the first `filled` bytes are initialised and immutable.
        unsafe { std::slice::from_raw_parts(self.shared.ptr, self.filled) }
    }

    fn capacity(&self) -> usize {
        self.shared.cap
    }

    fn as_mut_ptr(&mut self) -> *mut u8 {
        self.shared.ptr
    }

    unsafe fn filled_until(&mut self, n: usize) {
        self.filled = n;
    }
}

/// The output of a running decompression, readable as it grows.
#[derive(Clone, Copy)]
pub struct Progress<'a> {
    shared: &'a Shared,
}

impl fmt::Debug for Progress<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Progress")
            .field("capacity", &self.shared.cap)
            .finish()
    }
}

impl<'a> Progress<'a> {
    /// The expected size of the output (its final size unless the data holds less).
    pub fn expected_len(&self) -> usize {
        self.shared.cap
    }

    /// Blocks until at least `len` bytes are decompressed (or all of them, when the output is
    /// shorter) and returns everything decompressed so far; `None` when decompression failed.
    pub fn wait(&self, len: usize) -> Option<&'a [u8]> {
        let mut s = self.shared.lock();
        while s.published < len && !s.done {
            s = self
                .shared
                .changed
                .wait(s)
                .unwrap_or_else(|p| p.into_inner());
        }
        if s.done && !s.ok {
            return None;
        }
        let n = s.published;
        drop(s);
        // SAFETY: the first `n` bytes are published: the writer never touches them again, and
        // the buffer outlives the scope in which every `Progress` lives.
        Some(unsafe { std::slice::from_raw_parts(self.shared.ptr, n) })
    }

    /// Whether decompression has ended, with success.
    fn finished(&self) -> Option<bool> {
        let s = self.shared.lock();
        s.done.then_some(s.ok)
    }
}

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
            let progress = Progress { shared: &shared };
            let hash = verify.then(|| hash_progress(&progress));
            let value = consume(&progress);
            (result, hash, value, elapsed)
        } else {
            std::thread::scope(|s| {
                let progress = Progress { shared: &shared };
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

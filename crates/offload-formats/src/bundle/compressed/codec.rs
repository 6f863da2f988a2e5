//! The codecs: zstd and zlib compression of a whole bundle, and decompression into the
//! shared output buffer, a growing `Vec` or a step-at-a-time [`Stream`]. Only this file
//! talks to `zstd_safe` and `flate2`; it knows nothing of threads or hashing.

use super::buffer::Shared;
#[cfg(feature = "compression")]
use super::buffer::Tail;
use super::error::{CompressError, CompressedError};
use super::header::Method;
#[cfg(feature = "compression")]
use super::options::try_zeroed;
use super::options::{CompressOptions, Hooks};

/// The compressed data after `header_len` reserved (zeroed) bytes.
#[cfg(not(feature = "compression"))]
pub(super) fn compress_payload(
    _: &[u8],
    _: &CompressOptions,
    _: usize,
    _: &Hooks,
) -> Result<Vec<u8>, CompressError> {
    Err(CompressError::Unsupported)
}

#[cfg(feature = "compression")]
pub(super) fn compress_payload(
    input: &[u8],
    options: &CompressOptions,
    header_len: usize,
    hooks: &Hooks,
) -> Result<Vec<u8>, CompressError> {
    let level = options.effective_level();
    match options.method {
        Method::Zstd => {
            let mut cctx = zstd_safe::CCtx::create();
            let lib = |code: usize| CompressError::Library(zstd_safe::get_error_name(code).into());
            cctx.set_parameter(zstd_safe::CParameter::CompressionLevel(level))
                .map_err(lib)?;
            cctx.set_parameter(zstd_safe::CParameter::EnableLongDistanceMatching(true))
                .map_err(lib)?;
            if options.threads > 0 {
                cctx.set_parameter(zstd_safe::CParameter::NbWorkers(options.threads))
                    .map_err(lib)?;
            }
            let bound = zstd_safe::compress_bound(input.len());
            let mut out = try_zeroed(header_len + bound).map_err(|_| CompressError::OutOfMemory)?;
            hooks.fresh_buffer(&mut out);
            let n = cctx.compress2(&mut out[header_len..], input).map_err(lib)?;
            out.truncate(header_len + n);
            Ok(out)
        }
        Method::Zlib => {
            let level = match level {
                -1 => 6,
                0..=9 => level as u32,
                _ => return Err(CompressError::Library("zlib error: Z_STREAM_ERROR".into())),
            };
            // zlib's compressBound.
            let n = input.len();
            let bound = n + (n >> 12) + (n >> 14) + (n >> 25) + 13;
            let mut out = try_zeroed(header_len + bound).map_err(|_| CompressError::OutOfMemory)?;
            let mut z = flate2::Compress::new(flate2::Compression::new(level), true);
            let status = z
                .compress(input, &mut out[header_len..], flate2::FlushCompress::Finish)
                .map_err(|e| CompressError::Library(format!("zlib error: {e}")))?;
            if status != flate2::Status::StreamEnd {
                return Err(CompressError::Library("zlib error: Z_BUF_ERROR".into()));
            }
            out.truncate(header_len + z.total_out() as usize);
            Ok(out)
        }
    }
}

/// Makes room for at least one more byte in `out`, which may hold at most `cap` bytes:
/// doubles it (from 1 MiB), never past `cap`. `Ok(false)` when `out` is full at `cap`.
#[cfg(feature = "compression")]
fn grow(out: &mut Vec<u8>, cap: usize) -> Result<bool, CompressedError> {
    if out.len() < out.capacity() {
        return Ok(true);
    }
    if out.len() >= cap {
        return Ok(false);
    }
    let want = out.capacity().saturating_mul(2).max(1 << 20).min(cap);
    out.try_reserve_exact(want - out.len())
        .map_err(|_| CompressedError::OutOfMemory { size: want as u64 })?;
    Ok(true)
}

/// Decompresses a zstd frame without a content size, or a zlib stream, into a buffer that
/// grows as the data arrives, up to `cap` bytes (the claimed size, bounded by what the
/// compressed bytes can hold); data beyond `claimed` is [`CompressedError::SizeTooSmall`].
#[cfg(not(feature = "compression"))]
pub(super) fn inflate_growing(
    _: Method,
    _: &[u8],
    _: usize,
    _: u64,
) -> Result<Vec<u8>, CompressedError> {
    Err(CompressedError::Unsupported)
}

#[cfg(feature = "compression")]
pub(super) fn inflate_growing(
    method: Method,
    src: &[u8],
    cap: usize,
    claimed: u64,
) -> Result<Vec<u8>, CompressedError> {
    with_stream(method, src, |stream| {
        let mut out = Vec::new();
        loop {
            if grow(&mut out, cap)? {
                if stream.step(&mut out)? {
                    return Ok(out);
                }
                continue;
            }
            // Full at the claimed size: the data must end with no more output.
            match stream.probe()? {
                Probe::Output => {
                    return Err(CompressedError::SizeTooSmall {
                        claimed,
                        actual: claimed + 1,
                        exact: false,
                    });
                }
                Probe::Ended => return Ok(out),
                Probe::Truncated => return Err(CompressedError::TruncatedFrame),
                Probe::Again => {}
            }
        }
    })
}

/// One zstd frame or zlib stream decoded a step at a time into the spare capacity of a
/// `Vec`: what the growing whole-bundle decoder and the prefix decoder
/// ([`CompressedBundle::decompress_prefix`](crate::bundle::CompressedBundle::decompress_prefix)) share.
#[cfg(feature = "compression")]
pub(in crate::bundle) enum Stream<'a> {
    Zstd {
        dctx: &'a mut zstd_safe::DCtx<'static>,
        input: zstd_safe::InBuffer<'a>,
    },
    Zlib {
        z: flate2::Decompress,
        src: &'a [u8],
    },
}

/// What decoding into a one-byte probe found, once the output may grow no further.
#[cfg(feature = "compression")]
pub(in crate::bundle) enum Probe {
    /// More output: the data holds more than the room allowed.
    Output,
    /// The data ended, with no more output.
    Ended,
    /// The data stops short of its end.
    Truncated,
    /// Input was taken but nothing decided yet: probe again.
    Again,
}

/// Runs `f` over a decoder of `src` (with this thread's zstd context for zstd).
#[cfg(feature = "compression")]
pub(in crate::bundle) fn with_stream<R>(
    method: Method,
    src: &[u8],
    f: impl FnOnce(&mut Stream<'_>) -> Result<R, CompressedError>,
) -> Result<R, CompressedError> {
    match method {
        Method::Zstd => with_dctx(|dctx| {
            // Windows as large as one-shot decoding accepts; zstd allocates the window
            // itself here, and a refusal is its "Allocation error".
            allow_large_windows(dctx);
            f(&mut Stream::Zstd {
                dctx,
                input: zstd_safe::InBuffer::around(src),
            })
        }),
        Method::Zlib => f(&mut Stream::Zlib {
            z: flate2::Decompress::new(true),
            src,
        }),
    }
}

/// Without the `compression` feature no stream is ever made.
#[cfg(not(feature = "compression"))]
pub(in crate::bundle) struct Stream<'a>(std::convert::Infallible, std::marker::PhantomData<&'a ()>);

#[cfg(not(feature = "compression"))]
impl Stream<'_> {
    pub(in crate::bundle) fn step(&mut self, _: &mut Vec<u8>) -> Result<bool, CompressedError> {
        match self.0 {}
    }
}

#[cfg(not(feature = "compression"))]
pub(in crate::bundle) fn with_stream<R>(
    _: Method,
    _: &[u8],
    _: impl FnOnce(&mut Stream<'_>) -> Result<R, CompressedError>,
) -> Result<R, CompressedError> {
    Err(CompressedError::Unsupported)
}

#[cfg(feature = "compression")]
impl Stream<'_> {
    /// Decodes into the spare capacity of `out` (there must be some); `Ok(true)` when the data
    /// ended. All the input is given, so a step that makes no progress means the data stops
    /// short: [`CompressedError::TruncatedFrame`].
    pub(in crate::bundle) fn step(&mut self, out: &mut Vec<u8>) -> Result<bool, CompressedError> {
        match self {
            Stream::Zstd { dctx, input } => {
                let pos = out.len();
                let before = (input.pos(), pos);
                // Writing through `output` sets `out`'s length.
                let mut output = zstd_safe::OutBuffer::around_pos(out, pos);
                let r = dctx
                    .decompress_stream(&mut output, input)
                    .map_err(zstd_stream_error)?;
                if r == 0 {
                    return Ok(true);
                }
                if (input.pos(), out.len()) == before {
                    return Err(CompressedError::TruncatedFrame);
                }
                Ok(false)
            }
            Stream::Zlib { z, src } => {
                let before = (z.total_in(), z.total_out());
                let status = z
                    .decompress_vec(
                        &src[z.total_in() as usize..],
                        out,
                        flate2::FlushDecompress::None,
                    )
                    .map_err(|e| CompressedError::Corrupt(format!("zlib error: {e}")))?;
                if status == flate2::Status::StreamEnd {
                    return Ok(true);
                }
                if (z.total_in(), z.total_out()) == before {
                    return Err(CompressedError::TruncatedFrame);
                }
                Ok(false)
            }
        }
    }

    /// Decodes into a one-byte probe: whether the data holds more than what was decoded.
    pub(super) fn probe(&mut self) -> Result<Probe, CompressedError> {
        let mut probe = [0u8; 1];
        match self {
            Stream::Zstd { dctx, input } => {
                let mut output = zstd_safe::OutBuffer::around(&mut probe[..]);
                let fed = input.pos();
                let r = dctx
                    .decompress_stream(&mut output, input)
                    .map_err(zstd_stream_error)?;
                Ok(if output.pos() > 0 {
                    Probe::Output
                } else if r == 0 {
                    Probe::Ended
                } else if input.pos() == fed {
                    Probe::Truncated
                } else {
                    Probe::Again
                })
            }
            Stream::Zlib { z, src } => {
                let out = z.total_out();
                let status = z
                    .decompress(
                        &src[z.total_in() as usize..],
                        &mut probe,
                        flate2::FlushDecompress::None,
                    )
                    .map_err(|e| CompressedError::Corrupt(format!("zlib error: {e}")))?;
                Ok(if z.total_out() > out {
                    Probe::Output
                } else if status == flate2::Status::StreamEnd {
                    Probe::Ended
                } else {
                    Probe::Truncated
                })
            }
        }
    }
}

/// A zstd streaming error: an allocation zstd could not make is out of memory.
#[cfg(feature = "compression")]
fn zstd_stream_error(code: usize) -> CompressedError {
    let name = zstd_safe::get_error_name(code);
    if name.contains("Allocation error") {
        CompressedError::OutOfMemory { size: 0 }
    } else {
        CompressedError::Corrupt(format!("zstd: {name}"))
    }
}

/// Length of the zstd frame or zlib stream at the start of `data`.
#[cfg(not(feature = "compression"))]
pub(super) fn frame_len(_: Method, _: &[u8]) -> Result<usize, CompressedError> {
    Err(CompressedError::Unsupported)
}

#[cfg(feature = "compression")]
pub(super) fn frame_len(method: Method, data: &[u8]) -> Result<usize, CompressedError> {
    match method {
        Method::Zstd => zstd_safe::find_frame_compressed_size(data).map_err(zstd_error),
        Method::Zlib => {
            let mut z = flate2::Decompress::new(true);
            let mut sink = vec![0u8; 64 << 10];
            loop {
                let before = (z.total_in(), z.total_out());
                let pos = z.total_in() as usize;
                let status = z
                    .decompress(&data[pos..], &mut sink, flate2::FlushDecompress::None)
                    .map_err(|e| CompressedError::Corrupt(format!("zlib error: {e}")))?;
                if status == flate2::Status::StreamEnd {
                    return Ok(z.total_in() as usize);
                }
                if (z.total_in(), z.total_out()) == before {
                    return Err(CompressedError::TruncatedFrame);
                }
            }
        }
    }
}

#[cfg(feature = "compression")]
fn zstd_error(code: usize) -> CompressedError {
    let name = zstd_safe::get_error_name(code);
    if name.contains("Src size is incorrect") {
        CompressedError::TruncatedFrame
    } else {
        CompressedError::Corrupt(format!("zstd: {name}"))
    }
}

/// Compressed bytes fed to zstd per call, so that progress is published regularly.
#[cfg(feature = "compression")]
const FEED: usize = 256 << 10;

/// zstd into the shared buffer; returns the decompressed length.
#[cfg(not(feature = "compression"))]
pub(super) fn inflate_zstd(_: &[u8], _: &Shared, _: u64) -> Result<usize, CompressedError> {
    Err(CompressedError::Unsupported)
}

#[cfg(not(feature = "compression"))]
pub(super) fn inflate_zlib(_: &[u8], _: &Shared, _: u64) -> Result<usize, CompressedError> {
    Err(CompressedError::Unsupported)
}

#[cfg(feature = "compression")]
thread_local! {
    /// The decompression context last used on this thread: creating one costs more than
    /// decoding a tiny bundle.
    static DCTX: std::cell::RefCell<Option<zstd_safe::DCtx<'static>>> =
        const { std::cell::RefCell::new(None) };
}

/// Runs `f` with this thread's zstd decompression context (fresh parameters), creating it
/// the first time; keeping it saves its creation for each of many small bundles.
#[cfg(feature = "compression")]
pub(in crate::bundle) fn with_dctx<R>(
    f: impl FnOnce(&mut zstd_safe::DCtx<'static>) -> Result<R, CompressedError>,
) -> Result<R, CompressedError> {
    let cached = DCTX.with(|c| c.borrow_mut().take()).and_then(|mut d| {
        d.reset(zstd_safe::ResetDirective::SessionAndParameters)
            .is_ok()
            .then_some(d)
    });
    let mut dctx = match cached {
        Some(d) => d,
        None => zstd_safe::DCtx::try_create().ok_or(CompressedError::OutOfMemory { size: 0 })?,
    };
    let r = f(&mut dctx);
    DCTX.with(|c| *c.borrow_mut() = Some(dctx));
    r
}

/// Lets `dctx` take windows as large as one-shot decoding accepts (zstd's streaming default
/// is 128 MiB). Cannot fail on a context with these values; were it to, large windows would
/// only be refused, so the result is not needed.
#[cfg(feature = "compression")]
pub(in crate::bundle) fn allow_large_windows(dctx: &mut zstd_safe::DCtx<'_>) {
    let log = if cfg!(target_pointer_width = "64") {
        31
    } else {
        30
    };
    let _ = dctx.set_parameter(zstd_safe::DParameter::WindowLogMax(log));
}

#[cfg(feature = "compression")]
pub(super) fn inflate_zstd(
    src: &[u8],
    out: &Shared,
    claimed: u64,
) -> Result<usize, CompressedError> {
    with_dctx(|dctx| inflate_zstd_with(dctx, src, out, claimed))
}

#[cfg(feature = "compression")]
fn inflate_zstd_with(
    dctx: &mut zstd_safe::DCtx<'static>,
    src: &[u8],
    out: &Shared,
    claimed: u64,
) -> Result<usize, CompressedError> {
    // The output buffer is one stable region, so zstd uses it as its window (no copy, no
    // window allocation); the window limit is raised to what one-shot decoding accepts.
    // Neither can fail on a fresh context with these values; were it to, decoding would
    // only be slower or refuse large windows, so the results are not needed.
    let _ = dctx.set_parameter(zstd_safe::DParameter::StableOutBuffer(true));
    allow_large_windows(dctx);
    let mut tail = Tail::new(out);
    let mut output = zstd_safe::OutBuffer::around(&mut tail);
    let too_small = || CompressedError::SizeTooSmall {
        claimed,
        actual: claimed + 1,
        exact: false,
    };
    let mut fed = 0usize;
    loop {
        let end = (fed + FEED).min(src.len());
        let mut input = zstd_safe::InBuffer {
            src: &src[..end],
            pos: fed,
        };
        let r = dctx
            .decompress_stream(&mut output, &mut input)
            .map_err(|code| {
                let name = zstd_safe::get_error_name(code);
                if name.contains("Destination buffer is too small") {
                    too_small()
                } else {
                    CompressedError::Corrupt(format!("zstd: {name}"))
                }
            })?;
        fed = input.pos;
        out.publish(output.pos());
        if r == 0 {
            // The frame is complete.
            return Ok(output.pos());
        }
        if output.pos() == output.capacity() {
            // Full, but the frame goes on: it holds more than the header says.
            return Err(too_small());
        }
        if fed == src.len() {
            // All input given and the frame is not complete: try once more to flush.
            let mut empty = zstd_safe::InBuffer {
                src,
                pos: src.len(),
            };
            let before = output.pos();
            let r = dctx.decompress_stream(&mut output, &mut empty);
            out.publish(output.pos());
            if r == Ok(0) {
                return Ok(output.pos());
            }
            if output.pos() == before {
                return Err(CompressedError::TruncatedFrame);
            }
        }
    }
}

/// zlib into the shared buffer; returns the decompressed length.
#[cfg(feature = "compression")]
pub(super) fn inflate_zlib(
    src: &[u8],
    out: &Shared,
    claimed: u64,
) -> Result<usize, CompressedError> {
    let mut z = flate2::Decompress::new(true);
    let mut tail = Tail::new(out);
    let mut pos = 0usize;
    loop {
        let before = (z.total_in(), z.total_out());
        let status = z
            .decompress(
                &src[z.total_in() as usize..],
                tail.spare(4 << 20),
                flate2::FlushDecompress::None,
            )
            .map_err(|e| CompressedError::Corrupt(format!("zlib error: {e}")))?;
        tail.wrote(z.total_out() as usize - pos);
        pos = z.total_out() as usize;
        out.publish(pos);
        if status == flate2::Status::StreamEnd {
            return Ok(pos);
        }
        if pos == out.cap {
            // Full: the stream must end here, with no more output.
            let mut probe = [0u8; 1];
            let status = z
                .decompress(
                    &src[z.total_in() as usize..],
                    &mut probe,
                    flate2::FlushDecompress::None,
                )
                .map_err(|e| CompressedError::Corrupt(format!("zlib error: {e}")))?;
            if z.total_out() as usize > pos {
                return Err(CompressedError::SizeTooSmall {
                    claimed,
                    actual: claimed + 1,
                    exact: false,
                });
            }
            if status == flate2::Status::StreamEnd {
                return Ok(pos);
            }
            return Err(CompressedError::TruncatedFrame);
        }
        if (z.total_in(), z.total_out()) == before {
            return Err(CompressedError::TruncatedFrame);
        }
    }
}

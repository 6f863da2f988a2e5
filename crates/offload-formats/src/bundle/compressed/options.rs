//! How a compressed bundle is written and read: the options (codec, level, threads, hooks
//! for the caller's thread and buffer policy), the limits a reader keeps to, and the warnings it
//! gives.

use super::error::CompressedError;
use super::header::{Method, Version, is_compressed};
use std::fmt;

/// Whether clang-offload-bundler 22 decompresses `data` before reading it (as an input or an
/// archive member): the magic and at least 8 bytes; shorter inputs are read uncompressed.
pub fn llvm_decompresses(data: &[u8]) -> bool {
    data.len() >= 8 && is_compressed(data)
}

/// Whether this build compresses and decompresses (the `compression` feature, on by
/// default). Without it, headers are still parsed and listed, but compressing or
/// decompressing is [`CompressError::Unsupported`](super::CompressError::Unsupported) / [`CompressedError::Unsupported`].
pub const SUPPORTED: bool = cfg!(feature = "compression");

/// How to compress a bundle. The default is what LLVM 22 writes: zstd at level 3 with
/// long-distance matching, format version 3, one thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CompressOptions {
    /// Compression method.
    pub method: Method,
    /// Level; `None` for the method's default ([`Method::default_level`]).
    pub level: Option<i32>,
    /// Format version to write (2 or 3).
    pub version: Version,
    /// zstd worker threads; 0 (the default) gives LLVM's exact bytes, more is faster but the
    /// bytes differ from LLVM's (still a valid bundle every LLVM reads).
    pub threads: u32,
}

impl Default for CompressOptions {
    fn default() -> Self {
        CompressOptions {
            method: Method::Zstd,
            level: None,
            version: Version::V3,
            threads: 0,
        }
    }
}

impl CompressOptions {
    /// The level used: the given one or the method's default.
    pub fn effective_level(&self) -> i32 {
        self.level.unwrap_or(self.method.default_level())
    }
}

/// What a caller may do to the process around compressing and decompressing: this crate sets
/// no thread priority and gives the kernel no memory advice of its own. Both default to
/// nothing. Two `Hooks` are equal when their hooks have the same names ([`Hook`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Hooks {
    /// Runs first on the thread that compresses beside the hash when zstd workers are asked
    /// for ([`CompressOptions::threads`] above 0); the workers inherit what it sets
    /// (`offload-bundler` lowers their priority, so that the hash keeps a core).
    pub compressor_thread: Option<ThreadHook>,
    /// Runs on each fresh buffer that a compressed bundle is gathered, compressed or
    /// decompressed into, before it is filled (`offload-bundler` asks for transparent huge
    /// pages on large ones).
    pub fresh_buffer: Option<BufferHook>,
}

/// A hook run on a thread (`Hooks::compressor_thread`).
pub type ThreadHook = Hook<fn()>;

/// A hook run on a fresh buffer (`Hooks::fresh_buffer`).
pub type BufferHook = Hook<fn(&mut [u8])>;

/// A caller's function with the name that identifies it: hooks are compared, hashed and
/// printed by name, because function addresses are not (the same function may have two, and
/// two functions one).
#[derive(Clone, Copy)]
pub struct Hook<F> {
    /// What the hook does, e.g. `"lower the thread priority"`: equal names mean equal hooks.
    pub name: &'static str,
    /// The function run.
    pub run: F,
}

impl<F> PartialEq for Hook<F> {
    fn eq(&self, other: &Hook<F>) -> bool {
        self.name == other.name
    }
}

impl<F> Eq for Hook<F> {}

impl<F> std::hash::Hash for Hook<F> {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.name.hash(state);
    }
}

impl<F> fmt::Debug for Hook<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Hook").field(&self.name).finish()
    }
}

impl Hooks {
    pub(super) fn compressor_thread(&self) {
        if let Some(hook) = self.compressor_thread {
            (hook.run)();
        }
    }

    pub(super) fn fresh_buffer(&self, buffer: &mut [u8]) {
        if let Some(hook) = self.fresh_buffer {
            (hook.run)(buffer);
        }
    }
}

/// Limits and checks of a reader.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Largest uncompressed size accepted (default 16 GiB). Nothing larger is allocated,
    /// whatever the header claims.
    pub max_size: u64,
    /// Treat a hash mismatch as an error instead of a warning.
    pub strict_hash: bool,
    /// Compute the MD5 of the decompressed data and compare it with the header's (on by
    /// default here; LLVM never does, and `offload-bundler` does only when asked). It runs
    /// beside decompression but, being sequential, it bounds the time of a large bundle at
    /// about 1.5 ms per MiB.
    pub verify_hash: bool,
    /// What the caller runs on the decompression buffer (nothing by default).
    pub hooks: Hooks,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_size: 16 << 30,
            strict_hash: false,
            verify_hash: true,
            hooks: Hooks::default(),
        }
    }
}

/// Something odd about a compressed bundle that LLVM accepts silently.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Warning {
    /// The stored hash differs from the hash of the decompressed data.
    HashMismatch {
        /// The hash in the header.
        stored: u64,
        /// The hash of the decompressed data.
        computed: u64,
    },
    /// The header claims more uncompressed bytes than the data holds; the data is used.
    SizeTooLarge {
        /// The uncompressed size in the header.
        claimed: u64,
        /// The size of the decompressed data.
        actual: u64,
    },
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Warning::HashMismatch { stored, computed } => write!(
                f,
                "hash mismatch: the header stores {stored:#x} but the data hashes to {computed:#x}"
            ),
            Warning::SizeTooLarge { claimed, actual } => write!(
                f,
                "the header claims {claimed} uncompressed bytes but the data holds only {actual}"
            ),
        }
    }
}

/// Refuses to decode into `size` bytes above [`Limits::max_size`] (or what one allocation
/// can hold).
pub(crate) fn check_size(size: u64, limits: &Limits) -> Result<(), CompressedError> {
    if size > limits.max_size || size > isize::MAX as u64 {
        return Err(CompressedError::TooLarge {
            size,
            limit: limits.max_size,
        });
    }
    Ok(())
}

/// A zeroed buffer of `len` bytes, or [`CompressedError::OutOfMemory`] when the allocator
/// refuses it. `vec![0; len]` takes zeroed memory from the allocator (fresh pages, nothing
/// written before decompression fills them) but aborts when refused; asking for the same size
/// with `try_reserve_exact` first turns a refusal into an error.
pub(crate) fn try_zeroed(len: usize) -> Result<Vec<u8>, CompressedError> {
    let mut probe = Vec::<u8>::new();
    probe
        .try_reserve_exact(len)
        .map_err(|_| CompressedError::OutOfMemory { size: len as u64 })?;
    drop(probe);
    Ok(vec![0; len])
}

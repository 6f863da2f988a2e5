//! The one buffer a decompression writes while a hasher and the caller read its front
//! ([`Shared`], [`Tail`]): the only unsafe code of compressed bundles, each block beside the
//! invariant that makes it sound (why a safe schedule is not used: its doc).

use std::fmt;
use std::sync::{Condvar, Mutex};
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
pub(crate) struct State {
    published: usize,
    pub(super) done: bool,
    pub(super) ok: bool,
}

// SAFETY: the pointer is written only by the one decompressing thread, past `published`, and
// read by others only below `published`, which the mutex orders.
unsafe impl Sync for Shared {}

impl Shared {
    pub(super) fn new(buffer: &mut [u8], threads: bool) -> Shared {
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

    pub(super) fn lock(&self) -> std::sync::MutexGuard<'_, State> {
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
    /// The progress of the decompression writing `shared`.
    pub(super) fn of(shared: &'a Shared) -> Progress<'a> {
        Progress { shared }
    }

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
    pub(super) fn finished(&self) -> Option<bool> {
        let s = self.shared.lock();
        s.done.then_some(s.ok)
    }
}

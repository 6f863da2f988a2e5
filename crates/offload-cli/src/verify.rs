//! `offload-build inspect --verify`: the compressed bundles a listing found are decoded whole
//! and hashed side by side, one thread per CPU, with at most [`IN_FLIGHT`] bytes of decoded
//! bundles held at once (a larger bundle is decoded alone). The formats crate lists them and
//! decodes one; how many run at once is decided here.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, PoisonError};

use offload_formats::bundle::compressed::{CompressedBundle, CompressedError, Limits};
use offload_formats::inspect::{self, Compression, InspectError, Options, Report, Unverified};

/// Decoded bytes that `inspect --verify` holds at once.
const IN_FLIGHT: u64 = 1 << 30;

/// The default limits, with the tools' buffer advice.
const LIMITS: Limits = Limits {
    max_size: 16 << 30,
    strict_hash: false,
    verify_hash: true,
    hooks: crate::process::HOOKS,
};

/// [`inspect::inspect_with`], with the bundles that [`Options::verify`] decodes decoded on up
/// to one thread per CPU. The report and the error are the same: the first failure in file
/// order.
pub fn inspect(data: &[u8], path: &str, options: &Options) -> Result<Report, InspectError> {
    let unverified = Unverified::scan(data, path, options)?;
    let bundles: Vec<_> = unverified.bundles().copied().collect();
    unverified.finish(decode_all(&bundles))
}

type Decoded = Result<Compression, CompressedError>;

/// [`inspect::verify_bundle`] of every bundle, in their order, within [`IN_FLIGHT`].
fn decode_all(bundles: &[CompressedBundle<'_>]) -> Vec<Decoded> {
    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(bundles.len());
    if workers <= 1 {
        return bundles
            .iter()
            .map(|b| inspect::verify_bundle(b, &LIMITS))
            .collect();
    }
    let pool = Pool {
        bundles,
        next: AtomicUsize::new(0),
        results: bundles.iter().map(|_| Mutex::new(None)).collect(),
        in_flight: Mutex::new(0),
        freed: Condvar::new(),
    };
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| pool.work());
        }
    });
    pool.results
        .into_iter()
        .map(|m| {
            m.into_inner()
                .unwrap_or_else(PoisonError::into_inner)
                .unwrap_or(Err(CompressedError::Corrupt("not decoded".into())))
        })
        .collect()
}

/// The bundles to decode and what each worker shares.
struct Pool<'b, 'data> {
    bundles: &'b [CompressedBundle<'data>],
    /// The next bundle to take.
    next: AtomicUsize,
    results: Vec<Mutex<Option<Decoded>>>,
    /// Decoded bytes held by the workers now.
    in_flight: Mutex<u64>,
    freed: Condvar,
}

impl Pool<'_, '_> {
    /// Takes bundles in order until none is left, each once the budget has room for it.
    fn work(&self) {
        loop {
            let i = self.next.fetch_add(1, Ordering::Relaxed);
            let Some(bundle) = self.bundles.get(i) else {
                break;
            };
            let size = bundle.header().uncompressed_size;
            let mut held = self
                .in_flight
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            while *held > 0 && held.saturating_add(size) > IN_FLIGHT {
                held = self
                    .freed
                    .wait(held)
                    .unwrap_or_else(PoisonError::into_inner);
            }
            *held += size;
            drop(held);
            let r = inspect::verify_bundle(bundle, &LIMITS);
            *self
                .in_flight
                .lock()
                .unwrap_or_else(PoisonError::into_inner) -= size;
            self.freed.notify_all();
            *self.results[i]
                .lock()
                .unwrap_or_else(PoisonError::into_inner) = Some(r);
        }
    }
}

//! The temporary files of outputs not yet committed, removed when a terminating signal
//! (SIGINT, SIGTERM, SIGHUP) arrives: a thread of `signal-hook` receives the signal, calls the
//! hooks ([`on_terminating_signal`]), removes them, then lets the signal end the process as it
//! would have (its status says so).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, Once};

/// A set, so that forgetting each of 100,000 outputs is not a search of all the others.
static LIVE: Mutex<BTreeSet<PathBuf>> = Mutex::new(BTreeSet::new());
pub(super) static HOOKS: Mutex<Vec<fn()>> = Mutex::new(Vec::new());
pub(super) static WATCH: Once = Once::new();

/// Creates a temporary file with `create` and registers it, with the registry held
/// meanwhile so that a signal cannot come between the two (and, the first time, starts
/// watching the signals, before anything exists to remove).
pub(super) fn create<T>(
    create: impl FnOnce() -> std::io::Result<T>,
    path: impl Fn(&T) -> &Path,
) -> std::io::Result<T> {
    #[cfg(unix)]
    WATCH.call_once(watch);
    let mut live = lock();
    let t = create()?;
    live.insert(path(&t).to_path_buf());
    Ok(t)
}

/// The registry, held: while it is, a signal waits (so outputs committed together are
/// all renamed, or none).
pub(super) fn lock() -> std::sync::MutexGuard<'static, BTreeSet<PathBuf>> {
    LIVE.lock().unwrap_or_else(|e| e.into_inner())
}

/// Forgets a temporary file that was renamed into place or removed.
pub(super) fn forget(live: &mut BTreeSet<PathBuf>, path: &Path) {
    live.remove(path);
}

#[cfg(unix)]
pub(super) fn watch() {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP]) else {
        return;
    };
    let spawned = std::thread::Builder::new()
        .name("offload-signals".into())
        .spawn(move || {
            if let Some(signal) = signals.forever().next() {
                for hook in HOOKS.lock().unwrap_or_else(|e| e.into_inner()).iter() {
                    hook();
                }
                // Held until the process ends: no new temporary is registered, none is
                // renamed half-way through the removal.
                let live = LIVE.lock().unwrap_or_else(|e| e.into_inner());
                for p in live.iter() {
                    let _ = std::fs::remove_file(p);
                }
                let _ = signal_hook::low_level::emulate_default_handler(signal);
                std::process::exit(128 + signal);
            }
        });
    drop(spawned);
}

/// Calls `hook` when a terminating signal (SIGINT, SIGTERM, SIGHUP) arrives, before the
/// temporary files are removed and the signal ends the process (`offload-build compile` kills
/// its compilers so). Starts watching the signals now.
pub fn on_terminating_signal(hook: fn()) {
    HOOKS.lock().unwrap_or_else(|e| e.into_inner()).push(hook);
    #[cfg(unix)]
    WATCH.call_once(watch);
}

//! The job slots of a build: the jobserver Cargo passed to this process, or a local one
//! sized as `NUM_JOBS` or the CPUs say. The plan picks one; the job graph's executor
//! ([`crate::builder::graph`]) takes its tokens.

use std::sync::OnceLock;

use jobserver::Client;

/// The jobserver Cargo passed to this process, if any (read once per process).
pub(crate) fn inherited() -> Option<Client> {
    static CLIENT: OnceLock<Option<Client>> = OnceLock::new();
    CLIENT
        // SAFETY: as in cc-rs: the descriptors named in CARGO_MAKEFLAGS/MAKEFLAGS were opened
        // by Cargo for this process, and this runs once, so nothing else owns them here.
        .get_or_init(|| unsafe { Client::from_env() })
        .clone()
}

/// A local jobserver for `n` concurrent jobs (`n - 1` tokens plus the implicit one); `None`
/// for `n <= 1`.
pub(crate) fn local(n: usize) -> Option<Client> {
    if n <= 1 {
        return None;
    }
    Client::new(n - 1).ok()
}

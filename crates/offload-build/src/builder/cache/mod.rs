//! The cache room: a record per job (its context, its inputs by content hash, its outputs and
//! warnings), the stamp table that spares a no-op build from hashing unchanged files (its
//! file sealed as the scan table's is: `sealed.rs`), the
//! private job directories and their locks, and depfile reading. What a record holds and why:
//! `docs/design/cache.md`.

pub(crate) mod depfile;
pub(crate) mod dirs;
pub(crate) mod lookup;
pub(crate) mod record;
pub(crate) mod sealed;
pub(crate) mod stamps;
#[cfg(test)]
mod tests;

pub(crate) use depfile::read_deps;
pub(crate) use dirs::{JobDir, LOCK, new_lock, read_or_ask, remove_leftovers, try_lock};
pub(crate) use record::Record;
pub(crate) use stamps::{ContentHashes, STAMP_SETTLE, settle_written};

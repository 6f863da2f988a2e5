//! What an inspection does beyond listing ([`Options`]).

/// What [`inspect_with`](super::inspect_with) does beyond listing.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Options {
    /// Decompress every compressed bundle whole and check the MD5 its header stores
    /// ([`Compression::hash_matches`](super::Compression::hash_matches)). Off by default: a listing then decodes each
    /// compressed bundle only as far as its header (a few kilobytes), so its cost follows
    /// the headers, not the payload.
    pub verify: bool,
}

impl Options {
    /// Options that also verify every compressed bundle's MD5.
    pub fn verify() -> Options {
        Options { verify: true }
    }
}

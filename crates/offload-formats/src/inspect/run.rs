//! The ways to run an inspection: [`inspect`] and [`inspect_with`] on the calling thread, or
//! [`Unverified`], which leaves the whole decoding of compressed bundles to the caller.

use std::fmt;

use crate::bundle::compressed::{CompressedBundle, CompressedError, Limits};

use super::decode::decompress_within;
use super::error::InspectError;
use super::options::Options;
use super::report::{Compression, Report};
use super::scanner::Scanner;

/// Inspects `data`, the contents of the file `path`, with the default [`Options`] (no MD5
/// verification; compressed bundles decoded only as far as their headers).
pub fn inspect(data: &[u8], path: &str) -> Result<Report, InspectError> {
    inspect_with(data, path, &Options::default())
}

/// Inspects `data`, the contents of the file `path`. With [`Options::verify`] the compressed
/// bundles are decoded one after the other on the calling thread; a caller that wants them
/// decoded side by side uses [`Unverified`].
pub fn inspect_with(data: &[u8], path: &str, options: &Options) -> Result<Report, InspectError> {
    let unverified = Unverified::scan(data, path, options)?;
    let bundles: Vec<_> = unverified.bundles().copied().collect();
    let limits = Limits::default();
    unverified.finish(bundles.iter().map(|b| verify_bundle(b, &limits)))
}

/// An inspection whose compressed bundles are listed from their headers, not yet decoded
/// whole: what [`Options::verify`] still has to decode and hash. The caller decodes
/// [`Unverified::bundles`] with [`verify_bundle`] in any order, on any threads, and hands the
/// results back in the same order to [`Unverified::finish`].
pub struct Unverified<'p, 'data> {
    scanner: Scanner<'p, 'data>,
    format: &'static str,
}

impl fmt::Debug for Unverified<'_, '_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Unverified")
            .field("path", &self.scanner.path)
            .field("bundles", &self.scanner.pending.len())
            .finish_non_exhaustive()
    }
}

impl<'p, 'data> Unverified<'p, 'data> {
    /// Lists `data`, the contents of the file `path`, leaving the whole decoding that
    /// [`Options::verify`] asks for to the caller (none without it).
    pub fn scan(
        data: &'data [u8],
        path: &'p str,
        options: &Options,
    ) -> Result<Unverified<'p, 'data>, InspectError> {
        let mut scanner = Scanner {
            path,
            file: data,
            containers: Vec::new(),
            entries: 0,
            options: *options,
            pending: Vec::new(),
        };
        let format = scanner.scan(data, None, 0)?;
        Ok(Unverified { scanner, format })
    }

    /// The compressed bundles to decode whole, in file order.
    pub fn bundles(&self) -> impl ExactSizeIterator<Item = &CompressedBundle<'data>> + '_ {
        self.scanner.pending.iter().map(|p| &p.bundle)
    }

    /// The report, with what decoding each of [`Unverified::bundles`] gave ([`verify_bundle`]),
    /// in the same order. The first failure, in file order, is the error; the results after it
    /// are not looked at.
    pub fn finish(
        mut self,
        results: impl IntoIterator<Item = Result<Compression, CompressedError>>,
    ) -> Result<Report, InspectError> {
        let pending = std::mem::take(&mut self.scanner.pending);
        let s = &mut self.scanner;
        for (p, r) in pending.iter().zip(results) {
            match r {
                Ok(compression) => s.containers[p.container].compression = Some(compression),
                Err(e) => {
                    let context = format!("compressed bundle at offset {}", p.offset);
                    return Err(s.failed(&p.place, context, e));
                }
            }
        }
        Ok(Report {
            path: s.path.to_owned(),
            format: self.format,
            size: s.file.len() as u64,
            containers: std::mem::take(&mut s.containers),
        })
    }
}

/// Decodes a compressed bundle whole within `limits` and hashes it, for
/// [`Unverified::finish`]: its compression details, with whether the hash matches.
pub fn verify_bundle(
    bundle: &CompressedBundle<'_>,
    limits: &Limits,
) -> Result<Compression, CompressedError> {
    decompress_within(bundle, limits).map(|(compression, _)| compression)
}

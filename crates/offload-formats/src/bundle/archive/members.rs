//! What an archive member holds for the unbundler and the checker: its contents
//! decompressed, and its bundle entries (fat-object sections or bundle entries) in LLVM's
//! order.

use std::borrow::Cow;
use std::collections::BTreeSet;

use crate::bundle::compressed::{CompressedBundle, llvm_decompresses};
use crate::bundle::fatobj::{self, FatObject};
use crate::bundle::{BinaryBundle, BundleReadError};

use super::error::DecompressMemberError;

/// A member's contents, decompressed when it is a compressed bundle (by LLVM 22's test,
/// [`llvm_decompresses`]).
pub fn decompress_member(data: &[u8]) -> Result<Cow<'_, [u8]>, DecompressMemberError> {
    if !llvm_decompresses(data) {
        return Ok(Cow::Borrowed(data));
    }
    let bundle = CompressedBundle::parse(data).map_err(DecompressMemberError)?;
    Ok(Cow::Owned(
        bundle.decompress().map_err(DecompressMemberError)?.data,
    ))
}

/// A bundle entry of one member: its ID and contents.
pub(super) struct Entry<'a> {
    pub(super) id: &'a [u8],
    /// `None` for the host entry of a fat object: the object without its bundle sections,
    /// made on first use and once per member (a crafted object with thousands of host
    /// sections would otherwise be rewritten once per section).
    pub(super) data: Option<&'a [u8]>,
}

/// The bundle entries of a member in LLVM's order, or none when it is not a bundle.
pub(super) fn member_entries<'a>(data: &'a [u8]) -> Result<Vec<Entry<'a>>, BundleReadError> {
    if fatobj::detect(data).is_some() {
        if let Ok(fat) = FatObject::parse(data) {
            let mut out = Vec::new();
            for e in fat.entries() {
                out.push(Entry {
                    id: e.id,
                    data: (!e.is_host()).then_some(e.data),
                });
            }
            return Ok(out);
        }
    }
    match BinaryBundle::parse(data) {
        Ok(None) => Ok(Vec::new()),
        Ok(Some(b)) => Ok(b
            .llvm_order()
            .into_iter()
            .map(|e| Entry {
                id: e.id,
                data: Some(&data[e.offset as usize..(e.offset + e.size()) as usize]),
            })
            .collect()),
        Err(e) => Err(e),
    }
}

/// The bundle IDs of a member, as `-check-input-archive` collects them (LLVM does not
/// decompress members there: a compressed member has no IDs).
pub(super) fn member_ids(data: &[u8]) -> Result<BTreeSet<&[u8]>, BundleReadError> {
    if fatobj::detect(data).is_some() {
        if let Ok(fat) = FatObject::parse(data) {
            return Ok(fat.entries().iter().map(|e| e.id).collect());
        }
    }
    match BinaryBundle::parse(data) {
        Ok(None) => Ok(BTreeSet::new()),
        Ok(Some(b)) => Ok(b.entries().iter().map(|e| e.id).collect()),
        Err(e) => Err(e),
    }
}

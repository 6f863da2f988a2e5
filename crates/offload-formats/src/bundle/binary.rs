//! The binary bundle layout (clang-offload-bundler's `BinaryFileHandler`).
//!
//! ```text
//! offset  size  field
//!  0      24    "__CLANG_OFFLOAD_BUNDLE__"
//! 24       8    N, number of entries (u64 LE)
//! 32      ...   N descriptors: offset u64, size u64, ID length u64, ID bytes
//! ...           payloads, each at its offset (zero padding between them)
//! ```
//!
//! Offsets are absolute from the start of the bundle. The writer places payloads in
//! entry order, each at the next multiple of the alignment (`-bundle-align`, default
//! 1, applied to every entry including the first) and adds nothing after the last.
//!
//! LLVM's reader silently stops at the first bad descriptor (and crashes when entries
//! were read before it). [`BinaryBundle::parse`] reports every such problem as a
//! [`BundleReadError`] naming the entry and offset instead.

use std::borrow::Cow;
use std::collections::HashMap;
use std::io::{self, Write};

use object::endian::U64;
use object::pod::bytes_of;

use super::order::StringMapOrder;
use super::{BundleReadError, BundleReadErrorKind, BundleWriteError, align_up};
use crate::kind;
use crate::raw::{self, BUNDLE_ENTRY_FIELDS, BUNDLE_MAGIC, BundleEntry, BundleHeader, LE};

const HEADER_FIXED: u64 = raw::size_of::<BundleHeader>() as u64;
const DESCRIPTOR_FIXED: u64 = raw::size_of::<BundleEntry>() as u64;

/// One entry of a binary bundle, borrowing from the input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BinaryEntry<'data> {
    /// The entry ID bytes as stored (normally ASCII).
    pub id: &'data [u8],
    /// Offset of the payload from the start of the bundle.
    pub offset: u64,
    /// The payload.
    pub data: &'data [u8],
}

impl BinaryEntry<'_> {
    /// The ID as text (bytes that are not UTF-8 held as [`crate::id::spell`] holds them).
    pub fn id_str(&self) -> Cow<'_, str> {
        crate::id::spell::text(self.id)
    }

    /// Payload size in bytes.
    pub fn size(&self) -> u64 {
        self.data.len() as u64
    }
}

/// A parsed binary bundle.
#[derive(Clone, Debug)]
pub struct BinaryBundle<'data> {
    entries: Vec<BinaryEntry<'data>>,
    header_len: u64,
}

impl<'data> BinaryBundle<'data> {
    /// Whether `data` starts with the bundle magic.
    pub fn is_bundle(data: &[u8]) -> bool {
        kind::FileKind::sniff(data) == kind::FileKind::Bundle
    }

    /// Parses the bundle at the start of `data`.
    ///
    /// Returns `Ok(None)` when `data` does not start with the magic (LLVM treats such
    /// input as "no bundles"), and an error for any malformed header: a truncated
    /// field, an entry count larger than the input can hold, a zero payload offset, or
    /// a payload past the end of `data`. Nothing is allocated beyond what `data` can
    /// actually describe.
    pub fn parse(data: &'data [u8]) -> Result<Option<Self>, BundleReadError> {
        let len = data.len() as u64;
        let (descriptors, header_len) = match read_header(data, len)? {
            None => return Ok(None),
            Some(HeaderRead::Complete(descriptors, header_len)) => (descriptors, header_len),
            // The whole bundle is given, so its header cannot be cut short (`read_header`
            // reports a cut field as an error then); kept as an error all the same.
            Some(HeaderRead::NeedMore(needed)) => {
                return Err(BundleReadError::new(
                    BundleReadErrorKind::Truncated {
                        field: "header",
                        needed,
                        available: len,
                    },
                    0,
                    None,
                ));
            }
        };
        // `read_header` checked every payload against `len`.
        let entries = descriptors
            .into_iter()
            .map(|d| BinaryEntry {
                id: d.id,
                offset: d.offset,
                data: &data[d.offset as usize..(d.offset + d.size) as usize],
            })
            .collect();
        Ok(Some(BinaryBundle {
            entries,
            header_len,
        }))
    }

    /// Parses every bundle in `data`: bundles placed one after another, optionally
    /// separated by zero padding (what a linker leaves in a `.hip_fatbin` section).
    ///
    /// Each bundle's offsets are relative to its own start. Scanning stops at the
    /// first non-zero byte that does not start another bundle. Returns the start
    /// offset of each bundle with the bundle.
    pub fn parse_all(data: &'data [u8]) -> Result<Vec<(u64, Self)>, BundleReadError> {
        let mut out = Vec::new();
        let mut start = 0usize;
        while start < data.len() {
            let rest = &data[start..];
            let bundle = Self::parse(rest).map_err(|e| BundleReadError {
                offset: e.offset + start as u64,
                ..e
            })?;
            let Some(bundle) = bundle else { break };
            let end = start + bundle.end() as usize;
            out.push((start as u64, bundle));
            match data[end..].iter().position(|&b| b != 0) {
                Some(skip) => start = end + skip,
                None => break,
            }
        }
        Ok(out)
    }

    /// Entries in header (file) order.
    pub fn entries(&self) -> &[BinaryEntry<'data>] {
        &self.entries
    }

    /// Entries in the order clang-offload-bundler lists and unbundles them: the
    /// iteration order of its `StringMap`. When an ID occurs twice, the entry keeps
    /// the first one's position but the later descriptor's payload (as LLVM does).
    pub fn llvm_order(&self) -> Vec<BinaryEntry<'data>> {
        let ids: Vec<&[u8]> = self.entries.iter().map(|e| e.id).collect();
        // One pass for the last descriptor of each ID, so crafted bundles with many
        // entries stay linear.
        let mut last: HashMap<&[u8], usize> = HashMap::with_capacity(ids.len());
        for (i, id) in ids.iter().enumerate() {
            last.insert(id, i);
        }
        StringMapOrder::of(&ids)
            .into_iter()
            .map(|i| self.entries[last[ids[i]]])
            .collect()
    }

    /// Length of the header (magic, count and descriptors).
    pub fn header_len(&self) -> u64 {
        self.header_len
    }

    /// Where this bundle ends: the end of its last payload or of its header.
    pub fn end(&self) -> u64 {
        self.entries
            .iter()
            .map(|e| e.offset + e.size())
            .fold(self.header_len, u64::max)
    }
}

/// One descriptor of a bundle header read by [`read_header`]: the payload is not looked at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Descriptor<'data> {
    /// The entry ID bytes as stored.
    pub id: &'data [u8],
    /// Offset of the payload from the start of the bundle.
    pub offset: u64,
    /// Payload size in bytes.
    pub size: u64,
}

/// What [`read_header`] made of the start of a bundle.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HeaderRead<'data> {
    /// The prefix ends inside the header: at least this many bytes are needed.
    NeedMore(u64),
    /// The whole header: descriptors in header order, and the header's length.
    Complete(Vec<Descriptor<'data>>, u64),
}

/// Reads the header of a binary bundle of `len` bytes from `prefix`, its first bytes, with
/// the checks of [`BinaryBundle::parse`] (the same errors, with `len` as the input length),
/// without needing the payloads: what listing a compressed bundle decodes just far enough
/// for. Returns [`HeaderRead::NeedMore`] while the prefix ends inside the header; `Ok(None)`
/// when the prefix does not start with the bundle magic.
pub fn read_header(prefix: &[u8], len: u64) -> Result<Option<HeaderRead<'_>>, BundleReadError> {
    let have = prefix.len() as u64;
    // Whether the prefix ends before `need` while the bundle goes on; once the prefix is the
    // whole bundle, a field cut short is the error `parse` reports.
    let cut = |need: u64| have < need && have < len;
    if cut(HEADER_FIXED) {
        if !kind::may_start_bundle(prefix) {
            return Ok(None);
        }
        return Ok(Some(HeaderRead::NeedMore(HEADER_FIXED.min(len))));
    }
    if !BinaryBundle::is_bundle(prefix) {
        return Ok(None);
    }
    let count = match raw::read_at::<BundleHeader>(prefix, 0) {
        Some(header) => header.num_entries.get(LE),
        None => return Err(truncated(prefix, 24, "entry count", None)),
    };
    let max = len.saturating_sub(HEADER_FIXED) / DESCRIPTOR_FIXED;
    if count > max {
        return Err(BundleReadError::new(
            BundleReadErrorKind::CountTooLarge { count, max },
            24,
            None,
        ));
    }
    let mut entries = Vec::new();
    let mut pos = HEADER_FIXED;
    for i in 0..count {
        let descriptor = pos;
        if cut(pos + DESCRIPTOR_FIXED) {
            return Ok(Some(HeaderRead::NeedMore(pos + DESCRIPTOR_FIXED)));
        }
        let fixed = read_descriptor(prefix, pos, i)?;
        let (offset, size) = (fixed.offset.get(LE), fixed.size.get(LE));
        let id_len = fixed.id_len.get(LE);
        pos += DESCRIPTOR_FIXED;
        let available = len.saturating_sub(pos);
        if id_len > available {
            return Err(BundleReadError::new(
                BundleReadErrorKind::Truncated {
                    field: "ID",
                    needed: id_len,
                    available,
                },
                pos,
                Some(i),
            ));
        }
        if cut(pos + id_len) {
            return Ok(Some(HeaderRead::NeedMore(pos + id_len)));
        }
        let id = &prefix[pos as usize..(pos + id_len) as usize];
        pos += id_len;
        if offset == 0 {
            return Err(BundleReadError::new(
                BundleReadErrorKind::ZeroOffset,
                descriptor,
                Some(i),
            ));
        }
        if offset.checked_add(size).is_none_or(|end| end > len) {
            return Err(BundleReadError::new(
                BundleReadErrorKind::PastEnd { offset, size, len },
                descriptor,
                Some(i),
            ));
        }
        entries.push(Descriptor { id, offset, size });
    }
    Ok(Some(HeaderRead::Complete(entries, pos)))
}

/// The fixed part of descriptor `entry` at `pos`, or the error naming the field it cuts.
fn read_descriptor(data: &[u8], pos: u64, entry: u64) -> Result<&BundleEntry, BundleReadError> {
    let at = pos as usize;
    raw::read_at::<BundleEntry>(data, at).ok_or_else(|| {
        let (field, _) = raw::first_cut(&BUNDLE_ENTRY_FIELDS, data.len() - at)
            .expect("a descriptor that does not fit cuts a field");
        truncated(data, pos + field.offset as u64, field.name, Some(entry))
    })
}

/// A `u64` field at `pos` that `data` does not hold.
fn truncated(data: &[u8], pos: u64, field: &'static str, entry: Option<u64>) -> BundleReadError {
    BundleReadError::new(
        BundleReadErrorKind::Truncated {
            field,
            needed: 8,
            available: (data.len() as u64).saturating_sub(pos),
        },
        pos,
        entry,
    )
}

/// Plans a binary bundle: entry IDs and payload sizes in, header and offsets out.
///
/// ```
/// use std::io::Write;
/// use offload_formats::bundle::BinaryBundleWriter;
/// let mut w = BinaryBundleWriter::new();
/// w.add("host-x86_64-unknown-linux-gnu-", 8).unwrap();
/// w.add("hip-amdgcn-amd-amdhsa--gfx90a", 4).unwrap();
/// let layout = w.layout().unwrap();
/// let mut out = Vec::new();
/// layout.write_to(&mut out, |i, w| w.write_all(if i == 0 { b"HOSTDATA" } else { b"DEV1" })).unwrap();
/// assert_eq!(out.len() as u64, layout.len());
/// ```
#[derive(Clone, Debug, Default)]
pub struct BinaryBundleWriter {
    align: u64,
    entries: Vec<(Vec<u8>, u64)>,
    /// The IDs added so far, so that a duplicate is found in constant time.
    ids: std::collections::HashSet<Vec<u8>>,
}

impl BinaryBundleWriter {
    /// An empty bundle with alignment 1.
    pub fn new() -> Self {
        BinaryBundleWriter {
            align: 1,
            entries: Vec::new(),
            ids: std::collections::HashSet::new(),
        }
    }

    /// Sets the payload alignment (`-bundle-align`); any value but 0.
    pub fn align(&mut self, align: u64) -> Result<&mut Self, BundleWriteError> {
        if align == 0 {
            return Err(BundleWriteError::ZeroAlignment);
        }
        self.align = align;
        Ok(self)
    }

    /// Adds an entry with its payload size. IDs must be distinct.
    pub fn add(
        &mut self,
        id: impl Into<Vec<u8>>,
        size: u64,
    ) -> Result<&mut Self, BundleWriteError> {
        let id = id.into();
        if !self.ids.insert(id.clone()) {
            return Err(BundleWriteError::DuplicateId(
                crate::id::spell::text(&id).into_owned(),
            ));
        }
        self.entries.push((id, size));
        Ok(self)
    }

    /// Computes the header bytes and every payload offset.
    pub fn layout(&self) -> Result<BinaryLayout, BundleWriteError> {
        let header_len = self
            .entries
            .iter()
            .try_fold(HEADER_FIXED, |acc, (id, _)| {
                acc.checked_add(DESCRIPTOR_FIXED + id.len() as u64)
            })
            .ok_or(BundleWriteError::TooLarge)?;
        let mut cursor = header_len;
        let mut offsets = Vec::with_capacity(self.entries.len());
        for (_, size) in &self.entries {
            let offset = align_up(cursor, self.align).ok_or(BundleWriteError::TooLarge)?;
            cursor = offset
                .checked_add(*size)
                .ok_or(BundleWriteError::TooLarge)?;
            offsets.push((offset, *size));
        }
        let mut header = Vec::with_capacity(header_len as usize);
        header.extend_from_slice(bytes_of(&BundleHeader {
            magic: *BUNDLE_MAGIC,
            num_entries: U64::new(LE, self.entries.len() as u64),
        }));
        for ((id, _), &(offset, size)) in self.entries.iter().zip(&offsets) {
            header.extend_from_slice(bytes_of(&BundleEntry {
                offset: U64::new(LE, offset),
                size: U64::new(LE, size),
                id_len: U64::new(LE, id.len() as u64),
            }));
            header.extend_from_slice(id);
        }
        Ok(BinaryLayout {
            header,
            offsets,
            len: cursor,
        })
    }
}

/// The planned layout of a binary bundle; writes it while payloads stream in.
#[derive(Clone, Debug)]
pub struct BinaryLayout {
    header: Vec<u8>,
    offsets: Vec<(u64, u64)>,
    len: u64,
}

impl BinaryLayout {
    /// The header bytes.
    pub fn header(&self) -> &[u8] {
        &self.header
    }

    /// `(offset, size)` of each payload, in entry order.
    pub fn payloads(&self) -> &[(u64, u64)] {
        &self.offsets
    }

    /// Total length of the bundle.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether the bundle has no entries.
    pub fn is_empty(&self) -> bool {
        self.offsets.is_empty()
    }

    /// The bundle as a sequence of byte slices to be concatenated: the header, then for each
    /// entry its zero padding and `payloads[i]` (which must have the size given for it).
    /// Lets a consumer (hashing, compression) read the bundle without first copying it.
    pub fn pieces<'a>(&'a self, payloads: &[&'a [u8]]) -> Result<Vec<&'a [u8]>, BundleWriteError> {
        static ZEROS: [u8; 1 << 16] = [0; 1 << 16];
        let mut out = Vec::with_capacity(1 + 2 * payloads.len());
        out.push(&self.header[..]);
        let mut pos = self.header.len() as u64;
        for (i, &(offset, size)) in self.offsets.iter().enumerate() {
            let data = payloads.get(i).copied().unwrap_or_default();
            if data.len() as u64 != size {
                return Err(BundleWriteError::SizeChanged {
                    entry: i,
                    expected: size,
                    actual: data.len() as u64,
                });
            }
            let mut pad = offset - pos;
            while pad > 0 {
                let n = pad.min(ZEROS.len() as u64) as usize;
                out.push(&ZEROS[..n]);
                pad -= n as u64;
            }
            out.push(data);
            pos = offset + size;
        }
        Ok(out)
    }

    /// Writes the bundle to `out`: the header, then for each entry zero padding up to
    /// its offset and the payload written by `payload(index, out)`. The callback must
    /// write exactly the size given for that entry; anything else is an error (a file
    /// that changed size while it was being bundled, for example).
    ///
    /// `W` stays concrete so that the callback can reach the `File` underneath
    /// ([`CountingWriter::inner`]) and copy a payload into it by range.
    pub fn write_to<W: Write>(
        &self,
        out: &mut W,
        mut payload: impl FnMut(usize, &mut CountingWriter<'_, W>) -> io::Result<()>,
    ) -> io::Result<()> {
        out.write_all(&self.header)?;
        let mut pos = self.header.len() as u64;
        for (i, &(offset, size)) in self.offsets.iter().enumerate() {
            write_zeros(out, offset - pos)?;
            let mut counting = CountingWriter {
                inner: out,
                count: 0,
            };
            payload(i, &mut counting)?;
            if counting.count != size {
                return Err(io::Error::other(format!(
                    "entry {i}: expected {size} payload bytes, got {}",
                    counting.count
                )));
            }
            pos = offset + size;
        }
        Ok(())
    }
}

/// A writer that counts the bytes passed through it (see [`BinaryLayout::write_to`]).
#[derive(Debug)]
pub struct CountingWriter<'a, W> {
    inner: &'a mut W,
    count: u64,
}

impl<W> CountingWriter<'_, W> {
    /// The writer underneath, for callers that copy into it directly; they must add
    /// what they wrote with [`CountingWriter::add_count`].
    pub fn inner(&mut self) -> &mut W {
        self.inner
    }

    /// Accounts for `n` bytes written through [`CountingWriter::inner`].
    pub fn add_count(&mut self, n: u64) {
        self.count += n;
    }
}

impl<W: Write> Write for CountingWriter<'_, W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.count += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// Writes `n` zero bytes.
pub(crate) fn write_zeros<W: Write>(out: &mut W, mut n: u64) -> io::Result<()> {
    const ZEROS: [u8; 4096] = [0; 4096];
    while n > 0 {
        let k = n.min(ZEROS.len() as u64) as usize;
        out.write_all(&ZEROS[..k])?;
        n -= k as u64;
    }
    Ok(())
}

/// Builds a whole binary bundle in memory from `(id, payload)` pairs.
pub fn write_bundle(entries: &[(&[u8], &[u8])], align: u64) -> Result<Vec<u8>, BundleWriteError> {
    let mut w = BinaryBundleWriter::new();
    w.align(align)?;
    for (id, data) in entries {
        w.add(*id, data.len() as u64)?;
    }
    let layout = w.layout()?;
    let mut out = Vec::with_capacity(layout.len() as usize);
    layout
        .write_to(&mut out, |i, w| w.write_all(entries[i].1))
        .expect("writing to memory");
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec_example() -> Vec<u8> {
        write_bundle(
            &[
                (b"host-x86_64-unknown-linux-gnu-", b"HOSTDATA"),
                (b"openmp-amdgcn-amd-amdhsa--gfx906", b"DEV1"),
                (b"hip-amdgcn-amd-amdhsa--gfx908", b"DEVICE2!!"),
            ],
            1,
        )
        .unwrap()
    }

    #[test]
    fn writes_spec_worked_example() {
        let b = spec_example();
        assert_eq!(b.len(), 216);
        let header = raw::read_at::<BundleHeader>(&b, 0).unwrap();
        assert_eq!(&header.magic, BUNDLE_MAGIC);
        assert_eq!(header.num_entries.get(LE), 3);
        let first = raw::read_at::<BundleEntry>(&b, 32).unwrap();
        assert_eq!(first.offset.get(LE), 195);
        assert_eq!(&b[0xc3..0xcb], b"HOSTDATA");
        assert_eq!(&b[0xcf..], b"DEVICE2!!");
    }

    #[test]
    fn round_trip_and_llvm_order() {
        let b = spec_example();
        let bundle = BinaryBundle::parse(&b).unwrap().unwrap();
        assert_eq!(bundle.entries().len(), 3);
        assert_eq!(bundle.entries()[1].data, b"DEV1");
        let order: Vec<_> = bundle
            .llvm_order()
            .iter()
            .map(|e| e.id_str().into_owned())
            .collect();
        assert_eq!(order[2], "host-x86_64-unknown-linux-gnu-");
        assert_eq!(bundle.end(), 216);
    }

    #[test]
    fn alignment_applies_to_every_entry() {
        let b = write_bundle(&[(b"a", b"x"), (b"b", b""), (b"c", b"yz")], 3).unwrap();
        let bundle = BinaryBundle::parse(&b).unwrap().unwrap();
        let offsets: Vec<u64> = bundle.entries().iter().map(|e| e.offset).collect();
        // Header: 32 + 3 * (24 + 1) = 107 bytes.
        assert_eq!(offsets, [108, 111, 111]);
        assert_eq!(b.len(), 113);
        let b = write_bundle(&[(b"a", b"x")], 4096).unwrap();
        assert_eq!(b.len(), 4097);
    }

    #[test]
    fn rejects_zero_alignment_and_duplicates() {
        assert_eq!(write_bundle(&[], 0), Err(BundleWriteError::ZeroAlignment));
        assert!(matches!(
            write_bundle(&[(b"a", b""), (b"a", b"")], 1),
            Err(BundleWriteError::DuplicateId(_))
        ));
    }

    #[test]
    fn not_a_bundle() {
        assert!(BinaryBundle::parse(b"").unwrap().is_none());
        assert!(BinaryBundle::parse(b"hello world").unwrap().is_none());
    }

    #[test]
    fn malformed_headers_are_errors() {
        let good = spec_example();
        // Truncated inside the count.
        let e = BinaryBundle::parse(&good[..28]).unwrap_err();
        assert!(matches!(e.kind, BundleReadErrorKind::Truncated { .. }));
        // A count the truncated input cannot hold.
        let e = BinaryBundle::parse(&good[..60]).unwrap_err();
        assert!(matches!(
            e.kind,
            BundleReadErrorKind::CountTooLarge { count: 3, max: 1 }
        ));
        // Truncated inside the first ID.
        let mut b = good[..60].to_vec();
        b[24] = 1;
        let e = BinaryBundle::parse(&b).unwrap_err();
        assert_eq!(e.entry, Some(0));
        assert!(matches!(
            e.kind,
            BundleReadErrorKind::Truncated { field: "ID", .. }
        ));
        // Count larger than the entries.
        let mut b = good.clone();
        b[24] = 5;
        let e = BinaryBundle::parse(&b).unwrap_err();
        assert!(
            matches!(e.kind, BundleReadErrorKind::Truncated { .. }),
            "{e}"
        );
        assert_eq!(e.entry, Some(3));
        // Absurd count: rejected before any allocation.
        b[24..32].copy_from_slice(&u64::MAX.to_le_bytes());
        let e = BinaryBundle::parse(&b).unwrap_err();
        assert!(matches!(e.kind, BundleReadErrorKind::CountTooLarge { .. }));
        // Zero offset.
        let mut b = good.clone();
        b[32..40].fill(0);
        assert_eq!(
            BinaryBundle::parse(&b).unwrap_err().kind,
            BundleReadErrorKind::ZeroOffset
        );
        // Payload past the end, and offset+size overflow.
        let e = BinaryBundle::parse(&good[..210]).unwrap_err();
        assert_eq!(e.entry, Some(2));
        let mut b = good.clone();
        b[40..48].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(matches!(
            BinaryBundle::parse(&b).unwrap_err().kind,
            BundleReadErrorKind::PastEnd { .. }
        ));
        // Every message names the entry and says what was expected.
        assert!(e.to_string().contains("entry 2"), "{e}");
    }

    #[test]
    fn several_bundles_back_to_back() {
        let one = write_bundle(&[(b"hip-amdgcn-amd-amdhsa--gfx906", b"AAAA")], 1).unwrap();
        let two = write_bundle(&[(b"hip-amdgcn-amd-amdhsa--gfx90a", b"BB")], 1).unwrap();
        let mut data = one.clone();
        data.resize(4096, 0);
        data.extend_from_slice(&two);
        data.resize(8192, 0);
        let all = BinaryBundle::parse_all(&data).unwrap();
        assert_eq!(all.len(), 2);
        assert_eq!(all[1].0, 4096);
        assert_eq!(all[1].1.entries()[0].data, b"BB");
    }

    #[test]
    fn duplicate_ids_keep_first_slot_last_payload() {
        // LLVM's reader: map[id] = info overwrites the value, keeps the slot.
        let mut w = BinaryBundleWriter::new();
        w.add("x", 1).unwrap().add("y", 1).unwrap();
        let layout = w.layout().unwrap();
        let mut b = Vec::new();
        layout
            .write_to(&mut b, |i, w| w.write_all(if i == 0 { b"1" } else { b"2" }))
            .unwrap();
        // Rename entry "y" to "x".
        let pos = b.windows(1).rposition(|w| w == b"y").unwrap();
        b[pos] = b'x';
        let bundle = BinaryBundle::parse(&b).unwrap().unwrap();
        let order = bundle.llvm_order();
        assert_eq!(order.len(), 1);
        assert_eq!(order[0].data, b"2");
    }
}

//! A whole fat binary ([`Fatbin`]) parsed over borrowed bytes, and [`scan`], which finds
//! every fat binary in any file as `cuobjdump` does.

use crate::kind;
use crate::raw::{LE, NVFATBIN_HEADER_FIELDS, NvFatbinHeader};

use super::entry::Entry;
use super::error::{FatbinError, FatbinErrorKind, err, read_header};
use super::layout::HEADER_SIZE;

/// A parsed fat binary, borrowing its bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fatbin<'a> {
    data: &'a [u8],
    version: u16,
    header_size: u16,
    entries: Vec<Entry<'a>>,
}

impl<'a> Fatbin<'a> {
    /// Whether `data` starts with the magic number.
    pub fn is_fatbin(data: &[u8]) -> bool {
        kind::FileKind::sniff(data) == kind::FileKind::NvFatbin
    }

    /// Parses the fat binary at the start of `data`; bytes after its end (other fat
    /// binaries, padding) are ignored ([`Fatbin::size`] tells where it ends). Every size and
    /// offset is checked against the input.
    pub fn parse(data: &'a [u8]) -> Result<Fatbin<'a>, FatbinError> {
        if data.len() >= 4 && !Fatbin::is_fatbin(data) {
            return Err(err(FatbinErrorKind::BadMagic, 0, None));
        }
        let h: &NvFatbinHeader = read_header(data, 0, &NVFATBIN_HEADER_FIELDS, None)?;
        let (version, header_size) = (h.version.get(LE), h.header_size.get(LE));
        let fat_size = h.fat_size.get(LE);
        if (header_size as usize) < HEADER_SIZE {
            return Err(err(FatbinErrorKind::BadHeaderSize(header_size), 6, None));
        }
        let total = (header_size as u64)
            .checked_add(fat_size)
            .filter(|&t| t <= data.len() as u64)
            .ok_or_else(|| {
                let kind = FatbinErrorKind::PastEnd {
                    what: "entries",
                    offset: header_size as u64,
                    size: fat_size,
                    len: data.len() as u64,
                };
                err(kind, 8, None)
            })? as usize;
        let data = &data[..total];
        let mut entries = Vec::new();
        let mut at = header_size as usize;
        // Each entry takes at least 64 bytes, so the loop is bounded by the input.
        while at < total {
            let entry = Entry::parse(data, at, entries.len())?;
            at = entry.payload_offset() + entry.payload().len();
            entries.push(entry);
        }
        Ok(Fatbin {
            data,
            version,
            header_size,
            entries,
        })
    }

    /// The fat binary's bytes (header and entries; nothing after its end).
    pub fn data(&self) -> &'a [u8] {
        self.data
    }
    /// Its size: header size plus the size of its entries.
    pub fn size(&self) -> usize {
        self.data.len()
    }
    /// The outer header's version (1).
    pub fn version(&self) -> u16 {
        self.version
    }
    /// The outer header's size (16).
    pub fn header_size(&self) -> u16 {
        self.header_size
    }
    /// The entries, in stored order.
    pub fn entries(&self) -> &[Entry<'a>] {
        &self.entries
    }
}

/// A fat binary found by [`scan`]: where it starts in the scanned bytes, and what it holds.
#[derive(Clone, Debug)]
pub struct Found<'a> {
    /// Offset of its header in the scanned bytes.
    pub offset: usize,
    /// The parsed fat binary.
    pub fatbin: Fatbin<'a>,
}

/// Finds the fat binaries in `data` as `cuobjdump` does in a file it does not otherwise
/// understand: at every 8-byte aligned offset (the alignment of `.nv_fatbin` and of the
/// fat binaries in it) where the magic number starts a well-formed fat binary; the search
/// goes on after its end. Candidates that do not parse are skipped and returned as errors
/// with their offset, so a caller can report them.
pub fn scan(data: &[u8]) -> (Vec<Found<'_>>, Vec<(usize, FatbinError)>) {
    let mut found = Vec::new();
    let mut errors = Vec::new();
    let mut at = 0;
    while at + HEADER_SIZE <= data.len() {
        // The next aligned magic: one comparison per 8 bytes, over whole chunks.
        match kind::next_aligned_nvfatbin(&data[at..]) {
            Some(skip) => at += skip,
            None => break,
        }
        if at + HEADER_SIZE > data.len() {
            break;
        }
        match Fatbin::parse(&data[at..]) {
            Ok(f) => {
                let size = f.size().max(HEADER_SIZE);
                found.push(Found {
                    offset: at,
                    fatbin: f,
                });
                at += size.next_multiple_of(8);
                continue;
            }
            Err(e) => errors.push((at, e)),
        }
        at += 8;
    }
    (found, errors)
}

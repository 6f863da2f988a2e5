//! The string table of an offload binary, built as LLVM's `StringTableBuilder`
//! (kind ELF, `finalize()` with tail merging) builds it, so that offsets and bytes
//! match LLVM's output exactly.
//!
//! The distinct strings are sorted in descending order of their reversed bytes,
//! where the end of a string sorts below every byte (a string sorts right after
//! every string it is a suffix of). The table starts with a NUL byte; each string
//! that is a suffix of the previously emitted one points into that one's tail,
//! every other string is appended with a NUL. The empty string is at offset 0.

use std::cmp::Ordering;
use std::collections::HashMap;

/// A finalized string table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StringTable {
    bytes: Vec<u8>,
    offsets: HashMap<Vec<u8>, u64>,
}

/// LLVM's multikey sort order: larger byte from the end first; end of string lowest.
fn tail_order(a: &[u8], b: &[u8]) -> Ordering {
    let mut ia = a.iter().rev();
    let mut ib = b.iter().rev();
    loop {
        match (ia.next(), ib.next()) {
            (None, None) => return Ordering::Equal,
            (None, Some(_)) => return Ordering::Greater,
            (Some(_), None) => return Ordering::Less,
            (Some(x), Some(y)) if x != y => return y.cmp(x),
            _ => {}
        }
    }
}

impl StringTable {
    /// Builds the table of `strings` (duplicates allowed; order irrelevant).
    pub fn build<'s>(strings: impl IntoIterator<Item = &'s [u8]>) -> StringTable {
        let mut distinct: Vec<&[u8]> = strings.into_iter().collect();
        distinct.sort_unstable_by(|a, b| tail_order(a, b));
        distinct.dedup();
        let mut bytes = vec![0u8];
        let mut offsets = HashMap::with_capacity(distinct.len() + 1);
        let mut previous: &[u8] = &[];
        for s in distinct {
            if previous.ends_with(s) {
                offsets.insert(s.to_vec(), (bytes.len() - s.len() - 1) as u64);
                continue;
            }
            offsets.insert(s.to_vec(), bytes.len() as u64);
            bytes.extend_from_slice(s);
            bytes.push(0);
            previous = s;
        }
        offsets.insert(Vec::new(), 0);
        StringTable { bytes, offsets }
    }

    /// The offset of a string given to [`StringTable::build`].
    pub fn offset(&self, s: &[u8]) -> Option<u64> {
        self.offsets.get(s).copied()
    }

    /// The table's bytes.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The table's size in bytes.
    pub fn len(&self) -> u64 {
        self.bytes.len() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(strings: &[&str]) -> StringTable {
        StringTable::build(strings.iter().map(|s| s.as_bytes()))
    }

    #[test]
    fn spec_example() {
        let t = table(&["arch", "gfx906", "triple", "amdgcn-amd-amdhsa"]);
        assert_eq!(t.bytes(), b"\0arch\0triple\0amdgcn-amd-amdhsa\0gfx906\0");
        assert_eq!(t.offset(b"arch"), Some(1));
        assert_eq!(t.offset(b"triple"), Some(6));
        assert_eq!(t.offset(b"amdgcn-amd-amdhsa"), Some(13));
        assert_eq!(t.offset(b"gfx906"), Some(31));
        assert_eq!(t.len(), 38);
    }

    #[test]
    fn tail_merging() {
        let t = table(&["feature", "+ptx", "x", "ptx", "", "x"]);
        assert_eq!(t.bytes(), b"\0+ptx\0feature\0");
        assert_eq!(t.offset(b"ptx"), Some(2));
        assert_eq!(t.offset(b"x"), Some(4));
        assert_eq!(t.offset(b""), Some(0));
        assert_eq!(t.offset(b"nope"), None);
        // Bytes compare unsigned: 0xff sorts before ASCII.
        let t = StringTable::build([&b"a\xff"[..], b"ab"]);
        assert_eq!(t.bytes(), b"\0a\xff\0ab\0");
    }

    #[test]
    fn empty_table() {
        let t = StringTable::build(std::iter::empty());
        assert_eq!(t.bytes(), b"\0");
        assert!(t.len() > 0);
    }
}

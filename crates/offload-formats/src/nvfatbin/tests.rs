//! The tests of the fat-binary reader and writer.

use super::compression::lz4_block;
use super::*;
use crate::raw::{LE, NvFatbinEntry};

/// The header of the entry at `at`, to edit.
fn entry_header(b: &mut [u8], at: usize) -> &mut NvFatbinEntry {
    object::pod::from_bytes_mut(&mut b[at..]).unwrap().0
}

fn cubin(arch: u8) -> Vec<u8> {
    let mut c = b"\x7fELF\x02\x01\x013\x07".to_vec();
    c.resize(64, 0);
    c[48] = arch;
    c.extend(b"body");
    c
}

const PTX: &[u8] = b"//\n.version 7.8\n.target sm_90\n.address_size 64\n";

fn sample() -> Vec<u8> {
    let mut w = FatbinWriter::new();
    w.add_cubin("sm_80", &cubin(80), Some("k")).unwrap();
    w.add_ptx("80", PTX, Some("k"), None).unwrap();
    w.add_cubin("sm_90", &cubin(90), None).unwrap();
    w.add_ptx("compute_90", PTX, None, Some("-O3")).unwrap();
    w.to_bytes()
}

#[test]
fn round_trip() {
    let bytes = sample();
    assert_eq!(bytes.len() % 8, 0);
    let f = Fatbin::parse(&bytes).unwrap();
    assert_eq!(f.size(), bytes.len());
    let e = f.entries();
    assert_eq!(e.len(), 4);
    assert_eq!(e[0].kind(), EntryKind::Elf);
    assert_eq!(e[0].arch_name(), "sm_80");
    assert_eq!(e[0].version_pair(), (1, 7));
    assert_eq!(e[0].identifier(), Some(&b"k"[..]));
    assert_eq!(e[0].header_size(), 72);
    assert_eq!(e[0].image().unwrap().len(), 72, "cubin padded to 8");
    assert_eq!(e[1].ptx_version(), Some((7, 8)));
    assert_eq!(e[1].arch_name(), "compute_80");
    assert_eq!(e[1].options(), Some(&b""[..]));
    assert_eq!(e[1].image(), Some(PTX));
    assert_eq!(e[1].header_size(), 88);
    assert_eq!(e[2].identifier(), None);
    assert_eq!(e[2].header_size(), 64);
    assert_eq!(e[3].options(), Some(&b"-O3"[..]));
    assert_eq!(e[3].flags(), Flags::LINUX_64);
    assert!(e.iter().all(|e| e.compression().is_none()));
}

#[test]
fn writer_refuses_bad_inputs() {
    let mut w = FatbinWriter::new();
    assert_eq!(
        w.add_ptx("80", b".target sm_80\n", None, None).unwrap_err(),
        FatbinWriteError::MissingPtxVersion
    );
    assert_eq!(
        w.add_ptx("80", b".version 7.0\n\0x", None, None)
            .unwrap_err(),
        FatbinWriteError::NulInPtx { offset: 13 }
    );
    assert_eq!(
        w.add_cubin("sm_80", b"not elf", None).unwrap_err(),
        FatbinWriteError::NotElf64
    );
    assert_eq!(
        w.add_cubin("sm_80", &cubin(80), Some("a\0b")).unwrap_err(),
        FatbinWriteError::NulInString("identifier")
    );
    assert!(w.add_ptx("80", b".version 7.0\n\0\0", None, None).is_ok());
}

#[test]
fn every_truncation_is_an_error_not_a_panic() {
    let bytes = sample();
    for n in 0..bytes.len() {
        assert!(Fatbin::parse(&bytes[..n]).is_err(), "{n}");
    }
}

#[test]
fn lying_sizes_are_errors() {
    let bytes = sample();
    let set = |at: usize, v: &[u8]| {
        let mut b = bytes.clone();
        b[at..at + v.len()].copy_from_slice(v);
        Fatbin::parse(&b).unwrap_err()
    };
    let e = set(8, &u64::MAX.to_le_bytes());
    assert!(
        matches!(
            e.kind,
            FatbinErrorKind::PastEnd {
                what: "entries",
                ..
            }
        ),
        "{e}"
    );
    let e = set(16 + 8, &u64::MAX.to_le_bytes());
    assert!(matches!(
        e.kind,
        FatbinErrorKind::PastEnd {
            what: "payload",
            ..
        }
    ));
    assert_eq!((e.entry, e.offset), (Some(0), 24));
    let e = set(16 + 4, &8u32.to_le_bytes());
    assert!(matches!(e.kind, FatbinErrorKind::BadEntryHeaderSize(8)));
    let e = set(16 + 4, &u32::MAX.to_le_bytes());
    assert!(matches!(e.kind, FatbinErrorKind::BadEntryHeaderSize(_)));
    let e = set(16 + 36, &1000u32.to_le_bytes());
    assert!(matches!(
        e.kind,
        FatbinErrorKind::PastEnd {
            what: "identifier",
            ..
        }
    ));
    let e = set(6, &4u16.to_le_bytes());
    assert_eq!(e.kind, FatbinErrorKind::BadHeaderSize(4));
    let e = set(0, b"\0\0\0\0");
    assert_eq!(e.kind, FatbinErrorKind::BadMagic);
    // Options offset pointing past the header.
    let second = Fatbin::parse(&bytes).unwrap().entries()[1].offset();
    let e = set(second + 20, &4000u32.to_le_bytes());
    assert!(e.to_string().contains("entry 1"), "{e}");
    // A compressed size larger than the payload.
    let mut b = bytes.clone();
    let h = entry_header(&mut b, 16);
    h.flags.set(LE, 0x8011);
    h.compressed_size.set(LE, 1000);
    assert!(matches!(
        Fatbin::parse(&b).unwrap_err().kind,
        FatbinErrorKind::CompressedSize { .. }
    ));
}

#[test]
fn compressed_entries_are_listed_not_decompressed() {
    let mut b = sample();
    let h = entry_header(&mut b, 16);
    h.flags.set(LE, 0x2011);
    h.compressed_size.set(LE, 10);
    let f = Fatbin::parse(&b).unwrap();
    let e = &f.entries()[0];
    assert_eq!(e.compression(), Some(Compression::Lz4));
    assert_eq!(e.image(), None);
    assert_eq!(e.stored().len(), 10);
}

#[test]
fn scan_finds_aligned_fatbins_and_reports_bad_ones() {
    let one = sample();
    let mut data = vec![0u8; 24];
    data.extend(&one);
    data.extend(&one);
    data.extend(MAGIC_BYTES);
    data.extend([0; 20]);
    let (found, errors) = scan(&data);
    assert_eq!(
        found.iter().map(|f| f.offset).collect::<Vec<_>>(),
        [24, 24 + one.len()]
    );
    assert_eq!(errors.len(), 1);
    assert_eq!(errors[0].0, 24 + 2 * one.len());
}

#[test]
fn arch_specific_entries() {
    let mut w = FatbinWriter::new();
    w.add_cubin("sm_90a", &cubin(90), None).unwrap();
    w.add_ptx("90a", PTX, None, None).unwrap();
    assert_eq!(
        w.add_ptx("sm_9x", PTX, None, None).unwrap_err(),
        FatbinWriteError::BadArch("sm_9x".into())
    );
    let bytes = w.to_bytes();
    let f = Fatbin::parse(&bytes).unwrap();
    let names: Vec<_> = f.entries().iter().map(Entry::arch_name).collect();
    assert_eq!(names, ["sm_90a", "compute_90a"]);
    assert_eq!(f.entries()[0].arch(), 90);
    assert_eq!(f.entries()[0].flags(), Flags(0x10_0011));
}

#[test]
fn lz4_blocks() {
    // "abcabcabcabcX": 3 literals, a match of 9 at offset 3, then a last literal.
    let block = [0x35, b'a', b'b', b'c', 3, 0, 0x10, b'X'];
    assert_eq!(lz4_block(&block, 13).unwrap(), b"abcabcabcabcX");
    assert!(lz4_block(&block, 12).is_err(), "longer than announced");
    assert!(lz4_block(&[0x35, b'a', b'b', b'c', 9, 0, 0x10, b'X'], 13).is_err());
    assert!(lz4_block(&[0x35, b'a', b'b', b'c', 0, 0], 13).is_err());
    assert!(lz4_block(&[0xf0], 13).is_err());
    assert!(
        lz4_block(&[0x10], 1 << 30).is_err(),
        "a lying size is not allocated"
    );
    // A truncated block is an error or a shorter output (which `decompress` refuses).
    for n in 0..block.len() {
        assert!(
            lz4_block(&block[..n], 13).map_or(true, |o| o.len() < 13),
            "{n}"
        );
    }
}

#[test]
fn compressed_entries_decompress_within_limits() {
    // An entry whose payload is the LZ4 block of "abcabcabcabcX" plus its NUL.
    let mut b = sample();
    let block = [0x35, b'a', b'b', b'c', 3, 0, 0x20, b'X', 0];
    let second = Fatbin::parse(&b).unwrap().entries()[1].clone();
    let at = second.offset();
    let p = second.payload_offset();
    b[p..p + block.len()].copy_from_slice(&block);
    let h = entry_header(&mut b, at);
    h.compressed_size.set(LE, block.len() as u32);
    h.flags.set(LE, 0x2011);
    h.uncompressed_size.set(LE, 14);
    let f = Fatbin::parse(&b).unwrap();
    let e = &f.entries()[1];
    assert_eq!(e.decompress(1 << 20).unwrap().unwrap(), b"abcabcabcabcX");
    let too = e.decompress(10).unwrap_err();
    assert!(matches!(
        too.kind,
        FatbinErrorKind::TooLarge { size: 14, max: 10 }
    ));
    assert_eq!(f.entries()[0].decompress(1 << 20).unwrap(), None);
    entry_header(&mut b, at).uncompressed_size.set(LE, 20);
    let e = Fatbin::parse(&b).unwrap().entries()[1]
        .decompress(1 << 20)
        .unwrap_err();
    assert!(e.to_string().contains("lz4-compressed payload"), "{e}");
}

#[test]
fn ptx_versions() {
    assert_eq!(ptx_isa_version(b"//\n  .version 8.5 // x\n"), Some((8, 5)));
    assert_eq!(ptx_isa_version(b".target sm_80"), None);
}

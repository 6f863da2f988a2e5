//! The tests of inspection.

use std::error::Error as _;

use super::*;
use crate::bundle::sequence::SequenceError;

#[test]
fn reader_errors_are_the_source() {
    // A compressed bundle with an unknown format version.
    let e = inspect(b"CCOB\x09\x00\x01\x00", "x.hipfb").unwrap_err();
    let Some(InspectSource::Sequence(inner)) = e.source.as_deref() else {
        panic!("{e:?}");
    };
    assert_eq!(e.message, "");
    assert_eq!(e.to_string(), format!("'x.hipfb': {inner}"));
    assert_eq!(
        e.source().and_then(|s| s.downcast_ref::<SequenceError>()),
        Some(inner)
    );
}

/// `verify` decodes the bundles of one file side by side and reports each one's hash,
/// and the first bundle that fails to decode, in file order, is the error.
#[cfg(feature = "compression")]
#[test]
fn verify_decodes_every_bundle_and_reports_the_first_failure() {
    use crate::bundle::binary::write_bundle;
    use crate::bundle::compressed::{CompressOptions, compress};
    let ccob = |tag: &[u8]| {
        let payload: Vec<u8> = tag.iter().cycle().take(300_000).copied().collect();
        let plain = write_bundle(&[(b"hipv4-amdgcn-amd-amdhsa--gfx90a", &payload)], 1).unwrap();
        compress(&plain, &CompressOptions::default()).unwrap()
    };
    let parts: Vec<Vec<u8>> = [b"a".as_slice(), b"bc", b"def", b"ghij"]
        .iter()
        .map(|t| ccob(t))
        .collect();
    let mut file = Vec::new();
    let mut starts = Vec::new();
    for p in &parts {
        starts.push(file.len());
        file.extend(p);
    }
    // v3 hash at bytes 24..32: wrong for the second bundle only.
    file[starts[1] + 24] ^= 1;
    let r = inspect_with(&file, "x.ccob", &Options::verify()).unwrap();
    let hashes: Vec<_> = r
        .containers
        .iter()
        .map(|c| c.compression.as_ref().unwrap().hash_matches)
        .collect();
    assert_eq!(hashes, [Some(true), Some(false), Some(true), Some(true)]);
    // The last block of the third and fourth bundles' frames cut to garbage: the third
    // is the error.
    for &k in &[2usize, 3] {
        let end = starts.get(k + 1).copied().unwrap_or(file.len());
        for b in &mut file[end - 6..end - 3] {
            *b = 0xff;
        }
    }
    let e = inspect_with(&file, "x.ccob", &Options::verify()).unwrap_err();
    assert!(
        e.to_string()
            .contains(&format!("compressed bundle at offset {}: ", starts[2])),
        "{e}"
    );
}

/// A listing reads each compressed bundle's entry table only: damage past it shows with
/// `verify` alone, and extracting the first entry still works.
#[cfg(feature = "compression")]
#[test]
fn listing_decodes_only_the_entry_table() {
    use crate::bundle::binary::write_bundle;
    use crate::bundle::compressed::{CompressOptions, compress};
    let mut x = 0x2545_f491_4f6c_dd1du64;
    let noise: Vec<u8> = (0..1_000_000)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect();
    let plain = write_bundle(
        &[
            (
                b"hipv4-amdgcn-amd-amdhsa--gfx90a".as_slice(),
                b"first".as_slice(),
            ),
            (b"hipv4-amdgcn-amd-amdhsa--gfx942", &noise),
        ],
        1,
    )
    .unwrap();
    let mut stored = compress(&plain, &CompressOptions::default()).unwrap();
    let n = stored.len();
    // Inside a raw block of the incompressible part: the frame stays well-formed, only
    // the contents (so the MD5) change.
    stored[n - 300_000] ^= 0xff;
    let r = inspect(&stored, "x.ccob").unwrap();
    let ids: Vec<&str> = r.entries().map(|(_, e)| e.id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "hipv4-amdgcn-amd-amdhsa--gfx90a",
            "hipv4-amdgcn-amd-amdhsa--gfx942"
        ]
    );
    let z = r.containers[0].compression.as_ref().unwrap();
    assert_eq!(
        (z.uncompressed_size, z.hash_matches),
        (plain.len() as u64, None)
    );
    let (c, e) = r.entries().next().unwrap();
    assert_eq!(&entry_bytes(&stored, c, e).unwrap()[..], b"first");
    let verified = inspect_with(&stored, "x.ccob", &Options::verify()).unwrap();
    let z = verified.containers[0].compression.as_ref().unwrap();
    assert_eq!(z.hash_matches, Some(false));
}

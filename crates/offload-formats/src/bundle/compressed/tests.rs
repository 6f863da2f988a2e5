use super::*;

fn sample() -> Vec<u8> {
    let mut v = Vec::new();
    for i in 0..50_000u32 {
        v.extend_from_slice(&(i % 977).to_le_bytes());
    }
    v
}

/// A v3 zstd CCOB around `frame` whose header claims `claimed` uncompressed bytes.
fn ccob_around(frame: &[u8], claimed: u64) -> Vec<u8> {
    let header = Header {
        version: Version::V3,
        method: Method::Zstd,
        total_size: Some(32 + frame.len() as u64),
        uncompressed_size: claimed,
        hash: 0,
    };
    let mut out = header.to_bytes().unwrap();
    out.extend_from_slice(frame);
    out
}

/// Resource budget: a frame without a content size under a header claiming 15 GiB (below
/// the 16 GiB default limit) used to allocate the 15 GiB; the allocation is now bounded
/// by what the compressed bytes can hold (128 KiB per 4 bytes).
#[test]
fn unknown_content_size_allocates_by_the_frame() {
    let data = sample();
    let mut cctx = zstd_safe::CCtx::create();
    cctx.set_parameter(zstd_safe::CParameter::ContentSizeFlag(false))
        .unwrap();
    let mut frame = vec![0u8; zstd_safe::compress_bound(data.len())];
    let n = cctx.compress2(&mut frame[..], &data).unwrap();
    frame.truncate(n);
    let c = ccob_around(&frame, 15 << 30);
    let b = CompressedBundle::parse(&c).unwrap();
    assert_eq!(b.content_size(), None);
    let limits = Limits {
        verify_hash: false,
        ..Limits::default()
    };
    let (d, ()) = b.decompress_with(&limits, |_| ()).unwrap();
    assert_eq!(d.data, data);
    assert!(d.data.capacity() as u64 <= (frame.len() as u64 / 4 + 1) * (128 << 10));
    assert!(d.data.capacity() <= (2 * data.len()).max(1 << 20));
    assert_eq!(
        d.warnings,
        [Warning::SizeTooLarge {
            claimed: 15 << 30,
            actual: data.len() as u64
        }]
    );
}

/// Issue 16, finding 6: without a content size, the output grows with the data (doubling
/// from 1 MiB) instead of taking the claimed 16 GiB, and stops at the claim.
#[test]
fn unknown_content_size_grows_with_the_data() {
    let data: Vec<u8> = (0..5u32 << 20).map(|i| (i % 251) as u8).collect();
    let mut cctx = zstd_safe::CCtx::create();
    cctx.set_parameter(zstd_safe::CParameter::ContentSizeFlag(false))
        .unwrap();
    let mut frame = vec![0u8; zstd_safe::compress_bound(data.len())];
    let n = cctx.compress2(&mut frame[..], &data).unwrap();
    frame.truncate(n);
    let limits = Limits {
        verify_hash: false,
        ..Limits::default()
    };
    let c = ccob_around(&frame, 16 << 30);
    let b = CompressedBundle::parse(&c).unwrap();
    let (d, ()) = b.decompress_with(&limits, |_| ()).unwrap();
    assert_eq!(d.data, data);
    assert!(d.data.capacity() <= 2 * data.len(), "{}", d.data.capacity());
    for claimed in [data.len() as u64 - 1, (3 << 20) + 5] {
        let c = ccob_around(&frame, claimed);
        let e = CompressedBundle::parse(&c)
            .unwrap()
            .decompress_with(&limits, |_| ())
            .unwrap_err();
        assert!(
            matches!(e, CompressedError::SizeTooSmall { exact: false, .. }),
            "{e:?}"
        );
    }
    let c = ccob_around(&frame, data.len() as u64);
    let (d, ()) = CompressedBundle::parse(&c)
        .unwrap()
        .decompress_with(&limits, |_| ())
        .unwrap();
    assert_eq!(d.data, data);
    assert!(d.warnings.is_empty());
}

/// Small bundles are decoded on the calling thread, large ones beside `consume` and the
/// hasher: both give the same bytes, hash and consumer view.
#[test]
fn inline_and_threaded_decoding_agree() {
    for len in [100usize, (1 << 20) - 1, 1 << 20, 3 << 20] {
        let data: Vec<u8> = (0..len).map(|i| (i % 253) as u8).collect();
        for method in [Method::Zstd, Method::Zlib] {
            let options = CompressOptions {
                method,
                ..CompressOptions::default()
            };
            let c = compress(&data, &options).unwrap();
            let b = CompressedBundle::parse(&c).unwrap();
            let (d, seen) = b
                .decompress_with(&Limits::default(), |p| {
                    p.wait(p.expected_len()).map(<[u8]>::to_vec)
                })
                .unwrap();
            assert_eq!(d.data, data, "{len} {method:?}");
            assert_eq!(seen.as_deref(), Some(&data[..]), "{len} {method:?}");
            assert_eq!(d.hash, Some(truncated_md5(&data)), "{len} {method:?}");
            assert!(d.warnings.is_empty());
        }
    }
}

/// Resource budget: a 20-byte frame whose own header claims 8 GiB used to get an 8 GiB
/// buffer; it is now corrupt before anything is allocated.
#[test]
fn lying_frame_content_size_is_corrupt() {
    // Magic, descriptor (8-byte content size, single segment), content size, then one
    // last RLE block of 16 bytes.
    let mut frame = vec![0x28, 0xb5, 0x2f, 0xfd, 0xe0];
    frame.extend_from_slice(&(8u64 << 30).to_le_bytes());
    frame.extend_from_slice(&[(16 << 3 | 1 << 1 | 1) as u8, 0, 0, b'x']);
    let c = ccob_around(&frame, 8 << 30);
    let b = CompressedBundle::parse(&c).unwrap();
    assert_eq!(b.content_size(), Some(8 << 30));
    let e = b.decompress().unwrap_err();
    assert!(
        e.to_string().contains(
            "the frame claims 8589934592 bytes, more than its 17 compressed bytes can hold"
        ),
        "{e}"
    );
}

#[test]
fn round_trips_every_version_and_method() {
    let data = sample();
    for method in [Method::Zstd, Method::Zlib] {
        for version in [Version::V2, Version::V3] {
            let opts = CompressOptions {
                method,
                version,
                ..Default::default()
            };
            let c = compress(&data, &opts).unwrap();
            let b = CompressedBundle::parse(&c).unwrap();
            assert_eq!(b.len(), c.len());
            assert_eq!(b.header().version, version);
            assert_eq!(b.header().method, method);
            assert_eq!(b.header().hash, truncated_md5(&data));
            let d = b.decompress().unwrap();
            assert_eq!(d.data, data);
            assert!(d.warnings.is_empty(), "{:?}", d.warnings);
        }
    }
}

#[test]
fn hash_is_low_half_of_md5() {
    // md5("") = d41d8cd98f00b204e9800998ecf8427e
    assert_eq!(truncated_md5(b""), 0x04b2008fd98c1dd4);
}

#[test]
fn bounded_by_total_size_with_padding() {
    let data = sample();
    let mut c = compress(&data, &CompressOptions::default()).unwrap();
    let len = c.len();
    c.resize(len.next_multiple_of(4096), 0);
    let b = CompressedBundle::parse(&c).unwrap();
    assert_eq!(b.len(), len);
    assert_eq!(b.decompress().unwrap().data, data);
}

#[test]
fn hostile_headers() {
    let data = sample();
    let c = compress(&data, &CompressOptions::default()).unwrap();
    // Claims 1 TiB: the frame knows better, so only its real size is allocated.
    let mut huge = c.clone();
    huge[16..24].copy_from_slice(&(1u64 << 40).to_le_bytes());
    let d = CompressedBundle::parse(&huge)
        .unwrap()
        .decompress()
        .unwrap();
    assert_eq!(d.data, data);
    assert_eq!(
        d.warnings,
        [Warning::SizeTooLarge {
            claimed: 1 << 40,
            actual: data.len() as u64
        }]
    );
    // Frame and header agree on 1 TiB: refused before anything is allocated.
    let limits = Limits {
        max_size: 1000,
        ..Limits::default()
    };
    let e = CompressedBundle::parse(&c)
        .unwrap()
        .decompress_with(&limits, |_| ())
        .unwrap_err();
    assert_eq!(
        e,
        CompressedError::TooLarge {
            size: data.len() as u64,
            limit: 1000
        }
    );
    let mut small = c.clone();
    small[16..24].copy_from_slice(&10u64.to_le_bytes());
    assert!(matches!(
        CompressedBundle::parse(&small).unwrap().decompress(),
        Err(CompressedError::SizeTooSmall { claimed: 10, .. })
    ));
    let mut version = c.clone();
    version[4] = 9;
    assert_eq!(
        CompressedBundle::parse(&version).unwrap_err(),
        CompressedError::UnknownVersion(9)
    );
    let mut method = c.clone();
    method[6] = 7;
    assert_eq!(
        CompressedBundle::parse(&method).unwrap_err(),
        CompressedError::UnknownMethod(7)
    );
    let truncated = &c[..c.len() - 5];
    assert!(matches!(
        CompressedBundle::parse(truncated),
        Err(CompressedError::Truncated { .. })
    ));
    let mut hash = c.clone();
    hash[24] ^= 1;
    let d = CompressedBundle::parse(&hash)
        .unwrap()
        .decompress()
        .unwrap();
    assert!(matches!(d.warnings[..], [Warning::HashMismatch { .. }]));
    let strict = Limits {
        strict_hash: true,
        ..Limits::default()
    };
    assert!(matches!(
        CompressedBundle::parse(&hash)
            .unwrap()
            .decompress_with(&strict, |_| ()),
        Err(CompressedError::HashMismatch { .. })
    ));
}

#[test]
fn version_2_limits_use_llvm_22_messages() {
    let h = Header {
        version: Version::V2,
        method: Method::Zstd,
        total_size: Some(100),
        uncompressed_size: 1 << 32,
        hash: 0,
    };
    let e = h.to_bytes().unwrap_err();
    assert_eq!(e.to_string(), "Uncompressed size exceeds version 2 limit");
    let h = Header {
        total_size: Some(1 << 32),
        uncompressed_size: 10,
        ..h
    };
    assert_eq!(
        h.to_bytes().unwrap_err().to_string(),
        "Total file size exceeds version 2 limit"
    );
    let v3 = Header {
        version: Version::V3,
        uncompressed_size: 1 << 40,
        ..h
    };
    let bytes = v3.to_bytes().unwrap();
    assert_eq!(Header::parse(&bytes).unwrap(), v3);
}

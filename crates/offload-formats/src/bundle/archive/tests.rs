//! The tests of device archives.

use std::borrow::Cow;

use super::unbundle::stem_and_extension;
use super::*;
use crate::bundle::bitcode::BitcodeError;
use crate::bundle::compressed::CompressedError;
use crate::bundle::fatobj;
use crate::id::EntryId;
use std::error::Error as _;

/// The wrappers keep the typed error they wrap, and show it as before.
#[test]
fn errors_keep_their_source() {
    // A compressed member whose header is cut short.
    let e = decompress_member(b"CCOB\x03\x00\x01\x00\x10").unwrap_err();
    assert!(matches!(e.0, CompressedError::TruncatedHeader { .. }));
    assert_eq!(
        e.to_string(),
        format!("Failed to decompress code object: {}", e.0)
    );
    let inner = e.source().and_then(|s| s.downcast_ref::<CompressedError>());
    assert_eq!(inner, Some(&e.0));

    let archive = write_gnu_archive(&[member(b"m.o", b"CCOB\x03\x00\x01\x00\x10")]).unwrap();
    let u = unbundle_archive(
        &archive,
        &[EntryId::parse("hip-amdgcn-amd-amdhsa--gfx90a")],
        UnbundleOptions::default(),
    )
    .unwrap_err();
    assert_eq!(
        u.message("x.a"),
        format!(
            "'x.a': member 'm.o': Failed to decompress code object: {}",
            e.0
        )
    );
    let source = u
        .source()
        .and_then(|s| s.downcast_ref::<DecompressMemberError>());
    assert_eq!(source, Some(&e));

    let c = check_archive(b"!<arch>\nshort", "x.a").unwrap_err();
    let CheckArchiveError::Archive { error, .. } = &c else {
        panic!("{c:?}");
    };
    assert_eq!(c.to_string(), format!("'x.a': {error}"));
    assert_eq!(
        c.source()
            .and_then(|s| s.downcast_ref::<DeviceArchiveError>()),
        Some(error)
    );

    let w = write_gnu_archive(&[member(b"b.bc", b"BC\xc0\xde\x35\x14\x00\x00\x05")]).unwrap_err();
    let WriteArchiveError::Symbols {
        error: SymbolsError::Bitcode(bitcode),
        ..
    } = &w
    else {
        panic!("{w:?}");
    };
    assert_eq!(
        w.source().and_then(|s| s.downcast_ref::<BitcodeError>()),
        Some(bitcode)
    );
}

/// Resource budget: 20,000 members naming themselves through one 1 MiB long-name line
/// would cost 20 GiB of name reading (object's reader finds each name's end anew): the
/// archive is refused by [`check_long_names`] before any name is read, while 20,000
/// members with long names of their own are read as usual.
#[test]
fn long_name_lookups_are_bounded() {
    let members = 20_000usize;
    let mut table = vec![b'a'; 1 << 20];
    table.extend_from_slice(b"/\n");
    let mut a = b"!<arch>\n".to_vec();
    a.extend_from_slice(format!("{:<16}{:<32}{:<10}`\n", "//", "", table.len()).as_bytes());
    a.extend_from_slice(&table);
    for i in 0..members {
        let name = format!("/{}", i % 1000);
        a.extend_from_slice(format!("{name:<16}{:<32}{:<10}`\n", "", 0).as_bytes());
    }
    let start = std::time::Instant::now();
    let e = Archive::parse(&a).unwrap_err();
    assert_eq!(e.offset, 0, "{e}");
    assert!(e.message.contains("long-name table"), "{e}");
    let elapsed = start.elapsed();
    assert!(elapsed.as_secs() < 2, "{elapsed:?}");

    let names: Vec<Vec<u8>> = (0..members)
        .map(|i| format!("a-long-member-name-{i:08}.o").into_bytes())
        .collect();
    let news: Vec<NewMember<'_>> = names
        .iter()
        .map(|n| NewMember {
            name: n.clone(),
            data: Cow::Borrowed(b"x"),
        })
        .collect();
    let bytes = write_gnu_archive(&news).unwrap();
    let start = std::time::Instant::now();
    let archive = Archive::parse(&bytes).unwrap();
    let elapsed = start.elapsed();
    let got: Vec<&[u8]> = archive.members().iter().map(|m| m.name).collect();
    assert_eq!(got, names);
    assert!(elapsed.as_secs() < 2, "{elapsed:?}");
}

/// Resource budget: the host entry of a fat-object member (the object without its bundle
/// sections) used to be made for every host section, wanted or not, and kept: a crafted
/// object with thousands of host sections cost thousands of copies of itself. It is now
/// made once per member, and only when a target asks for it.
#[test]
fn many_host_sections_are_not_copied_each() {
    let host = include_bytes!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../..",
        "/fuzz/seeds/fat_object/clang19-fat.o"
    ));
    let ids: Vec<String> = (0..3000)
        .map(|i| format!("host-x86_64-unknown-linux-gnu-{i}"))
        .collect();
    let mut entries: Vec<(&str, &[u8])> = ids
        .iter()
        .map(|id| (id.as_str(), fatobj::HOST_PLACEHOLDER))
        .collect();
    entries.push(("hip-amdgcn-amd-amdhsa--gfx906", b"device code"));
    let fat = fatobj::write_fat_object(host, &entries).unwrap();
    let archive = write_gnu_archive(&[NewMember {
        name: b"fat.o".to_vec(),
        data: Cow::Borrowed(&fat),
    }])
    .unwrap();
    let target = EntryId::parse("hip-amdgcn-amd-amdhsa--gfx906").standardized();
    let start = std::time::Instant::now();
    let out = unbundle_archive(&archive, &[target], UnbundleOptions::default()).unwrap();
    assert!(out[0].windows(11).any(|w| w == b"device code"));
    let elapsed = start.elapsed();
    assert!(elapsed.as_secs() < 3, "{elapsed:?}");
}

fn member(name: &[u8], data: &'static [u8]) -> NewMember<'static> {
    NewMember {
        name: name.to_vec(),
        data: Cow::Borrowed(data),
    }
}

#[test]
fn names_as_llvm() {
    assert_eq!(
        device_member_name(b"fatg.o", b"openmp-amdgcn-amd-amdhsa--gfx906:xnack+"),
        b"fatg-openmp-amdgcn-amd-amdhsa--gfx906_xnack+fatg.bc"
    );
    assert_eq!(
        device_member_name(b"fatf.o", b"openmp-nvptx64-nvidia-cuda--sm_70"),
        b"fatf-openmp-nvptx64-nvidia-cuda--sm_70fatf.cubin"
    );
    assert_eq!(
        device_member_name(b"h.obj", b"host-x86_64-unknown-linux-gnu-"),
        b"h-host-x86_64-unknown-linux-gnu-h.obj"
    );
    assert_eq!(stem_and_extension(b".x"), (&b""[..], &b".x"[..]));
    assert_eq!(stem_and_extension(b"noext"), (&b"noext"[..], &b""[..]));
}

#[test]
fn write_and_read_back() {
    let members = [
        member(b"short.bin", b"abc"),
        member(b"a-very-long-member-name.bin", b"defg"),
        member(b"a-very-long-member-name.bin", b"h"),
    ];
    let bytes = write_gnu_archive(&members).unwrap();
    // Raw blobs are not symbolic files: no symbol table.
    assert!(bytes.starts_with(b"!<arch>\n//      "));
    let archive = Archive::parse(&bytes).unwrap();
    let got: Vec<(&[u8], &[u8])> = archive.members().iter().map(|m| (m.name, m.data)).collect();
    assert_eq!(
        got,
        [
            (&b"short.bin"[..], &b"abc"[..]),
            (b"a-very-long-member-name.bin", b"defg"),
            (b"a-very-long-member-name.bin", b"h"),
        ]
    );
    // The long name is stored once.
    assert_eq!(
        bytes
            .windows(27)
            .filter(|w| w == b"a-very-long-member-name.bin")
            .count(),
        1
    );
    assert_eq!(write_gnu_archive(&[]).unwrap(), AR_MAGIC);
}

#[test]
fn malformed_archives() {
    let good = write_gnu_archive(&[member(b"a-long-member-name.o", b"xyz")]).unwrap();
    for cut in [10, 60, good.len() - 2] {
        let e = Archive::parse(&good[..cut]).unwrap_err();
        assert!(e.offset > 0, "{e}");
    }
    let mut bad_index = good.clone();
    let at = bad_index.windows(3).position(|w| w == b"/0 ").unwrap();
    bad_index[at + 1..at + 3].copy_from_slice(b"90");
    let e = Archive::parse(&bad_index).unwrap_err();
    assert!(e.message.contains("long-name index 90"), "{e}");
    let slash = write_gnu_archive(&[member(b"../x.o", b"1")]).unwrap();
    let e = Archive::parse(&slash).unwrap_err();
    assert!(e.message.contains("path separator"), "{e}");
    // Where object reads a plain name up to its first `/` or space, the rest of the
    // field is not dropped quietly.
    let mut short = write_gnu_archive(&[member(b"ab.o", b"1")]).unwrap();
    let at = short.windows(5).position(|w| w == b"ab.o/").unwrap();
    short[at + 1] = b'/';
    let e = Archive::parse(&short).unwrap_err();
    assert!(e.message.contains("path separator"), "{e}");
    short[at + 1] = b' ';
    short[at + 4] = b' ';
    let e = Archive::parse(&short).unwrap_err();
    assert!(e.message.contains("space"), "{e}");
    // A long-name reference without a table, at the header concerned.
    let mut no_table = good.clone();
    no_table[8..10].copy_from_slice(b"x/");
    let e = Archive::parse(&no_table).unwrap_err();
    assert!(e.message.contains("without a long-name table"), "{e}");
    assert_eq!(e.offset as usize, no_table.len() - 60 - 4, "{e}");
    assert!(Archive::parse(b"!<thin>\n").is_err());
    assert!(Archive::parse(b"garbage!").is_err());
    assert!(Archive::parse(AR_MAGIC).unwrap().members().is_empty());
}

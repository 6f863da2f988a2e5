//! The tests of fat objects.

use super::*;

#[test]
fn unreadable_objects_keep_the_object_error() {
    use std::error::Error as _;
    let mut bad = tiny_elf();
    bad.truncate(100);
    let e = FatObject::parse(&bad).unwrap_err();
    let FatObjectError::Object {
        section: None,
        error,
    } = &e
    else {
        panic!("{e:?}");
    };
    assert_eq!(e.to_string(), format!("malformed object file: {error}"));
    assert_eq!(
        e.source()
            .and_then(|s| s.downcast_ref::<object::read::Error>()),
        Some(error)
    );
}

/// A minimal relocatable ELF64 LE object: null, .text ("ABCD"), .shstrtab.
/// A 64-bit little-endian relocatable ELF file with `.text` ("ABCD") and `.shstrtab`.
fn tiny_elf() -> Vec<u8> {
    use object::elf::{FileHeader64, SectionHeader64};
    use object::pod::{bytes_of, from_bytes_mut};
    let e = object::LittleEndian;
    let mut d = vec![0u8; size_of::<FileHeader64<object::LittleEndian>>()];
    let text_at = d.len();
    d.extend_from_slice(b"ABCD");
    let names_at = d.len();
    d.extend_from_slice(b"\0.text\0.shstrtab\0");
    let names_len = d.len() - names_at;
    d.resize(d.len().next_multiple_of(8), 0);
    let shoff = d.len();
    let sh = |name: u32, ty: u32, flags: u64, off: usize, size: usize, align: u64| {
        let mut h: SectionHeader64<object::LittleEndian> =
            *object::pod::from_bytes(&[0; 64]).unwrap().0;
        h.sh_name.set(e, name);
        h.sh_type.set(e, ty);
        h.sh_flags.set(e, flags);
        h.sh_offset.set(e, off as u64);
        h.sh_size.set(e, size as u64);
        h.sh_addralign.set(e, align);
        h
    };
    let hs = [
        sh(0, 0, 0, 0, 0, 0),
        sh(1, 1, 6, text_at, 4, 4),
        sh(7, 3, 0, names_at, names_len, 1),
    ];
    for h in hs {
        d.extend_from_slice(bytes_of(&h));
    }
    let h: &mut FileHeader64<object::LittleEndian> = from_bytes_mut(&mut d).unwrap().0;
    h.e_ident.magic = object::elf::ELFMAG;
    h.e_ident.class = object::elf::ELFCLASS64;
    h.e_ident.data = object::elf::ELFDATA2LSB;
    h.e_ident.version = 1;
    h.e_type.set(e, object::elf::ET_REL);
    h.e_machine.set(e, object::elf::EM_X86_64);
    h.e_ehsize.set(e, 64);
    h.e_shentsize.set(e, 64);
    h.e_shoff.set(e, shoff as u64);
    h.e_shnum.set(e, 3);
    h.e_shstrndx.set(e, 2);
    d
}

#[test]
fn elf_round_trip() {
    let host = tiny_elf();
    let fat = write_fat_object(
        &host,
        &[
            ("host-x86_64-unknown-linux-gnu-", HOST_PLACEHOLDER),
            ("hip-amdgcn-amd-amdhsa--gfx90a:xnack+", b"device code"),
        ],
    )
    .unwrap();
    assert!(fat.starts_with(&host[..0x28]));
    let parsed = FatObject::parse(&fat).unwrap();
    assert_eq!(parsed.format(), ObjectFormat::Elf);
    let ids: Vec<_> = parsed.entries().iter().map(|e| e.id_str()).collect();
    assert_eq!(
        ids,
        [
            "host-x86_64-unknown-linux-gnu-",
            "hip-amdgcn-amd-amdhsa--gfx90a:xnack+"
        ]
    );
    assert!(parsed.entries()[0].is_host());
    assert_eq!(parsed.entries()[1].data, b"device code");
    assert_eq!(parsed.entries()[1].section, 4);

    let stripped = remove_bundle_sections(&fat).unwrap();
    let again = FatObject::parse(&stripped).unwrap();
    assert!(again.entries().is_empty());
    use object::{Object, ObjectSection};
    let f = object::File::parse(&*stripped).unwrap();
    let text = f.section_by_name(".text").unwrap();
    assert_eq!(text.data().unwrap(), b"ABCD");
}

#[test]
fn unreadable_sections_are_listed_with_their_error() {
    let fat = write_fat_object(
        &tiny_elf(),
        &[
            ("hip-amdgcn-amd-amdhsa--gfx906", b"broken"),
            ("hip-amdgcn-amd-amdhsa--gfx1100", b"intact"),
        ],
    )
    .unwrap();
    let mut bad = fat.clone();
    let e = object::LittleEndian;
    let header: &object::elf::FileHeader64<object::LittleEndian> =
        object::pod::from_bytes(&bad).unwrap().0;
    // Section 3 (after null, .text, .shstrtab): sh_offset past the end.
    let at = header.e_shoff.get(e) as usize + 3 * 64;
    let section: &mut object::elf::SectionHeader64<object::LittleEndian> =
        object::pod::from_bytes_mut(&mut bad[at..]).unwrap().0;
    section.sh_offset.set(e, 0x10_0000);
    let e = FatObject::parse(&bad).unwrap_err();
    assert!(matches!(
        e,
        FatObjectError::UnreadableSection { section: 3, .. }
    ));
    assert_eq!(
        e.to_string(),
        format!(
            "section 3 '__CLANG_OFFLOAD_BUNDLE__hip-amdgcn-amd-amdhsa--gfx906': the end of the file was unexpectedly encountered: contents at offset 1048576 (0x100000), 6 bytes, but the file has {} bytes",
            bad.len()
        )
    );
    let (format, sections) = FatObject::parse_sections(&bad).unwrap();
    assert_eq!(format, ObjectFormat::Elf);
    assert_eq!(sections.len(), 2);
    assert_eq!(sections[0].id, b"hip-amdgcn-amd-amdhsa--gfx906");
    assert!(sections[0].contents.is_err());
    assert_eq!(sections[1].contents.as_ref().unwrap().data, b"intact");
    assert!(remove_bundle_sections(&bad).is_err());
}

#[test]
fn unsupported_and_malformed() {
    assert!(matches!(
        write_fat_object(b"\xcf\xfa\xed\xfe\x07\0\0\x01", &[]),
        Err(FatObjectError::Unsupported(_))
    ));
    assert!(matches!(
        write_fat_object(b"not an object", &[]),
        Err(FatObjectError::Unsupported(_))
    ));
    let mut bad = tiny_elf();
    bad.truncate(100);
    assert!(write_fat_object(&bad, &[("x", b"y")]).is_err());
}

#[test]
fn objcopy_commands() {
    let cmd = objcopy_add_command(
        "/usr/bin/llvm-objcopy",
        &[
            "host-x86_64-unknown-linux-gnu-",
            "hip-amdgcn-amd-amdhsa--gfx906",
        ],
        &["h.o", "d.bc"],
        0,
        "/tmp/t.tmp",
        "h.o",
        "out.o",
    );
    assert_eq!(
        cmd,
        "\"/usr/bin/llvm-objcopy\" \"--add-section=__CLANG_OFFLOAD_BUNDLE__host-x86_64-unknown-linux-gnu-=/tmp/t.tmp\" \"--set-section-flags=__CLANG_OFFLOAD_BUNDLE__host-x86_64-unknown-linux-gnu-=readonly,exclude\" \"--add-section=__CLANG_OFFLOAD_BUNDLE__hip-amdgcn-amd-amdhsa--gfx906=d.bc\" \"--set-section-flags=__CLANG_OFFLOAD_BUNDLE__hip-amdgcn-amd-amdhsa--gfx906=readonly,exclude\" \"--\" \"h.o\" \"out.o\"\n"
    );
    assert_eq!(
        objcopy_remove_command("llvm-objcopy", "a.o", "/tmp/x"),
        "\"llvm-objcopy\" \"--regex\" \"--remove-section=__CLANG_OFFLOAD_BUNDLE__.*\" \"--\" \"a.o\" \"/tmp/x\"\n"
    );
}

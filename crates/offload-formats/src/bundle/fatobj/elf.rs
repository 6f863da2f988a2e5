//! The ELF section appender and remover.

use object::elf::{
    FileHeader32, FileHeader64, SHN_XINDEX, SHT_DYNSYM, SHT_PROGBITS, SHT_SYMTAB, SectionHeader32,
    SectionHeader64, Sym32, Sym64,
};
use object::pod;

use super::error::{FatObjectError, malformed};
use super::section::section_name;

const SHF_EXCLUDE: u64 = object::elf::SHF_EXCLUDE as u64;
const SHN_LORESERVE: u64 = object::elf::SHN_LORESERVE as u64;

type E = object::Endianness;

/// The class and byte order of an ELF file: which of object's header types its bytes are.
struct Layout {
    is64: bool,
    e: E,
}

fn too_large(v: u64) -> Result<u32, FatObjectError> {
    u32::try_from(v).map_err(|_| FatObjectError::TooLarge)
}

impl Layout {
    fn shentsize(&self) -> usize {
        if self.is64 {
            size_of::<SectionHeader64<E>>()
        } else {
            size_of::<SectionHeader32<E>>()
        }
    }
    fn header64<'d>(&self, data: &'d [u8]) -> &'d FileHeader64<E> {
        pod::from_bytes(data)
            .expect("the ELF header's length was checked")
            .0
    }
    fn header32<'d>(&self, data: &'d [u8]) -> &'d FileHeader32<E> {
        pod::from_bytes(data)
            .expect("the ELF header's length was checked")
            .0
    }
    /// `e_shoff`, `e_shentsize`, `e_shnum` and `e_shstrndx` of a whole ELF header.
    fn file_fields(&self, data: &[u8]) -> (u64, u16, u16, u16) {
        let e = self.e;
        if self.is64 {
            let h = self.header64(data);
            let (shoff, shentsize) = (h.e_shoff.get(e), h.e_shentsize.get(e));
            (shoff, shentsize, h.e_shnum.get(e), h.e_shstrndx.get(e))
        } else {
            let h = self.header32(data);
            let (shoff, shentsize) = (h.e_shoff.get(e).into(), h.e_shentsize.get(e));
            (shoff, shentsize, h.e_shnum.get(e), h.e_shstrndx.get(e))
        }
    }
    /// Sets `e_shoff` and `e_shnum` in a whole ELF header.
    fn set_table(
        &self,
        data: &mut [u8],
        shoff: Option<u64>,
        shnum: u16,
    ) -> Result<(), FatObjectError> {
        let e = self.e;
        let whole = "the ELF header's length was checked";
        if self.is64 {
            let h: &mut FileHeader64<E> = pod::from_bytes_mut(data).expect(whole).0;
            if let Some(shoff) = shoff {
                h.e_shoff.set(e, shoff);
            }
            h.e_shnum.set(e, shnum);
        } else {
            let h: &mut FileHeader32<E> = pod::from_bytes_mut(data).expect(whole).0;
            if let Some(shoff) = shoff {
                h.e_shoff.set(e, too_large(shoff)?);
            }
            h.e_shnum.set(e, shnum);
        }
        Ok(())
    }
    /// A field of the section header `header` (exactly [`Layout::shentsize`] bytes).
    fn sh(&self, header: &[u8], f: Field) -> u64 {
        let e = self.e;
        if self.is64 {
            let h: &SectionHeader64<E> = pod::from_bytes(header).expect("a section header").0;
            match f {
                Field::Name => h.sh_name.get(e).into(),
                Field::Type => h.sh_type.get(e).into(),
                Field::Flags => h.sh_flags.get(e),
                Field::Offset => h.sh_offset.get(e),
                Field::Size => h.sh_size.get(e),
                Field::Link => h.sh_link.get(e).into(),
                Field::Align => h.sh_addralign.get(e),
            }
        } else {
            let h: &SectionHeader32<E> = pod::from_bytes(header).expect("a section header").0;
            u64::from(match f {
                Field::Name => h.sh_name.get(e),
                Field::Type => h.sh_type.get(e),
                Field::Flags => h.sh_flags.get(e),
                Field::Offset => h.sh_offset.get(e),
                Field::Size => h.sh_size.get(e),
                Field::Link => h.sh_link.get(e),
                Field::Align => h.sh_addralign.get(e),
            })
        }
    }
    /// Sets a field of the section header `header`; a value its field cannot hold is
    /// [`FatObjectError::TooLarge`].
    fn set_sh(&self, header: &mut [u8], f: Field, v: u64) -> Result<(), FatObjectError> {
        let e = self.e;
        if self.is64 {
            let h: &mut SectionHeader64<E> =
                pod::from_bytes_mut(header).expect("a section header").0;
            match f {
                Field::Name => h.sh_name.set(e, too_large(v)?),
                Field::Type => h.sh_type.set(e, too_large(v)?),
                Field::Flags => h.sh_flags.set(e, v),
                Field::Offset => h.sh_offset.set(e, v),
                Field::Size => h.sh_size.set(e, v),
                Field::Link => h.sh_link.set(e, too_large(v)?),
                Field::Align => h.sh_addralign.set(e, v),
            }
        } else {
            let h: &mut SectionHeader32<E> =
                pod::from_bytes_mut(header).expect("a section header").0;
            let v = too_large(v)?;
            match f {
                Field::Name => h.sh_name.set(e, v),
                Field::Type => h.sh_type.set(e, v),
                Field::Flags => h.sh_flags.set(e, v),
                Field::Offset => h.sh_offset.set(e, v),
                Field::Size => h.sh_size.set(e, v),
                Field::Link => h.sh_link.set(e, v),
                Field::Align => h.sh_addralign.set(e, v),
            }
        }
        Ok(())
    }
    /// `st_shndx` of each symbol of a symbol table's contents.
    fn symbol_sections<'d>(&self, syms: &'d [u8]) -> Box<dyn Iterator<Item = u16> + 'd> {
        let e = self.e;
        if self.is64 {
            let (all, _) =
                pod::slice_from_bytes::<Sym64<E>>(syms, syms.len() / 24).expect("whole symbols");
            Box::new(all.iter().map(move |s| s.st_shndx.get(e)))
        } else {
            let (all, _) =
                pod::slice_from_bytes::<Sym32<E>>(syms, syms.len() / 16).expect("whole symbols");
            Box::new(all.iter().map(move |s| s.st_shndx.get(e)))
        }
    }
}

#[derive(Clone, Copy)]
enum Field {
    Name,
    Type,
    Flags,
    Offset,
    Size,
    Link,
    Align,
}

/// The parsed ELF header facts the appender needs.
struct Elf<'a> {
    data: &'a [u8],
    l: Layout,
    shoff: usize,
    shnum: usize,
    shstrndx: usize,
    extended_shnum: bool,
}

impl<'a> Elf<'a> {
    fn parse(data: &'a [u8]) -> Result<Self, FatObjectError> {
        if data.len() < 0x34 || !crate::kind::FileKind::sniff(data).is_elf() {
            return Err(malformed("truncated ELF header"));
        }
        let id = crate::kind::elf_ident(data).ok_or_else(|| malformed("truncated ELF header"))?;
        let is64 = match id.class {
            object::elf::ELFCLASS32 => false,
            object::elf::ELFCLASS64 => true,
            c => return Err(malformed(format!("unknown ELF class {c}"))),
        };
        let e = match id.data {
            object::elf::ELFDATA2LSB => E::Little,
            object::elf::ELFDATA2MSB => E::Big,
            c => return Err(malformed(format!("unknown ELF data encoding {c}"))),
        };
        let l = Layout { is64, e };
        let header_size = if is64 {
            size_of::<FileHeader64<E>>()
        } else {
            size_of::<FileHeader32<E>>()
        };
        if data.len() < header_size {
            return Err(malformed("truncated ELF header"));
        }
        let (shoff, entsize, shnum, shstrndx) = l.file_fields(data);
        if shoff == 0 {
            return Err(malformed("the object has no section header table"));
        }
        let shoff = usize::try_from(shoff).map_err(|_| malformed("section header table offset"))?;
        let entsize = entsize as usize;
        if entsize != l.shentsize() {
            return Err(malformed(format!(
                "section header size {entsize}, expected {}",
                l.shentsize()
            )));
        }
        let first = data
            .get(shoff..shoff.saturating_add(entsize))
            .ok_or_else(|| malformed("section header table past the end of the file"))?;
        let mut shnum = u64::from(shnum);
        let extended_shnum = shnum == 0;
        if extended_shnum {
            shnum = l.sh(first, Field::Size);
        }
        let mut shstrndx = u64::from(shstrndx);
        if shstrndx == u64::from(SHN_XINDEX) {
            shstrndx = l.sh(first, Field::Link);
        }
        let shnum = usize::try_from(shnum).map_err(|_| malformed("section count"))?;
        let end = shnum
            .checked_mul(entsize)
            .and_then(|n| n.checked_add(shoff))
            .ok_or_else(|| malformed("section header table size"))?;
        if end > data.len() {
            return Err(malformed("section header table past the end of the file"));
        }
        let shstrndx = shstrndx as usize;
        if shstrndx == 0 || shstrndx >= shnum {
            return Err(malformed("no section name string table"));
        }
        Ok(Elf {
            data,
            l,
            shoff,
            shnum,
            shstrndx,
            extended_shnum,
        })
    }

    fn header(&self, i: usize) -> &'a [u8] {
        let n = self.l.shentsize();
        &self.data[self.shoff + i * n..self.shoff + (i + 1) * n]
    }
}

pub(super) fn add_sections(
    host: &[u8],
    entries: &[(&str, &[u8])],
) -> Result<Vec<u8>, FatObjectError> {
    let elf = Elf::parse(host)?;
    let l = &elf.l;
    let strtab_header = elf.header(elf.shstrndx);
    let (str_off, str_size) = (
        l.sh(strtab_header, Field::Offset),
        l.sh(strtab_header, Field::Size),
    );
    let old_names = usize::try_from(str_off)
        .ok()
        .zip(usize::try_from(str_size).ok())
        .and_then(|(o, s)| host.get(o..o.checked_add(s)?))
        .ok_or_else(|| malformed("section name string table past the end of the file"))?;

    let payload_len: usize = entries.iter().map(|(_, p)| p.len()).sum();
    let mut out = Vec::with_capacity(host.len() + payload_len + 4096);
    out.extend_from_slice(host);
    let mut placed = Vec::with_capacity(entries.len());
    for (_, payload) in entries {
        placed.push(out.len() as u64);
        out.extend_from_slice(payload);
    }
    // The new section name table: the old one, then the new names.
    let strtab_at = out.len() as u64;
    out.extend_from_slice(old_names);
    if old_names.last().is_some_and(|&b| b != 0) {
        out.push(0);
    }
    let mut name_offsets = Vec::with_capacity(entries.len());
    for (id, _) in entries {
        name_offsets.push(out.len() as u64 - strtab_at);
        out.extend_from_slice(&crate::id::spell::bytes(&section_name(id)));
        out.push(0);
    }
    let strtab_len = out.len() as u64 - strtab_at;
    let align = if l.is64 { 8 } else { 4 };
    while out.len() % align != 0 {
        out.push(0);
    }
    let shoff = out.len() as u64;
    let total = elf.shnum + entries.len();
    for i in 0..elf.shnum {
        let mut h = elf.header(i).to_vec();
        if i == elf.shstrndx {
            l.set_sh(&mut h, Field::Offset, strtab_at)?;
            l.set_sh(&mut h, Field::Size, strtab_len)?;
        }
        if i == 0 && (elf.extended_shnum || total as u64 >= SHN_LORESERVE) {
            l.set_sh(&mut h, Field::Size, total as u64)?;
        }
        out.extend_from_slice(&h);
    }
    for (i, (_, payload)) in entries.iter().enumerate() {
        let mut h = vec![0u8; l.shentsize()];
        l.set_sh(&mut h, Field::Name, name_offsets[i])?;
        l.set_sh(&mut h, Field::Type, u64::from(SHT_PROGBITS))?;
        l.set_sh(&mut h, Field::Flags, SHF_EXCLUDE)?;
        l.set_sh(&mut h, Field::Offset, placed[i])?;
        l.set_sh(&mut h, Field::Size, payload.len() as u64)?;
        l.set_sh(&mut h, Field::Align, 1)?;
        out.extend_from_slice(&h);
    }
    // The ELF header: new table offset and count.
    let shnum_field = if total as u64 >= SHN_LORESERVE {
        0
    } else {
        total as u16
    };
    l.set_table(&mut out, Some(shoff), shnum_field)?;
    Ok(out)
}

/// Drops sections `first..first + count` (which must be the last ones) from the table.
pub(super) fn truncate_sections(
    data: &[u8],
    first: usize,
    count: usize,
) -> Result<Vec<u8>, FatObjectError> {
    let elf = Elf::parse(data)?;
    let l = &elf.l;
    if first + count != elf.shnum {
        return Err(FatObjectError::NotRemovable(
            "they are not the last sections of the section table".into(),
        ));
    }
    if elf.shstrndx >= first {
        return Err(FatObjectError::NotRemovable(
            "the section name string table comes after them".into(),
        ));
    }
    // Nothing kept may refer to a removed section.
    for i in 1..first {
        let h = elf.header(i);
        let link = l.sh(h, Field::Link) as usize;
        let ty = l.sh(h, Field::Type) as u32;
        if link >= first {
            return Err(FatObjectError::NotRemovable(format!(
                "section {i} links to section {link}"
            )));
        }
        // Symbols defined in a removed section.
        if ty == SHT_SYMTAB || ty == SHT_DYNSYM {
            check_symbols(&elf, h, first)?;
        }
    }
    let mut out = data.to_vec();
    let total = first;
    if elf.extended_shnum || total as u64 >= SHN_LORESERVE {
        let v = if total as u64 >= SHN_LORESERVE {
            total as u64
        } else {
            0
        };
        let first = &mut out[elf.shoff..elf.shoff + l.shentsize()];
        l.set_sh(first, Field::Size, v)?;
    }
    let shnum_field = if total as u64 >= SHN_LORESERVE {
        0
    } else {
        total as u16
    };
    l.set_table(&mut out, None, shnum_field)?;
    Ok(out)
}

fn check_symbols(elf: &Elf<'_>, h: &[u8], first: usize) -> Result<(), FatObjectError> {
    let l = &elf.l;
    let (off, size) = (l.sh(h, Field::Offset), l.sh(h, Field::Size));
    let syms = usize::try_from(off)
        .ok()
        .zip(usize::try_from(size).ok())
        .and_then(|(o, s)| elf.data.get(o..o.checked_add(s)?))
        .ok_or_else(|| malformed("symbol table past the end of the file"))?;
    for (n, shndx) in l.symbol_sections(syms).enumerate() {
        let shndx = shndx as usize;
        if shndx >= first && shndx < SHN_LORESERVE as usize {
            return Err(FatObjectError::NotRemovable(format!(
                "symbol {n} is defined in section {shndx}"
            )));
        }
    }
    Ok(())
}

//! The COFF section appender and remover (relocatable objects).

use object::LittleEndian as LE;
use object::endian::U32;
use object::pe::{ImageFileHeader, ImageSectionHeader, ImageSymbol};
use object::pod::{self, bytes_of};

use super::error::{FatObjectError, malformed};
use super::section::section_name;

const HEADER: usize = size_of::<ImageFileHeader>();
const SECTION: usize = size_of::<ImageSectionHeader>();
const SYMBOL: usize = size_of::<ImageSymbol>();
/// `IMAGE_SCN_LNK_REMOVE | IMAGE_SCN_MEM_READ`, what llvm-objcopy writes for
/// `readonly,exclude`.
const CHARACTERISTICS: u32 = object::pe::IMAGE_SCN_LNK_REMOVE | object::pe::IMAGE_SCN_MEM_READ;

fn u32_of(v: usize) -> Result<u32, FatObjectError> {
    u32::try_from(v).map_err(|_| FatObjectError::TooLarge)
}

struct Coff<'a> {
    data: &'a [u8],
    header: &'a ImageFileHeader,
    sections: &'a [ImageSectionHeader],
    symtab: usize,
    nsymbols: usize,
}

impl<'a> Coff<'a> {
    fn parse(data: &'a [u8]) -> Result<Self, FatObjectError> {
        let Ok((header, rest)) = pod::from_bytes::<ImageFileHeader>(data) else {
            return Err(malformed("truncated COFF header"));
        };
        let nsections = header.number_of_sections.get(LE) as usize;
        if header.machine.get(LE) == 0 && nsections == 0xffff {
            return Err(FatObjectError::Unsupported(
                "fat objects are not supported for COFF bigobj or import files".into(),
            ));
        }
        if header.size_of_optional_header.get(LE) != 0 {
            return Err(FatObjectError::Unsupported(
                "fat objects need a COFF object file, not an image with an optional header".into(),
            ));
        }
        let symtab = header.pointer_to_symbol_table.get(LE) as usize;
        let nsymbols = header.number_of_symbols.get(LE) as usize;
        let (sections, _) = pod::slice_from_bytes(rest, nsections)
            .map_err(|()| malformed("section table past the end of the file"))?;
        if symtab != 0 && symtab.saturating_add(nsymbols.saturating_mul(SYMBOL)) > data.len() {
            return Err(malformed("symbol table past the end of the file"));
        }
        Ok(Coff {
            data,
            header,
            sections,
            symtab,
            nsymbols,
        })
    }

    /// The symbol table bytes and the string table (with its size field).
    fn tables(&self) -> Result<(&'a [u8], &'a [u8]), FatObjectError> {
        if self.symtab == 0 {
            return Ok((&[], &[]));
        }
        let syms = &self.data[self.symtab..self.symtab + self.nsymbols * SYMBOL];
        let str_at = self.symtab + self.nsymbols * SYMBOL;
        let strings = match crate::raw::u32_at(self.data, str_at) {
            None => &[][..],
            Some(n) => self
                .data
                .get(str_at..str_at + (n as usize).max(4))
                .ok_or_else(|| malformed("string table past the end of the file"))?,
        };
        Ok((syms, strings))
    }
}

pub(super) fn add_sections(
    host: &[u8],
    entries: &[(&str, &[u8])],
) -> Result<Vec<u8>, FatObjectError> {
    let coff = Coff::parse(host)?;
    let total = coff.sections.len() + entries.len();
    if total > 65279 {
        return Err(FatObjectError::TooLarge);
    }
    let shift = entries.len() * SECTION;
    let table_end = HEADER + coff.sections.len() * SECTION;
    let (syms, strings) = coff.tables()?;

    let mut out = Vec::with_capacity(host.len() + shift + 4096);
    let mut header = *coff.header;
    header.number_of_sections.set(LE, total as u16);
    out.extend_from_slice(bytes_of(&header));
    let va_end = moved_sections(&mut out, coff.sections, table_end, shift)?;
    let new_headers_at = out.len();
    out.resize(out.len() + shift, 0);
    out.extend_from_slice(&host[table_end..]);

    // Symbol table copy and the string table with the new long names.
    let symtab_at = out.len();
    out.extend_from_slice(syms);
    let strings_at = out.len();
    if strings.len() >= 4 {
        out.extend_from_slice(strings);
    } else {
        out.extend_from_slice(&[4, 0, 0, 0]);
    }
    let mut name_offsets = Vec::with_capacity(entries.len());
    for (id, _) in entries {
        name_offsets.push(out.len() - strings_at);
        out.extend_from_slice(&crate::id::spell::bytes(&section_name(id)));
        out.push(0);
    }
    let strings_len = u32_of(out.len() - strings_at)?;
    let size_field: &mut U32<LE> = pod::from_bytes_mut(&mut out[strings_at..]).unwrap().0;
    size_field.set(LE, strings_len);
    let file_header: &mut ImageFileHeader = pod::from_bytes_mut(&mut out).unwrap().0;
    file_header
        .pointer_to_symbol_table
        .set(LE, u32_of(symtab_at)?);

    let mut va = va_end;
    for (i, (_, payload)) in entries.iter().enumerate() {
        let data_at = out.len();
        out.extend_from_slice(payload);
        let h = new_section(name_offsets[i], payload.len(), va, data_at)?;
        va += u64::from(h.size_of_raw_data.get(LE));
        let at = new_headers_at + i * SECTION;
        out[at..at + SECTION].copy_from_slice(bytes_of(&h));
    }
    Ok(out)
}

/// Appends `sections` to `out` with their file pointers moved by `shift` (the new section
/// headers inserted at `table_end`); returns where their virtual addresses end.
fn moved_sections(
    out: &mut Vec<u8>,
    sections: &[ImageSectionHeader],
    table_end: usize,
    shift: usize,
) -> Result<u64, FatObjectError> {
    let moved = |p: &mut U32<LE>| -> Result<(), FatObjectError> {
        let at = p.get(LE) as usize;
        if at == 0 {
            return Ok(());
        }
        if at < table_end {
            return Err(malformed("a file pointer points into the section table"));
        }
        p.set(LE, u32_of(at + shift)?);
        Ok(())
    };
    let mut va_end = 0u64;
    for section in sections {
        let mut h = *section;
        moved(&mut h.pointer_to_raw_data)?;
        moved(&mut h.pointer_to_relocations)?;
        moved(&mut h.pointer_to_linenumbers)?;
        let end = u64::from(h.virtual_address.get(LE)) + u64::from(h.virtual_size.get(LE));
        va_end = va_end.max(end);
        out.extend_from_slice(bytes_of(&h));
    }
    Ok(va_end)
}

/// The header of a new section of `size` bytes at `data_at`, named by the string table
/// offset `name_offset`, at virtual address `va`.
fn new_section(
    name_offset: usize,
    size: usize,
    va: u64,
    data_at: usize,
) -> Result<ImageSectionHeader, FatObjectError> {
    let name = format!("/{name_offset}");
    if name.len() > 8 {
        return Err(FatObjectError::TooLarge);
    }
    let mut h = *pod::from_bytes::<ImageSectionHeader>(&[0; SECTION])
        .unwrap()
        .0;
    h.name[..name.len()].copy_from_slice(name.as_bytes());
    let size32 = u32_of(size)?;
    h.virtual_size.set(LE, size32);
    h.virtual_address
        .set(LE, u32::try_from(va).map_err(|_| FatObjectError::TooLarge)?);
    h.size_of_raw_data.set(LE, size32);
    let ptr = u32_of(data_at)?;
    h.pointer_to_raw_data
        .set(LE, if size == 0 { 0 } else { ptr });
    h.characteristics.set(LE, CHARACTERISTICS);
    Ok(h)
}

pub(super) fn truncate_sections(
    data: &[u8],
    first: usize,
    count: usize,
) -> Result<Vec<u8>, FatObjectError> {
    let coff = Coff::parse(data)?;
    if first + count != coff.sections.len() {
        return Err(FatObjectError::NotRemovable(
            "they are not the last sections of the section table".into(),
        ));
    }
    let (syms, _) = coff.tables()?;
    let mut i = 0;
    while let Some(sym) = crate::raw::read_at::<ImageSymbol>(syms, i * SYMBOL) {
        let number = sym.section_number.get(LE) as i16;
        if number > 0 && number as usize > first {
            return Err(FatObjectError::NotRemovable(format!(
                "symbol {i} is defined in section {number}"
            )));
        }
        i += 1 + sym.number_of_aux_symbols as usize;
    }
    let mut out = data.to_vec();
    let header: &mut ImageFileHeader = pod::from_bytes_mut(&mut out).unwrap().0;
    header.number_of_sections.set(LE, first as u16);
    Ok(out)
}

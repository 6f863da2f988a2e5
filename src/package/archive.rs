//! The static archive clang-offload-packager writes for `--archive`: LLVM's
//! `writeArchive` in GNU format, deterministic (times, owners 0; mode 644), with a
//! symbol table when a member defines global symbols.
//!
//! - Member names under 16 bytes without `/` are stored inline as `name/`; others
//!   go to the `//` name table (`name/\n`, each distinct name once) and are
//!   referenced as `/offset`. Members are padded to even sizes with `\n`.
//! - The symbol table (`/`) lists, per member in order, the names of its defined
//!   global symbols that are not format-specific: for ELF members those of
//!   `.symtab` (binding not local, section not undefined, type not FILE or
//!   SECTION); for bitcode members those of the module's symbol table (the
//!   `SYMTAB_BLOCK` clang writes, i.e. LLVM's `irsymtab`). Other members have none.
//!   No symbols, no table.
//!
//! Archives whose members would lie beyond 4 GiB (LLVM switches to `/SYM64/`) and
//! COFF, Mach-O, wasm or XCOFF members with symbols are refused.

use std::fmt;

use object::read::elf::{FileHeader, SectionHeader, Sym};
use object::{Endianness, elf};

/// Why an archive cannot be written.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ArchiveError {
    /// A member's symbols cannot be listed (the message says why).
    Symbols {
        /// The member's name.
        member: String,
        /// What went wrong.
        message: String,
    },
    /// The archive would be larger than the 32-bit symbol table can address.
    TooLarge,
}

impl fmt::Display for ArchiveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ArchiveError::Symbols { member, message } => {
                write!(
                    f,
                    "cannot list the symbols of archive member '{member}': {message}"
                )
            }
            ArchiveError::TooLarge => {
                f.write_str("archives over 4 GiB (64-bit symbol table) are not supported")
            }
        }
    }
}

impl std::error::Error for ArchiveError {}

fn pad(out: &mut Vec<u8>, s: &str, width: usize) {
    out.extend_from_slice(s.as_bytes());
    out.resize(out.len() + width.saturating_sub(s.len()), b' ');
}

fn rest_of_header(out: &mut Vec<u8>, perms: &str, size: u64) {
    pad(out, "0", 12);
    pad(out, "0", 6);
    pad(out, "0", 6);
    pad(out, perms, 8);
    pad(out, &size.to_string(), 10);
    out.extend_from_slice(b"`\n");
}

/// Writes the archive of `members` (`(name, data)`, in order).
pub fn write_archive(members: &[(&str, &[u8])]) -> Result<Vec<u8>, ArchiveError> {
    // Member headers and the long-name table.
    let mut names = Vec::new();
    let mut name_pos: Vec<(&str, usize)> = Vec::new();
    let mut headers = Vec::with_capacity(members.len());
    let mut symbols = Vec::with_capacity(members.len());
    let mut has_object = false;
    for (name, data) in members {
        let mut h = Vec::with_capacity(60);
        if name.len() < 16 && !name.contains('/') {
            pad(&mut h, &format!("{name}/"), 16);
        } else {
            let pos = match name_pos.iter().find(|(n, _)| n == name) {
                Some(&(_, p)) => p,
                None => {
                    let p = names.len();
                    names.extend_from_slice(name.as_bytes());
                    names.extend_from_slice(b"/\n");
                    name_pos.push((name, p));
                    p
                }
            };
            pad(&mut h, &format!("/{pos}"), 16);
        }
        rest_of_header(&mut h, "644", data.len() as u64);
        headers.push(h);
        let syms = member_symbols(data).map_err(|message| ArchiveError::Symbols {
            member: (*name).to_owned(),
            message,
        })?;
        has_object |= syms.is_some();
        symbols.push(syms.unwrap_or_default());
    }
    let mut name_table = Vec::new();
    if !names.is_empty() {
        let padded = names.len() + names.len() % 2;
        pad(&mut name_table, "//", 48);
        pad(&mut name_table, &padded.to_string(), 10);
        name_table.extend_from_slice(b"`\n");
        name_table.extend_from_slice(&names);
        if names.len() % 2 == 1 {
            name_table.push(b'\n');
        }
    }
    let num_syms: usize = symbols.iter().map(Vec::len).sum();
    let mut sym_names: usize = symbols.iter().flatten().map(|s| s.len() + 1).sum();
    // An object without symbols still gets a table: LLVM writes three NULs as its
    // names ("to satisfy Solaris tools").
    let empty_names = has_object && sym_names == 0;
    if empty_names {
        sym_names = 3;
    }
    let mut symtab = Vec::new();
    if has_object {
        let raw = 4 + 4 * num_syms + sym_names;
        let size = raw + raw % 2;
        let mut pos = 8 + 60 + size as u64 + name_table.len() as u64;
        let mut offsets = Vec::with_capacity(num_syms);
        for ((h, (_, data)), syms) in headers.iter().zip(members).zip(&symbols) {
            let offset = u32::try_from(pos).map_err(|_| ArchiveError::TooLarge)?;
            offsets.extend(std::iter::repeat_n(offset, syms.len()));
            pos += h.len() as u64 + data.len() as u64 + data.len() as u64 % 2;
        }
        pad(&mut symtab, "/", 16);
        rest_of_header(&mut symtab, "0", size as u64);
        symtab.extend_from_slice(&(num_syms as u32).to_be_bytes());
        for o in offsets {
            symtab.extend_from_slice(&o.to_be_bytes());
        }
        for s in symbols.iter().flatten() {
            symtab.extend_from_slice(s);
            symtab.push(0);
        }
        if empty_names {
            symtab.extend_from_slice(&[0; 3]);
        }
        if raw % 2 == 1 {
            symtab.push(0);
        }
    }
    let mut out = b"!<arch>\n".to_vec();
    out.extend_from_slice(&symtab);
    out.extend_from_slice(&name_table);
    for (h, (_, data)) in headers.iter().zip(members) {
        out.extend_from_slice(h);
        out.extend_from_slice(data);
        if data.len() % 2 == 1 {
            out.push(b'\n');
        }
    }
    Ok(out)
}

/// The archive symbols a member defines, in LLVM's order; `None` when the member
/// is not a symbolic file (LLVM writes a symbol table, possibly empty, as soon as
/// one member is an object or bitcode file).
pub fn member_symbols(data: &[u8]) -> Result<Option<Vec<Vec<u8>>>, String> {
    if data.starts_with(b"\x7fELF") && data.len() >= 18 {
        let r = if data[4] == 2 {
            elf_symbols::<elf::FileHeader64<Endianness>>(data)
        } else {
            elf_symbols::<elf::FileHeader32<Endianness>>(data)
        };
        return r.map(Some).map_err(|e| e.to_string());
    }
    if data.starts_with(b"BC\xc0\xde") || data.starts_with(b"\xde\xc0\x17\x0b") {
        // Bitcode LLVM cannot read is archived without symbols (LLVM's "best-effort
        // forwards compatibility"); our reader's structural errors are treated alike.
        return match bitcode::symbols(data) {
            Ok(s) => Ok(Some(s)),
            Err(e) if e.starts_with("bitcode without a symbol table") => Err(e),
            Err(_) => Ok(Some(Vec::new())),
        };
    }
    const MACHO: [[u8; 4]; 4] = [
        [0xfe, 0xed, 0xfa, 0xce],
        [0xfe, 0xed, 0xfa, 0xcf],
        [0xce, 0xfa, 0xed, 0xfe],
        [0xcf, 0xfa, 0xed, 0xfe],
    ];
    let other_object = super::scan::Container::identify(data) == super::scan::Container::Coff
        || data.starts_with(b"\0asm")
        || (data.len() >= 4 && MACHO.iter().any(|m| data[..4] == *m));
    if other_object {
        return Err("only ELF and bitcode members are supported in archives".into());
    }
    Ok(None)
}

fn elf_symbols<H: FileHeader<Endian = Endianness>>(data: &[u8]) -> object::Result<Vec<Vec<u8>>> {
    let header = H::parse(data)?;
    let endian = header.endian()?;
    let sections = header.sections(endian, data)?;
    let Some((index, symtab_section)) = sections
        .enumerate()
        .find(|(_, s)| s.sh_type(endian) == elf::SHT_SYMTAB)
    else {
        return Ok(Vec::new());
    };
    let table =
        object::read::elf::SymbolTable::parse(endian, data, &sections, index, symtab_section)?;
    let mut out = Vec::new();
    for (i, sym) in table.enumerate() {
        if i.0 == 0 {
            continue;
        }
        let global = sym.st_bind() != elf::STB_LOCAL;
        let specific = matches!(sym.st_type(), elf::STT_FILE | elf::STT_SECTION);
        let undefined = sym.st_shndx(endian) == elf::SHN_UNDEF;
        if global && !specific && !undefined {
            out.push(table.symbol_name(endian, sym)?.to_vec());
        }
    }
    Ok(out)
}

/// Just enough of LLVM's bitstream format to find the `SYMTAB_BLOCK` and
/// `STRTAB_BLOCK` blobs at the top level of a bitcode file, and of `irsymtab` to
/// list its symbols.
mod bitcode {
    const MODULE_BLOCK: u64 = 8;
    const SYMTAB_BLOCK: u64 = 25;
    const STRTAB_BLOCK: u64 = 23;
    const FB_UNDEFINED: u32 = 1 << 3;
    const FB_GLOBAL: u32 = 1 << 10;
    const FB_FORMAT_SPECIFIC: u32 = 1 << 11;

    struct Bits<'a> {
        data: &'a [u8],
        pos: u64,
    }

    impl Bits<'_> {
        fn read(&mut self, width: u32) -> Result<u64, String> {
            if width > 64 {
                return Err("bit field wider than 64 bits".into());
            }
            let mut v = 0u64;
            for i in 0..width {
                let byte = self.pos / 8;
                let b = *self
                    .data
                    .get(byte as usize)
                    .ok_or("bitcode ends inside a record")?;
                v |= u64::from((b >> (self.pos % 8)) & 1) << i;
                self.pos += 1;
            }
            Ok(v)
        }

        fn vbr(&mut self, width: u32) -> Result<u64, String> {
            if width < 2 {
                return Err("invalid VBR width".into());
            }
            let hi = 1u64 << (width - 1);
            let mut v = 0u64;
            let mut shift = 0;
            loop {
                let piece = self.read(width)?;
                if shift >= 64 {
                    return Err("VBR value too long".into());
                }
                v |= (piece & (hi - 1)) << shift;
                if piece & hi == 0 {
                    return Ok(v);
                }
                shift += width - 1;
            }
        }

        fn align32(&mut self) {
            self.pos = self.pos.next_multiple_of(32);
        }
    }

    #[derive(Clone, Copy)]
    enum Op {
        Literal,
        Fixed(u32),
        Vbr(u32),
        Array,
        Char6,
        Blob,
    }

    fn read_op(b: &mut Bits<'_>) -> Result<Op, String> {
        if b.read(1)? == 1 {
            b.vbr(8)?;
            return Ok(Op::Literal);
        }
        Ok(match b.read(3)? {
            1 => Op::Fixed(b.vbr(5)? as u32),
            2 => Op::Vbr(b.vbr(5)? as u32),
            3 => Op::Array,
            4 => Op::Char6,
            5 => Op::Blob,
            e => return Err(format!("unknown abbreviation encoding {e}")),
        })
    }

    fn scalar(b: &mut Bits<'_>, op: Op) -> Result<(), String> {
        match op {
            Op::Literal => Ok(()),
            Op::Fixed(w) => b.read(w).map(drop),
            Op::Vbr(w) => b.vbr(w).map(drop),
            Op::Char6 => b.read(6).map(drop),
            Op::Array | Op::Blob => Err("nested array or blob".into()),
        }
    }

    /// The first blob record in the block whose contents start at `b.pos`.
    fn block_blob<'a>(b: &mut Bits<'a>, width: u32) -> Result<Option<&'a [u8]>, String> {
        let mut abbrevs: Vec<Vec<Op>> = Vec::new();
        loop {
            match b.read(width)? {
                0 => return Ok(None),
                1 => {
                    b.vbr(8)?;
                    b.vbr(4)?;
                    b.align32();
                    let words = b.read(32)?;
                    b.pos += words * 32;
                }
                2 => {
                    let n = b.vbr(5)?;
                    let mut ops = Vec::new();
                    for _ in 0..n.min(1 << 16) {
                        ops.push(read_op(b)?);
                    }
                    abbrevs.push(ops);
                }
                3 => {
                    b.vbr(6)?;
                    let n = b.vbr(6)?;
                    for _ in 0..n {
                        b.vbr(6)?;
                    }
                }
                id => {
                    let ops = abbrevs
                        .get(id as usize - 4)
                        .ok_or("undefined abbreviation")?
                        .clone();
                    let mut i = 0;
                    while i < ops.len() {
                        match ops[i] {
                            Op::Array => {
                                let elt = *ops.get(i + 1).ok_or("array without element")?;
                                let n = b.vbr(6)?;
                                for _ in 0..n {
                                    scalar(b, elt)?;
                                }
                                i += 1;
                            }
                            Op::Blob => {
                                let len = b.vbr(6)?;
                                b.align32();
                                let start = (b.pos / 8) as usize;
                                let end = start
                                    .checked_add(len as usize)
                                    .filter(|&e| e <= b.data.len())
                                    .ok_or("blob past the end of the bitcode")?;
                                return Ok(Some(&b.data[start..end]));
                            }
                            op => scalar(b, op)?,
                        }
                        i += 1;
                    }
                }
            }
        }
    }

    fn word(d: &[u8], at: usize) -> Result<u32, String> {
        d.get(at..at + 4)
            .map(|w| u32::from_le_bytes(w.try_into().expect("4 bytes")))
            .ok_or_else(|| "symbol table truncated".to_owned())
    }

    /// The defined, global, not format-specific symbols of a bitcode file (none when
    /// the bitstream holds no module, which LLVM cannot read either).
    pub fn symbols(data: &[u8]) -> Result<Vec<Vec<u8>>, String> {
        let data = if data.starts_with(b"\xde\xc0\x17\x0b") {
            let off = word(data, 8)? as usize;
            let size = word(data, 12)? as usize;
            data.get(off..off.saturating_add(size))
                .ok_or("bitcode wrapper points past the end")?
        } else {
            data
        };
        let mut b = Bits { data, pos: 32 };
        let (mut symtab, mut strtab, mut module) = (None, None, false);
        let total = data.len() as u64 * 8;
        while b.pos + 32 <= total {
            if b.read(2)? != 1 {
                break; // padding or an unexpected record ends the top level
            }
            let id = b.vbr(8)?;
            let width = b.vbr(4)? as u32;
            b.align32();
            let words = b.read(32)?;
            let end = b.pos + words * 32;
            module |= id == MODULE_BLOCK;
            if id == SYMTAB_BLOCK || id == STRTAB_BLOCK {
                let blob = block_blob(&mut b, width)?;
                if id == SYMTAB_BLOCK {
                    symtab = blob;
                } else {
                    strtab = blob;
                }
            }
            b.pos = end;
        }
        let (Some(symtab), Some(strtab)) = (symtab, strtab) else {
            if !module {
                // LLVM cannot read it either and archives it as a blob without symbols.
                return Ok(Vec::new());
            }
            return Err("bitcode without a symbol table (SYMTAB_BLOCK) is not supported".into());
        };
        let sym_offset = word(symtab, 28)? as usize;
        let count = word(symtab, 32)? as usize;
        let mut out = Vec::new();
        for i in 0..count {
            let at = sym_offset + i * 24;
            let flags = word(symtab, at + 20)?;
            if flags & FB_GLOBAL == 0 || flags & (FB_UNDEFINED | FB_FORMAT_SPECIFIC) != 0 {
                continue;
            }
            let (off, len) = (word(symtab, at)? as usize, word(symtab, at + 4)? as usize);
            let name = strtab
                .get(off..off.saturating_add(len))
                .ok_or("symbol name past the string table")?;
            out.push(name.to_vec());
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_and_long_names() {
        let a = write_archive(&[("m.bin", b"ABCDEFGHIJ")]).unwrap();
        // Bytes written by clang-offload-packager 19 and llvm-offload-binary 22.
        let mut expect =
            b"!<arch>\nm.bin/          0           0     0     644     10        `\nABCDEFGHIJ"
                .to_vec();
        assert_eq!(a, expect);
        let a = write_archive(&[("./m.bin", b"x"), ("./m.bin", b"yz")]).unwrap();
        expect =
            b"!<arch>\n//                                              10        `\n./m.bin/\n\n"
                .to_vec();
        expect
            .extend_from_slice(b"/0              0           0     0     644     1         `\nx\n");
        expect
            .extend_from_slice(b"/0              0           0     0     644     2         `\nyz");
        assert_eq!(a, expect);
    }

    #[test]
    fn unreadable_bitcode_has_no_symbols_and_no_panic() {
        for n in 0..64 {
            let mut data = b"BC\xc0\xde".to_vec();
            data.extend((0..n).map(|i| (i * 37 + 11) as u8));
            assert_eq!(member_symbols(&data), Ok(Some(Vec::new())));
        }
        let wrapped = b"\xde\xc0\x17\x0b\0\0\0\0\xff\xff\xff\xff\x10\0\0\0";
        assert_eq!(member_symbols(wrapped), Ok(Some(Vec::new())));
        assert_eq!(member_symbols(b"text"), Ok(None));
    }
}

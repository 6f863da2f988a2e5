//! The archive symbols of a member: the one implementation behind both archive writers
//! (device archives of `bundle::archive`, clang-offload-packager's `--archive` in
//! `package::archive`). The two LLVM tools differ on bitcode and non-ELF objects, so the
//! difference is a parameter ([`SymbolRules`]) rather than a second function.

use object::read::elf::{FileHeader, SectionHeader, Sym};
use object::{Endianness, elf};

use super::archive::SymbolsError;
use super::bitcode::{self, BitcodeSymbols};
use crate::kind::FileKind;

/// Which tool's rules list a member's archive symbols.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SymbolRules {
    /// The device archives written here (LLVM's `writeArchive` over any
    /// `object::SymbolicFile`): objects of every format `object` reads list their defined
    /// global and weak symbols; bitcode lists its symbol table, none when it has no table,
    /// and unreadable bitcode is an error.
    Bundler,
    /// clang-offload-packager's `--archive`: ELF lists the defined non-local `.symtab`
    /// symbols (not FILE or SECTION); bitcode lists its symbol table, unreadable bitcode has
    /// no symbols and a module without a table is refused; COFF, Mach-O and wasm are refused.
    Packager,
}

/// The archive symbols a member defines, in LLVM's order; `None` when the member is not a
/// symbolic file (LLVM writes a symbol table, possibly empty, as soon as one member is an
/// object or bitcode file). `rules` says which tool's rules apply.
pub fn member_symbols(
    data: &[u8],
    rules: SymbolRules,
) -> Result<Option<Vec<Vec<u8>>>, SymbolsError> {
    match rules {
        SymbolRules::Bundler => bundler_symbols(data),
        SymbolRules::Packager => packager_symbols(data),
    }
}

fn bundler_symbols(data: &[u8]) -> Result<Option<Vec<Vec<u8>>>, SymbolsError> {
    if bitcode::is_bitcode(data) {
        // A bitcode file without an embedded symbol table: LLVM would parse the IR, which
        // this crate cannot; such a member is listed without symbols.
        return Ok(Some(
            bitcode::archive_symbols(data)?
                .unwrap_or_default()
                .into_iter()
                .map(<[u8]>::to_vec)
                .collect(),
        ));
    }
    use object::{Object, ObjectSymbol, SymbolKind};
    if object::FileKind::parse(data).is_err() {
        return Ok(None);
    }
    let file = object::File::parse(data)?;
    let mut names = Vec::new();
    for sym in file.symbols() {
        if sym.index().0 == 0 && file.format() == object::BinaryFormat::Elf {
            continue;
        }
        if matches!(sym.kind(), SymbolKind::Section | SymbolKind::File) {
            continue;
        }
        if !sym.is_global() && !sym.is_weak() || sym.is_undefined() {
            continue;
        }
        names.push(sym.name_bytes()?.to_vec());
    }
    Ok(Some(names))
}

fn packager_symbols(data: &[u8]) -> Result<Option<Vec<Vec<u8>>>, SymbolsError> {
    let kind = FileKind::sniff(data);
    if kind.is_elf() && data.len() >= 18 {
        // The class as `object` reads it; any class but 64-bit is read as 32-bit, whose
        // header check then names what is wrong.
        let r = if matches!(object::FileKind::parse(data), Ok(object::FileKind::Elf64)) {
            elf_symbols::<elf::FileHeader64<Endianness>>(data)
        } else {
            elf_symbols::<elf::FileHeader32<Endianness>>(data)
        };
        return r.map(Some).map_err(SymbolsError::Object);
    }
    if kind.is_bitcode() {
        // Bitcode LLVM cannot read is archived without symbols (LLVM's "best-effort
        // forwards compatibility"); bitcode with a module but no symbol table would need
        // LLVM's IR reader.
        return match bitcode::read_symbols(data) {
            Ok(BitcodeSymbols {
                names: Some(names), ..
            }) => Ok(Some(names.into_iter().map(<[u8]>::to_vec).collect())),
            Ok(BitcodeSymbols {
                names: None,
                has_module: true,
            }) => Err(SymbolsError::Unsupported(
                "bitcode without a symbol table (SYMTAB_BLOCK) is not supported".into(),
            )),
            _ => Ok(Some(Vec::new())),
        };
    }
    let other_object = kind.is_coff() || matches!(kind, FileKind::Wasm | FileKind::MachO);
    if other_object {
        return Err(SymbolsError::Unsupported(
            "only ELF and bitcode members are supported in archives".into(),
        ));
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

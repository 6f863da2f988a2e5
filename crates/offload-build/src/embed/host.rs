//! What both host objects are built from: the exported host symbols of kernels and device
//! variables, symbol definitions, NUL-terminated name strings, the 64-bit absolute relocation
//! and the final write (with the `.note.GNU-stack` an ELF object carries).

use object::write::{Object, SectionId, Symbol, SymbolId, SymbolSection};
use object::{
    RelocationEncoding, RelocationFlags, RelocationKind, SectionFlags, SectionKind, SymbolFlags,
    SymbolKind, SymbolScope, elf,
};

use super::EmbedError;
use super::device::DeviceSymbols;
use super::target::{HostFormat, HostTarget};

/// A place in the object: a (section) symbol and an offset from it.
pub(crate) type Place = (SymbolId, u64);

/// A 64-bit absolute address (`R_X86_64_64`, `R_AARCH64_ABS64`, `R_PPC64_ADDR64`,
/// `IMAGE_REL_AMD64_ADDR64`).
pub(crate) const ABS64: RelocationFlags = RelocationFlags::Generic {
    kind: RelocationKind::Absolute,
    encoding: RelocationEncoding::Generic,
    size: 64,
};

/// Where the exported host symbols lie: per kernel the offset of its 8-byte handle in the
/// data section, per variable the offset of its shadow in the bss section.
pub(crate) struct HostSymbols {
    pub kernels: Vec<u64>,
    pub variables: Vec<u64>,
}

/// Defines the host symbol of every kernel (an 8-byte handle in `data`) and every variable
/// (a shadow of its size in `bss`, aligned to its size up to 16), exported as
/// `<prefix><name>`, kernels first.
pub(crate) fn define_host_symbols(
    obj: &mut Object<'_>,
    symbols: &DeviceSymbols,
    prefix: &str,
    data: SectionId,
    bss: SectionId,
) -> HostSymbols {
    let mut kernels = Vec::with_capacity(symbols.kernels.len());
    for k in &symbols.kernels {
        let at = obj.append_section_data(data, &[0; 8], 8);
        exported(obj, &format!("{prefix}{k}"), (data, at), 8);
        kernels.push(at);
    }
    let mut variables = Vec::with_capacity(symbols.variables.len());
    for v in &symbols.variables {
        let at = obj.append_section_bss(bss, v.size, v.size.clamp(1, 16).next_power_of_two());
        exported(obj, &format!("{prefix}{}", v.name), (bss, at), v.size);
        variables.push(at);
    }
    HostSymbols { kernels, variables }
}

/// An exported (dynamic) data symbol of `size` bytes at `at` (a section and an offset).
pub(crate) fn exported(
    obj: &mut Object<'_>,
    name: &str,
    at: (SectionId, u64),
    size: u64,
) -> SymbolId {
    define(obj, name, SymbolScope::Dynamic, at, size, SymbolKind::Data)
}

/// A symbol of this object only, of `size` bytes at `at` (a section and an offset).
pub(crate) fn local(
    obj: &mut Object<'_>,
    name: &str,
    at: (SectionId, u64),
    size: u64,
    kind: SymbolKind,
) -> SymbolId {
    define(obj, name, SymbolScope::Compilation, at, size, kind)
}

fn define(
    obj: &mut Object<'_>,
    name: &str,
    scope: SymbolScope,
    (section, value): (SectionId, u64),
    size: u64,
    kind: SymbolKind,
) -> SymbolId {
    obj.add_symbol(Symbol {
        name: name.as_bytes().to_vec(),
        value,
        size,
        kind,
        scope,
        weak: false,
        section: SymbolSection::Section(section),
        flags: SymbolFlags::None,
    })
}

/// Appends `name` and a NUL to `section`; returns its offset.
pub(crate) fn append_name(obj: &mut Object<'_>, section: SectionId, name: &str) -> u64 {
    let mut s = Vec::with_capacity(name.len() + 1);
    s.extend_from_slice(name.as_bytes());
    s.push(0);
    obj.append_section_data(section, &s, 1)
}

/// The object's bytes; an ELF object gets an empty `.note.GNU-stack` first (no executable
/// stack), as every compiler writes it.
pub(crate) fn write(mut obj: Object<'_>, target: HostTarget) -> Result<Vec<u8>, EmbedError> {
    if target.format != HostFormat::Coff {
        let note = obj.add_section(
            Vec::new(),
            b".note.GNU-stack".to_vec(),
            SectionKind::Elf(elf::SHT_PROGBITS),
        );
        obj.section_mut(note).flags = SectionFlags::Elf { sh_flags: 0 };
    }
    Ok(obj.write()?)
}

/// An object defining `__hip_fatbin`: `bundle` (a program's relocatable device code, linked
/// per architecture and bundled) in `.hip_fatbin`, aligned to 4096, as clang's HIP driver
/// writes it for `-fgpu-rdc`. The host objects compiled with `-fgpu-rdc` refer to the symbol
/// and register the bundle from their constructors.
pub(crate) fn rdc_fatbin_object(target: HostTarget, bundle: &[u8]) -> Result<Vec<u8>, EmbedError> {
    let mut obj = target.new_object();
    let section = obj.add_section(
        Vec::new(),
        b".hip_fatbin".to_vec(),
        SectionKind::ReadOnlyData,
    );
    let at = obj.append_section_data(section, bundle, 4096);
    exported(&mut obj, "__hip_fatbin", (section, at), bundle.len() as u64);
    write(obj, target)
}

//! What names a bundle section and its object: the section name of an entry, the host
//! entry's placeholder contents, and the object formats this module tells apart.

use crate::raw::BUNDLE_MAGIC as MAGIC;

/// The payload of the host entry's section: one zero byte.
pub const HOST_PLACEHOLDER: &[u8] = &[0];

/// Whether section contents stand for the host object (exactly one `00` byte).
pub fn is_host_placeholder(data: &[u8]) -> bool {
    data == HOST_PLACEHOLDER
}

/// The section name of a bundle entry: `__CLANG_OFFLOAD_BUNDLE__<id>`.
pub fn section_name(id: &str) -> String {
    format!("{}{id}", std::str::from_utf8(MAGIC).unwrap_or_default())
}

/// The object file formats this module tells apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ObjectFormat {
    /// ELF (any class and byte order).
    Elf,
    /// COFF relocatable object.
    Coff,
    /// Mach-O (thin).
    MachO,
    /// Anything else the `object` crate reads (wasm, XCOFF, PE images, …).
    Other,
}

/// The format of `data` by its magic bytes, when it is one this module writes or names.
pub fn detect(data: &[u8]) -> Option<ObjectFormat> {
    let kind = crate::kind::FileKind::sniff(data);
    if kind.is_elf() {
        return Some(ObjectFormat::Elf);
    }
    if kind == crate::kind::FileKind::MachO {
        return Some(ObjectFormat::MachO);
    }
    match object::FileKind::parse(data) {
        Ok(object::FileKind::Coff) => Some(ObjectFormat::Coff),
        Ok(_) => Some(ObjectFormat::Other),
        Err(_) => None,
    }
}

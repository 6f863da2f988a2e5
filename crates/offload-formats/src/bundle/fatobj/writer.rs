//! Writing and unwriting: bundle sections added to a host object, and taken back out of a
//! fat object's section table, by the format's own appender and remover.

use super::error::FatObjectError;
use super::reader::FatObject;
use super::section::{ObjectFormat, detect};
use super::{coff, elf};

/// Writes a fat object: `host` with one bundle section per `(id, payload)` appended in
/// the given order. Pass [`HOST_PLACEHOLDER`](super::HOST_PLACEHOLDER) as the host entry's payload, as LLVM does.
///
/// ```
/// # use offload_formats::bundle::fatobj::{FatObject, HOST_PLACEHOLDER, write_fat_object};
/// # fn demo(host_object: &[u8]) -> Result<(), Box<dyn std::error::Error>> {
/// let fat = write_fat_object(
///     host_object,
///     &[("host-x86_64-unknown-linux-gnu-", HOST_PLACEHOLDER), ("hip-amdgcn-amd-amdhsa--gfx90a", b"BC\xc0\xde")],
/// )?;
/// let parsed = FatObject::parse(&fat)?;
/// assert_eq!(parsed.entries()[1].data, b"BC\xc0\xde");
/// # Ok(()) }
/// ```
pub fn write_fat_object(host: &[u8], entries: &[(&str, &[u8])]) -> Result<Vec<u8>, FatObjectError> {
    match detect(host) {
        Some(ObjectFormat::Elf) => elf::add_sections(host, entries),
        Some(ObjectFormat::Coff) => coff::add_sections(host, entries),
        Some(ObjectFormat::MachO) => Err(FatObjectError::Unsupported(
            "fat objects with a Mach-O host are not supported (llvm-objcopy cannot write them either)"
                .into(),
        )),
        _ => Err(FatObjectError::Unsupported(
            "fat objects are supported for ELF and COFF host objects only".into(),
        )),
    }
}

/// The host object back from a fat object: `data` with every bundle section taken out of
/// the section table (see the module documentation for what is kept). An object without
/// bundle sections comes back unchanged.
pub fn remove_bundle_sections(data: &[u8]) -> Result<Vec<u8>, FatObjectError> {
    let fat = FatObject::parse(data)?;
    if fat.entries().is_empty() {
        return Ok(data.to_vec());
    }
    let first = fat.entries()[0].section;
    match fat.format() {
        ObjectFormat::Elf => elf::truncate_sections(data, first, fat.entries().len()),
        // COFF section numbers start at 1.
        ObjectFormat::Coff => {
            coff::truncate_sections(data, first.saturating_sub(1), fat.entries().len())
        }
        _ => Err(FatObjectError::Unsupported(
            "removing offload bundle sections is supported for ELF and COFF objects only".into(),
        )),
    }
}

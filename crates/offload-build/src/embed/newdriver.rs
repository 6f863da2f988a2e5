//! The new-offload-driver object (host-objects §4 and §7C): offload binaries in
//! `.llvm.offloading` plus the registration entries clang-linker-wrapper turns into a
//! registering constructor at link time.

use std::borrow::Cow;

use object::write::{Object, Relocation, SectionId, StandardSection, SymbolId};
use object::{SectionFlags, SectionKind, SymbolKind, elf, pe};

use super::EmbedError;
use super::device::{DeviceSymbols, DeviceVariable};
use super::host::{self, Place};
use super::target::{HostFormat, HostTarget};
use offload_formats::kind::FileKind;
use offload_formats::package::SHT_LLVM_OFFLOADING;
use offload_formats::package::scan::split;
use offload_formats::package::{ImageKind, LlvmVersion, OffloadBinary, OffloadKind};

/// `SHF_GNU_RETAIN`: keeps a section through `--gc-sections`.
pub const SHF_GNU_RETAIN: u64 = 0x20_0000;

/// The layout of the registration entries a clang-linker-wrapper version reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum EntryLayout {
    /// LLVM 19: 32-byte `__tgt_offload_entry` {addr, name, size, i32 flags, i32 data} in
    /// `hip_offloading_entries`.
    Llvm19,
    /// LLVM 20: 56-byte entries {u64 0, u16 version 1, u16 kind, u32 flags, addr, name, size,
    /// data, aux} in `hip_offloading_entries`, HIP kind 3.
    Llvm20,
    /// LLVM 21 and later: the 56-byte entries in `llvm_offload_entries`, HIP kind 4 (checked
    /// against clang 22's own objects).
    Llvm21,
}

impl EntryLayout {
    /// The layout `llvm` reads.
    pub fn for_llvm(llvm: LlvmVersion) -> EntryLayout {
        match llvm.major() {
            ..=19 => EntryLayout::Llvm19,
            20 => EntryLayout::Llvm20,
            _ => EntryLayout::Llvm21,
        }
    }

    /// The section name (ELF; COFF appends `$OE`).
    pub fn section(self) -> &'static str {
        match self {
            EntryLayout::Llvm19 | EntryLayout::Llvm20 => "hip_offloading_entries",
            EntryLayout::Llvm21 => "llvm_offload_entries",
        }
    }

    /// Bytes per entry.
    pub fn entry_size(self) -> usize {
        match self {
            EntryLayout::Llvm19 => 32,
            _ => 56,
        }
    }
}

/// Builds a relocatable host object for clang's new offload driver (`--offload-new-driver`,
/// linked through `clang-linker-wrapper`): a `.llvm.offloading` section (type
/// `SHT_LLVM_OFFLOADING`, `SHF_EXCLUDE`, 8-aligned; COFF: `LNK_REMOVE|MEM_DISCARDABLE`) with
/// the offload binaries, per kernel an exported 8-byte host handle, per variable an exported
/// shadow, and one registration entry for each in the section and layout of the target LLVM
/// ([`EntryLayout`]), marked `SHF_GNU_RETAIN` so that `ld.lld --gc-sections` keeps it. The
/// object holds no code: the linker wrapper generates the constructor.
///
/// ```
/// use offload_build::embed::NewDriverObject;
/// use offload_build::package::{Image, ImageKind, LlvmVersion, OffloadKind, write_v1};
/// let image = Image::new(ImageKind::Bitcode, OffloadKind::Hip, LlvmVersion::LLVM19, b"BC\xc0\xde")?
///     .string("triple", "amdgcn-amd-amdhsa")
///     .string("arch", "gfx90a");
/// let mut obj = NewDriverObject::new("x86_64-unknown-linux-gnu", LlvmVersion::LLVM19)?;
/// obj.offload_binary(write_v1(&image)?)?.kernel("kern_c");
/// let bytes = obj.write()?;
/// assert_eq!(&bytes[..4], b"\x7fELF");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug)]
pub struct NewDriverObject<'a> {
    target: HostTarget,
    llvm: LlvmVersion,
    binaries: Vec<Cow<'a, [u8]>>,
    discover: bool,
    extra: DeviceSymbols,
    prefix: String,
}

impl<'a> NewDriverObject<'a> {
    /// An empty object for host `triple`, read by the clang-linker-wrapper of `llvm`.
    pub fn new(triple: &str, llvm: LlvmVersion) -> Result<Self, EmbedError> {
        Ok(NewDriverObject {
            target: HostTarget::parse(triple)?,
            llvm,
            binaries: Vec::new(),
            discover: true,
            extra: DeviceSymbols::default(),
            prefix: String::new(),
        })
    }

    /// Adds offload binaries (one, or several back to back as clang-offload-packager writes
    /// them). They are validated, and embedded unchanged, each at an 8-byte boundary.
    pub fn offload_binary(
        &mut self,
        binaries: impl Into<Cow<'a, [u8]>>,
    ) -> Result<&mut Self, EmbedError> {
        let binaries = binaries.into();
        let found = split(&binaries).map_err(|e| EmbedError::device("offload binary", e))?;
        if found.is_empty() {
            return Err(EmbedError::DeviceCode(
                "no offload binary in the input".into(),
            ));
        }
        self.binaries.push(binaries);
        Ok(self)
    }

    /// Whether to read kernels and variables from the images that are AMDGPU ELF objects
    /// (default `true`; bitcode images carry no readable symbol table, name their kernels
    /// with [`NewDriverObject::kernel`]).
    pub fn discover_symbols(&mut self, on: bool) -> &mut Self {
        self.discover = on;
        self
    }

    /// Registers a kernel.
    pub fn kernel(&mut self, name: &str) -> &mut Self {
        self.extra.add_kernel(name);
        self
    }

    /// Registers a device variable (replacing a discovered one of the same name).
    pub fn variable(&mut self, variable: DeviceVariable) -> &mut Self {
        self.extra.set_variable(variable);
        self
    }

    /// Prefix of the exported host symbols (default none).
    pub fn symbol_prefix(&mut self, prefix: &str) -> &mut Self {
        self.prefix = prefix.to_owned();
        self
    }

    /// The kernels and variables that get entries.
    pub fn symbols(&self) -> Result<DeviceSymbols, EmbedError> {
        let mut found = DeviceSymbols::default();
        if self.discover {
            for b in &self.binaries {
                for (_, data) in split(b).map_err(|e| EmbedError::device("", e))? {
                    let bin = OffloadBinary::parse(&data).map_err(|e| EmbedError::device("", e))?;
                    for e in bin.entries() {
                        let elf = FileKind::sniff(e.image()).is_elf();
                        if e.image_kind().raw() == ImageKind::Object.value() && elf {
                            found.merge(DeviceSymbols::from_code_object(e.image())?);
                        }
                    }
                }
            }
        }
        found.with_given(&self.extra)
    }

    /// Writes the object.
    pub fn write(&self) -> Result<Vec<u8>, EmbedError> {
        if self.binaries.is_empty() {
            return Err(EmbedError::DeviceCode(
                "no offload binaries were given".into(),
            ));
        }
        let symbols = self.symbols()?;
        let t = self.target;
        let coff = t.format == HostFormat::Coff;
        let layout = EntryLayout::for_llvm(self.llvm);
        let mut obj = t.new_object();
        self.add_offloading(&mut obj, coff);

        let data = obj.section_id(StandardSection::Data);
        let bss = obj.section_id(StandardSection::UninitializedData);
        let names = names_section(&mut obj, coff, layout);
        let entries = Entries {
            layout,
            section: entries_section(&mut obj, coff, layout),
            names,
            hip_kind: OffloadKind::Hip.value(self.llvm).unwrap_or(3),
        };
        let (data_sym, bss_sym) = (obj.section_symbol(data), obj.section_symbol(bss));
        let names_sym = obj.section_symbol(names);
        let at = host::define_host_symbols(&mut obj, &symbols, &self.prefix, data, bss);
        for (k, at) in symbols.kernels.iter().zip(at.kernels) {
            entries.add(&mut obj, (data_sym, at), (names_sym, k), 0, 0)?;
        }
        for (v, at) in symbols.variables.iter().zip(at.variables) {
            // Kind bits 0-2: 0 = plain global; bit 3 extern, bit 4 constant.
            let flags = (u32::from(v.external) << 3) | (u32::from(v.constant) << 4);
            entries.add(&mut obj, (bss_sym, at), (names_sym, &v.name), v.size, flags)?;
        }
        host::local(
            &mut obj,
            "__offload_build_entries",
            (entries.section, 0),
            0,
            SymbolKind::Data,
        );
        host::write(obj, t)
    }

    /// `.llvm.offloading` with the offload binaries, excluded from the link.
    fn add_offloading(&self, obj: &mut Object<'_>, coff: bool) {
        let kind = if coff {
            SectionKind::Other
        } else {
            SectionKind::Elf(SHT_LLVM_OFFLOADING)
        };
        let offloading = obj.add_section(Vec::new(), b".llvm.offloading".to_vec(), kind);
        obj.section_mut(offloading).flags = if coff {
            SectionFlags::Coff {
                characteristics: pe::IMAGE_SCN_LNK_REMOVE
                    | pe::IMAGE_SCN_MEM_DISCARDABLE
                    | pe::IMAGE_SCN_ALIGN_8BYTES,
            }
        } else {
            SectionFlags::Elf {
                sh_flags: u64::from(elf::SHF_EXCLUDE),
            }
        };
        for b in &self.binaries {
            // Every offload binary is a multiple of 8 bytes, so this adds no padding for
            // well-formed input.
            obj.append_section_data(offloading, b, 8);
        }
    }
}

/// The section of the entries' name strings: `.rodata` on COFF and for LLVM 19, else
/// `.llvm.rodata.offloading` (as clang 20 and later put them).
fn names_section(obj: &mut Object<'_>, coff: bool, layout: EntryLayout) -> SectionId {
    if coff || layout == EntryLayout::Llvm19 {
        return obj.section_id(StandardSection::ReadOnlyData);
    }
    let s = obj.add_section(
        Vec::new(),
        b".llvm.rodata.offloading".to_vec(),
        SectionKind::ReadOnlyData,
    );
    obj.section_mut(s).flags = SectionFlags::Elf {
        sh_flags: u64::from(elf::SHF_ALLOC),
    };
    s
}

/// The section of the entries ([`EntryLayout::section`]; `$OE` appended on COFF), kept by
/// `--gc-sections` on ELF.
fn entries_section(obj: &mut Object<'_>, coff: bool, layout: EntryLayout) -> SectionId {
    if coff {
        let name = format!("{}$OE", layout.section()).into_bytes();
        return obj.add_section(Vec::new(), name, SectionKind::ReadOnlyData);
    }
    let name = layout.section().as_bytes().to_vec();
    let s = obj.add_section(Vec::new(), name, SectionKind::Data);
    obj.section_mut(s).flags = SectionFlags::Elf {
        sh_flags: u64::from(elf::SHF_ALLOC | elf::SHF_WRITE) | SHF_GNU_RETAIN,
    };
    s
}

/// Where registration entries go and how they are laid out.
struct Entries {
    layout: EntryLayout,
    /// The entries' section.
    section: SectionId,
    /// The section of their name strings.
    names: SectionId,
    /// The HIP offload kind of this LLVM (LLVM 20 and later layouts).
    hip_kind: u16,
}

impl Entries {
    /// Appends the entry of the host symbol at `addr`, named `name` (appended to the names'
    /// section, whose section symbol is `names_sym`).
    fn add(
        &self,
        obj: &mut Object<'_>,
        addr: Place,
        (names_sym, name): (SymbolId, &str),
        size: u64,
        flags: u32,
    ) -> Result<(), EmbedError> {
        let name_at = host::append_name(obj, self.names, name);
        let (entry, addr_off, name_off) = self.encode(size, flags);
        let at = obj.append_section_data(self.section, &entry, 8);
        for (off, (symbol, addend)) in [(addr_off, addr), (name_off, (names_sym, name_at))] {
            let address = Relocation {
                offset: at + off,
                symbol,
                addend: addend as i64,
                flags: host::ABS64,
            };
            obj.add_relocation(self.section, address)?;
        }
        Ok(())
    }

    /// An entry without its two addresses, and the offsets of those (symbol, name).
    fn encode(&self, size: u64, flags: u32) -> (Vec<u8>, u64, u64) {
        let mut e = vec![0u8; self.layout.entry_size()];
        match self.layout {
            EntryLayout::Llvm19 => {
                e[16..24].copy_from_slice(&size.to_le_bytes());
                e[24..28].copy_from_slice(&flags.to_le_bytes());
                (e, 0, 8)
            }
            _ => {
                e[8..10].copy_from_slice(&1u16.to_le_bytes());
                e[10..12].copy_from_slice(&self.hip_kind.to_le_bytes());
                e[12..16].copy_from_slice(&flags.to_le_bytes());
                e[32..40].copy_from_slice(&size.to_le_bytes());
                (e, 16, 24)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use object::{Object, ObjectSection};

    use super::*;
    use offload_formats::package::{Image, write_v1};

    fn binary() -> Vec<u8> {
        let image = Image::new(
            ImageKind::Bitcode,
            OffloadKind::Hip,
            LlvmVersion::LLVM19,
            b"BC\xc0\xde",
        )
        .unwrap()
        .string("triple", "amdgcn-amd-amdhsa")
        .string("arch", "gfx90a");
        write_v1(&image).unwrap()
    }

    fn entries(llvm: u32, triple: &str) -> (String, Vec<u8>, usize) {
        let mut o = NewDriverObject::new(triple, LlvmVersion::new(llvm)).unwrap();
        o.offload_binary(binary())
            .unwrap()
            .kernel("k")
            .variable(DeviceVariable {
                constant: true,
                ..DeviceVariable::new("v", 12)
            });
        let bytes = o.write().unwrap();
        let file = object::File::parse(&*bytes).unwrap();
        let s = file
            .sections()
            .find(|s| {
                let n = s.name().unwrap();
                n.starts_with("hip_offloading_entries") || n == "llvm_offload_entries"
            })
            .expect("entries section");
        let relocs = s.relocations().count();
        (
            s.name().unwrap().to_owned(),
            s.data().unwrap().to_vec(),
            relocs,
        )
    }

    #[test]
    fn entry_layouts_per_llvm_version() {
        let (name, data, relocs) = entries(19, "x86_64-unknown-linux-gnu");
        assert_eq!(
            (name.as_str(), data.len(), relocs),
            ("hip_offloading_entries", 64, 4)
        );
        assert_eq!(&data[16..24], &0u64.to_le_bytes()); // kernel: size 0
        assert_eq!(&data[48..56], &12u64.to_le_bytes());
        assert_eq!(&data[56..60], &16u32.to_le_bytes()); // constant
        let (name, data, _) = entries(20, "x86_64-unknown-linux-gnu");
        assert_eq!((name.as_str(), data.len()), ("hip_offloading_entries", 112));
        assert_eq!(&data[8..12], &[1, 0, 3, 0]); // version 1, HIP = 3
        let (name, data, _) = entries(21, "aarch64-linux-gnu");
        assert_eq!((name.as_str(), data.len()), ("llvm_offload_entries", 112));
        assert_eq!(&data[8..12], &[1, 0, 4, 0]); // HIP = 4 from LLVM 21
        assert_eq!(&data[56 + 32..56 + 40], &12u64.to_le_bytes());
        let (name, _, _) = entries(19, "x86_64-pc-windows-msvc");
        assert_eq!(name, "hip_offloading_entries$OE");
    }

    #[test]
    fn rejects_bad_input() {
        let mut o = NewDriverObject::new("x86_64-linux-gnu", LlvmVersion::LLVM19).unwrap();
        assert!(o.offload_binary(Vec::new()).is_err());
        assert!(o.offload_binary(b"not an offload binary".to_vec()).is_err());
        assert!(o.write().is_err());
        o.offload_binary(binary())
            .unwrap()
            .kernel("a")
            .variable(DeviceVariable::new("a", 4));
        assert!(matches!(o.write(), Err(EmbedError::Symbol(_))));
    }
}

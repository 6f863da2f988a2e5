//! The HIP self-registering host object (host-objects §1 and §7A): [`HipObject`] writes the
//! bundle in `.hip_fatbin`, the `HIPF` wrapper, the handle, the host symbols of kernels and
//! variables, and the constructor from `codegen` with its pointer in
//! `.init_array` (`.CRT$XCU` on COFF).

use std::borrow::Cow;

use object::write::{
    Object, Relocation, SectionId, StandardSection, Symbol, SymbolId, SymbolSection,
};
use object::{SectionFlags, SectionKind, SymbolFlags, SymbolKind, SymbolScope, elf};

use super::EmbedError;
use super::ctor::{self, KernelRef, PPC64_LOCAL_ENTRY, Refs, VariableRef};
use super::device::{DeviceSymbols, DeviceVariable};
use super::host::{self, Place};
use super::target::{HostArch, HostFormat, HostTarget};
use offload_formats::bundle::BundleWriteError;
use offload_formats::bundle::compressed::{CompressOptions, Version, compress};
use offload_formats::bundle::hipfb;
use offload_formats::bundle::sequence::{Item, Sequence};
use offload_formats::id::target_id::TargetId;

/// Magic of the fat-binary wrapper, `"HIPF"` in little-endian byte order.
pub const HIP_FATBIN_MAGIC: u32 = 0x4849_5046;
/// Section of the bundle.
pub const HIP_FATBIN_SECTION: &str = ".hip_fatbin";
/// Section of the wrapper.
pub const HIP_WRAPPER_SECTION: &str = ".hipFatBinSegment";
/// The host entry clang 19 writes into every HIP fat binary, whatever the host.
pub const HOST_ENTRY_ID: &str = hipfb::HOST_ENTRY_ID;

/// Builds a host object that carries a HIP fat binary and registers it at start-up, as a
/// clang-compiled (non-RDC) HIP translation unit does.
///
/// The object contains:
/// - `.hip_fatbin` (read-only, 4096-aligned): the bundle, given whole with
///   [`HipObject::bundle`] or built from code objects with [`HipObject::code_object`]
///   (byte-identical to clang 19's `.hipfb`: host entry `host-x86_64-unknown-linux--`, entries
///   `hipv4-amdgcn-amd-amdhsa--<target-id>` sorted by target ID, 4096-aligned payloads),
///   optionally compressed ([`HipObject::compress`]);
/// - `.hipFatBinSegment` (writable on ELF, read-only on COFF, 8-aligned): the 24-byte
///   wrapper `{0x48495046, 1, &bundle, 0}`;
/// - an 8-byte handle in `.bss`, a constructor in `.init_array` (`.CRT$XCU` on COFF) and a
///   destructor, as clang's `__hip_module_ctor`/`__hip_module_dtor`;
/// - per kernel an exported 8-byte host handle named like the kernel (the address to pass to
///   `hipLaunchKernel`), per device variable an exported shadow of its size; names are read
///   from the code objects' symbol tables ([`DeviceSymbols`]) and may be prefixed;
/// - optionally exported start and size symbols of the bundle ([`HipObject::start_symbol`],
///   [`HipObject::size_symbol`]; the size is an 8-byte little-endian integer in `.rodata`).
///
/// ```
/// use offload_build::embed::HipObject;
/// # fn code_object() -> Vec<u8> { Vec::new() }
/// let mut hip = HipObject::new("x86_64-unknown-linux-gnu")?;
/// hip.discover_symbols(false).kernel("my_kernel").start_symbol("MY_FATBIN");
/// hip.code_object("gfx1100", code_object())?;
/// let bytes: Vec<u8> = hip.write()?;
/// assert_eq!(&bytes[..4], b"\x7fELF");
/// # Ok::<(), offload_build::embed::EmbedError>(())
/// ```
#[derive(Clone, Debug)]
pub struct HipObject<'a> {
    target: HostTarget,
    bundle: Option<Cow<'a, [u8]>>,
    code_objects: Vec<(String, Cow<'a, [u8]>)>,
    compress: Option<CompressOptions>,
    discover: bool,
    register: bool,
    extra: DeviceSymbols,
    prefix: String,
    start_symbol: Option<String>,
    size_symbol: Option<String>,
}

impl<'a> HipObject<'a> {
    /// An empty object for the host `triple` (see [`HostTarget::parse`]).
    pub fn new(triple: &str) -> Result<Self, EmbedError> {
        Ok(Self::for_target(HostTarget::parse(triple)?))
    }

    /// An empty object for `target`.
    pub fn for_target(target: HostTarget) -> Self {
        HipObject {
            target,
            bundle: None,
            code_objects: Vec::new(),
            compress: None,
            discover: true,
            register: true,
            extra: DeviceSymbols::default(),
            prefix: String::new(),
            start_symbol: None,
            size_symbol: None,
        }
    }

    /// Uses `bundle` (a binary bundle or a compressed one) as the content of `.hip_fatbin`,
    /// unchanged. Replaces any code objects added before.
    pub fn bundle(&mut self, bundle: impl Into<Cow<'a, [u8]>>) -> &mut Self {
        self.bundle = Some(bundle.into());
        self.code_objects.clear();
        self
    }

    /// Adds the code object of one device, named by its target ID (`gfx90a:xnack+`); the
    /// bundle is built from all of them. Replaces a bundle given with [`HipObject::bundle`].
    pub fn code_object(
        &mut self,
        target_id: &str,
        code_object: impl Into<Cow<'a, [u8]>>,
    ) -> Result<&mut Self, EmbedError> {
        let id = TargetId::parse(target_id)
            .map_err(|e| EmbedError::device(format!("target ID '{target_id}'"), e))?;
        self.bundle = None;
        self.code_objects.push((id.canonical(), code_object.into()));
        Ok(self)
    }

    /// Compresses the bundle built from code objects (a CCOB of the given version; version 2
    /// is what ROCm 6.2 and later read). `None` (the default) leaves it uncompressed. A
    /// bundle given whole is never recompressed.
    pub fn compress(&mut self, options: Option<CompressOptions>) -> &mut Self {
        self.compress = options;
        self
    }

    /// Compresses with zstd, LLVM 19's format version 2 and level 3 (or `false`: no compression).
    pub fn compress_v2(&mut self, on: bool) -> &mut Self {
        self.compress = on.then_some(CompressOptions {
            version: Version::V2,
            ..CompressOptions::default()
        });
        self
    }

    /// Whether to read kernels and variables from the code objects (default `true`).
    pub fn discover_symbols(&mut self, on: bool) -> &mut Self {
        self.discover = on;
        self
    }

    /// Whether to emit the wrapper, handle and constructor (default `true`). Without them the
    /// object only carries the bundle and its start/size symbols, for `hipModuleLoadData`.
    pub fn register(&mut self, on: bool) -> &mut Self {
        self.register = on;
        self
    }

    /// Registers a kernel in addition to the discovered ones.
    pub fn kernel(&mut self, name: &str) -> &mut Self {
        self.extra.add_kernel(name);
        self
    }

    /// Registers a device variable, replacing a discovered one of the same name (to set
    /// `constant` or `external`).
    pub fn variable(&mut self, variable: DeviceVariable) -> &mut Self {
        self.extra.set_variable(variable);
        self
    }

    /// Prefix of the exported host symbols of kernels and variables (default none: the host
    /// symbol is named like the device symbol, as clang names it).
    pub fn symbol_prefix(&mut self, prefix: &str) -> &mut Self {
        self.prefix = prefix.to_owned();
        self
    }

    /// Exports a global symbol of this name at the start of the bundle.
    pub fn start_symbol(&mut self, name: &str) -> &mut Self {
        self.start_symbol = Some(name.to_owned());
        self
    }

    /// Exports a global 8-byte little-endian integer of this name holding the bundle's size.
    pub fn size_symbol(&mut self, name: &str) -> &mut Self {
        self.size_symbol = Some(name.to_owned());
        self
    }

    /// The bundle that goes into `.hip_fatbin`.
    pub fn bundle_bytes(&self) -> Result<Cow<'_, [u8]>, EmbedError> {
        if let Some(b) = &self.bundle {
            // Whatever goes into .hip_fatbin must be a walkable sequence of bundles.
            let mut count = 0;
            for seg in Sequence::new(b) {
                seg.map_err(|e| EmbedError::device("the bundle", e))?;
                count += 1;
            }
            if count == 0 {
                return Err(EmbedError::DeviceCode(
                    "the bundle is neither a bundle nor a compressed bundle".into(),
                ));
            }
            return Ok(Cow::Borrowed(b));
        }
        if self.code_objects.is_empty() {
            return Err(EmbedError::DeviceCode(
                "no bundle and no code objects were given".into(),
            ));
        }
        let bundle = hipfb::write(self.code_objects.iter().map(|(t, d)| (t.as_str(), &d[..])))
            .map_err(|e| match e {
                BundleWriteError::DuplicateId(id) => {
                    EmbedError::DeviceCode(format!("two code objects for {id}").into())
                }
                e => EmbedError::device("cannot write the bundle", e),
            })?;
        match &self.compress {
            None => Ok(Cow::Owned(bundle)),
            Some(o) => compress(&bundle, o)
                .map(Cow::Owned)
                .map_err(|e| EmbedError::device("cannot compress the bundle", e)),
        }
    }

    /// The kernels and variables that will be registered.
    pub fn symbols(&self) -> Result<DeviceSymbols, EmbedError> {
        let mut found = DeviceSymbols::default();
        if self.discover {
            if self.bundle.is_some() {
                for co in code_objects_of(&self.bundle_bytes()?)? {
                    found.merge(DeviceSymbols::from_code_object(&co)?);
                }
            } else {
                for (_, co) in &self.code_objects {
                    found.merge(DeviceSymbols::from_code_object(co)?);
                }
            }
        }
        found.with_given(&self.extra)
    }

    /// Writes the object.
    pub fn write(&self) -> Result<Vec<u8>, EmbedError> {
        let bundle = self.bundle_bytes()?;
        let symbols = if self.register {
            self.symbols()?
        } else {
            DeviceSymbols::default()
        };
        let mut obj = self.target.new_object();
        let fatbin_sym = self.add_bundle(&mut obj, &bundle);
        if self.register {
            self.emit_registration(&mut obj, fatbin_sym, &symbols)?;
        }
        host::write(obj, self.target)
    }

    /// `.hip_fatbin` holding `bundle`, and the start and size symbols asked for; returns the
    /// section symbol of `.hip_fatbin`.
    fn add_bundle<'d>(&self, obj: &mut Object<'d>, bundle: &'d [u8]) -> SymbolId {
        let fatbin = obj.add_section(
            Vec::new(),
            HIP_FATBIN_SECTION.as_bytes().to_vec(),
            SectionKind::ReadOnlyData,
        );
        obj.set_section_data(fatbin, bundle, 4096);
        let fatbin_sym = obj.section_symbol(fatbin);
        let len = bundle.len() as u64;
        if let Some(name) = &self.start_symbol {
            host::exported(obj, name, (fatbin, 0), len);
        }
        if let Some(name) = &self.size_symbol {
            let rodata = obj.section_id(StandardSection::ReadOnlyData);
            let at = obj.append_section_data(rodata, &len.to_le_bytes(), 8);
            host::exported(obj, name, (rodata, at), 8);
        }
        fatbin_sym
    }

    /// Everything that registers the bundle: the wrapper, the handle, the host symbols of
    /// kernels and variables with their names, the constructor and destructor, and the
    /// constructor's pointer.
    fn emit_registration(
        &self,
        obj: &mut Object<'_>,
        fatbin_sym: SymbolId,
        symbols: &DeviceSymbols,
    ) -> Result<(), EmbedError> {
        let t = self.target;
        let wrapper_sym = add_wrapper(obj, fatbin_sym, t.format == HostFormat::Coff)?;
        let bss = obj.section_id(StandardSection::UninitializedData);
        let handle = obj.append_section_bss(bss, 8, 8);
        host::local(
            obj,
            "__hip_gpubin_handle",
            (bss, handle),
            8,
            SymbolKind::Data,
        );
        let bss_sym = obj.section_symbol(bss);
        let (kernels, variables) = self.host_symbols(obj, (bss, bss_sym), symbols);

        let text = obj.section_id(StandardSection::Text);
        let refs = Refs {
            handle: (bss_sym, handle),
            wrapper: (wrapper_sym, 0),
            text: obj.section_symbol(text),
            register_fatbin: undefined(obj, "__hipRegisterFatBinary"),
            register_function: undefined(obj, "__hipRegisterFunction"),
            register_var: undefined(obj, "__hipRegisterVar"),
            unregister: undefined(obj, "__hipUnregisterFatBinary"),
            atexit: undefined(obj, "atexit"),
            toc: (t.arch == HostArch::Ppc64le).then(|| undefined(obj, ".TOC.")),
            kernels,
            variables,
        };
        let ctor = add_code(obj, t, text, &refs)?;
        add_ctor_pointer(obj, t.format == HostFormat::Coff, (refs.text, ctor))
    }

    /// The exported host symbols and the name strings (in `.rodata`) of kernels and
    /// variables, as the code refers to them.
    fn host_symbols<'s>(
        &self,
        obj: &mut Object<'_>,
        (bss, bss_sym): (SectionId, SymbolId),
        symbols: &'s DeviceSymbols,
    ) -> (Vec<KernelRef>, Vec<VariableRef<'s>>) {
        let data = obj.section_id(StandardSection::Data);
        let rodata = obj.section_id(StandardSection::ReadOnlyData);
        let data_sym = obj.section_symbol(data);
        let rodata_sym = obj.section_symbol(rodata);
        let at = host::define_host_symbols(obj, symbols, &self.prefix, data, bss);
        let mut name_of = |name: &str| (rodata_sym, host::append_name(obj, rodata, name));
        let kernels = (symbols.kernels.iter().zip(at.kernels))
            .map(|(k, at)| ((data_sym, at), name_of(k)))
            .collect();
        let variables = (symbols.variables.iter().zip(at.variables))
            .map(|(v, at)| ((bss_sym, at), name_of(&v.name), v))
            .collect();
        (kernels, variables)
    }
}

/// The wrapper `{HIPF, 1, &bundle, 0}` in `.hipFatBinSegment`: writable on ELF so that its
/// absolute relocation needs no text relocation in a PIE or shared library; read-only on
/// COFF (base relocations). Returns the section symbol of the wrapper.
fn add_wrapper(
    obj: &mut Object<'_>,
    fatbin_sym: SymbolId,
    coff: bool,
) -> Result<SymbolId, EmbedError> {
    let kind = if coff {
        SectionKind::ReadOnlyData
    } else {
        SectionKind::Data
    };
    let wrapper = obj.add_section(Vec::new(), HIP_WRAPPER_SECTION.as_bytes().to_vec(), kind);
    let mut w = Vec::with_capacity(24);
    w.extend_from_slice(&HIP_FATBIN_MAGIC.to_le_bytes());
    w.extend_from_slice(&1u32.to_le_bytes());
    w.extend_from_slice(&[0; 16]);
    obj.set_section_data(wrapper, w, 8);
    let bundle_address = Relocation {
        offset: 8,
        symbol: fatbin_sym,
        addend: 0,
        flags: host::ABS64,
    };
    obj.add_relocation(wrapper, bundle_address)?;
    host::local(
        obj,
        "__hip_fatbin_wrapper",
        (wrapper, 0),
        24,
        SymbolKind::Data,
    );
    Ok(obj.section_symbol(wrapper))
}

/// An undefined symbol: a function of the HIP runtime or the C library, or `.TOC.`.
fn undefined(obj: &mut Object<'_>, name: &str) -> SymbolId {
    obj.add_symbol(Symbol {
        name: name.as_bytes().to_vec(),
        value: 0,
        size: 0,
        kind: SymbolKind::Unknown,
        scope: SymbolScope::Unknown,
        weak: false,
        section: SymbolSection::Undefined,
        flags: SymbolFlags::None,
    })
}

/// The constructor and destructor appended to `text`, with their relocations and local
/// symbols `__hip_module_ctor`/`__hip_module_dtor` (on ppc64le with the local entry point
/// after the TOC setup); returns the constructor's offset in `text`.
fn add_code(
    obj: &mut Object<'_>,
    t: HostTarget,
    text: SectionId,
    refs: &Refs<'_>,
) -> Result<u64, EmbedError> {
    let code = ctor::generate(t, refs)?;
    let base = obj.append_section_data(text, &code.bytes, 16);
    for mut r in code.relocations {
        r.offset += base;
        obj.add_relocation(text, r)?;
    }
    for (name, (off, len)) in [
        ("__hip_module_ctor", code.ctor),
        ("__hip_module_dtor", code.dtor),
    ] {
        let id = host::local(obj, name, (text, base + off), len, SymbolKind::Text);
        if t.arch == HostArch::Ppc64le {
            // .localentry: the local entry point follows the 8-byte TOC setup.
            let log = PPC64_LOCAL_ENTRY.trailing_zeros() as u8;
            obj.symbol_mut(id).flags = SymbolFlags::Elf {
                st_info: (elf::STB_LOCAL << 4) | elf::STT_FUNC,
                st_other: log << 5,
            };
        }
    }
    Ok(base + code.ctor.0)
}

/// The constructor's pointer at `ctor`: in `.init_array` on ELF, `.CRT$XCU` on COFF.
fn add_ctor_pointer(
    obj: &mut Object<'_>,
    coff: bool,
    (symbol, offset): Place,
) -> Result<(), EmbedError> {
    let ctors = if coff {
        obj.add_section(Vec::new(), b".CRT$XCU".to_vec(), SectionKind::ReadOnlyData)
    } else {
        let s = obj.add_section(
            Vec::new(),
            b".init_array".to_vec(),
            SectionKind::Elf(elf::SHT_INIT_ARRAY),
        );
        obj.section_mut(s).flags = SectionFlags::Elf {
            sh_flags: u64::from(elf::SHF_ALLOC | elf::SHF_WRITE),
        };
        s
    };
    obj.set_section_data(ctors, vec![0; 8], 8);
    let pointer = Relocation {
        offset: 0,
        symbol,
        addend: offset as i64,
        flags: host::ABS64,
    };
    Ok(obj.add_relocation(ctors, pointer)?)
}

/// The device code objects of a bundle sequence (decompressing compressed bundles); the
/// host entry and empty payloads are skipped.
pub(crate) fn code_objects_of(data: &[u8]) -> Result<Vec<Vec<u8>>, EmbedError> {
    let bad = |m: String| EmbedError::DeviceCode(m.into());
    let mut out = Vec::new();
    for seg in Sequence::new(data) {
        let seg = seg.map_err(|e| EmbedError::device("", e))?;
        let owned;
        let bundle = match seg.item {
            Item::Binary(b) => b,
            Item::Compressed(c) => {
                owned = c.decompress().map_err(|e| EmbedError::device("", e))?.data;
                offload_formats::bundle::BinaryBundle::parse(&owned)
                    .map_err(|e| EmbedError::device("", e))?
                    .ok_or_else(
                        || bad("a compressed bundle does not hold a binary bundle".into()),
                    )?
            }
        };
        for e in bundle.entries() {
            if !e.id.starts_with(b"host-") && !e.data.is_empty() {
                out.push(e.data.to_vec());
            }
        }
    }
    if out.is_empty() {
        return Err(bad("the bundle holds no device code objects".into()));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use object::read::elf::{ElfFile64, Sym};
    use object::{LittleEndian, Object, ObjectSection, ObjectSymbol};
    use offload_formats::bundle::binary::write_bundle;

    use super::*;

    fn fake_bundle() -> Vec<u8> {
        write_bundle(
            &[
                (HOST_ENTRY_ID.as_bytes(), b""),
                (b"hipv4-amdgcn-amd-amdhsa--gfx1100", b"not an ELF"),
            ],
            4096,
        )
        .unwrap()
    }

    #[test]
    fn data_only_and_compressed() {
        let mut h = HipObject::new("x86_64-unknown-linux-gnu").unwrap();
        h.code_object("gfx1100", &b"\x7fELF-ish"[..]).unwrap();
        h.register(false).compress_v2(true).start_symbol("S");
        let bytes = h.write().unwrap();
        let file = object::File::parse(&*bytes).unwrap();
        assert!(file.section_by_name(".init_array").is_none());
        assert!(file.section_by_name(HIP_WRAPPER_SECTION).is_none());
        let fatbin = file.section_by_name(HIP_FATBIN_SECTION).unwrap();
        assert_eq!(fatbin.align(), 4096);
        assert_eq!(&fatbin.data().unwrap()[..6], b"CCOB\x02\x00");
    }

    #[test]
    fn discovery_needs_code_objects() {
        let mut h = HipObject::new("x86_64-unknown-linux-gnu").unwrap();
        h.bundle(fake_bundle());
        assert!(matches!(h.write(), Err(EmbedError::DeviceCode(_))));
        h.discover_symbols(false).kernel("k");
        assert!(h.write().is_ok());
        h.bundle(&b"garbage"[..]);
        assert!(h.write().is_err());
        assert!(
            HipObject::new("x86_64-unknown-linux-gnu")
                .unwrap()
                .write()
                .is_err()
        );
    }

    #[test]
    fn ppc64le_functions_have_a_local_entry() {
        let mut h = HipObject::new("powerpc64le-unknown-linux-gnu").unwrap();
        h.bundle(fake_bundle()).discover_symbols(false).kernel("k");
        let bytes = h.write().unwrap();
        let file = ElfFile64::<LittleEndian>::parse(&*bytes).unwrap();
        assert_eq!(file.elf_header().e_flags.get(LittleEndian), 2);
        let ctor = file
            .symbols()
            .find(|s| s.name() == Ok("__hip_module_ctor"))
            .unwrap();
        // st_other 3 << 5: local entry 8 bytes after the global entry.
        assert_eq!(ctor.elf_symbol().st_other() >> 5, 3);
    }
}

//! The generated Rust module `$OUT_DIR/<name>.rs` that a crate includes after its build
//! script ran: `fatbin()` (over the embedded object's `.hip_fatbin`, or the container file
//! included aligned), `ARCHS`, `IMAGES`/`image()`, `KERNELS`, `CONTAINER`, `COMPRESSED` and
//! the `kernels` module (names, and host handles when the object registers itself); in the
//! self-registering embedding also the C/C++ header `<name>_kernels.h` ([`render_header`])
//! that declares the handles. Also the kernel-name readers that fill `KERNELS`:
//! [`amdgpu_kernels`] (code objects) and [`ptx_kernels`] (PTX text).
//!
//! # Kernel names
//!
//! Kernels are listed by symbol: `_Z5saxpyifPKfPf` for a C++ kernel, `vadd` for an
//! `extern "C"` one. A C++ symbol is demangled with `cpp_demangle` into its source name
//! (without parameters and return type: `saxpy`, `scale<float>`, `ns::f`) and its signature
//! (`saxpy(int, float, float const*, float*)`, `void scale<float>(float*, float)`: the format
//! of `c++filt`). The `kernels` module names them so:
//!
//! 1. Every kernel has the constant of its symbol ([`const_ident`]: `VADD`,
//!    `_Z5SAXPYIFPKFPF`), given in sorted symbol order, with `_` appended while the
//!    identifier is taken (`vadd` and `VADD`: `VADD`, `VADD_`), as before names were
//!    demangled, so existing code keeps compiling.
//! 2. A C++ kernel also has the constant of its source name ([`source_ident`]: `SAXPY`,
//!    `SCALE_FLOAT`, `NS_F`) when exactly one kernel's source name gives that identifier and
//!    no constant of step 1 has it. Overloads (`saxpy(int, …)` and `saxpy(double, …)`) and
//!    names that differ only in case or punctuation get none: they are reached by their
//!    symbol constants or by signature.
//! 3. `ALL` lists every kernel in symbol order; `by_name` finds the only kernel whose source
//!    name (or symbol) is the one asked (`None` when several are: overloads, template
//!    instances asked as `scale`); `by_signature` finds the kernel with that signature (the
//!    first in `ALL` if two symbols demangle alike, as `_Z1fv` and the internal `_ZL1fv`).
//!
//! The header declares each kernel once, under its source-name constant when it has one,
//! else its symbol constant.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::{self, Write as _};

use object::{Object, ObjectSymbol};

use crate::builder::emit::embed_glue::HostSymbols;
use crate::builder::pack::ImageRef;
use crate::builder::Container;
use crate::builder::Embed;

/// Kernel names of an AMDGPU code object: every symbol `K` that has a matching kernel
/// descriptor symbol `K.kd`. Empty when the bytes are not an ELF file.
pub fn amdgpu_kernels(code_object: &[u8]) -> Vec<String> {
    let Ok(file) = object::File::parse(code_object) else {
        return Vec::new();
    };
    let names: BTreeSet<&str> = file
        .symbols()
        .chain(file.dynamic_symbols())
        .filter_map(|s| s.name().ok())
        .collect();
    names
        .iter()
        .filter_map(|n| n.strip_suffix(".kd"))
        .filter(|k| names.contains(k))
        .map(str::to_string)
        .collect()
}

/// Kernel names of PTX text: the `.entry` directives.
pub fn ptx_kernels(ptx: &str) -> Vec<String> {
    let mut out = BTreeSet::new();
    for line in ptx.lines() {
        let mut words = line.split_whitespace();
        while let Some(w) = words.next() {
            if w == ".entry" {
                if let Some(name) = words.next() {
                    let name = name.split('(').next().unwrap_or(name);
                    if !name.is_empty() {
                        out.insert(name.to_string());
                    }
                }
                break;
            }
        }
    }
    out.into_iter().collect()
}

/// A Rust identifier for a kernel's symbol name: upper snake case, non-identifier characters
/// replaced by `_`, a leading digit prefixed.
pub(crate) fn const_ident(name: &str) -> String {
    c_ident(name).to_ascii_uppercase()
}

/// What the generated file describes.
#[derive(Debug)]
pub(crate) struct Generated<'a> {
    pub name: &'a str,
    pub fatbin_file: &'a str,
    pub fatbin_len: usize,
    pub archs: &'a [String],
    pub kernels: &'a [String],
    pub container: Container,
    pub compressed: bool,
    pub embed: Embed,
    /// The self-registering object's symbols (used in [`Embed::HipObject`] mode).
    pub symbols: &'a HostSymbols,
    /// Where each image lies in the container (`IMAGES`, `image()`).
    pub images: &'a [ImageRef],
}

fn str_list(items: &[String]) -> String {
    let mut s = String::from("&[");
    for (i, it) in items.iter().enumerate() {
        if i > 0 {
            s.push_str(", ");
        }
        write!(s, "{it:?}").unwrap();
    }
    s.push(']');
    s
}

/// The text of `$OUT_DIR/<name>.rs`.
pub(crate) fn render(g: &Generated<'_>) -> String {
    let mut s = String::new();
    write_module(&mut s, g).expect("formatting into a String does not fail");
    s
}

/// The generated module, part by part.
fn write_module(s: &mut String, g: &Generated<'_>) -> fmt::Result {
    writeln!(
        s,
        "// @generated by offload-build for `{}`. Use it with\n\
         // include!(concat!(env!(\"OUT_DIR\"), \"/{}.rs\"));\n",
        g.name, g.name
    )?;
    if g.embed == Embed::HipObject {
        write_object_fatbin(s, g)?;
    } else {
        write_included_fatbin(s, g)?;
    }
    writeln!(
        s,
        "/// The architectures in [`fatbin`], sorted.\n#[allow(dead_code)]\npub const ARCHS: &[&str] = {};\n",
        str_list(g.archs)
    )?;
    write_images(s, g)?;
    writeln!(
        s,
        "/// The kernels in [`fatbin`] (symbol names, as `hipModuleGetFunction` takes them), sorted.\n\
         #[allow(dead_code)]\npub const KERNELS: &[&str] = {};\n",
        str_list(g.kernels)
    )?;
    writeln!(
        s,
        "/// The container format of [`fatbin`]: `\"bundle\"`, `\"offload-binary\"` or\n\
         /// `\"cuda-fatbin\"`.\n\
         #[allow(dead_code)]\npub const CONTAINER: &str = {:?};\n\n\
         /// Whether [`fatbin`] is a compressed bundle (`CCOB`).\n\
         #[allow(dead_code)]\npub const COMPRESSED: bool = {};\n",
        container_name(g.container),
        g.compressed
    )?;
    write_kernels(s, g)
}

/// The name of the container in `CONTAINER` and in the description of `fatbin()`.
fn container_name(container: Container) -> &'static str {
    match container {
        Container::Bundle => "bundle",
        Container::OffloadBinary => "offload-binary",
        Container::CudaFatbin => "cuda-fatbin",
    }
}

/// What `fatbin()`'s documentation says the device code is.
fn describe(g: &Generated<'_>) -> String {
    format!(
        "{} {}{} for {} architecture(s), 4096-byte aligned",
        if g.container == Container::CudaFatbin {
            "an NVIDIA fat binary,"
        } else {
            "a"
        },
        container_name(g.container),
        if g.compressed { " (compressed)" } else { "" },
        g.archs.len()
    )
}

/// `fatbin()` over the self-registering object's own `.hip_fatbin`.
///
/// The object carries the bundle in its own `.hip_fatbin`; `fatbin()` reads it there, so the
/// device code is in the program once. The `#[used]` reference keeps the object in a link
/// that does not take it whole (the build script's directive does): its constructor
/// registers the fat binary even when the program names no kernel. `safe static` (an
/// immutable array the object defines) needs no `unsafe` block, so nothing warns in edition
/// 2021 or 2024.
fn write_object_fatbin(s: &mut String, g: &Generated<'_>) -> fmt::Result {
    writeln!(
        s,
        "unsafe extern \"C\" {{\n    \
         #[link_name = {sym:?}]\n    \
         safe static OFFLOAD_BUILD_FATBIN: [u8; {len}];\n}}\n\n\
         #[used]\n\
         static OFFLOAD_BUILD_KEEP: &[u8; {len}] = &OFFLOAD_BUILD_FATBIN;\n\n\
         /// The device code: {what}. These are the bytes in the\n\
         /// `.hip_fatbin` section of the linked object that the HIP runtime registered.\n\
         #[allow(dead_code)]\npub fn fatbin() -> &'static [u8] {{\n    &OFFLOAD_BUILD_FATBIN\n}}\n",
        sym = g.symbols.fatbin,
        len = g.fatbin_len,
        what = describe(g),
    )
}

/// `fatbin()` over the container file, included in the program 4096-byte aligned.
///
/// A bundle that no host object carries goes to `.hip_fatbin` on ELF, where the tools that
/// look for HIP device code (roc-obj-ls, llvm-objdump --offloading, `offload-build inspect`)
/// find it, as in a clang-built program. An NVIDIA fat binary goes to `.nv_fatbin`, where
/// cuobjdump looks for it.
fn write_included_fatbin(s: &mut String, g: &Generated<'_>) -> fmt::Result {
    let section = match (g.embed, g.container) {
        (Embed::FatbinOnly, Container::Bundle) => {
            "#[cfg_attr(all(target_family = \"unix\", not(target_vendor = \"apple\")), \
             unsafe(link_section = \".hip_fatbin\"))]\n"
        }
        (Embed::FatbinOnly, Container::CudaFatbin) => {
            "#[cfg_attr(all(target_family = \"unix\", not(target_vendor = \"apple\")), \
             unsafe(link_section = \".nv_fatbin\"))]\n"
        }
        _ => "",
    };
    writeln!(
        s,
        "#[repr(C, align(4096))]\nstruct OffloadBuildAligned<T: ?Sized>(T);\n\n\
         {section}static OFFLOAD_BUILD_FATBIN: OffloadBuildAligned<[u8; {len}]> =\n    \
         OffloadBuildAligned(*include_bytes!({file:?}));\n",
        len = g.fatbin_len,
        file = g.fatbin_file
    )?;
    writeln!(
        s,
        "/// The device code: {}.\n\
         #[allow(dead_code)]\npub fn fatbin() -> &'static [u8] {{\n    &OFFLOAD_BUILD_FATBIN.0\n}}\n",
        describe(g)
    )
}

/// `IMAGES` and `image()`: per-architecture images as slices of the container (no second
/// copy, no parsing at run time). A compressed bundle's images exist only compressed: none
/// are listed.
fn write_images(s: &mut String, g: &Generated<'_>) -> fmt::Result {
    let base = if g.embed == Embed::HipObject {
        "OFFLOAD_BUILD_FATBIN"
    } else {
        "OFFLOAD_BUILD_FATBIN.0"
    };
    let mut table = String::from("&[\n");
    for i in g.images {
        writeln!(
            table,
            "    ({:?}, {:?}, {base}.split_at({}).1.split_at({}).0),",
            i.arch, i.kind, i.offset, i.len
        )?;
    }
    table.push(']');
    writeln!(
        s,
        "/// Every image in [`fatbin`] as (architecture, kind, bytes), in container order: kind\n\
         /// `cubin`, `ptx`, `code-object`, `bitcode` or `fatbin`; the bytes are the slice of\n\
         /// [`fatbin`] that holds the image (what `cuModuleLoadData` / `hipModuleLoadData` take\n\
         /// for one architecture). Empty for a compressed bundle.\n\
         #[allow(dead_code)]\npub static IMAGES: &[(&str, &str, &[u8])] = {table};\n\n\
         /// The image for `arch` (`sm_90`, `compute_90`, `gfx90a:xnack+`, as in [`ARCHS`]):\n\
         /// machine code (a cubin, a code object) when there is some, else the first image of\n\
         /// that architecture (PTX); `None` when [`IMAGES`] has none.\n\
         #[allow(dead_code)]\npub fn image(arch: &str) -> Option<&'static [u8]> {{\n    \
         let mut first = None;\n    \
         for &(a, kind, bytes) in IMAGES {{\n        \
         if a == arch {{\n            \
         if kind == \"cubin\" || kind == \"code-object\" {{\n                return Some(bytes);\n            }}\n            \
         first = first.or(Some(bytes));\n        }}\n    }}\n    \
         first\n}}\n"
    )
}

/// The names of one kernel in the generated module and header.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct KernelNames {
    /// The symbol in the device code (`_Z5saxpyifPKfPf`, or `vadd` for an `extern "C"`
    /// kernel): what `hipModuleGetFunction` / `cuModuleGetFunction` take.
    pub symbol: String,
    /// The source name: the demangled name without parameters and return type (`saxpy`,
    /// `scale<float>`, `ns::f`); the symbol when it is not a C++ mangled name.
    pub source: String,
    /// The demangled signature as `cpp_demangle` (and `c++filt`) prints it
    /// (`saxpy(int, float, float const*, float*)`, `void scale<float>(float*, float)`); the
    /// symbol when it is not a C++ mangled name.
    pub signature: String,
    /// The constant named after the symbol ([`const_ident`], `_` appended on a clash): every
    /// kernel has one.
    pub symbol_const: String,
    /// The constant named after the source name ([`source_ident`]) of a C++ kernel: only
    /// when no other kernel's source name gives the same identifier and no symbol constant
    /// has it.
    pub source_const: Option<String>,
}

impl KernelNames {
    /// The constant the header declares and the docs name first: the source-name constant
    /// when there is one.
    pub(crate) fn primary_const(&self) -> &str {
        self.source_const.as_deref().unwrap_or(&self.symbol_const)
    }
}

/// The source name and signature of `symbol`, demangled (Itanium C++ ABI, as clang names
/// HIP and CUDA kernels); `None` when it is not a mangled name.
fn demangle(symbol: &str) -> Option<(String, String)> {
    use cpp_demangle::{DemangleOptions, Symbol};
    if !symbol.starts_with("_Z") {
        return None;
    }
    let parsed = Symbol::new(symbol).ok()?;
    let signature = parsed.demangle(&DemangleOptions::new()).ok()?;
    let source = parsed
        .demangle(&DemangleOptions::new().no_params().no_return_type())
        .ok()?;
    Some((source, signature))
}

/// A Rust (and C) identifier for a demangled source name: upper snake case, each run of
/// other characters one `_` (`scale<float>` → `SCALE_FLOAT`, `ns::f` → `NS_F`), none at the
/// ends, a leading digit prefixed.
pub(crate) fn source_ident(source: &str) -> String {
    let mut s = String::new();
    for c in source.chars() {
        if c.is_ascii_alphanumeric() {
            s.push(c.to_ascii_uppercase());
        } else if !s.is_empty() && !s.ends_with('_') {
            s.push('_');
        }
    }
    while s.ends_with('_') {
        s.pop();
    }
    if s.is_empty() || s.starts_with(|c: char| c.is_ascii_digit()) {
        s.insert(0, '_');
    }
    s
}

/// The names of `kernels` (sorted symbols), in that order. The symbol constants are given
/// first, in that order, as before source names existed; then each source-name identifier
/// that exactly one C++ kernel gives and no symbol constant holds.
pub(crate) fn kernel_names(kernels: &[String]) -> Vec<KernelNames> {
    let mut used = BTreeSet::new();
    let mut names: Vec<KernelNames> = kernels
        .iter()
        .map(|k| {
            let mut id = const_ident(k);
            while !used.insert(id.clone()) {
                id.push('_');
            }
            let (source, signature) = demangle(k).unwrap_or_else(|| (k.clone(), k.clone()));
            KernelNames {
                symbol: k.clone(),
                source,
                signature,
                symbol_const: id,
                source_const: None,
            }
        })
        .collect();
    let mut by_ident: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (i, n) in names.iter().enumerate() {
        if n.source != n.symbol {
            by_ident.entry(source_ident(&n.source)).or_default().push(i);
        }
    }
    for (id, owners) in by_ident {
        if let [only] = owners[..] {
            if !used.contains(&id) {
                names[only].source_const = Some(id);
            }
        }
    }
    names
}

/// The `kernels` module: the `Kernel` type, one constant per kernel (with its host handle
/// in the self-registering embedding), the source-name constants, `ALL`, `by_name` and
/// `by_signature`.
fn write_kernels(s: &mut String, g: &Generated<'_>) -> fmt::Result {
    let registered = g.embed == Embed::HipObject;
    writeln!(
        s,
        "/// One kernel per constant: its symbol name, source name and signature, and (in the\n\
         /// self-registering embedding) the host-side handle to pass to `hipLaunchKernel`.\n\
         #[allow(dead_code, non_upper_case_globals)]\npub mod kernels {{"
    )?;
    write_kernel_type(s, registered)?;
    let names = kernel_names(g.kernels);
    for n in &names {
        let (id, k) = (&n.symbol_const, &n.symbol);
        let fields = format!(
            "name: {k:?},\n        source: {:?},\n        signature: {:?},",
            n.source, n.signature
        );
        if registered {
            writeln!(
                s,
                "    unsafe extern \"C\" {{\n        #[link_name = {sym:?}]\n        safe static {id}_HANDLE: u8;\n    }}\n    \
                 /// Kernel `{k}`.\n    pub const {id}: Kernel = Kernel {{\n        {fields}\n        \
                 handle: || ::core::ptr::addr_of!({id}_HANDLE).cast(),\n    }};",
                sym = g.symbols.handle(k)
            )?;
        } else {
            writeln!(
                s,
                "    /// Kernel `{k}`.\n    pub const {id}: Kernel = Kernel {{\n        {fields}\n    }};"
            )?;
        }
        if let Some(source_id) = &n.source_const {
            writeln!(
                s,
                "    /// Kernel `{}` (symbol `{k}`).\n    pub const {source_id}: Kernel = {id};",
                n.signature
            )?;
        }
    }
    write_lookups(s, &names)?;
    writeln!(s, "}}")
}

/// `ALL`, `by_name` and `by_signature`.
fn write_lookups(s: &mut String, names: &[KernelNames]) -> fmt::Result {
    let mut all = String::new();
    for n in names {
        write!(all, "{}, ", n.symbol_const)?;
    }
    writeln!(
        s,
        "\n    /// Every kernel, in the order of `KERNELS` (sorted by symbol name).\n    \
         pub const ALL: &[Kernel] = &[{}];\n\n    \
         /// The kernel whose source name (`saxpy`, `scale<float>`, `ns::f`) or symbol name is\n    \
         /// `name`; `None` when there is none, or several (overloads: see [`by_signature`]).\n    \
         pub fn by_name(name: &str) -> Option<Kernel> {{\n        \
         let mut found = None;\n        \
         for k in ALL {{\n            \
         if k.source == name || k.name == name {{\n                \
         if found.is_some() {{\n                    return None;\n                }}\n                \
         found = Some(*k);\n            }}\n        }}\n        \
         found\n    }}\n\n    \
         /// The kernel whose demangled signature is `signature`, as `c++filt` prints it\n    \
         /// (`saxpy(int, float, float const*, float*)`, `void scale<float>(float*, float)`;\n    \
         /// an `extern \"C\"` kernel's signature is its name); the first in [`ALL`] when two\n    \
         /// symbols demangle alike.\n    \
         pub fn by_signature(signature: &str) -> Option<Kernel> {{\n        \
         ALL.iter().copied().find(|k| k.signature == signature)\n    }}",
        all.trim_end_matches([',', ' '])
    )
}

/// The `Kernel` type: its names, and with a handle (`registered`) the handle and equality by
/// symbol name (names are unique in a build; comparing function pointers is unpredictable,
/// and linted).
fn write_kernel_type(s: &mut String, registered: bool) -> fmt::Result {
    let derives = if registered {
        "Clone, Copy, Debug"
    } else {
        "Clone, Copy, Debug, PartialEq, Eq"
    };
    writeln!(
        s,
        "    /// A kernel of this build.\n    #[derive({derives})]\n    \
         pub struct Kernel {{\n        /// The kernel's symbol name in the device code.\n        \
         pub name: &'static str,\n        source: &'static str,\n        signature: &'static str,"
    )?;
    if registered {
        writeln!(
            s,
            "        handle: fn() -> *const ::core::ffi::c_void,\n    }}\n\n    \
             impl PartialEq for Kernel {{\n        \
             fn eq(&self, other: &Self) -> bool {{\n            self.name == other.name\n        }}\n    }}\n\n    \
             impl Eq for Kernel {{}}\n\n    \
             impl Kernel {{\n        \
             /// The host handle registered for this kernel by the embedded object's constructor\n        \
             /// (`__hipRegisterFunction`); pass it as `function_address` to `hipLaunchKernel`.\n        \
             pub fn handle(&self) -> *const ::core::ffi::c_void {{\n            (self.handle)()\n        }}\n    }}\n"
        )?;
    } else {
        writeln!(s, "    }}\n")?;
    }
    writeln!(
        s,
        "    impl Kernel {{\n        \
         /// The symbol name (`_Z5saxpyifPKfPf`; an `extern \"C\"` kernel's name), what\n        \
         /// `hipModuleGetFunction` and `cuModuleGetFunction` take: the same as `name`.\n        \
         pub const fn mangled(&self) -> &'static str {{\n            self.name\n        }}\n\n        \
         /// The source name: the demangled name without parameters and return type\n        \
         /// (`saxpy`, `scale<float>`, `ns::f`); an `extern \"C\"` kernel's name.\n        \
         pub const fn source_name(&self) -> &'static str {{\n            self.source\n        }}\n\n        \
         /// The demangled signature (`saxpy(int, float, float const*, float*)`); an\n        \
         /// `extern \"C\"` kernel's name.\n        \
         pub const fn signature(&self) -> &'static str {{\n            self.signature\n        }}\n    }}\n"
    )
}

/// A C identifier for a name (the build name: the header's C++ namespace and C prefix):
/// non-identifier characters replaced by `_`, a leading digit prefixed.
fn c_ident(name: &str) -> String {
    let mut s: String = name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    if s.is_empty() || s.starts_with(|c: char| c.is_ascii_digit()) {
        s.insert(0, '_');
    }
    s
}

/// The text of `<name>_kernels.h`, written beside `<name>.rs` in the self-registering
/// embedding: a declaration of each kernel's host handle under its primary constant's name
/// ([`KernelNames::primary_const`], as in the Rust module), in namespace `<name>` for C++
/// and prefixed `<name>_` for C. An `asm` label gives each the object's symbol, so C++
/// kernels (mangled symbols) are declared as easily as `extern "C"` ones.
pub(crate) fn render_header(name: &str, kernels: &[String], symbols: &HostSymbols) -> String {
    let ns = c_ident(name);
    let guard = format!("OFFLOAD_BUILD_{}_KERNELS_H", ns.to_ascii_uppercase());
    let names = kernel_names(kernels);
    let mut cxx = String::new();
    let mut c = String::new();
    for n in &names {
        let label = format!("OFFLOAD_BUILD_LABEL({:?})", symbols.handle(&n.symbol));
        let id = n.primary_const();
        // A signature cannot end the comment early (`operator*/` is no C++ name, but a
        // template argument could still print so).
        let doc = format!("/* {} */\n", n.signature.replace("*/", "* /"));
        cxx += &format!("{doc}extern const char {id} __asm__({label});\n");
        c += &format!("{doc}extern const char {ns}_{id} __asm__({label});\n");
    }
    format!(
        "/* @generated by offload-build for `{name}`: the host handle of each kernel, to pass\n   \
         to hipLaunchKernel (&{ns}::SAXPY in C++, &{ns}_SAXPY in C for a kernel `saxpy`),\n   \
         named as the constants of the Rust module `kernels`. */\n\
         #ifndef {guard}\n#define {guard}\n\n\
         #ifndef OFFLOAD_BUILD_LABEL\n\
         #define OFFLOAD_BUILD_STR2(x) #x\n\
         #define OFFLOAD_BUILD_STR(x) OFFLOAD_BUILD_STR2(x)\n\
         #define OFFLOAD_BUILD_LABEL(sym) OFFLOAD_BUILD_STR(__USER_LABEL_PREFIX__) sym\n\
         #endif\n\n\
         #ifdef __cplusplus\nnamespace {ns} {{\n{cxx}}}  // namespace {ns}\n#else\n{c}#endif\n\n\
         #endif /* {guard} */\n"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ptx_entries() {
        let ptx = ".visible .entry vadd(\n\t.param .u64 a\n)\n.entry _Z5scaleIfEvPT_S0_(\n.func f(";
        assert_eq!(ptx_kernels(ptx), ["_Z5scaleIfEvPT_S0_", "vadd"]);
    }

    #[test]
    fn identifiers() {
        assert_eq!(const_ident("vector_add"), "VECTOR_ADD");
        assert_eq!(const_ident("_Z5scaleIfEvPT_S0_"), "_Z5SCALEIFEVPT_S0_");
        assert_eq!(const_ident("1x"), "_1X");
    }

    fn strings(names: &[&str]) -> Vec<String> {
        names.iter().map(|n| n.to_string()).collect()
    }

    #[test]
    fn source_identifiers() {
        assert_eq!(source_ident("saxpy"), "SAXPY");
        assert_eq!(source_ident("scale<float>"), "SCALE_FLOAT");
        assert_eq!(source_ident("ns::f"), "NS_F");
        assert_eq!(
            source_ident("(anonymous namespace)::k"),
            "ANONYMOUS_NAMESPACE_K"
        );
        assert_eq!(source_ident("dot<256>"), "DOT_256");
    }

    /// HIP and CUDA kernels as clang names them: plain, overloaded, template instances,
    /// namespaced, `extern "C"`; the same rules for PTX `.entry` names.
    #[test]
    fn kernels_by_source_name() {
        let ptx = ".visible .entry _Z5saxpyifPKfPf(\n.visible .entry _Z5saxpyidPKdPd(\n\
                   .visible .entry _Z5scaleIfEvPT_S0_(\n.visible .entry _Z5scaleIiEvPT_S0_(\n\
                   .visible .entry _Z7softmaxPKfPfi(\n.visible .entry vadd(\n\
                   .visible .entry _ZN2ns4fillEPf(\n";
        let names = kernel_names(&ptx_kernels(ptx));
        let table: Vec<(&str, &str, &str, &str, Option<&str>)> = names
            .iter()
            .map(|n| {
                (
                    n.symbol.as_str(),
                    n.source.as_str(),
                    n.signature.as_str(),
                    n.symbol_const.as_str(),
                    n.source_const.as_deref(),
                )
            })
            .collect();
        assert_eq!(
            table,
            [
                (
                    "_Z5saxpyidPKdPd",
                    "saxpy",
                    "saxpy(int, double, double const*, double*)",
                    "_Z5SAXPYIDPKDPD",
                    None
                ),
                (
                    "_Z5saxpyifPKfPf",
                    "saxpy",
                    "saxpy(int, float, float const*, float*)",
                    "_Z5SAXPYIFPKFPF",
                    None
                ),
                (
                    "_Z5scaleIfEvPT_S0_",
                    "scale<float>",
                    "void scale<float>(float*, float)",
                    "_Z5SCALEIFEVPT_S0_",
                    Some("SCALE_FLOAT")
                ),
                (
                    "_Z5scaleIiEvPT_S0_",
                    "scale<int>",
                    "void scale<int>(int*, int)",
                    "_Z5SCALEIIEVPT_S0_",
                    Some("SCALE_INT")
                ),
                (
                    "_Z7softmaxPKfPfi",
                    "softmax",
                    "softmax(float const*, float*, int)",
                    "_Z7SOFTMAXPKFPFI",
                    Some("SOFTMAX")
                ),
                (
                    "_ZN2ns4fillEPf",
                    "ns::fill",
                    "ns::fill(float*)",
                    "_ZN2NS4FILLEPF",
                    Some("NS_FILL")
                ),
                ("vadd", "vadd", "vadd", "VADD", None),
            ]
        );
    }

    /// A source-name constant never takes an identifier a symbol constant has, and names
    /// that differ only in case share none.
    #[test]
    fn source_constants_yield_to_symbol_constants() {
        let names = kernel_names(&strings(&["SAXPY", "_Z4vaddv", "_Z4VADDv", "_Z5saxpyv"]));
        let consts: Vec<_> = names
            .iter()
            .map(|n| (n.symbol_const.as_str(), n.source_const.as_deref()))
            .collect();
        assert_eq!(
            consts,
            [
                ("SAXPY", None),
                ("_Z4VADDV", None),
                ("_Z4VADDV_", None),
                ("_Z5SAXPYV", None)
            ]
        );
    }

    #[test]
    fn renders_lookups_and_a_header() {
        let kernels = strings(&["_Z5saxpyifPKfPf", "_Z5saxpyidPKdPd", "vadd"]);
        let symbols =
            HostSymbols::new(None, "my-k", "x86_64-unknown-linux-gnu", "/o".as_ref(), b"");
        let text = render(&Generated {
            name: "k",
            fatbin_file: "/out/k.hipfb",
            fatbin_len: 8192,
            archs: &[],
            kernels: &kernels,
            container: Container::Bundle,
            compressed: false,
            embed: Embed::HipObject,
            symbols: &symbols,
            images: &[],
        });
        for item in [
            "pub const ALL: &[Kernel] = &[_Z5SAXPYIFPKFPF, _Z5SAXPYIDPKDPD, VADD];",
            "pub fn by_name(name: &str) -> Option<Kernel>",
            "pub fn by_signature(signature: &str) -> Option<Kernel>",
            "signature: \"saxpy(int, double, double const*, double*)\",",
            "pub const fn source_name(&self) -> &'static str",
        ] {
            assert!(text.contains(item), "{item}:\n{text}");
        }
        let header = render_header("my-k", &strings(&["_Z1fi", "_Z1fv", "_Z4vaddv"]), &symbols);
        for item in [
            "#ifndef OFFLOAD_BUILD_MY_K_KERNELS_H",
            "namespace my_k {\n/* f(int) */\nextern const char _Z1FI __asm__(OFFLOAD_BUILD_LABEL(\"_Z1fi\"));\n/* f() */\nextern const char _Z1FV __asm__(OFFLOAD_BUILD_LABEL(\"_Z1fv\"));",
            "/* vadd() */\nextern const char VADD __asm__(OFFLOAD_BUILD_LABEL(\"_Z4vaddv\"));",
            "extern const char my_k_VADD __asm__(OFFLOAD_BUILD_LABEL(\"_Z4vaddv\"));",
        ] {
            assert!(header.contains(item), "{item}:\n{header}");
        }
    }

    #[test]
    fn renders_valid_looking_rust() {
        let archs = vec!["gfx1100".to_string(), "gfx90a".to_string()];
        let kernels = vec!["vadd".to_string()];
        let symbols = HostSymbols::new(
            Some(("pkg", "0.1.0")),
            "k",
            "x86_64-unknown-linux-gnu",
            std::path::Path::new("/t/debug/build/pkg-0123/out"),
            b"",
        );
        for embed in [Embed::FatbinOnly, Embed::HipObject] {
            let text = render(&Generated {
                name: "k",
                fatbin_file: "/out/k.hipfb",
                fatbin_len: 8192,
                archs: &archs,
                kernels: &kernels,
                container: Container::Bundle,
                compressed: false,
                embed,
                symbols: &symbols,
                images: &[ImageRef {
                    arch: "gfx90a".into(),
                    kind: "code-object",
                    offset: 4096,
                    len: 100,
                }],
            });
            assert!(text.contains("pub const ARCHS: &[&str] = &[\"gfx1100\", \"gfx90a\"];"));
            let base = if embed == Embed::HipObject {
                "OFFLOAD_BUILD_FATBIN"
            } else {
                "OFFLOAD_BUILD_FATBIN.0"
            };
            assert!(
                text.contains(&format!(
                    "(\"gfx90a\", \"code-object\", {base}.split_at(4096).1.split_at(100).0),"
                )),
                "{text}"
            );
            assert!(text.contains("pub fn image(arch: &str) -> Option<&'static [u8]>"));
            assert!(text.contains("pub const VADD: Kernel"));
            let registered = embed == Embed::HipObject;
            assert_eq!(text.contains("VADD_HANDLE"), registered);
            // The object's own `.hip_fatbin` instead of a second copy, kept by `#[used]`.
            assert_eq!(text.contains("include_bytes!"), !registered);
            assert_eq!(text.contains("#[used]"), registered);
            assert_eq!(
                text.contains(&format!("#[link_name = {:?}]", symbols.fatbin)),
                registered
            );
            assert_eq!(
                text.contains(&format!("#[link_name = {:?}]", symbols.handle("vadd"))),
                registered
            );
            // Nothing that warns: no `unsafe` block, no derived comparison of the handle.
            assert!(!text.contains("unsafe {"), "{text}");
            assert_eq!(text.contains("PartialEq for Kernel"), registered);
        }
    }
}

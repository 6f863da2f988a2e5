//! Kernels and device variables, read from AMDGPU code objects' own symbol tables.
//!
//! A kernel is a function symbol with a kernel descriptor `<name>.kd` beside it. A device
//! variable is a global (or weak) object symbol that is not a kernel descriptor, not hidden,
//! and not one of clang's tooling symbols (`__hip_cuid_*`). Whether a variable was declared
//! `__constant__` is not recorded in a code object (both kinds live in `.data`/`.bss`), so
//! discovered variables are registered as plain `__device__` variables; see
//! [`DeviceVariable::constant`].

use std::collections::HashSet;

use object::elf;
use object::read::elf::{ElfFile64, FileHeader};
use object::{LittleEndian, Object, ObjectSymbol, SymbolKind};

use super::EmbedError;

/// A device variable to register: `__hipRegisterVar(handle, &shadow, name, name, external,
/// size, constant, 0)`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct DeviceVariable {
    /// The device-side symbol name (also the host shadow's name).
    pub name: String,
    /// Size in bytes (the host shadow is this large).
    pub size: u64,
    /// Declared `extern` on the host (the `is_extern` argument).
    pub external: bool,
    /// Declared `__constant__` (the `is_constant` argument). Not recoverable from a code
    /// object; set it through the emitters' `variable` methods where it matters.
    pub constant: bool,
}

impl DeviceVariable {
    /// A plain `__device__` variable of `size` bytes.
    pub fn new(name: impl Into<String>, size: u64) -> Self {
        DeviceVariable {
            name: name.into(),
            size,
            external: false,
            constant: false,
        }
    }
}

/// The kernels and variables of device code, in symbol-table order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DeviceSymbols {
    /// Kernel names (mangled, as the device code names them).
    pub kernels: Vec<String>,
    /// Device variables.
    pub variables: Vec<DeviceVariable>,
}

impl DeviceSymbols {
    /// Reads the symbols of one AMDGPU ELF code object (executable or relocatable).
    pub fn from_code_object(data: &[u8]) -> Result<DeviceSymbols, EmbedError> {
        let bad = |m: String| EmbedError::DeviceCode(m.into());
        let file = ElfFile64::<LittleEndian>::parse(data)
            .map_err(|e| EmbedError::device("not a 64-bit ELF code object", e))?;
        let header = file.elf_header();
        if header.e_machine(LittleEndian) != elf::EM_AMDGPU {
            return Err(bad(format!(
                "ELF machine {} is not AMDGPU",
                header.e_machine(LittleEndian)
            )));
        }
        let mut symbols: Vec<_> = file.symbols().collect();
        if symbols.is_empty() {
            symbols = file.dynamic_symbols().collect();
        }
        let mut descriptors = HashSet::new();
        for s in &symbols {
            if let Some(k) = s.name().ok().and_then(|n| n.strip_suffix(".kd")) {
                descriptors.insert(k.to_owned());
            }
        }
        let mut out = DeviceSymbols::default();
        for s in &symbols {
            let Ok(name) = s.name() else { continue };
            if s.is_undefined() || s.is_local() || name.is_empty() {
                continue;
            }
            let visibility = s.elf_symbol().st_visibility();
            if visibility == elf::STV_HIDDEN || visibility == elf::STV_INTERNAL {
                continue;
            }
            match s.kind() {
                SymbolKind::Text if descriptors.contains(name) => {
                    out.kernels.push(name.to_owned());
                }
                SymbolKind::Data
                    if !name.ends_with(".kd")
                        && !name.starts_with("__hip_cuid_")
                        && !name.starts_with("llvm.") =>
                {
                    out.variables.push(DeviceVariable::new(name, s.size()));
                }
                _ => {}
            }
        }
        Ok(out)
    }

    /// Adds what `other` has and `self` lacks (by name), keeping the first order. A variable
    /// found twice keeps the larger size.
    pub fn merge(&mut self, other: DeviceSymbols) {
        for k in other.kernels {
            if !self.kernels.contains(&k) {
                self.kernels.push(k);
            }
        }
        for v in other.variables {
            match self.variables.iter_mut().find(|w| w.name == v.name) {
                Some(w) => w.size = w.size.max(v.size),
                None => self.variables.push(v),
            }
        }
    }

    /// Adds a kernel unless present.
    pub(crate) fn add_kernel(&mut self, name: &str) {
        if !self.kernels.iter().any(|k| k == name) {
            self.kernels.push(name.to_owned());
        }
    }

    /// Adds or replaces a variable.
    pub(crate) fn set_variable(&mut self, v: DeviceVariable) {
        match self.variables.iter_mut().find(|w| w.name == v.name) {
            Some(w) => *w = v,
            None => self.variables.push(v),
        }
    }

    /// Adds the kernels and variables the caller named (a variable replaces a discovered one
    /// of the same name) and checks the result ([`DeviceSymbols::validate`]).
    pub(crate) fn with_given(mut self, given: &DeviceSymbols) -> Result<Self, EmbedError> {
        for k in &given.kernels {
            self.add_kernel(k);
        }
        for v in &given.variables {
            self.set_variable(v.clone());
        }
        self.validate()?;
        Ok(self)
    }

    /// Checks that every name can be a host symbol and no name is used twice.
    pub(crate) fn validate(&self) -> Result<(), EmbedError> {
        let mut seen = HashSet::new();
        let names = self
            .kernels
            .iter()
            .chain(self.variables.iter().map(|v| &v.name));
        for n in names {
            if n.is_empty() || n.contains('\0') {
                return Err(EmbedError::Symbol(format!("invalid symbol name {n:?}")));
            }
            if !seen.insert(n) {
                return Err(EmbedError::Symbol(format!(
                    "'{n}' is both a kernel and a variable, or given twice"
                )));
            }
        }
        Ok(())
    }
}

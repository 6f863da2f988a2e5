//! The kernel names of device code, read from what was packed: the symbols of an AMDGPU code
//! object that have a kernel descriptor, the `.entry` directives of PTX text.

use std::collections::BTreeSet;

use object::{Object, ObjectSymbol};

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

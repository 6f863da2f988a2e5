//! clang's `OffloadArch` name table, read out of the `libclang-cpp` the bundler links.
//!
//! The table is `arch_names[]` in `clang/lib/Basic/Cuda.cpp` (clang 19) or
//! `clang/lib/Basic/OffloadArch.cpp` (clang 22): rows `{OffloadArch, const char *Name,
//! const char *VirtualName}` of 24 bytes, starting with
//! `{UNUSED, "", ""}`. In the position-independent library both pointers of every row are
//! `R_X86_64_RELATIVE` relocations whose addends are the strings' addresses. We find the
//! relocation that points at `"sm_20"` (a string only this table uses), walk back to the
//! `UNUSED` row and forward while the rows keep that shape. This is the table
//! `StringToOffloadArch` searches, so it is exactly what the bundler accepts as a processor;
//! no list of candidate names is needed.
//!
//! [`verify_with_bundler`] then confirms the scan found the bundler's table: each bundler keeps
//! every name of its table as the processor of `hip-amdgcn-amd-amdhsa--<name>`, and drops the
//! names only the other clang has (except dashed ones, which clang 19's parser cannot show).

use std::collections::HashMap;

use std::path::Path;
use std::process::Command;

use crate::tools::{Llvm, find_file, par_map, run, run_ok};

/// The names of one clang's table, in clang's order (the first is `""`, the `UNUSED` entry).
pub fn names(llvm: &Llvm) -> Result<Vec<String>, String> {
    let lib = find_file(&llvm.lib(), &format!("libclang-cpp.so.{}", llvm.major))?;
    let data = std::fs::read(&lib).map_err(|e| format!("{}: {e}", lib.display()))?;
    let elf = Elf::parse(&data).map_err(|e| format!("{}: {e}", lib.display()))?;
    let names = elf
        .offload_arch_table()
        .map_err(|e| format!("{}: {e}", lib.display()))?;
    Ok(names)
}

/// Whether `clang-offload-bundler` keeps `name` as the processor of a HIP entry.
fn bundler_keeps(llvm: &Llvm, dir: &Path, i: usize, name: &str) -> Result<bool, String> {
    let bundler = || Command::new(llvm.bin("clang-offload-bundler"));
    let input = format!("-input={}", dir.join("in.bc").display());
    let out = dir.join(format!("arch{}_{i}.bc", llvm.major));
    let entry = format!("hip-amdgcn-amd-amdhsa--{name}");
    let res = run(bundler()
        .arg("-type=bc")
        .arg(format!("-targets=host-x86_64-unknown-linux-gnu,{entry}"))
        .args([&input, &input])
        .arg(format!("-output={}", out.display())))?;
    if !res.status.success() {
        return Err(format!(
            "bundling {entry}: {}",
            String::from_utf8_lossy(&res.stderr)
        ));
    }
    let list = run_ok(
        bundler()
            .args(["-type=bc", "-list"])
            .arg(format!("-input={}", out.display())),
    )?;
    Ok(list.lines().any(|l| l == entry))
}

/// Checks `names` (this LLVM's table, from [`names`]) against this LLVM's bundler; `other`
/// is the other LLVM's table.
pub fn verify_with_bundler(llvm: &Llvm, names: &[String], other: &[String]) -> Result<(), String> {
    let dir = tempfile::tempdir().map_err(|e| format!("temporary directory: {e}"))?;
    std::fs::write(dir.path().join("in.bc"), b"x").map_err(|e| e.to_string())?;
    let probes: Vec<(&str, bool)> = names
        .iter()
        .filter(|n| !n.is_empty())
        .map(|n| (n.as_str(), true))
        .chain(
            other
                .iter()
                .filter(|n| !names.contains(n) && !n.contains('-'))
                .map(|n| (n.as_str(), false)),
        )
        .collect();
    let indexed: Vec<(usize, &(&str, bool))> = probes.iter().enumerate().collect();
    let kept = par_map(&indexed, |&(i, &(n, _))| {
        bundler_keeps(llvm, dir.path(), i, n)
    });
    for (&(name, expected), kept) in probes.iter().zip(kept) {
        if kept? != expected {
            return Err(format!(
                "clang-offload-bundler {} {} {name:?}, but the table read from libclang-cpp says otherwise",
                llvm.version,
                if expected { "drops" } else { "keeps" },
            ));
        }
    }
    Ok(())
}

const R_X86_64_RELATIVE: u32 = 8;
const SHT_RELA: u32 = 4;
const PT_LOAD: u32 = 1;

struct Elf<'a> {
    data: &'a [u8],
    /// (file offset, virtual address, file size) of each `PT_LOAD` segment.
    segments: Vec<(u64, u64, u64)>,
    /// Relocated address → addend, for every `R_X86_64_RELATIVE` relocation.
    relative: HashMap<u64, u64>,
}

fn u16_at(d: &[u8], o: usize) -> Result<u16, String> {
    d.get(o..o + 2)
        .map(|b| u16::from_le_bytes(b.try_into().unwrap()))
        .ok_or_else(|| format!("truncated at {o:#x}"))
}

fn u32_at(d: &[u8], o: usize) -> Result<u32, String> {
    d.get(o..o + 4)
        .map(|b| u32::from_le_bytes(b.try_into().unwrap()))
        .ok_or_else(|| format!("truncated at {o:#x}"))
}

fn u64_at(d: &[u8], o: usize) -> Result<u64, String> {
    d.get(o..o + 8)
        .map(|b| u64::from_le_bytes(b.try_into().unwrap()))
        .ok_or_else(|| format!("truncated at {o:#x}"))
}

fn usize_at(d: &[u8], o: usize) -> Result<usize, String> {
    usize::try_from(u64_at(d, o)?).map_err(|e| e.to_string())
}

impl<'a> Elf<'a> {
    fn parse(data: &'a [u8]) -> Result<Elf<'a>, String> {
        if data.get(..6) != Some(b"\x7fELF\x02\x01") {
            return Err("not a little-endian ELF64 file".into());
        }
        if u16_at(data, 0x12)? != 62 {
            return Err("not an x86-64 ELF file (the relocation scan knows only x86-64)".into());
        }
        let phoff = usize_at(data, 0x20)?;
        let shoff = usize_at(data, 0x28)?;
        let phentsize = usize::from(u16_at(data, 0x36)?);
        let phnum = usize::from(u16_at(data, 0x38)?);
        let shentsize = usize::from(u16_at(data, 0x3a)?);
        let shnum = usize::from(u16_at(data, 0x3c)?);
        let mut segments = Vec::new();
        for i in 0..phnum {
            let p = phoff + i * phentsize;
            if u32_at(data, p)? == PT_LOAD {
                segments.push((
                    u64_at(data, p + 8)?,
                    u64_at(data, p + 16)?,
                    u64_at(data, p + 32)?,
                ));
            }
        }
        let mut relative = HashMap::new();
        for i in 0..shnum {
            let s = shoff + i * shentsize;
            if u32_at(data, s + 4)? != SHT_RELA {
                continue;
            }
            let (off, size) = (usize_at(data, s + 24)?, usize_at(data, s + 32)?);
            for r in (off..off + size).step_by(24) {
                if u64_at(data, r + 8)? & 0xffff_ffff == u64::from(R_X86_64_RELATIVE) {
                    relative.insert(u64_at(data, r)?, u64_at(data, r + 16)?);
                }
            }
        }
        Ok(Elf {
            data,
            segments,
            relative,
        })
    }

    fn offset_to_vaddr(&self, off: u64) -> Option<u64> {
        self.segments
            .iter()
            .find(|&&(o, _, size)| (o..o + size).contains(&off))
            .map(|&(o, v, _)| off - o + v)
    }

    fn vaddr_to_offset(&self, vaddr: u64) -> Option<usize> {
        self.segments
            .iter()
            .find(|&&(_, v, size)| (v..v + size).contains(&vaddr))
            .and_then(|&(o, v, _)| usize::try_from(vaddr - v + o).ok())
    }

    /// The NUL-terminated string at `vaddr`.
    fn c_str(&self, vaddr: u64) -> Option<&'a str> {
        let start = self.vaddr_to_offset(vaddr)?;
        let len = self.data.get(start..)?.iter().position(|&b| b == 0)?;
        std::str::from_utf8(&self.data[start..start + len]).ok()
    }

    /// The row at `row` (address of its enum field): (enum value, name), if it has the shape
    /// of a table row: a small enum value that is not itself a relocated pointer, followed by
    /// two relocated string pointers.
    fn row(&self, row: u64) -> Option<(u32, &'a str)> {
        if self.relative.contains_key(&row) {
            return None;
        }
        let name = *self.relative.get(&(row + 8))?;
        self.relative.get(&(row + 16))?;
        let value = u32_at(self.data, self.vaddr_to_offset(row)?).ok()?;
        (value < 4096).then_some(())?;
        Some((value, self.c_str(name)?))
    }

    fn offload_arch_table(&self) -> Result<Vec<String>, String> {
        let needle = b"\0sm_20\0";
        let hits: Vec<u64> = self
            .data
            .windows(needle.len())
            .enumerate()
            .filter(|(_, w)| *w == needle)
            .filter_map(|(i, _)| self.offset_to_vaddr(i as u64 + 1))
            .collect();
        let mut tables = Vec::new();
        for (&slot, &addend) in &self.relative {
            if !hits.contains(&addend) {
                continue;
            }
            // The enum values increase through the table except that clang 22 declares
            // `Generic` before the Intel entries it lists last; so walk while the rows have
            // the table's shape and their values are new.
            let mut row = slot - 8;
            while self.row(row - 24).is_some() {
                row -= 24;
            }
            let mut names = Vec::new();
            let mut seen = Vec::new();
            while let Some((v, name)) = self.row(row).filter(|&(v, _)| !seen.contains(&v)) {
                names.push(name.to_string());
                seen.push(v);
                row += 24;
            }
            tables.push(names);
        }
        match tables.as_slice() {
            [t] if t.first().is_some_and(|n| n.is_empty()) && t.len() > 10 => Ok(t.clone()),
            _ => Err(format!(
                "expected one OffloadArch table starting with the UNUSED entry \"\", found {tables:?}"
            )),
        }
    }
}

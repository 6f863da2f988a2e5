//! The symbols an archive index lists for an LLVM bitcode member, read from the bitcode's
//! own symbol table (the `SYMTAB_BLOCK`/`STRTAB_BLOCK` pair that clang writes into every
//! bitcode file since LLVM 5), without parsing the IR.
//!
//! LLVM's archive writer (`llvm/lib/Object/ArchiveWriter.cpp`, `getSymbols`) loads a
//! bitcode member as an `IRObjectFile` and lists every symbol that is global, defined and
//! not format-specific, in module symbol table order, under its mangled name. The
//! `irsymtab` stored in the file (`llvm/include/llvm/Object/IRSymtab.h`) is built from the
//! same module symbol table with the same flags, so it yields the same list.
//!
//! Layout read here: the bitstream (`BC` `C0 DE`, optionally inside the `0x0B17C0DE`
//! wrapper) is walked at the top level only; blocks 23 (`STRTAB`) and 25 (`SYMTAB`) hold
//! one record each whose single blob operand is the string table and the symbol table.
//! The symbol table starts with `storage::Header` (little-endian 32-bit words:
//! `Version, Producer{off,size}, Modules{off,n}, Comdats{off,n}, Symbols{off,n}, …`); a
//! `storage::Symbol` is 24 bytes: `Name{off,size}, IRName{off,size}, ComdatIndex, Flags`.

use std::fmt;

/// Bit positions in `storage::Symbol::Flags`.
const FB_UNDEFINED: u32 = 3;
const FB_GLOBAL: u32 = 10;
const FB_FORMAT_SPECIFIC: u32 = 11;

const MODULE_BLOCK: u64 = 8;
const STRTAB_BLOCK: u64 = 23;
const SYMTAB_BLOCK: u64 = 25;

/// Whether `data` is LLVM bitcode (raw or wrapped), as LLVM's `identify_magic` decides.
pub fn is_bitcode(data: &[u8]) -> bool {
    crate::kind::FileKind::sniff(data).is_bitcode()
}

/// What the top level of a bitcode file holds, for an archive symbol table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BitcodeSymbols<'a> {
    /// The names an archive symbol table lists, in order; `None` when the file carries no
    /// symbol table (then LLVM would have to parse the IR).
    pub names: Option<Vec<&'a [u8]>>,
    /// Whether the file holds a module block at all (LLVM archives one that does not as a
    /// blob without symbols).
    pub has_module: bool,
}

/// A bitcode file whose top level or symbol table cannot be read (the message says where).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BitcodeError(pub String);

impl fmt::Display for BitcodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for BitcodeError {}

impl PartialEq<&str> for BitcodeError {
    fn eq(&self, other: &&str) -> bool {
        self.0 == *other
    }
}

/// The names an archive symbol table lists for this bitcode file, in order; `None` when
/// the file carries no symbol table (then LLVM would have to parse the IR).
pub fn archive_symbols(data: &[u8]) -> Result<Option<Vec<&[u8]>>, BitcodeError> {
    read_symbols(data).map(|s| s.names)
}

/// The symbol table of a bitcode file and whether it holds a module (see [`BitcodeSymbols`]).
pub fn read_symbols(data: &[u8]) -> Result<BitcodeSymbols<'_>, BitcodeError> {
    symbols_of(data).map_err(BitcodeError)
}

fn symbols_of(data: &[u8]) -> Result<BitcodeSymbols<'_>, String> {
    let stream = unwrap(data)?;
    let (mut symtab, mut strtab, mut has_module) = (None, None, false);
    let mut r = Bits::new(stream);
    while r.remaining() >= 32 {
        let code = r.fixed(2)?;
        if code != 1 {
            // Anything but a block at the top level: padding or an unknown layout.
            break;
        }
        let block = r.vbr(8)?;
        let abbrev_width = r.vbr(4)? as u32;
        r.align32();
        let words = r.fixed(32)? as usize;
        let start = r.pos / 8;
        let end = start
            .checked_add(words.checked_mul(4).ok_or("block too long")?)
            .filter(|&e| e <= stream.len())
            .ok_or_else(|| format!("bitcode block {block} runs past the end of the file"))?;
        has_module |= block == MODULE_BLOCK;
        if block == SYMTAB_BLOCK || block == STRTAB_BLOCK {
            let blob = read_blob_block(&stream[start..end], abbrev_width)?;
            if block == SYMTAB_BLOCK {
                symtab = blob;
            } else {
                strtab = blob;
            }
        }
        r.pos = end * 8;
    }
    let (Some(symtab), Some(strtab)) = (symtab, strtab) else {
        return Ok(BitcodeSymbols {
            names: None,
            has_module,
        });
    };
    let truncated = || "bitcode symbol table is truncated".to_string();
    let word = |at: usize| -> Result<usize, String> {
        crate::raw::u32_at(symtab, at)
            .map(|w| w as usize)
            .ok_or_else(truncated)
    };
    let (first, count) = (word(28)?, word(32)?);
    // The count is checked against the table before it sizes anything (a 4 KiB file once
    // asked for 24 GiB here).
    if first
        .checked_add(count.saturating_mul(24))
        .is_none_or(|end| end > symtab.len())
    {
        return Err(truncated());
    }
    let mut names = Vec::with_capacity(count);
    for i in 0..count {
        let at = first
            .checked_add(i * 24)
            .ok_or("bitcode symbol table is truncated")?;
        let (name_off, name_len, flags) = (word(at)?, word(at + 4)?, word(at + 20)? as u32);
        let global = flags >> FB_GLOBAL & 1 == 1;
        let undefined = flags >> FB_UNDEFINED & 1 == 1;
        let format_specific = flags >> FB_FORMAT_SPECIFIC & 1 == 1;
        if !global || undefined || format_specific {
            continue;
        }
        let name = name_off
            .checked_add(name_len)
            .and_then(|end| strtab.get(name_off..end))
            .ok_or("bitcode symbol name past the end of the string table")?;
        names.push(name);
    }
    Ok(BitcodeSymbols {
        names: Some(names),
        has_module,
    })
}

/// The bitstream inside an optional bitcode wrapper header.
fn unwrap(data: &[u8]) -> Result<&[u8], String> {
    let kind = crate::kind::FileKind::sniff(data);
    if kind == crate::kind::FileKind::BitcodeWrapper {
        // The offset and size fields, without needing the CPU type after them.
        let (off, size) = (crate::raw::u32_at(data, 8), crate::raw::u32_at(data, 12));
        return off
            .zip(size)
            .and_then(|(o, s)| data.get(o as usize..(o as usize).checked_add(s as usize)?))
            .ok_or_else(|| "bitcode wrapper points past the end of the file".into());
    }
    data.get(4..)
        .filter(|_| kind == crate::kind::FileKind::Bitcode)
        .ok_or_else(|| "not LLVM bitcode".into())
}

/// One operand of an abbreviation.
#[derive(Clone, Copy)]
enum Op {
    Literal,
    Fixed(u32),
    Vbr(u32),
    Array,
    Char6,
    Blob,
}

/// Whether reading an operand consumes input.
fn reads_bits(op: Op) -> bool {
    !matches!(op, Op::Literal | Op::Fixed(0))
}

/// An abbreviation without the operands that read nothing (literals, zero-width fields), so
/// that every operand a record walks reads at least one bit: the work per record is then
/// bounded by the bits it takes, not by the abbreviation's length (an abbreviation of 10,000
/// literals used by every 2-bit record was quadratic). An array keeps its element.
fn reading_ops(ops: Vec<Op>) -> Vec<Op> {
    let mut out = Vec::with_capacity(ops.len());
    let mut i = 0;
    while i < ops.len() {
        match ops[i] {
            Op::Array => {
                out.push(Op::Array);
                out.extend(ops.get(i + 1).copied());
                i += 1;
            }
            op if reads_bits(op) => out.push(op),
            _ => {}
        }
        i += 1;
    }
    out
}

/// The blob of the first record with one (STRTAB_BLOB / SYMTAB_BLOB) in a block body.
/// The operands of a `DEFINE_ABBREV` record.
fn read_abbrev(r: &mut Bits<'_>) -> Result<Vec<Op>, String> {
    let n = r.vbr(5)?;
    let mut ops = Vec::new();
    for _ in 0..n {
        if r.fixed(1)? == 1 {
            r.vbr(8)?;
            ops.push(Op::Literal);
            continue;
        }
        ops.push(match r.fixed(3)? {
            1 => Op::Fixed(r.vbr(5)? as u32),
            2 => Op::Vbr(r.vbr(5)? as u32),
            3 => Op::Array,
            4 => Op::Char6,
            5 => Op::Blob,
            e => return Err(format!("unknown bitcode operand encoding {e}")),
        });
    }
    Ok(ops)
}

fn read_blob_block(body: &[u8], width: u32) -> Result<Option<&[u8]>, String> {
    let mut r = Bits::new(body);
    let mut abbrevs: Vec<Vec<Op>> = Vec::new();
    while r.remaining() >= width as usize {
        match r.fixed(width)? {
            0 => return Ok(None), // END_BLOCK
            1 => return Err("nested block in a bitcode symbol table".into()),
            2 => abbrevs.push(reading_ops(read_abbrev(&mut r)?)), // DEFINE_ABBREV
            3 => {
                let _code = r.vbr(6)?;
                let n = r.vbr(6)?;
                for _ in 0..n {
                    r.vbr(6)?;
                }
            }
            id => {
                let ops = abbrevs
                    .get(id as usize - 4)
                    .ok_or("unknown bitcode abbreviation")?;
                let mut i = 0;
                while i < ops.len() {
                    match ops[i] {
                        Op::Literal => {}
                        Op::Fixed(w) => {
                            r.fixed(w)?;
                        }
                        Op::Vbr(w) => {
                            r.vbr(w)?;
                        }
                        Op::Char6 => {
                            r.fixed(6)?;
                        }
                        Op::Array => {
                            let n = r.vbr(6)?;
                            let elt = *ops.get(i + 1).ok_or("bitcode array without element")?;
                            // Elements that read no bits are skipped, however many.
                            for _ in 0..if reads_bits(elt) { n } else { 0 } {
                                match elt {
                                    Op::Fixed(w) => drop(r.fixed(w)?),
                                    Op::Vbr(w) => drop(r.vbr(w)?),
                                    Op::Char6 => drop(r.fixed(6)?),
                                    _ => {}
                                }
                            }
                            i += 1;
                        }
                        Op::Blob => {
                            let n = r.vbr(6)? as usize;
                            r.align32();
                            let start = r.pos / 8;
                            let blob = body
                                .get(start..start.checked_add(n).ok_or("blob too long")?)
                                .ok_or("bitcode blob past the end of its block")?;
                            return Ok(Some(blob));
                        }
                    }
                    i += 1;
                }
            }
        }
    }
    Ok(None)
}

/// A little-endian bit reader.
struct Bits<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> Bits<'a> {
    fn new(data: &'a [u8]) -> Self {
        Bits { data, pos: 0 }
    }

    fn remaining(&self) -> usize {
        (self.data.len() * 8).saturating_sub(self.pos)
    }

    fn fixed(&mut self, width: u32) -> Result<u64, String> {
        if width > 64 || self.remaining() < width as usize {
            return Err("bitcode ends inside a field".into());
        }
        let mut v = 0u64;
        for i in 0..width as usize {
            let bit = self.data[(self.pos + i) / 8] >> ((self.pos + i) % 8) & 1;
            v |= u64::from(bit) << i;
        }
        self.pos += width as usize;
        Ok(v)
    }

    fn vbr(&mut self, width: u32) -> Result<u64, String> {
        if width < 2 {
            return Err("bitcode VBR width below 2".into());
        }
        let hi = 1u64 << (width - 1);
        let mut v = 0u64;
        let mut shift = 0;
        loop {
            let piece = self.fixed(width)?;
            if shift < 64 {
                v |= (piece & (hi - 1)) << shift;
            }
            if piece & hi == 0 {
                return Ok(v);
            }
            shift += width - 1;
            if shift > 70 {
                return Err("bitcode VBR value too long".into());
            }
        }
    }

    fn align32(&mut self) {
        self.pos = self.pos.div_ceil(32) * 32;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Found by fuzzing (`fuzz/regressions/fat_object/`): 43 bytes whose symbol table block
    /// has an array of 2^60 zero-width elements, which the reader walked one by one.
    #[test]
    fn arrays_of_nothing_are_skipped() {
        let data = include_bytes!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../..",
            "/fuzz/regressions/fat_object/bitcode-array-of-nothing-timeout"
        ));
        let start = std::time::Instant::now();
        let _ = archive_symbols(data);
        assert!(start.elapsed().as_secs() < 1, "{:?}", start.elapsed());
    }

    /// Found by fuzzing (`fuzz/regressions/fat_object/`): a 3.5 KiB bitcode file whose
    /// symbol table claims a billion symbols made the reader reserve 24 GiB.
    #[test]
    fn symbol_count_past_the_table_is_an_error() {
        let data = include_bytes!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../..",
            "/fuzz/regressions/fat_object/bitcode-symbol-count-24gib"
        ));
        let e = archive_symbols(data).unwrap_err();
        assert_eq!(e, "bitcode symbol table is truncated");
    }

    #[test]
    fn rejects_non_bitcode() {
        assert!(!is_bitcode(b"\x7fELF"));
        assert!(archive_symbols(b"\x7fELF").is_err());
        // Magic only: no blocks, no symbol table.
        assert_eq!(archive_symbols(b"BC\xc0\xde").unwrap(), None);
    }
}

//! Writing: [`write_gnu_archive`], the bytes LLVM's `writeArchive` writes for a
//! deterministic GNU archive, symbol table and long-name table included.

use std::borrow::Cow;

use crate::bundle::symbols::{SymbolRules, member_symbols};
use crate::raw::AR_MAGIC;

use super::error::{SymbolsError, WriteArchiveError};
use super::reader::HEADER;

/// A member of an archive to write.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewMember<'a> {
    /// The member name.
    pub name: Vec<u8>,
    /// Its contents.
    pub data: Cow<'a, [u8]>,
}

/// Writes a deterministic GNU archive exactly as LLVM's `writeArchive` does (see the
/// module documentation).
pub fn write_gnu_archive(members: &[NewMember<'_>]) -> Result<Vec<u8>, WriteArchiveError> {
    write_gnu_archive_with(members, |data| member_symbols(data, SymbolRules::Bundler))
}

/// [`write_gnu_archive`] with the caller's rule for a member's symbols: `symbols(data)`
/// gives `None` for a member that is not a symbolic file, else its archive symbols in order
/// (clang-offload-packager, for one, refuses what it cannot list).
pub fn write_gnu_archive_with(
    members: &[NewMember<'_>],
    symbols_of: impl Fn(&[u8]) -> Result<Option<Vec<Vec<u8>>>, SymbolsError>,
) -> Result<Vec<u8>, WriteArchiveError> {
    if members.is_empty() {
        return Ok(AR_MAGIC.to_vec());
    }
    let t = ArchiveTables::build(members, symbols_of)?;
    let num_syms: usize = t.symbols.iter().map(Vec::len).sum();
    let member_len =
        |i: usize| t.headers[i].len() + members[i].data.len() + (members[i].data.len() & 1);
    let string_member = if t.long_names.is_empty() {
        0
    } else {
        HEADER + t.long_names.len() + (t.long_names.len() & 1)
    };
    let symtab_size = |offset_size: usize| {
        let s = offset_size + num_syms * offset_size + t.sym_names.len();
        s + (s & 1)
    };
    let last_header: usize = (0..members.len().saturating_sub(1)).map(member_len).sum();
    let headers_size32 = AR_MAGIC.len() + HEADER + symtab_size(4) + string_member;
    let sym64 = headers_size32 + last_header >= 1 << 32;
    let offset_size = if sym64 { 8 } else { 4 };
    let headers_size = AR_MAGIC.len() + HEADER + symtab_size(offset_size) + string_member;

    let total: usize = headers_size + (0..members.len()).map(member_len).sum::<usize>();
    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(AR_MAGIC);
    if !t.sym_names.is_empty() {
        let size = symtab_size(offset_size);
        let name = if sym64 { "/SYM64/" } else { "/" };
        out.extend_from_slice(
            format!("{name:<16}{:<12}{:<6}{:<6}{:<8o}{size:<10}`\n", 0, 0, 0, 0).as_bytes(),
        );
        let offsets = (0..members.len()).scan(headers_size, |pos, i| {
            let at = *pos;
            *pos += member_len(i);
            Some(std::iter::repeat_n(at, t.symbols[i].len()))
        });
        write_symbol_table(&mut out, sym64, num_syms, offsets.flatten(), &t.sym_names)?;
    }
    if !t.long_names.is_empty() {
        let size = t.long_names.len() + (t.long_names.len() & 1);
        out.extend_from_slice(format!("{:<48}{size:<10}`\n", "//").as_bytes());
        out.extend_from_slice(&t.long_names);
        if t.long_names.len() & 1 == 1 {
            out.push(b'\n');
        }
    }
    for (h, m) in t.headers.iter().zip(members) {
        out.extend_from_slice(h);
        out.extend_from_slice(&m.data);
        if m.data.len() & 1 == 1 {
            out.push(b'\n');
        }
    }
    Ok(out)
}

/// The parts of a GNU archive that depend on every member: the long-name table, the symbol
/// names, and per member its header and the offsets of its symbols' names.
struct ArchiveTables {
    long_names: Vec<u8>,
    sym_names: Vec<u8>,
    headers: Vec<Vec<u8>>,
    symbols: Vec<Vec<usize>>,
}

impl ArchiveTables {
    fn build(
        members: &[NewMember<'_>],
        symbols_of: impl Fn(&[u8]) -> Result<Option<Vec<Vec<u8>>>, SymbolsError>,
    ) -> Result<ArchiveTables, WriteArchiveError> {
        let mut t = ArchiveTables {
            long_names: Vec::new(),
            sym_names: Vec::new(),
            headers: Vec::with_capacity(members.len()),
            symbols: Vec::with_capacity(members.len()),
        };
        let mut long_seen: Vec<(&[u8], usize)> = Vec::new();
        let mut has_object = false;
        for m in members {
            let header = t.member_header(m, &mut long_seen);
            t.headers.push(header);
            let syms = symbols_of(&m.data).map_err(|error| WriteArchiveError::Symbols {
                member: String::from_utf8_lossy(&m.name).into_owned(),
                error,
            })?;
            let mut offsets = Vec::new();
            if let Some(names) = syms {
                has_object = true;
                for name in names {
                    offsets.push(t.sym_names.len());
                    t.sym_names.extend_from_slice(&name);
                    t.sym_names.push(0);
                }
            }
            t.symbols.push(offsets);
        }
        if has_object && t.sym_names.is_empty() {
            t.sym_names.extend_from_slice(&[0, 0, 0]);
        }
        Ok(t)
    }

    /// The header of member `m`; a name of 16 bytes or more, or with a `/`, goes to the
    /// long-name table once (`long_seen`: the names already there, with their offsets).
    fn member_header<'m>(
        &mut self,
        m: &'m NewMember<'_>,
        long_seen: &mut Vec<(&'m [u8], usize)>,
    ) -> Vec<u8> {
        let mut h = Vec::with_capacity(HEADER);
        if m.name.len() >= 16 || m.name.contains(&b'/') {
            let at = match long_seen.iter().find(|(n, _)| *n == &m.name[..]) {
                Some(&(_, at)) => at,
                None => {
                    let at = self.long_names.len();
                    self.long_names.extend_from_slice(&m.name);
                    self.long_names.extend_from_slice(b"/\n");
                    long_seen.push((&m.name, at));
                    at
                }
            };
            h.extend_from_slice(format!("/{at:<15}").as_bytes());
        } else {
            let mut n = m.name.clone();
            n.push(b'/');
            h.extend_from_slice(&n);
            h.resize(16, b' ');
        }
        let size = m.data.len();
        h.extend_from_slice(
            format!("{:<12}{:<6}{:<6}{:<8o}{:<10}`\n", 0, 0, 0, 0o644, size).as_bytes(),
        );
        h
    }
}

/// The symbol table member's contents (after its header): the count, each symbol's member
/// offset, the names, padded to an even size. Big-endian 32-bit offsets, or 64-bit ones for
/// `/SYM64/`.
fn write_symbol_table(
    out: &mut Vec<u8>,
    sym64: bool,
    num_syms: usize,
    offsets: impl Iterator<Item = usize>,
    names: &[u8],
) -> Result<(), WriteArchiveError> {
    let put = |out: &mut Vec<u8>, v: usize| -> Result<(), WriteArchiveError> {
        if sym64 {
            out.extend_from_slice(&(v as u64).to_be_bytes());
        } else {
            let v = u32::try_from(v).map_err(|_| WriteArchiveError::TooLarge)?;
            out.extend_from_slice(&v.to_be_bytes());
        }
        Ok(())
    };
    put(out, num_syms)?;
    for offset in offsets {
        put(out, offset)?;
    }
    out.extend_from_slice(names);
    let offset_size = if sym64 { 8 } else { 4 };
    let written = offset_size + num_syms * offset_size + names.len();
    if written & 1 == 1 {
        out.push(0);
    }
    Ok(())
}

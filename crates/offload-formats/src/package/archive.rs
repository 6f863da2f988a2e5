//! The static archive clang-offload-packager writes for `--archive`: LLVM's
//! `writeArchive` in GNU format, deterministic (times, owners 0; mode 644), with a
//! symbol table when a member defines global symbols.
//!
//! - Member names under 16 bytes without `/` are stored inline as `name/`; others
//!   go to the `//` name table (`name/\n`, each distinct name once) and are
//!   referenced as `/offset`. Members are padded to even sizes with `\n`.
//! - The symbol table (`/`) lists, per member in order, the names of its defined
//!   global symbols that are not format-specific: for ELF members those of
//!   `.symtab` (binding not local, section not undefined, type not FILE or
//!   SECTION); for bitcode members those of the module's symbol table (the
//!   `SYMTAB_BLOCK` clang writes, i.e. LLVM's `irsymtab`). Other members have none.
//!   No symbols, no table.
//!
//! COFF, Mach-O, wasm or XCOFF members with symbols are refused. The bytes are written by
//! [`crate::bundle::archive::write_gnu_archive_with`], the writer of device archives.

use std::borrow::Cow;
use std::fmt;

use crate::bundle::archive::{
    NewMember, SymbolRules, SymbolsError, WriteArchiveError, write_gnu_archive_with,
};

/// Why an archive cannot be written.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum PackageArchiveError {
    /// A member's symbols cannot be listed.
    Symbols {
        /// The member's name.
        member: String,
        /// What went wrong.
        error: SymbolsError,
    },
    /// The archive would be larger than the 32-bit symbol table can address.
    TooLarge,
}

impl fmt::Display for PackageArchiveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PackageArchiveError::Symbols { member, error } => {
                write!(
                    f,
                    "cannot list the symbols of archive member '{member}': {error}"
                )
            }
            PackageArchiveError::TooLarge => {
                f.write_str("archives over 4 GiB (64-bit symbol table) are not supported")
            }
        }
    }
}

impl std::error::Error for PackageArchiveError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            PackageArchiveError::Symbols { error, .. } => Some(error.inner()),
            PackageArchiveError::TooLarge => None,
        }
    }
}

/// Writes the archive of `members` (`(name, data)`, in order), with
/// [`SymbolRules::Packager`] as the rule for symbols.
pub fn write_archive(members: &[(&str, &[u8])]) -> Result<Vec<u8>, PackageArchiveError> {
    let members: Vec<NewMember<'_>> = members
        .iter()
        .map(|(name, data)| NewMember {
            name: crate::id::spell::bytes(name).into_owned(),
            data: Cow::Borrowed(data),
        })
        .collect();
    write_gnu_archive_with(&members, |data| {
        crate::bundle::archive::member_symbols(data, SymbolRules::Packager)
    })
    .map_err(|e| match e {
        WriteArchiveError::Symbols { member, error } => {
            PackageArchiveError::Symbols { member, error }
        }
        _ => PackageArchiveError::TooLarge,
    })
}

/// The archive symbols a member defines, by clang-offload-packager's rules: the one
/// implementation, [`member_symbols`](crate::bundle::archive::member_symbols), with
/// [`SymbolRules::Packager`] (kept for callers of this path, such as the fuzz targets).
pub fn member_symbols(data: &[u8]) -> Result<Option<Vec<Vec<u8>>>, SymbolsError> {
    crate::bundle::archive::member_symbols(data, SymbolRules::Packager)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_and_long_names() {
        let a = write_archive(&[("m.bin", b"ABCDEFGHIJ")]).unwrap();
        // Bytes written by clang-offload-packager 19 and llvm-offload-binary 22.
        let mut expect =
            b"!<arch>\nm.bin/          0           0     0     644     10        `\nABCDEFGHIJ"
                .to_vec();
        assert_eq!(a, expect);
        let a = write_archive(&[("./m.bin", b"x"), ("./m.bin", b"yz")]).unwrap();
        expect =
            b"!<arch>\n//                                              10        `\n./m.bin/\n\n"
                .to_vec();
        expect
            .extend_from_slice(b"/0              0           0     0     644     1         `\nx\n");
        expect
            .extend_from_slice(b"/0              0           0     0     644     2         `\nyz");
        assert_eq!(a, expect);
    }

    #[test]
    fn unreadable_bitcode_has_no_symbols_and_no_panic() {
        for n in 0..64 {
            let mut data = b"BC\xc0\xde".to_vec();
            data.extend((0..n).map(|i| (i * 37 + 11) as u8));
            assert_eq!(member_symbols(&data), Ok(Some(Vec::new())));
        }
        let wrapped = b"\xde\xc0\x17\x0b\0\0\0\0\xff\xff\xff\xff\x10\0\0\0";
        assert_eq!(member_symbols(wrapped), Ok(Some(Vec::new())));
        assert_eq!(member_symbols(b"text"), Ok(None));
    }
}

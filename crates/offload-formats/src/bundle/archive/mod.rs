//! Heterogeneous device archives: `ar` archives whose members are fat objects or bundles,
//! unbundled per target into one device archive each (clang-offload-bundler `-type=a
//! -unbundle`, spec A.8).
//!
//! - [`Archive`] reads GNU (SysV) and BSD `ar` archives with `object`'s reader, the one the
//!   offload-binary scanner and `inspect` use: symbol tables are skipped, GNU long names
//!   (`//`, `/<offset>`) and BSD names (`#1/<len>`) resolved. Thin archives are refused, and
//!   so are long-name tables named over and over (`check_long_names`). A malformed archive
//!   is a [`DeviceArchiveError`] naming the member header's offset and what is wrong there. Member names must be plain file
//!   names: a name with `/` or `\`, or `.`/`..`, is an error (LLVM would quietly take the
//!   last path component).
//! - [`unbundle_archive`] applies LLVM's algorithm: for every member in archive order (CCOB
//!   members decompressed, see [`decompress_member`]), every bundle entry (fat-object
//!   sections in section order, binary bundle entries in LLVM's listing order) is copied
//!   into the archive of **every** compatible target, named
//!   `<stem>-<bundle ID><stem><ext>` with `:` replaced by `_` (`ext` = `.bc` when the
//!   entry's target ID contains `gfx`, `.cubin` for `sm_`, else the member's extension).
//!   Members that are neither (plain objects, other files) are skipped.
//! - [`write_gnu_archive`] writes what LLVM's `writeArchive(…, NormalSymtab, K_GNU,
//!   Deterministic)` writes, byte for byte: `!<arch>\n`, a symbol table `/` when any member
//!   is a symbolic file (bitcode via its embedded symbol table, see [`super::bitcode`], or an
//!   object file; 32-bit big-endian offsets, or `/SYM64/` past 4 GiB; names padded to an even
//!   size), the long-name table `//` (entries `name/\n`, deduplicated), then each member
//!   with mtime, uid and gid 0, mode 644 and a `\n` pad to an even size. An archive without
//!   members is the 8 bytes `!<arch>\n`. (The `ar` crate cannot write LLVM's symbol table,
//!   hence this writer.)
//!
//! A host entry (a fat-object section holding one zero byte) stands for the host object
//! with the bundle sections removed ([`super::fatobj::remove_bundle_sections`]); LLVM gets
//! those bytes from llvm-objcopy, so a host target's archive is not byte-identical to
//! LLVM's (device archives are).

mod check;
mod error;
mod members;
mod reader;
mod unbundle;
mod writer;

pub use super::symbols::{SymbolRules, member_symbols};
pub use crate::raw::AR_MAGIC;
pub use check::check_archive;
pub use error::{
    CheckArchiveError, DecompressMemberError, DeviceArchiveError, MemberError, SymbolsError,
    UnbundleError, WriteArchiveError,
};
pub use members::decompress_member;
pub(crate) use reader::check_long_names;
pub use reader::{Archive, Member, NOT_AN_ARCHIVE, has_archive_magic};
pub use unbundle::{UnbundleOptions, device_member_name, unbundle_archive};
pub use writer::{NewMember, write_gnu_archive, write_gnu_archive_with};

#[cfg(test)]
mod tests;

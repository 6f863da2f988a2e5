//! Target triples: a port of the parts of LLVM 22's `llvm::Triple` that
//! clang-offload-bundler depends on.
//!
//! The facts here come from `llvm/lib/TargetParser/Triple.cpp` and
//! `llvm/include/llvm/TargetParser/Triple.h` of LLVM 22 (plus the pieces of
//! `ARMTargetParser.cpp`, `ARMTargetParserCommon.cpp` and `ARMTargetParser.def`
//! that `Triple` calls to recognise ARM architecture names):
//!
//! - [`Triple::new`] mirrors `llvm::Triple(const Twine &)`: it keeps the string
//!   untouched and parses the first four `-`-separated components positionally.
//! - [`normalize()`] mirrors `llvm::Triple::normalize(StringRef, CanonicalForm)`,
//!   including its component shuffling and its Windows, Android, SUSE and DXIL
//!   special cases, byte for byte.
//! - [`Triple::is_compatible_with`] mirrors `llvm::Triple::isCompatibleWith`,
//!   which the bundler uses to match requested targets against bundle entries.
//!
//! The parse functions ([`parse_arch`], [`parse_sub_arch`], [`parse_vendor`],
//! [`parse_os`], [`parse_environment`], [`parse_format`]) reproduce LLVM's
//! `StringSwitch` chains, whose order matters where one name is a prefix of
//! another (`wasip1` before `wasi`, `muslwali` before `musl`, ...), along with
//! LLVM's quirks: for instance `ARM::parseArch` matches by suffix, so the
//! architecture name `ve` carries the ARM sub-architecture `v7ve`.

mod arm;
mod names;
mod normalize;
mod parse;
mod parsed;

pub use names::{Arch, Environment, ObjectFormat, Os, SubArch, Vendor};
pub use normalize::{CanonicalForm, NormalizeError, normalize, try_normalize};
pub use parse::{
    parse_arch, parse_environment, parse_format, parse_os, parse_sub_arch, parse_vendor,
};
pub use parsed::{Triple, default_format};

#[cfg(test)]
mod tests;

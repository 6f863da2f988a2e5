//! Tables read off the installed LLVM 19 and 22 tools by `dev-tools/gen-tables`.
//!
//! Every file here except this one is written whole by `cargo run -p gen-tables` (see
//! `dev-tools/README.md`) and checked against the tools by that crate's test; do not edit
//! them by hand. rustfmt leaves them alone so that they stay byte-identical to the
//! generator's output.

#[rustfmt::skip]
pub(crate) mod amdgcn;
#[rustfmt::skip]
pub(crate) mod offload_arch;
#[cfg(test)]
#[rustfmt::skip]
pub(crate) mod triple_golden;

//! The toolchain room: finding the compiler and the installs around it (ROCm, a CUDA toolkit or
//! NVIDIA's wheels, `ptxas`), what the compiler supports, and the spelling of each compiler's
//! commands (`clang.rs`, `nvcc.rs`) from the plan's [`crate::builder::job::CompileOptions`].
//! The discovery order is the builder's documentation
//! ([toolchain discovery](crate::builder#toolchain-discovery)).

pub(crate) mod clang;
pub(crate) mod cuda;
pub(crate) mod direct;
pub(crate) mod discover;
pub(crate) mod found;
pub(crate) mod info;
pub(crate) mod nvcc;
pub(crate) mod nvcc_steps;
pub(crate) mod paths;
pub(crate) mod ptxas;
pub(crate) mod rocm;

pub(crate) use discover::{Wanted, discover, flag_supported};
pub(crate) use found::Toolchain;

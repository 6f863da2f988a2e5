//! The public options of a build: which compiler, language, container and embedding.

/// Which compiler compiles CUDA sources ([`Build::cuda_compiler`](crate::Build::cuda_compiler)).
///
/// # Example
///
/// ```
/// use offload_build::{Build, CompilerKind, Language};
///
/// Build::new()
///     .language(Language::Cuda)
///     .cuda_compiler(CompilerKind::Nvcc);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum CompilerKind {
    /// clang (`-x cuda --cuda-device-only`, then `ptxas`); HIP is always compiled by clang.
    #[default]
    Clang,
    /// NVIDIA's nvcc (`-ptx`, then `-cubin`), as CMake's CUDA language and the `cc` crate use
    /// it.
    Nvcc,
}

/// The source language.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Language {
    /// HIP for AMD GPUs (`.hip`; `-x hip`).
    #[default]
    Hip,
    /// CUDA for NVIDIA GPUs (`.cu`; `-x cuda`), compiled by clang to PTX (and cubin with
    /// `ptxas`).
    Cuda,
}

/// The container the device code is packed into.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Container {
    /// A clang-offload-bundler bundle (what the HIP runtime registers from `.hip_fatbin` and
    /// `hipModuleLoadData` loads). The default for HIP.
    Bundle,
    /// Offload binaries (clang-offload-packager / `.llvm.offloading`, the new offload driver).
    /// The default for CUDA.
    OffloadBinary,
    /// An NVIDIA fat binary ([`crate::nvfatbin`], magic `0xBA55ED50`) holding each cubin and
    /// PTX of a CUDA build, written by this crate (no `fatbinary` tool): what
    /// `cuModuleLoadData` / `cuModuleLoadFatBinary` (and cudarc's, cust's module loaders)
    /// take, and what `cuobjdump` lists. CUDA only, with [`Embed::ContainerOnly`]: on ELF targets
    /// the generated `container()` lies in a `.nv_fatbin` section, where `cuobjdump` and
    /// `offload-build inspect` find it. Each entry is named after the build (`cuobjdump -xelf`
    /// writes `<name>.sm_80.cubin`); PTX is stored as clang wrote it.
    CudaFatbin,
}

/// How the packed device code reaches the program.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Embed {
    /// A host object with `.hip_fatbin`, the `HIPF` wrapper and a constructor that registers
    /// the fat binary and every kernel with the HIP runtime (what clang emits for a HIP
    /// translation unit); kernels are launched through the handles in the generated `kernels`
    /// module, and the generated `container()` reads the object's own `.hip_fatbin`, so the
    /// device code is in the program once.
    ///
    /// - **Registered whether or not the program names a kernel**: the library is linked
    ///   whole (`cargo:rustc-link-lib=static:+whole-archive=<name>-<hash>`), and the generated
    ///   module also keeps the object with a `#[used]` reference (for links that do not go
    ///   through that directive). Either alone is enough for executables, `cdylib`s and
    ///   programs whose only use of the crate is a constant such as `ARCHS`. A Rust
    ///   `staticlib` linked by a C linker is the exception, as for any static library with a
    ///   constructor: link it whole, or name one of its symbols.
    /// - **Unique per build**: the library `lib<name>-<hash>.a` and every global symbol of the
    ///   object (the kernel handles `__offload_build_<hash>_k_<kernel>`, the bundle's start
    ///   `__offload_build_<hash>_fatbin`), the hash covering the package, its version, the
    ///   build name, the target and the output directory. Two crates each with a kernel
    ///   `saxpy` (and each with a build named `kernels`) link into one program; both fat
    ///   binaries register and each crate's `kernels::SAXPY.handle()` is the handle registered
    ///   for its own fat binary. Outside Cargo (`offload-build compile`, the CMake package)
    ///   the handles keep the kernels' symbol names; `<name>_kernels.h` declares them for C
    ///   and C++ (see [`Build::try_compile`](crate::Build::try_compile)).
    /// - The generated module compiles without warnings (`-D warnings`) in editions 2021 and
    ///   2024.
    HipObject,
    /// A host object with the container in `.llvm.offloading`, for `clang-linker-wrapper`
    /// (the new offload driver). Linked as `lib<name>-<hash>.a`.
    NewDriverObject,
    /// Only the container file in `OUT_DIR`, included in the program by the generated
    /// `container()` (`include_bytes!`), to load at run time (`hipModuleLoadData`). Links
    /// nothing.
    #[default]
    ContainerOnly,
}

#[allow(non_upper_case_globals)]
impl Embed {
    /// The old name of [`Embed::ContainerOnly`]: "fatbin" names NVIDIA's container only.
    ///
    /// ```
    /// #![allow(deprecated)]
    /// use offload_build::Embed;
    /// assert_eq!(Embed::FatbinOnly, Embed::ContainerOnly);
    /// ```
    #[deprecated(since = "0.2.0", note = "renamed `Embed::ContainerOnly`")]
    pub const FatbinOnly: Embed = Embed::ContainerOnly;
}

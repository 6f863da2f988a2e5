//! Compiles the two kernel files for four AMD GPU architectures, in parallel and cached,
//! into `$OUT_DIR/kernels.hipfb` and `$OUT_DIR/kernels.rs`.
//!
//! The architectures are fixed here (the builder call comes first in offload-build's
//! resolution order); drop the `.archs(..)` line to take them from `OFFLOAD_ARCH`, the
//! machine's GPUs or the default set instead.

fn main() {
    let compiled = offload_build::Build::new()
        .files(["kernels/vector_add.hip", "kernels/scale.hip"])
        .include("kernels")
        .define("VECTOR_ADD_BLOCK", Some("256"))
        .archs("gfx90a;gfx942;gfx1100;gfx1201")
        .compile("kernels");
    println!(
        "cargo:rustc-env=HIP_VECTOR_ADD_COMPILER={}",
        compiled.compiler_version.unwrap_or_default()
    );
}

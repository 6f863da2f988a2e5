//! candle-flash-attn 0.11.1's build script (cudaforge's `KernelBuilder::build_lib`) switched
//! to offload-build: the same sources, flags and architecture, `host_code(true)`, nothing
//! set by hand (no job count, no memory limit). The bench names the sources, CUTLASS and the
//! architecture in `HEAVY_SOURCES`, `HEAVY_CUTLASS` and `HEAVY_ARCH`; with no sources it
//! builds nothing (the bench's warm-up, which builds this script).

fn main() {
    // HEAVY_RUN: the bench's name of a run, which makes Cargo run this script again.
    for v in ["HEAVY_SOURCES", "HEAVY_CUTLASS", "HEAVY_ARCH", "HEAVY_RUN"] {
        println!("cargo:rerun-if-env-changed={v}");
    }
    let sources = std::env::var("HEAVY_SOURCES").unwrap_or_default();
    let sources: Vec<&str> = sources.split_whitespace().collect();
    if sources.is_empty() {
        return;
    }
    let cutlass = std::env::var("HEAVY_CUTLASS").expect("HEAVY_CUTLASS");
    let arch = std::env::var("HEAVY_ARCH").unwrap_or_else(|_| "sm_80".into());
    let mut b = offload_build::Build::new();
    b.files(&sources)
        .archs(&arch)
        .host_code(true)
        .include(format!("{cutlass}/include"))
        .include(format!("{cutlass}/tools/util/include"));
    // candle-flash-attn's arguments, then cudaforge's own (`--default-stream per-thread`,
    // `-DUSE_CUTLASS`, `-Xcompiler -fPIC`).
    for f in [
        "-std=c++17",
        "-O3",
        "-U__CUDA_NO_HALF_OPERATORS__",
        "-U__CUDA_NO_HALF_CONVERSIONS__",
        "-U__CUDA_NO_HALF2_OPERATORS__",
        "-U__CUDA_NO_BFLOAT16_CONVERSIONS__",
        "--expt-relaxed-constexpr",
        "--expt-extended-lambda",
        "--use_fast_math",
        "--verbose",
        "-DCANDLE_FLASH_ATTN_HEADER_HASH=0x0",
        "--default-stream",
        "per-thread",
        "-DUSE_CUTLASS",
        "-Xcompiler",
        "-fPIC",
    ] {
        b.flag(f);
    }
    b.compile("flashattention");
}

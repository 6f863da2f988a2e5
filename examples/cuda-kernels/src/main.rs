//! Checks what this executable carries — the NVIDIA fat binary `build.rs` made of the
//! kernels in `kernels/` — from the generated module alone: every kernel is there under its
//! C++ source name (`kernels::by_name("transpose<float>")`, the constant
//! `kernels::TRANSPOSE_FLOAT`) and in every image, and each architecture has a cubin and a
//! PTX image per source. Then, when an NVIDIA driver (`libcuda.so`) and a GPU are present, it
//! loads the images for that GPU with `cuModuleLoadData` through cudarc (which opens the
//! driver at run time, so the build needs no driver), launches every kernel by name and
//! checks the results. Without a driver or a GPU the launches are skipped with a message
//! (exit status 0).

use std::fmt::Debug;
use std::process::ExitCode;
use std::sync::Arc;

use cudarc::driver::{
    CudaContext, CudaModule, CudaStream, DeviceRepr, DriverError, LaunchConfig, PushKernelArg,
    ValidAsZeroBits,
};
use cudarc::nvrtc::Ptx;

include!(concat!(env!("OUT_DIR"), "/kernels.rs"));

/// The kernels of `kernels/*.cu`, by source name: `extern "C"` kernels by their names, the
/// template kernel's instances as C++ spells them.
const EXPECTED_KERNELS: [&str; 7] = [
    "axpy_half",
    "axpy_bf16",
    "square_add_half2",
    "transpose<float>",
    "transpose<double>",
    "block_sum_shared",
    "cub_sum",
];

/// The sources `build.rs` compiles: one cubin and one PTX image each per architecture.
const SOURCES: usize = 3;

/// The architectures `build.rs` asks for.
const EXPECTED_ARCHS: [&str; 2] = ["sm_80", "sm_90"];

fn main() -> ExitCode {
    println!(
        "cuda-kernels: {} bytes of device code ({CONTAINER}), built by {}",
        container().len(),
        env!("CUDA_KERNELS_COMPILER")
    );
    for (arch, kind, bytes) in IMAGES {
        println!("  {arch} {kind} {} bytes", bytes.len());
    }
    for k in kernels::ALL {
        println!("  kernel {} ({})", k.source_name(), k.signature());
    }
    if let Err(why) = check_contents() {
        eprintln!("cuda-kernels: {why}");
        return ExitCode::FAILURE;
    }
    println!(
        "checked: {} kernels, each in one cubin and one PTX image of {}",
        EXPECTED_KERNELS.len(),
        ARCHS.join(" and ")
    );
    match launch_all() {
        Ok(()) => ExitCode::SUCCESS,
        Err(Skip(why)) => {
            println!("no launch: {why}");
            ExitCode::SUCCESS
        }
        Err(Fail(why)) => {
            eprintln!("cuda-kernels: {why}");
            ExitCode::FAILURE
        }
    }
}

/// Whether `haystack` holds `needle`.
fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// The generated module against what `build.rs` asked for: the architectures; for each, one
/// cubin and one PTX image per source (no `-rdc`: each source is its own module), the first
/// cubin being `image(arch)`; every kernel by source name, its symbol in exactly one cubin and
/// one PTX image of each architecture.
fn check_contents() -> Result<(), String> {
    if ARCHS != EXPECTED_ARCHS {
        return Err(format!("ARCHS is {ARCHS:?}, not {EXPECTED_ARCHS:?}"));
    }
    for arch in EXPECTED_ARCHS {
        let of = |kind: &str| -> Vec<&'static [u8]> {
            IMAGES
                .iter()
                .filter(|(a, k, _)| *a == arch && *k == kind)
                .map(|(_, _, bytes)| *bytes)
                .collect()
        };
        let (cubins, ptx) = (of("cubin"), of("ptx"));
        if cubins.len() != SOURCES || ptx.len() != SOURCES {
            return Err(format!(
                "{arch} has {} cubins and {} PTX images, not {SOURCES} of each",
                cubins.len(),
                ptx.len()
            ));
        }
        if image(arch) != Some(cubins[0]) {
            return Err(format!("image({arch:?}) is not {arch}'s first cubin"));
        }
        if kernels::ALL.len() != EXPECTED_KERNELS.len() {
            return Err(format!(
                "{} kernels, not {}: {KERNELS:?}",
                kernels::ALL.len(),
                EXPECTED_KERNELS.len()
            ));
        }
        for name in EXPECTED_KERNELS {
            let k = kernels::by_name(name).ok_or(format!("no kernel {name} in {KERNELS:?}"))?;
            for (kind, images) in [("cubin", &cubins), ("PTX image", &ptx)] {
                let holders = images
                    .iter()
                    .filter(|b| contains(b, k.name.as_bytes()))
                    .count();
                if holders != 1 {
                    return Err(format!("{holders} {arch} {kind}s hold {name} ({})", k.name));
                }
            }
        }
    }
    // The constants of the source names, as a program names them.
    let by_constant = [
        (kernels::TRANSPOSE_FLOAT, "transpose<float>"),
        (kernels::TRANSPOSE_DOUBLE, "transpose<double>"),
        (kernels::CUB_SUM, "cub_sum"),
    ];
    for (k, name) in by_constant {
        if k.source_name() != name {
            return Err(format!("the constant of {name} is {}", k.source_name()));
        }
    }
    Ok(())
}

enum Outcome {
    /// Nothing to launch on (no driver, no GPU): not an error.
    Skip(String),
    /// A launch went wrong, or a kernel gave a wrong result.
    Fail(String),
}
use Outcome::{Fail, Skip};

impl From<DriverError> for Outcome {
    fn from(e: DriverError) -> Outcome {
        Fail(e.to_string())
    }
}

/// A module and the image it was loaded from.
type Loaded = (Arc<CudaModule>, &'static [u8]);

/// What each launch needs: a module per source, loaded from the images this GPU runs, and a
/// stream.
struct Gpu {
    /// Each module with the image it was loaded from.
    modules: Vec<Loaded>,
    stream: Arc<CudaStream>,
}

impl Gpu {
    /// The kernel `k`, by its symbol name (`cuModuleGetFunction`), from the module of the
    /// image that holds it.
    fn function(&self, k: kernels::Kernel) -> Result<cudarc::driver::CudaFunction, Outcome> {
        let (module, _) = self
            .modules
            .iter()
            .find(|(_, image)| contains(image, k.name.as_bytes()))
            .ok_or_else(|| Fail(format!("no loaded image holds {}", k.name)))?;
        Ok(module.load_function(k.name)?)
    }
}

/// `sm_NN` as (major, minor): `sm_90` is (9, 0), `sm_120` (12, 0).
fn capability(arch: &str) -> Option<(u32, u32)> {
    let n: u32 = arch.strip_prefix("sm_")?.parse().ok()?;
    Some((n / 10, n % 10))
}

/// The images a GPU of compute capability `gpu` runs, one per source, as the driver picks
/// them from a fat binary: the cubins of the newest architecture of the same major version
/// not above it; else the PTX of the newest architecture not above it, which the driver
/// JIT-compiles. Empty when there are none (an older GPU).
fn images_for(gpu: (u32, u32)) -> Vec<(&'static str, &'static str, &'static [u8])> {
    let newest = |kind: &str, runs: &dyn Fn((u32, u32)) -> bool| {
        IMAGES
            .iter()
            .filter_map(|&(a, k, _)| capability(a).filter(|&c| k == kind && runs(c)))
            .max()
    };
    let cubin = newest("cubin", &|c| c.0 == gpu.0 && c <= gpu);
    let (kind, arch) = match cubin {
        Some(c) => ("cubin", Some(c)),
        None => ("ptx", newest("ptx", &|c| c <= gpu)),
    };
    IMAGES
        .iter()
        .copied()
        .filter(|&(a, k, _)| k == kind && arch.is_some() && capability(a) == arch)
        .collect()
}

/// Loads each image with `cuModuleLoadData`: a cubin as it is, a PTX image as text ending in
/// a NUL (which the driver JIT-compiles). Each source is its own module (compiled without
/// `-rdc`), so loading the whole fat binary would give the kernels of one source only.
fn load_modules(ctx: &Arc<CudaContext>, gpu: (u32, u32)) -> Result<Vec<Loaded>, Outcome> {
    let mut modules = Vec::new();
    for (arch, kind, bytes) in images_for(gpu) {
        let image = if kind == "ptx" {
            let text = String::from_utf8_lossy(bytes)
                .trim_end_matches('\0')
                .to_string();
            Ptx::from_src(text)
        } else {
            Ptx::from_binary(bytes.to_vec())
        };
        println!("  loading the {arch} {kind} of {} bytes", bytes.len());
        modules.push((ctx.load_module(image)?, bytes));
    }
    if modules.is_empty() {
        return Err(Fail(format!("no image runs on sm_{}{}", gpu.0, gpu.1)));
    }
    Ok(modules)
}

/// A one-dimensional launch of `n` threads in blocks of 256.
fn linear(n: usize) -> LaunchConfig {
    LaunchConfig {
        grid_dim: ((n as u32).div_ceil(256), 1, 1),
        block_dim: (256, 1, 1),
        shared_mem_bytes: 0,
    }
}

/// Loads the images this GPU runs ([`load_modules`]) and runs every kernel.
fn launch_all() -> Result<(), Outcome> {
    // SAFETY: only tries to open the driver library.
    if !unsafe { cudarc::driver::sys::is_culib_present() } {
        return Err(Skip(
            "libcuda.so cannot be loaded: no NVIDIA driver on this machine".into(),
        ));
    }
    let ctx = CudaContext::new(0).map_err(|e| {
        // CUDA_ERROR_NO_DEVICE and friends: a driver but nothing to run on.
        Skip(format!("cuInit: {e} (a driver, but no usable NVIDIA GPU)"))
    })?;
    let (major, minor) = ctx.compute_capability()?;
    let arch = format!("sm_{major}{minor}");
    println!("GPU 0: {} ({arch})", ctx.name()?);
    let gpu = Gpu {
        modules: load_modules(&ctx, (major as u32, minor as u32))?,
        stream: ctx.default_stream(),
    };
    axpy_16bit(&gpu, kernels::AXPY_HALF, f16_bits, f16_value)?;
    axpy_16bit(&gpu, kernels::AXPY_BF16, bf16_bits, bf16_value)?;
    square_add_half2(&gpu)?;
    transpose(&gpu, kernels::TRANSPOSE_FLOAT, |i| i as f32)?;
    transpose(&gpu, kernels::TRANSPOSE_DOUBLE, |i| i as f64)?;
    block_sums(&gpu)?;
    cub_sum(&gpu)?;
    println!(
        "all {} kernels ran on {arch} with correct results",
        kernels::ALL.len()
    );
    Ok(())
}

/// The fp16 bits of `v`, a value fp16 represents exactly (zero or normal: the test values).
fn f16_bits(v: f32) -> u16 {
    if v == 0.0 {
        return 0;
    }
    let b = v.to_bits();
    let exp = ((b >> 23) & 0xff) as i32 - 127 + 15;
    (((b >> 16) & 0x8000) | ((exp as u32) << 10) | ((b >> 13) & 0x3ff)) as u16
}

/// The value of fp16 bits (zero or normal).
fn f16_value(h: u16) -> f32 {
    let h = u32::from(h);
    if h & 0x7fff == 0 {
        return 0.0;
    }
    let exp = ((h >> 10) & 0x1f) + 127 - 15;
    f32::from_bits(((h & 0x8000) << 16) | (exp << 23) | ((h & 0x3ff) << 13))
}

/// The bf16 bits of `v`, a value bf16 represents exactly: the top half of its f32 bits.
fn bf16_bits(v: f32) -> u16 {
    (v.to_bits() >> 16) as u16
}

/// The value of bf16 bits.
fn bf16_value(h: u16) -> f32 {
    f32::from_bits(u32::from(h) << 16)
}

/// `axpy_half` or `axpy_bf16`: y = 2 x + y on values both formats hold exactly.
fn axpy_16bit(
    gpu: &Gpu,
    k: kernels::Kernel,
    bits: fn(f32) -> u16,
    value: fn(u16) -> f32,
) -> Result<(), Outcome> {
    let n: i32 = 4096;
    let a = 2.0f32;
    let x: Vec<f32> = (0..n).map(|i| (i % 32) as f32 * 0.5).collect();
    let y: Vec<f32> = (0..n).map(|i| (i % 5) as f32).collect();
    let dx = gpu
        .stream
        .clone_htod(&x.iter().map(|&v| bits(v)).collect::<Vec<u16>>())?;
    let mut dy = gpu
        .stream
        .clone_htod(&y.iter().map(|&v| bits(v)).collect::<Vec<u16>>())?;
    let f = gpu.function(k)?;
    let mut args = gpu.stream.launch_builder(&f);
    args.arg(&n).arg(&a).arg(&dx).arg(&mut dy);
    // SAFETY: the parameters are (int, float, const T*, T*) with a 16-bit T; both buffers
    // hold n values.
    unsafe { args.launch(linear(n as usize)) }?;
    let out = gpu.stream.clone_dtoh(&dy)?;
    let want: Vec<f32> = (0..n as usize).map(|i| a * x[i] + y[i]).collect();
    expect(
        k,
        &out.iter().map(|&h| value(h)).collect::<Vec<f32>>(),
        &want,
    )
}

/// `square_add_half2`: y = x * x + y, two fp16 values per thread.
fn square_add_half2(gpu: &Gpu) -> Result<(), Outcome> {
    let pairs: i32 = 2048;
    let x: Vec<f32> = (0..2 * pairs).map(|i| (i % 16) as f32).collect();
    let y: Vec<f32> = (0..2 * pairs).map(|i| (i % 3) as f32).collect();
    let dx = gpu
        .stream
        .clone_htod(&x.iter().map(|&v| f16_bits(v)).collect::<Vec<u16>>())?;
    let mut dy = gpu
        .stream
        .clone_htod(&y.iter().map(|&v| f16_bits(v)).collect::<Vec<u16>>())?;
    let f = gpu.function(kernels::SQUARE_ADD_HALF2)?;
    let mut args = gpu.stream.launch_builder(&f);
    args.arg(&pairs).arg(&dx).arg(&mut dy);
    // SAFETY: the parameters are (int, const __half2*, __half2*); both buffers hold `pairs`
    // pairs of fp16 values (cudarc's allocations are aligned for __half2).
    unsafe { args.launch(linear(pairs as usize)) }?;
    let out: Vec<f32> = gpu
        .stream
        .clone_dtoh(&dy)?
        .into_iter()
        .map(f16_value)
        .collect();
    let want: Vec<f32> = x.iter().zip(&y).map(|(x, y)| x * x + y).collect();
    expect(kernels::SQUARE_ADD_HALF2, &out, &want)
}

/// `transpose<float>` or `transpose<double>` of a 100 x 70 matrix (partial tiles on both
/// edges), in blocks of 32 x 8 threads.
fn transpose<T>(gpu: &Gpu, k: kernels::Kernel, make: fn(usize) -> T) -> Result<(), Outcome>
where
    T: DeviceRepr + ValidAsZeroBits + Copy + PartialEq + Debug,
{
    let (rows, cols): (i32, i32) = (100, 70);
    let input: Vec<T> = (0..(rows * cols) as usize).map(make).collect();
    let din = gpu.stream.clone_htod(&input)?;
    let mut dout = gpu.stream.alloc_zeros::<T>(input.len())?;
    let f = gpu.function(k)?;
    let mut args = gpu.stream.launch_builder(&f);
    args.arg(&mut dout).arg(&din).arg(&rows).arg(&cols);
    let config = LaunchConfig {
        grid_dim: ((cols as u32).div_ceil(32), (rows as u32).div_ceil(32), 1),
        block_dim: (32, 8, 1),
        shared_mem_bytes: 0,
    };
    // SAFETY: the parameters are (T*, const T*, int, int); both buffers hold rows * cols
    // values; the kernel's shared tile is static.
    unsafe { args.launch(config) }?;
    let out = gpu.stream.clone_dtoh(&dout)?;
    let (r, c) = (rows as usize, cols as usize);
    let want: Vec<T> = (0..c * r).map(|o| input[(o % r) * c + o / r]).collect();
    expect(k, &out, &want)
}

/// `block_sum_shared`: one sum per block of 256 ints, reduced in shared memory.
fn block_sums(gpu: &Gpu) -> Result<(), Outcome> {
    let n: i32 = 1000;
    let input: Vec<i32> = (0..n).collect();
    let blocks = (n as usize).div_ceil(256);
    let din = gpu.stream.clone_htod(&input)?;
    let mut dsums = gpu.stream.alloc_zeros::<i32>(blocks)?;
    let f = gpu.function(kernels::BLOCK_SUM_SHARED)?;
    let mut args = gpu.stream.launch_builder(&f);
    args.arg(&din).arg(&mut dsums).arg(&n);
    // SAFETY: the parameters are (const int*, int*, int); `in` holds n values, `sums` one
    // per block; the blocks are 256 threads, as the kernel requires.
    unsafe { args.launch(linear(n as usize)) }?;
    let out = gpu.stream.clone_dtoh(&dsums)?;
    let want: Vec<i32> = input.chunks(256).map(|c| c.iter().sum()).collect();
    expect(kernels::BLOCK_SUM_SHARED, &out, &want)
}

/// `cub_sum`: the sum of 100 000 small integers (exact in f32 whatever the order of the
/// blocks' atomic additions).
fn cub_sum(gpu: &Gpu) -> Result<(), Outcome> {
    let n: i32 = 100_000;
    let input: Vec<f32> = (0..n).map(|i| (i % 7) as f32).collect();
    let din = gpu.stream.clone_htod(&input)?;
    let mut dtotal = gpu.stream.alloc_zeros::<f32>(1)?;
    let f = gpu.function(kernels::CUB_SUM)?;
    let mut args = gpu.stream.launch_builder(&f);
    args.arg(&din).arg(&mut dtotal).arg(&n);
    // SAFETY: the parameters are (const float*, float*, int); `in` holds n values, `total`
    // one, zeroed; the blocks are 256 threads, as the kernel's BlockReduce requires.
    unsafe { args.launch(linear(n as usize)) }?;
    let out = gpu.stream.clone_dtoh(&dtotal)?;
    expect(kernels::CUB_SUM, &out, &[input.iter().sum()])
}

/// Compares a kernel's output with the host's, and says so.
fn expect<T: PartialEq + Debug>(k: kernels::Kernel, got: &[T], want: &[T]) -> Result<(), Outcome> {
    let wrong = got.iter().zip(want).filter(|(g, w)| g != w).count();
    if got.len() != want.len() || wrong != 0 {
        let first = got.iter().zip(want).position(|(g, w)| g != w).unwrap_or(0);
        return Err(Fail(format!(
            "{}: {wrong} wrong values of {} (at {first}: {:?}, expected {:?})",
            k.source_name(),
            want.len(),
            got.get(first),
            want.get(first)
        )));
    }
    println!("{}: {} values correct", k.source_name(), want.len());
    Ok(())
}

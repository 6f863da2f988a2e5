//! Prints what this executable carries — the NVIDIA fat binary `build.rs` made, with its
//! architectures and image kinds — checks it against the fat binary reader, then, when an
//! NVIDIA driver (`libcuda.so`) and a GPU are present, loads it with `cuModuleLoadData`,
//! launches `saxpy` by name and checks the result, through cudarc's driver API (which opens
//! the driver at run time, so the build needs no CUDA install). Without a driver or a GPU
//! the launch is skipped with a message (exit status 0).

use std::process::ExitCode;

use cudarc::driver::{CudaContext, DriverError, LaunchConfig, PushKernelArg};
use cudarc::nvrtc::Ptx;

use offload_build::nvfatbin::Fatbin;

include!(concat!(env!("OUT_DIR"), "/kernels.rs"));

fn main() -> ExitCode {
    let fat = container();
    println!(
        "cuda-saxpy: {} bytes of device code ({CONTAINER}), built by {}",
        fat.len(),
        env!("CUDA_SAXPY_COMPILER")
    );
    println!("archs: {}", ARCHS.join(" "));
    for (arch, kind, bytes) in IMAGES {
        println!("  {arch} {kind} {} bytes", bytes.len());
    }
    println!("kernels: {}", KERNELS.join(" "));

    // The generated table and the container agree: same entries, same bytes.
    let parsed = match Fatbin::parse(fat) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("cuda-saxpy: the embedded fat binary does not parse: {e}");
            return ExitCode::FAILURE;
        }
    };
    let from_container: Vec<(String, &[u8])> = parsed
        .entries()
        .iter()
        .map(|e| (e.kind().name(), e.image().unwrap_or_default()))
        .collect();
    let from_table: Vec<(String, &[u8])> = IMAGES
        .iter()
        .map(|(_, kind, bytes)| (kind.to_string(), *bytes))
        .collect();
    if from_container != from_table || ARCHS.iter().any(|a| image(a).is_none()) {
        eprintln!("cuda-saxpy: IMAGES does not match the fat binary's entries");
        return ExitCode::FAILURE;
    }
    println!(
        "checked: the fat binary's {} entries are IMAGES",
        from_table.len()
    );

    match launch(fat) {
        Ok(()) => ExitCode::SUCCESS,
        Err(Skip(why)) => {
            println!("no launch: {why}");
            ExitCode::SUCCESS
        }
        Err(Fail(why)) => {
            eprintln!("cuda-saxpy: {why}");
            ExitCode::FAILURE
        }
    }
}

enum Outcome {
    /// Nothing to launch on (no driver, no GPU): not an error.
    Skip(String),
    /// The launch went wrong.
    Fail(String),
}
use Outcome::{Fail, Skip};

impl From<DriverError> for Outcome {
    fn from(e: DriverError) -> Outcome {
        Fail(e.to_string())
    }
}

/// Loads the fat binary with `cuModuleLoadData` and launches `saxpy` by name through cudarc,
/// which opens the driver (`libcuda.so`) at run time: no CUDA install is needed to build.
fn launch(fat: &'static [u8]) -> Result<(), Outcome> {
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
    println!(
        "GPU 0: {} ({arch}); image({arch:?}) is {}",
        ctx.name()?,
        image(&arch).map_or("None (the driver JIT-compiles the PTX)".to_string(), |b| {
            format!("{} bytes", b.len())
        })
    );
    // The whole fat binary: the driver picks the cubin for this GPU, or JIT-compiles the PTX
    // of the newest architecture not above it.
    let module = ctx.load_module(Ptx::from_binary(fat.to_vec()))?;
    let saxpy = module.load_function(kernels::SAXPY.name)?;
    let stream = ctx.default_stream();
    let n: i32 = 1 << 20;
    let x: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let y: Vec<f32> = (0..n).map(|i| (2 * i) as f32).collect();
    let dx = stream.clone_htod(&x)?;
    let mut dy = stream.clone_htod(&y)?;
    let a = 3.0f32;
    let block = 256;
    let config = LaunchConfig {
        grid_dim: ((n as u32).div_ceil(block), 1, 1),
        block_dim: (block, 1, 1),
        shared_mem_bytes: 0,
    };
    let mut args = stream.launch_builder(&saxpy);
    args.arg(&n).arg(&a).arg(&dx).arg(&mut dy);
    // SAFETY: the arguments are saxpy's parameters (int, float, const float*, float*), the
    // buffers hold n values each.
    unsafe { args.launch(config) }?;
    let out = stream.clone_dtoh(&dy)?;
    let wrong = (0..n as usize)
        .filter(|&i| out[i] != 3.0 * x[i] + y[i])
        .count();
    if wrong != 0 {
        return Err(Fail(format!(
            "saxpy gave {wrong} wrong values of {n} (y[1] = {})",
            out[1]
        )));
    }
    println!("saxpy on {arch}: {n} values, all equal to 3 * x + y");
    Ok(())
}

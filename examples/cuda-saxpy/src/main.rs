//! Prints what this executable carries — the NVIDIA fat binary `build.rs` made, with its
//! architectures and image kinds — checks it against the fat binary reader, then, when an
//! NVIDIA driver (`libcuda.so.1`) and a GPU are present, loads it with `cuModuleLoadData`,
//! launches `saxpy` and checks the result. Without a driver the launch is skipped with a
//! message (exit status 0); no CUDA crate is needed: the driver API is opened with `dlopen`.

use std::ffi::{CStr, c_char, c_int, c_uint, c_void};
use std::process::ExitCode;

use offload_build::nvfatbin::Fatbin;

include!(concat!(env!("OUT_DIR"), "/kernels.rs"));

fn main() -> ExitCode {
    let fat = fatbin();
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

type CuResult = c_int;
type CuDevice = c_int;
type CuContext = *mut c_void;
type CuModule = *mut c_void;
type CuFunction = *mut c_void;
type CuDevicePtr = u64;

/// The driver API entry points used, from `libcuda.so.1`.
struct Driver {
    _lib: libloading::Library,
    get_error_string: unsafe extern "C" fn(CuResult, *mut *const c_char) -> CuResult,
    init: unsafe extern "C" fn(c_uint) -> CuResult,
    driver_version: unsafe extern "C" fn(*mut c_int) -> CuResult,
    device_get: unsafe extern "C" fn(*mut CuDevice, c_int) -> CuResult,
    device_name: unsafe extern "C" fn(*mut c_char, c_int, CuDevice) -> CuResult,
    device_attribute: unsafe extern "C" fn(*mut c_int, c_int, CuDevice) -> CuResult,
    primary_retain: unsafe extern "C" fn(*mut CuContext, CuDevice) -> CuResult,
    primary_release: unsafe extern "C" fn(CuDevice) -> CuResult,
    ctx_set_current: unsafe extern "C" fn(CuContext) -> CuResult,
    module_load_data: unsafe extern "C" fn(*mut CuModule, *const c_void) -> CuResult,
    module_unload: unsafe extern "C" fn(CuModule) -> CuResult,
    module_get_function: unsafe extern "C" fn(*mut CuFunction, CuModule, *const c_char) -> CuResult,
    mem_alloc: unsafe extern "C" fn(*mut CuDevicePtr, usize) -> CuResult,
    mem_free: unsafe extern "C" fn(CuDevicePtr) -> CuResult,
    htod: unsafe extern "C" fn(CuDevicePtr, *const c_void, usize) -> CuResult,
    dtoh: unsafe extern "C" fn(*mut c_void, CuDevicePtr, usize) -> CuResult,
    #[allow(clippy::type_complexity)]
    launch_kernel: unsafe extern "C" fn(
        CuFunction,
        c_uint,
        c_uint,
        c_uint,
        c_uint,
        c_uint,
        c_uint,
        c_uint,
        *mut c_void,
        *mut *mut c_void,
        *mut *mut c_void,
    ) -> CuResult,
    synchronize: unsafe extern "C" fn() -> CuResult,
}

impl Driver {
    fn open() -> Result<Driver, Outcome> {
        // SAFETY: loading the NVIDIA driver library runs its initialisers, which is what
        // every CUDA program does.
        let lib = unsafe { libloading::Library::new("libcuda.so.1") }.map_err(|e| {
            Skip(format!(
                "libcuda.so.1 cannot be loaded ({e}): no NVIDIA driver on this machine"
            ))
        })?;
        macro_rules! sym {
            ($name:literal) => {
                // SAFETY: the driver API's documented signatures (cuda.h), 64-bit.
                *unsafe { lib.get(concat!($name, "\0").as_bytes()) }
                    .map_err(|e| Fail(format!("libcuda.so.1 lacks {}: {e}", $name)))?
            };
        }
        Ok(Driver {
            get_error_string: sym!("cuGetErrorString"),
            init: sym!("cuInit"),
            driver_version: sym!("cuDriverGetVersion"),
            device_get: sym!("cuDeviceGet"),
            device_name: sym!("cuDeviceGetName"),
            device_attribute: sym!("cuDeviceGetAttribute"),
            primary_retain: sym!("cuDevicePrimaryCtxRetain"),
            primary_release: sym!("cuDevicePrimaryCtxRelease_v2"),
            ctx_set_current: sym!("cuCtxSetCurrent"),
            module_load_data: sym!("cuModuleLoadData"),
            module_unload: sym!("cuModuleUnload"),
            module_get_function: sym!("cuModuleGetFunction"),
            mem_alloc: sym!("cuMemAlloc_v2"),
            mem_free: sym!("cuMemFree_v2"),
            htod: sym!("cuMemcpyHtoD_v2"),
            dtoh: sym!("cuMemcpyDtoH_v2"),
            launch_kernel: sym!("cuLaunchKernel"),
            synchronize: sym!("cuCtxSynchronize"),
            _lib: lib,
        })
    }

    /// The driver's name for an error.
    fn error_text(&self, r: CuResult) -> String {
        let mut s: *const c_char = std::ptr::null();
        // SAFETY: cuGetErrorString writes a static string pointer or leaves it null.
        unsafe { (self.get_error_string)(r, &mut s) };
        if s.is_null() {
            format!("CUresult {r}")
        } else {
            // SAFETY: a NUL-terminated static string from the driver.
            unsafe { CStr::from_ptr(s) }.to_string_lossy().into_owned()
        }
    }

    /// `Ok` for `CUDA_SUCCESS`, else a failure naming the call and the error.
    fn check(&self, r: CuResult, what: &str) -> Result<(), Outcome> {
        if r == 0 {
            Ok(())
        } else {
            Err(Fail(format!("{what} failed: {}", self.error_text(r))))
        }
    }
}

const CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: c_int = 75;
const CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: c_int = 76;

fn launch(fat: &'static [u8]) -> Result<(), Outcome> {
    let d = Driver::open()?;
    // SAFETY (every call below): the driver API used as cuda.h documents it, with pointers
    // to live locals and buffers of the sizes passed.
    unsafe {
        let r = (d.init)(0);
        if r != 0 {
            // CUDA_ERROR_NO_DEVICE and friends: a driver but nothing to run on.
            return Err(Skip(format!(
                "cuInit: {} (a driver, but no usable NVIDIA GPU)",
                d.error_text(r)
            )));
        }
        let mut version = 0;
        d.check((d.driver_version)(&mut version), "cuDriverGetVersion")?;
        let mut dev = 0;
        d.check((d.device_get)(&mut dev, 0), "cuDeviceGet")?;
        let mut name = [0 as c_char; 256];
        d.check(
            (d.device_name)(name.as_mut_ptr(), name.len() as c_int, dev),
            "cuDeviceGetName",
        )?;
        let (mut major, mut minor) = (0, 0);
        d.check(
            (d.device_attribute)(
                &mut major,
                CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                dev,
            ),
            "cuDeviceGetAttribute",
        )?;
        d.check(
            (d.device_attribute)(
                &mut minor,
                CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
                dev,
            ),
            "cuDeviceGetAttribute",
        )?;
        let arch = format!("sm_{major}{minor}");
        println!(
            "GPU 0: {} ({arch}), driver API {}.{}; image({arch:?}) is {}",
            CStr::from_ptr(name.as_ptr()).to_string_lossy(),
            version / 1000,
            version % 1000 / 10,
            image(&arch).map_or("None (the driver JIT-compiles the PTX)".to_string(), |b| {
                format!("{} bytes", b.len())
            })
        );
        let mut ctx = std::ptr::null_mut();
        d.check(
            (d.primary_retain)(&mut ctx, dev),
            "cuDevicePrimaryCtxRetain",
        )?;
        d.check((d.ctx_set_current)(ctx), "cuCtxSetCurrent")?;
        // The whole fat binary: the driver picks the cubin for this GPU, or JIT-compiles
        // the PTX of the newest architecture not above it.
        let mut module = std::ptr::null_mut();
        d.check(
            (d.module_load_data)(&mut module, fat.as_ptr().cast()),
            "cuModuleLoadData",
        )?;
        let mut func = std::ptr::null_mut();
        d.check(
            (d.module_get_function)(&mut func, module, c"saxpy".as_ptr()),
            "cuModuleGetFunction(saxpy)",
        )?;

        let n: c_int = 1 << 20;
        let x: Vec<f32> = (0..n).map(|i| i as f32).collect();
        let y: Vec<f32> = (0..n).map(|i| (2 * i) as f32).collect();
        let bytes = n as usize * std::mem::size_of::<f32>();
        let (mut dx, mut dy) = (0u64, 0u64);
        d.check((d.mem_alloc)(&mut dx, bytes), "cuMemAlloc")?;
        d.check((d.mem_alloc)(&mut dy, bytes), "cuMemAlloc")?;
        d.check((d.htod)(dx, x.as_ptr().cast(), bytes), "cuMemcpyHtoD")?;
        d.check((d.htod)(dy, y.as_ptr().cast(), bytes), "cuMemcpyHtoD")?;
        let mut a: f32 = 3.0;
        let mut n_arg = n;
        let mut params: [*mut c_void; 4] = [
            (&mut a as *mut f32).cast(),
            (&mut dx as *mut u64).cast(),
            (&mut dy as *mut u64).cast(),
            (&mut n_arg as *mut c_int).cast(),
        ];
        let block = 256;
        let grid = (n as c_uint).div_ceil(block);
        d.check(
            (d.launch_kernel)(
                func,
                grid,
                1,
                1,
                block,
                1,
                1,
                0,
                std::ptr::null_mut(),
                params.as_mut_ptr(),
                std::ptr::null_mut(),
            ),
            "cuLaunchKernel",
        )?;
        d.check((d.synchronize)(), "cuCtxSynchronize")?;
        let mut out = vec![0f32; n as usize];
        d.check((d.dtoh)(out.as_mut_ptr().cast(), dy, bytes), "cuMemcpyDtoH")?;
        let _ = (d.mem_free)(dx);
        let _ = (d.mem_free)(dy);
        let _ = (d.module_unload)(module);
        let _ = (d.primary_release)(dev);
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
    }
    Ok(())
}

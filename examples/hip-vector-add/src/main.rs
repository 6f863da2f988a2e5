//! Prints what this executable carries — the architectures, sizes and kernels of the fat
//! binary that `build.rs` compiled — checked by reading the executable file itself with the
//! offload-build library, then launches `vector_add` when a HIP runtime and a GPU are present.

use std::ffi::{c_char, c_int, c_uint, c_void};
use std::process::ExitCode;

use offload_build::build::amdgpu_kernels;
use offload_build::bundle::BinaryBundle;

include!(concat!(env!("OUT_DIR"), "/kernels.rs"));

/// Finds the bundle that `fatbin()` points at in the executable's own bytes: every occurrence
/// of the bundle magic that parses as a bundle with the same bytes as `fatbin()`.
fn find_in_executable(exe: &[u8], fatbin: &[u8]) -> Option<u64> {
    let magic = offload_build::bundle::MAGIC;
    let mut at = 0;
    while let Some(pos) = exe[at..].windows(magic.len()).position(|w| w == magic) {
        let start = at + pos;
        if exe[start..].starts_with(fatbin)
            && BinaryBundle::parse(&exe[start..]).is_ok_and(|b| b.is_some())
        {
            return Some(start as u64);
        }
        at = start + 1;
    }
    None
}

fn main() -> ExitCode {
    let fat = fatbin();
    let bundle = match BinaryBundle::parse(fat) {
        Ok(Some(b)) => b,
        other => {
            eprintln!("hip-vector-add: the embedded fat binary is not a bundle: {other:?}");
            return ExitCode::FAILURE;
        }
    };
    println!(
        "hip-vector-add: {} bytes of device code ({CONTAINER}), built by {}",
        fat.len(),
        env!("HIP_VECTOR_ADD_COMPILER")
    );

    // Read this executable from disk and find the very same bundle in it.
    let exe_path = std::env::current_exe().expect("current_exe");
    let exe = std::fs::read(&exe_path).expect("reading the executable");
    match find_in_executable(&exe, fat) {
        Some(off) => println!("found in {} at offset {off:#x}", exe_path.display()),
        None => {
            eprintln!(
                "hip-vector-add: the fat binary is not in {}",
                exe_path.display()
            );
            return ExitCode::FAILURE;
        }
    }

    let mut archs = Vec::new();
    let mut all_kernels = std::collections::BTreeSet::new();
    println!("{:<44} {:>10}  kernels", "entry", "bytes");
    for entry in bundle.entries() {
        let id = entry.id_str();
        let kernels = amdgpu_kernels(entry.data);
        println!("{:<44} {:>10}  {}", id, entry.size(), kernels.join(", "));
        if let Some(arch) = id.strip_prefix("hipv4-amdgcn-amd-amdhsa--") {
            archs.push(arch.to_string());
            all_kernels.extend(kernels);
        }
    }
    archs.sort();
    let all_kernels: Vec<String> = all_kernels.into_iter().collect();
    println!("archs: {}", archs.join(" "));
    println!("kernels: {}", all_kernels.join(" "));
    if archs != ARCHS || all_kernels != KERNELS {
        eprintln!("hip-vector-add: the executable disagrees with build.rs: {ARCHS:?} {KERNELS:?}");
        return ExitCode::FAILURE;
    }

    match launch(fat) {
        Ok(msg) => println!("{msg}"),
        Err(msg) => {
            eprintln!("hip-vector-add: {msg}");
            return ExitCode::FAILURE;
        }
    }
    ExitCode::SUCCESS
}

type HipError = c_int;

/// Runs `vector_add` on the first GPU through the HIP module API, loading the runtime with
/// `dlopen`; `Ok` with an explanation when there is no runtime or no GPU.
fn launch(fat: &[u8]) -> Result<String, String> {
    // SAFETY: loading the HIP runtime runs its initializers; that is what it is for.
    let lib = match unsafe { libloading::Library::new("libamdhip64.so") }
        .or_else(|_| unsafe { libloading::Library::new("/opt/rocm/lib/libamdhip64.so") })
    {
        Ok(l) => l,
        Err(e) => return Ok(format!("no HIP runtime ({e}); not launching")),
    };
    macro_rules! sym {
        ($name:literal, $ty:ty) => {
            // SAFETY: the signature is HIP's (hip_runtime_api.h).
            *unsafe { lib.get::<$ty>($name) }.map_err(|e| format!("{e}"))?
        };
    }
    let get_count = sym!(
        b"hipGetDeviceCount",
        unsafe extern "C" fn(*mut c_int) -> HipError
    );
    let load = sym!(
        b"hipModuleLoadData",
        unsafe extern "C" fn(*mut *mut c_void, *const c_void) -> HipError
    );
    let get_fn = sym!(
        b"hipModuleGetFunction",
        unsafe extern "C" fn(*mut *mut c_void, *mut c_void, *const c_char) -> HipError
    );
    let malloc = sym!(
        b"hipMalloc",
        unsafe extern "C" fn(*mut *mut c_void, usize) -> HipError
    );
    let free = sym!(b"hipFree", unsafe extern "C" fn(*mut c_void) -> HipError);
    let memcpy = sym!(
        b"hipMemcpy",
        unsafe extern "C" fn(*mut c_void, *const c_void, usize, c_int) -> HipError
    );
    type LaunchFn = unsafe extern "C" fn(
        *mut c_void,
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
    ) -> HipError;
    let launch = sym!(b"hipModuleLaunchKernel", LaunchFn);
    let sync = sym!(b"hipDeviceSynchronize", unsafe extern "C" fn() -> HipError);

    let check = |what: &str, e: HipError| {
        if e == 0 {
            Ok(())
        } else {
            Err(format!("{what} failed: hipError {e}"))
        }
    };
    let mut count = 0;
    // SAFETY: all calls below follow the HIP API's contracts; buffers outlive their use.
    unsafe {
        if get_count(&mut count) != 0 || count == 0 {
            return Ok("HIP runtime present but no GPU; not launching".into());
        }
        let mut module = std::ptr::null_mut();
        check("hipModuleLoadData", load(&mut module, fat.as_ptr().cast()))?;
        let mut func = std::ptr::null_mut();
        check(
            "hipModuleGetFunction",
            get_fn(&mut func, module, c"vector_add".as_ptr()),
        )?;
        const N: usize = 1 << 20;
        let a: Vec<f32> = (0..N).map(|i| i as f32).collect();
        let b: Vec<f32> = (0..N).map(|i| 2.0 * i as f32).collect();
        let mut c = vec![0f32; N];
        let bytes = N * 4;
        let (mut da, mut db, mut dc) = (
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
        );
        check("hipMalloc", malloc(&mut da, bytes))?;
        check("hipMalloc", malloc(&mut db, bytes))?;
        check("hipMalloc", malloc(&mut dc, bytes))?;
        check("hipMemcpy", memcpy(da, a.as_ptr().cast(), bytes, 1))?;
        check("hipMemcpy", memcpy(db, b.as_ptr().cast(), bytes, 1))?;
        let mut n = N as c_uint;
        let mut args: [*mut c_void; 4] = [
            (&raw mut da).cast(),
            (&raw mut db).cast(),
            (&raw mut dc).cast(),
            (&raw mut n).cast(),
        ];
        let block = 256;
        let grid = N.div_ceil(block as usize) as c_uint;
        check(
            "hipModuleLaunchKernel",
            launch(
                func,
                grid,
                1,
                1,
                block,
                1,
                1,
                0,
                std::ptr::null_mut(),
                args.as_mut_ptr(),
                std::ptr::null_mut(),
            ),
        )?;
        check("hipDeviceSynchronize", sync())?;
        check("hipMemcpy", memcpy(c.as_mut_ptr().cast(), dc, bytes, 2))?;
        for p in [da, db, dc] {
            free(p);
        }
        let bad = (0..N).filter(|&i| c[i] != 3.0 * i as f32).count();
        if bad != 0 {
            return Err(format!("vector_add gave {bad} wrong results of {N}"));
        }
        Ok(format!(
            "launched vector_add on {count} GPU(s): {N} sums correct"
        ))
    }
}

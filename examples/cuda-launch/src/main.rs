//! Calls the `extern "C"` launch wrapper of `kernels/scale.cu` (compiled with its host code
//! by `build.rs`): no bindings and no kernel handles, only the wrapper's declaration.
//!
//! With a GPU, it checks the result. Without one, the CUDA runtime's error comes back from the
//! wrapper: the example prints it and exits 0 (the code was built, linked and called).

use std::ffi::{CStr, c_char, c_float, c_int};
use std::process::ExitCode;

unsafe extern "C" {
    /// Scales `n` floats of host memory by `a` on the GPU: 0, else the CUDA error code.
    fn launch_scale(host: *mut c_float, a: c_float, n: c_int) -> c_int;
    /// The name of a CUDA error code.
    fn cuda_error_name(e: c_int) -> *const c_char;
}

fn main() -> ExitCode {
    let mut x: Vec<f32> = (0..1000).map(|i| i as f32).collect();
    // SAFETY: `x` holds `x.len()` floats, which the wrapper reads and writes in place.
    let e = unsafe { launch_scale(x.as_mut_ptr(), 3.0, x.len() as c_int) };
    if e != 0 {
        // SAFETY: cudaGetErrorName returns a static NUL-terminated string.
        let name = unsafe { CStr::from_ptr(cuda_error_name(e)) };
        println!(
            "cuda-launch: no launch: launch_scale returned {e} ({}): no GPU here",
            name.to_string_lossy()
        );
        return ExitCode::SUCCESS;
    }
    let wrong = x
        .iter()
        .enumerate()
        .filter(|&(i, v)| *v != 3.0 * i as f32)
        .count();
    if wrong > 0 {
        eprintln!("cuda-launch: {wrong} of {} values are wrong", x.len());
        return ExitCode::FAILURE;
    }
    println!(
        "cuda-launch: scaled {} values on the GPU: all right",
        x.len()
    );
    ExitCode::SUCCESS
}

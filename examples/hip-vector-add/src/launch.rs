//! Loads the fat binary as a HIP module and launches a kernel by name with a grid, a block and
//! typed arguments, through `hip-runtime-sys` (maintained bindings of the HIP runtime API,
//! linked against `libamdhip64`; Debian 12's ROCm 5.2 serves it), not hand-written `extern`
//! declarations. `Module`, `DeviceBuffer` and `KernelArg` are the few safe wrappers the
//! example needs around the raw calls.

use std::ffi::{CString, c_void};
use std::marker::PhantomData;

use hip_runtime_sys as hip;

/// `Ok` for `hipSuccess`, else an error naming the call and HIP's error.
fn check(what: &str, e: hip::hipError_t) -> Result<(), String> {
    if e == hip::hipError_t::hipSuccess {
        Ok(())
    } else {
        Err(format!("{what} failed: {e:?}"))
    }
}

/// The number of GPUs the HIP runtime sees (0 when it reports `hipErrorNoDevice`).
pub fn device_count() -> Result<i32, String> {
    let mut count = 0;
    // SAFETY: hipGetDeviceCount writes one int.
    match unsafe { hip::hipGetDeviceCount(&mut count) } {
        hip::hipError_t::hipErrorNoDevice => Ok(0),
        e => check("hipGetDeviceCount", e).map(|()| count),
    }
}

/// A loaded code object container (`hipModuleLoadData`), unloaded on drop.
pub struct Module(hip::hipModule_t);

impl Module {
    /// Loads `image` (a bundle, as `container()` returns): the runtime picks this GPU's entry.
    pub fn load(image: &[u8]) -> Result<Module, String> {
        let mut module = std::ptr::null_mut();
        // SAFETY: `image` is a whole container; the runtime copies what it needs.
        check("hipModuleLoadData", unsafe {
            hip::hipModuleLoadData(&mut module, image.as_ptr().cast())
        })?;
        Ok(Module(module))
    }

    /// The kernel `name` of the module (its symbol name, as `kernels::<KERNEL>.name` gives).
    pub fn function(&self, name: &str) -> Result<Function<'_>, String> {
        let c_name = CString::new(name).map_err(|e| e.to_string())?;
        let mut f = std::ptr::null_mut();
        // SAFETY: a live module and a NUL-terminated name.
        check(&format!("hipModuleGetFunction({name})"), unsafe {
            hip::hipModuleGetFunction(&mut f, self.0, c_name.as_ptr())
        })?;
        Ok(Function(f, PhantomData))
    }
}

impl Drop for Module {
    fn drop(&mut self) {
        // SAFETY: loaded by `load`, unloaded once.
        unsafe { hip::hipModuleUnload(self.0) };
    }
}

/// A kernel of a [`Module`], which it may not outlive.
pub struct Function<'m>(hip::hipFunction_t, PhantomData<&'m Module>);

/// What a kernel takes by value: the address of its bytes is what `hipModuleLaunchKernel`
/// reads.
pub trait KernelArg {
    /// The address of the argument's bytes.
    fn as_arg(&self) -> *mut c_void;
}

macro_rules! scalar_args {
    ($($t:ty),*) => {$(
        impl KernelArg for $t {
            fn as_arg(&self) -> *mut c_void {
                (self as *const $t).cast_mut().cast()
            }
        }
    )*};
}
scalar_args!(i32, u32, i64, u64, f32, f64);

impl Function<'_> {
    /// Runs the kernel on `grid` blocks of `block` threads (x dimension) with `args` in the
    /// kernel's parameter order, and waits for it.
    pub fn launch(&self, grid: u32, block: u32, args: &[&dyn KernelArg]) -> Result<(), String> {
        let mut params: Vec<*mut c_void> = args.iter().map(|a| a.as_arg()).collect();
        // SAFETY: every parameter points at a live value of the kernel's parameter type (the
        // caller's contract, as with any launch), kept alive by `args` until the call returns.
        check("hipModuleLaunchKernel", unsafe {
            hip::hipModuleLaunchKernel(
                self.0,
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
            )
        })?;
        // SAFETY: no arguments.
        check("hipDeviceSynchronize", unsafe {
            hip::hipDeviceSynchronize()
        })
    }
}

/// Device memory holding `len` values of `T`, freed on drop; passed to a kernel as a pointer.
pub struct DeviceBuffer<T> {
    ptr: *mut c_void,
    len: usize,
    _values: PhantomData<T>,
}

impl<T: Copy + Default> DeviceBuffer<T> {
    /// A device copy of `values`.
    pub fn from_host(values: &[T]) -> Result<DeviceBuffer<T>, String> {
        let bytes = std::mem::size_of_val(values);
        let mut ptr = std::ptr::null_mut();
        // SAFETY: hipMalloc writes one pointer.
        check("hipMalloc", unsafe { hip::hipMalloc(&mut ptr, bytes) })?;
        let buffer = DeviceBuffer {
            ptr,
            len: values.len(),
            _values: PhantomData,
        };
        // SAFETY: `bytes` bytes on both sides.
        check("hipMemcpy", unsafe {
            hip::hipMemcpy(
                ptr,
                values.as_ptr().cast(),
                bytes,
                hip::hipMemcpyKind::hipMemcpyHostToDevice,
            )
        })?;
        Ok(buffer)
    }

    /// The values, copied back to the host.
    pub fn to_host(&self) -> Result<Vec<T>, String> {
        let mut values = vec![T::default(); self.len];
        // SAFETY: `len` values on both sides.
        check("hipMemcpy", unsafe {
            hip::hipMemcpy(
                values.as_mut_ptr().cast(),
                self.ptr,
                std::mem::size_of_val(values.as_slice()),
                hip::hipMemcpyKind::hipMemcpyDeviceToHost,
            )
        })?;
        Ok(values)
    }
}

impl<T> KernelArg for DeviceBuffer<T> {
    fn as_arg(&self) -> *mut c_void {
        (&self.ptr as *const *mut c_void).cast_mut().cast()
    }
}

impl<T> Drop for DeviceBuffer<T> {
    fn drop(&mut self) {
        // SAFETY: allocated by `from_host`, freed once.
        unsafe { hip::hipFree(self.ptr) };
    }
}

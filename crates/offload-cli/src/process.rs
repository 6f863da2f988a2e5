//! The tools' process policy around compressed bundles, handed to the formats crate as
//! [`Hooks`]: compression threads run at a lower priority than the hash beside them, and large
//! buffers ask for transparent huge pages. Both are best effort and Linux only.

use offload_formats::bundle::compressed::{Hook, Hooks};

/// What `offload-bundler` and `offload-build` run on compression threads and buffers.
pub(crate) const HOOKS: Hooks = Hooks {
    compressor_thread: Some(Hook {
        name: "yield the CPU to the hash",
        run: yield_cpu_to_hash,
    }),
    fresh_buffer: Some(Hook {
        name: "advise huge pages",
        run: advise_huge_pages,
    }),
};

/// Lowers the calling thread's scheduling priority (and that of the threads it starts). The
/// hash is the critical path and cannot be split: zstd's workers, which inherit this thread's
/// priority, take what the hash leaves of the CPUs. Only Linux gives each thread its own nice
/// value.
fn yield_cpu_to_hash() {
    #[cfg(target_os = "linux")]
    {
        // `None` is the calling thread on Linux; raising one's own nice value needs no
        // privilege. The thread ends with the compression.
        let _ = rustix::process::setpriority_process(None, 10);
    }
}

/// Asks for transparent huge pages on a large fresh buffer: filling it then takes a few
/// hundred page faults instead of tens of thousands. Only advice; failures are ignored.
fn advise_huge_pages(buffer: &mut [u8]) {
    #[cfg(target_os = "linux")]
    if buffer.len() >= 8 << 20 {
        const HUGE: usize = 2 << 20;
        let start = buffer.as_mut_ptr() as usize;
        let aligned = start.next_multiple_of(HUGE);
        let end = (start + buffer.len()) & !(HUGE - 1);
        if end > aligned {
            // SAFETY: the range lies inside `buffer`, which this function borrows mutably;
            // MADV_HUGEPAGE changes no contents.
            let _ = unsafe {
                rustix::mm::madvise(
                    aligned as *mut std::ffi::c_void,
                    end - aligned,
                    rustix::mm::Advice::LinuxHugepage,
                )
            };
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = buffer;
}

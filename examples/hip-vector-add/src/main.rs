//! Prints what this executable carries — the architectures, sizes and kernels of the fat
//! binary that `build.rs` compiled — checked by reading the executable file itself with the
//! offload-build library, then launches `vector_add` by name when a GPU is present, through the
//! HIP runtime bindings of `hip-runtime-sys` (see `launch`).

mod launch;

use std::process::ExitCode;

use offload_build::builder::amdgpu_kernels;
use offload_build::bundle::BinaryBundle;

use launch::DeviceBuffer;

include!(concat!(env!("OUT_DIR"), "/kernels.rs"));

/// Finds the bundle that `container()` points at in the executable's own bytes: every occurrence
/// of the bundle magic that parses as a bundle with the same bytes as `container()`.
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
    let fat = container();
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

/// Runs `vector_add` on the first GPU through the HIP module API (`launch`); `Ok` with an
/// explanation when there is no GPU.
fn launch(fat: &[u8]) -> Result<String, String> {
    let count = launch::device_count()?;
    if count == 0 {
        return Ok("HIP runtime present but no GPU; not launching".into());
    }
    let module = launch::Module::load(fat)?;
    let vector_add = module.function(kernels::VECTOR_ADD.name)?;
    const N: u32 = 1 << 20;
    let a: Vec<f32> = (0..N).map(|i| i as f32).collect();
    let b: Vec<f32> = (0..N).map(|i| 2.0 * i as f32).collect();
    let (da, db) = (DeviceBuffer::from_host(&a)?, DeviceBuffer::from_host(&b)?);
    let dc = DeviceBuffer::from_host(&vec![0f32; N as usize])?;
    let block = 256;
    vector_add.launch(N.div_ceil(block), block, &[&da, &db, &dc, &N])?;
    let c = dc.to_host()?;
    let bad = (0..N as usize).filter(|&i| c[i] != 3.0 * i as f32).count();
    if bad != 0 {
        return Err(format!("vector_add gave {bad} wrong results of {N}"));
    }
    Ok(format!(
        "launched vector_add on {count} GPU(s): {N} sums correct"
    ))
}

//! Input files shared by all tests of one test process, built once on first use:
//! AMDGPU code objects compiled by clang 19, pseudo-random payloads (the 64 MiB one included),
//! and small text inputs for every text bundle type, with and without a final newline.
//!
//! They live in `$CARGO_TARGET_TMPDIR/fixtures-<pid>`, removed when the process exits; directories
//! left behind by killed processes are removed by the next process.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use super::{CLANG19, SETUP_HINT, require};

/// Processors of the compiled code objects; one carries a target feature.
pub const CODE_OBJECT_ARCHS: [&str; 4] = ["gfx906", "gfx908", "gfx90a:xnack+", "gfx1100"];

/// Sizes of the pseudo-random payloads.
pub const PAYLOAD_SIZES: [usize; 6] = [0, 1, 4095, 4096, 4097, LARGE_PAYLOAD];

/// The large payload: 64 MiB.
pub const LARGE_PAYLOAD: usize = 64 << 20;

/// Every text bundle type (LLVM's text handler) with its comment string, see spec A.0.
pub const TEXT_TYPES: [&str; 7] = ["i", "ii", "cui", "hipi", "d", "ll", "s"];

/// Which entry a text input is meant for; each gets different content.
#[derive(Clone, Copy, Debug)]
pub enum Role {
    Host,
    Dev1,
    Dev2,
}

/// Handle to the fixture directory.
pub struct Fixtures {
    dir: PathBuf,
}

/// The fixtures, built on first call (concurrent callers wait for the first).
pub fn fixtures() -> &'static Fixtures {
    static FIXTURES: OnceLock<Fixtures> = OnceLock::new();
    FIXTURES.get_or_init(build)
}

impl Fixtures {
    /// Code object compiled for `arch` (one of [`CODE_OBJECT_ARCHS`]).
    pub fn code_object(&self, arch: &str) -> PathBuf {
        assert!(
            CODE_OBJECT_ARCHS.contains(&arch),
            "no code object for {arch}"
        );
        self.dir.join(format!("{}.co", file_safe(arch)))
    }

    /// Pseudo-random payload of `size` bytes (one of [`PAYLOAD_SIZES`]).
    pub fn payload(&self, size: usize) -> PathBuf {
        assert!(PAYLOAD_SIZES.contains(&size), "no payload of {size} bytes");
        self.dir.join(format!("payload-{size}.bin"))
    }

    /// Text input of type `ty` (one of [`TEXT_TYPES`]) for `role`, ending in `\n` or not.
    pub fn text(&self, ty: &str, role: Role, final_newline: bool) -> PathBuf {
        assert!(TEXT_TYPES.contains(&ty), "no text type {ty}");
        let nl = if final_newline { "nl" } else { "nonl" };
        self.dir.join(format!("text-{role:?}-{nl}.{ty}"))
    }
}

/// `gfx90a:xnack+` -> `gfx90a_xnackp`.
fn file_safe(s: &str) -> String {
    s.replace(':', "_").replace('+', "p").replace('-', "m")
}

/// The declarations a HIP translation unit needs from the runtime headers to launch kernels,
/// for sources compiled with `-nogpuinc` (no ROCm here).
pub const RUNTIME_DECLS: &str = r#"struct dim3 { unsigned x, y, z; __attribute__((host, device)) dim3(unsigned a = 1, unsigned b = 1, unsigned c = 1) : x(a), y(b), z(c) {} };
typedef struct ihipStream_t *hipStream_t;
extern "C" int hipLaunchKernel(const void *, dim3, dim3, void **, unsigned long, hipStream_t);
extern "C" int __hipPopCallConfiguration(dim3 *, dim3 *, unsigned long *, hipStream_t *);
extern "C" int __hipPushCallConfiguration(dim3, dim3, unsigned long, hipStream_t);
"#;

/// A fresh, empty `$CARGO_TARGET_TMPDIR/<prefix><pid>` for this test process's fixtures; the
/// directories of test processes with this prefix that no longer run are removed first.
pub fn process_dir(prefix: &str) -> PathBuf {
    let base = Path::new(env!("CARGO_TARGET_TMPDIR"));
    std::fs::create_dir_all(base).expect("create CARGO_TARGET_TMPDIR");
    remove_stale(base, prefix);
    let dir = base.join(format!("{prefix}{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create fixture dir");
    dir
}

fn build() -> Fixtures {
    let dir = process_dir("fixtures-");
    remove_at_exit(dir.clone());

    compile_code_objects(&dir);
    for size in PAYLOAD_SIZES {
        std::fs::write(
            dir.join(format!("payload-{size}.bin")),
            prng_bytes(size as u64, size),
        )
        .expect("write payload");
    }
    for ty in TEXT_TYPES {
        for role in [Role::Host, Role::Dev1, Role::Dev2] {
            let body = text_body(ty, role);
            let fx = Fixtures { dir: dir.clone() };
            std::fs::write(fx.text(ty, role, true), &body).expect("write text");
            std::fs::write(fx.text(ty, role, false), body.trim_end_matches('\n'))
                .expect("write text");
        }
    }
    Fixtures { dir }
}

/// Deterministic bytes (splitmix64), different for each seed.
pub fn prng_bytes(seed: u64, len: usize) -> Vec<u8> {
    let mut state = seed ^ 0x6a09_e667_f3bc_c908;
    let mut out = Vec::with_capacity(len + 8);
    while out.len() < len {
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        out.extend_from_slice(&(z ^ (z >> 31)).to_le_bytes());
    }
    out.truncate(len);
    out
}

fn text_body(ty: &str, role: Role) -> String {
    let tag = format!("{role:?}").to_lowercase();
    match ty {
        "i" | "ii" | "cui" | "hipi" => format!(
            "# 1 \"k.{ty}\"\n// a comment line that is not a bundle marker\nint {tag}_value = 1;\n\nint {tag}_fn(void) {{ return {tag}_value; }}\n"
        ),
        "d" => format!("{tag}.o: k.c k.h \\\n  /usr/include/stdio.h\n# not a marker\n"),
        "ll" => format!(
            "; ModuleID = '{tag}'\nsource_filename = \"k.c\"\n@{tag} = global i32 1, align 4\n"
        ),
        "s" => format!("\t.text\n# not a marker\n\t.globl\t{tag}\n{tag}:\n\tret\n"),
        _ => unreachable!("text type {ty}"),
    }
}

/// A HIP kernel that needs no headers, compiled to a linked code object (not to a bundle:
/// without `--no-gpu-bundle-output` clang writes a `.hipfb`-style offload bundle).
fn compile_code_objects(dir: &Path) {
    let clang = require(CLANG19);
    std::fs::write(
        dir.join("k.hip"),
        "extern \"C\" __attribute__((global)) void k(int *p) { p[__builtin_amdgcn_workitem_id_x()] = 42; }\n",
    )
    .expect("write k.hip");
    for arch in CODE_OBJECT_ARCHS {
        let out = format!("{}.co", file_safe(arch));
        let res = Command::new(&clang)
            .current_dir(dir)
            .args(["-x", "hip", "-nogpulib", "-nogpuinc", "--cuda-device-only"])
            .arg("--no-gpu-bundle-output")
            .arg(format!("--offload-arch={arch}"))
            .args(["-c", "k.hip", "-o", &out])
            .output()
            .expect("run clang 19");
        assert!(
            res.status.success(),
            "clang 19 could not compile a code object for {arch} ({SETUP_HINT}):\n{}",
            String::from_utf8_lossy(&res.stderr)
        );
        let bytes = std::fs::read(dir.join(&out)).expect("read code object");
        assert!(
            bytes.starts_with(b"\x7fELF"),
            "clang 19 output for {arch} is not an ELF code object"
        );
    }
}

fn remove_stale(base: &Path, prefix: &str) {
    let Ok(rd) = std::fs::read_dir(base) else {
        return;
    };
    for ent in rd.flatten() {
        let name = ent.file_name().to_string_lossy().into_owned();
        if let Some(pid) = name.strip_prefix(prefix)
            && !Path::new("/proc").join(pid).exists()
        {
            let _ = std::fs::remove_dir_all(ent.path());
        }
    }
}

fn remove_at_exit(dir: PathBuf) {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    extern "C" fn cleanup() {
        if let Some(d) = DIR.get() {
            let _ = std::fs::remove_dir_all(d);
        }
    }
    if DIR.set(dir).is_ok() {
        // SAFETY: registers a plain function without arguments; it only removes a directory.
        unsafe {
            libc::atexit(cleanup);
        }
    }
}

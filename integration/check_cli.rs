//! `offload-build check` and `inspect --archs` over whole installs: shared libraries linked by
//! ld.lld from host objects that embed clang 19's code objects (exact processors, a generic
//! `gfx11-generic` code object of code object version 6, `gfx90a:xnack+`), a Python wheel
//! built here holding two of them, a directory tree with links out of it, offload binaries
//! for NVIDIA architectures (cubin, PTX, `sm_90a`), and `--gpu native` on a machine whose
//! topology has no GPU (exit 2) or a fake gfx1151.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use crate::support::fixtures::process_dir;
use crate::support::run::offload_build;
use crate::support::{CLANG19, fixtures, require};

const OURS: &str = env!("CARGO_BIN_EXE_offload-build");
const PACKAGER: &str = env!("CARGO_BIN_EXE_offload-packager");
const LLD: &str = "/usr/lib/llvm-22/bin/ld.lld";

fn tool_env(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> (i32, String, String) {
    offload_build(dir, args, env)
}

fn tool(dir: &Path, args: &[&str]) -> (i32, String, String) {
    offload_build(dir, args, &[])
}

struct Install {
    dir: PathBuf,
}

/// `liba.so` (gfx1100, gfx90a:xnack+), `libg.so` (gfx11-generic, compressed bundle),
/// `w.whl` holding both, `tree/` (liba.so, sub/libg.so, a link out of the tree, a link to
/// liba.so, a text file) and `nv.bin` (offload binary: sm_70 cubin, compute_80 PTX, sm_90a
/// cubin).
fn install() -> &'static Install {
    static I: OnceLock<Install> = OnceLock::new();
    I.get_or_init(|| {
        let dir = process_dir("check-cli-");
        let f = fixtures();
        require(LLD);
        // A generic code object: code object version 6.
        std::fs::write(
            dir.join("k.hip"),
            "__attribute__((global)) void k(float *x) { x[0] = 1.0f; }\n",
        )
        .unwrap();
        let out = Command::new(require(CLANG19))
            .current_dir(&dir)
            .args(["-x", "hip", "-nogpulib", "-nogpuinc", "--cuda-device-only"])
            .args(["--no-gpu-bundle-output", "--offload-arch=gfx11-generic"])
            .args(["-mcode-object-version=6", "-c", "k.hip", "-o", "generic.co"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let so = |name: &str, cos: &[(&str, PathBuf)], compress: bool| {
            let obj = format!("{name}.o");
            let mut args = vec![
                "embed".to_owned(),
                "hip".into(),
                "--target".into(),
                "x86_64-unknown-linux-gnu".into(),
                "-o".into(),
                obj.clone(),
            ];
            for (t, p) in cos {
                args.push("--code-object".into());
                args.push(format!("{t}={}", p.display()));
            }
            if compress {
                args.push("--compress".into());
            }
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let (code, _, err) = tool(&dir, &args);
            assert_eq!(code, 0, "{err}");
            let st = Command::new(LLD)
                .current_dir(&dir)
                .args(["-shared", &obj, "-o", &format!("{name}.so")])
                .status()
                .unwrap();
            assert!(st.success());
        };
        so(
            "liba",
            &[
                ("gfx1100", f.code_object("gfx1100")),
                ("gfx90a:xnack+", f.code_object("gfx90a:xnack+")),
            ],
            false,
        );
        so("libg", &[("gfx11-generic", dir.join("generic.co"))], true);
        // Two bundles in one library (two translation units): gfx1100 and gfx906 in the
        // first, gfx906 alone in the second.
        let obj = |name: &str, prefix: &str, cos: &[&str]| {
            let mut args: Vec<String> = ["embed", "hip", "--target", "x86_64-unknown-linux-gnu"]
                .iter()
                .map(|s| s.to_string())
                .collect();
            args.extend([
                "--symbol-prefix".into(),
                prefix.into(),
                "-o".into(),
                name.into(),
            ]);
            for arch in cos {
                args.push("--code-object".into());
                args.push(format!("{arch}={}", f.code_object(arch).display()));
            }
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let (code, _, err) = tool(&dir, &args);
            assert_eq!(code, 0, "{err}");
        };
        obj("m1.o", "one_", &["gfx1100", "gfx906"]);
        obj("m2.o", "two_", &["gfx906"]);
        let st = Command::new(LLD)
            .current_dir(&dir)
            .args(["-shared", "m1.o", "m2.o", "-o", "libmix.so"])
            .status()
            .unwrap();
        assert!(st.success());
        let st = Command::new("/usr/lib/llvm-22/bin/llvm-ar")
            .current_dir(&dir)
            .args(["rc", "libm.a", "m1.o", "m2.o"])
            .status()
            .unwrap();
        assert!(st.success());

        // The wheel: written here, deflated, with a Python file beside the libraries.
        let mut zw = zip::ZipWriter::new(std::fs::File::create(dir.join("w.whl")).unwrap());
        let opts = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated);
        for (member, file) in [("pkg/_a.so", "liba.so"), ("pkg/lib/_g.so", "libg.so")] {
            zw.start_file(member, opts).unwrap();
            zw.write_all(&std::fs::read(dir.join(file)).unwrap())
                .unwrap();
        }
        zw.start_file("pkg/__init__.py", opts).unwrap();
        zw.write_all(b"# nothing\n").unwrap();
        zw.finish().unwrap();
        // A wheel cut short: its central directory is gone.
        let whole = std::fs::read(dir.join("w.whl")).unwrap();
        std::fs::write(dir.join("cut.whl"), &whole[..whole.len() / 2]).unwrap();

        let tree = dir.join("tree");
        std::fs::create_dir_all(tree.join("sub")).unwrap();
        std::fs::copy(dir.join("liba.so"), tree.join("liba.so")).unwrap();
        std::fs::copy(dir.join("libg.so"), tree.join("sub/libg.so")).unwrap();
        std::os::unix::fs::symlink("liba.so", tree.join("liba.so.1")).unwrap();
        std::os::unix::fs::symlink(&dir, tree.join("outside")).unwrap();
        std::os::unix::fs::symlink(dir.join("libg.so"), tree.join("libg-link.so")).unwrap();
        std::fs::write(tree.join("README"), "text\n").unwrap();

        // NVIDIA entries in an offload binary: the image kind comes from the extension.
        for (name, bytes) in [("a.cubin", "cubin"), ("p.s", "ptx"), ("h.cubin", "cubin")] {
            std::fs::write(dir.join(name), bytes).unwrap();
        }
        let st = Command::new(PACKAGER)
            .current_dir(&dir)
            .args([
                "-o",
                "nv.bin",
                "--image=file=a.cubin,triple=nvptx64-nvidia-cuda,arch=sm_70,kind=cuda",
                "--image=file=p.s,triple=nvptx64-nvidia-cuda,arch=sm_80,kind=cuda",
                "--image=file=h.cubin,triple=nvptx64-nvidia-cuda,arch=sm_90a,kind=cuda",
            ])
            .status()
            .unwrap();
        assert!(st.success());
        Install { dir }
    })
}

#[test]
fn archs_of_files_directories_and_wheels() {
    let i = install();
    let (code, out, err) = tool(&i.dir, &["inspect", "--archs", "liba.so", "tree", "w.whl"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out,
        "liba.so: gfx1100 gfx90a:xnack+\n\
         tree/liba.so: gfx1100 gfx90a:xnack+\n\
         tree/sub/libg.so: gfx11-generic\n\
         w.whl!/pkg/_a.so: gfx1100 gfx90a:xnack+\n\
         w.whl!/pkg/lib/_g.so: gfx11-generic\n"
    );
    // The JSON reports carry the same sets; without --archs, the whole reports.
    let (code, out, _) = tool(&i.dir, &["inspect", "--archs", "--json", "w.whl"]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v[1]["path"], "w.whl!/pkg/lib/_g.so");
    assert_eq!(v[1]["archs"], serde_json::json!(["gfx11-generic"]));
    let (code, out, _) = tool(&i.dir, &["inspect", "--json", "tree"]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v.as_array().unwrap().len(), 2, "{out}");
    assert_eq!(v[1]["containers"][0]["kind"], "compressed-bundle");
    assert_eq!(v[1]["archs"], serde_json::json!(["gfx11-generic"]));
    // Nothing was unpacked beside the wheel.
    assert!(!i.dir.join("pkg").exists());
    // `-` is standard input, as before.
    let out = Command::new(OURS)
        .current_dir(&i.dir)
        .args(["inspect", "--archs", "-"])
        .stdin(std::fs::File::open(i.dir.join("libg.so")).unwrap())
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(String::from_utf8_lossy(&out.stdout), "-: gfx11-generic\n");
}

#[test]
fn wheel_with_a_library_lacking_the_gpu() {
    let i = install();
    let (code, out, err) = tool(&i.dir, &["check", "--gpu", "gfx1151", "w.whl"]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        out.contains(
            "w.whl!/pkg/_a.so: gfx1151: no code object loads; the file has gfx1100 gfx90a:xnack+\n"
        ),
        "{out}"
    );
    assert!(
        out.contains("  hipv4-amdgcn-amd-amdhsa--gfx1100: code for gfx1100, another processor\n"),
        "{out}"
    );
    assert!(
        out.contains(
            "w.whl!/pkg/lib/_g.so: gfx1151: loads hipv4-amdgcn-amd-amdhsa--gfx11-generic \
             (generic processor gfx11-generic)\n"
        ),
        "{out}"
    );
    // Both libraries have code for gfx1100 (one exact, one generic).
    let (code, out, err) = tool(&i.dir, &["check", "--gpu", "gfx1100", "w.whl"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains(
        "w.whl!/pkg/_a.so: gfx1100: loads hipv4-amdgcn-amd-amdhsa--gfx1100 (same processor)"
    ));
}

#[test]
fn directory() {
    let i = install();
    // Links in the tree are not followed: `outside` would add the wheel and the libraries
    // beside it, `libg-link.so` a second generic library.
    let (code, out, err) = tool(&i.dir, &["check", "--gpu", "gfx1200", "--json", "tree"]);
    assert_eq!(code, 1, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let files: Vec<&str> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert_eq!(files, ["tree/liba.so", "tree/sub/libg.so"]);
    assert_eq!(v[1]["gpus"][0]["loads"], false);
    assert_eq!(
        v[1]["gpus"][0]["rejected"][0]["reason"],
        "gfx11-generic does not cover this processor"
    );
    let (code, out, err) = tool(
        &i.dir,
        &["check", "--gpu", "gfx1103", "--gpu", "gfx1100", "tree"],
    );
    assert_eq!(code, 1, "{out}{err}");
    assert_eq!(out.matches(": loads ").count(), 3, "{out}");
}

/// Each rule through the command: generic, xnack, NVIDIA major/minor, PTX, arch-specific.
#[test]
fn rules() {
    let i = install();
    let status = |gpu: &str, file: &str| tool(&i.dir, &["check", "--gpu", gpu, file]);
    // Generic (AMDGPUUsage generic-processor table).
    assert_eq!(status("gfx1151", "libg.so").0, 0);
    assert_eq!(status("gfx1036", "libg.so").0, 1);
    // xnack: `+` in the code object needs a GPU running with xnack+.
    assert_eq!(status("gfx90a:xnack+", "liba.so").0, 0);
    let (code, out, _) = status("gfx90a:xnack-", "liba.so");
    assert_eq!(code, 1);
    assert!(
        out.contains("built for xnack+, the GPU runs with xnack-"),
        "{out}"
    );
    let (code, out, _) = status("gfx90a", "liba.so");
    assert_eq!(code, 0);
    assert!(out.contains("if the GPU runs with xnack+"), "{out}");
    // NVIDIA: the sm_70 cubin on 7.5 (same major, higher minor), not on 8.0 where the
    // compute_80 PTX is used; 9.0 takes the PTX or sm_90a; 6.1 takes nothing.
    let (code, out, _) = status("7.5", "nv.bin");
    assert_eq!(code, 0);
    assert!(
        out.contains("loads cuda-nvptx64-nvidia-cuda-sm_70 (cubin"),
        "{out}"
    );
    let (code, out, _) = status("sm_80", "nv.bin");
    assert_eq!(code, 0);
    assert!(
        out.contains("loads cuda-nvptx64-nvidia-cuda-sm_80 (PTX"),
        "{out}"
    );
    let (code, out, _) = status("sm_61", "nv.bin");
    assert_eq!(code, 1);
    assert!(
        out.contains("cuda-nvptx64-nvidia-cuda-sm_70: cubin for another major compute capability")
    );
    assert!(out.contains("cuda-nvptx64-nvidia-cuda-sm_80: code for a higher compute capability"));
    assert!(
        out.contains("cuda-nvptx64-nvidia-cuda-sm_90a: architecture-specific code for another GPU")
    );
    let (code, out, _) = tool(&i.dir, &["check", "--gpu", "9.0", "--json", "nv.bin"]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v[0]["gpus"][0]["loads"], true);
    assert_eq!(v[0]["gpus"][0]["entry"], "cuda-nvptx64-nvidia-cuda-sm_90a");
    assert_eq!(
        v[0]["gpus"][0]["rule"],
        "architecture-specific code for this GPU"
    );
    // AMD code on an NVIDIA GPU and the other way round.
    let (code, out, _) = status("sm_90", "liba.so");
    assert_eq!(code, 1);
    assert!(out.contains("code for another vendor's GPUs"), "{out}");
    // Bad GPU names are usage errors.
    let (code, _, err) = status("gfx1100:xnack+", "liba.so");
    assert_eq!(code, 2);
    assert!(err.contains("gfx1100 has no 'xnack' setting"), "{err}");
}

#[test]
fn native_gpu() {
    let i = install();
    let empty = i.dir.join("no-gpu-sysfs");
    std::fs::create_dir_all(&empty).unwrap();
    let no_tools = i.dir.join("no-tools");
    std::fs::create_dir_all(&no_tools).unwrap();
    let env = [
        ("OFFLOAD_BUILD_SYSFS", empty.to_str().unwrap()),
        ("PATH", no_tools.to_str().unwrap()),
    ];
    let (code, out, err) = tool_env(&i.dir, &["check", "--gpu", "native", "liba.so"], &env);
    assert_eq!(code, 2, "{out}{err}");
    assert!(out.is_empty());
    assert!(
        err.contains("--gpu native: this machine has no GPU that offload-build can see"),
        "{err}"
    );
    // A KFD topology with a CPU node and a gfx1151.
    let sysfs = i.dir.join("gfx1151-sysfs");
    for (node, v) in [("0", "0"), ("1", "110501")] {
        let d = sysfs.join("class/kfd/kfd/topology/nodes").join(node);
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(
            d.join("properties"),
            format!("cpu_cores_count 0\ngfx_target_version {v}\nvendor_id 4098\n"),
        )
        .unwrap();
    }
    let env = [
        ("OFFLOAD_BUILD_SYSFS", sysfs.to_str().unwrap()),
        ("PATH", no_tools.to_str().unwrap()),
    ];
    let (code, out, err) = tool_env(&i.dir, &["check", "--gpu", "native", "libg.so"], &env);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.starts_with("libg.so: gfx1151: loads"), "{out}");
}

/// Each bundle of a library is registered on its own: a GPU must have code in every one.
/// Static archives are read member by member.
#[test]
fn every_bundle_needs_code_and_archives() {
    let i = install();
    let (code, out, err) = tool(&i.dir, &["check", "--gpu", "gfx1100", "libmix.so"]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        out.starts_with(
            "libmix.so: gfx1100: no code object loads from 1 of 2 containers (1); the file has gfx1100 gfx906\n"
        ),
        "{out}"
    );
    let (code, out, _) = tool(&i.dir, &["check", "--gpu", "gfx906:xnack-", "libmix.so"]);
    assert_eq!(code, 0);
    assert!(out.contains(", and from each of the 2 containers"), "{out}");
    let (code, out, err) = tool(&i.dir, &["inspect", "--archs", "libm.a"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, "libm.a: gfx1100 gfx906\n");
    let (code, _, _) = tool(&i.dir, &["check", "--gpu", "gfx906", "libm.a"]);
    assert_eq!(code, 0);
}

/// A damaged wheel is an error naming it (exit 1), the other inputs are still read.
#[test]
fn damaged_wheel() {
    let i = install();
    let (code, out, err) = tool(&i.dir, &["inspect", "--archs", "cut.whl", "libg.so"]);
    assert_eq!(code, 1);
    assert_eq!(out, "libg.so: gfx11-generic\n");
    assert!(
        err.starts_with("offload-build: error: 'cut.whl': not a readable zip file: "),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
}

/// The progress line: on a terminal (here the pseudo-terminal of `script`) for an input that
/// takes more than a second (a FIFO whose writer waits 1.5 s), never when standard error is
/// not a terminal.
#[test]
fn progress_line_only_on_a_terminal() {
    let i = install();
    let run = |on_terminal: bool| -> String {
        let dir = i.dir.join(format!("progress-{on_terminal}"));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let fifo = dir.join("slow.so");
        let st = Command::new("mkfifo").arg(&fifo).status().unwrap();
        assert!(st.success());
        let lib = std::fs::read(i.dir.join("liba.so")).unwrap();
        let writer = {
            let fifo = fifo.clone();
            std::thread::spawn(move || {
                let mut f = std::fs::OpenOptions::new().write(true).open(fifo).unwrap();
                std::thread::sleep(std::time::Duration::from_millis(1500));
                f.write_all(&lib).unwrap();
            })
        };
        let out = if on_terminal {
            Command::new("script")
                .args(["-qec"])
                .arg(format!("{OURS} inspect --archs {}", fifo.display()))
                .arg("/dev/null")
                .output()
                .unwrap()
        } else {
            Command::new(OURS)
                .args(["inspect", "--archs"])
                .arg(&fifo)
                .output()
                .unwrap()
        };
        writer.join().unwrap();
        assert!(out.status.success(), "{out:?}");
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    };
    let tty = run(true);
    assert!(
        tty.contains(&format!(
            "offload-build: reading {}",
            i.dir.join("progress-true/slow.so").display()
        )),
        "{tty:?}"
    );
    assert!(tty.contains("gfx1100 gfx90a:xnack+"), "{tty:?}");
    let piped = run(false);
    assert!(!piped.contains("reading"), "{piped:?}");
    assert!(
        piped.ends_with("slow.so: gfx1100 gfx90a:xnack+\n"),
        "{piped:?}"
    );
}

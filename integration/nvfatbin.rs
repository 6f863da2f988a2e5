//! NVIDIA fat binaries (`offload_formats::nvfatbin`) against NVIDIA's own tools from PyPI
//! (the virtualenv of `build-support/setup.sh`, see `support::nvidia`): clang 19 compiles a
//! kernel to PTX for sm_80 and sm_90, ptxas 12.9 assembles the cubins, and
//!
//! - `cuobjdump --list-elf --list-ptx` lists exactly the entries of our fat binary, and
//!   `cuobjdump -xelf all -xptx all` extracts byte-identical cubins and PTX;
//! - nvFatbin (`libnvfatbin.so.12`, called through Python's ctypes) given the same inputs
//!   writes the same entries field by field (the PTX payload aside: nvFatbin minifies it);
//! - our reader reads what nvFatbin (plain and compressed), `fatbinary` and `nvcc -fatbin`
//!   write.
//!
//! No GPU is needed. A missing wheel fails the tests (run `build-support/setup.sh`).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use offload_formats::nvfatbin::{Compression, Entry, EntryKind, Fatbin, FatbinWriter, Flags};

use crate::support::nvidia::{self, check, cuobjdump_list};
use crate::support::{CLANG19, fixtures::process_dir, require};

/// The kernel every test compiles; no CUDA headers (clang's `-nocudainc`).
pub const SAXPY_CU: &str = r#"
#define __global__ __attribute__((global))
extern "C" __global__ void saxpy(float a, const float *x, float *y, int n) {
  int i = __nvvm_read_ptx_sreg_ctaid_x() * __nvvm_read_ptx_sreg_ntid_x()
        + __nvvm_read_ptx_sreg_tid_x();
  if (i < n) y[i] = a * x[i] + y[i];
}
"#;

/// The architectures of the fixtures.
pub const ARCHS: [u32; 2] = [80, 90];

/// PTX and cubins of [`SAXPY_CU`] for [`ARCHS`].
pub struct NvFixtures {
    /// The directory holding them.
    pub dir: PathBuf,
}

impl NvFixtures {
    /// `saxpy-sm_<arch>.ptx`.
    pub fn ptx(&self, arch: u32) -> PathBuf {
        self.dir.join(format!("saxpy-sm_{arch}.ptx"))
    }
    /// `saxpy-sm_<arch>.cubin`.
    pub fn cubin(&self, arch: u32) -> PathBuf {
        self.dir.join(format!("saxpy-sm_{arch}.cubin"))
    }
    /// The directory `name` beside the fixtures, created: one per test.
    pub fn subdir(&self, name: &str) -> PathBuf {
        let dir = self.dir.join(name);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }
}

/// Compiles the fixtures once per test process.
pub fn nv_fixtures() -> &'static NvFixtures {
    static F: OnceLock<NvFixtures> = OnceLock::new();
    F.get_or_init(|| {
        let dir = process_dir("nvfatbin-");
        let src = dir.join("saxpy.cu");
        std::fs::write(&src, SAXPY_CU).unwrap();
        let f = NvFixtures { dir };
        for arch in ARCHS {
            ptx_and_cubin(&src, &arch.to_string(), &f.ptx(arch), &f.cubin(arch));
        }
        f
    })
}

/// Compiles the CUDA source `src` for `sm_<arch>` to `ptx` with clang 19, then `ptx` to
/// `cubin` with ptxas.
fn ptx_and_cubin(src: &Path, arch: &str, ptx: &Path, cubin: &Path) {
    check(
        Command::new(require(CLANG19))
            .args([
                "-x",
                "cuda",
                "--cuda-device-only",
                "-nocudalib",
                "-nocudainc",
            ])
            .arg(format!("--offload-arch=sm_{arch}"))
            .args(["-O2", "-S", "-o"])
            .arg(ptx)
            .arg(src),
        &format!("clang 19 -> PTX sm_{arch}"),
    );
    check(
        Command::new(nvidia::ptxas())
            .arg(format!("-arch=sm_{arch}"))
            .arg(ptx)
            .arg("-o")
            .arg(cubin),
        &format!("ptxas sm_{arch}"),
    );
}

/// Our fat binary of the fixtures: for each arch its cubin, then its PTX, identifier
/// `saxpy_<arch>`.
pub fn ours(f: &NvFixtures) -> Vec<u8> {
    let mut w = FatbinWriter::new();
    for arch in ARCHS {
        let id = format!("saxpy_{arch}");
        w.add_cubin(
            &format!("sm_{arch}"),
            &std::fs::read(f.cubin(arch)).unwrap(),
            Some(&id),
        )
        .unwrap();
        w.add_ptx(
            &format!("compute_{arch}"),
            &std::fs::read(f.ptx(arch)).unwrap(),
            Some(&id),
            None,
        )
        .unwrap();
    }
    w.to_bytes()
}

const NVFATBIN_PY: &str = r#"
import ctypes, sys
lib = ctypes.CDLL(sys.argv[1])
lib.nvFatbinGetErrorString.restype = ctypes.c_char_p
opts = [o.encode() for o in sys.argv[3].split()]
arr = (ctypes.c_char_p * max(1, len(opts)))(*opts)
h = ctypes.c_void_p()
def ck(r, what):
    if r != 0:
        sys.exit(what + ": " + lib.nvFatbinGetErrorString(r).decode())
ck(lib.nvFatbinCreate(ctypes.byref(h), arr, ctypes.c_size_t(len(opts))), "nvFatbinCreate")
for spec in sys.argv[4:]:
    kind, arch, ident, path = spec.split(":", 3)
    data = open(path, "rb").read()
    if kind == "ptx":
        ck(lib.nvFatbinAddPTX(h, ctypes.c_char_p(data), ctypes.c_size_t(len(data)),
                              arch.encode(), ident.encode(), None), "nvFatbinAddPTX")
    else:
        ck(lib.nvFatbinAddCubin(h, ctypes.c_char_p(data), ctypes.c_size_t(len(data)),
                                arch.encode(), ident.encode()), "nvFatbinAddCubin")
n = ctypes.c_size_t()
ck(lib.nvFatbinSize(h, ctypes.byref(n)), "nvFatbinSize")
buf = ctypes.create_string_buffer(n.value)
ck(lib.nvFatbinGet(h, buf), "nvFatbinGet")
open(sys.argv[2], "wb").write(buf.raw)
ck(lib.nvFatbinDestroy(ctypes.byref(h)), "nvFatbinDestroy")
"#;

/// nvFatbin's fat binary of the fixtures, entries in [`ours`]'s order, with `options`
/// (`-64 -compress=false`, …), written to `out`.
pub fn nvfatbin(f: &NvFixtures, options: &str, out: &Path) -> Vec<u8> {
    let mut specs = Vec::new();
    for arch in ARCHS {
        let id = format!("saxpy_{arch}");
        specs.push(format!("elf:{arch}:{id}:{}", f.cubin(arch).display()));
        specs.push(format!("ptx:{arch}:{id}:{}", f.ptx(arch).display()));
    }
    nvfatbin_of(f, options, out, &specs)
}

/// nvFatbin's fat binary of `specs` (`elf|ptx:ARCH:IDENTIFIER:FILE`).
pub fn nvfatbin_of(f: &NvFixtures, options: &str, out: &Path, specs: &[String]) -> Vec<u8> {
    let script = f.dir.join("nvfatbin.py");
    std::fs::write(&script, NVFATBIN_PY).unwrap();
    let mut cmd = Command::new(nvidia::python());
    cmd.arg(&script)
        .arg(nvidia::libnvcontainer())
        .arg(out)
        .arg(options)
        .args(specs);
    check(&mut cmd, "nvFatbin");
    std::fs::read(out).unwrap()
}

/// `cuobjdump <what> all… <file>` run in the directory `into` (created), where it writes the
/// extracted entries (`what`: `-xelf`, `-xptx`).
pub(crate) fn cuobjdump_extract(file: &Path, into: &Path, what: &[&str]) {
    std::fs::create_dir_all(into).unwrap();
    let mut cmd = Command::new(nvidia::cuobjdump());
    cmd.current_dir(into);
    for w in what {
        cmd.args([w, "all"]);
    }
    check(cmd.arg(file), &format!("cuobjdump {what:?}"));
}

/// What `cuobjdump --list-elf --list-ptx` prints for the entries of `fatbin`, named as it
/// names them (`<identifier>.sm_XX.cubin`, or `<file stem>.<n>.sm_XX.cubin` without one).
pub fn expected_listing(fatbin: &Fatbin<'_>, stem: &str) -> Vec<String> {
    let (mut elf, mut ptx) = (Vec::new(), Vec::new());
    for e in fatbin.entries() {
        let (list, ext) = match e.kind() {
            EntryKind::Elf => (&mut elf, "cubin"),
            EntryKind::Ptx => (&mut ptx, "ptx"),
            EntryKind::Other(_) => continue,
        };
        let n = list.len() + 1;
        let name = match e.identifier() {
            Some(id) => format!("{}.sm_{}.{ext}", String::from_utf8_lossy(id), e.arch()),
            None => format!("{stem}.{n}.sm_{}.{ext}", e.arch()),
        };
        let label = if ext == "cubin" { "ELF" } else { "PTX" };
        list.push(format!("{label} file {n:>4}: {name}"));
    }
    // cuobjdump lists each fat binary's ELF and PTX entries interleaved in stored order.
    let mut out = Vec::new();
    let (mut i, mut j) = (0, 0);
    for e in fatbin.entries() {
        match e.kind() {
            EntryKind::Elf => {
                out.push(elf[i].clone());
                i += 1;
            }
            EntryKind::Ptx => {
                out.push(ptx[j].clone());
                j += 1;
            }
            EntryKind::Other(_) => {}
        }
    }
    out
}

#[test]
fn cuobjdump_lists_and_extracts_ours() {
    let f = nv_fixtures();
    let dir = f.subdir("cuobjdump-ours");
    let path = dir.join("ours.fatbin");
    let bytes = ours(f);
    std::fs::write(&path, &bytes).unwrap();
    let parsed = Fatbin::parse(&bytes).unwrap();
    let listing = cuobjdump_list(&path);
    assert_eq!(
        listing,
        [
            "ELF file    1: saxpy_80.sm_80.cubin",
            "PTX file    1: saxpy_80.sm_80.ptx",
            "ELF file    2: saxpy_90.sm_90.cubin",
            "PTX file    2: saxpy_90.sm_90.ptx",
        ]
    );
    assert_eq!(listing, expected_listing(&parsed, "ours"));
    cuobjdump_extract(&path, &dir, &["-xelf", "-xptx"]);
    for arch in ARCHS {
        let cubin = std::fs::read(dir.join(format!("saxpy_{arch}.sm_{arch}.cubin"))).unwrap();
        assert!(
            cubin == std::fs::read(f.cubin(arch)).unwrap(),
            "cuobjdump -xelf: sm_{arch} cubin differs from ptxas's"
        );
        let ptx = std::fs::read(dir.join(format!("saxpy_{arch}.sm_{arch}.ptx"))).unwrap();
        assert!(
            ptx == std::fs::read(f.ptx(arch)).unwrap(),
            "cuobjdump -xptx: sm_{arch} PTX differs from clang's"
        );
    }
}

#[test]
fn nvfatbin_writes_the_same_fields() {
    let f = nv_fixtures();
    let theirs_bytes = nvfatbin(
        f,
        "-64 -compress=false",
        &f.dir.join("nvfatbin-plain.fatbin"),
    );
    let ours_bytes = ours(f);
    let theirs = Fatbin::parse(&theirs_bytes).unwrap();
    let ours = Fatbin::parse(&ours_bytes).unwrap();
    assert_eq!(theirs.version(), ours.version());
    assert_eq!(theirs.header_size(), ours.header_size());
    assert_eq!(theirs.entries().len(), ours.entries().len());
    for (i, (t, o)) in theirs.entries().iter().zip(ours.entries()).enumerate() {
        let what = format!("entry {i} ({:?} sm_{})", o.kind(), o.arch());
        assert_eq!(t.kind(), o.kind(), "{what}: kind");
        assert_eq!(t.version(), o.version(), "{what}: entry version");
        assert_eq!(t.header_size(), o.header_size(), "{what}: header size");
        assert_eq!(t.arch(), o.arch(), "{what}: arch");
        assert_eq!(t.version_pair(), o.version_pair(), "{what}: version");
        assert_eq!(t.identifier(), o.identifier(), "{what}: identifier");
        assert_eq!(t.options(), o.options(), "{what}: options");
        assert_eq!(t.flags(), o.flags(), "{what}: flags");
        assert_eq!(t.flags(), Flags::LINUX_64, "{what}: flags");
        assert_eq!(
            t.compressed_size(),
            o.compressed_size(),
            "{what}: compressed size"
        );
        assert_eq!(
            t.uncompressed_size(),
            o.uncompressed_size(),
            "{what}: uncompressed size"
        );
        // The entry headers are the same bytes, but for the payload size of PTX.
        let th = &theirs_bytes[t.offset()..t.payload_offset()];
        let oh = &ours_bytes[o.offset()..o.payload_offset()];
        match o.kind() {
            EntryKind::Elf => {
                assert_eq!(th, oh, "{what}: header bytes");
                assert!(t.payload() == o.payload(), "{what}: cubin payload");
            }
            _ => {
                assert_eq!(
                    (&th[..8], &th[16..]),
                    (&oh[..8], &oh[16..]),
                    "{what}: header bytes"
                );
                // nvFatbin minifies PTX: it keeps every token of ours, in order.
                let tokens = |b: &[u8]| -> Vec<String> {
                    String::from_utf8_lossy(b)
                        .lines()
                        .map(|l| l.split("//").next().unwrap_or(""))
                        .flat_map(|l| l.split_whitespace().map(str::to_string).collect::<Vec<_>>())
                        .collect()
                };
                assert_eq!(
                    tokens(t.image().unwrap()),
                    tokens(o.image().unwrap()),
                    "{what}: PTX tokens"
                );
                assert!(t.payload().len() <= o.payload().len());
            }
        }
    }
}

#[test]
fn we_read_nvfatbin_fatbinary_and_nvcc() {
    let f = nv_fixtures();
    // nvFatbin's default compresses the PTX (LZ4); -compress-mode=size uses zstd.
    for (opts, want) in [
        ("-64", Compression::Lz4),
        ("-64 -compress-all -compress-mode=size", Compression::Zstd),
    ] {
        let path = f.dir.join(format!("nvfatbin-{}.fatbin", want));
        let bytes = nvfatbin(f, opts, &path);
        let fb = Fatbin::parse(&bytes).unwrap();
        assert_eq!(fb.size(), bytes.len());
        let kinds: Vec<_> = fb.entries().iter().map(|e| (e.kind(), e.arch())).collect();
        assert_eq!(
            kinds,
            [
                (EntryKind::Elf, 80),
                (EntryKind::Ptx, 80),
                (EntryKind::Elf, 90),
                (EntryKind::Ptx, 90)
            ],
            "{opts}"
        );
        let ptx = &fb.entries()[1];
        assert_eq!(ptx.compression(), Some(want), "{opts}");
        assert_eq!(ptx.image(), None);
        assert_eq!(ptx.stored().len(), ptx.compressed_size() as usize);
        assert_eq!(cuobjdump_list(&path), expected_listing(&fb, "x"), "{opts}");
        // Decompressed, every entry is what cuobjdump extracts (the cubins are compressed
        // too with -compress-all).
        let x = f.dir.join(format!("x-{want}"));
        cuobjdump_extract(&path, &x, &["-xelf", "-xptx"]);
        for (e, arch) in fb.entries().iter().zip([80, 80, 90, 90]) {
            let ext = if e.kind() == EntryKind::Elf {
                "cubin"
            } else {
                "ptx"
            };
            let theirs = std::fs::read(x.join(format!("saxpy_{arch}.sm_{arch}.{ext}"))).unwrap();
            let ours = match e.decompress(1 << 30).unwrap() {
                Some(d) => d,
                None => e.image().unwrap().to_vec(),
            };
            assert!(
                ours == theirs,
                "{opts}: {ext} sm_{arch} decompressed differs"
            );
        }
        assert_eq!(
            fb.entries()[0].compression().is_some(),
            opts.contains("compress-all")
        );
    }

    // fatbinary, without identifiers: cuobjdump names entries after the file.
    let path = f.dir.join("fatbinary.fatbin");
    let mut cmd = Command::new(nvidia::fatbinary());
    cmd.args(["--64", "--compress=false"])
        .arg(format!("--create={}", path.display()));
    for arch in ARCHS {
        cmd.arg(format!(
            "--image3=kind=elf,sm={arch},file={}",
            f.cubin(arch).display()
        ));
        cmd.arg(format!(
            "--image3=kind=ptx,sm={arch},file={}",
            f.ptx(arch).display()
        ));
    }
    check(&mut cmd, "fatbinary");
    let bytes = std::fs::read(&path).unwrap();
    let fb = Fatbin::parse(&bytes).unwrap();
    assert_eq!(fb.entries().len(), 4);
    for (e, arch) in fb.entries().iter().step_by(2).zip(ARCHS) {
        assert_eq!(
            (e.kind(), e.arch(), e.identifier()),
            (EntryKind::Elf, arch, None)
        );
        assert!(e.image().unwrap() == std::fs::read(f.cubin(arch)).unwrap());
    }
    assert_eq!(cuobjdump_list(&path), expected_listing(&fb, "fatbinary"));

    // nvcc -fatbin from PTX: a cubin it assembles and the PTX (zstd).
    let path = f.dir.join("nvcc.fatbin");
    let path_env = format!(
        "{}:{}",
        nvidia::cu13_bin().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    check(
        Command::new(nvidia::nvcc())
            .env("PATH", path_env)
            .args(["-fatbin", "-arch=sm_90", "-o"])
            .arg(&path)
            .arg(f.ptx(90)),
        "nvcc -fatbin",
    );
    let bytes = std::fs::read(&path).unwrap();
    let fb = Fatbin::parse(&bytes).unwrap();
    let kinds: Vec<_> = fb.entries().iter().map(|e| (e.kind(), e.arch())).collect();
    assert_eq!(kinds, [(EntryKind::Elf, 90), (EntryKind::Ptx, 90)]);
    assert_eq!(fb.entries()[1].ptx_version(), Some((7, 8)));
    assert_eq!(cuobjdump_list(&path), expected_listing(&fb, "nvcc"));
}

const OFFLOAD_BUILD: &str = env!("CARGO_BIN_EXE_offload-build");

/// `offload-build inspect --json FILE`: the (image kind, arch, compression, offset) of
/// every entry, and the section of each container.
fn inspect_json(file: &Path) -> (Vec<(String, String, Option<String>)>, serde_json::Value) {
    let out = check(
        Command::new(OFFLOAD_BUILD)
            .args(["inspect", "--json"])
            .arg(file),
        "offload-build inspect --json",
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut entries = Vec::new();
    for c in v[0]["containers"].as_array().unwrap() {
        assert_eq!(c["kind"], "nv-fatbin", "{c}");
        for e in c["entries"].as_array().unwrap() {
            entries.push((
                e["image_kind"].as_str().unwrap().to_string(),
                e["arch"].as_str().unwrap().to_string(),
                e["compression"].as_str().map(str::to_string),
            ));
        }
    }
    (entries, v)
}

fn extract_index(file: &Path, index: usize) -> Vec<u8> {
    let out = file.with_extension(format!("entry{index}"));
    check(
        Command::new(OFFLOAD_BUILD)
            .args(["extract", "--index", &index.to_string(), "-o"])
            .arg(&out)
            .arg(file),
        "offload-build extract",
    );
    std::fs::read(out).unwrap()
}

/// An ELF relocatable object holding `fatbin` in `.nv_fatbin`, and again at offset 8 of
/// `.rodata` (where only a scan finds it).
fn host_object(fatbin: &[u8]) -> Vec<u8> {
    host_object_with(fatbin, true)
}

/// A host object with a copy of `fatbin` in `.rodata` (after 8 other bytes), and another in
/// `.nv_fatbin` when `section`.
fn host_object_with(fatbin: &[u8], section: bool) -> Vec<u8> {
    use object::write::Object;
    use object::{Architecture, BinaryFormat, Endianness, SectionKind};
    let mut obj = Object::new(BinaryFormat::Elf, Architecture::X86_64, Endianness::Little);
    if section {
        let s = obj.add_section(
            Vec::new(),
            b".nv_fatbin".to_vec(),
            SectionKind::ReadOnlyData,
        );
        obj.append_section_data(s, fatbin, 8);
    }
    let r = obj.add_section(Vec::new(), b".rodata".to_vec(), SectionKind::ReadOnlyData);
    let mut data = b"rodata!\0".to_vec();
    data.extend(fatbin);
    obj.append_section_data(r, &data, 8);
    obj.write().unwrap()
}

#[test]
fn inspect_and_extract_read_fatbins_anywhere() {
    let f = nv_fixtures();
    let expect_plain: Vec<(String, String, Option<String>)> = ARCHS
        .iter()
        .flat_map(|a| {
            [
                ("cubin".to_string(), format!("sm_{a}"), None),
                ("ptx".to_string(), format!("compute_{a}"), None),
            ]
        })
        .collect();
    let inputs = |a: u32| {
        [
            std::fs::read(f.cubin(a)).unwrap(),
            std::fs::read(f.ptx(a)).unwrap(),
        ]
    };
    let all_inputs: Vec<Vec<u8>> = ARCHS.iter().flat_map(|&a| inputs(a)).collect();

    // Ours and nvFatbin's, raw.
    let ours_path = f.dir.join("inspect-ours.fatbin");
    std::fs::write(&ours_path, ours(f)).unwrap();
    let nv_path = f.dir.join("inspect-nv.fatbin");
    nvfatbin(f, "-64 -compress=false", &nv_path);
    for path in [&ours_path, &nv_path] {
        let (entries, v) = inspect_json(path);
        assert_eq!(entries, expect_plain, "{}", path.display());
        assert_eq!(v[0]["format"], "nv-fatbin");
        for (i, want) in all_inputs.iter().enumerate() {
            let got = extract_index(path, i);
            if path == &ours_path || i % 2 == 0 {
                assert!(&got == want, "{} entry {i}", path.display());
            }
        }
    }

    // nvFatbin's compressed output: PTX entries listed with their compression; extracting
    // one decompresses it to what cuobjdump -xptx writes.
    let lz4 = f.dir.join("inspect-lz4.fatbin");
    nvfatbin(f, "-64", &lz4);
    let (entries, _) = inspect_json(&lz4);
    let mut want = expect_plain.clone();
    want[1].2 = Some("lz4".into());
    want[3].2 = Some("lz4".into());
    assert_eq!(entries, want);
    let x = f.dir.join("x-inspect-lz4");
    cuobjdump_extract(&lz4, &x, &["-xptx"]);
    for (index, arch) in [(1, 80), (3, 90)] {
        let theirs = std::fs::read(x.join(format!("saxpy_{arch}.sm_{arch}.ptx"))).unwrap();
        assert!(extract_index(&lz4, index) == theirs, "lz4 PTX sm_{arch}");
    }
    // A compressed entry that does not decompress is an error, and no output is written.
    let mut bad = std::fs::read(&lz4).unwrap();
    let fb = Fatbin::parse(&bad).unwrap();
    let p = fb.entries()[1].payload_offset();
    bad[p..p + 8].copy_from_slice(&[0xff; 8]);
    let bad_path = f.dir.join("bad-lz4.fatbin");
    std::fs::write(&bad_path, &bad).unwrap();
    let out = Command::new(OFFLOAD_BUILD)
        .args(["extract", "--index", "1", "-o"])
        .arg(f.dir.join("never"))
        .arg(&bad_path)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("lz4-compressed payload"), "{err}");
    assert!(!f.dir.join("never").exists());

    // nvcc -fatbin's output (the PTX zstd-compressed).
    let nvcc_out = f.dir.join("inspect-nvcc.fatbin");
    check(
        Command::new(nvidia::nvcc())
            .env(
                "PATH",
                format!(
                    "{}:{}",
                    nvidia::cu13_bin().display(),
                    std::env::var("PATH").unwrap_or_default()
                ),
            )
            .args(["-fatbin", "-arch=sm_80", "-o"])
            .arg(&nvcc_out)
            .arg(f.ptx(80)),
        "nvcc -fatbin",
    );
    let (entries, _) = inspect_json(&nvcc_out);
    assert_eq!(
        entries,
        [
            ("cubin".to_string(), "sm_80".to_string(), None),
            (
                "ptx".to_string(),
                "compute_80".to_string(),
                Some("zstd".to_string())
            )
        ]
    );
    assert!(extract_index(&nvcc_out, 0).starts_with(b"\x7fELF"));
    let x = f.dir.join("x-inspect-nvcc");
    cuobjdump_extract(&nvcc_out, &x, &["-xptx"]);
    let theirs = std::fs::read(x.join("inspect-nvcc.1.sm_80.ptx")).unwrap();
    assert!(extract_index(&nvcc_out, 1) == theirs, "zstd PTX");

    // In a host object: the .nv_fatbin section (the copy in .rodata is not looked for once
    // a section holds device code: data pages are read only where nothing else was found);
    // cuobjdump reads the section too.
    let sections_of = |v: &serde_json::Value| -> Vec<String> {
        v[0]["containers"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["section"].as_str().unwrap().to_string())
            .collect()
    };
    let obj_path = f.dir.join("host.o");
    std::fs::write(&obj_path, host_object(&ours(f))).unwrap();
    let (entries, v) = inspect_json(&obj_path);
    assert_eq!(entries, expect_plain);
    assert_eq!(sections_of(&v), [".nv_fatbin"]);
    for (i, want) in all_inputs.iter().enumerate() {
        assert!(&extract_index(&obj_path, i) == want, "host.o entry {i}");
    }
    // Only in .rodata: found by the scan, 8-byte aligned.
    let data_path = f.dir.join("host-data.o");
    std::fs::write(&data_path, host_object_with(&ours(f), false)).unwrap();
    let (entries, v) = inspect_json(&data_path);
    assert_eq!(entries, expect_plain);
    assert_eq!(sections_of(&v), [".rodata"]);
    for (i, want) in all_inputs.iter().enumerate() {
        assert!(
            &extract_index(&data_path, i) == want,
            "host-data.o entry {i}"
        );
    }
    let listing = cuobjdump_list(&obj_path);
    assert!(
        listing.contains(&"ELF file    1: saxpy_80.sm_80.cubin".to_string()),
        "{listing:?}"
    );

    // A malformed fat binary in .nv_fatbin is an error naming the section and the offset.
    let mut bad = ours(f);
    bad[16 + 8..16 + 16].copy_from_slice(&u64::MAX.to_le_bytes());
    let bad_path = f.dir.join("bad.o");
    std::fs::write(&bad_path, host_object(&bad)).unwrap();
    let out = Command::new(OFFLOAD_BUILD)
        .arg("inspect")
        .arg(&bad_path)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("section .nv_fatbin") && err.contains("entry 0") && err.contains("payload"),
        "{err}"
    );
}

/// The `IMAGES` rows of a generated module: (arch, kind, offset, size).
fn generated_images(text: &str) -> Vec<(String, String, usize, usize)> {
    let mut out = Vec::new();
    for line in text.lines() {
        let Some(row) = line.trim().strip_prefix('(') else {
            continue;
        };
        let Some((head, tail)) = row.split_once(" OFFLOAD_BUILD_FATBIN") else {
            continue;
        };
        let fields: Vec<&str> = head
            .split(',')
            .map(|f| f.trim().trim_matches('"'))
            .collect();
        let nums: Vec<usize> = tail
            .split(|c: char| !c.is_ascii_digit())
            .filter(|n| !n.is_empty())
            .map(|n| n.parse().unwrap())
            .collect();
        // `.0.split_at(OFF).1.split_at(LEN).0`: the numbers after the field `.0`.
        let nums: Vec<usize> = nums.into_iter().filter(|&n| n > 1).collect();
        out.push((
            fields[0].to_string(),
            fields[1].to_string(),
            nums[0],
            nums[1],
        ));
    }
    out
}

#[test]
fn build_writes_a_cuda_fatbin_cuobjdump_reads() {
    use offload_build::{Build, Container, Language};
    let f = nv_fixtures();
    let dir = f.subdir("build-api");
    let mut b = Build::new();
    b.out_dir(dir.join("out"))
        .cargo_metadata(false)
        .env("CARGO_MANIFEST_DIR", &dir)
        .env("CARGO_PKG_NAME", "nv-test")
        .language(Language::Cuda)
        .container(Container::CudaFatbin);
    for arch in ARCHS {
        b.image(format!("sm_{arch}"), f.ptx(arch))
            .image(format!("sm_{arch}"), f.cubin(arch));
    }
    let c = b.try_compile("nvtest").unwrap();
    assert_eq!(c.container, Container::CudaFatbin);
    assert_eq!(c.archs, ["sm_80", "sm_90"]);
    assert_eq!(c.kernels, ["saxpy"]);
    assert_eq!(c.container_file.extension().unwrap(), "fatbin");
    let bytes = std::fs::read(&c.container_file).unwrap();
    // cuobjdump: each arch's cubin (first, as nvcc orders them) and PTX, named after the build.
    assert_eq!(
        cuobjdump_list(&c.container_file),
        [
            "ELF file    1: nvtest.sm_80.cubin",
            "PTX file    1: nvtest.sm_80.ptx",
            "ELF file    2: nvtest.sm_90.cubin",
            "PTX file    2: nvtest.sm_90.ptx",
        ]
    );
    let x = dir.join("x");
    cuobjdump_extract(&c.container_file, &x, &["-xelf", "-xptx"]);
    // The generated module: IMAGES slices the container where each image lies, and the
    // container goes to .nv_fatbin.
    let text = std::fs::read_to_string(&c.generated).unwrap();
    assert!(text.contains("link_section = \".nv_fatbin\""), "{text}");
    assert!(text.contains("pub const CONTAINER: &str = \"cuda-fatbin\";"));
    let rows = generated_images(&text);
    let mut want = Vec::new();
    for arch in ARCHS {
        let cubin = std::fs::read(f.cubin(arch)).unwrap();
        let ptx = std::fs::read(f.ptx(arch)).unwrap();
        let cubin_x = std::fs::read(x.join(format!("nvtest.sm_{arch}.cubin"))).unwrap();
        let ptx_x = std::fs::read(x.join(format!("nvtest.sm_{arch}.ptx"))).unwrap();
        assert!(cubin_x == cubin && ptx_x == ptx, "cuobjdump -x sm_{arch}");
        want.push((format!("sm_{arch}"), "cubin".to_string(), cubin));
        want.push((format!("sm_{arch}"), "ptx".to_string(), ptx));
    }
    assert_eq!(rows.len(), want.len(), "{text}");
    for ((arch, kind, off, len), (warch, wkind, wbytes)) in rows.iter().zip(&want) {
        assert_eq!((arch, kind), (warch, wkind));
        assert!(
            &bytes[*off..off + len] == wbytes.as_slice(),
            "{arch} {kind}"
        );
    }

    // Only CUDA, only loaded at run time.
    let mut b = Build::new();
    b.out_dir(dir.join("out2"))
        .cargo_metadata(false)
        .env("CARGO_MANIFEST_DIR", &dir)
        .language(Language::Cuda)
        .container(Container::CudaFatbin)
        .embed(offload_build::Embed::HipObject)
        .image("sm_80", f.cubin(80));
    let e = b.try_compile("bad").unwrap_err().to_string();
    assert!(e.contains("Embed::ContainerOnly"), "{e}");
}

#[test]
fn arch_specific_sm_90a_as_nvfatbin_writes_it() {
    let f = nv_fixtures();
    let ptx = f.dir.join("saxpy-sm_90a.ptx");
    let cubin = f.dir.join("saxpy-sm_90a.cubin");
    ptx_and_cubin(&f.dir.join("saxpy.cu"), "90a", &ptx, &cubin);
    let (ptx_bytes, cubin_bytes) = (std::fs::read(&ptx).unwrap(), std::fs::read(&cubin).unwrap());
    let mut w = FatbinWriter::new();
    w.add_cubin("sm_90a", &cubin_bytes, Some("k")).unwrap();
    w.add_ptx("compute_90a", &ptx_bytes, Some("k"), None)
        .unwrap();
    let ours_bytes = w.to_bytes();
    let specs = [
        format!("elf:90a:k:{}", cubin.display()),
        format!("ptx:90a:k:{}", ptx.display()),
    ];
    let theirs_bytes = nvfatbin_of(
        f,
        "-64 -compress=false",
        &f.dir.join("nv-90a.fatbin"),
        &specs,
    );
    let (o, t) = (
        Fatbin::parse(&ours_bytes).unwrap(),
        Fatbin::parse(&theirs_bytes).unwrap(),
    );
    for (o, t) in o.entries().iter().zip(t.entries()) {
        assert_eq!(
            (o.arch(), o.flags(), o.arch_name()),
            (t.arch(), t.flags(), t.arch_name())
        );
    }
    assert_eq!(o.entries()[0].arch_name(), "sm_90a");
    let path = f.dir.join("ours-90a.fatbin");
    std::fs::write(&path, &ours_bytes).unwrap();
    assert_eq!(
        cuobjdump_list(&path),
        [
            "ELF file    1: k.sm_90a.cubin",
            "PTX file    1: k.sm_90a.ptx"
        ]
    );
}

/// `examples/cuda-saxpy` (standard CUDA: `__global__`, `blockIdx.x * blockDim.x +
/// threadIdx.x`) built with Cargo (`RUSTFLAGS=-D warnings`) twice, with the wheels' nvcc
/// (`VIRTUAL_ENV`) and with clang 22 (`CUDACXX`, no toolkit), and run: it prints its
/// architectures and image kinds, finds its `IMAGES` equal to the fat binary's entries, and
/// skips the launch without a driver (or launches and checks `saxpy` with one);
/// `offload-build inspect` and `cuobjdump` find the same entries in the executable's
/// `.nv_fatbin`.
#[test]
fn cuda_saxpy_example_builds_runs_and_is_inspected() {
    use crate::cuda_examples::{CLANG22, build_example, nvcc_env};
    let nvcc = nvcc_env();
    let envs: Vec<(&str, &std::ffi::OsStr)> =
        nvcc.iter().map(|(k, v)| (*k, v.as_os_str())).collect();
    let (exe, stdout) = build_example("cuda-saxpy", &envs);
    assert!(
        stdout.contains("built by Cuda compilation tools, release 13"),
        "{stdout}"
    );
    let images = check_saxpy_run(&exe, &stdout);
    // nvcc makes a cubin for each architecture beside its PTX.
    let cubins: Vec<&str> = images
        .iter()
        .filter(|i| i.0 == "cubin")
        .map(|i| i.1.as_str())
        .collect();
    assert_eq!(cubins, ["sm_80", "sm_90"], "{stdout}");
    // clang 22 with no CUDA toolkit (no VIRTUAL_ENV; python3's site-packages may hold one):
    // the standard spelling through clang's own CUDA headers.
    let (exe, stdout) = build_example("cuda-saxpy", &[("CUDACXX", CLANG22.as_ref())]);
    assert!(stdout.contains("clang version 22"), "{stdout}");
    check_saxpy_run(&exe, &stdout);
}

/// What every build of `examples/cuda-saxpy` prints and holds: its architectures, its own
/// check passed, a launch skipped or checked, the PTX of each architecture; `inspect` and
/// `cuobjdump` list the images it printed. Returns them as (kind, arch, size).
fn check_saxpy_run(exe: &Path, stdout: &str) -> Vec<(String, String, u64)> {
    assert!(stdout.contains("archs: sm_80 sm_90\n"), "{stdout}");
    assert!(stdout.contains("checked: the fat binary's"), "{stdout}");
    assert!(
        stdout.contains("no launch: ") || stdout.contains("all equal to 3 * x + y"),
        "{stdout}"
    );
    // "  sm_80 ptx 1102 bytes" lines: what inspect must list, as (kind, arch, size).
    let images: Vec<(String, String, u64)> = stdout
        .lines()
        .filter_map(|l| {
            let w: Vec<&str> = l.strip_prefix("  ")?.split_whitespace().collect();
            let n = w[0].strip_prefix("sm_")?;
            let arch = if w[1] == "ptx" {
                format!("compute_{n}")
            } else {
                format!("sm_{n}")
            };
            Some((w[1].to_string(), arch, w[2].parse().ok()?))
        })
        .collect();
    assert!(
        images.iter().any(|i| i.0 == "ptx" && i.1 == "compute_80")
            && images.iter().any(|i| i.0 == "ptx" && i.1 == "compute_90"),
        "{stdout}"
    );
    let (_, v) = inspect_json(exe);
    let containers = v[0]["containers"].as_array().unwrap();
    assert_eq!(containers.len(), 1, "{v}");
    assert_eq!(containers[0]["section"], ".nv_fatbin");
    let listed: Vec<(String, String, u64)> = containers[0]["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["image_kind"].as_str().unwrap().to_string(),
                e["arch"].as_str().unwrap().to_string(),
                e["size"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(listed, images);
    let ptx_lines: Vec<String> = cuobjdump_list(exe)
        .into_iter()
        .filter(|l| l.starts_with("PTX"))
        .collect();
    assert_eq!(
        ptx_lines,
        [
            "PTX file    1: kernels.sm_80.ptx",
            "PTX file    2: kernels.sm_90.ptx"
        ]
    );
    images
}

/// `offload-build compile --container cuda-fatbin --embed fatbin`: the CLI face of
/// `Container::CudaFatbin` (what CMake's `CONTAINER CUDA_FATBIN` passes); `--embed object`
/// is refused, as no host object registers an NVIDIA fat binary.
#[test]
fn compile_command_writes_a_cuda_container() {
    let f = nv_fixtures();
    let dir = f.subdir("cli-compile");
    let out = dir.join("k.fatbin");
    let mut cmd = Command::new(OFFLOAD_BUILD);
    cmd.current_dir(&dir)
        .arg("compile")
        .arg(f.dir.join("saxpy.cu"))
        .args(["--archs", "sm_80;sm_90", "--container", "cuda-fatbin"])
        .args(["--embed", "fatbin", "--quiet", "-o"])
        .arg(&out)
        .env("CLANG", CLANG19);
    for var in crate::support::BUILD_ENV_VARS {
        cmd.env_remove(var);
    }
    check(&mut cmd, "offload-build compile --container cuda-fatbin");
    let bytes = std::fs::read(&out).unwrap();
    let fb = Fatbin::parse(&bytes).unwrap();
    let ptx: Vec<_> = fb
        .entries()
        .iter()
        .filter(|e| e.kind() == EntryKind::Ptx)
        .map(|e| (e.arch_name(), e.identifier().map(<[u8]>::to_vec)))
        .collect();
    assert_eq!(
        ptx,
        [
            ("compute_80".to_string(), Some(b"k".to_vec())),
            ("compute_90".to_string(), Some(b"k".to_vec()))
        ]
    );
    let listing = cuobjdump_list(&out);
    assert_eq!(listing, expected_listing(&fb, "k"));

    let mut cmd = Command::new(OFFLOAD_BUILD);
    cmd.current_dir(&dir)
        .arg("compile")
        .arg(f.dir.join("saxpy.cu"))
        .args(["--archs", "sm_80", "--container", "cuda-fatbin"])
        .args(["--embed", "object", "-o"])
        .arg(dir.join("libk.a"))
        .env("CLANG", CLANG19);
    let o = cmd.output().unwrap();
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("use --embed fatbin"), "{err}");
    assert!(!dir.join("libk.a").exists());
}

/// CMake: `offload_add_fatbin(... LANGUAGE CUDA CONTAINER CUDA_FATBIN EMBED FATBIN)` writes
/// `<target>.fatbin`, an NVIDIA fat binary cuobjdump lists.
#[test]
fn cmake_container_cuda_container() {
    let f = nv_fixtures();
    let proj = f.dir.join("cmake-proj");
    let build = f.dir.join("cmake-build");
    std::fs::create_dir_all(&proj).unwrap();
    std::fs::copy(f.dir.join("saxpy.cu"), proj.join("saxpy.cu")).unwrap();
    let module = crate::support::repo_root().join("build-support/cmake/OffloadBuild.cmake");
    std::fs::write(
        proj.join("CMakeLists.txt"),
        format!(
            "cmake_minimum_required(VERSION 3.20)\nproject(p LANGUAGES NONE)\n\
             include(\"{}\")\n\
             offload_add_fatbin(kern LANGUAGE CUDA SOURCES saxpy.cu ARCHITECTURES sm_80 sm_90\n  \
             CONTAINER CUDA_FATBIN EMBED FATBIN COMPILER {CLANG19} QUIET)\n\
             offload_add_fatbin(kern_cubin LANGUAGE CUDA SOURCES saxpy.cu ARCHITECTURES sm_80 sm_90\n  \
             CONTAINER CUDA_FATBIN EMBED FATBIN COMPILER {CLANG19} PTXAS \"{}\" QUIET)\n\
             add_custom_target(all_kern ALL DEPENDS kern_offload_build kern_cubin_offload_build)\n",
            module.display(),
            crate::support::nvidia::ptxas().display()
        ),
    )
    .unwrap();
    let cmake = |args: &[&str]| {
        let mut c = Command::new("cmake");
        for var in crate::support::BUILD_ENV_VARS
            .iter()
            .chain(&["MAKEFLAGS", "CARGO_MAKEFLAGS"])
        {
            c.env_remove(var);
        }
        c.args(args);
        c
    };
    check(
        cmake(&["-G", "Ninja"])
            .arg("-S")
            .arg(&proj)
            .arg("-B")
            .arg(&build)
            .arg(format!("-DOFFLOAD_BUILD_EXECUTABLE={OFFLOAD_BUILD}")),
        "cmake configure",
    );
    check(cmake(&["--build"]).arg(&build), "cmake --build");
    let out = build.join("kern.fatbin");
    let bytes = std::fs::read(&out).unwrap();
    let fb = Fatbin::parse(&bytes).unwrap();
    let archs: Vec<_> = fb.entries().iter().map(Entry::arch_name).collect();
    assert!(
        archs.contains(&"compute_80".to_string()) && archs.contains(&"compute_90".to_string()),
        "{archs:?}"
    );
    assert_eq!(cuobjdump_list(&out), expected_listing(&fb, "kern"));
    // PTXAS names the wheel's ptxas: a cubin for each arch beside its PTX.
    let out = build.join("kern_cubin.fatbin");
    let bytes = std::fs::read(&out).unwrap();
    let fb = Fatbin::parse(&bytes).unwrap();
    let mut archs: Vec<_> = fb.entries().iter().map(Entry::arch_name).collect();
    archs.sort();
    assert_eq!(archs, ["compute_80", "compute_90", "sm_80", "sm_90"]);
}

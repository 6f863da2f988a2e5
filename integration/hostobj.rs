//! Host objects written by `offload_build::embed`, checked against clang 19's own object for
//! the same HIP translation unit and consumed by the real tools: GNU ld and ld.lld (executable,
//! PIE, shared library, with and without `--gc-sections`), lld-link (COFF DLL), ld.lld for
//! AArch64 and ppc64le, clang-linker-wrapper 19 (new driver), and comgr 5.2 inside a recording
//! HIP runtime shim (see `hostobj_fixtures`).

use std::path::Path;

use object::read::elf::{ElfFile64, FileHeader, SectionHeader};
use object::{LittleEndian, Object, ObjectSection};

use offload_build::embed::{HipObject, NewDriverObject};
use offload_build::inspect::inspect;
use offload_build::package::LlvmVersion;

use crate::hostobj_fixtures::{ARCHS, CLANG22, HostFixtures, LLVM19_BIN, host, run, run_with_shim};
use crate::support::CLANG19;

/// Our object for `tu` built from clang's code objects.
fn ours(f: &HostFixtures, triple: &str, tu: &str) -> Vec<u8> {
    let mut h = HipObject::new(triple).expect("target");
    for arch in ARCHS {
        h.code_object(arch, f.code_object(tu, arch))
            .expect("code object");
    }
    h.start_symbol(&format!("{tu}_fatbin_start"))
        .size_symbol(&format!("{tu}_fatbin_size"));
    h.write().expect("write")
}

/// (type, flags, alignment, contents) of an ELF section.
fn section(data: &[u8], name: &str) -> (u32, u64, u64, Vec<u8>) {
    let file = ElfFile64::<LittleEndian>::parse(data).expect("ELF");
    let s = file
        .section_by_name(name)
        .unwrap_or_else(|| panic!("no section {name}"));
    let h = s.elf_section_header();
    let e = file.endian();
    let _ = file.elf_header().e_machine(e);
    (
        h.sh_type(e),
        h.sh_flags(e),
        h.sh_addralign(e),
        s.data().expect("data").to_vec(),
    )
}

#[test]
fn hip_object_matches_clang() {
    let f = host();
    let clang = f.read("k.o");
    let ours = ours(f, "x86_64-unknown-linux-gnu", "k");
    // The bundle is byte-identical to clang's .hip_fatbin (and to its .hipfb file).
    let (_, _, _, bundle) = section(&ours, ".hip_fatbin");
    assert_eq!(
        bundle,
        section(&clang, ".hip_fatbin").3,
        "bundle differs from clang's"
    );
    assert_eq!(bundle, f.read("k.hip-hip-amdgcn-amd-amdhsa.hipfb"));
    for name in [".hip_fatbin", ".hipFatBinSegment", ".init_array"] {
        let (t1, f1, a1, _) = section(&clang, name);
        let (t2, f2, a2, _) = section(&ours, name);
        assert_eq!((t1, f1, a1), (t2, f2, a2), "section {name}: clang vs ours");
    }
    let (_, _, _, wrapper) = section(&ours, ".hipFatBinSegment");
    assert_eq!(&wrapper[..8], &section(&clang, ".hipFatBinSegment").3[..8]);
    // The exported symbols a program uses.
    let file = ElfFile64::<LittleEndian>::parse(&*ours).expect("ELF");
    use object::ObjectSymbol;
    let exported: Vec<String> = file
        .symbols()
        .filter(|s| s.is_global() && !s.is_undefined())
        .map(|s| s.name().unwrap().to_owned())
        .collect();
    for want in [
        "kern_c",
        "_Z8kern_cppPfi",
        "dev_var",
        "k_fatbin_start",
        "k_fatbin_size",
    ] {
        assert!(
            exported.iter().any(|s| s == want),
            "{want} not exported: {exported:?}"
        );
    }
    // Deterministic output.
    assert_eq!(ours, self::ours(f, "x86_64-unknown-linux-gnu", "k"));
}

/// Link command pieces of one linker.
struct Linker {
    name: &'static str,
    driver: &'static str,
    fuse: &'static str,
}

const LINKERS: [Linker; 2] = [
    Linker {
        name: "bfd",
        driver: "/usr/bin/gcc",
        fuse: "-fuse-ld=bfd",
    },
    Linker {
        name: "lld",
        driver: CLANG19,
        fuse: "-fuse-ld=lld",
    },
];

/// Links `object` with main.c as `kind` (exe, pie, shared) and returns the program.
fn link(
    dir: &Path,
    fx: &Path,
    l: &Linker,
    kind: &str,
    gc: bool,
    object: &Path,
) -> std::path::PathBuf {
    let gc_flag = if gc {
        "-Wl,--gc-sections"
    } else {
        "-Wl,--no-gc-sections"
    };
    let fxs = fx.to_str().unwrap();
    let dirs = dir.to_str().unwrap();
    let rpath = format!("-Wl,-rpath,{fxs}:{dirs}");
    let obj = object.to_str().unwrap();
    let exe = dir.join(format!("m-{}-{kind}-{gc}", l.name));
    let exe_s = exe.to_str().unwrap().to_owned();
    let lib = format!("-L{fxs}");
    let main = fx.join("main.c");
    let main = main.to_str().unwrap();
    match kind {
        "exe" | "pie" => {
            let pic: &[&str] = if kind == "exe" {
                &["-no-pie", "-fno-pie"]
            } else {
                &["-pie", "-fPIE"]
            };
            let mut args = vec![l.fuse, gc_flag, "-rdynamic", "-o", &exe_s, main, obj];
            args.extend(pic);
            args.extend([lib.as_str(), "-lamdhip64", rpath.as_str()]);
            run(dir, l.driver, &args);
        }
        "shared" => {
            let so = dir.join(format!("libk-{}-{gc}.so", l.name));
            let so_s = so.to_str().unwrap();
            run(
                dir,
                l.driver,
                &[
                    l.fuse,
                    gc_flag,
                    "-shared",
                    "-o",
                    so_s,
                    obj,
                    &lib,
                    "-lamdhip64",
                ],
            );
            let dso = format!("-lk-{}-{gc}", l.name);
            let ldir = format!("-L{dirs}");
            run(
                dir,
                l.driver,
                &[
                    l.fuse,
                    "-Wl,--no-as-needed",
                    "-o",
                    &exe_s,
                    main,
                    &ldir,
                    &dso,
                    &lib,
                    "-lamdhip64",
                    &rpath,
                ],
            );
        }
        _ => unreachable!(),
    }
    exe
}

#[test]
fn hip_object_links_and_registers_like_clang() {
    let f = host();
    let dir = f.scratch("link-matrix");
    let ours_path = dir.join("ours.o");
    std::fs::write(&ours_path, ours(f, "x86_64-unknown-linux-gnu", "k")).unwrap();
    let originals: Vec<Vec<u8>> = ARCHS.iter().map(|a| f.code_object("k", a)).collect();
    let clang_log = {
        let exe = link(&dir, &f.dir, &LINKERS[0], "exe", false, &f.path("k.o"));
        run_with_shim(&dir, &exe, "clang")
    };
    assert!(
        clang_log.contains("function 0 host=kern_c dev=kern_c"),
        "{clang_log}"
    );
    assert!(
        clang_log.contains("lookup 0 amdgcn-amd-amdhsa--gfx1100 status=0"),
        "{clang_log}"
    );
    let mut checked = 0;
    for l in &LINKERS {
        for kind in ["exe", "pie", "shared"] {
            for gc in [false, true] {
                let exe = link(&dir, &f.dir, l, kind, gc, &ours_path);
                let tag = format!("ours-{}-{kind}-{gc}", l.name);
                let log = run_with_shim(&dir, &exe, &tag);
                assert_eq!(
                    log, clang_log,
                    "{tag}: registrations differ from clang's object"
                );
                for (i, original) in originals.iter().enumerate() {
                    let co = std::fs::read(dir.join(format!("{tag}.dump/fatbin0-isa{i}.co")))
                        .unwrap_or_else(|e| panic!("{tag}: comgr found no code object {i}: {e}"));
                    assert!(co == *original, "{tag}: comgr's code object {i} differs");
                }
                checked += 1;
            }
        }
    }
    assert_eq!(checked, 12);
}

/// AArch64 and ppc64le objects link into shared libraries that keep the bundle and the
/// constructor pointer (`hostobj_codegen` runs those constructors under qemu-user).
#[test]
fn cross_targets_link() {
    let f = host();
    let dir = f.scratch("cross");
    let lld = format!("{LLVM19_BIN}/ld.lld");
    for triple in ["aarch64-unknown-linux-gnu", "powerpc64le-unknown-linux-gnu"] {
        let obj = dir.join(format!("{triple}.o"));
        std::fs::write(&obj, ours(f, triple, "k")).unwrap();
        for gc in ["--no-gc-sections", "--gc-sections"] {
            let so = dir.join(format!("{triple}{gc}.so"));
            run(
                &dir,
                &lld,
                &[
                    "-shared",
                    gc,
                    "-o",
                    so.to_str().unwrap(),
                    obj.to_str().unwrap(),
                ],
            );
            let data = std::fs::read(&so).unwrap();
            let report = inspect(&data, "x.so").expect("inspect");
            assert_eq!(report.containers.len(), 1, "{triple} {gc}");
            let file = object::File::parse(&*data).unwrap();
            let init = file
                .section_by_name(".init_array")
                .expect(".init_array kept");
            assert!(init.size() >= 8, "{triple}: constructor pointer lost");
        }
    }
    // COFF: lld-link makes a DLL; the image truncates the section name to ".hip_fat".
    let obj = dir.join("coff.obj");
    std::fs::write(&obj, ours(f, "x86_64-pc-windows-msvc", "k")).unwrap();
    let dll = dir.join("k.dll");
    run(
        &dir,
        &format!("{LLVM19_BIN}/lld-link"),
        &[
            "/dll",
            "/noentry",
            "/nodefaultlib",
            &format!("/out:{}", dll.display()),
            obj.to_str().unwrap(),
            f.path("stubw.obj").to_str().unwrap(),
        ],
    );
    let data = std::fs::read(&dll).unwrap();
    let report = inspect(&data, "k.dll").expect("inspect dll");
    assert_eq!(report.containers.len(), 1);
    assert_eq!(report.containers[0].section.as_deref(), Some(".hip_fat"));
    let entry = &report.containers[0].entries[1];
    let off = entry.offset.unwrap() as usize;
    assert_eq!(
        &data[off..off + entry.size as usize],
        &f.code_object("k", "gfx1100")[..]
    );
}

/// One new-driver round: our object from the offload binary of clang's `clang_obj`, linked
/// next to clang's own through `clang` (`--hip-link`, linker wrapper of the same LLVM) with
/// each of `fuses`; every program must register the same kernels and variable.
fn new_driver_round(
    clang: &str,
    llvm: LlvmVersion,
    clang_obj: &str,
    entries: &str,
    fuses: &[&str],
) {
    let f = host();
    let dir = f.scratch(&format!("new-driver-{}", llvm.major()));
    let clang_bytes = f.read(clang_obj);
    let found = offload_build::package::scan(&clang_bytes, clang_obj).expect("scan");
    assert_eq!(found.len(), 1);
    let mut nd = NewDriverObject::new("x86_64-unknown-linux-gnu", llvm).unwrap();
    nd.offload_binary(found[0].data.to_vec())
        .unwrap()
        .kernel("kern_c")
        .kernel("_Z8kern_cppPfi")
        .variable(offload_build::embed::DeviceVariable::new("dev_var", 4));
    let ours = nd.write().unwrap();
    let (t1, f1, a1, _) = section(&clang_bytes, ".llvm.offloading");
    let (t2, f2, a2, content) = section(&ours, ".llvm.offloading");
    assert_eq!((t1, f1, a1), (t2, f2, a2));
    assert_eq!(content, &found[0].data[..]);
    // Same entry layout as clang's: three entries of the same size.
    let (_, flags, _, theirs) = section(&clang_bytes, entries);
    let (_, our_flags, _, mine) = section(&ours, entries);
    assert_eq!(theirs.len(), mine.len(), "{entries}: entry size");
    assert_eq!(our_flags & !offload_build::embed::SHF_GNU_RETAIN, flags);
    assert_ne!(our_flags & offload_build::embed::SHF_GNU_RETAIN, 0);
    let ours_path = dir.join("nd.o");
    std::fs::write(&ours_path, &ours).unwrap();
    let fxs = f.dir.to_str().unwrap();
    let mut logs = Vec::new();
    for (tag, obj) in [("clang", f.path(clang_obj)), ("ours", ours_path.clone())] {
        for fuse in fuses {
            let exe = dir.join(format!("m-{tag}{fuse}"));
            run(
                &dir,
                clang,
                &[
                    "--offload-new-driver",
                    "-fgpu-rdc",
                    "--hip-link",
                    "--offload-arch=gfx90a",
                    "-nogpulib",
                    "-nogpuinc",
                    fuse,
                    "-Wl,--gc-sections",
                    "-rdynamic",
                    "-o",
                    exe.to_str().unwrap(),
                    f.path("main.c").to_str().unwrap(),
                    obj.to_str().unwrap(),
                    &format!("-L{fxs}"),
                    &format!("-Wl,-rpath,{fxs}"),
                ],
            );
            logs.push((format!("{tag}{fuse}"), run_with_shim(&dir, &exe, tag)));
        }
    }
    let reference = &logs[0].1;
    for (tag, log) in &logs {
        assert!(
            log.contains("function 0 host=kern_c dev=kern_c name=kern_c limit=-1 rest=0"),
            "{tag}: kernel not registered:\n{log}"
        );
        assert!(log.contains("lookup 0 amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack+ status=0"));
        assert_eq!(log, reference, "{tag} differs from clang's object");
    }
}

#[test]
fn new_driver_object_registers_through_clang_linker_wrapper_19() {
    new_driver_round(
        CLANG19,
        LlvmVersion::LLVM19,
        "knd.o",
        "hip_offloading_entries",
        &["-fuse-ld=bfd", "-fuse-ld=lld"],
    );
}

#[test]
fn new_driver_object_registers_through_clang_linker_wrapper_22() {
    new_driver_round(
        CLANG22,
        LlvmVersion::LLVM22,
        "knd22.o",
        "llvm_offload_entries",
        &["-fuse-ld=lld"],
    );
}

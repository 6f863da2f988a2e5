//! The plan room's unit tests.

use super::{decided::*, sources::*};
use crate::builder::config::Build;
use crate::builder::env::{Directives, Env};
use crate::builder::options::Container;
use crate::builder::options::Embed;
use crate::builder::options::Language;
use std::path::PathBuf;

#[test]
fn language_and_container_defaults() {
    let cu = [PathBuf::from("a.cu"), PathBuf::from("b.cu")];
    let mixed = [PathBuf::from("a.cu"), PathBuf::from("b.hip")];
    assert_eq!(language(None, &cu), Language::Cuda);
    assert_eq!(language(None, &mixed), Language::Hip);
    assert_eq!(language(None, &[]), Language::Hip);
    assert_eq!(language(Some(Language::Hip), &cu), Language::Hip);

    let mut b = Build::new();
    assert_eq!(b.object_embed(), Embed::HipObject);
    b.files(["k.cu"]);
    assert_eq!(b.object_embed(), Embed::NewDriverObject);
    b.container(Container::Bundle);
    assert_eq!(b.object_embed(), Embed::HipObject);
    let mut b = Build::new();
    b.container(Container::OffloadBinary);
    assert_eq!(b.object_embed(), Embed::NewDriverObject);
}

#[test]
fn compile_plans_check_what_a_build_needs() {
    let dir = std::env::temp_dir().join(format!("offload-build-plan-{}", std::process::id()));
    let mut b = Build::new();
    b.cargo_metadata(false)
        .env_remove("OUT_DIR")
        .env("CARGO_MANIFEST_DIR", &dir)
        .file("missing.hip");
    let directives = Directives::new(false);
    let plan = |b: &Build, name| {
        let env = Env::new(&b.env, &directives);
        Plan::new(b, &env, Purpose::Compile(name))
            .unwrap_err()
            .to_string()
    };
    // A build needs an output directory and existing sources; the plan says which.
    let e = plan(&b, "k");
    assert!(e.contains("OUT_DIR is not set"), "{e}");
    b.out_dir(&dir);
    let e = plan(&b, "k");
    assert!(e.contains("missing.hip"), "{e}");
    let e = plan(&b, "bad name");
    assert!(e.contains("library name"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Under sccache with a farm, each compile that takes a local slot has its reason: clang 15's
/// host compile, clang's CUDA, nvcc, a `-fgpu-rdc` compile's code generation; a HIP device
/// compile and clang 22's host compile have none and may take a farm slot. Without a farm,
/// no compile takes a farm slot and none says anything.
#[test]
fn compiles_that_stay_off_the_farm_say_why() {
    use crate::builder::arch::{Arch, Target};
    use crate::builder::options::CompilerKind::{Clang, Nvcc};
    use crate::builder::plan::jobs::{jobs_of, set_remote, why_local};
    use crate::builder::plan::launcher::Farm;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let b = Build::new();
    let directives = Directives::new(false);
    let env = Env::new(&b.env, &directives);
    let opts = |tc: &crate::builder::toolchain::Toolchain, lang| {
        super::flags::compile_options(&b, &env, tc, lang, d, None, d)
    };
    let gfx90a = Arch::new("gfx90a").unwrap();
    let (host, device) = (Target::Host, Target::Device(gfx90a.clone()));
    let why = |target: &Target, tc, lang| why_local(target, &opts(tc, lang), tc);
    let toolchain = crate::builder::toolchain::Toolchain::for_test;
    let clang15 = toolchain(Clang, 15);
    assert!(
        why(&host, &clang15, Language::Hip)
            .unwrap()
            .contains("clang 15")
    );
    assert_eq!(why(&device, &clang15, Language::Hip), None);
    let clang22 = toolchain(Clang, 22);
    assert_eq!(why(&host, &clang22, Language::Hip), None);
    assert!(
        why(&device, &clang22, Language::Cuda)
            .unwrap()
            .contains("clang's CUDA")
    );
    let nvcc = toolchain(Nvcc, 0);
    assert!(
        why(&device, &nvcc, Language::Cuda)
            .unwrap()
            .contains("nvcc")
    );

    // A HIP device compile, plain and -fgpu-rdc (bitcode, then code generation here).
    std::fs::write(d.join("k.hip"), "__global__ void k() {}\n").unwrap();
    let compiles = [(d.join("k.hip"), vec![gfx90a])];
    let mut o = opts(&clang22, Language::Hip);
    o.launcher = vec!["sccache".into()];
    o.launcher_kind = crate::builder::job::LauncherKind::Sccache;
    let stays = |o: &crate::builder::job::CompileOptions, farm: &Farm| {
        let (mut jobs, _) = jobs_of(&compiles, o, &clang22, d);
        let job = &mut jobs[0];
        set_remote(job, farm, o, &clang22);
        (job.on_farm(), job.stays)
    };
    assert_eq!(stays(&o, &Farm::Set(2)), (true, None));
    assert_eq!(stays(&o, &Farm::None), (false, None));
    (o.host_code, o.rdc) = (true, true);
    let (on_farm, why) = stays(&o, &Farm::Set(2));
    assert!(!on_farm, "its code generation takes a local slot");
    assert!(
        why.unwrap().contains("code generation runs here"),
        "{why:?}"
    );
}

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

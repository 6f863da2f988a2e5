//! The checked-in generated tables are exactly what the installed LLVM 19 and 22 tools say.
//!
//! The tools come from build-support/setup.sh; a missing tool fails this test (gen-tables
//! exits 2), it is not skipped.

use std::process::Command;

#[test]
fn checked_in_tables_match_the_tools() {
    let out = Command::new(env!("CARGO_BIN_EXE_gen-tables"))
        .arg("--check")
        .output()
        .expect("run gen-tables --check");
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "gen-tables --check failed ({}):\n{text}\nIf the tools changed on purpose, run `cargo run -p gen-tables` and review the diff.",
        out.status
    );
    for file in ["offload_arch.rs", "amdgcn.rs", "triple_golden.rs"] {
        assert!(
            text.contains(&format!("{file} is up to date")),
            "{file}:\n{text}"
        );
    }
}

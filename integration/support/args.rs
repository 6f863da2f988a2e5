//! Argument lists and expectations shared by the differential case modules.

use super::{Case, Check};

/// The prefix of every error line (the tools run as `clang-offload-bundler`).
pub const ERR: &str = "clang-offload-bundler: error: ";

pub fn hip(arch: &str) -> String {
    format!("hip-amdgcn-amd-amdhsa--{arch}")
}

pub fn hipv4(arch: &str) -> String {
    format!("hipv4-amdgcn-amd-amdhsa--{arch}")
}

pub fn openmp(arch: &str) -> String {
    format!("openmp-amdgcn-amd-amdhsa--{arch}")
}

/// File name of the code object for `arch` inside a run directory.
pub fn co(arch: &str) -> String {
    format!("{}.co", arch.replace([':', '+'], "_"))
}

/// `-targets=a,b,c`.
pub fn targets<S: AsRef<str>>(ts: &[S]) -> String {
    let v: Vec<&str> = ts.iter().map(AsRef::as_ref).collect();
    format!("-targets={}", v.join(","))
}

/// Arguments that bundle `inputs` (one per target) into `out`.
pub fn bundle_args<S: AsRef<str>>(ty: &str, ts: &[S], inputs: &[&str], out: &str) -> Vec<String> {
    let mut a = vec![format!("-type={ty}"), targets(ts)];
    a.extend(inputs.iter().map(|i| format!("-input={i}")));
    a.push(format!("-output={out}"));
    a
}

/// Arguments that unbundle `ts` from `input` into `u0`, `u1`, ….
pub fn unbundle_args<S: AsRef<str>>(ty: &str, ts: &[S], input: &str) -> Vec<String> {
    let mut a = vec![
        format!("-type={ty}"),
        targets(ts),
        format!("-input={input}"),
        "-unbundle".into(),
    ];
    a.extend((0..ts.len()).map(|i| format!("-output=u{i}")));
    a
}

pub fn list_args(ty: &str, input: &str) -> Vec<String> {
    vec![
        format!("-type={ty}"),
        "-list".into(),
        format!("-input={input}"),
    ]
}

/// Bundle, list, and unbundle all targets again.
pub fn round_trip<S: AsRef<str>>(case: Case, ty: &str, ts: &[S], inputs: &[&str]) -> Case {
    let out = format!("fat.{ty}");
    case.step(bundle_args(ty, ts, inputs, &out))
        .step(list_args(ty, &out))
        .step(unbundle_args(ty, ts, &out))
}

/// `-list` printing these IDs in this order.
pub fn listed(ids: &[&str]) -> Check {
    Check::Stdout(
        ids.iter()
            .map(|id| format!("{id}\n"))
            .collect::<String>()
            .into_bytes(),
    )
}

pub fn stderr_err(msg: &str) -> Check {
    Check::Stderr(format!("{ERR}{msg}\n").into_bytes())
}

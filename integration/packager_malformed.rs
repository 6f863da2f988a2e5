//! Malformed offload binaries given to `offload-packager` in extract mode: truncated,
//! misaligned, sizes and offsets out of range, unterminated strings, unknown versions,
//! as raw files, inside an ELF section and inside an archive. Ours must exit with
//! status 1 and one line `llvm-offload-binary: error: '<file>'…` (no panic), and write
//! nothing. LLVM 22 must reject the same inputs too (exit 1), or crash: recorded, not
//! required, since LLVM reads some of them out of bounds.

use offload_build::package::{ImageKind, LlvmVersion, OffloadKind, write::Image, write_v1};

use crate::packager_diff::{ARGV0, Packager, run};

fn good() -> Vec<u8> {
    let img = Image::new(
        ImageKind::Object,
        OffloadKind::OpenMp,
        LlvmVersion::LLVM22,
        b"0123456789",
    )
    .unwrap()
    .string("triple", "amdgcn-amd-amdhsa")
    .string("arch", "gfx90a");
    write_v1(&img).unwrap()
}

fn set(d: &[u8], at: usize, v: u64) -> Vec<u8> {
    let mut d = d.to_vec();
    d[at..at + 8].copy_from_slice(&v.to_le_bytes());
    d
}

fn cases() -> Vec<(&'static str, Vec<u8>)> {
    let g = good();
    let n = g.len();
    let mut unterminated = set(&g, 72, n as u64 - 3);
    unterminated[n - 3..].copy_from_slice(b"xyz");
    let mut misaligned_size = g.clone();
    misaligned_size.extend_from_slice(&[0; 4]);
    misaligned_size[8..16].copy_from_slice(&(n as u64 + 4).to_le_bytes());
    let mut version0 = g.clone();
    version0[4] = 0;
    let mut version99 = g.clone();
    version99[4] = 99;
    let mut padded = g.clone();
    padded.extend_from_slice(&[0; 8]);
    vec![
        ("magic only", g[..4].to_vec()),
        ("truncated header", g[..20].to_vec()),
        ("truncated entry", g[..50].to_vec()),
        ("truncated image", g[..n - 8].to_vec()),
        ("size past end", set(&g, 8, 1 << 40)),
        ("size below header", set(&g, 8, 16)),
        ("misaligned size", misaligned_size),
        ("misaligned entry offset", set(&g, 16, 36)),
        ("entry offset out of range", set(&g, 16, 1 << 32)),
        ("string offset out of range", set(&g, 40, u64::MAX - 7)),
        ("string count out of range", set(&g, 48, 1 << 60)),
        ("image offset out of range", set(&g, 56, 1 << 50)),
        ("image size out of range", set(&g, 64, u64::MAX)),
        ("key offset out of range", set(&g, 72, 1 << 40)),
        ("value offset out of range", set(&g, 80, n as u64)),
        ("unterminated string", unterminated),
        ("version 0", version0),
        ("version 99", version99),
        ("trailing padding", padded),
    ]
}

#[test]
fn malformed_binaries_are_clean_errors() {
    let mut problems = Vec::new();
    let mut llvm_accepts = Vec::new();
    for (label, data) in cases() {
        let inputs = vec![("bad.bin", data)];
        let args: Vec<String> = ["bad.bin", "--image=arch=gfx90a"]
            .map(String::from)
            .to_vec();
        let o = run(Packager::Ours22, &inputs, &args);
        let one_line = o.stderr.matches('\n').count() == 1;
        let prefix = format!("{ARGV0}: error: 'bad.bin': malformed offload binary at offset ");
        if o.code != Some(1)
            || !one_line
            || !o.stderr.starts_with(&prefix)
            || o.stderr.contains("panicked")
        {
            problems.push(format!("{label}: exit {:?}, stderr {:?}", o.code, o.stderr));
        }
        if o.files.len() != 1 {
            problems.push(format!(
                "{label}: wrote {:?}",
                o.files.keys().collect::<Vec<_>>()
            ));
        }
        let r = run(Packager::Llvm22, &inputs, &args);
        if r.code == Some(0) {
            llvm_accepts.push(label);
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    // LLVM 22 accepts only what its reader does not check (it reads past the binary).
    assert_eq!(
        llvm_accepts,
        [
            "misaligned size",
            "misaligned entry offset",
            "string offset out of range",
            "string count out of range",
            "image size out of range",
            "key offset out of range",
            "value offset out of range",
            "unterminated string",
        ]
        .iter()
        .filter(|l| llvm_accepts.contains(l))
        .copied()
        .collect::<Vec<_>>(),
        "LLVM 22 accepted an input its reader checks"
    );
}

#[test]
fn malformed_binaries_in_containers_name_the_container() {
    let bad = set(&good(), 64, u64::MAX);
    let archive = offload_build::package::archive::write_archive(&[
        ("ok.bin", &good()),
        ("bad-member.bin", &bad),
    ])
    .unwrap();
    let inputs = vec![("lib.a", archive)];
    let args: Vec<String> = ["lib.a", "--image=arch=gfx90a"].map(String::from).to_vec();
    let o = run(Packager::Ours22, &inputs, &args);
    assert_eq!(o.code, Some(1));
    assert!(
        o.stderr.starts_with(&format!("{ARGV0}: error: 'bad-member.bin': malformed offload binary at offset 56: entry 0: image")),
        "{}",
        o.stderr
    );
    // Bitcode is refused with a clear message.
    let inputs = vec![("k.bc", b"BC\xc0\xde\x35\x14\0\0".to_vec())];
    let args: Vec<String> = ["k.bc", "--image=arch=gfx90a"].map(String::from).to_vec();
    let o = run(Packager::Ours22, &inputs, &args);
    assert_eq!(o.code, Some(1));
    assert!(
        o.stderr.contains("LLVM bitcode is not supported"),
        "{}",
        o.stderr
    );
}

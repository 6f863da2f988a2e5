//! Fuzz target bodies, shared by the libFuzzer targets in `fuzz/` and the stable smoke test
//! (`integration/fuzz_smoke.rs`), so the two cannot drift apart. Not part of the public API.
//!
//! Every target takes arbitrary bytes and must neither panic, nor loop, nor allocate much
//! more than its input justifies. Readers are run with small limits (a 1 MiB cap on
//! decompressed sizes). Round-trip targets build structured input from the bytes, write it
//! with this crate's writers and assert that reading it back gives the same entries.
//!
//! The argument-parser targets run `offload-bundler` and `offload-packager` in process with
//! every path rewritten into a per-thread temporary directory (never anywhere else), and
//! assert that a failing run leaves no file behind and changes none of its inputs.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use offload_formats::bundle::archive::{Archive, UnbundleOptions, check_archive, unbundle_archive};
use offload_formats::bundle::binary::{BinaryBundle, write_bundle as write_binary};
use offload_formats::bundle::compressed::{
    self, CompressOptions, CompressedBundle, Limits, Method, Version,
};
use offload_formats::bundle::fatobj::{self, FatObject};
use offload_formats::bundle::text::{TextBundle, write_bundle as write_text};
use offload_formats::id::entry::{self, EntryId};
use offload_formats::id::target_id::{self, TargetArch, TargetId};
use offload_formats::id::triple::Triple;
use offload_formats::llvm::LlvmVersion;
use offload_formats::package::{self, FormatVersion, Image, OffloadBinary};

/// Largest decompressed size the targets accept: large enough for every seed, small enough
/// that a lying header cannot make the fuzzer's memory limit trip.
pub const MAX_DECOMPRESSED: u64 = 1 << 20;

/// A fuzz target: a name (the `fuzz/fuzz_targets/<name>.rs` file) and its body.
pub type Target = (&'static str, fn(&[u8]));

/// Every target, in the order of `fuzz/Cargo.toml`.
pub const TARGETS: &[Target] = &[
    ("entry_id", entry_id),
    ("target_id", target_id),
    ("binary_bundle", binary_bundle),
    ("text_bundle", text_bundle),
    ("ccob", ccob),
    ("offload_binary", offload_binary),
    ("archive", archive),
    ("fat_object", fat_object),
    ("scan", scan),
    ("inspect", inspect),
    ("bundler_cli", bundler_cli),
    ("packager_cli", packager_cli),
    ("roundtrip_binary", roundtrip_binary),
    ("roundtrip_text", roundtrip_text),
    ("roundtrip_ccob", roundtrip_ccob),
    ("roundtrip_offload", roundtrip_offload),
    ("nv_fatbin", nv_fatbin),
];

/// The target called `name`.
pub fn target(name: &str) -> Option<fn(&[u8])> {
    TARGETS.iter().find(|(n, _)| *n == name).map(|(_, f)| *f)
}

/// A cursor over fuzz input that never fails: past the end it yields zeros and empty slices.
#[derive(Debug)]
pub struct Bytes<'a> {
    data: &'a [u8],
}

impl<'a> Bytes<'a> {
    /// A cursor at the start of `data`.
    pub fn new(data: &'a [u8]) -> Self {
        Bytes { data }
    }

    /// The next byte (0 at the end).
    pub fn byte(&mut self) -> u8 {
        match self.data.split_first() {
            Some((&b, rest)) => {
                self.data = rest;
                b
            }
            None => 0,
        }
    }

    /// The next `n` bytes, or fewer at the end.
    pub fn take(&mut self, n: usize) -> &'a [u8] {
        let (head, rest) = self.data.split_at(n.min(self.data.len()));
        self.data = rest;
        head
    }

    /// A chunk of at most `max` bytes, its length given by the next two bytes.
    pub fn chunk(&mut self, max: usize) -> &'a [u8] {
        let n = u16::from_le_bytes([self.byte(), self.byte()]) as usize;
        self.take(n % (max + 1))
    }

    /// Whatever is left.
    pub fn rest(&mut self) -> &'a [u8] {
        std::mem::take(&mut self.data)
    }

    /// Whether nothing is left.
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }
}

// ---------------------------------------------------------------------------------------------
// IDs

/// Entry IDs: parsing (LLVM 22 and 19 rules), standardization, validation, compatibility and
/// the conflict check over up to 8 IDs (one per line).
pub fn entry_id(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let ids: Vec<EntryId> = text
        .split('\n')
        .take(8)
        .map(|s| {
            let _ = EntryId::parse_llvm19(s);
            let id = EntryId::parse(s);
            let std = id.standardized();
            // No property beyond termination: standardizing is not idempotent even for valid
            // IDs (`hip-spirv-amdhsa-gfx1100` gives `hip-spirv-unknown-amdhsa--gfx1100`, whose
            // triple then takes one more component), as the entry ID syntax is ambiguous.
            let _ = (std.standardized(), id.validate(s));
            let _ = (id.group(), id.is_host(), id.is_hip());
            let _ = (id.dropped_processor(), id.rules(), id.to_string());
            id
        })
        .collect();
    for a in &ids {
        for b in &ids {
            let _ = a.is_compatible(b, false);
            let _ = a.is_compatible(b, true);
        }
    }
    let _ = entry::find_conflict(&ids);
}

/// Target IDs and triples: parsing, canonical forms, compatibility and conflicts.
pub fn target_id(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let parts: Vec<&str> = text.split('\n').take(8).collect();
    for s in &parts {
        let triple = Triple::new(s);
        let _ = (
            triple.arch(),
            triple.vendor(),
            triple.os(),
            triple.environment(),
        );
        if let Ok(t) = TargetId::parse(s) {
            let again = TargetId::parse(t.as_str()).expect("a parsed target ID parses again");
            assert_eq!(again.as_str(), t.as_str());
            let _ = (
                t.canonical(),
                t.processor(),
                t.features(),
                t.feature("xnack"),
            );
            for arch in [TargetArch::Amdgcn, TargetArch::R600, TargetArch::Other] {
                let _ = t.canonical_for(arch);
            }
        }
        for arch in [TargetArch::Amdgcn, TargetArch::R600, TargetArch::Other] {
            let _ = target_id::parse_for(arch, s);
            let _ = target_id::parse_for_clang(arch, LlvmVersion::LLVM19, s);
        }
        let _ = target_id::amdgpu_processor(s);
        let _ = target_id::r600_canonical_name(s);
    }
    for a in &parts {
        for b in &parts {
            let _ = target_id::is_compatible(TargetArch::Amdgcn, a, b);
            let _ =
                target_id::is_compatible_for_clang(TargetArch::Amdgcn, LlvmVersion::LLVM19, a, b);
        }
    }
    let _ = target_id::find_conflict(&parts);
}

// ---------------------------------------------------------------------------------------------
// Readers

fn check_binary(data: &[u8], bundle: &BinaryBundle<'_>) {
    let len = data.len() as u64;
    assert!(bundle.header_len() <= len && bundle.end() <= len);
    for e in bundle.entries() {
        let start = e.offset as usize;
        assert_eq!(e.data, &data[start..start + e.data.len()]);
        let _ = e.id_str();
    }
    assert!(bundle.llvm_order().len() <= bundle.entries().len());
}

/// The binary bundle reader: one bundle and bundles back to back (a `.hip_fatbin` section).
pub fn binary_bundle(data: &[u8]) {
    if let Ok(Some(bundle)) = BinaryBundle::parse(data) {
        check_binary(data, &bundle);
    }
    if let Ok(all) = BinaryBundle::parse_all(data) {
        for (start, bundle) in &all {
            check_binary(&data[*start as usize..], bundle);
        }
    }
}

/// The text bundle reader, for each comment string (the first byte picks one first).
pub fn text_bundle(data: &[u8]) {
    let comments = ["//", "#", ";"];
    let first = data.first().map_or(0, |&b| b as usize % 3);
    for comment in comments[first..].iter().chain(&comments[..first]) {
        if let Ok(bundle) = TextBundle::parse(data, comment) {
            for e in bundle.entries() {
                let start = e.offset as usize;
                assert_eq!(e.data, &data[start..start + e.data.len()]);
                assert!(!e.id.contains(&b'\n'));
            }
        }
    }
}

/// The compressed bundle reader (CCOB v1 to v3, zstd and zlib), with a small size limit;
/// the first byte chooses strict and unverified hashing.
pub fn ccob(data: &[u8]) {
    let flags = data.first().copied().unwrap_or(0);
    let _ = compressed::Header::parse(data);
    let _ = offload_formats::bundle::archive::decompress_member(data).map(|d| d.len());
    let Ok(bundle) = CompressedBundle::parse(data) else {
        return;
    };
    assert!(bundle.len() <= data.len());
    let _ = bundle.content_size();
    let limits = Limits {
        max_size: MAX_DECOMPRESSED,
        strict_hash: flags & 1 != 0,
        verify_hash: flags & 2 != 0,
        ..Limits::default()
    };
    let result = bundle.decompress_with(&limits, |p| p.wait(usize::MAX).map(<[u8]>::len));
    if let Ok((d, seen)) = result {
        assert!(d.data.len() as u64 <= MAX_DECOMPRESSED);
        assert_eq!(seen, Some(d.data.len()), "the consumer saw every byte");
        if let Some(h) = d.hash {
            assert_eq!(h, compressed::truncated_md5(&d.data));
        }
        binary_bundle(&d.data);
    }
}

/// The offload binary reader (v1 to v3), decompression of compressed v3 binaries and the
/// splitting of binaries placed back to back.
pub fn offload_binary(data: &[u8]) {
    if let Ok(binary) = OffloadBinary::parse(data) {
        check_offload(&binary);
    }
    if package::is_compressed(data)
        && let Ok(inflated) = package::read::decompress_limited(data, MAX_DECOMPRESSED)
        && let Ok(binary) = OffloadBinary::parse(&inflated)
    {
        check_offload(&binary);
    }
    if let Ok(parts) = package::scan::split(data) {
        for (_, part) in &parts {
            check_offload(&OffloadBinary::parse(part).expect("split validated it"));
        }
    }
}

fn check_offload(binary: &OffloadBinary<'_>) {
    assert!(binary.size() as usize <= binary.data().len());
    assert_eq!(binary.entries().len() as u64, binary.entry_count());
    for e in binary.entries() {
        let _ = (e.image_kind(), e.offload_kind(), e.flags(), e.image().len());
        let _ = (e.triple(), e.arch(), e.get("kind"));
        assert_eq!(e.strings().count(), e.strings().len());
    }
}

/// NVIDIA fat binaries: the reader, the scanner, and a write-then-read of what was read.
pub fn nv_fatbin(data: &[u8]) {
    use offload_formats::nvfatbin::{EntryKind, Fatbin, FatbinWriter, scan};
    let check = |f: &Fatbin<'_>| {
        assert!(f.size() <= data.len());
        for e in f.entries() {
            assert!(e.payload_offset() + e.payload().len() <= f.size());
            assert!(e.stored().len() <= e.payload().len());
            let _ = (e.arch_name(), e.identifier(), e.options(), e.image());
            if let Ok(Some(d)) = e.decompress(MAX_DECOMPRESSED) {
                assert!(d.len() as u64 <= e.uncompressed_size());
            }
        }
    };
    if let Ok(f) = Fatbin::parse(data) {
        check(&f);
        // What the writer takes of it reads back the same.
        let mut w = FatbinWriter::new();
        let mut kept = Vec::new();
        for e in f.entries() {
            let (Some(image), arch) = (e.image(), e.arch().to_string()) else {
                continue;
            };
            let id = e.identifier().and_then(|i| std::str::from_utf8(i).ok());
            let added = match e.kind() {
                EntryKind::Elf => w.add_cubin(&arch, image, id).is_ok(),
                EntryKind::Ptx => w.add_ptx(&arch, image, id, None).is_ok(),
                EntryKind::Other(_) => false,
            };
            if added {
                kept.push((e.kind(), e.arch()));
            }
        }
        let bytes = w.to_bytes();
        let back = Fatbin::parse(&bytes).expect("the writer's output parses");
        let got: Vec<_> = back
            .entries()
            .iter()
            .map(|e| (e.kind(), e.arch()))
            .collect();
        assert_eq!(got, kept);
    }
    let (found, _) = scan(data);
    for f in &found {
        assert!(f.offset + f.fatbin.size() <= data.len());
        check(&f.fatbin);
    }
}

/// Archives: the bundler's archive reader and check, device-archive unbundling for two
/// targets, and the member symbol readers (objects and bitcode).
pub fn archive(data: &[u8]) {
    if let Ok(archive) = Archive::parse(data) {
        for m in archive.members() {
            assert!(m.data.len() <= data.len());
            let _ = m.name_str();
            let _ = offload_formats::bundle::bitcode::archive_symbols(m.data);
            let _ = package::archive::member_symbols(m.data);
        }
    }
    let _ = check_archive(data, "fuzz.a");
    let targets = [
        EntryId::parse("hip-amdgcn-amd-amdhsa--gfx906").standardized(),
        EntryId::parse("hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+").standardized(),
    ];
    let options = UnbundleOptions {
        allow_missing: data.len() % 2 == 0,
        hip_openmp: data.len() % 3 == 0,
    };
    let _ = unbundle_archive(data, &targets, options);
}

/// Fat objects (ELF, COFF, Mach-O hosts with bundle sections): parsing, removal of the bundle
/// sections, and the bitcode symbol reader on the same bytes.
pub fn fat_object(data: &[u8]) {
    let _ = fatobj::detect(data);
    let _ = fatobj::is_host_placeholder(data);
    let _ = offload_formats::bundle::bitcode::archive_symbols(data);
    if let Ok(fat) = FatObject::parse(data) {
        for e in fat.entries() {
            let _ = (e.id_str(), e.is_host());
        }
        if let Ok(stripped) = fatobj::remove_bundle_sections(data)
            && let Ok(again) = FatObject::parse(&stripped)
        {
            assert!(again.entries().is_empty(), "bundle sections remain");
        }
    }
}

/// The offload-binary container scanner (`package::scan`): raw binaries, ELF and COFF objects,
/// archives, and whatever the container identification makes of anything else.
pub fn scan(data: &[u8]) {
    let _ = package::ScanKind::identify(data);
    if let Ok(found) = package::scan(data, "fuzz.o") {
        for f in &found {
            check_offload(&f.binary());
        }
    }
}

/// `inspect` (the scanner behind `offload-build inspect`): any file; every entry it reports
/// lies inside the input and can be read back.
pub fn inspect(data: &[u8]) {
    if let Ok(report) = offload_formats::inspect::inspect(data, "fuzz.bin") {
        for container in &report.containers {
            let end = container.offset.checked_add(container.size);
            assert!(
                end.is_some_and(|e| e <= data.len() as u64),
                "container outside the input: {container:?}"
            );
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Command lines

/// File name extensions the command-line targets can give their files.
const EXTENSIONS: [&str; 9] = ["", "o", "bc", "a", "bin", "hipfb", "ll", "s", "i"];

/// A per-thread scratch directory, emptied before every run.
fn scratch() -> PathBuf {
    thread_local! {
        static DIR: tempfile::TempDir = tempfile::Builder::new()
            .prefix("offload-fuzz-")
            .tempdir()
            .expect("create a temporary directory");
    }
    DIR.with(|d| d.path().to_path_buf())
}

/// The files of `dir` with their contents.
fn snapshot(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    for e in std::fs::read_dir(dir).expect("read the scratch directory") {
        let e = e.expect("a directory entry");
        let name = e.file_name().to_string_lossy().into_owned();
        let data = std::fs::read(e.path()).unwrap_or_else(|_| b"<not a file>".to_vec());
        out.insert(name, data);
    }
    out
}

fn clear(dir: &Path) {
    for e in std::fs::read_dir(dir)
        .expect("read the scratch directory")
        .flatten()
    {
        let p = e.path();
        if p.is_dir() {
            let _ = std::fs::remove_dir_all(&p);
        } else {
            let _ = std::fs::remove_file(&p);
        }
    }
}

fn file_name(index: u8, ext: &str) -> String {
    if ext.is_empty() {
        format!("f{}", index % 4)
    } else {
        format!("f{}.{ext}", index % 4)
    }
}

/// A path inside `dir` standing for the user's `value`: one of four names, keeping a known
/// extension, so that inputs, outputs and repeated outputs collide as they do in real use.
fn confine(dir: &Path, value: &str) -> String {
    let h = value
        .bytes()
        .fold(0u8, |h, b| h.wrapping_mul(31).wrapping_add(b));
    let ext = value
        .rsplit_once('.')
        .map(|(_, e)| e)
        .filter(|e| EXTENSIONS.contains(e))
        .unwrap_or("");
    dir.join(file_name(h, ext)).display().to_string()
}

/// Rewrites one argument so that any path it names lies in `dir`. `path_opts` are the options
/// whose value is a path (comma lists are rewritten item by item); `image` is the packager's
/// `--image` key list, whose `file=` items are rewritten and which always gets one.
fn confine_arg(dir: &Path, arg: &str, path_opts: &[&str], image: Option<&str>) -> String {
    let Some(body) = arg.strip_prefix('-') else {
        // Positional arguments and response files (`@x`) become plain paths in `dir`.
        return confine(dir, arg);
    };
    let body = body.strip_prefix('-').unwrap_or(body);
    let dashes = &arg[..arg.len() - body.len()];
    if body.is_empty() {
        // `--` would make what follows positional, bypassing the rewriting.
        return "-".into();
    }
    let (name, value) = match body.split_once('=') {
        Some((n, v)) => (n, Some(v)),
        None => (body, None),
    };
    if path_opts.contains(&name) {
        // Never leave a path option without `=`: the next argument would be its value.
        let value = value.unwrap_or("");
        let items: Vec<String> = value.split(',').map(|v| confine(dir, v)).collect();
        return format!("{dashes}{name}={}", items.join(","));
    }
    if Some(name) == image {
        let mut items: Vec<String> = value
            .unwrap_or("")
            .split(',')
            .map(|item| match item.split_once('=') {
                Some(("file", v)) => format!("file={}", confine(dir, v)),
                _ => item.to_owned(),
            })
            .collect();
        // Without `file=` extraction writes `<stem>-<triple>-<arch>...` to the current
        // directory.
        if !items.iter().any(|i| i.starts_with("file=")) {
            items.push(format!("file={}", confine(dir, "x")));
        }
        return format!("{dashes}{name}={}", items.join(","));
    }
    arg.to_owned()
}

/// Runs a command-line tool on fuzz input: up to three files (name, extension, contents),
/// then arguments separated by NUL or newline. Asserts a clean exit status and, on failure,
/// that the scratch directory is exactly as before the run.
fn run_cli(
    data: &[u8],
    argv0: &str,
    path_opts: &[&str],
    image: Option<&str>,
    run: fn(&[String], &mut dyn std::io::Write, &mut dyn std::io::Write) -> i32,
) {
    let dir = scratch();
    clear(&dir);
    let mut input = Bytes::new(data);
    let files = input.byte() % 4;
    for _ in 0..files {
        let name = input.byte();
        let ext = EXTENSIONS[usize::from(input.byte()) % EXTENSIONS.len()];
        let contents = input.chunk(16384);
        std::fs::write(dir.join(file_name(name, ext)), contents).expect("write an input");
    }
    let text = String::from_utf8_lossy(input.rest());
    let _ = offload_cli::cl::tokenize_gnu(&text);
    let mut args = vec![argv0.to_owned()];
    args.extend(
        text.split(['\0', '\n'])
            .take(32)
            .map(|a| confine_arg(&dir, a, path_opts, image)),
    );
    let before = snapshot(&dir);
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = run(&args, &mut out, &mut err);
    assert!(code == 0 || code == 1, "exit status {code} for {args:?}");
    if code != 0 {
        assert!(!err.is_empty(), "failure without a message for {args:?}");
        let after = snapshot(&dir);
        assert!(
            before == after,
            "a failed run changed the files: {:?} -> {:?} for {args:?}",
            before.keys().collect::<Vec<_>>(),
            after.keys().collect::<Vec<_>>()
        );
    }
    clear(&dir);
}

/// `offload-bundler` in process: every `-input`/`-output` path confined to a scratch directory.
pub fn bundler_cli(data: &[u8]) {
    run_cli(
        data,
        "offload-bundler",
        &["input", "inputs", "output", "outputs"],
        None,
        offload_cli::bundler::run,
    );
}

/// `offload-packager` in process: `-o` and every `--image` `file=` confined to a scratch
/// directory.
pub fn packager_cli(data: &[u8]) {
    run_cli(
        data,
        "offload-packager",
        &["o"],
        Some("image"),
        offload_cli::packager::run,
    );
}

// ---------------------------------------------------------------------------------------------
// Round trips

/// Up to 8 `(id, payload)` pairs from fuzz input.
fn entries<'a>(input: &mut Bytes<'a>, max_id: usize) -> Vec<(&'a [u8], &'a [u8])> {
    let n = input.byte() % 9;
    (0..n)
        .map(|_| (input.chunk(max_id), input.chunk(4096)))
        .collect()
}

/// Binary bundles: what the writer writes, the reader reads back entry for entry.
pub fn roundtrip_binary(data: &[u8]) {
    let mut input = Bytes::new(data);
    let align = u64::from(input.byte()) % 64 + 1;
    let mut entries = entries(&mut input, 64);
    // The writer refuses duplicate IDs (LLVM's reader would merge them).
    let mut seen = std::collections::HashSet::new();
    entries.retain(|(id, _)| seen.insert(*id));
    let bytes = write_binary(&entries, align).expect("a small bundle is writable");
    let bundle = BinaryBundle::parse(&bytes)
        .expect("our own bundle reads back")
        .expect("it has the magic");
    let got: Vec<(&[u8], &[u8])> = bundle.entries().iter().map(|e| (e.id, e.data)).collect();
    assert_eq!(got, entries);
    for e in bundle.entries() {
        if !e.data.is_empty() {
            assert_eq!(e.offset % align, 0, "payload not aligned to {align}");
        }
    }
    let all = BinaryBundle::parse_all(&bytes).expect("parse_all reads it too");
    assert_eq!(all.len(), 1);
}

/// Text bundles: entries whose ID has no newline and whose payload has no marker read back.
pub fn roundtrip_text(data: &[u8]) {
    let mut input = Bytes::new(data);
    let comment = ["//", "#", ";"][usize::from(input.byte()) % 3];
    let entries: Vec<(&[u8], &[u8])> = entries(&mut input, 64)
        .into_iter()
        .filter(|(id, payload)| {
            !id.contains(&b'\n') && !contains(payload, offload_formats::bundle::MAGIC)
        })
        .collect();
    let bytes = write_text(comment, &entries);
    let bundle = TextBundle::parse(&bytes, comment).expect("our own bundle reads back");
    let got: Vec<(&[u8], &[u8])> = bundle.entries().iter().map(|e| (e.id, e.data)).collect();
    assert_eq!(got, entries);
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// Compressed bundles: compress (zstd or zlib, v2 or v3, low levels), then parse and
/// decompress give the same bytes, the right hash and no warning.
pub fn roundtrip_ccob(data: &[u8]) {
    let mut input = Bytes::new(data);
    let flags = input.byte();
    let options = CompressOptions {
        method: if flags & 1 == 0 {
            Method::Zstd
        } else {
            Method::Zlib
        },
        level: Some(i32::from(flags >> 2 & 3) + 1),
        version: if flags & 2 == 0 {
            Version::V3
        } else {
            Version::V2
        },
        threads: 0,
    };
    let bundle = input.rest();
    let packed = compressed::compress(bundle, &options).expect("compressible");
    let parsed = CompressedBundle::parse(&packed).expect("our own CCOB parses");
    assert_eq!(parsed.len(), packed.len());
    assert_eq!(parsed.header().uncompressed_size, bundle.len() as u64);
    let limits = Limits {
        max_size: bundle.len() as u64,
        strict_hash: true,
        verify_hash: true,
        ..Limits::default()
    };
    let (d, ()) = parsed
        .decompress_with(&limits, |_| ())
        .expect("our own CCOB decompresses within its exact size");
    assert_eq!(d.data, bundle);
    assert!(d.warnings.is_empty(), "{:?}", d.warnings);
}

/// Offload binaries: images with unique keys, written as version 1 (one binary each) or
/// version 2 (one binary), split and read back with the same kinds, strings and bytes.
pub fn roundtrip_offload(data: &[u8]) {
    let mut input = Bytes::new(data);
    let flags = input.byte();
    let version = if flags & 1 == 0 {
        FormatVersion::V1
    } else {
        FormatVersion::V2
    };
    let n = input.byte() % 5;
    let mut specs = Vec::new();
    for _ in 0..n {
        let image_kind = u16::from(input.byte());
        let offload_kind = u16::from(input.byte());
        let mut strings = BTreeMap::new();
        for _ in 0..input.byte() % 5 {
            let k = String::from_utf8_lossy(input.chunk(16)).replace('\0', "");
            let v = String::from_utf8_lossy(input.chunk(32)).replace('\0', "");
            strings.insert(k, v);
        }
        specs.push((image_kind, offload_kind, strings, input.chunk(2048)));
    }
    let images: Vec<Image<'_>> = specs
        .iter()
        .map(|(ik, ok, strings, data)| Image {
            image_kind: *ik,
            offload_kind: *ok,
            flags: 0,
            strings: strings
                .iter()
                .map(|(k, v)| (k.as_str(), v.as_str()))
                .collect(),
            data,
        })
        .collect();
    let Ok(bytes) = package::write(&images, version) else {
        return;
    };
    let parts = package::scan::split(&bytes).expect("our own binaries split");
    let got: Vec<_> = parts
        .iter()
        .flat_map(|(_, part)| {
            let binary = OffloadBinary::parse(part).expect("split validated it");
            binary
                .entries()
                .map(|e| {
                    let strings: BTreeMap<String, String> = e
                        .strings()
                        .map(|(k, v)| {
                            (
                                String::from_utf8_lossy(k).into_owned(),
                                String::from_utf8_lossy(v).into_owned(),
                            )
                        })
                        .collect();
                    (
                        e.image_kind().0,
                        e.offload_kind().0,
                        strings,
                        Cow::Owned::<[u8]>(e.image().to_vec()),
                    )
                })
                .collect::<Vec<_>>()
        })
        .collect();
    let want: Vec<_> = specs
        .iter()
        .map(|(ik, ok, s, d)| (*ik, *ok, s.clone(), Cow::Borrowed(*d)))
        .collect();
    assert_eq!(got, want);
}

//! The flags of `offload-bundler`, each defined once (name, value kind, help, category,
//! suggestion rank), and the raw options they fill in ([`LowArgs`], one typed field per
//! flag). The table is in the order of clang-offload-bundler 22's `--help` (LLVM sorts by
//! name; offload-build's own flags sit where they always have); `suggest` ranks follow the
//! ties observed from clang-offload-bundler 22: `-ver` and `-allow` → `--help`, `-inptu` →
//! `--inputs`, `-outptu` → `--output`, `-x` → `--###`. `-h` is hidden and never offered.
//!
//! LLVM versions: clang-offload-bundler 19 and 22 define these flags alike (their `--help`
//! texts are identical), so no flag carries a version note.

use crate::cl::{Flag, Help, Kind};

/// The raw options: what the command line said, before any validation.
#[derive(Debug, Default)]
pub(crate) struct LowArgs {
    /// `-type` (empty when absent; then parsing has already failed).
    pub(crate) file_type: String,
    /// `-targets`, comma lists split.
    pub(crate) targets: Vec<String>,
    /// `-input`, one per occurrence.
    pub(crate) input: Vec<String>,
    /// `-inputs` (deprecated), comma lists split.
    pub(crate) inputs: Vec<String>,
    /// `-output`, one per occurrence.
    pub(crate) output: Vec<String>,
    /// `-outputs` (deprecated), comma lists split.
    pub(crate) outputs: Vec<String>,
    pub(crate) unbundle: bool,
    pub(crate) list: bool,
    pub(crate) allow_missing_bundles: bool,
    pub(crate) bundle_align: Option<u32>,
    pub(crate) check_input_archive: bool,
    pub(crate) hip_openmp_compatible: bool,
    /// `-compress`, when given (else the environment decides).
    pub(crate) compress: Option<bool>,
    /// `-compression-level`, when given (else the environment decides).
    pub(crate) compression_level: Option<i32>,
    /// `-verbose`, when given (else the environment decides).
    pub(crate) verbose: Option<bool>,
    /// `-compression-threads`, when given (else the environment decides).
    pub(crate) compression_threads: Option<u32>,
    pub(crate) strict_hash: bool,
    /// `-verify-hash`, when given (else the environment decides).
    pub(crate) verify_hash: Option<bool>,
    /// `-###`.
    pub(crate) print_only: bool,
    /// `-h`: print the help.
    pub(crate) h: bool,
}

/// `--help`'s overview, category and `--version`.
pub(crate) const HELP: Help = Help {
    overview: "A tool to bundle several input files of the specified type <type> 
referring to the same source file but different targets into a single 
one. The resulting file can also be unbundled into different files by 
this tool if -unbundle is provided.",
    category: "clang-offload-bundler options",
    list: false,
    version: concat!(
        "offload-bundler (offload-build) version ",
        env!("CARGO_PKG_VERSION"),
        "\n  a drop-in clang-offload-bundler, LLVM 22 behaviour"
    ),
};

/// Shorthand for the table below.
type F = Flag<LowArgs>;

/// Every flag of `offload-bundler`.
pub(crate) const FLAGS: &[Flag<LowArgs>] = &[
    F::help_flag(0),
    F::help_list_flag(17),
    F::version_flag(18),
    F::new("###", Kind::Flag(|a, v| a.print_only = v))
        .help("Print any external commands that are to be executed instead of actually executing them - for testing purposes.")
        .suggest(1),
    F::new("allow-missing-bundles", Kind::Flag(|a, v| a.allow_missing_bundles = v))
        .help("Create empty files if bundles are missing when unbundling.")
        .suggest(10),
    F::new("bundle-align", Kind::Uint(|a, v| a.bundle_align = Some(v)))
        .value("=<uint>")
        .help("Alignment of bundle for binary files")
        .suggest(11),
    F::new("check-input-archive", Kind::Flag(|a, v| a.check_input_archive = v))
        .help("Check if input heterogeneous archive is valid in terms of TargetID rules.")
        .suggest(12),
    F::new("compress", Kind::Flag(|a, v| a.compress = Some(v)))
        .help("Compress output file when bundling.")
        .suggest(14),
    F::new("compression-level", Kind::Int(|a, v| a.compression_level = Some(v)))
        .value("=<n>")
        .help("Specify the compression level (integer)")
        .suggest(15),
    F::new("compression-threads", Kind::Uint(|a, v| a.compression_threads = Some(v)))
        .value("=<uint>")
        .help("zstd worker threads for -compress (offload-build; 0, the default,
writes clang-offload-bundler's exact bytes; more is faster, other bytes)")
        .ours()
        .suggest(19),
    F::new("hip-openmp-compatible", Kind::Flag(|a, v| a.hip_openmp_compatible = v))
        .help("Treat hip and hipv4 offload kinds as compatible with openmp kind, and vice versa.")
        .suggest(13),
    F::new("input", Kind::List(|a, v| a.input.push(v)))
        .value("=<string>")
        .help("Input file. Can be specified multiple times for multiple input files.")
        .suggest(5),
    F::new("inputs", Kind::CommaList(|a, v| a.inputs.push(v)))
        .value("=<string>")
        .help("[<input file>,...] (deprecated)")
        .suggest(4),
    F::new("list", Kind::Flag(|a, v| a.list = v))
        .help("List bundle IDs in the bundled file.")
        .suggest(9),
    F::new("output", Kind::List(|a, v| a.output.push(v)))
        .value("=<string>")
        .help("Output file. Can be specified multiple times for multiple output files.")
        .suggest(6),
    F::new("outputs", Kind::CommaList(|a, v| a.outputs.push(v)))
        .value("=<string>")
        .help("[<output file>,...] (deprecated)")
        .suggest(7),
    F::new("strict-hash", Kind::Flag(|a, v| a.strict_hash = v))
        .help("Fail when a compressed bundle's stored MD5 does not match its
contents (offload-build; -verify-hash only warns, LLVM never checks)")
        .ours()
        .suggest(20),
    F::new("targets", Kind::CommaList(|a, v| a.targets.push(v)))
        .value("=<string>")
        .help("[<offload kind>-<target triple>,...]")
        .suggest(3),
    F::new("type", Kind::Str(|a, v| a.file_type = v))
        .required()
        .value("=<string>")
        .help("Type of the files to be bundled/unbundled.
Current supported types are:
  i    - cpp-output
  ii   - c++-cpp-output
  cui  - cuda-cpp-output
  hipi - hip-cpp-output
  d    - dependency
  ll   - llvm
  bc   - llvm-bc
  s    - assembler
  o    - object
  a    - archive of objects
  gch  - precompiled-header
  ast  - clang AST file")
        .suggest(2),
    F::new("unbundle", Kind::Flag(|a, v| a.unbundle = v))
        .help("Unbundle bundled file into several output files.")
        .suggest(8),
    F::new("verify-hash", Kind::Flag(|a, v| a.verify_hash = Some(v)))
        .help("Check a compressed bundle's stored MD5 against its contents and warn on a
mismatch (offload-build; off by default as in LLVM, where hashing costs more
than unbundling; also OFFLOAD_BUNDLER_VERIFY_HASH=1)")
        .ours()
        .suggest(21),
    F::new("verbose", Kind::Flag(|a, v| a.verbose = Some(v)))
        .help("Print debug information.")
        .suggest(16),
    F::new("h", Kind::Flag(|a, v| a.h = v)),
];

#[cfg(test)]
mod tests {
    /// Ranks and help order (see [`crate::cl::assert_well_formed`]).
    #[test]
    fn table_is_well_formed() {
        crate::cl::assert_well_formed(super::FLAGS);
    }
}

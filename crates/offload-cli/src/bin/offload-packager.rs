//! `offload-packager`: a drop-in replacement for LLVM's `clang-offload-packager`
//! and `llvm-offload-binary`.
//!
//! Accepts the same options and writes the same bytes; see
//! `offload_cli::packager` for the differences (clear errors where LLVM
//! crashes or reads out of bounds, atomic outputs).

fn main() {
    offload_cli::default_sigpipe();
    let args: Vec<String> = std::env::args_os()
        .map(|a| offload_formats::id::spell::text_of_os(&a).into_owned())
        .collect();
    let code = offload_cli::packager::main(&args);
    std::process::exit(code);
}

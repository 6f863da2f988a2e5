//! `offload-bundler`: a drop-in replacement for LLVM's `clang-offload-bundler`.
//!
//! Accepts the same options and writes the same bytes; see
//! `offload_cli::bundler` for the differences (clear errors where LLVM
//! crashes, atomic outputs).

fn main() {
    offload_cli::default_sigpipe();
    let args: Vec<String> = std::env::args_os()
        .map(|a| offload_formats::id::spell::text_of_os(&a).into_owned())
        .collect();
    let code = offload_cli::bundler::main(&args);
    std::process::exit(code);
}

//! `offload-build`: inspect any binary for embedded device code, extract entries, and
//! write host objects that embed device code. See `offload_cli::helper`.

fn main() {
    offload_cli::default_sigpipe();
    let args: Vec<String> = std::env::args_os()
        .map(|a| offload_formats::id::spell::text_of_os(&a).into_owned())
        .collect();
    std::process::exit(offload_cli::helper::main(&args));
}

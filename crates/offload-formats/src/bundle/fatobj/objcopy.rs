//! The llvm-objcopy command lines LLVM runs where this module writes bytes itself, for
//! `-###`.

use super::section::section_name;

/// The llvm-objcopy command line LLVM runs to write a fat object (for `-###`): each
/// argument double-quoted, separated by spaces, ending in a newline. `inputs[i]` is the
/// file of `ids[i]`; the host's (`host_index`) is `host_temp`, LLVM's temporary file with
/// the one zero byte; `host_input` is the host object and `output` the fat object.
pub fn objcopy_add_command(
    objcopy: &str,
    ids: &[&str],
    inputs: &[&str],
    host_index: usize,
    host_temp: &str,
    host_input: &str,
    output: &str,
) -> String {
    let mut args = vec![objcopy.to_owned()];
    for (i, id) in ids.iter().enumerate() {
        let file = if i == host_index {
            host_temp
        } else {
            inputs[i]
        };
        let name = section_name(id);
        args.push(format!("--add-section={name}={file}"));
        args.push(format!("--set-section-flags={name}=readonly,exclude"));
    }
    args.extend(["--".into(), host_input.into(), output.into()]);
    quote_command(&args)
}

/// The llvm-objcopy command line LLVM runs to extract the host object from a fat object
/// (for `-###`); `temp` is LLVM's temporary output file.
pub fn objcopy_remove_command(objcopy: &str, input: &str, temp: &str) -> String {
    let args = [
        objcopy.to_owned(),
        "--regex".into(),
        format!("--remove-section={}.*", section_name("")),
        "--".into(),
        input.into(),
        temp.into(),
    ];
    quote_command(&args)
}

fn quote_command(args: &[String]) -> String {
    let mut s = String::new();
    for (i, a) in args.iter().enumerate() {
        if i != 0 {
            s.push(' ');
        }
        s.push('"');
        s.push_str(a);
        s.push('"');
    }
    s.push('\n');
    s
}

//! `offload-build embed`: a host object that embeds device code, self-registering for HIP
//! (`embed hip`) or for clang's new offload driver (`embed new-driver`).

use clap::{Args, Subcommand};

use super::failure::{Failure, read, write_output};
use crate::fileio::Input;
use offload_build::embed::{DeviceVariable, HipObject, NewDriverObject};
use offload_formats::package::LlvmVersion;

#[derive(Subcommand, Debug)]
pub(crate) enum EmbedCommand {
    /// A self-registering HIP object (`.hip_fatbin`, wrapper, constructor).
    Hip(HipArgs),
    /// An object for clang's new offload driver (`.llvm.offloading` and entries).
    NewDriver(NewDriverArgs),
}

#[derive(Args, Debug)]
struct CommonEmbed {
    /// Host target triple (x86_64-unknown-linux-gnu, aarch64-linux-gnu,
    /// powerpc64le-linux-gnu, x86_64-pc-windows-msvc).
    #[arg(long)]
    target: String,
    /// A kernel to register besides the discovered ones.
    #[arg(long = "kernel")]
    kernels: Vec<String>,
    /// A device variable NAME=SIZE to register (replaces a discovered one).
    #[arg(long = "variable")]
    variables: Vec<String>,
    /// Do not read kernels and variables from the device code.
    #[arg(long)]
    no_discover: bool,
    /// Prefix of the exported host symbols.
    #[arg(long, default_value = "")]
    symbol_prefix: String,
    /// Output object.
    #[arg(short, long)]
    output: String,
}

#[derive(Args, Debug)]
pub(crate) struct HipArgs {
    #[command(flatten)]
    common: CommonEmbed,
    /// A finished bundle or compressed bundle, embedded unchanged.
    #[arg(long, conflicts_with = "code_objects")]
    bundle: Option<String>,
    /// TARGET_ID=FILE: a code object for one device (repeatable).
    #[arg(long = "code-object")]
    code_objects: Vec<String>,
    /// Compress the bundle built from code objects (CCOB version 2, zstd).
    #[arg(long)]
    compress: bool,
    /// Export a symbol of this name at the start of the bundle.
    #[arg(long)]
    start_symbol: Option<String>,
    /// Export an 8-byte integer of this name holding the bundle size.
    #[arg(long)]
    size_symbol: Option<String>,
    /// Omit the wrapper and constructor (data only).
    #[arg(long)]
    no_register: bool,
}

#[derive(Args, Debug)]
pub(crate) struct NewDriverArgs {
    #[command(flatten)]
    common: CommonEmbed,
    /// Offload binaries to embed (repeatable).
    #[arg(long = "offload-binary", required = true)]
    offload_binaries: Vec<String>,
    /// Major version of the LLVM whose clang-linker-wrapper links the object.
    #[arg(long, default_value_t = 19)]
    llvm: u32,
}

fn variables(specs: &[String]) -> Result<Vec<DeviceVariable>, Failure> {
    specs
        .iter()
        .map(|s| {
            let (name, size) = s
                .split_once('=')
                .ok_or_else(|| format!("--variable '{s}': expected NAME=SIZE"))?;
            let size = size
                .parse()
                .map_err(|_| format!("--variable '{s}': the size is not a number"))?;
            Ok(DeviceVariable::new(name, size))
        })
        .collect()
}

pub(crate) fn embed_hip(a: &HipArgs) -> Result<(), Failure> {
    let c = &a.common;
    let mut hip = HipObject::new(&c.target).map_err(|e| e.to_string())?;
    let mut inputs = Vec::new();
    if let Some(b) = &a.bundle {
        inputs.push((String::new(), read(b)?));
    }
    for spec in &a.code_objects {
        let (target, file) = spec
            .split_once('=')
            .ok_or_else(|| format!("--code-object '{spec}': expected TARGET_ID=FILE"))?;
        inputs.push((target.to_owned(), read(file)?));
    }
    if inputs.is_empty() {
        return Err("give --bundle or at least one --code-object"
            .to_owned()
            .into());
    }
    for (target, input) in &inputs {
        if a.bundle.is_some() {
            hip.bundle(&input.data[..]);
        } else {
            hip.code_object(target, &input.data[..])
                .map_err(|e| e.to_string())?;
        }
    }
    hip.compress_v2(a.compress)
        .discover_symbols(!c.no_discover)
        .register(!a.no_register)
        .symbol_prefix(&c.symbol_prefix);
    for k in &c.kernels {
        hip.kernel(k);
    }
    for v in variables(&c.variables)? {
        hip.variable(v);
    }
    if let Some(s) = &a.start_symbol {
        hip.start_symbol(s);
    }
    if let Some(s) = &a.size_symbol {
        hip.size_symbol(s);
    }
    let bytes = hip.write().map_err(|e| e.to_string())?;
    write_output(&c.output, &bytes)
}

pub(crate) fn embed_new_driver(a: &NewDriverArgs) -> Result<(), Failure> {
    let c = &a.common;
    let mut obj =
        NewDriverObject::new(&c.target, LlvmVersion::new(a.llvm)).map_err(|e| e.to_string())?;
    let inputs: Vec<Input> = a
        .offload_binaries
        .iter()
        .map(|p| read(p))
        .collect::<Result<_, _>>()?;
    for (input, path) in inputs.iter().zip(&a.offload_binaries) {
        obj.offload_binary(&input.data[..])
            .map_err(|e| format!("'{path}': {e}"))?;
    }
    obj.discover_symbols(!c.no_discover)
        .symbol_prefix(&c.symbol_prefix);
    for k in &c.kernels {
        obj.kernel(k);
    }
    for v in variables(&c.variables)? {
        obj.variable(v);
    }
    let bytes = obj.write().map_err(|e| e.to_string())?;
    write_output(&c.output, &bytes)
}

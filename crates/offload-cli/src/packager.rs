//! `offload-packager`: the command line of clang-offload-packager (LLVM 19) and
//! llvm-offload-binary (LLVM 22) over this crate's offload binaries.
//!
//! - Package: `offload-packager -o out.bin --image=file=a.o,triple=…,arch=…,kind=hip …`
//!   writes one version-1 binary per file (`file=a,b` or a repeated `file=` gives
//!   several), concatenated in command-line order. Files starting with the bitcode
//!   magic are bitcode images; other image kinds come from the extension. `kind=`
//!   sets the offload kind, every other key except `file` becomes a string entry,
//!   in LLVM's hash-table order, so the bytes match LLVM's.
//! - Extract: `offload-packager in.o --image=arch=gfx90a[,file=x][,…]` finds the
//!   binaries in an object, archive or raw file and writes the matching images to
//!   `file` (the last match), to an archive (`--archive`), or to
//!   `<input stem>-<triple>-<arch>.<n>.<ext>`.
//!
//! Behaviour and messages follow llvm-offload-binary 22: `triple` is not required,
//! no arguments print the help, `kind=hip` is 4 and `kind=sycl` 8. For readers of
//! LLVM 20 and earlier (HIP = 3, no SYCL), set `OFFLOAD_PACKAGER_LLVM_VERSION=19`
//! (any major version is accepted; it selects the offload-kind numbering in
//! package and extract mode and the `.spv` extension from 23 on).
//!
//! Differences from LLVM, all deliberate:
//! - malformed binaries are reported with their offset and entry (LLVM: "Invalid
//!   data was encountered while parsing the file"), and images, strings and string
//!   entries outside the binary are errors (LLVM reads past them or crashes);
//! - LLVM bitcode inputs in extract mode are refused with a clear error (LLVM reads
//!   `!llvm.embedded.objects` through its IR reader);
//! - invoked as `clang-offload-packager` it does not print LLVM 22's deprecation
//!   warning; `--help-hidden` prints `--help`'s text;
//! - every output is written to a temporary file and renamed into place.
//!
//! Exit status: 0 on success (including extraction that matched nothing), 1 on any error.

use offload_formats::id::spell;
use std::io::Write;

use super::cl::{self, Flag, Help, Kind};
use super::{Ctx, Exit};
use crate::fileio::{Input, OutputFile, error_text};
use offload_formats::kind::FileKind;
use offload_formats::package::archive::write_archive;
use offload_formats::package::dense_map_order;
use offload_formats::package::write::{Image, write_v1_to};
use offload_formats::package::{ImageKind, LlvmVersion, OffloadKind, scan};

/// The raw options: what the command line said, one typed field per flag.
#[derive(Debug, Default)]
struct LowArgs {
    /// `-o` (empty when absent).
    output: String,
    /// The positional input file (empty when absent).
    input: String,
    /// `--image`, one key/value list per occurrence.
    images: Vec<String>,
    archive: bool,
    /// `-h`: print the help list.
    h: bool,
}

/// `--help`'s overview, category and `--version`. LLVM versions: clang-offload-packager 19
/// titles the category `clang-offload-packager options`; its flags and their help are those
/// of llvm-offload-binary 22, which this follows.
const HELP: Help = Help {
    overview: "A utility for bundling several object files into a single binary.
The output binary can then be embedded into the host section table
to create a fatbinary containing offloading code.",
    category: "llvm-offload-binary options",
    list: true,
    version: concat!(
        "offload-packager (offload-build) version ",
        env!("CARGO_PKG_VERSION"),
        "\n  a drop-in llvm-offload-binary, LLVM 22 behaviour"
    ),
};

/// Shorthand for the table below.
type F = Flag<LowArgs>;

/// Every flag, in `--help` order. The `suggest` ranks break ties as llvm-offload-binary
/// 22 does (observed: `--ver` → `--help`, `-x` → `-o`); `-h` is hidden.
const FLAGS: &[Flag<LowArgs>] = &[
    F::help_flag(0),
    F::help_list_flag(5),
    F::version_flag(4),
    F::new("archive", Kind::Flag(|a, v| a.archive = v))
        .help("Write extracted files to a static archive")
        .suggest(3),
    F::new("image", Kind::List(|a, v| a.images.push(v)))
        .value("=<<key>=<value>,...>")
        .help("List of key and value arguments. Required keywords are 'file' and 'triple'.")
        .suggest(2),
    F::new("o", Kind::Str(|a, v| a.output = v))
        .value(" <file>")
        .help("Write output to <file>.")
        .suggest(1),
    F::new("h", Kind::Flag(|a, v| a.h = v)),
    F::new("", Kind::Positional(|a, v| a.input = v)).help("Extract from <file>."),
];

/// The environment variable that selects the offload-kind numbering.
pub const LLVM_VERSION_VAR: &str = "OFFLOAD_PACKAGER_LLVM_VERSION";

/// Runs the tool with the process's standard streams; returns the exit status.
pub fn main(args: &[String]) -> i32 {
    super::with_stdio(args, run)
}

/// Runs the tool: `args[0]` is the program name as invoked.
pub fn run(args: &[String], out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    super::run_body(args, "offload-packager", out, err, run_inner)
}

/// The offload-kind numbering: LLVM 22's unless the environment asks for another.
fn llvm_version(ctx: &mut Ctx<'_>) -> Result<LlvmVersion, Exit> {
    match std::env::var(LLVM_VERSION_VAR) {
        Err(_) => Ok(LlvmVersion::NEWEST_RELEASE),
        Ok(v) => match v.trim().parse::<u32>() {
            Ok(n) if n >= 15 => Ok(LlvmVersion::new(n)),
            _ => Err(ctx.error(format_args!(
                "{LLVM_VERSION_VAR}='{v}': expected an LLVM major version (15 or later)"
            ))),
        },
    }
}

fn run_inner(ctx: &mut Ctx<'_>, args: &[String], out: &mut dyn Write) -> Result<(), Exit> {
    let Some(low) = cl::parse_args(ctx, args, FLAGS, &HELP, out)? else {
        return Ok(());
    };
    if low.h || (low.output.is_empty() && low.input.is_empty()) {
        cl::print_help(out, ctx.argv0, &HELP, FLAGS, true);
        return Ok(());
    }
    if !low.input.is_empty() && !low.output.is_empty() {
        return Err(ctx.error(
            "Packaging to an output file and extracting from an input file are mutually exclusive.",
        ));
    }
    let llvm = llvm_version(ctx)?;
    if !low.output.is_empty() {
        package(ctx, &low.output, &low.images, llvm)
    } else {
        extract(ctx, &low.input, &low.images, low.archive, llvm)
    }
}

/// The `--image` key/value list: keys in first-occurrence order, repeated keys'
/// values joined with `,`, as LLVM's `getImageArguments` builds its map.
struct ImageArgs {
    pairs: Vec<(String, String)>,
}

impl ImageArgs {
    fn parse(spec: &str) -> ImageArgs {
        let mut pairs: Vec<(String, String)> = Vec::new();
        for item in spec.split(',') {
            let (k, v) = item.split_once('=').unwrap_or((item, ""));
            match pairs.iter_mut().find(|(pk, _)| pk == k) {
                Some((_, pv)) => {
                    pv.push(',');
                    pv.push_str(v);
                }
                None => pairs.push((k.to_owned(), v.to_owned())),
            }
        }
        ImageArgs { pairs }
    }

    fn get(&self, key: &str) -> Option<&str> {
        self.pairs
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// The pairs in the iteration order of LLVM's `DenseMap`.
    fn in_map_order(&self) -> impl Iterator<Item = (&str, &str)> {
        let keys: Vec<&str> = self.pairs.iter().map(|(k, _)| k.as_str()).collect();
        dense_map_order(&keys)
            .into_iter()
            .map(|i| (self.pairs[i].0.as_str(), self.pairs[i].1.as_str()))
    }
}

/// LLVM's `sys::path::filename` (POSIX style).
fn file_name(path: &str) -> &str {
    if path.len() > 1 && path.ends_with('/') {
        return ".";
    }
    if path == "/" {
        return path;
    }
    path.rsplit('/').next().unwrap_or(path)
}

/// LLVM's `sys::path::stem`.
fn stem(path: &str) -> &str {
    let name = file_name(path);
    if name == "." || name == ".." {
        return name;
    }
    name.rfind('.').map_or(name, |i| &name[..i])
}

/// LLVM's `sys::path::extension` without the dot (`None` when there is none).
fn extension(path: &str) -> Option<&str> {
    let name = file_name(path);
    if name == "." || name == ".." {
        return None;
    }
    name.rfind('.').map(|i| &name[i + 1..])
}

fn package(
    ctx: &mut Ctx<'_>,
    output: &str,
    images: &[String],
    llvm: LlvmVersion,
) -> Result<(), Exit> {
    let mut buffer = Vec::new();
    for spec in images {
        let args = ImageArgs::parse(spec);
        let Some(files) = args.get("file") else {
            return Err(ctx.error("'file' is a required image arguments"));
        };
        for file in files.split(',') {
            let input = Input::open(file).map_err(|e| ctx.error(error_text(&e)))?;
            let data: &[u8] = &input.data;
            let image_kind = if FileKind::sniff(data).is_bitcode() {
                ImageKind::Bitcode
            } else {
                extension(file).map_or(ImageKind::None, |e| ImageKind::from_extension(e, llvm))
            };
            let mut image = Image::new(image_kind, OffloadKind::None, llvm, data)
                .expect("the none kind has a value in every release");
            for (key, value) in args.in_map_order() {
                match key {
                    "kind" => {
                        image.offload_kind =
                            OffloadKind::from_name(value, llvm).value(llvm).unwrap_or(0);
                    }
                    "file" => {}
                    _ => image.strings.push((key, value)),
                }
            }
            write_v1_to(&image, &mut buffer).map_err(|e| ctx.error(e))?;
        }
    }
    write_file(ctx, output, &buffer)
}

fn write_file(ctx: &mut Ctx<'_>, path: &str, data: &[u8]) -> Result<(), Exit> {
    let result = OutputFile::create(path).and_then(|mut f| {
        f.file().write_all(data)?;
        f.commit()
    });
    result.map_err(|e| ctx.error(error_text(&e)))
}

fn extract(
    ctx: &mut Ctx<'_>,
    input_path: &str,
    images: &[String],
    archive: bool,
    llvm: LlvmVersion,
) -> Result<(), Exit> {
    let input = Input::open(input_path)
        .map_err(|e| ctx.error(format_args!("'{input_path}': {}", error_text(&e))))?;
    let origin = if input_path == "-" {
        "<stdin>"
    } else {
        input_path
    };
    let found = scan(&input.data, origin).map_err(|e| ctx.error(e))?;
    let binaries: Vec<_> = found.iter().map(|f| (f, f.binary())).collect();
    let entries: Vec<_> = binaries
        .iter()
        .flat_map(|(f, b)| b.entries().map(move |e| (f.origin.as_str(), e)))
        .collect();
    for spec in images {
        let args = ImageArgs::parse(spec);
        let matched: Vec<_> = entries
            .iter()
            .filter(|(_, e)| {
                args.pairs.iter().all(|(k, v)| match k.as_str() {
                    "file" => true,
                    "kind" => {
                        let want = OffloadKind::from_name(v, llvm).value(llvm).unwrap_or(0);
                        e.offload_kind().raw() == want
                    }
                    key => e.get(key).unwrap_or_default() == &*spell::bytes(v),
                })
            })
            .collect();
        if matched.is_empty() {
            continue;
        }
        if archive {
            let Some(file) = args.get("file") else {
                return Err(ctx.error("Image must have a 'file' argument."));
            };
            let members: Vec<(&str, &[u8])> =
                matched.iter().map(|(o, e)| (*o, e.image())).collect();
            let bytes = write_archive(&members).map_err(|e| ctx.error(e))?;
            write_file(ctx, file, &bytes)?;
        } else if let Some(file) = args.get("file") {
            if matched.len() > 1 {
                ctx.warning(format_args!(
                    "Multiple inputs match to a single file, '{file}'"
                ));
            }
            let last = matched.last().expect("not empty").1;
            write_file(ctx, file, last.image())?;
        } else {
            for (i, (_, e)) in matched.iter().enumerate() {
                let ext = e.image_kind().kind().map_or("", |k| k.name(llvm));
                let name = format!(
                    "{}-{}-{}.{i}.{ext}",
                    stem(input_path),
                    spell::text(e.triple()),
                    spell::text(e.arch()),
                );
                write_file(ctx, &name, e.image())?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Ranks and help order (see [`crate::cl::assert_well_formed`]).
    #[test]
    fn table_is_well_formed() {
        crate::cl::assert_well_formed(FLAGS);
    }

    #[test]
    fn llvm_path_helpers() {
        assert_eq!(stem("sub/mi19.bin"), "mi19");
        assert_eq!(stem("a.b.c"), "a.b");
        assert_eq!(stem(".bin"), "");
        assert_eq!(stem("-"), "-");
        assert_eq!(stem("dir/"), ".");
        assert_eq!(extension("x.dir/file"), None);
        assert_eq!(extension("a.o"), Some("o"));
        assert_eq!(extension("a."), Some(""));
        assert_eq!(extension(".."), None);
    }

    #[test]
    fn image_arguments() {
        let a = ImageArgs::parse("file=a,arch=sm_70,arch=sm_80,k==v,noeq,=e");
        assert_eq!(a.get("arch"), Some("sm_70,sm_80"));
        assert_eq!(a.get("k"), Some("=v"));
        assert_eq!(a.get("noeq"), Some(""));
        assert_eq!(a.get(""), Some("e"));
        assert_eq!(a.get("file"), Some("a"));
    }

    fn run_str(args: &[&str]) -> (i32, String, String) {
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let code = run(&args, &mut out, &mut err);
        (
            code,
            String::from_utf8(out).unwrap(),
            String::from_utf8(err).unwrap(),
        )
    }

    #[test]
    fn messages() {
        let (code, out, _) = run_str(&["llvm-offload-binary"]);
        assert_eq!(code, 0);
        assert!(out.contains("USAGE: llvm-offload-binary [options] Extract from <file>."));
        let (code, _, err) = run_str(&["p", "-o", "x", "in"]);
        assert_eq!(code, 1);
        assert_eq!(
            err,
            "p: error: Packaging to an output file and extracting from an input file are mutually exclusive.\n"
        );
        let (code, _, err) = run_str(&["./p", "a", "b"]);
        assert_eq!(code, 1);
        assert_eq!(
            err,
            "p: Too many positional arguments specified!\nCan specify at most 1 positional arguments: See: ./p --help\n"
        );
        let (code, _, err) = run_str(&["p", "-o", "/nonexistent-dir/x", "--image=triple=t"]);
        assert_eq!(
            (code, err.as_str()),
            (1, "p: error: 'file' is a required image arguments\n")
        );
        let (_, _, err) = run_str(&["p", "--ver"]);
        assert_eq!(
            err,
            "p: Unknown command line argument '--ver'.  Try: 'p --help'\np: Did you mean '--help'?\n"
        );
    }
}

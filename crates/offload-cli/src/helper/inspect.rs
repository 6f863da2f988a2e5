//! `offload-build inspect`: every container and entry of each file found, as text, JSON or
//! one line of target IDs per file; and the walk over the paths with a report per file
//! that `check` shares.

use std::io::{self, Write};

use super::failure::{Failure, output_error, print_json};
use super::installs::{self, Found, Progress, Visit};
use offload_formats::id::spell;
use offload_formats::inspect::{self, Report};

/// Walks `paths` (see [`installs::walk`], with its progress line), inspects each file found
/// with `inspect` and hands the report to `each`, with whether the file was named on the
/// command line. A file that cannot be read or inspected is reported on `err` and the walk
/// goes on; the status returned is then 1, else 0. An error of `each` ends the walk.
pub(crate) fn walk_reports<E: std::fmt::Display>(
    paths: &[String],
    err: &mut dyn Write,
    inspect: impl Fn(&Found<'_>) -> Result<Report, E>,
    each: &mut dyn FnMut(Report, bool) -> Result<(), Failure>,
) -> Result<i32, Failure> {
    let progress = Progress::new();
    let mut status = 0;
    installs::walk(paths, &progress, &mut |v| -> Result<(), Failure> {
        let report = match v {
            Visit::Error(m) => Err(m),
            Visit::File(found) => inspect(&found)
                .map(|r| (r, found.explicit))
                .map_err(|e| e.to_string()),
        };
        match report {
            Ok((r, explicit)) => each(r, explicit),
            Err(m) => {
                let _ = writeln!(err, "offload-build: error: {m}");
                status = 1;
                Ok(())
            }
        }
    })?;
    Ok(status)
}

pub(crate) fn inspect_files(
    files: &[String],
    json: bool,
    archs_only: bool,
    verify: bool,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<i32, Failure> {
    let options = if verify {
        inspect::Options::verify()
    } else {
        inspect::Options::default()
    };
    let mut reports = Vec::new();
    let inspect = |found: &Found<'_>| crate::verify::inspect(found.data, found.path, &options);
    let status = walk_reports(files, err, inspect, &mut |r, explicit| {
        // Files found in a directory or a zip file are shown only with device code.
        if r.containers.is_empty() && !explicit {
            return Ok(());
        }
        let archs = installs::archs(&r);
        if archs_only && archs.is_empty() {
            return Ok(());
        }
        if json {
            let mut v = if archs_only {
                serde_json::json!({ "path": r.path })
            } else {
                serde_json::to_value(&r).map_err(|e| output_error(io::Error::other(e)))?
            };
            v["archs"] = serde_json::json!(archs);
            reports.push(v);
        } else if archs_only {
            // File names as the bytes given (JSON keeps text: U+10FFxx there).
            writeln!(
                spell::BytesWriter(&mut *out),
                "{}: {}",
                r.path,
                archs.join(" ")
            )
            .map_err(output_error)?;
        } else {
            // One write per file, not per line: a file may hold 100,000 containers.
            let mut text = Vec::new();
            print_report(&r, &mut text).map_err(output_error)?;
            spell::BytesWriter(&mut *out)
                .write_all(&text)
                .map_err(output_error)?;
        }
        Ok(())
    })?;
    if json {
        print_json(out, &reports)?;
    }
    Ok(status)
}

fn print_report(r: &Report, out: &mut dyn Write) -> io::Result<()> {
    let entries = r.entries().count();
    writeln!(
        out,
        "{}: {} ({} bytes), {} container(s), {} entr{}",
        r.path,
        r.format,
        r.size,
        r.containers.len(),
        entries,
        if entries == 1 { "y" } else { "ies" }
    )?;
    for c in &r.containers {
        let mut place = String::new();
        if let Some(m) = &c.member {
            place.push_str(&format!(" member={m}"));
        }
        if let Some(s) = &c.section {
            place.push_str(&format!(" section={s}"));
        }
        write!(
            out,
            "  container {} {}{place} offset={} size={}",
            c.index, c.kind, c.offset, c.size
        )?;
        if let Some(z) = &c.compression {
            write!(
                out,
                " {} v{} {} -> {} bytes (ratio {:.2})",
                z.method, z.version, z.compressed_size, z.uncompressed_size, z.ratio
            )?;
            match z.hash_matches {
                Some(false) => out.write_all(b" (stored MD5 does not match the contents)")?,
                Some(true) => out.write_all(b" (MD5 verified)")?,
                None => {}
            }
        }
        writeln!(out, " {}", c.uri)?;
        for e in &c.entries {
            let offset = e.offset.map_or_else(|| "-".to_owned(), |o| o.to_string());
            write!(
                out,
                "    entry {} {} offset={offset} size={}",
                e.index, e.id, e.size
            )?;
            if let Some(k) = e.image_kind {
                write!(out, " image={k}")?;
            }
            match (&e.uri, e.compression) {
                (Some(u), _) => writeln!(out, " {u}")?,
                (None, Some(method)) => writeln!(
                    out,
                    " ({method}-compressed by NVIDIA's tools; extract decompresses it)"
                )?,
                (None, None) => writeln!(out, " (compressed)")?,
            }
        }
    }
    Ok(())
}

//! LLVM 22's `-verbose` lines about a compressed bundle, after decompressing one (`-list`,
//! `-unbundle`) and after compressing one (`-compress`).

use crate::Ctx;
use crate::Exit;
use offload_formats::bundle::compressed::{self, CompressOptions, CompressedBundle, Decompressed};

/// `1234567` → `1,234,567`, as LLVM's verbose output prints sizes.
fn with_commas(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i != 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn mb_per_s(bytes: u64, elapsed: std::time::Duration) -> f64 {
    let secs = elapsed.as_secs_f64();
    if secs > 0.0 {
        bytes as f64 / (1024.0 * 1024.0) / secs
    } else {
        0.0
    }
}

/// Warnings about a decompressed bundle, and LLVM 22's `-verbose` lines.
pub(crate) fn report_decompressed(
    ctx: &mut Ctx<'_>,
    path: &str,
    bundle: &CompressedBundle<'_>,
    d: &Decompressed,
    verbose: bool,
) {
    for w in &d.warnings {
        ctx.warning(format_args!("'{path}': {w}"));
    }
    if !verbose {
        return;
    }
    let h = bundle.header();
    let compressed = bundle.payload().len() as u64;
    let size = d.data.len() as u64;
    let mut text = format!("Compressed bundle format version: {}\n", h.version.raw());
    if let Some(total) = h.total_size {
        text += &format!(
            "Total file size (from header): {} bytes\n",
            with_commas(total)
        );
    }
    text += &format!(
        "Decompression method: {}\nSize before decompression: {} bytes\nSize after decompression: {} bytes\n",
        h.method.name(),
        with_commas(compressed),
        with_commas(size)
    );
    let rate = size as f64 / compressed.max(1) as f64;
    text += &format!(
        "Compression rate: {rate:.2}\nCompression ratio: {:.2}%\nDecompression speed: {:.2} MB/s\n",
        100.0 * compressed as f64 / size.max(1) as f64,
        mb_per_s(size, d.elapsed)
    );
    let computed = d.hash.unwrap_or_default();
    text += &format!(
        "Stored hash: {:#x}\nRecalculated hash: {:#x}\nHashes match: {}\n",
        h.hash,
        computed,
        if h.hash == computed { "Yes" } else { "No" }
    );
    let _ = ctx.err.write_all(text.as_bytes());
}

/// LLVM 22's `-verbose` lines after compressing a bundle.
pub(crate) fn report_compressed(
    ctx: &mut Ctx<'_>,
    ccob: &[u8],
    options: &CompressOptions,
    elapsed: std::time::Duration,
) -> Result<(), Exit> {
    let header = compressed::Header::parse(ccob).map_err(|e| ctx.error(e))?;
    let before = header.uncompressed_size;
    let after = (ccob.len() - header.len()) as u64;
    let text = format!(
        "Compressed bundle format version: {}\n\
         Total file size (including headers): {} bytes\n\
         Compression method used: {}\n\
         Compression level: {}\n\
         Binary size before compression: {} bytes\n\
         Binary size after compression: {} bytes\n\
         Compression rate: {:.2}\n\
         Compression ratio: {:.2}%\n\
         Compression speed: {:.2} MB/s\n\
         Truncated MD5 hash: {:#x}\n",
        header.version.raw(),
        with_commas(ccob.len() as u64),
        header.method.name(),
        options.effective_level(),
        with_commas(before),
        with_commas(after),
        before as f64 / after.max(1) as f64,
        100.0 * after as f64 / before.max(1) as f64,
        mb_per_s(before, elapsed),
        header.hash
    );
    let _ = ctx.err.write_all(text.as_bytes());
    Ok(())
}

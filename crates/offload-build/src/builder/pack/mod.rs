//! The pack stage: the jobs' images and the [`Build::image`](crate::builder::Build::image)s into the
//! container's bytes: a `.hipfb` bundle ([`offload_formats::bundle::hipfb`], optionally
//! compressed), offload binaries or an NVIDIA fat binary ([`offload_formats::nvfatbin`]); the
//! kernel names found in the device code; and where each image lies in the container (the
//! generated `IMAGES`).
//!
//! Reads only the [`Plan`] and what the jobs built; the result goes to [`crate::builder::emit`].

pub(crate) mod kernels;

use std::collections::{BTreeMap, BTreeSet};

use offload_formats::bundle::compressed::{self, CompressOptions, Version};
use offload_formats::package::{ImageKind, LlvmVersion, OffloadKind};

use crate::builder::arch::Arch;
use crate::builder::built::{Built, Piece};
use crate::builder::env::Env;
use crate::builder::error::Error;
use crate::builder::options::Container;
use crate::builder::options::Language;
use crate::builder::pack::kernels::{amdgpu_kernels, ptx_kernels};
use crate::builder::plan::Plan;

/// The packed container.
#[derive(Debug)]
pub(crate) struct Packed {
    /// The container's bytes.
    pub bytes: Vec<u8>,
    /// Whether they are a compressed bundle.
    pub compressed: bool,
    /// The architectures in the container, sorted.
    pub archs: Vec<String>,
    /// Kernel symbol names found in the device code, sorted.
    pub kernels: Vec<String>,
    /// Where each image lies in [`Packed::bytes`], in container order; empty for a
    /// compressed bundle.
    pub images: Vec<ImageRef>,
}

/// One image stored as is in the container: the generated `IMAGES` slices the container
/// there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ImageRef {
    /// The architecture as the build names it (`sm_90`, `compute_90`, `gfx90a:xnack+`).
    pub arch: String,
    /// `cubin`, `ptx`, `code-object`, `bitcode`, `fatbin` or `other`.
    pub kind: &'static str,
    /// Offset in the container.
    pub offset: usize,
    /// Size in bytes.
    pub len: usize,
}

/// The generated module's word for an image kind.
pub(crate) fn kind_label(kind: ImageKind) -> &'static str {
    match kind {
        ImageKind::Cubin => "cubin",
        ImageKind::Ptx => "ptx",
        ImageKind::Object => "code-object",
        ImageKind::Bitcode => "bitcode",
        ImageKind::Fatbinary => "fatbin",
        _ => "other",
    }
}

/// Offset of `part` (a slice of `whole`) in `whole`.
fn offset_in(whole: &[u8], part: &[u8]) -> usize {
    part.as_ptr() as usize - whole.as_ptr() as usize
}

/// Adds the plan's images to what the jobs built, finds the kernels and packs the container.
pub(crate) fn run(plan: &Plan, built: Built, env: &Env<'_>) -> Result<Packed, Error> {
    let d = env.directives();
    let mut per_arch = built.per_arch;
    for image in &plan.images {
        let data =
            std::fs::read(&image.path).map_err(|e| Error::io("reading image", &image.path, e))?;
        d.push_path("rerun-if-changed", &image.given)?;
        per_arch.entry(image.arch.clone()).or_default().push(Piece {
            kind: image.kind,
            data,
        });
    }
    let mut kernels = BTreeSet::new();
    for pieces in per_arch.values() {
        for p in pieces {
            match p.kind {
                ImageKind::Ptx => kernels.extend(ptx_kernels(&String::from_utf8_lossy(&p.data))),
                ImageKind::Object => kernels.extend(amdgpu_kernels(&p.data)),
                _ => {}
            }
        }
    }
    let mut archs: Vec<String> = per_arch.keys().map(|a| a.to_string()).collect();
    let kernels = kernels.into_iter().collect();
    if plan.host_code {
        // nvcc's host-code jobs leave no images here: the architectures are the plan's.
        let planned = plan
            .compiles
            .iter()
            .flat_map(|(_, a)| a.iter().map(|a| a.to_string()));
        archs = planned.collect::<BTreeSet<String>>().into_iter().collect();
        // Each object embeds its own source's bundle (the host stage): no container of the
        // whole build, whose sources may each hold the same architecture.
        return Ok(Packed {
            bytes: Vec::new(),
            compressed: false,
            archs,
            kernels,
            images: Vec::new(),
        });
    }
    let major = plan.toolchain.as_ref().map_or(0, |t| t.major);
    let name = plan.outputs.as_ref().map_or("device", |o| o.name.as_str());
    let (bytes, compressed, images) = pack(
        &per_arch,
        plan.lang,
        plan.container,
        plan.compress,
        plan.compress_auto_version,
        major,
        name,
    )?;
    Ok(Packed {
        bytes,
        compressed,
        archs,
        kernels,
        images,
    })
}

/// Packs the images into the container's bytes; returns whether they are compressed, and
/// where each image lies in them. `name` (the build's) names the entries of an NVIDIA fat
/// binary.
pub(crate) fn pack(
    per_arch: &BTreeMap<Arch, Vec<Piece>>,
    lang: Language,
    container: Container,
    compress: Option<CompressOptions>,
    auto_version: bool,
    llvm_major: u32,
    name: &str,
) -> Result<(Vec<u8>, bool, Vec<ImageRef>), Error> {
    let llvm = if llvm_major == 0 {
        LlvmVersion::NEWEST_RELEASE
    } else {
        LlvmVersion::new(llvm_major)
    };
    match container {
        Container::Bundle => bundle(per_arch, compress, auto_version, llvm),
        Container::OffloadBinary => offload_binaries(per_arch, lang, llvm),
        Container::CudaFatbin => cuda_fatbin(per_arch, name),
    }
}

/// A bundle of the code objects, compressed when asked (the format version following
/// `llvm` with `auto_version`), with where each image lies (none when compressed).
fn bundle(
    per_arch: &BTreeMap<Arch, Vec<Piece>>,
    compress: Option<CompressOptions>,
    auto_version: bool,
    llvm: LlvmVersion,
) -> Result<(Vec<u8>, bool, Vec<ImageRef>), Error> {
    let arch_ids: Vec<(String, &[u8])> = per_arch
        .iter()
        .flat_map(|(a, pieces)| pieces.iter().map(move |p| (a.to_string(), &p.data[..])))
        .collect();
    let bundle =
        offload_formats::bundle::hipfb::write(arch_ids.iter().map(|(a, d)| (a.as_str(), *d)))
            .map_err(|e| Error::Pack(e.into()))?;
    match compress {
        None => {
            let parsed = offload_formats::bundle::BinaryBundle::parse(&bundle)
                .map_err(|e| Error::Pack(e.into()))?
                .ok_or_else(|| Error::Pack("the bundle written does not parse".into()))?;
            let mut images = Vec::new();
            for e in parsed.entries() {
                let id = e.id_str();
                if let Some((_, arch)) = id.split_once("--") {
                    if !arch.is_empty() && !id.starts_with("host-") {
                        images.push(ImageRef {
                            arch: arch.to_string(),
                            kind: kind_label(ImageKind::Object),
                            offset: offset_in(&bundle, e.data),
                            len: e.data.len(),
                        });
                    }
                }
            }
            Ok((bundle, false, images))
        }
        Some(mut o) => {
            if auto_version {
                o.version = if llvm.major() >= 22 {
                    Version::V3
                } else {
                    Version::V2
                };
            }
            let c = compressed::compress(&bundle, &o).map_err(|e| Error::Pack(e.into()))?;
            Ok((c, true, Vec::new()))
        }
    }
}

/// One offload binary per image, one after the other, with where each image lies.
fn offload_binaries(
    per_arch: &BTreeMap<Arch, Vec<Piece>>,
    lang: Language,
    llvm: LlvmVersion,
) -> Result<(Vec<u8>, bool, Vec<ImageRef>), Error> {
    let (kind, triple) = match lang {
        Language::Hip => (OffloadKind::Hip, "amdgcn-amd-amdhsa"),
        Language::Cuda => (OffloadKind::Cuda, "nvptx64-nvidia-cuda"),
    };
    let mut out = Vec::new();
    let mut images = Vec::new();
    for (a, pieces) in per_arch {
        let arch_name = if a.is_nvidia() {
            a.offload_arch()
        } else {
            a.to_string()
        };
        for p in pieces {
            let keys = [("triple", triple), ("arch", arch_name.as_str())];
            let order = offload_formats::package::dense_map_order(&keys.map(|k| k.0));
            let mut image = offload_formats::package::Image::new(p.kind, kind, llvm, &p.data)
                .map_err(|e| Error::Pack(e.into()))?;
            for i in order {
                image = image.string(keys[i].0, keys[i].1);
            }
            let bin =
                offload_formats::package::write_v1(&image).map_err(|e| Error::Pack(e.into()))?;
            let parsed = offload_formats::package::OffloadBinary::parse(&bin)
                .map_err(|e| Error::Pack(e.into()))?;
            if let Some(entry) = parsed.entry(0) {
                images.push(ImageRef {
                    arch: a.to_string(),
                    kind: kind_label(p.kind),
                    offset: out.len() + offset_in(&bin, entry.image()),
                    len: entry.image().len(),
                });
            }
            out.extend_from_slice(&bin);
        }
    }
    Ok((out, false, images))
}

/// An NVIDIA fat binary: per architecture, its cubins then its PTX, named after the build
/// (`<name>`, then `<name>_1`, … for further images of one kind and architecture).
fn cuda_fatbin(
    per_arch: &BTreeMap<Arch, Vec<Piece>>,
    name: &str,
) -> Result<(Vec<u8>, bool, Vec<ImageRef>), Error> {
    use offload_formats::nvfatbin::{Fatbin, FatbinWriter};
    let mut w = FatbinWriter::new();
    let mut order = Vec::new();
    for (a, pieces) in per_arch {
        let mut seen: BTreeMap<&'static str, usize> = BTreeMap::new();
        // Machine code first, as nvcc orders a fat binary: the driver takes the first match.
        let mut sorted: Vec<&Piece> = pieces.iter().collect();
        sorted.sort_by_key(|p| p.kind != ImageKind::Cubin);
        for p in sorted {
            let label = kind_label(p.kind);
            let n = seen.entry(label).or_default();
            let id = if *n == 0 {
                name.to_string()
            } else {
                format!("{name}_{n}")
            };
            *n += 1;
            let added = match p.kind {
                ImageKind::Cubin => w.add_cubin(a.as_str(), &p.data, Some(&id)),
                ImageKind::Ptx => w.add_ptx(a.as_str(), &p.data, Some(&id), None),
                other => {
                    return Err(Error::Pack(
                        format!(
                            "an NVIDIA fat binary holds cubins and PTX, not a {} image ({a})",
                            kind_label(other)
                        )
                        .into(),
                    ));
                }
            };
            added.map_err(|e| Error::Pack(format!("{a} {label}: {e}").into()))?;
            order.push((a.to_string(), label));
        }
    }
    let bytes = w.to_bytes();
    let parsed = Fatbin::parse(&bytes).map_err(|e| Error::Pack(e.into()))?;
    let images = parsed
        .entries()
        .iter()
        .zip(order)
        .map(|(e, (arch, kind))| {
            let image = e.image().unwrap_or(e.payload());
            ImageRef {
                arch,
                kind,
                offset: offset_in(&bytes, image),
                len: image.len(),
            }
        })
        .collect();
    Ok((bytes, false, images))
}

#[cfg(test)]
mod fatbin_tests {
    use super::*;

    fn piece(kind: ImageKind, data: &[u8]) -> Piece {
        Piece {
            kind,
            data: data.to_vec(),
        }
    }

    #[test]
    fn cuda_fatbins_hold_every_cubin_and_ptx() {
        let mut cubin = b"\x7fELF\x02\x01\x013\x07".to_vec();
        cubin.resize(64, 0);
        let ptx = b".version 7.8\n.target sm_90\n";
        let mut per_arch = BTreeMap::new();
        per_arch.insert(
            Arch::new("sm_90").unwrap(),
            vec![piece(ImageKind::Ptx, ptx), piece(ImageKind::Cubin, &cubin)],
        );
        per_arch.insert(
            Arch::new("90-virtual").unwrap(),
            vec![piece(ImageKind::Ptx, ptx)],
        );
        let (bytes, compressed, images) = pack(
            &per_arch,
            Language::Cuda,
            Container::CudaFatbin,
            None,
            true,
            19,
            "k",
        )
        .unwrap();
        assert!(!compressed);
        let f = offload_formats::nvfatbin::Fatbin::parse(&bytes).unwrap();
        let got: Vec<_> = f
            .entries()
            .iter()
            .map(|e| (e.arch_name(), e.identifier().unwrap().to_vec()))
            .collect();
        assert_eq!(
            got,
            [
                ("compute_90".to_string(), b"k".to_vec()),
                ("sm_90".to_string(), b"k".to_vec()),
                ("compute_90".to_string(), b"k".to_vec()),
            ]
        );
        let table: Vec<_> = images
            .iter()
            .map(|i| (i.arch.as_str(), i.kind, &bytes[i.offset..i.offset + i.len]))
            .collect();
        assert_eq!(
            table,
            [
                ("compute_90", "ptx", &ptx[..]),
                ("sm_90", "cubin", &cubin[..]),
                ("sm_90", "ptx", &ptx[..]),
            ]
        );
        // HIP code objects have no place in it.
        let mut hip = BTreeMap::new();
        hip.insert(
            Arch::new("sm_80").unwrap(),
            vec![piece(ImageKind::Object, b"x")],
        );
        let e = pack(
            &hip,
            Language::Cuda,
            Container::CudaFatbin,
            None,
            true,
            19,
            "k",
        )
        .unwrap_err();
        assert!(e.to_string().contains("not a code-object image"), "{e}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bundles_pack_like_clang() {
        let mut per_arch = BTreeMap::new();
        for a in ["gfx90a:xnack+", "gfx1100"] {
            per_arch.insert(
                Arch::new(a).unwrap(),
                vec![Piece {
                    kind: ImageKind::Object,
                    data: a.as_bytes().to_vec(),
                }],
            );
        }
        let (bytes, compressed, images) = pack(
            &per_arch,
            Language::Hip,
            Container::Bundle,
            None,
            true,
            19,
            "k",
        )
        .unwrap();
        assert!(!compressed);
        let b = offload_formats::bundle::BinaryBundle::parse(&bytes)
            .unwrap()
            .unwrap();
        let ids: Vec<String> = b
            .entries()
            .iter()
            .map(|e| e.id_str().into_owned())
            .collect();
        assert_eq!(
            ids,
            [
                "host-x86_64-unknown-linux--",
                "hipv4-amdgcn-amd-amdhsa--gfx1100",
                "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+"
            ]
        );
        // Every code object is found where IMAGES will slice it.
        let table: Vec<_> = images
            .iter()
            .map(|i| (i.arch.as_str(), i.kind, &bytes[i.offset..i.offset + i.len]))
            .collect();
        assert_eq!(
            table,
            [
                ("gfx1100", "code-object", &b"gfx1100"[..]),
                ("gfx90a:xnack+", "code-object", &b"gfx90a:xnack+"[..])
            ]
        );
        let (c, compressed, images) = pack(
            &per_arch,
            Language::Hip,
            Container::Bundle,
            Some(CompressOptions::default()),
            true,
            19,
            "k",
        )
        .unwrap();
        assert!(images.is_empty());
        assert!(compressed && c.starts_with(b"CCOB\x02\x00"));
    }
}

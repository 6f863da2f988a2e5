//! The pack stage: the jobs' images and the [`Build::image`](super::Build::image)s into the
//! container's bytes: a `.hipfb` bundle ([`offload_formats::bundle::hipfb`], optionally
//! compressed) or offload binaries; and the kernel names found in the device code.
//!
//! Reads only the [`Plan`] and what the jobs built; the result goes to [`super::emit`].

use std::collections::{BTreeMap, BTreeSet};

use offload_formats::bundle::compressed::{self, CompressOptions, Version};
use offload_formats::package::{ImageKind, LlvmVersion, OffloadKind};

use super::arch::Arch;
use super::codegen::{amdgpu_kernels, ptx_kernels};
use super::compile::Built;
use super::env::Env;
use super::error::Error;
use super::plan::Plan;
use super::{Container, Language};

/// One image of one architecture.
#[derive(Debug)]
pub(crate) struct Piece {
    /// What it holds.
    pub kind: ImageKind,
    /// Its bytes.
    pub data: Vec<u8>,
}

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
    let major = plan.toolchain.as_ref().map_or(0, |t| t.major);
    let (bytes, compressed) = pack(
        &per_arch,
        plan.lang,
        plan.container,
        plan.compress,
        plan.compress_auto_version,
        major,
    )?;
    Ok(Packed {
        bytes,
        compressed,
        archs: per_arch.keys().map(|a| a.to_string()).collect(),
        kernels: kernels.into_iter().collect(),
    })
}

/// Packs the images into the container's bytes; returns whether they are compressed.
pub(crate) fn pack(
    per_arch: &BTreeMap<Arch, Vec<Piece>>,
    lang: Language,
    container: Container,
    compress: Option<CompressOptions>,
    auto_version: bool,
    llvm_major: u32,
) -> Result<(Vec<u8>, bool), Error> {
    let llvm = if llvm_major == 0 {
        LlvmVersion::NEWEST_RELEASE
    } else {
        LlvmVersion::new(llvm_major)
    };
    match container {
        Container::Bundle => {
            let arch_ids: Vec<(String, &[u8])> = per_arch
                .iter()
                .flat_map(|(a, pieces)| pieces.iter().map(move |p| (a.to_string(), &p.data[..])))
                .collect();
            let bundle = offload_formats::bundle::hipfb::write(
                arch_ids.iter().map(|(a, d)| (a.as_str(), *d)),
            )
            .map_err(|e| Error::Pack(e.into()))?;
            match compress {
                None => Ok((bundle, false)),
                Some(mut o) => {
                    if auto_version {
                        o.version = if llvm.major() >= 22 {
                            Version::V3
                        } else {
                            Version::V2
                        };
                    }
                    let c = compressed::compress(&bundle, &o).map_err(|e| Error::Pack(e.into()))?;
                    Ok((c, true))
                }
            }
        }
        Container::OffloadBinary => {
            let (kind, triple) = match lang {
                Language::Hip => (OffloadKind::Hip, "amdgcn-amd-amdhsa"),
                Language::Cuda => (OffloadKind::Cuda, "nvptx64-nvidia-cuda"),
            };
            let mut out = Vec::new();
            for (a, pieces) in per_arch {
                let arch_name = if a.is_nvidia() {
                    a.offload_arch()
                } else {
                    a.to_string()
                };
                for p in pieces {
                    let keys = [("triple", triple), ("arch", arch_name.as_str())];
                    let order =
                        offload_formats::package::order::dense_map_order(&keys.map(|k| k.0));
                    let mut image =
                        offload_formats::package::Image::new(p.kind, kind, llvm, &p.data)
                            .map_err(|e| Error::Pack(e.into()))?;
                    for i in order {
                        image = image.string(keys[i].0, keys[i].1);
                    }
                    let bin = offload_formats::package::write_v1(&image)
                        .map_err(|e| Error::Pack(e.into()))?;
                    out.extend_from_slice(&bin);
                }
            }
            Ok((out, false))
        }
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
        let (bytes, compressed) =
            pack(&per_arch, Language::Hip, Container::Bundle, None, true, 19).unwrap();
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
        let (c, compressed) = pack(
            &per_arch,
            Language::Hip,
            Container::Bundle,
            Some(CompressOptions::default()),
            true,
            19,
        )
        .unwrap();
        assert!(compressed && c.starts_with(b"CCOB\x02\x00"));
    }
}

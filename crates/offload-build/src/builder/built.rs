//! What the jobs stage produced: the images of each architecture, and the counts a build
//! reports.

use std::collections::BTreeMap;
use std::path::PathBuf;

use offload_formats::package::ImageKind;

use crate::builder::arch::{Arch, Target};
use crate::builder::diag::Diagnostic;
use crate::builder::job_out::JobOut;
use crate::builder::job_out::Linked;
pub(crate) use crate::builder::piece::Piece;

/// What the jobs produced.
#[derive(Debug, Default)]
pub(crate) struct Built {
    /// The images of each architecture (code objects; PTX and cubins for CUDA).
    pub per_arch: BTreeMap<Arch, Vec<Piece>>,
    /// Jobs (compiles and device links) that ran.
    pub jobs_run: usize,
    /// Jobs whose cached result was used.
    pub jobs_cached: usize,
    /// Precompiled preambles made.
    pub pch_made: usize,
    /// Compiles that used a precompiled preamble.
    pub pch_used: usize,
    /// Precompiled preambles started in the background, for the next build.
    pub pch_background: usize,
    /// What the compiler printed for the successful jobs (run or cached), deduplicated
    /// across architectures; empty when warnings are off ([`crate::builder::Build::warnings`]).
    pub diagnostics: Vec<Diagnostic>,
    /// The images of each source by architecture, kept as well in a host-code build
    /// ([`Built::keep_per_source`]): each source's bundle is its own.
    pub per_source: BTreeMap<PathBuf, BTreeMap<Arch, Vec<Piece>>>,
    /// Whether [`Built::per_source`] is filled.
    pub keep_per_source: bool,
    /// The object of each host compile ([`Target::Host`]), with its source, in job order.
    pub host_objects: Vec<(PathBuf, PathBuf)>,
    /// nvcc's device link of relocatable host-code objects (`nvcc -dlink`): a host object.
    pub device_linked: Option<PathBuf>,
}

impl Built {
    /// Counts the compile jobs and takes the images of those not device-linked later.
    pub(super) fn add_compiles(&mut self, outs: &mut [JobOut]) {
        for o in outs {
            self.count(o.ran);
            self.pch_used += usize::from(o.used_pch);
            if o.target == Target::Host {
                self.host_objects.extend(
                    o.outputs
                        .first()
                        .map(|(_, p)| (o.source.clone(), p.clone())),
                );
            } else if !o.rdc {
                self.add_images(o);
            }
        }
    }

    /// Counts the device links and takes their code objects (nvcc's: its host object).
    pub(super) fn add_links(&mut self, linked: Vec<Linked>) {
        for l in linked {
            self.count(l.ran);
            if l.target == Target::DeviceLink {
                self.device_linked = Some(l.path);
                continue;
            }
            if let Target::Device(arch) = l.target {
                self.per_arch.entry(arch).or_default().push(Piece {
                    kind: ImageKind::Object,
                    data: l.data,
                });
            }
        }
    }

    pub(super) fn count(&mut self, ran: bool) {
        if ran {
            self.jobs_run += 1;
        } else {
            self.jobs_cached += 1;
        }
    }

    /// The images of a job that is not device-linked.
    pub(super) fn add_images(&mut self, o: &mut JobOut) {
        let Target::Device(arch) = &o.target else {
            return;
        };
        for ((kind, _), data) in o.outputs.iter().zip(std::mem::take(&mut o.images)) {
            if !Piece::packed(*kind, arch) {
                continue;
            }
            let piece = Piece { kind: *kind, data };
            if self.keep_per_source {
                self.per_source
                    .entry(o.source.clone())
                    .or_default()
                    .entry(arch.clone())
                    .or_default()
                    .push(piece.clone());
            }
            self.per_arch.entry(arch.clone()).or_default().push(piece);
        }
    }
}

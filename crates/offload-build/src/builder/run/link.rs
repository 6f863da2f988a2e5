//! Device links (`-fgpu-rdc`): one per architecture compiled from several sources, cached by
//! the command and its inputs' content; for nvcc's relocatable host-code objects, one
//! `nvcc -dlink` for all architectures ([`Target::DeviceLink`]), whose output is a host object.

use std::path::Path;
use std::time::Instant;

use offload_formats::package::ImageKind;

use crate::builder::arch::Target;
use crate::builder::command::{Domain, KeyBuilder};
use crate::builder::error::Error;
use crate::builder::fs;
use crate::builder::job::LinkJob;
use crate::builder::job_out::Linked;
use crate::builder::memory::Meter;
use crate::builder::run::check::{check_output, target_mismatch};
use crate::builder::run::context::Runner;

impl Runner<'_> {
    /// The cached device link `co`, when it is a code object for `arch` (a damaged one is
    /// linked again, with a warning).
    fn cached_link(&self, co: &Path, target: &Target) -> Option<Vec<u8>> {
        let data = std::fs::read(co).ok()?;
        let not_an_object = || {
            check_output(ImageKind::Object, target, &data)
                .err()
                .map(|(expected, found)| format!("{found}, not {expected}"))
        };
        match target_mismatch(ImageKind::Object, target, &data).or_else(not_an_object) {
            None => Some(data),
            Some(why) => {
                self.exec.warn(co, &why);
                None
            }
        }
    }

    /// Runs a device link, or takes its cached object: the key covers the command and its
    /// inputs' content.
    pub(super) fn link(&self, job: &LinkJob, meter: &dyn Meter) -> Result<Linked, Error> {
        let start = Instant::now();
        let target = job.target.clone();
        for o in &job.command.inputs {
            self.hashes.forget(o);
            if self.hashes.file(o).is_none() {
                return Err(Error::io("reading", o, std::io::ErrorKind::NotFound.into()));
            }
        }
        let mut k = KeyBuilder::new(Domain::Link);
        k.u128(self.tc.identity);
        job.command.add_to_key(&mut k, |p| self.hashes.file(p));
        // A code object, or for nvcc's device link a host object.
        let ext = if target.device().is_some() { "co" } else { "o" };
        let co = self.exec.cache_dir.join(format!(
            "linked-{}-{:016x}.{ext}",
            target.file_tag(),
            k.finish64()
        ));
        // What the link printed is kept beside it, to replay on a cache hit.
        let printed = co.with_extension(format!("{ext}.stderr"));
        if let Some(data) = self.cached_link(&co, &target) {
            let stderr = std::fs::read_to_string(&printed)
                .map(|t| t.lines().map(str::to_string).collect())
                .unwrap_or_default();
            return Ok(Linked {
                target,
                data,
                path: co,
                ran: false,
                seconds: 0.0,
                stderr,
            });
        }
        // A name of its own: compiles that share the cache link the same object at once, and
        // the first rename must not take another's half-written file (removed if the link
        // fails).
        let tmp = tempfile::Builder::new()
            .prefix(&format!(".linked-{}-", target.file_tag()))
            .suffix(&format!(".{ext}.tmp"))
            .tempfile_in(self.exec.cache_dir)
            .map_err(|e| Error::io("creating a temporary file in", self.exec.cache_dir, e))?
            .into_temp_path();
        let placeholder = &job.command.outputs[0];
        let cmd = job
            .command
            .map_paths(|p| (p == placeholder).then(|| tmp.to_path_buf()));
        let stderr = self.exec.exec(&cmd, &target, None, None, meter)?;
        let data = std::fs::read(&tmp).map_err(|e| Error::io("reading", &tmp, e))?;
        check_output(ImageKind::Object, &target, &data).map_err(|(expected, found)| {
            Error::BadDeviceCode {
                arch: target.to_string(),
                source: None,
                path: co.clone(),
                expected,
                found,
            }
        })?;
        if stderr.is_empty() {
            let _ = std::fs::remove_file(&printed);
        } else {
            fs::write_atomic(&printed, (stderr.join("\n") + "\n").as_bytes())?;
        }
        tmp.persist(&co)
            .map_err(|e| Error::io("renaming", e.path.to_path_buf(), e.error))?;
        Ok(Linked {
            target,
            data,
            path: co,
            ran: true,
            seconds: start.elapsed().as_secs_f64(),
            stderr,
        })
    }
}

//! The commands a build would run, for a caller to run them itself: the device compile
//! ([`Build::try_get_compiler`](crate::Build::try_get_compiler)) and a source's precompiled
//! preamble ([`Build::try_get_preamble`](crate::Build::try_get_preamble)), spelled by the
//! plan's own options for the first resolved architecture.

use std::path::Path;

use crate::builder::arch::Arch;
use crate::builder::command::Command;
use crate::builder::config::Build;
use crate::builder::env::{Directives, Env};
use crate::builder::error::Error;
use crate::builder::job::CompileOptions;
use crate::builder::options::CompilerKind;
use crate::builder::pch::{PchJob, compile_with_pch, pch_job};
use crate::builder::plan::launcher::launcher;
use crate::builder::plan::{Plan, Purpose, compile_options};
use crate::builder::toolchain::Toolchain;
use crate::builder::toolchain::clang;
use crate::builder::toolchain::nvcc;

/// The toolchain, the first architecture and the compile options of a resolve plan, as the
/// build's compiles have them (the launcher included).
fn first_options<'p>(
    build: &Build,
    env: &Env<'_>,
    plan: &'p Plan,
) -> Result<(&'p Toolchain, &'p Arch, CompileOptions), Error> {
    let (tc, arch) = plan.first_compile()?;
    let mut o = compile_options(
        build,
        env,
        tc,
        plan.lang,
        &plan.cwd,
        Some(arch),
        &plan.cache_dir,
    );
    (o.launcher, o.launcher_kind) = launcher(env);
    Ok((tc, arch, o))
}

/// The device compile's command for the first resolved architecture, up to the user's flags
/// ([`Build::try_get_compiler`]).
pub(crate) fn compiler_command(
    build: &Build,
    env: &Env<'_>,
    plan: &Plan,
) -> Result<Command, Error> {
    let (tc, arch, o) = first_options(build, env, plan)?;
    let mut c = Command::new(&tc.clang);
    c.launcher = o.launcher.clone();
    c.args = match tc.kind {
        CompilerKind::Nvcc => nvcc::device_args(&o, arch),
        _ => clang::device_args(&o, tc, arch, false).0,
    };
    c.env = o.env;
    Ok(c)
}

/// A source's precompiled preamble for one architecture, as a build would make and use it
/// ([`Build::try_get_preamble`]): the preamble, the command that precompiles it, and the
/// source's device compile without and with the PCH. Nothing has run.
#[derive(Clone, Debug)]
pub struct PreambleCommands {
    job: PchJob,
    compile: Command,
    compile_with_pch: Command,
}

impl PreambleCommands {
    /// The preamble: the source's first bytes, whole directive lines.
    pub fn preamble(&self) -> &[u8] {
        &self.job.preamble
    }

    /// Where the preamble is to be written before [`PreambleCommands::make_pch`] runs.
    pub fn preamble_file(&self) -> &Path {
        &self.job.preamble_file
    }

    /// The PCH that [`PreambleCommands::make_pch`] writes.
    pub fn pch(&self) -> &Path {
        &self.job.pch
    }

    /// The command precompiling the preamble file into [`PreambleCommands::pch`].
    pub fn make_pch(&self) -> &Command {
        &self.job.command
    }

    /// The source's device compile without PCH, as the build runs it.
    pub fn compile(&self) -> &Command {
        &self.compile
    }

    /// The same compile using the PCH: byte-identical device code.
    pub fn compile_with_pch(&self) -> &Command {
        &self.compile_with_pch
    }

    /// The file both compiles write.
    pub fn output(&self) -> &Path {
        &self.compile.outputs[0]
    }
}

impl Build {
    /// The precompiled preamble of `source` for the first resolved architecture, as a build
    /// would make and use it; `None` when the source has no preamble worth one, a flag turns
    /// PCH off, or the compiler is nvcc. Reads `source`; runs nothing but the compiler
    /// discovery.
    ///
    /// # Example
    ///
    /// ```no_run
    /// let b = offload_build::Build::new().arch("gfx90a").clone();
    /// if let Some(p) = b.try_get_preamble("kernels/saxpy.hip").unwrap() {
    ///     std::fs::write(p.preamble_file(), p.preamble()).unwrap();
    ///     assert!(p.make_pch().to_command().status().unwrap().success());
    ///     assert!(p.compile_with_pch().to_command().status().unwrap().success());
    /// }
    /// ```
    pub fn try_get_preamble(
        &self,
        source: impl AsRef<Path>,
    ) -> Result<Option<PreambleCommands>, Error> {
        let directives = Directives::new(false);
        let env = Env::new(&self.env, &directives).with_cancel(self.cancel.as_ref());
        let plan = Plan::new(self, &env, Purpose::Resolve)?;
        let (tc, arch, o) = first_options(self, &env, &plan)?;
        if tc.is_nvcc() {
            return Ok(None);
        }
        let source = plan.cwd.join(source.as_ref());
        let text = std::fs::read(&source).map_err(|e| Error::io("read", &source, e))?;
        let cache = &plan.cache_dir;
        let Some(job) = pch_job(&o, tc, cache, &source, &text, arch, false) else {
            return Ok(None);
        };
        let mut compile = clang::compile_job(&o, tc, cache, &source, arch, false);
        compile.pch_skip = job.len();
        Ok(Some(PreambleCommands {
            compile_with_pch: compile_with_pch(&compile, &job),
            compile: compile.steps[0].clone(),
            job,
        }))
    }
}

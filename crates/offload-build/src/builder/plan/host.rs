//! What a host-code build ([`Build::host_code`]) can be asked for: settings that have no
//! meaning for objects that embed their own device code are refused before anything runs.

use crate::builder::config::Build;
use crate::builder::error::Error;
use crate::builder::options::{Container, Language};
use crate::builder::toolchain::Toolchain;

/// Refuses, for a host-code build of `lang`, the settings it cannot honour: another
/// embedding, a container other than the one its compiler embeds, compression, images built
/// elsewhere; and a compiler it cannot drive yet.
pub(crate) fn check_host_code(build: &Build, lang: Language, tc: &Toolchain) -> Result<(), Error> {
    let refuse = |what: &str| {
        Err(Error::Config(format!(
            "Build::host_code(true) compiles each source into the object its compiler's \
             driver writes, with its device code embedded: {what} has no meaning for it"
        )))
    };
    if build.embed_set {
        return refuse(&format!("Build::embed(Embed::{:?})", build.embed));
    }
    match (lang, build.container) {
        (_, None) | (Language::Hip, Some(Container::Bundle)) => {}
        (_, Some(c)) => return refuse(&format!("Build::container(Container::{c:?})")),
    }
    if build.compress.is_some() {
        return refuse("Build::compress");
    }
    if !build.images.is_empty() {
        return refuse("Build::image (device code built elsewhere)");
    }
    if lang == Language::Cuda {
        return Err(Error::Config(format!(
            "Build::host_code(true) compiles HIP sources; CUDA sources with host code are \
             not supported yet ({} would compile them: use nvcc -c, or Build::host_code(false) \
             for the device code)",
            tc.clang.display()
        )));
    }
    Ok(())
}

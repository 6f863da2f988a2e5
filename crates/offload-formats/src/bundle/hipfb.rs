//! The `.hipfb` file: the binary bundle clang's HIP driver writes for a translation unit and
//! embeds in the `.hip_fatbin` section (a bundle, not an NVIDIA fat binary, whatever the
//! names say).
//!
//! Its layout, as clang 19 and 22 write it:
//!
//! - a host entry [`HOST_ENTRY_ID`] with an empty payload, first, whatever the host;
//! - one entry per device code object, `hipv4-amdgcn-amd-amdhsa--<target-id>`, with the ID
//!   standardized as LLVM's bundler standardizes `-targets` ([`device_entry_id`]), sorted by
//!   ID (the driver orders the offload architectures by name);
//! - every payload aligned to [`ALIGN`] (`-bundle-align=4096`).
//!
//! [`write`](fn@write) is the one place this layout is assembled: the build orchestrator and the
//! self-registering host object of `offload-build` both use it.
//!
//! ```
//! use offload_formats::bundle::{BinaryBundle, hipfb};
//! let bytes = hipfb::write([("gfx90a:xnack+", &b"B"[..]), ("gfx1100", &b"A"[..])]).unwrap();
//! let bundle = BinaryBundle::parse(&bytes).unwrap().unwrap();
//! let ids: Vec<_> = bundle.entries().iter().map(|e| e.id_str().into_owned()).collect();
//! assert_eq!(
//!     ids,
//!     [hipfb::HOST_ENTRY_ID, "hipv4-amdgcn-amd-amdhsa--gfx1100", "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+"]
//! );
//! ```

use super::BundleWriteError;
use super::binary::write_bundle;
use crate::id::EntryId;

/// The host entry clang writes into every `.hipfb` bundle, whatever the host, from LLVM 17
/// (whose bundler standardizes the driver's `host-x86_64-unknown-linux`) up to LLVM 21.
pub const HOST_ENTRY_ID: &str = "host-x86_64-unknown-linux--";

/// The host entry as LLVM 16's bundler and older ones write it: the driver's `-targets=` string
/// as given, two bytes shorter than [`HOST_ENTRY_ID`] (the bundler standardizes IDs from LLVM
/// 17 on: D145770).
pub const HOST_ENTRY_ID_AS_GIVEN: &str = "host-x86_64-unknown-linux";

/// The host entry of LLVM 22's `.hipfb`: its driver gives the bundler a four-field host triple,
/// `host-x86_64-unknown-linux-gnu` (whatever the host), which the bundler standardizes.
pub const HOST_ENTRY_ID_GNU: &str = "host-x86_64-unknown-linux-gnu-";

/// The host entry that the HIP driver and bundler of LLVM `llvm_major` write into a `.hipfb`:
/// [`HOST_ENTRY_ID_AS_GIVEN`] up to LLVM 16, [`HOST_ENTRY_ID`] from 17 and
/// [`HOST_ENTRY_ID_GNU`] from 22. Checked with Debian's ROCm 5.2 (clang 15), Debian 12's clang
/// 16.0.6, and LLVM 19 and 22 (20 and 21 are not: when the driver's string changed between 19
/// and 22 is taken from the later one).
///
/// ```
/// use offload_formats::bundle::hipfb;
/// assert_eq!(hipfb::host_entry_id(16), "host-x86_64-unknown-linux");
/// assert_eq!(hipfb::host_entry_id(19), "host-x86_64-unknown-linux--");
/// assert_eq!(hipfb::host_entry_id(22), "host-x86_64-unknown-linux-gnu-");
/// ```
pub fn host_entry_id(llvm_major: u32) -> &'static str {
    match llvm_major {
        ..=16 => HOST_ENTRY_ID_AS_GIVEN,
        17..=21 => HOST_ENTRY_ID,
        _ => HOST_ENTRY_ID_GNU,
    }
}

/// The payload alignment clang's HIP driver asks the bundler for.
pub const ALIGN: u64 = 4096;

/// The entry ID of a device code object for `target_id` (`gfx90a:xnack+`, given in canonical
/// form: features sorted, as `TargetId::canonical` writes it): `hipv4-amdgcn-amd-amdhsa--`
/// followed by the target ID, standardized as LLVM's bundler standardizes it. A processor
/// unknown to the bundler's table (which LLVM would drop, leaving an ID without a device) is
/// kept as given.
pub fn device_entry_id(target_id: &str) -> String {
    let given = format!("hipv4-amdgcn-amd-amdhsa--{target_id}");
    let id = EntryId::parse(&given);
    if id.dropped_processor().is_some() {
        given
    } else {
        id.as_str().to_owned()
    }
}

/// Assembles a `.hipfb` from `(target ID, code object)` pairs (see the [module docs](self)).
///
/// Two code objects for the same target ID are a [`BundleWriteError::DuplicateId`].
pub fn write<'a>(
    code_objects: impl IntoIterator<Item = (&'a str, &'a [u8])>,
) -> Result<Vec<u8>, BundleWriteError> {
    write_with_host(HOST_ENTRY_ID, code_objects)
}

/// [`write`](fn@write) with the host entry `host_id` ([`host_entry_id`] of the compiler's
/// LLVM version): the bundle that compiler's HIP driver would embed.
///
/// ```
/// use offload_formats::bundle::{BinaryBundle, hipfb};
/// let bytes = hipfb::write_with_host(hipfb::host_entry_id(15), [("gfx90a", &b"A"[..])]).unwrap();
/// let bundle = BinaryBundle::parse(&bytes).unwrap().unwrap();
/// assert_eq!(bundle.entries()[0].id_str(), "host-x86_64-unknown-linux");
/// ```
pub fn write_with_host<'a>(
    host_id: &str,
    code_objects: impl IntoIterator<Item = (&'a str, &'a [u8])>,
) -> Result<Vec<u8>, BundleWriteError> {
    let mut devices: Vec<(String, &[u8])> = code_objects
        .into_iter()
        .map(|(t, data)| (device_entry_id(t), data))
        .collect();
    devices.sort_by(|a, b| a.0.cmp(&b.0));
    let mut entries: Vec<(&[u8], &[u8])> = vec![(host_id.as_bytes(), &[])];
    entries.extend(devices.iter().map(|(id, data)| (id.as_bytes(), *data)));
    write_bundle(&entries, ALIGN)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bundle::BinaryBundle;

    #[test]
    fn host_first_devices_sorted_and_aligned() {
        let bytes = write([("gfx942", &b"xyz"[..]), ("gfx1100", &b"ab"[..])]).unwrap();
        let b = BinaryBundle::parse(&bytes).unwrap().unwrap();
        let e = b.entries();
        assert_eq!(e.len(), 3);
        assert_eq!(e[0].id_str(), HOST_ENTRY_ID);
        assert_eq!(e[0].size(), 0);
        assert_eq!(e[1].id_str(), "hipv4-amdgcn-amd-amdhsa--gfx1100");
        assert_eq!(e[2].id_str(), "hipv4-amdgcn-amd-amdhsa--gfx942");
        assert_eq!(e[1].offset % ALIGN, 0);
        assert_eq!(e[2].offset % ALIGN, 0);
        assert_eq!(&bytes[e[2].offset as usize..], b"xyz");
    }

    #[test]
    fn duplicate_target_is_an_error() {
        let err = write([("gfx90a", &b"a"[..]), ("gfx90a", &b"b"[..])]).unwrap_err();
        assert_eq!(
            err,
            BundleWriteError::DuplicateId("hipv4-amdgcn-amd-amdhsa--gfx90a".into())
        );
    }

    #[test]
    fn unknown_processor_is_kept() {
        assert_eq!(
            device_entry_id("gfx9999"),
            "hipv4-amdgcn-amd-amdhsa--gfx9999"
        );
        assert_eq!(
            device_entry_id("gfx90a:xnack+"),
            "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+"
        );
    }
}

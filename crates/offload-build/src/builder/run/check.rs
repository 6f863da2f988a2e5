//! The check every image passes before it is packed: the device code its kind says, for
//! its architecture.

use offload_formats::package::ImageKind;

use crate::builder::arch::Target;

/// Whether `data` is the device code `kind` says (for an NVIDIA or AMDGPU `arch`): an AMDGPU
/// ELF code object, a PTX text, or a cubin (an NVIDIA ELF); else what is expected and what
/// was found. The same check for every container and embedding mode, before packing.
pub(crate) fn check_device_code(
    kind: ImageKind,
    nvidia: bool,
    data: &[u8],
) -> Result<(), (String, String)> {
    use object::elf::{EM_AMDGPU, EM_CUDA};
    // The machine of a 64-bit little-endian ELF file.
    let elf_machine = offload_formats::kind::elf64_le_machine;
    let head = || {
        let n = data.len().min(8);
        if n == 0 {
            return "an empty file".to_string();
        }
        let hex: Vec<String> = data[..n].iter().map(|b| format!("{b:02x}")).collect();
        format!("{} bytes starting with {}", data.len(), hex.join(" "))
    };
    let (expected, ok) = match kind {
        ImageKind::Ptx => {
            let text = std::str::from_utf8(data).ok();
            let ok = text.is_some_and(|t| {
                !t.contains('\0')
                    && t.lines().any(|l| l.trim_start().starts_with(".version"))
                    && t.lines().any(|l| l.trim_start().starts_with(".target"))
            });
            ("a PTX text (.version, .target)", ok)
        }
        ImageKind::Cubin => (
            "a cubin (a 64-bit NVIDIA ELF, EM_CUDA)",
            elf_machine(data) == Some(EM_CUDA),
        ),
        _ if nvidia => (
            "a cubin (a 64-bit NVIDIA ELF, EM_CUDA)",
            elf_machine(data) == Some(EM_CUDA),
        ),
        _ => (
            "an AMDGPU ELF code object (64-bit ELF, EM_AMDGPU)",
            elf_machine(data) == Some(EM_AMDGPU),
        ),
    };
    if ok {
        return Ok(());
    }
    let found = match elf_machine(data) {
        Some(m) => format!("an ELF file for machine {m}"),
        None => head(),
    };
    Err((expected.to_string(), found))
}

/// Whether `data`, written for `target`, is what it should be: [`check_device_code`] for
/// device code, or for a host object (a host compile, nvcc's device link) a relocatable
/// object file.
pub(crate) fn check_output(
    kind: ImageKind,
    target: &Target,
    data: &[u8],
) -> Result<(), (String, String)> {
    if let Target::Device(arch) = target {
        return check_device_code(kind, arch.is_nvidia(), data);
    }
    use object::Object;
    match object::File::parse(data) {
        Ok(f) if f.kind() == object::ObjectKind::Relocatable => Ok(()),
        Ok(f) => Err((
            "a relocatable object file".into(),
            format!("an object file of kind {:?}", f.kind()),
        )),
        Err(_) => Err((
            "a relocatable object file".into(),
            format!("{} bytes that are no object file", data.len()),
        )),
    }
}

/// Why `data`, a cached output of kind `kind` that passed [`check_device_code`] when it was
/// written, is not device code for `arch`: an AMDGPU code object whose ELF header names
/// another processor or other `xnack`/`sramecc` settings (as the HIP runtime reads them).
/// `None` when it is, or when the header names a processor this crate does not know.
pub(crate) fn target_mismatch(kind: ImageKind, target: &Target, data: &[u8]) -> Option<String> {
    use offload_formats::id::target_id::TargetId;
    let Target::Device(arch) = target else {
        return None;
    };
    if kind != ImageKind::Object || arch.is_nvidia() {
        return None;
    }
    let Some(found) = offload_formats::compat::code_object_target_id(data) else {
        return check_device_code(kind, false, data)
            .err()
            .map(|(expected, found)| format!("{found}, not {expected}"));
    };
    let (Ok(want), Ok(got)) = (TargetId::parse(arch.as_str()), TargetId::parse(&found)) else {
        return None;
    };
    let same = want.processor() == got.processor()
        && ["xnack", "sramecc"]
            .iter()
            .all(|f| want.feature(f) == got.feature(f));
    (!same).then(|| format!("a code object for {found}, not {arch}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builder::arch::Arch;

    #[test]
    fn device_code_is_checked_by_kind() {
        let elf = |machine: u16| {
            let mut v = vec![0u8; 64];
            v[..4].copy_from_slice(b"\x7fELF");
            v[4] = 2;
            v[5] = 1;
            v[18..20].copy_from_slice(&machine.to_le_bytes());
            v
        };
        assert!(check_device_code(ImageKind::Object, false, &elf(224)).is_ok());
        assert!(check_device_code(ImageKind::Cubin, true, &elf(190)).is_ok());
        let (expected, found) = check_device_code(ImageKind::Object, false, &elf(62)).unwrap_err();
        assert!(expected.contains("AMDGPU") && found == "an ELF file for machine 62");
        assert!(check_device_code(ImageKind::Cubin, true, &elf(224)).is_err());
        let ptx = b"//\n.version 7.8\n.target sm_80\n.address_size 64\n";
        assert!(check_device_code(ImageKind::Ptx, true, ptx).is_ok());
        let (_, found) = check_device_code(ImageKind::Ptx, true, b"").unwrap_err();
        assert_eq!(found, "an empty file");
        assert!(check_device_code(ImageKind::Ptx, true, &elf(190)).is_err());
        // A host compile's output is a relocatable object, whatever its machine.
        let host = Target::Host;
        assert!(check_output(ImageKind::Object, &host, &elf(224)).is_err());
        let mut obj = object::write::Object::new(
            object::BinaryFormat::Elf,
            object::Architecture::X86_64,
            object::Endianness::Little,
        );
        obj.add_section(Vec::new(), b".text".to_vec(), object::SectionKind::Text);
        let obj = obj.write().unwrap();
        assert!(check_output(ImageKind::Object, &host, &obj).is_ok());
        let gfx90a = Target::Device(Arch::new("gfx90a").unwrap());
        assert!(check_output(ImageKind::Object, &gfx90a, &obj).is_err());
    }
}

//! One image of one architecture ([`Piece`]), as the jobs produce it and the packers take it.

use offload_formats::package::ImageKind;

use crate::builder::arch::Arch;

/// One image of one architecture.
#[derive(Clone, Debug)]
pub(crate) struct Piece {
    /// What it holds.
    pub kind: ImageKind,
    /// Its bytes.
    pub data: Vec<u8>,
}

impl Piece {
    /// Whether an image of `kind` built for `arch` is packed: CMake's `NN-real` keeps the
    /// cubin alone (the PTX was its intermediate).
    pub(crate) fn packed(kind: ImageKind, arch: &Arch) -> bool {
        !(kind == ImageKind::Ptx && arch.is_real())
    }
}

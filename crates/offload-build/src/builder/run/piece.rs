//! One image of one architecture ([`Piece`]), as the jobs produce it and the packers take it.

use offload_formats::package::ImageKind;

/// One image of one architecture.
#[derive(Clone, Debug)]
pub(crate) struct Piece {
    /// What it holds.
    pub kind: ImageKind,
    /// Its bytes.
    pub data: Vec<u8>,
}

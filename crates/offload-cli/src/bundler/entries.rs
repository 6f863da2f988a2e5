//! What the bundler reads a bundle as: the format that handles the file ([`Handler`]) and
//! the entries found in it ([`Found`]). Its own file, so that the readers of every format
//! (`read.rs`, `objects.rs`) share it without importing each other.

/// How one bundle file is read or written, chosen from `-type` and the reference input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Handler {
    Binary,
    Text(&'static str),
    /// A fat object (`-type=o` whose reference input is an object file).
    Object,
}

/// One entry to extract: its ID and where its payload lies in the input.
pub(crate) struct Found<'a> {
    pub(crate) id: &'a [u8],
    pub(crate) offset: u64,
    pub(crate) len: u64,
    /// A fat object's host entry: the output is the object without its bundle sections.
    pub(crate) host_object: bool,
    /// A fat object's section whose contents cannot be read: the error to report when it
    /// is extracted (listing it is fine, as in LLVM).
    pub(crate) unreadable: Option<String>,
}

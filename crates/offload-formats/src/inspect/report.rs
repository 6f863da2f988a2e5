//! What an inspection finds: the [`Report`] of one file, its containers and their entries,
//! with the `file://` URIs that name an entry's bytes.

/// Everything found in one file.
#[derive(Clone, Debug)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct Report {
    /// The path as given.
    pub path: String,
    /// What the file is: `bundle`, `compressed-bundle`, `offload-binary`, `nv-fatbin`, `elf`,
    /// `coff`, `macho`, `archive` or `other`.
    pub format: &'static str,
    /// File size in bytes.
    pub size: u64,
    /// The containers, in file order (archive members in member order).
    pub containers: Vec<ContainerReport>,
}

impl Report {
    /// All entries of all containers, with their container.
    pub fn entries(&self) -> impl Iterator<Item = (&ContainerReport, &EntryReport)> {
        self.containers
            .iter()
            .flat_map(|c| c.entries.iter().map(move |e| (c, e)))
    }
}

/// One container: a bundle, a compressed bundle, an offload binary, an NVIDIA fat binary or a
/// fat-object section.
#[derive(Clone, Debug)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct ContainerReport {
    /// Position in [`Report::containers`].
    pub index: usize,
    /// `bundle`, `compressed-bundle`, `offload-binary`, `nv-fatbin` (an NVIDIA fat binary) or
    /// `fat-object-section`.
    pub kind: &'static str,
    /// The archive member holding it, if any.
    pub member: Option<String>,
    /// The section holding it, if any.
    pub section: Option<String>,
    /// File offset of the container.
    pub offset: u64,
    /// Size in bytes (as stored, i.e. compressed for a compressed bundle).
    pub size: u64,
    /// Compression details of a compressed container.
    pub compression: Option<Compression>,
    /// `file://<path>#offset=<offset>&size=<size>`.
    pub uri: String,
    /// Its entries.
    pub entries: Vec<EntryReport>,
}

/// How a container is compressed.
#[derive(Clone, Debug)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct Compression {
    /// `zstd` or `zlib`.
    pub method: &'static str,
    /// Format version (CCOB 1–3, offload binary 3).
    pub version: u16,
    /// Stored size, header included.
    pub compressed_size: u64,
    /// Size once decompressed.
    pub uncompressed_size: u64,
    /// `uncompressed_size / compressed_size` (LLVM's "compression rate").
    pub ratio: f64,
    /// Whether the MD5 stored in a compressed bundle's header matches its contents: checked
    /// only when [`Options::verify`](super::Options::verify) asks (`None` otherwise, and for formats without a stored
    /// hash).
    pub hash_matches: Option<bool>,
}

/// One entry: a code object (or other payload) for one target.
#[derive(Clone, Debug)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct EntryReport {
    /// Position among all entries of the report (what `extract --index` takes).
    pub index: usize,
    /// The bundle entry ID (`hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+`); for an offload
    /// binary `<offload-kind>-<triple>-<arch>`.
    pub id: String,
    /// Offload kind (`hip`, `hipv4`, `host`, `openmp`, …).
    pub offload_kind: String,
    /// Target triple.
    pub triple: String,
    /// Target ID or architecture (`gfx90a:xnack+`), empty for none.
    pub arch: String,
    /// Image kind of an offload-binary entry (`o`, `bc`, …) or of an NVIDIA fat binary entry
    /// (`cubin`, `ptx`, `other`).
    pub image_kind: Option<&'static str>,
    /// How an NVIDIA fat binary entry is compressed (`lz4`, `zstd`): such an entry is listed
    /// with its stored (compressed) size and no offset; extracting it decompresses it.
    #[cfg_attr(feature = "serde", serde(skip_serializing_if = "Option::is_none"))]
    pub compression: Option<&'static str>,
    /// File offset of the payload; `None` inside a compressed container.
    pub offset: Option<u64>,
    /// Payload size.
    pub size: u64,
    /// `file://` URI of the payload; `None` inside a compressed container.
    pub uri: Option<String>,
    /// Position of the entry in its container (header order).
    #[cfg_attr(feature = "serde", serde(skip))]
    pub(crate) position: usize,
}

/// `file://<path>#offset=<offset>&size=<size>`.
pub fn uri(path: &str, offset: u64, size: u64) -> String {
    format!("file://{path}#offset={offset}&size={size}")
}

/// Parses a URI made by [`uri`] into (path, offset, size).
pub fn parse_uri(uri: &str) -> Option<(&str, u64, u64)> {
    let rest = uri.strip_prefix("file://")?;
    let (path, frag) = rest.rsplit_once('#')?;
    let mut offset = None;
    let mut size = None;
    for kv in frag.split('&') {
        let (k, v) = kv.split_once('=')?;
        match k {
            "offset" => offset = Some(v.parse().ok()?),
            "size" => size = Some(v.parse().ok()?),
            _ => return None,
        }
    }
    Some((path, offset?, size?))
}

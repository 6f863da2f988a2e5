//! The `-targets` of a clang-offload-bundler command: checked, and matched against the entries
//! of a bundle, exactly as LLVM does (`OffloadBundler.cpp`: the checks of `main`, then
//! `UnbundleFiles`'s work list).
//!
//! This is the LLVM semantics of the drop-in `offload-bundler`, as library API: a program that
//! wants "unbundle as clang-offload-bundler does" checks its targets with [`Targets::check`],
//! reads a bundle's entries (in LLVM's order: [`BinaryBundle::llvm_order`], a text bundle's
//! file order, a fat object's sections) and asks [`Targets::match_entries`] which entry goes to
//! which target.
//!
//! ```
//! use offload_formats::bundle::targets::{Mode, Targets};
//! let targets = Targets::check(
//!     ["host-x86_64-unknown-linux-gnu", "hipv4-amdgcn-amd-amdhsa--gfx90a"],
//!     Mode::Unbundle,
//!     |_, _| {},
//! )?;
//! let entries: [&[u8]; 2] = [
//!     b"host-x86_64-unknown-linux-gnu-",
//!     b"hipv4-amdgcn-amd-amdhsa--gfx90a",
//! ];
//! let m = targets.match_entries(&entries, false);
//! assert_eq!(m.pairs, [(0, 0), (1, 1)]); // (target, entry)
//! assert!(m.missing.is_empty() && m.found_host);
//! # Ok::<(), offload_formats::bundle::targets::TargetError>(())
//! ```
//!
//! [`BinaryBundle::llvm_order`]: super::BinaryBundle::llvm_order

use std::collections::{HashMap, HashSet};
use std::fmt;

use super::order::StringMapOrder;
use crate::id::entry::{EntryId, IdError, find_conflict};

/// clang-offload-bundler 22's message for a target with fewer than 5 components that neither
/// LLVM version accepts.
pub const FORMAT_ERROR: &str = "Targets need to follow the format '<offload kind>-<target triple>', where '<target triple>' follows the format '<kind>-<arch>-<vendor>-<os>-<env>[-<target id>[:target features]]'.";

/// Bundling or unbundling: the host-target rule differs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Exactly one host target, unless every target is HIP.
    Bundle,
    /// At most one host target.
    Unbundle,
}

/// Why a set of targets is refused; the texts are clang-offload-bundler 22's (or ours where
/// LLVM has none).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum TargetError {
    /// The same target string twice.
    Duplicate,
    /// A target that LLVM 22 refuses; the message is 22's.
    Invalid(IdError),
    /// A target in LLVM 19's syntax that neither version accepts ([`FORMAT_ERROR`]).
    Format,
    /// Two different target strings that standardize to one bundle ID (LLVM would write or
    /// read the same entry twice).
    SameId {
        /// The first target as given.
        first: String,
        /// The second target as given.
        second: String,
        /// The bundle ID both standardize to.
        id: String,
    },
    /// Two target IDs of one processor with conflicting features (`gfx90a:xnack+` and
    /// `gfx90a:xnack-`).
    Conflict(String, String),
    /// The number of host targets is not what the mode allows.
    HostCount(usize),
}

impl fmt::Display for TargetError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TargetError::Duplicate => f.write_str("Duplicate targets are not allowed"),
            TargetError::Invalid(e) => write!(f, "{e}"),
            TargetError::Format => f.write_str(FORMAT_ERROR),
            TargetError::SameId { first, second, id } => write!(
                f,
                "targets '{first}' and '{second}' both standardize to the bundle ID '{id}'"
            ),
            TargetError::Conflict(a, b) => write!(
                f,
                "Cannot bundle inputs with conflicting targets: '{a}' and '{b}'"
            ),
            TargetError::HostCount(n) => write!(f, "expecting exactly one host target but got {n}"),
        }
    }
}

impl std::error::Error for TargetError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            TargetError::Invalid(e) => Some(e),
            _ => None,
        }
    }
}

/// Checked targets: the strings as given and their entry IDs, in command-line order.
#[derive(Clone, Debug)]
pub struct Targets {
    given: Vec<String>,
    ids: Vec<EntryId>,
    host_index: Option<usize>,
    hip_only: bool,
}

impl Targets {
    /// Parses and checks `targets` in LLVM 22's order of checks: duplicates and syntax per
    /// target, then IDs that standardize alike, conflicting target IDs and the host count.
    /// `dropped` is told of each target whose processor no clang knows (22 leaves it out of
    /// the ID), as it is met; `dropped(target, id)`.
    ///
    /// Duplicate detection is linear in the number of targets.
    pub fn check<S: Into<String>>(
        targets: impl IntoIterator<Item = S>,
        mode: Mode,
        mut dropped: impl FnMut(&str, &EntryId),
    ) -> Result<Targets, TargetError> {
        let given: Vec<String> = targets.into_iter().map(Into::into).collect();
        let mut seen = HashSet::with_capacity(given.len());
        let mut ids = Vec::with_capacity(given.len());
        let mut host_count = 0usize;
        let mut host_index = None;
        let mut hip_only = true;
        for (index, target) in given.iter().enumerate() {
            if !seen.insert(target.as_str()) {
                return Err(TargetError::Duplicate);
            }
            let id = EntryId::parse(target);
            if id.dropped_processor().is_some() {
                dropped(target, &id);
            }
            if let Err(e) = id.validate(target) {
                // Neither LLVM accepts it: report it as the default reference (22) does.
                return Err(if id.rules().is_llvm19() {
                    TargetError::Format
                } else {
                    TargetError::Invalid(e)
                });
            }
            if id.is_host() {
                host_count += 1;
                host_index = Some(index);
            }
            hip_only &= id.is_hip();
            ids.push(id);
        }
        let mut first_of: HashMap<&str, usize> = HashMap::with_capacity(ids.len());
        for (i, id) in ids.iter().enumerate() {
            if let Some(&j) = first_of.get(id.as_str()) {
                return Err(TargetError::SameId {
                    first: given[j].clone(),
                    second: given[i].clone(),
                    id: id.to_string(),
                });
            }
            first_of.insert(id.as_str(), i);
        }
        if let Some((a, b)) = find_conflict(&ids) {
            return Err(TargetError::Conflict(a, b));
        }
        let host_ok = match mode {
            Mode::Unbundle => host_count <= 1,
            Mode::Bundle => host_count == 1 || hip_only,
        };
        if !host_ok {
            return Err(TargetError::HostCount(host_count));
        }
        Ok(Targets {
            given,
            ids,
            host_index,
            hip_only,
        })
    }

    /// The targets as given.
    pub fn given(&self) -> &[String] {
        &self.given
    }

    /// The entry IDs, one per target.
    pub fn ids(&self) -> &[EntryId] {
        &self.ids
    }

    /// Whether a host target is among them.
    pub fn has_host(&self) -> bool {
        self.host_index.is_some()
    }

    /// Whether every target is a HIP device target (a `.hipfb` needs no host entry).
    pub fn hip_only(&self) -> bool {
        self.hip_only
    }

    /// The input whose file type decides the bundle format when bundling (LLVM's
    /// `HostInputIndex`, or the first input when every target is HIP).
    pub fn reference_input(&self) -> usize {
        if self.hip_only {
            0
        } else {
            self.host_index.unwrap_or(0)
        }
    }

    /// LLVM's unbundling match of the entries of one bundle, whose IDs are `entries` in the
    /// order LLVM reads them. Each entry, in that order, goes to the first still unmatched
    /// target, in the order of LLVM's StringMap of standardized targets, that it is
    /// compatible with (LLVM 22's rules). Where 22 loses an entry that 19 finds, it is found
    /// as 19 does: targets 22's rules leave unmatched are compared with 19's rules against the
    /// entries no target took (22 standardizes `hip-spirv-amdhsa---gfx1100` into an ID that
    /// its own entry no longer matches).
    pub fn match_entries(&self, entries: &[&[u8]], hip_openmp: bool) -> Matches {
        let names: Vec<&str> = self.ids.iter().map(EntryId::as_str).collect();
        let mut worklist: Vec<usize> = StringMapOrder::of(&names);
        let wanted: Vec<EntryId> = self.ids.iter().map(EntryId::standardized).collect();
        let mut m = Matches {
            pairs: Vec::new(),
            missing: Vec::new(),
            found_host: false,
        };
        m.found_host = claim(
            entries,
            &mut worklist,
            &mut m.pairs,
            EntryId::parse,
            &wanted,
            hip_openmp,
        );
        if !worklist.is_empty() {
            let wanted19: Vec<EntryId> = self
                .given
                .iter()
                .map(|t| EntryId::parse_llvm19(EntryId::parse_llvm19(t).as_str()))
                .collect();
            m.found_host |= claim(
                entries,
                &mut worklist,
                &mut m.pairs,
                EntryId::parse_llvm19,
                &wanted19,
                hip_openmp,
            );
            // In the order LLVM writes them: the file's.
            m.pairs.sort_by_key(|&(_, e)| e);
        }
        m.missing = worklist;
        m
    }

    /// LLVM's error for the targets of `missing` ([`Matches::missing`]): `Can't find bundles
    /// for A`, `… for A and B`, `… for A, B, and C`, the IDs sorted.
    pub fn missing_message(&self, missing: &[usize]) -> String {
        let mut sorted: Vec<&str> = missing.iter().map(|&t| self.ids[t].as_str()).collect();
        sorted.sort_unstable();
        let mut msg = String::from("Can't find bundles for");
        let last = sorted.len().saturating_sub(1);
        for (i, name) in sorted.iter().enumerate() {
            if i != 0 && last > 1 {
                msg.push(',');
            }
            msg.push(' ');
            if i == last && i != 0 {
                msg.push_str("and ");
            }
            msg.push_str(name);
        }
        msg
    }
}

/// The outcome of [`Targets::match_entries`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Matches {
    /// `(target index, entry index)` pairs, in the entries' order.
    pub pairs: Vec<(usize, usize)>,
    /// Targets no entry matched, in LLVM's work-list order (LLVM creates their outputs empty
    /// with `-allow-missing-bundles`, in this order, after the matched ones).
    pub missing: Vec<usize>,
    /// Whether a host entry was matched.
    pub found_host: bool,
}

/// One matching pass: each entry not yet in `pairs`, in order, goes to the first target of
/// `worklist` that it is compatible with, read with `parse`; that target leaves the work list.
/// Returns whether a host entry was taken.
fn claim(
    entries: &[&[u8]],
    worklist: &mut Vec<usize>,
    pairs: &mut Vec<(usize, usize)>,
    parse: fn(&str) -> EntryId,
    wanted: &[EntryId],
    hip_openmp: bool,
) -> bool {
    let taken: HashSet<usize> = pairs.iter().map(|&(_, e)| e).collect();
    let mut found_host = false;
    for (i, id) in entries.iter().enumerate() {
        if worklist.is_empty() {
            break;
        }
        if taken.contains(&i) {
            continue;
        }
        let entry_id = parse(&crate::id::spell::text(id));
        let Some(pos) = worklist
            .iter()
            .position(|&t| entry_id.is_compatible(&wanted[t], hip_openmp))
        else {
            continue;
        };
        pairs.push((worklist.remove(pos), i));
        found_host |= entry_id.is_host();
    }
    found_host
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(t: &[&str], mode: Mode) -> Result<Targets, TargetError> {
        Targets::check(t.iter().copied(), mode, |_, _| {})
    }

    #[test]
    fn errors_in_llvm_order_with_llvm_texts() {
        let e = check(&["hip-amdgcn-amd-amdhsa--gfx90a"; 2], Mode::Unbundle).unwrap_err();
        assert_eq!(e.to_string(), "Duplicate targets are not allowed");
        let e = check(
            &[
                "hip-amdgcn-amd-amdhsa--gfx90a",
                "hip-amdgcn-amd-amdhsa--gfx90a:xnack+",
            ],
            Mode::Unbundle,
        )
        .unwrap_err();
        assert!(matches!(e, TargetError::Conflict(..)), "{e}");
        let e = check(
            &[
                "host-x86_64-unknown-linux-gnu",
                "hip-amdgcn-amd-amdhsa--gfx90a",
            ],
            Mode::Bundle,
        );
        assert!(e.is_ok());
        let e = check(
            &[
                "openmp-x86_64-unknown-linux-gnu",
                "hip-amdgcn-amd-amdhsa--gfx90a",
            ],
            Mode::Bundle,
        )
        .unwrap_err();
        assert_eq!(e, TargetError::HostCount(0));
        assert_eq!(e.to_string(), "expecting exactly one host target but got 0");
        assert!(check(&["hip-amdgcn-amd-amdhsa--gfx90a"], Mode::Bundle).is_ok());
    }

    #[test]
    fn missing_message_lists_like_llvm() {
        let t = check(
            &[
                "hip-amdgcn-amd-amdhsa--gfx90a",
                "hip-amdgcn-amd-amdhsa--gfx1100",
                "hip-amdgcn-amd-amdhsa--gfx906",
            ],
            Mode::Unbundle,
        )
        .unwrap();
        assert_eq!(
            t.missing_message(&[0]),
            "Can't find bundles for hip-amdgcn-amd-amdhsa--gfx90a"
        );
        assert_eq!(
            t.missing_message(&[2, 0]),
            "Can't find bundles for hip-amdgcn-amd-amdhsa--gfx906 and hip-amdgcn-amd-amdhsa--gfx90a"
        );
        assert_eq!(
            t.missing_message(&[0, 1, 2]),
            "Can't find bundles for hip-amdgcn-amd-amdhsa--gfx1100, hip-amdgcn-amd-amdhsa--gfx906, and hip-amdgcn-amd-amdhsa--gfx90a"
        );
    }

    #[test]
    fn first_compatible_target_takes_each_entry() {
        let t = check(
            &[
                "hip-amdgcn-amd-amdhsa--gfx90a:xnack+",
                "hip-amdgcn-amd-amdhsa--gfx1100",
            ],
            Mode::Unbundle,
        )
        .unwrap();
        let entries: [&[u8]; 3] = [
            b"hip-amdgcn-amd-amdhsa--gfx1100",
            b"hip-amdgcn-amd-amdhsa--gfx90a:xnack-",
            b"hip-amdgcn-amd-amdhsa--gfx90a:xnack+",
        ];
        let m = t.match_entries(&entries, false);
        assert_eq!(m.pairs, [(1, 0), (0, 2)]);
        assert!(m.missing.is_empty());
        assert!(!m.found_host);
    }
}

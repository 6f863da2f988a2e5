//! What each node of the job graph is expected to take, in time and memory: what it took
//! when it last ran (its stats file, beside its cache record: milliseconds and the peak of
//! its processes), else what a job of the same kind and compiler took on the most similar
//! source of the build (by size), else a cautious default for its kind
//! ([`crate::builder::memory::default`]). The jobs stage orders the nodes by time (the
//! longest way to the build's end first) and starts them while their memory fits.

use std::path::Path;

use crate::builder::memory::{Need, NeedFrom, default, with_margin};
use crate::builder::toolchain::nvcc_steps::StepKind;

/// What a node runs, for its defaults and the class of nodes it learns from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A device compile by clang.
    DeviceCompile,
    /// A host compile by clang (with its packing), or an early one.
    HostCompile,
    /// A whole `nvcc -c`.
    Nvcc,
    /// One of nvcc's steps.
    NvccStep(StepKind),
    /// A precompiled preamble.
    Pch,
    /// A device link.
    Link,
}

impl Kind {
    /// The class of nodes that learn each other's peaks
    /// ([`crate::builder::graph::Node::class`]).
    pub(crate) fn class(self) -> u32 {
        match self {
            Kind::DeviceCompile => 1,
            Kind::HostCompile => 2,
            Kind::Nvcc => 3,
            Kind::Pch => 4,
            Kind::Link => 5,
            Kind::NvccStep(s) => 10 + s as u32,
        }
    }

    fn default_need(self) -> u64 {
        match self {
            Kind::DeviceCompile | Kind::HostCompile | Kind::Pch => default::CLANG,
            Kind::Nvcc => default::NVCC,
            Kind::NvccStep(s) => s.default_need(),
            Kind::Link => default::LINK,
        }
    }
}

/// What a node is expected to take.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Estimate {
    /// Milliseconds: as it last ran; one never run counts as the longest of the build.
    pub ms: u64,
    /// Whether `ms` was measured (else it is the longest of the build's).
    pub timed: bool,
    pub need: Need,
}

/// The time and peak in a stats file (`<ms> <bytes>`).
pub(crate) fn read_stats(path: &Path) -> Option<(u64, u64)> {
    let text = std::fs::read_to_string(path).ok()?;
    let mut w = text.split_whitespace();
    let ms = w.next()?.parse().ok()?;
    let peak = w.next().and_then(|p| p.parse().ok()).unwrap_or(0);
    Some((ms, peak))
}

/// The estimates of `items`: each node's kind, the size of what it compiles (0 when
/// nothing), and its stats file.
pub(crate) fn estimates(items: &[(Kind, u64, &Path)]) -> Vec<Estimate> {
    let stats: Vec<Option<(u64, u64)>> = items.iter().map(|(_, _, p)| read_stats(p)).collect();
    let longest = stats.iter().flatten().map(|s| s.0).max().unwrap_or(0);
    items
        .iter()
        .zip(&stats)
        .map(|(&(kind, size, _), st)| {
            let need = match st {
                Some((_, peak)) if *peak > 0 => Need {
                    bytes: with_margin(*peak),
                    from: NeedFrom::Recorded,
                },
                _ => similar(items, &stats, kind, size).unwrap_or(Need {
                    bytes: kind.default_need(),
                    from: NeedFrom::Default,
                }),
            };
            Estimate {
                ms: st.map_or(longest, |s| s.0),
                timed: st.is_some(),
                need,
            }
        })
        .collect()
}

/// The peak of the item of `kind` whose size is closest to `size`, of those measured.
fn similar(
    items: &[(Kind, u64, &Path)],
    stats: &[Option<(u64, u64)>],
    kind: Kind,
    size: u64,
) -> Option<Need> {
    items
        .iter()
        .zip(stats)
        .filter(|((k, _, _), st)| *k == kind && st.is_some_and(|s| s.1 > 0))
        .min_by_key(|((_, s, _), _)| s.abs_diff(size))
        .and_then(|(_, st)| st.as_ref())
        .map(|st| Need {
            bytes: with_margin(st.1),
            from: NeedFrom::Similar,
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_need_comes_from_the_record_a_similar_job_or_the_default() {
        let dir = tempfile::tempdir().unwrap();
        let p = |n: &str| dir.path().join(n);
        std::fs::write(p("a.stats"), "1200 100000000\n").unwrap();
        std::fs::write(p("b.stats"), "300 10000000\n").unwrap();
        let (a, b, c, d) = (p("a.stats"), p("b.stats"), p("c.stats"), p("d.stats"));
        let items = [
            (Kind::DeviceCompile, 9000, a.as_path()),
            (Kind::DeviceCompile, 1000, b.as_path()),
            (Kind::DeviceCompile, 1200, c.as_path()),
            (Kind::Link, 0, d.as_path()),
        ];
        let e = estimates(&items);
        assert_eq!(e[0].need.from, NeedFrom::Recorded);
        assert_eq!(e[0].need.bytes, with_margin(100_000_000));
        assert_eq!((e[0].ms, e[0].timed), (1200, true));
        // c has no record: b's size is closer than a's; it counts as the longest.
        assert_eq!(e[2].need.from, NeedFrom::Similar);
        assert_eq!(e[2].need.bytes, with_margin(10_000_000));
        assert_eq!((e[2].ms, e[2].timed), (1200, false));
        assert_eq!(e[3].need.from, NeedFrom::Default);
        assert_eq!(e[3].need.bytes, default::LINK);
    }
}

//! Preambles shared across separate builds (`make -j`, one source each): a family's preambles
//! are kept in the cache, and a source whose own PCH is unknown uses the longest cached PCH
//! of its first directives, or makes the one that most sources of its family share (of
//! those, for a build of one source the shortest that includes more than the standard
//! library, else the longest).

use crate::builder::command::{Domain, KeyBuilder};
use crate::builder::pch::job::PchJob;
#[cfg(doc)]
use crate::builder::pch::job::prefix_job;
#[cfg(doc)]
use crate::builder::pch::preamble::RUNTIME_PREAMBLE;
use crate::builder::pch::preamble::{contains, cut_points, normalized, preamble_len};
use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};

/// How many preambles of a family the cache keeps ([`prefer_shared`]).
pub(crate) const FAMILY_KEPT: usize = 64;

/// The PCH a compile of `source` (content `text`) uses, given `full`, the job of its whole
/// preamble, and `siblings`, the other sources of this build with their whole preambles:
/// `full` when its PCH exists or was asked for (made, marked seen, or in the background),
/// or when another source of this build has the very same preamble; else a PCH of the
/// preamble's first lines shared with other sources of the same family (same compiler,
/// flags, architecture and directory): the longest such prefix whose PCH exists, else the
/// prefix the most other sources (of this build, or seen by earlier builds in the cache,
/// `<cache>/preambles-<arch>-<family>/`) start with, when one does (of those as shared, for a
/// build of one source the shortest that includes more than the standard library, else the
/// longest) — it is then marked seen,
/// so that this build makes it: one PCH of the shared includes serves every source that
/// starts with them, across the one-source builds of a `make -j` project. A prefix holds
/// at least one `#include`; the compile parses the rest of its preamble itself. Prefixes
/// are compared and precompiled without their comments ([`normalized`]). Earlier preambles
/// of the same source do not count: a single source keeps its own PCH. `job` is the PCH job of
/// a preamble for this compile ([`prefix_job`] of a device compile,
/// [`host_prefix_job`](crate::builder::pch::job::host_prefix_job) of a host one). The job, and
/// how many bytes of the source it stands for.
///
/// `hints.first_of_make`: this is a build of one source run by make (`make -j` runs a project's
/// builds at once, so the first two have nothing to share yet). When no other source of the
/// family is known, its shortest prefix that includes more than the standard library is
/// made now, as the next sources likely start with it too ([`first_of_family`]); so is it
/// when no known source shares a prefix with it (the first of another family of includes).
pub(crate) fn prefer_shared(
    full: PchJob,
    cache_dir: &Path,
    source: &Path,
    text: &[u8],
    siblings: &[(&Path, &[u8])],
    hints: Hints<'_>,
    job: impl Fn(Vec<u8>) -> Option<PchJob>,
) -> (PchJob, usize) {
    let family_dir = cache_dir.join(format!(
        "preambles-{}-{:016x}",
        full.target.file_tag(),
        full.family as u64
    ));
    remember(&family_dir, &full, source);
    let known = full.is_known();
    let shared_whole = siblings.iter().any(|(_, q)| *q == full.preamble.as_slice());
    let whole = full.len();
    // Each shorter cut with an include, and the text a PCH of it holds.
    let prefixes: Vec<(usize, Vec<u8>)> = cut_points(text)
        .into_iter()
        .filter(|&c| c < whole)
        .map(|c| (c, normalized(text, c)))
        .filter(|(_, n)| contains(n, b"include"))
        .collect();
    if known || shared_whole {
        return (full, whole);
    }
    let job = |n: &[u8]| job(n.to_vec());
    for (c, n) in prefixes.iter().rev() {
        if let Some(p) = job(n).filter(|p| p.record.is_file()) {
            return (p, *c);
        }
    }
    // The other sources, each with the texts its preamble's prefixes hold.
    let seen = family(&family_dir, &full, source);
    let mut others: Vec<(&Path, Vec<Vec<u8>>)> = seen
        .iter()
        .map(|(s, q)| (s.as_path(), q.as_slice()))
        .chain(siblings.iter().copied())
        .filter(|(s, _)| *s != source)
        .map(|(s, q)| {
            (
                s,
                cut_points(q)
                    .into_iter()
                    .map(|c| normalized(q, c))
                    .collect(),
            )
        })
        .collect();
    others.sort_unstable();
    others.dedup();
    // For a build of one source: the prefixes below this one include the standard library
    // alone (each prefix holds the one before, so one pass reads each header once).
    let light_below = siblings.is_empty().then(|| {
        let mut seen = Vec::new();
        let dir = source.parent();
        (prefixes.iter())
            .position(|(_, n)| beyond_std(n, dir, hints.includes, &mut seen))
            .unwrap_or(prefixes.len())
    });
    let best = most_shared(&prefixes, &others, light_below);
    if let Some(light_below) = light_below.filter(|_| best.0 == 0 && hints.first_of_make) {
        let heavy = |n: &[u8]| beyond_std(n, source.parent(), hints.includes, &mut Vec::new());
        return first_of_family(full, &prefixes, job, light_below, heavy);
    }
    let Some((c, n)) = prefixes.get(best.1) else {
        return (full, whole);
    };
    match job(n).filter(|_| best.0 >= 1) {
        Some(p) => {
            let _ = crate::builder::fs::write_atomic(&p.record.with_extension("seen"), b"");
            (p, *c)
        }
        None => (full, whole),
    }
}

/// One compile's PCH in a build ([`prefer_wrapper`], [`prefer_fewer`]): the job of its whole preamble, the job
/// it uses and the bytes of the source that one stands for, the job of its implicit
/// includes alone (an empty preamble: clang's HIP runtime wrapper), when it has one, and the
/// job of [`RUNTIME_PREAMBLE`] when its source [`hoists_runtime`].
#[derive(Clone)]
pub(crate) struct Choice {
    pub full: PchJob,
    pub chosen: PchJob,
    pub skip: usize,
    pub wrapper: Option<PchJob>,
    pub hoisted: Option<PchJob>,
}

/// How many compiles of a build share the PCH of [`RUNTIME_PREAMBLE`] before it is made for
/// them: it costs about twice the wrapper's PCH (1.0 s against 0.55 s for a device compile,
/// ROCm 5.2) and saves each compile 0.1 to 0.4 s beyond the wrapper's.
pub(crate) const HOISTED_MIN: usize = 3;

/// Whether the preamble of `text` includes `<hip/hip_runtime.h>` after nothing but headers of
/// the C and C++ standard libraries in angle brackets (no macro, no other directive, no
/// header of the project or of another library before it): a compile of it may then take
/// the PCH of [`RUNTIME_PREAMBLE`] and parse the whole source after it, its standard headers
/// after HIP's (which include most of them already; the source's own include of
/// `hip_runtime.h` is skipped by its guard). The same code objects and host objects as
/// without it (`integration/pch.rs`) and as hipcc's on the HeCBench sources that do so
/// (`integration/hip_fp16_crate.rs`); a compile with the PCH that fails or warns runs again
/// without it.
pub(crate) fn hoists_runtime(text: &[u8]) -> bool {
    let n = normalized(text, preamble_len(text));
    for line in String::from_utf8_lossy(&n).lines() {
        let Some(name) = angle_include(line) else {
            return false;
        };
        if name == "hip/hip_runtime.h" {
            return true;
        }
        if !STANDARD_HEADERS.contains(&name) {
            return false;
        }
    }
    false
}

/// The header `line` (a directive without comments) includes in angle brackets.
fn angle_include(line: &str) -> Option<&str> {
    let rest = line.trim().strip_prefix('#')?.trim_start();
    let name = rest.strip_prefix("include")?.trim();
    name.strip_prefix('<')?.strip_suffix('>')
}

/// Gives the compiles of a build that would use no PCH now the PCH of their implicit includes
/// alone (clang's HIP runtime wrapper: about half of a small source's compile, the same for
/// every source compiled with the same flags, whatever its directory): those whose own
/// preamble no other compile of the build shares and no build asked for (a cold build makes
/// a PCH used once only after it, in the background), when two or more of them share the
/// wrapper's PCH, or when a build of several sources (`several`) finds it made. Each then
/// skips none of its source. The code objects and host objects are the same (optimized
/// whole-program compiles, [`crate::builder::pch::job::preincludes_hip_wrapper`]; tested
/// against hipcc in `integration/hip_fp16_crate.rs`). Of those, the ones whose source
/// [`hoists_runtime`] take the PCH of the wrapper and HIP's runtime header instead
/// ([`RUNTIME_PREAMBLE`]) when [`HOISTED_MIN`] of them share it, or when a build of several
/// sources finds it made.
pub(crate) fn prefer_wrapper(choices: &mut [Option<Choice>], several: bool) {
    let mut uses: BTreeMap<u128, usize> = BTreeMap::new();
    for c in choices.iter().flatten() {
        *uses.entry(c.chosen.key).or_default() += 1;
    }
    // The compiles that would use no PCH now.
    let mut takers: Vec<bool> = (choices.iter().flatten())
        .map(|c| {
            let alone = c.chosen.key == c.full.key && uses.get(&c.chosen.key) == Some(&1);
            alone && !c.full.is_known() && c.wrapper.is_some()
        })
        .collect();
    give(
        choices,
        &mut takers,
        |c| c.hoisted.as_ref(),
        HOISTED_MIN,
        several,
    );
    give(choices, &mut takers, |c| c.wrapper.as_ref(), 2, several);
}

/// Gives the PCH `pick` names for each compile still a taker (`takers`, one per choice) when
/// `min` of those takers share it, or when a build of several sources (`several`) finds it
/// made: it skips none of its source and is a taker no more.
fn give(
    choices: &mut [Option<Choice>],
    takers: &mut [bool],
    pick: impl Fn(&Choice) -> Option<&PchJob>,
    min: usize,
    several: bool,
) {
    let mut serves: BTreeMap<u128, usize> = BTreeMap::new();
    for (c, _) in choices.iter().flatten().zip(&*takers).filter(|(_, t)| **t) {
        if let Some(p) = pick(c) {
            *serves.entry(p.key).or_default() += 1;
        }
    }
    for (c, taker) in choices.iter_mut().flatten().zip(takers.iter_mut()) {
        let Some(p) = pick(c).filter(|_| *taker).cloned() else {
            continue;
        };
        if serves.get(&p.key) >= Some(&min) || (several && p.record.is_file()) {
            c.chosen = p;
            c.skip = 0;
            *taker = false;
        }
    }
}

/// Sources of a build that share their whole preamble `W` (its PCH not made or asked for
/// yet) use instead a shorter PCH `P` that this build makes for other sources (the same
/// target and family, its preamble a beginning of theirs) when `W` adds little to it: `W`'s
/// PCH costs about what parsing `W` does, and each of its `n` sources would parse what `W`
/// reads beyond `P` instead, so `P` is taken when `n × (weight(W) − weight(P)) < weight(W)`,
/// a weight the bytes of the headers a preamble reads (`weigh`,
/// [`Weights`](crate::builder::pch::weight::Weights); `None`: unknown, `W` kept). `texts`:
/// each choice's source. Shorter preambles are decided first, so that a `W` goes to the `P`
/// its own sources still use. rocm-examples: four sources whose preamble is
/// `example_utils.hpp` (which includes `hip_runtime.h` and the standard headers) and standard
/// headers, `<numeric>` the only one it does not include already: 62 KB beyond its 4.3 MB,
/// so one PCH per target serves them and six others instead of two.
pub(crate) fn prefer_fewer(
    choices: &mut [Option<Choice>],
    texts: &[Option<&[u8]>],
    weigh: &(dyn Fn(&PchJob) -> Option<u64> + Sync),
) {
    let mut users: BTreeMap<u128, Vec<usize>> = BTreeMap::new();
    let mut chosen: BTreeMap<u128, PchJob> = BTreeMap::new();
    for (i, c) in choices.iter().enumerate() {
        if let Some(c) = c {
            users.entry(c.chosen.key).or_default().push(i);
            chosen
                .entry(c.chosen.key)
                .or_insert_with(|| c.chosen.clone());
        }
    }
    let mut order: Vec<&PchJob> = chosen.values().collect();
    order.sort_by_key(|p| (p.len(), p.key));
    let mut dropped: Vec<u128> = Vec::new();
    for w in order {
        let idxs = &users[&w.key];
        let whole = idxs.iter().all(|&i| {
            choices[i]
                .as_ref()
                .is_some_and(|c| c.full.key == w.key && texts.get(i).copied().flatten().is_some())
        });
        let Some(text) = idxs.first().and_then(|&i| texts[i]).filter(|_| whole) else {
            continue;
        };
        if w.is_known() {
            continue;
        }
        // The longest other PCH of this build that begins this preamble, and the bytes of
        // the source it stands for.
        let cuts = cut_points(text);
        let begins = |p: &PchJob| {
            let c = cuts
                .iter()
                .find(|&&c| c < w.len() && normalized(text, c) == p.preamble)?;
            Some(*c)
        };
        let shorter = chosen.values().filter(|p| {
            p.key != w.key
                && !dropped.contains(&p.key)
                && p.target == w.target
                && p.family == w.family
                && p.len() < w.len()
        });
        let Some((p, cut)) = shorter
            .filter_map(|p| Some((p, begins(p)?)))
            .max_by_key(|(p, _)| p.len())
        else {
            continue;
        };
        // Both asked at once (each may run the compiler's preprocessor).
        let (ww, wp) = std::thread::scope(|s| {
            let ww = s.spawn(|| weigh(w));
            let wp = weigh(p);
            (ww.join().ok().flatten(), wp)
        });
        let (Some(ww), Some(wp)) = (ww, wp) else {
            continue;
        };
        if (idxs.len() as u64).saturating_mul(ww.saturating_sub(wp)) >= ww {
            continue;
        }
        for &i in idxs {
            if let Some(c) = choices[i].as_mut() {
                c.chosen = p.clone();
                c.skip = cut;
            }
        }
        dropped.push(w.key);
    }
}

/// The PCH the first build of a family (of sources that share their first includes) run by
/// make makes (`prefixes`: the preamble's
/// shorter cuts with an include, and their normalized texts): the shortest prefix that
/// includes more than the standard library (`light_below`, its index), else the whole
/// preamble when it does (`heavy`, [`beyond_std`]), marked
/// seen so that this build makes it; else the whole preamble, unmarked (as for any build of
/// one source: made after the build, in the background). A lone build pays for the PCH
/// (a make of one source: about a third more for its cold build); with the builds make
/// starts beside it, the PCH is made once for all of them, each making another
/// architecture's while the others' lock is held
/// ([`Lifecycle::make`](crate::builder::pch::lifecycle::Lifecycle::make)).
fn first_of_family(
    full: PchJob,
    prefixes: &[(usize, Vec<u8>)],
    job: impl Fn(&[u8]) -> Option<PchJob>,
    light_below: usize,
    heavy: impl Fn(&[u8]) -> bool,
) -> (PchJob, usize) {
    let whole = full.len();
    let shortest = prefixes
        .get(light_below)
        .and_then(|(c, n)| Some((job(n)?, *c)));
    let (p, c) = match shortest {
        Some(found) => found,
        None if heavy(&full.preamble) => (full, whole),
        None => return (full, whole),
    };
    let _ = crate::builder::fs::write_atomic(&p.record.with_extension("seen"), b"");
    (p, c)
}

/// The prefix of `prefixes` (cut, normalized text) that the most of `others` (each source with
/// the texts of its prefixes) start with: how many, and its index. Of those as shared, for a
/// build of one source (`light_below`: `make -j`'s; the index of the first prefix that includes
/// more than the standard library) the shortest that includes more than the
/// standard library (which parses little), since the builds of later sources are likelier to
/// start with it too (one family rather than one per pair of sources); for a build of several,
/// the longest, which its sources share.
fn most_shared(
    prefixes: &[(usize, Vec<u8>)],
    others: &[(&Path, Vec<Vec<u8>>)],
    light_below: Option<usize>,
) -> (usize, usize) {
    let mut best = (0, 0);
    for (k, (_, n)) in prefixes.iter().enumerate() {
        let mut sources: Vec<&Path> = others
            .iter()
            .filter(|(_, texts)| texts.contains(n))
            .map(|(s, _)| *s)
            .collect();
        sources.dedup();
        let count = sources.len();
        let tie = count >= 1 && count == best.0 && light_below.is_none_or(|k| best.1 < k);
        if count > best.0 || tie {
            best = (count, k);
        }
    }
    best
}

/// The headers of the C and C++ standard libraries: a prefix of these alone is not preferred
/// to a longer one ([`prefer_shared`]).
const STANDARD_HEADERS: &[&str] = &[
    "algorithm",
    "any",
    "array",
    "atomic",
    "bit",
    "bitset",
    "cassert",
    "cctype",
    "cerrno",
    "cfloat",
    "charconv",
    "chrono",
    "cinttypes",
    "climits",
    "clocale",
    "cmath",
    "complex",
    "concepts",
    "condition_variable",
    "cstdarg",
    "cstddef",
    "cstdint",
    "cstdio",
    "cstdlib",
    "cstring",
    "ctime",
    "cwchar",
    "deque",
    "exception",
    "execution",
    "filesystem",
    "format",
    "forward_list",
    "fstream",
    "functional",
    "future",
    "initializer_list",
    "iomanip",
    "ios",
    "iosfwd",
    "iostream",
    "istream",
    "iterator",
    "limits",
    "list",
    "locale",
    "map",
    "memory",
    "mutex",
    "new",
    "numbers",
    "numeric",
    "optional",
    "ostream",
    "queue",
    "random",
    "ranges",
    "ratio",
    "regex",
    "set",
    "shared_mutex",
    "span",
    "sstream",
    "stack",
    "stdexcept",
    "streambuf",
    "string",
    "string_view",
    "system_error",
    "thread",
    "tuple",
    "type_traits",
    "typeindex",
    "typeinfo",
    "unordered_map",
    "unordered_set",
    "utility",
    "valarray",
    "variant",
    "vector",
    "assert.h",
    "ctype.h",
    "errno.h",
    "float.h",
    "inttypes.h",
    "limits.h",
    "math.h",
    "stdarg.h",
    "stdbool.h",
    "stddef.h",
    "stdint.h",
    "stdio.h",
    "stdlib.h",
    "string.h",
    "time.h",
];

/// Whether the (normalized) preamble text `n` includes a header other than the standard
/// library's ([`STANDARD_HEADERS`]): one in angle brackets, or a quoted one that does
/// (looked for in `dir`, the including file's directory, then in `includes`, the `-I`
/// directories; one not found counts as beyond), so that a light header of the project's
/// own (`"cmdparser.hpp"`, which includes standard headers alone) is told from one that
/// includes `hip_runtime.h`. `seen`: the headers read already, by this call or an earlier
/// one given the same `seen`, which found them light (each is read once; at most 64 in all).
fn beyond_std(n: &[u8], dir: Option<&Path>, includes: &[PathBuf], seen: &mut Vec<PathBuf>) -> bool {
    String::from_utf8_lossy(n).lines().any(|l| {
        let Some(rest) = l.trim_start().strip_prefix('#') else {
            return false;
        };
        let Some(name) = rest.trim_start().strip_prefix("include") else {
            return false;
        };
        let name = name.trim();
        let quoted = name.starts_with('"');
        let name = name.trim_matches(|c| matches!(c, '<' | '>' | '"'));
        if STANDARD_HEADERS.contains(&name) {
            return false;
        }
        if !quoted {
            return true;
        }
        let found = dir.into_iter().chain(includes.iter().map(PathBuf::as_path));
        let Some(header) = found.map(|d| d.join(name)).find(|h| h.is_file()) else {
            return true;
        };
        if seen.contains(&header) || seen.len() >= 64 {
            return false;
        }
        seen.push(header.clone());
        let Ok(text) = std::fs::read(&header) else {
            return true;
        };
        beyond_std(&text, header.parent(), includes, seen)
    })
}

/// What a build tells [`prefer_shared`] besides its sources.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Hints<'a> {
    /// A build of one source run by make ([`prefer_shared`]).
    pub(crate) first_of_make: bool,
    /// The build's `-I` directories, where quoted includes are looked for after the
    /// source's own ([`beyond_std`]).
    pub(crate) includes: &'a [PathBuf],
}

/// The file of the preamble of `job` for `source` in its family's directory `dir`.
pub(crate) fn family_entry(dir: &Path, job: &PchJob, source: &Path) -> PathBuf {
    let mut k = KeyBuilder::new(Domain::Preamble);
    k.u128(job.key).os(source.as_os_str());
    dir.join(format!("{:032x}", k.finish()))
}

/// Keeps the preamble of `job` for `source` in its family's directory (one file per
/// preamble and source: the source's path, a NUL, the preamble), unless it is there.
pub(crate) fn remember(dir: &Path, job: &PchJob, source: &Path) {
    let own = family_entry(dir, job, source);
    if !own.is_file() {
        let mut entry = source.as_os_str().as_encoded_bytes().to_vec();
        entry.push(0);
        entry.extend_from_slice(&job.preamble);
        let _ = std::fs::create_dir_all(dir);
        let _ = crate::builder::fs::write_atomic(&own, &entry);
    }
}

/// The preambles kept in the family directory `dir` other than that of `job` for `source`,
/// with their sources; the oldest go past [`FAMILY_KEPT`].
pub(crate) fn family(dir: &Path, job: &PchJob, source: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let own = family_entry(dir, job, source);
    let mut entries: Vec<(std::time::SystemTime, PathBuf)> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.path() != own && !e.file_name().to_string_lossy().starts_with('.'))
        .map(|e| {
            let t = e.metadata().and_then(|m| m.modified());
            (t.unwrap_or(std::time::UNIX_EPOCH), e.path())
        })
        .collect();
    entries.sort();
    let drop = entries.len().saturating_sub(FAMILY_KEPT);
    for (_, old) in entries.drain(..drop) {
        let _ = std::fs::remove_file(old);
    }
    entries
        .iter()
        .filter_map(|(_, p)| {
            let entry = std::fs::read(p).ok()?;
            let at = entry.iter().position(|&b| b == 0)?;
            Some((path_from(&entry[..at]), entry[at + 1..].to_vec()))
        })
        .collect()
}

/// A path from its bytes (as [`std::ffi::OsStr::as_encoded_bytes`] gave them on Unix).
pub(crate) fn path_from(bytes: &[u8]) -> PathBuf {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        PathBuf::from(OsStr::from_bytes(bytes))
    }
    #[cfg(not(unix))]
    PathBuf::from(String::from_utf8_lossy(bytes).into_owned())
}

#[cfg(test)]
mod tests {
    use super::beyond_std;
    use std::path::Path;

    fn beyond(n: &[u8], dir: Option<&Path>) -> bool {
        beyond_std(n, dir, &[], &mut Vec::new())
    }

    #[test]
    fn standard_headers_alone_are_not_beyond_std() {
        assert!(!beyond(b"#include <cstdio>\n#include <vector>\n", None));
        assert!(!beyond(b"#  include <stdio.h>\n#define X 1\n", None));
        assert!(beyond(
            b"#include <cstdio>\n#include <hip/hip_runtime.h>\n",
            None
        ));
        assert!(beyond(b"#include \"example_utils.hpp\"\n", None));
        assert!(beyond(b"#include <cuda_runtime.h>\n", None));
    }

    #[test]
    fn a_quoted_header_is_judged_by_what_it_includes() {
        let d = tempfile::tempdir().unwrap();
        let w = |name: &str, text: &str| std::fs::write(d.path().join(name), text).unwrap();
        w(
            "cmdparser.hpp",
            "#include <string>\n#include \"light.hpp\"\n",
        );
        w(
            "light.hpp",
            "#include <vector>\n#include \"cmdparser.hpp\"\n",
        );
        w(
            "utils.hpp",
            "#include <iostream>\n#include <hip/hip_runtime.h>\n",
        );
        let dir = Some(d.path());
        assert!(!beyond(b"#include \"cmdparser.hpp\"\n", dir));
        assert!(beyond(b"#include \"utils.hpp\"\n", dir));
        assert!(beyond(
            b"#include \"cmdparser.hpp\"\n#include \"utils.hpp\"\n",
            dir
        ));
        // Found in an -I directory, not beside the source.
        let elsewhere = tempfile::tempdir().unwrap();
        let includes = [d.path().to_path_buf()];
        let n = b"#include \"utils.hpp\"\n";
        assert!(beyond_std(
            n,
            Some(elsewhere.path()),
            &includes,
            &mut Vec::new()
        ));
        let n = b"#include \"cmdparser.hpp\"\n";
        assert!(!beyond_std(
            n,
            Some(elsewhere.path()),
            &includes,
            &mut Vec::new()
        ));
        // Not found anywhere: counted as beyond.
        assert!(beyond(b"#include \"missing.hpp\"\n", dir));
    }
}

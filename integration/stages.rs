//! The import rules of `ARCHITECTURE.md`, checked on the parsed sources (`syn`), not on their
//! text: doc comments and strings name no import, `#[cfg(test)]` code is left out.
//!
//! - the build crate's stages import only lower stages ([`STAGES`]);
//! - no crate has an import circle between its files.
//!
//! An import is a `use` item or a path that starts with `crate`, `super`, `self` or a child
//! module; it points at the file that defines the item (a name that a module re-exports is
//! followed to its file). A re-export (`pub use`) is no import: it passes a name on.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use syn::visit::Visit;

use crate::support::repo_root;

/// The stages of `crates/offload-build/src/builder`, lowest first: a file may import its own
/// stage and those below it. `""` is the builder's top-level files other than `mod.rs` (the
/// shared vocabulary: errors, commands, the configuration); `mod.rs` is the driver, above all.
const STAGES: &[&str] = &[
    "",
    "cache",
    "toolchain",
    "pch",
    "plan",
    "pack",
    "host",
    "run",
    "emit",
    "mod.rs",
];

/// A crate's module path (`["builder", "run", "exec"]`) of each source file.
fn modules(src: &Path) -> BTreeMap<Vec<String>, PathBuf> {
    let mut out = BTreeMap::new();
    for file in crate::support::files_under(src) {
        let rel = file.strip_prefix(src).unwrap();
        let mut m: Vec<String> = rel
            .iter()
            .map(|c| c.to_string_lossy().into_owned())
            .collect();
        let name = m.pop().unwrap();
        // A test module of its own (`tests.rs`, declared under `#[cfg(test)]`) is test code.
        if m.iter().any(|c| c == "generated") || name == "tests.rs" {
            continue;
        }
        let Some(stem) = name.strip_suffix(".rs") else {
            continue;
        };
        if !matches!(stem, "mod" | "lib" | "main") {
            m.push(stem.to_string());
        }
        out.insert(m, file);
    }
    out
}

/// What one file imports and defines.
#[derive(Default)]
struct FileFacts {
    /// Every path it names (`use` items expanded), made absolute.
    paths: Vec<Vec<String>>,
    /// Names it re-exports (`pub use`/`pub(crate) use`): name -> the absolute path.
    reexports: BTreeMap<String, Vec<String>>,
    /// Glob re-exports (`pub use a::*`): the absolute module paths.
    globs: Vec<Vec<String>>,
    /// Names of the items it defines at its top level.
    defines: BTreeSet<String>,
}

struct Collector<'a> {
    /// The module the code being read is in (an inline `mod x { … }` adds to the file's).
    module: Vec<String>,
    /// Every module of the crate, for `use child::x` (a path relative to the module).
    known: &'a BTreeMap<Vec<String>, PathBuf>,
    facts: FileFacts,
}

fn is_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("cfg") && {
            let t = a.meta.require_list().map(|l| l.tokens.to_string());
            t.is_ok_and(|t| t.contains("test") || t == "doc")
        }
    })
}

impl Collector<'_> {
    /// `segs` made absolute; `None` when it does not start with `crate`, `super` or `self`.
    fn absolute(&self, segs: &[String]) -> Option<Vec<String>> {
        let mut at = self.module.clone();
        let mut rest = segs;
        match segs.first().map(String::as_str) {
            Some("crate") => {
                at.clear();
                rest = &segs[1..];
            }
            Some("super") | Some("self") => {
                while let Some(s) = rest.first() {
                    match s.as_str() {
                        "super" => {
                            at.pop()?;
                        }
                        "self" => {}
                        _ => break,
                    }
                    rest = &rest[1..];
                }
            }
            Some(first) => {
                let mut child = at.clone();
                child.push(first.to_string());
                if !self.known.contains_key(&child) {
                    return None;
                }
            }
            None => return None,
        }
        at.extend(rest.iter().cloned());
        Some(at)
    }

    fn use_tree(&mut self, prefix: &mut Vec<String>, t: &syn::UseTree, public: bool) {
        match t {
            syn::UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                self.use_tree(prefix, &p.tree, public);
                prefix.pop();
            }
            syn::UseTree::Name(n) => self.named(prefix, &n.ident.to_string(), None, public),
            syn::UseTree::Rename(r) => {
                self.named(prefix, &r.ident.to_string(), Some(&r.rename), public)
            }
            syn::UseTree::Glob(_) => {
                if let Some(abs) = self.absolute(prefix) {
                    if public {
                        self.facts.globs.push(abs);
                    } else {
                        self.facts.paths.push(abs);
                    }
                }
            }
            syn::UseTree::Group(g) => {
                for t in &g.items {
                    self.use_tree(prefix, t, public);
                }
            }
        }
    }

    fn named(&mut self, prefix: &[String], name: &str, rename: Option<&syn::Ident>, public: bool) {
        let mut segs = prefix.to_vec();
        if name != "self" {
            segs.push(name.to_string());
        }
        if let Some(abs) = self.absolute(&segs) {
            if public {
                let as_name =
                    rename.map_or(segs.last().cloned().unwrap_or_default(), |r| r.to_string());
                self.facts.reexports.insert(as_name, abs);
            } else {
                self.facts.paths.push(abs);
            }
        }
    }
}

impl<'ast> Visit<'ast> for Collector<'_> {
    fn visit_item(&mut self, i: &'ast syn::Item) {
        let attrs = match i {
            syn::Item::Mod(m) => &m.attrs,
            syn::Item::Use(u) => &u.attrs,
            syn::Item::Fn(f) => &f.attrs,
            syn::Item::Impl(m) => &m.attrs,
            _ => &Vec::new(),
        };
        if is_test(attrs) {
            return;
        }
        syn::visit::visit_item(self, i);
    }

    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        let public = matches!(
            u.vis,
            syn::Visibility::Public(_) | syn::Visibility::Restricted(_)
        );
        self.use_tree(&mut Vec::new(), &u.tree, public);
    }

    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        // An inline module (`mod x { … }`) other than tests: its paths are read as the file's.
        if m.content.is_some() {
            self.module.push(m.ident.to_string());
            syn::visit::visit_item_mod(self, m);
            self.module.pop();
        }
    }

    fn visit_visibility(&mut self, _: &'ast syn::Visibility) {
        // `pub(super)`, `pub(in crate::x)`: who may see an item, no import.
    }

    fn visit_path(&mut self, p: &'ast syn::Path) {
        let segs: Vec<String> = p.segments.iter().map(|s| s.ident.to_string()).collect();
        // One segment is a local name (a variable named like a child module), not a path.
        if segs.len() < 2 && !matches!(segs[0].as_str(), "self" | "super" | "crate") {
            syn::visit::visit_path(self, p);
            return;
        }
        if let Some(abs) = self.absolute(&segs) {
            self.facts.paths.push(abs);
        }
        syn::visit::visit_path(self, p);
    }
}

fn facts(file: &Path, module: &[String], known: &BTreeMap<Vec<String>, PathBuf>) -> FileFacts {
    let text = std::fs::read_to_string(file).unwrap();
    let ast = syn::parse_file(&text).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    let mut c = Collector {
        module: module.to_vec(),
        known,
        facts: FileFacts::default(),
    };
    for item in &ast.items {
        let name = match item {
            syn::Item::Fn(f) => Some(f.sig.ident.to_string()),
            syn::Item::Struct(s) => Some(s.ident.to_string()),
            syn::Item::Enum(e) => Some(e.ident.to_string()),
            syn::Item::Const(c) => Some(c.ident.to_string()),
            syn::Item::Static(s) => Some(s.ident.to_string()),
            syn::Item::Type(t) => Some(t.ident.to_string()),
            syn::Item::Trait(t) => Some(t.ident.to_string()),
            syn::Item::Macro(m) => m.ident.as_ref().map(|i| i.to_string()),
            _ => None,
        };
        c.facts.defines.extend(name);
        c.visit_item(item);
    }
    c.facts
}

/// Each file of the crate at `src` and the files it imports from.
fn file_graph(src: &Path) -> BTreeMap<PathBuf, BTreeSet<PathBuf>> {
    let mods = modules(src);
    let all: BTreeMap<&Vec<String>, FileFacts> =
        mods.iter().map(|(m, f)| (m, facts(f, m, &mods))).collect();
    // The file that defines what `path` names: the deepest module file on the path, then
    // through that file's re-exports.
    let resolve = |path: &[String]| -> Option<PathBuf> {
        let mut path = path.to_vec();
        for _ in 0..8 {
            let n = (0..=path.len())
                .rev()
                .find(|&n| mods.contains_key(&path[..n]))?;
            let module = path[..n].to_vec();
            let Some(item) = path.get(n) else {
                return Some(mods[&module].clone());
            };
            let f = &all[&module];
            if f.defines.contains(item) {
                return Some(mods[&module].clone());
            }
            if let Some(to) = f.reexports.get(item) {
                let mut next = to.clone();
                next.extend(path[n + 1..].iter().cloned());
                path = next;
                continue;
            }
            let glob = f.globs.iter().find(|g| {
                all.get(g)
                    .is_some_and(|gf| gf.defines.contains(item) || gf.reexports.contains_key(item))
            });
            match glob {
                Some(g) => {
                    let mut next = g.clone();
                    next.extend(path[n..].iter().cloned());
                    path = next;
                }
                None => return Some(mods[&module].clone()),
            }
        }
        None
    };
    let mut graph = BTreeMap::new();
    for (m, file) in &mods {
        let to: BTreeSet<PathBuf> = all[m]
            .paths
            .iter()
            .filter_map(|p| resolve(p))
            .filter(|t| t != file)
            .collect();
        graph.insert(file.clone(), to);
    }
    graph
}

/// A circle of `graph`, if it has one (depth-first search for a back edge); also used by
/// `architecture.rs` for offload-formats' top-level modules.
pub(crate) fn circle<T: Ord + Clone>(graph: &BTreeMap<T, BTreeSet<T>>) -> Option<Vec<T>> {
    fn visit<T: Ord + Clone>(
        f: &T,
        graph: &BTreeMap<T, BTreeSet<T>>,
        state: &mut BTreeMap<T, u8>,
        path: &mut Vec<T>,
    ) -> Option<Vec<T>> {
        match state.get(f) {
            Some(1) => {
                let at = path.iter().position(|p| p == f).unwrap();
                let mut c = path[at..].to_vec();
                c.push(f.clone());
                return Some(c);
            }
            Some(2) => return None,
            _ => {}
        }
        state.insert(f.clone(), 1);
        path.push(f.clone());
        for to in graph.get(f).into_iter().flatten() {
            if let Some(c) = visit(to, graph, state, path) {
                return Some(c);
            }
        }
        path.pop();
        state.insert(f.clone(), 2);
        None
    }
    let mut state = BTreeMap::new();
    graph
        .keys()
        .find_map(|f| visit(f, graph, &mut state, &mut Vec::new()))
}

/// The stage of a file of the builder (an index into [`STAGES`]); `None` outside it.
fn stage(builder: &Path, file: &Path) -> Option<usize> {
    let rel = file.strip_prefix(builder).ok()?;
    let mut parts = rel.iter().map(|p| p.to_string_lossy().into_owned());
    let first = parts.next()?;
    // A file in a room is that room's; of the folder's own files, `mod.rs` is the driver and
    // the others are the shared vocabulary ("").
    let name = if rel.components().count() > 1 || first == "mod.rs" {
        first
    } else {
        String::new()
    };
    let at = STAGES.iter().position(|s| *s == name);
    assert!(at.is_some(), "{} is in no stage of STAGES", rel.display());
    at
}

fn show(root: &Path, files: &[PathBuf]) -> String {
    let names: Vec<String> = files
        .iter()
        .map(|f| f.strip_prefix(root).unwrap_or(f).display().to_string())
        .collect();
    names.join(" -> ")
}

#[test]
fn build_stages_import_only_lower_stages() {
    let root = repo_root();
    let builder = root.join("crates/offload-build/src/builder");
    let graph = file_graph(&root.join("crates/offload-build/src"));
    let mut wrong = Vec::new();
    for (from, tos) in &graph {
        let Some(s) = stage(&builder, from) else {
            continue;
        };
        for to in tos {
            if let Some(t) = stage(&builder, to) {
                if t > s {
                    wrong.push(format!(
                        "{} (stage {:?}) imports {} (stage {:?})",
                        show(&root, std::slice::from_ref(from)),
                        STAGES[s],
                        show(&root, std::slice::from_ref(to)),
                        STAGES[t]
                    ));
                }
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "a lower stage imports a higher one:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn no_crate_has_an_import_circle() {
    let root = repo_root();
    for krate in ["offload-formats", "offload-build", "offload-cli"] {
        let graph = file_graph(&root.join("crates").join(krate).join("src"));
        if let Some(c) = circle(&graph) {
            panic!("an import circle in {krate}: {}", show(&root, &c));
        }
    }
}

/// The checks can fail: a stage that imports a higher one, and a circle, are found.
#[test]
fn the_stage_check_sees_an_upward_import_and_a_circle() {
    let dir = tempfile::tempdir().unwrap();
    let b = dir.path().join("builder");
    std::fs::create_dir_all(b.join("cache")).unwrap();
    std::fs::create_dir_all(b.join("run")).unwrap();
    std::fs::write(dir.path().join("lib.rs"), "mod builder;\n").unwrap();
    std::fs::write(b.join("mod.rs"), "mod cache;\nmod run;\n").unwrap();
    std::fs::write(b.join("cache/mod.rs"), "pub(crate) mod keys;\n").unwrap();
    // A doc comment names no import; the code's path does.
    std::fs::write(
        b.join("cache/keys.rs"),
        "//! See [`crate::builder::run::exec`].\nfn f() { crate::builder::run::exec::go(); }\n",
    )
    .unwrap();
    std::fs::write(b.join("run/mod.rs"), "pub(crate) mod exec;\n").unwrap();
    std::fs::write(
        b.join("run/exec.rs"),
        "use super::super::cache::keys::f;\npub(crate) fn go() {}\n",
    )
    .unwrap();
    let graph = file_graph(dir.path());
    let keys = b.join("cache/keys.rs");
    let exec = b.join("run/exec.rs");
    assert!(graph[&keys].contains(&exec));
    assert!(stage(&b, &keys) < stage(&b, &exec));
    assert!(circle(&graph).is_some());
    std::fs::write(
        b.join("cache/keys.rs"),
        "//! [`crate::builder::run::exec`]\n",
    )
    .unwrap();
    let graph = file_graph(dir.path());
    assert!(graph[&keys].is_empty(), "a doc comment is no import");
    assert!(circle(&graph).is_none());
}

/// What the jobs stage (`builder/run/`) may not hold (issue 48): it runs the job graph and
/// decides nothing, so no compiler's name (which way a compile runs is the plan's,
/// [`Way`](../crates/offload-build/src/builder/job.rs)) and no count of cores or threads (the
/// plan's, and the executor's slots); no host compile is spelled outside the host stage,
/// which plans its nodes in one place; the executor of the job graph keeps no state per
/// thread (a node's slot is a value it holds). `code` is a file's text without its
/// comments; what is found, as `<what>: <text>`.
fn forbidden(path: &str, code: &str) -> Vec<String> {
    let mut found = Vec::new();
    let in_run = path.contains("/builder/run/");
    let mut look = |what: &str, needles: &[&str]| {
        for n in needles {
            if code.contains(n) {
                found.push(format!("{what}: {n}"));
            }
        }
    };
    if in_run {
        look(
            "a compiler's name in the jobs stage",
            &["\"nvcc", "\"cicc", "\"ptxas", "\"clang", "\"hipcc"],
        );
        look(
            "a thread count in the jobs stage",
            &["available_parallelism", "--threads"],
        );
    }
    if in_run || path.ends_with("/builder/graph.rs") {
        look("state per thread in the jobs stage", &["thread_local!"]);
    }
    if !path.contains("/builder/host/") && !path.contains("/builder/toolchain/") {
        look(
            "a host compile planned outside the host stage",
            &[
                "clang::host_job(",
                "host_job_rdc(",
                "nvcc::host_job(",
                "nvcc::device_link(",
            ],
        );
    }
    found
}

/// A Rust file's text without its comments (`//` to the end of a line, outside strings).
fn without_comments(text: &str) -> String {
    text.lines()
        .map(|l| {
            let mut in_str = false;
            let b = l.as_bytes();
            for i in 0..b.len() {
                match b[i] {
                    b'"' if i == 0 || b[i - 1] != b'\\' => in_str = !in_str,
                    b'/' if !in_str && b.get(i + 1) == Some(&b'/') => return &l[..i],
                    _ => {}
                }
            }
            l
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The jobs stage runs and decides nothing and stays small; the host stage plans its own
/// nodes; the job graph's executor keeps no state per thread ([`forbidden`]).
#[test]
fn the_jobs_stage_decides_nothing_and_the_host_stage_plans_its_nodes() {
    let builder = repo_root().join("crates/offload-build/src/builder");
    let mut problems = Vec::new();
    let mut run_lines = 0;
    for file in crate::support::files_under(&builder) {
        if file.extension().is_none_or(|e| e != "rs") {
            continue;
        }
        let text = std::fs::read_to_string(&file).unwrap();
        let path = file.to_string_lossy().into_owned();
        if path.contains("/builder/run/") {
            run_lines += text.lines().count();
        }
        // Tests may name compilers.
        let code = without_comments(text.split("#[cfg(test)]").next().unwrap_or(""));
        for f in forbidden(&path, &code) {
            problems.push(format!(
                "{}: {f}",
                file.strip_prefix(&builder).unwrap().display()
            ));
        }
    }
    assert!(problems.is_empty(), "{problems:#?}");
    assert!(
        run_lines <= 2500,
        "builder/run/ has {run_lines} lines, more than 2,500: what decides belongs to the plan"
    );
}

/// The rule of the jobs stage can fail: a program name, a core count, a thread-local and a
/// host compile spelled in the jobs stage are found; comments are not code.
#[test]
fn the_jobs_stage_rule_sees_what_it_forbids() {
    let run = "x/builder/run/job.rs";
    let code = "if p.starts_with(\"nvcc\") {}\nlet n = std::thread::available_parallelism();\n\
                thread_local! { static S: u8 = 0; }\nlet j = nvcc::host_job(o);";
    let found = forbidden(run, &without_comments(code));
    assert_eq!(found.len(), 4, "{found:?}");
    let commented = "// \"nvcc\" runs it; available_parallelism\nlet x = \"a // b\";";
    assert!(forbidden(run, &without_comments(commented)).is_empty());
    assert!(forbidden("x/builder/host/mod.rs", "clang::host_job(o)").is_empty());
    assert_eq!(forbidden("x/builder/graph.rs", "thread_local! {}").len(), 1);
}

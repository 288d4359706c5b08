//! No import cycle among the domain's modules (`cargo xtask ci`): each module's `use
//! crate::…`, `use super::…` and `use self::…` lines (re-exports included), resolved to the
//! deepest module they name, and each module's own submodules make a graph; a strongly
//! connected component of two or more modules is a cycle, reported with the edges that close
//! it. So a module never imports what its ancestors define (the `services` root, say),
//! except a type whose `impl` it continues. Test code (`tests.rs`,
//! `testing/`, a file's inline `mod tests`) is left out: tests may reach anywhere.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use anyhow::{Context, bail};

/// A module path below `crate`, e.g. `["services", "hitl"]`.
type Module = Vec<String>;

pub fn check(src: &Path) -> anyhow::Result<()> {
    let mut sources = BTreeMap::new();
    collect(src, src, &mut sources)?;
    let graph = graph(&sources);
    let cycles = cycles(&graph);
    if cycles.is_empty() {
        println!("    {} modules of {}, no import cycle", sources.len(), src.display());
        return Ok(());
    }
    let mut report = String::new();
    for cycle in &cycles {
        report.push_str(&format!("\n  cycle of {} modules:", cycle.len()));
        for from in cycle {
            let to: Vec<String> = graph[from].iter().filter(|t| cycle.contains(t)).map(name).collect();
            report.push_str(&format!("\n    {} imports {}", name(from), to.join(", ")));
        }
    }
    bail!("the domain's modules import one another in a loop:{report}")
}

fn name(module: &Module) -> String {
    std::iter::once("crate").chain(module.iter().map(String::as_str)).collect::<Vec<_>>().join("::")
}

/// Every non-test source file under `dir` by its module path.
fn collect(root: &Path, dir: &Path, out: &mut BTreeMap<Module, String>) -> anyhow::Result<()> {
    for entry in std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))? {
        let path = entry?.path();
        let file = path.file_name().and_then(|n| n.to_str()).unwrap_or_default().to_owned();
        if path.is_dir() {
            if file != "testing" {
                collect(root, &path, out)?;
            }
            continue;
        }
        let Some(stem) = file.strip_suffix(".rs") else { continue };
        if stem == "tests" {
            continue;
        }
        let rel = path.parent().and_then(|p| p.strip_prefix(root).ok()).context("a path outside the root")?;
        let mut module: Module = rel.iter().map(|s| s.to_string_lossy().into_owned()).collect();
        if !matches!(stem, "mod" | "lib") {
            module.push(stem.to_owned());
        }
        let text = std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
        // An inline `mod tests { … }` (at the end of a file, by convention) is test code; a
        // `mod tests;` declaration names a `tests.rs`, left out above.
        let text = text.replace("#[cfg(test)]\nmod tests;", "");
        let text = text.split("#[cfg(test)]\nmod tests {").next().unwrap_or_default().to_owned();
        out.insert(module, text);
    }
    Ok(())
}

/// Each module and the modules it imports or declares. An import through a re-export
/// (`pub use role::Role` in `model`) counts as an import of the module that defines the item.
fn graph(sources: &BTreeMap<Module, String>) -> BTreeMap<Module, BTreeSet<Module>> {
    let modules: BTreeSet<&Module> = sources.keys().collect();
    // Each module's imports as absolute paths, and its re-exports by the name they give.
    let mut imports: BTreeMap<&Module, Vec<Module>> = BTreeMap::new();
    let mut reexports: BTreeMap<(Module, String), Module> = BTreeMap::new();
    for (module, text) in sources {
        for (public, tree) in use_trees(text) {
            for (path, alias) in expand(&tree) {
                // `use child::…` inside a module names its own submodule.
                let relative = path.first().map(|first| [module.as_slice(), std::slice::from_ref(first)].concat());
                let absolute = match absolute(module, &path) {
                    Some(absolute) => absolute,
                    None if relative.as_ref().is_some_and(|r| modules.contains(r)) => {
                        [module.as_slice(), &path].concat()
                    }
                    None => continue,
                };
                let name = alias.or_else(|| absolute.last().cloned()).unwrap_or_default();
                if public {
                    reexports.insert((module.clone(), name.clone()), absolute.clone());
                }
                // A module that writes `impl T { … }` for an imported `T` is part of `T`'s
                // definition, split over files (the anomaly detector's half of
                // `AnomalyService`): that import is no dependency of its own.
                if !public && (text.contains(&format!("impl {name} {{")) || text.contains(&format!("impl {name}<"))) {
                    continue;
                }
                imports.entry(module).or_default().push(absolute);
            }
        }
    }
    // The module that defines what `path` names, following re-exports.
    let defining = |mut path: Module| -> Option<Module> {
        for _ in 0..16 {
            let deepest = (0..=path.len()).rev().map(|n| path[..n].to_vec()).find(|m| modules.contains(m))?;
            let Some(name) = path.get(deepest.len()) else { return Some(deepest) };
            match reexports.get(&(deepest.clone(), name.clone())) {
                Some(target) if *target != path => path = [target.as_slice(), &path[deepest.len() + 1..]].concat(),
                _ => return Some(deepest),
            }
        }
        None
    };
    let mut graph = BTreeMap::new();
    for module in sources.keys() {
        let mut targets: BTreeSet<Module> = imports
            .get(module)
            .into_iter()
            .flatten()
            .filter_map(|path| defining(path.clone()))
            .filter(|target| target != module)
            .collect();
        // A module depends on the submodules it declares: importing what an ancestor itself
        // defines (the `services` root's `Ports`, say) closes a loop.
        targets.extend(
            modules.iter().filter(|m| m.len() == module.len() + 1 && m.starts_with(module)).map(|m| (*m).clone()),
        );
        graph.insert(module.clone(), targets);
    }
    graph
}

/// Every `use …;` item: whether it is a re-export (`pub use`), and its tree.
fn use_trees(text: &str) -> Vec<(bool, String)> {
    let mut out = Vec::new();
    for (i, _) in text.match_indices("use ") {
        let before = text[..i].chars().last();
        if before.is_some_and(|c| !(c.is_whitespace() || c == ';' || c == '{' || c == '}' || c == ')')) {
            continue;
        }
        // Only the file's own items, at the start of a line (rustfmt's layout): not the
        // imports of a function or an inline module.
        let line_start = text[..i].rfind('\n').map_or(0, |n| n + 1);
        let lead = &text[line_start..i];
        if !(lead.is_empty() || lead.starts_with("pub")) {
            continue;
        }
        if let Some(end) = text[i..].find(';') {
            let tree = text[i + 4..i + end].split_whitespace().collect::<Vec<_>>().join(" ");
            let mut tight = tree;
            for p in ["::", "{", "}", ","] {
                tight = tight.replace(&format!(" {p}"), p).replace(&format!("{p} "), p);
            }
            out.push((lead.starts_with("pub"), tight));
        }
    }
    out
}

/// `a::{b, c::{d, e as f}}` as `a::b`, `a::c::d`, `a::c::e` (with its alias `f`); globs dropped.
fn expand(tree: &str) -> Vec<(Vec<String>, Option<String>)> {
    let tree = tree.trim();
    let Some(open) = tree.find('{') else {
        let mut parts = tree.split(" as ");
        let path = parts.next().unwrap_or_default();
        let alias = parts.next().map(str::to_owned).filter(|a| a != "_");
        let path: Vec<String> = path.split("::").filter(|s| !s.is_empty()).map(str::to_owned).collect();
        if path.last().is_some_and(|s| s == "*") {
            return Vec::new();
        }
        return vec![(path, alias)];
    };
    let prefix: Vec<String> = tree[..open].split("::").filter(|s| !s.is_empty()).map(str::to_owned).collect();
    let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (i, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&inner[start..]);
    let mut out = Vec::new();
    for part in parts.into_iter().filter(|p| !p.trim().is_empty()) {
        for (rest, alias) in expand(part) {
            let mut path = prefix.clone();
            // `self` inside braces names the prefix itself.
            path.extend(rest.into_iter().filter(|s| s != "self"));
            out.push((path, alias));
        }
    }
    out
}

/// A `use` path from `module` as a path below `crate`; `None` for another crate's.
fn absolute(module: &Module, path: &[String]) -> Option<Module> {
    let mut segments = path.iter().peekable();
    let mut base: Module = match segments.peek().map(|s| s.as_str()) {
        Some("crate") => {
            segments.next();
            Vec::new()
        }
        Some("self") => {
            segments.next();
            module.clone()
        }
        Some("super") => module.clone(),
        _ => return None,
    };
    while segments.peek().is_some_and(|s| *s == "super") {
        segments.next();
        base.pop();
    }
    base.extend(segments.cloned());
    Some(base)
}

/// The strongly connected components of two or more modules (Tarjan).
fn cycles(graph: &BTreeMap<Module, BTreeSet<Module>>) -> Vec<Vec<Module>> {
    struct State<'a> {
        graph: &'a BTreeMap<Module, BTreeSet<Module>>,
        index: BTreeMap<&'a Module, usize>,
        low: BTreeMap<&'a Module, usize>,
        stack: Vec<&'a Module>,
        on_stack: BTreeSet<&'a Module>,
        next: usize,
        found: Vec<Vec<Module>>,
    }
    fn visit<'a>(s: &mut State<'a>, v: &'a Module) {
        s.index.insert(v, s.next);
        s.low.insert(v, s.next);
        s.next += 1;
        s.stack.push(v);
        s.on_stack.insert(v);
        let graph = s.graph;
        for w in graph.get(v).into_iter().flatten() {
            let Some((w, _)) = graph.get_key_value(w) else { continue };
            if !s.index.contains_key(w) {
                visit(s, w);
                let low = s.low[v].min(s.low[w]);
                s.low.insert(v, low);
            } else if s.on_stack.contains(w) {
                let low = s.low[v].min(s.index[w]);
                s.low.insert(v, low);
            }
        }
        if s.low[v] == s.index[v] {
            let mut component = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack.remove(w);
                component.push(w.clone());
                if w == v {
                    break;
                }
            }
            if component.len() > 1 {
                component.sort();
                s.found.push(component);
            }
        }
    }
    let mut state = State {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        next: 0,
        found: Vec::new(),
    };
    for v in graph.keys() {
        if !state.index.contains_key(v) {
            visit(&mut state, v);
        }
    }
    state.found
}

#[cfg(test)]
mod tests {

    use super::*;

    fn m(path: &str) -> Module {
        path.split("::").filter(|s| !s.is_empty()).map(str::to_owned).collect()
    }

    fn sources(files: &[(&str, &str)]) -> BTreeMap<Module, String> {
        files.iter().map(|(module, text)| (m(module), (*text).to_owned())).collect()
    }

    #[test]
    fn use_trees_are_expanded_and_resolved() {
        let expanded: Vec<Module> =
            expand("crate::a::{b, c::{d, e as f}, self, g::*}").into_iter().map(|(p, _)| p).collect();
        assert_eq!(expanded, [m("crate::a::b"), m("crate::a::c::d"), m("crate::a::c::e"), m("crate::a")]);
        assert_eq!(expand("crate::a::e as f")[0].1.as_deref(), Some("f"));
        assert_eq!(absolute(&m("services::hitl"), &m("super::policies::X")), Some(m("services::policies::X")));
        assert_eq!(absolute(&m("services::hitl"), &m("super::super::model")), Some(m("model")));
        assert_eq!(absolute(&m("a"), &m("serde::Serialize")), None);
        let text =
            "use std::x;\npub use crate::b::{C, d::E as F};\nfn g() {\n    use super::f;\n}\npub(crate) use self::h;";
        let trees: Vec<(bool, String)> = use_trees(text);
        assert_eq!(
            trees,
            [(false, "std::x".into()), (true, "crate::b::{C,d::E as F}".into()), (true, "self::h".into())]
        );
    }

    #[test]
    fn continuing_an_impl_in_a_submodule_is_no_loop() {
        let split = sources(&[
            ("anomalies", "mod detector;\npub struct AnomalyService;\nuse detector::State;"),
            ("anomalies::detector", "use super::AnomalyService;\npub struct State;\nimpl AnomalyService {\n}"),
        ]);
        assert!(cycles(&graph(&split)).is_empty());
    }

    #[test]
    fn imports_through_a_facade_count_for_the_defining_module() {
        let facade = sources(&[
            ("model", "mod role;\nmod user;\npub use role::Role;\npub use user::User;"),
            ("model::role", ""),
            ("model::user", "use crate::model::Role;"),
        ]);
        let graph = graph(&facade);
        assert!(graph[&m("model::user")].contains(&m("model::role")));
        assert!(cycles(&graph).is_empty());
    }

    #[test]
    fn a_loop_is_found_and_a_downward_graph_is_not() {
        let looped = sources(&[
            ("services", "pub use agents::AgentService;\npub struct Ports;"),
            ("services::agents", "use super::Ports;\nuse crate::model::Agent;"),
            ("services::hitl", "use super::agents::AgentService;"),
            ("model", ""),
        ]);
        // The root declares `hitl`, which imports `agents`, which imports the root.
        assert_eq!(cycles(&graph(&looped)), [vec![m("services"), m("services::agents"), m("services::hitl")]]);
        let downward = sources(&[
            ("services", "pub use agents::AgentService;"),
            ("services::agents", "use crate::ports::Ports;\nuse crate::model::Agent;"),
            ("services::hitl", "use super::agents::AgentService;"),
            ("ports", "use crate::model::Agent;"),
            ("model", ""),
        ]);
        assert!(cycles(&graph(&downward)).is_empty());
    }

    /// The domain as it is in the tree: `cargo test` reports a new cycle before CI does.
    #[test]
    fn the_domain_has_no_import_cycle() {
        let src = crate::cmd::root().join("crates").join("domain").join("src");
        check(&src).unwrap();
    }
}

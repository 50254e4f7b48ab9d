//! The crate's modules import one another one way only: a test reads every `crate::` path in
//! `src/` (outside comments and `#[cfg(test)]` blocks), maps it to the module file that
//! defines it, and fails on any circle of modules, and on any circle among the top-level
//! modules of `src/` (each folder or file counted as one: `gpu/device/encoder.rs` is `gpu`).
//!
//! The layers are `LAYERS` in the tests below, bottom first, and a top-level module imports
//! only from those before it: a new module takes its place in the list.

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, BTreeSet};
    use std::path::Path;

    use crate::cmd::root;

    type Module = Vec<String>;

    /// The top-level modules of `src/`, bottom first: the vocabulary (`error` to `stream`),
    /// observing (`observe`: the clock, profiles, busy spans, transfers; everything emits to
    /// it and it imports none of them), what a node is made of (`graph`: shapes, layouts, primitives), memory and an array's copies (`memory`, `storage`),
    /// the graph (`array`), the CPU evaluator (`cpu`), building and rewriting graphs (`ops`,
    /// `transforms`: fusion, `compile` and the function transforms; `optimizers`), the GPU
    /// evaluator (`gpu`), then what runs it all (`scheduler`, `startup`, `runtime`,
    /// `raw_block`) and the wasm-bindgen layer (`js`). The crate root (`lib.rs`) sits above
    /// them all.
    pub(super) const LAYERS: [&str; 19] = [
        "error",
        "dtype",
        "stream",
        "observe",
        "graph",
        "memory",
        "storage",
        "array",
        "cpu",
        "ops",
        "transforms",
        "optimizers",
        "weights",
        "gpu",
        "scheduler",
        "startup",
        "runtime",
        "raw_block",
        "js",
    ];

    /// Every module of `src/` (`["memory", "heap"]`) with its source.
    fn modules(dir: &Path, prefix: &[String], out: &mut BTreeMap<Module, String>) {
        let mut entries: Vec<_> = std::fs::read_dir(dir).unwrap().flatten().collect();
        entries.sort_by_key(|e| e.path());
        for entry in entries {
            let path = entry.path();
            let name = path.file_stem().unwrap().to_string_lossy().into_owned();
            if path.is_dir() {
                let mut inner = prefix.to_vec();
                inner.push(name);
                modules(&path, &inner, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let mut module = prefix.to_vec();
                if name != "mod" && name != "lib" {
                    module.push(name);
                }
                out.insert(module, std::fs::read_to_string(&path).unwrap());
            }
        }
    }

    /// The source without comments and without the unit tests at its end.
    fn code(source: &str) -> String {
        let body = source.split("#[cfg(test)]\nmod tests").next().unwrap_or("");
        body.lines()
            .map(|line| line.split("//").next().unwrap_or(""))
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// The paths after each `crate::`, with `{a, b::c}` groups expanded one level.
    fn crate_paths(code: &str) -> Vec<Vec<String>> {
        let mut paths = Vec::new();
        for (at, _) in code.match_indices("crate::") {
            let rest = &code[at + "crate::".len()..];
            let end = rest
                .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
                .unwrap_or(rest.len());
            let base: Vec<String> = rest[..end]
                .split("::")
                .filter(|s| !s.is_empty())
                .map(String::from)
                .collect();
            let group = rest[end..]
                .strip_prefix('{')
                .map(|g| &g[..g.find('}').unwrap_or(0)]);
            let grouped = rest[..end].is_empty() || rest[..end].ends_with("::");
            match group.filter(|_| grouped) {
                Some(items) => {
                    for item in items.split(',') {
                        let mut path = base.clone();
                        let item = item.split_whitespace().next().unwrap_or("");
                        path.extend(item.split("::").filter(|s| !s.is_empty()).map(String::from));
                        paths.push(path);
                    }
                }
                None => paths.push(base),
            }
        }
        paths
    }

    /// The deepest module that `path` names or names an item of.
    fn resolve(path: &[String], modules: &BTreeMap<Module, String>) -> Option<Module> {
        (1..=path.len())
            .rev()
            .map(|n| path[..n].to_vec())
            .find(|m| modules.contains_key(m))
    }

    /// The modules on a circle, if any: a depth-first search for a back edge.
    fn find_circle(edges: &BTreeMap<Module, BTreeSet<Module>>) -> Option<Vec<Module>> {
        fn visit(
            node: &Module,
            edges: &BTreeMap<Module, BTreeSet<Module>>,
            stack: &mut Vec<Module>,
            done: &mut BTreeSet<Module>,
        ) -> Option<Vec<Module>> {
            if let Some(at) = stack.iter().position(|m| m == node) {
                return Some(stack[at..].to_vec());
            }
            if done.contains(node) {
                return None;
            }
            stack.push(node.clone());
            for next in edges.get(node).into_iter().flatten() {
                if let Some(circle) = visit(next, edges, stack, done) {
                    return Some(circle);
                }
            }
            stack.pop();
            done.insert(node.clone());
            None
        }
        let mut done = BTreeSet::new();
        edges
            .keys()
            .find_map(|node| visit(node, edges, &mut Vec::new(), &mut done))
    }

    #[test]
    fn the_crates_modules_import_each_other_one_way() {
        let mut all = BTreeMap::new();
        modules(&root().join("src"), &[], &mut all);
        assert!(all.len() > 50, "read {} modules", all.len());
        let mut edges: BTreeMap<Module, BTreeSet<Module>> = BTreeMap::new();
        for (module, source) in &all {
            let targets = crate_paths(&code(source))
                .into_iter()
                .filter_map(|p| resolve(&p, &all))
                .filter(|t| t != module && !t.is_empty());
            edges.entry(module.clone()).or_default().extend(targets);
        }
        if let Some(circle) = find_circle(&edges) {
            let names: Vec<String> = circle.iter().map(|m| m.join("/")).collect();
            panic!(
                "modules import each other in a circle: {}",
                names.join(" -> ")
            );
        }
    }

    /// Each module's top-level module: the folder or file of `src/` it is in.
    fn top_level(edges: &BTreeMap<Module, BTreeSet<Module>>) -> BTreeMap<Module, BTreeSet<Module>> {
        let top = |m: &Module| m[..1.min(m.len())].to_vec();
        let mut tops: BTreeMap<Module, BTreeSet<Module>> = BTreeMap::new();
        for (from, targets) in edges {
            let entry = tops.entry(top(from)).or_default();
            entry.extend(targets.iter().map(top).filter(|t| *t != top(from)));
        }
        tops
    }

    #[test]
    fn the_top_level_modules_import_each_other_one_way() {
        let mut all = BTreeMap::new();
        modules(&root().join("src"), &[], &mut all);
        let mut edges: BTreeMap<Module, BTreeSet<Module>> = BTreeMap::new();
        for (module, source) in &all {
            let targets = crate_paths(&code(source))
                .into_iter()
                .filter_map(|p| resolve(&p, &all))
                .filter(|t| !t.is_empty());
            edges.entry(module.clone()).or_default().extend(targets);
        }
        edges.remove(&Vec::new());
        let tops = top_level(&edges);
        let layer = |m: &Module| {
            LAYERS
                .iter()
                .position(|l| m.first().map_or("", String::as_str) == *l)
        };
        for (from, targets) in &tops {
            let at = layer(from).unwrap_or_else(|| {
                panic!(
                    "src/{} is in no layer: add it to LAYERS in xtask/src/imports.rs",
                    from.join("/")
                )
            });
            for target in targets {
                let below = layer(target).is_some_and(|t| t < at);
                assert!(
                    below,
                    "src/{} imports src/{}, which is not below it in LAYERS (xtask/src/imports.rs)",
                    from.join("/"),
                    target.join("/")
                );
            }
        }
        if let Some(circle) = find_circle(&tops) {
            let names: Vec<String> = circle.iter().map(|m| m.join("/")).collect();
            panic!(
                "the top-level modules of src/ import each other in a circle: {} (see the \
                 layers in xtask/src/imports.rs)",
                names.join(" -> ")
            );
        }
    }

    #[test]
    fn a_circle_is_found_and_groups_are_expanded() {
        let paths = crate_paths(
            "use crate::memory::{heap::Heap, segment};\nlet x = crate::gpu::eval::eval;",
        );
        assert_eq!(
            paths,
            vec![
                vec!["memory".to_string(), "heap".into(), "Heap".into()],
                vec!["memory".into(), "segment".into()],
                vec!["gpu".into(), "eval".into(), "eval".into()],
            ]
        );
        let m = |s: &str| vec![s.to_string()];
        let mut edges = BTreeMap::new();
        edges.insert(m("a"), BTreeSet::from([m("b")]));
        edges.insert(m("b"), BTreeSet::from([m("c")]));
        edges.insert(m("c"), BTreeSet::new());
        assert_eq!(find_circle(&edges), None);
        edges.get_mut(&m("c")).unwrap().insert(m("a"));
        assert_eq!(find_circle(&edges), Some(vec![m("a"), m("b"), m("c")]));
        assert_eq!(
            crate_paths("use crate::{cpu, gpu::x};"),
            vec![m("cpu"), vec!["gpu".to_string(), "x".into()]]
        );
    }

    #[test]
    fn files_of_one_folder_are_one_top_level_module() {
        let m = |s: &str| s.split('/').map(String::from).collect::<Vec<_>>();
        let mut edges = BTreeMap::new();
        edges.insert(m("gpu/encoder"), BTreeSet::from([m("profile")]));
        edges.insert(
            m("profile"),
            BTreeSet::from([m("gpu/readback"), m("clock")]),
        );
        edges.insert(m("gpu/readback"), BTreeSet::from([m("gpu/context")]));
        assert_eq!(find_circle(&edges), None, "no circle of files");
        assert_eq!(
            find_circle(&top_level(&edges)),
            Some(vec![m("gpu"), m("profile")]),
            "a circle of folders"
        );
    }
}

//! The documents a person reads first, checked by `cargo test`: every relative link in a
//! markdown file of the repository resolves to a file in it, so does every path of the tree
//! that the prose names in backticks (`src/…`, `tests/…`), and nothing in the repository
//! points outside it (to a sibling folder, or to design notes a clone does not have). The code
//! blocks are type-checked by `docs/tools/check-blocks.mjs` in `cargo xtask test`'s package
//! steps, since that needs the package's types and TypeScript.

#[cfg(test)]
mod tests {
    use crate::cmd::root;
    use crate::house::files_under;

    /// Folders that are built, installed or generated, not written.
    const SKIPPED: [&str; 7] = [
        ".git",
        "target",
        "node_modules",
        "pkg",
        "dist",
        "dist-webpack",
        "corpus",
    ];

    /// The lines of `text` outside fenced code blocks, numbered from 1.
    fn prose_lines(text: &str) -> Vec<(usize, &str)> {
        let mut in_code = false;
        let mut prose = Vec::new();
        for (n, line) in text.lines().enumerate() {
            if line.trim_start().starts_with("```") {
                in_code = !in_code;
            } else if !in_code {
                prose.push((n + 1, line));
            }
        }
        prose
    }

    /// The targets of the markdown links `[text](target)` in `text`, with their lines.
    fn links(text: &str) -> Vec<(usize, String)> {
        let mut found = Vec::new();
        for (n, line) in prose_lines(text) {
            for (at, _) in line.match_indices("](") {
                let rest = &line[at + 2..];
                if let Some(end) = rest.find(')') {
                    found.push((n, rest[..end].to_string()));
                }
            }
        }
        found
    }

    /// The inline code spans of `text`'s prose, with their lines, each cut at a `:line` or
    /// `#anchor`.
    fn spans(text: &str) -> Vec<(usize, &str)> {
        let mut found = Vec::new();
        for (n, line) in prose_lines(text) {
            for span in line.split('`').skip(1).step_by(2) {
                found.push((n, span.split([':', '#']).next().unwrap_or("")));
            }
        }
        found
    }

    fn is_external(target: &str) -> bool {
        target.starts_with('#') || target.contains("://") || target.starts_with("mailto:")
    }

    #[test]
    fn every_relative_link_in_the_markdown_resolves_inside_the_repository() {
        let root = root();
        let docs = files_under(&root, &[".md"], &SKIPPED);
        let mut problems = Vec::new();
        for doc in &docs {
            let text = std::fs::read_to_string(doc).unwrap();
            let shown = doc.strip_prefix(&root).unwrap().display().to_string();
            for (line, target) in links(&text) {
                if is_external(&target) {
                    continue;
                }
                let path = target.split('#').next().unwrap_or("");
                let resolved = doc.parent().unwrap().join(path);
                let inside = resolved
                    .canonicalize()
                    .is_ok_and(|p| p.starts_with(root.canonicalize().unwrap()));
                if !resolved.exists() {
                    problems.push(format!("{shown}:{line}: ({target}) is not a file here"));
                } else if !inside {
                    problems.push(format!(
                        "{shown}:{line}: ({target}) is outside the repository"
                    ));
                }
            }
        }
        assert!(docs.len() > 5, "found only {docs:?}");
        assert!(problems.is_empty(), "{}", problems.join("\n"));
    }

    #[test]
    fn nothing_points_outside_the_repository() {
        // The notes this project was begun from live beside the repository, not in it. The
        // sibling folder's path is spelled in two pieces, so that this file names it only to
        // forbid it.
        let sibling = concat!("..", "/shared");
        let outside = [sibling, "PERFORMANCE.md", "DESIGN.md", "API.md", "seeds/"];
        let root = root();
        let exts = [
            ".md", ".rs", ".js", ".mjs", ".ts", ".html", ".wgsl", ".toml", ".json", ".css",
        ];
        let sources = files_under(&root, &exts, &SKIPPED);
        let mut problems = Vec::new();
        for path in sources {
            let Ok(text) = std::fs::read_to_string(&path) else {
                continue;
            };
            let shown = path.strip_prefix(&root).unwrap().display().to_string();
            if shown == "xtask/src/docs.rs" {
                continue;
            }
            for (n, line) in text.lines().enumerate() {
                for name in outside {
                    if line.contains(name) {
                        problems.push(format!("{shown}:{}: names {name}", n + 1));
                    }
                }
            }
        }
        assert!(problems.is_empty(), "{}", problems.join("\n"));
    }

    /// The folders whose paths the prose names; a span that starts with one is a path here.
    const TREE: [&str; 8] = [
        "src/",
        "xtask/",
        "tests/",
        "www/",
        "bench/",
        "docs/",
        "npm/",
        "examples/",
    ];

    /// Whether a code span is a pattern or a phrase rather than one name (`tests/web_*.rs`,
    /// `cargo test`, `<dir>`, `a | b`).
    fn is_pattern(span: &str) -> bool {
        span.contains(['*', ' ', '<', '|'])
    }

    /// The paths of the tree named in inline code spans of `text` outside fenced blocks, with
    /// their lines: a span that starts with a folder of [`TREE`], up to a `:line` or `#anchor`,
    /// leaving out patterns (`*`) and installed folders.
    fn named_paths(text: &str) -> Vec<(usize, String)> {
        let installed = |path: &str| path.contains("node_modules");
        spans(text)
            .into_iter()
            .filter(|(_, path)| {
                TREE.iter().any(|t| path.starts_with(t)) && !is_pattern(path) && !installed(path)
            })
            .map(|(n, path)| (n, path.to_string()))
            .collect()
    }

    /// The endings of the source files whose names the prose gives without their folders
    /// (`fuse/mod.rs`, `exp.rs`): each must end the path of a file in the tree.
    const SOURCES: [&str; 5] = [".rs", ".wgsl", ".js", ".mjs", ".ts"];

    /// The spans of `text` that name a source file by its tail, as [`named_paths`] reads
    /// them; the built package's files (`pkg/…`) are not in the tree.
    fn named_files(text: &str) -> Vec<(usize, String)> {
        let named = |name: &str| {
            // A path of the tree is checked whole by [`named_paths`].
            let whole = TREE.iter().any(|t| name.starts_with(t));
            // A `(` makes it code (`import("./a.js")`), not a file's name.
            let plain = !is_pattern(name) && !name.contains('(') && !name.starts_with("pkg/");
            plain && !whole && SOURCES.iter().any(|e| name.ends_with(e))
        };
        spans(text)
            .into_iter()
            .filter(|(_, name)| named(name))
            .map(|(n, name)| (n, name.to_string()))
            .collect()
    }

    #[test]
    fn every_path_the_prose_names_is_in_the_tree() {
        let root = root();
        let tree: Vec<String> = files_under(&root, &SOURCES, &SKIPPED)
            .iter()
            .map(|p| format!("/{}", p.strip_prefix(&root).unwrap().display()))
            .collect();
        let mut problems = Vec::new();
        for doc in files_under(&root, &[".md"], &SKIPPED) {
            let text = std::fs::read_to_string(&doc).unwrap();
            let shown = doc.strip_prefix(&root).unwrap().display().to_string();
            for (line, path) in named_paths(&text) {
                if !root.join(&path).exists() {
                    problems.push(format!("{shown}:{line}: `{path}` is not in the tree"));
                }
            }
            for (line, name) in named_files(&text) {
                let tail = format!("/{}", name.trim_start_matches("./"));
                if !tree.iter().any(|p| p.ends_with(&tail)) {
                    problems.push(format!("{shown}:{line}: no file of the tree is `{name}`"));
                }
            }
        }
        assert!(problems.is_empty(), "{}", problems.join("\n"));
    }

    #[test]
    fn named_paths_are_spans_of_the_tree_outside_code_blocks() {
        let text =
            "see `src/a.rs:12` and `tests/web_*.rs`, `cargo test`, `www/`\n```\n`src/b`\n```\n";
        assert_eq!(
            named_paths(text),
            [(1, "src/a.rs".to_string()), (1, "www/".to_string())]
        );
    }

    #[test]
    fn links_are_read_outside_code_only() {
        let text = "see [a](docs/a.md#x) and [b](https://b)\n```\n[c](nope)\n```\n";
        assert_eq!(
            links(text),
            [(1, "docs/a.md#x".to_string()), (1, "https://b".to_string())]
        );
    }
}

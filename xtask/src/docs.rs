//! The documents a person reads first, checked by `cargo test`: every relative link in a
//! markdown file of the repository resolves to a file in it, and nothing in the repository
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

    /// The targets of the markdown links `[text](target)` in `text`, with their lines.
    fn links(text: &str) -> Vec<(usize, String)> {
        let mut found = Vec::new();
        let mut in_code = false;
        for (n, line) in text.lines().enumerate() {
            if line.trim_start().starts_with("```") {
                in_code = !in_code;
                continue;
            }
            if in_code {
                continue;
            }
            for (at, _) in line.match_indices("](") {
                let rest = &line[at + 2..];
                if let Some(end) = rest.find(')') {
                    found.push((n + 1, rest[..end].to_string()));
                }
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

    #[test]
    fn links_are_read_outside_code_only() {
        let text = "see [a](docs/a.md#x) and [b](https://b)\n```\n[c](nope)\n```\n";
        assert_eq!(
            links(text),
            [(1, "docs/a.md#x".to_string()), (1, "https://b".to_string())]
        );
    }
}

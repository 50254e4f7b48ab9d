//! The shape of the source tree, checked by `cargo test`: no file of `src/` or `xtask/src/`
//! over 450 lines, no function over 80 lines outside the unit tests, no two folders of `src/`
//! with one name, and `docs/architecture.md` naming every top-level module of `src/`.
//! (The layering itself is `imports.rs`.)

#[cfg(test)]
use std::path::{Path, PathBuf};

/// The files under `dir` whose names end in one of `ends`, sorted, outside the folders named
/// in `skip` (the tree walk of this module's checks and of `docs.rs`'s).
#[cfg(test)]
pub(crate) fn files_under(dir: &Path, ends: &[&str], skip: &[&str]) -> Vec<PathBuf> {
    fn walk(dir: &Path, ends: &[&str], skip: &[&str], out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            if path.is_dir() {
                if !skip.contains(&name.as_str()) {
                    walk(&path, ends, skip, out);
                }
            } else if ends.iter().any(|e| name.ends_with(e)) {
                out.push(path);
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, ends, skip, &mut out);
    out.sort();
    out
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::path::PathBuf;

    use super::files_under;
    use crate::cmd::root;

    const MAX_FILE_LINES: usize = 450;
    const MAX_FUNCTION_LINES: usize = 80;

    fn sources() -> Vec<PathBuf> {
        let mut out = files_under(&root().join("src"), &[".rs"], &[]);
        out.extend(files_under(&root().join("xtask/src"), &[".rs"], &[]));
        out
    }

    /// The functions of `source` before its unit tests, as (name, lines), where a function
    /// runs from its `fn` line to the closing brace at its indent.
    fn functions(source: &str) -> Vec<(String, usize)> {
        let lines: Vec<&str> = source.lines().collect();
        let end = lines
            .iter()
            .position(|l| l.starts_with("#[cfg(test)]"))
            .unwrap_or(lines.len());
        let mut found = Vec::new();
        let mut i = 0;
        while i < end {
            let Some((indent, name)) = fn_name(lines[i]) else {
                i += 1;
                continue;
            };
            let Some(open) = (i..end).find(|&j| {
                let l = lines[j].trim_end();
                l.ends_with('{') || l.ends_with(';')
            }) else {
                break;
            };
            if lines[open].trim_end().ends_with(';') {
                i = open + 1;
                continue;
            }
            let close = (open..end)
                .find(|&j| lines[j].starts_with(&format!("{indent}}}")))
                .unwrap_or(end);
            found.push((name, close - i + 1));
            i = close + 1;
        }
        found
    }

    /// The indent and name of a line that starts a function.
    fn fn_name(line: &str) -> Option<(String, String)> {
        let indent = &line[..line.len() - line.trim_start().len()];
        let mut words = line.split_whitespace().skip_while(|w| {
            w.starts_with("pub") || ["async", "const", "unsafe", "extern"].contains(w)
        });
        (words.next()? == "fn").then_some(())?;
        let name: String = words
            .next()?
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        Some((indent.to_string(), name))
    }

    #[test]
    fn no_file_is_too_long_and_no_function_either() {
        let mut problems = Vec::new();
        for path in sources() {
            let source = std::fs::read_to_string(&path).unwrap();
            let shown = path.strip_prefix(root()).unwrap().display().to_string();
            let count = source.lines().count();
            if count > MAX_FILE_LINES {
                problems.push(format!("{shown}: {count} lines"));
            }
            for (name, lines) in functions(&source) {
                if lines > MAX_FUNCTION_LINES {
                    problems.push(format!("{shown}: fn {name} is {lines} lines"));
                }
            }
        }
        assert!(problems.is_empty(), "split these:\n{}", problems.join("\n"));
    }

    #[test]
    fn no_two_folders_of_src_share_a_name() {
        let mut dirs = Vec::new();
        let mut stack = vec![root().join("src")];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).unwrap().flatten() {
                if entry.path().is_dir() {
                    dirs.push(entry.path());
                    stack.push(entry.path());
                }
            }
        }
        let mut by_name: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for dir in dirs {
            let name = dir.file_name().unwrap().to_string_lossy().into_owned();
            let shown = dir.strip_prefix(root()).unwrap().display().to_string();
            by_name.entry(name).or_default().push(shown);
        }
        let twins: Vec<_> = by_name.values().filter(|v| v.len() > 1).collect();
        assert!(twins.is_empty(), "folders that share a name: {twins:?}");
    }

    #[test]
    fn the_architecture_map_names_every_top_level_module() {
        let map = std::fs::read_to_string(root().join("docs/architecture.md")).unwrap();
        let missing: Vec<String> = std::fs::read_dir(root().join("src"))
            .unwrap()
            .flatten()
            .map(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                if e.path().is_dir() {
                    format!("`{name}/`")
                } else {
                    format!("`{name}`")
                }
            })
            .filter(|name| name != "`lib.rs`" && !map.contains(name.as_str()))
            .collect();
        assert!(
            missing.is_empty(),
            "docs/architecture.md does not name {missing:?}"
        );
    }

    #[test]
    fn functions_are_measured_from_fn_to_their_closing_brace() {
        let source = "fn a() {\n    let x = 1;\n}\n\ntrait T {\n    fn b(&self);\n}\n\
                      impl S {\n    pub(crate) async fn c(\n        x: u32,\n    ) -> u32 {\n        x\n    }\n}\n";
        assert_eq!(
            functions(source),
            [("a".to_string(), 3), ("c".to_string(), 5)]
        );
    }
}

//! The layers issue's check: every import in `src/` points downwards
//! (store → error → rules → domain → doors → the handle, the C ABI and the
//! test hooks), no module imports one that imports it back, directly or
//! through others, and inside a folder no module reaches back up to the
//! module that holds it (its `mod.rs`, or any ancestor). A small test
//! instead of a large tool in every CI run.
//!
//! Imports are read from paths, not only from `use` items: `crate::…`,
//! `super::…` (and `super::super::…`), `self::…`, and a path that starts
//! with a child module the file declares (`bundles::list` in
//! `doors/http/mod.rs`). Each is cut to the longest prefix that is a module
//! with a file of its own. Paths inside an inline `mod name { … }` block are
//! read relative to the file's module: such a block is part of its file.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The layer of a module path (`store::pool`, `domain::claim::sqlite`, …):
/// lower numbers are lower layers.
fn layer(module: &str) -> Option<u8> {
    let top = module.split("::").next().unwrap_or("");
    Some(match top {
        "store" => 0,
        "error" => 1,
        "rules" => 2,
        "domain" => 3,
        "doors" => 4,
        "" | "handle" | "ffi" | "test_hooks" => 5,
        _ => return None,
    })
}

fn rust_files(dir: &Path, found: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("read src") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            if path.file_name().is_some_and(|name| name != "bin") {
                rust_files(&path, found);
            }
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            found.push(path);
        }
    }
}

/// `src/domain/claim/mod.rs` → `domain::claim`; `src/lib.rs` → ``.
fn module_of(src: &Path, file: &Path) -> String {
    let relative = file.strip_prefix(src).expect("under src");
    let mut parts: Vec<String> = relative
        .iter()
        .map(|part| part.to_string_lossy().trim_end_matches(".rs").to_owned())
        .collect();
    if matches!(parts.last().map(String::as_str), Some("mod" | "lib")) {
        parts.pop();
    }
    parts.join("::")
}

fn join(base: &str, rest: &str) -> String {
    match (base.is_empty(), rest.is_empty()) {
        (true, _) => rest.to_owned(),
        (false, true) => base.to_owned(),
        (false, false) => format!("{base}::{rest}"),
    }
}

fn parent(module: &str) -> String {
    module
        .rsplit_once("::")
        .map_or(String::new(), |(parent, _)| parent.to_owned())
}

/// The longest prefix of `path` (a `::` path from the crate root) that is
/// a known module; `None` when not even its first segment is (a path into
/// another crate).
fn known_prefix(path: &str, modules: &BTreeSet<String>) -> Option<String> {
    let segments: Vec<&str> = path.split("::").filter(|s| !s.is_empty()).collect();
    (0..=segments.len())
        .rev()
        .map(|n| segments[..n].join("::"))
        .find(|candidate| modules.contains(candidate))
}

/// An identifier path starting at byte `at` of `code`.
fn path_at(code: &str, at: usize) -> String {
    code[at..]
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
        .collect()
}

/// True when the identifier starting at `at` is the start of a path, not
/// the tail of another one (`foo::bundles::x` does not start at `bundles`).
/// `$crate::…` in a macro names what its expansion uses, where it expands.
fn starts_a_path(code: &str, at: usize) -> bool {
    let before = code[..at].chars().next_back();
    !before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':' || c == '$')
}

/// The modules the file of `module` names (in `use` items and paths alike).
fn imports(module: &str, text: &str, modules: &BTreeSet<String>) -> BTreeSet<String> {
    let children: BTreeSet<String> = modules
        .iter()
        .filter(|candidate| !candidate.is_empty() && parent(candidate) == module)
        .filter_map(|child| child.rsplit("::").next().map(str::to_owned))
        .collect();
    let mut found = BTreeSet::new();
    // Brace depths at which inline `mod name {` blocks opened.
    let mut inline_mods: Vec<usize> = Vec::new();
    let mut depth = 0usize;
    for line in text.lines() {
        let code = line.split("//").next().unwrap_or("");
        let trimmed = code.trim_start();
        let opens_inline_mod = (trimmed.starts_with("mod ")
            || trimmed.starts_with("pub mod ")
            || trimmed.starts_with("pub(crate) mod ")
            || trimmed.starts_with("pub(super) mod "))
            && trimmed.trim_end().ends_with('{');
        let inline = !inline_mods.is_empty();
        for (at, _) in code.char_indices() {
            if !starts_a_path(code, at) {
                continue;
            }
            let path = path_at(code, at);
            let target = if let Some(rest) = path.strip_prefix("crate::") {
                known_prefix(rest, modules)
            } else if path.starts_with("super::") && !inline {
                let mut base = module.to_owned();
                let mut rest = path.as_str();
                while let Some(after) = rest.strip_prefix("super::") {
                    base = parent(&base);
                    rest = after;
                }
                known_prefix(&join(&base, rest), modules)
            } else if let Some(rest) = path.strip_prefix("self::") {
                (!inline)
                    .then(|| known_prefix(&join(module, rest), modules))
                    .flatten()
            } else if path
                .split("::")
                .next()
                .is_some_and(|first| path.contains("::") && children.contains(first))
            {
                known_prefix(&join(module, &path), modules)
            } else {
                None
            };
            if let Some(target) = target {
                found.insert(target);
            }
        }
        if opens_inline_mod {
            inline_mods.push(depth);
        }
        for c in code.chars() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth = depth.saturating_sub(1);
                    if inline_mods.last() == Some(&depth) {
                        inline_mods.pop();
                    }
                }
                _ => {}
            }
        }
    }
    found.remove(module);
    found
}

fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let modules: BTreeSet<String> = files.iter().map(|file| module_of(&src, file)).collect();
    files
        .iter()
        .map(|file| {
            let text = std::fs::read_to_string(file).expect("read file");
            let module = module_of(&src, file);
            let used = imports(&module, &text, &modules);
            (module, used)
        })
        .collect()
}

#[test]
fn layers_imports_point_downwards() {
    let mut upward = Vec::new();
    for (module, used) in graph() {
        let from = layer(&module).unwrap_or_else(|| panic!("{module:?} is in no layer"));
        for target in used {
            let to = layer(&target).unwrap_or_else(|| panic!("{target:?} is in no layer"));
            if to > from {
                upward.push(format!("{module} → {target}"));
            }
        }
    }
    assert!(upward.is_empty(), "imports that point upwards: {upward:#?}");
}

/// Inside a folder the `mod.rs` is the top: it assembles its children,
/// which never import it (or any module that holds them) back.
#[test]
fn layers_no_module_imports_a_module_that_holds_it() {
    let mut back_up = Vec::new();
    for (module, used) in graph() {
        for target in used {
            let holds = target.is_empty() || module.starts_with(&format!("{target}::"));
            if holds && !module.is_empty() {
                back_up.push(format!(
                    "{module} → {}",
                    if target.is_empty() {
                        "crate root"
                    } else {
                        &target
                    }
                ));
            }
        }
    }
    assert!(
        back_up.is_empty(),
        "imports that run back up a folder: {back_up:#?}"
    );
}

/// The reader itself: `super::`, `self::` and child paths count, and an
/// inline module's `super::` stays in its file.
#[test]
fn layers_reader_sees_relative_paths() {
    let modules: BTreeSet<String> = [
        "",
        "doors",
        "doors::http",
        "doors::http::state",
        "doors::http::bundles",
    ]
    .into_iter()
    .map(str::to_owned)
    .collect();
    let parent_text = "mod bundles;\nfn r() { let _ = bundles::list; }\n";
    assert!(imports("doors::http", parent_text, &modules).contains("doors::http::bundles"));
    let child_text =
        "use super::state::AppState;\nuse super::Thing;\nmod tests {\n    use super::*;\n}\n";
    let used = imports("doors::http::bundles", child_text, &modules);
    assert!(used.contains("doors::http::state"), "{used:?}");
    assert!(used.contains("doors::http"), "{used:?}");
    let inline_only = "mod tests {\n    use super::*;\n}\n";
    assert!(imports("doors::http::bundles", inline_only, &modules).is_empty());
}

#[test]
fn layers_no_module_imports_one_that_imports_it_back() {
    let graph = graph();
    // Depth-first search for a cycle; the path found is reported.
    fn visit<'a>(
        node: &'a str,
        graph: &'a BTreeMap<String, BTreeSet<String>>,
        state: &mut BTreeMap<&'a str, bool>,
        path: &mut Vec<&'a str>,
    ) -> Option<Vec<String>> {
        match state.get(node) {
            Some(true) => return None,
            Some(false) => {
                let start = path.iter().position(|n| *n == node).unwrap_or(0);
                let mut cycle: Vec<String> = path[start..].iter().map(|n| n.to_string()).collect();
                cycle.push(node.to_owned());
                return Some(cycle);
            }
            None => {}
        }
        state.insert(node, false);
        path.push(node);
        for next in graph.get(node).into_iter().flatten() {
            if let Some(cycle) = visit(next, graph, state, path) {
                return Some(cycle);
            }
        }
        path.pop();
        state.insert(node, true);
        None
    }
    let mut state = BTreeMap::new();
    for node in graph.keys() {
        let cycle = visit(node, &graph, &mut state, &mut Vec::new());
        assert!(
            cycle.is_none(),
            "import cycle: {}",
            cycle.unwrap_or_default().join(" → ")
        );
    }
}

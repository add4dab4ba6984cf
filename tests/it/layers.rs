//! The layers issue's check: every `use crate::…` in `src/` points
//! downwards (store → error → rules → domain → doors → the handle and the
//! C ABI), and no module imports one that imports it back, directly or
//! through others. A small test instead of a large tool in every CI run.

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
        "" | "ffi" | "test_hooks" => 5,
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

/// The modules a file names through `crate::…` (in `use` items and paths
/// alike), cut to the longest prefix that is a known module.
fn imports(text: &str, modules: &BTreeSet<String>) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    for line in text.lines() {
        let code = line.split("//").next().unwrap_or("");
        let mut rest = code;
        while let Some(at) = rest.find("crate::") {
            let path: String = rest[at + 7..]
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
                .collect();
            let segments: Vec<&str> = path.split("::").filter(|s| !s.is_empty()).collect();
            let known = (1..=segments.len())
                .rev()
                .map(|n| segments[..n].join("::"))
                .find(|candidate| modules.contains(candidate));
            found.insert(known.unwrap_or_default());
            rest = &rest[at + 7..];
        }
    }
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
            let mut used = imports(&text, &modules);
            used.remove(&module);
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

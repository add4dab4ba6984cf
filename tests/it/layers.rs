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
//!
//! The web page's ES modules (`src/doors/http/web`) have their own
//! layers, and their own check, at the end of this file.

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

/// The first import cycle of `graph` (module → the modules it imports),
/// as the path that closes it (`a → b → a`), or `None`. Depth-first, each
/// module left once all it reaches is done.
fn first_cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
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
    graph
        .keys()
        .find_map(|node| visit(node, graph, &mut state, &mut Vec::new()))
}

#[test]
fn layers_no_module_imports_one_that_imports_it_back() {
    let cycle = first_cycle(&graph());
    assert!(
        cycle.is_none(),
        "import cycle: {}",
        cycle.unwrap_or_default().join(" → ")
    );
}

// The web page's modules (issue #37): the ES modules under
// `src/doors/http/web` (the entry `inbox.js` and `js/`) stack in layers,
// lowest first:
//
// - base: `format.js` (words: times, counts, who decided), `dom.js`,
//   `markdown.js`, `state.js`, `nav.js` (the ways between views, wired by
//   the entry) and `api.js` (it says a sign-out through a hook the entry
//   sets). None of them knows a view.
// - parts: the pieces a view is made of, which lead to no other view:
//   `limit.js`, `confirm.js`, `questions.js`, `reach.js`, `quorum.js`,
//   `attempts.js`, `settled.js`, `notify.js`, `count.js`.
// - views: `list.js`, `history.js`, `answer.js`. They import none of one
//   another: one view reaches another through `nav.js`.
// - controllers: `keys.js`, `live.js`, `session.js`, which drive the
//   views from the keyboard, the event stream and the sign-in.
// - entry: `inbox.js`, which wires the hooks and starts.
//
// A module imports modules of its own layer or below (a flat layer: only
// below), and no module imports one that imports it back, through any
// number of others. Imports are read from the code with its comments
// taken out: `import … from './x.js'`, `import './x.js'`, `export … from
// './x.js'` and `import('./x.js')`. JSDoc's `import('./api.js').Bundle`
// is a type, erased before the page runs: being in a comment, it does
// not count.

/// The page's layers, lowest first: a name, whether the layer is flat
/// (its modules import none of one another), and its modules' paths
/// under `src/doors/http/web`.
type PageLayers<'a> = [(&'a str, bool, &'a [&'a str])];

const PAGE_LAYERS: &PageLayers = &[
    (
        "base",
        false,
        &[
            "js/format.js",
            "js/dom.js",
            "js/markdown.js",
            "js/state.js",
            "js/nav.js",
            "js/api.js",
        ],
    ),
    (
        "parts",
        false,
        &[
            "js/limit.js",
            "js/confirm.js",
            "js/questions.js",
            "js/reach.js",
            "js/quorum.js",
            "js/attempts.js",
            "js/settled.js",
            "js/notify.js",
            "js/count.js",
        ],
    ),
    (
        "views",
        true,
        &["js/list.js", "js/history.js", "js/answer.js"],
    ),
    (
        "controllers",
        false,
        &["js/keys.js", "js/link.js", "js/live.js", "js/session.js"],
    ),
    ("entry", false, &["inbox.js"]),
];

/// Issue #37: no module of the page grows past this many lines.
const PAGE_MODULE_MAX_LINES: usize = 500;

fn page_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src/doors/http/web")
}

/// Every `.js` file under `dir`, by its path under `root` (`js/api.js`).
fn page_files(root: &Path, dir: &Path, found: &mut BTreeMap<String, String>) {
    for entry in std::fs::read_dir(dir).expect("read the page's folder") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            page_files(root, &path, found);
        } else if path.extension().is_some_and(|ext| ext == "js") {
            let name = path.strip_prefix(root).expect("under the folder");
            let name = name.to_string_lossy().replace('\\', "/");
            found.insert(name, std::fs::read_to_string(&path).expect("read a module"));
        }
    }
}

fn page_modules() -> BTreeMap<String, String> {
    let mut found = BTreeMap::new();
    page_files(&page_dir(), &page_dir(), &mut found);
    found
}

/// A module's code, read for its imports: comments taken out (newlines
/// kept), and each string, template literal or regular expression
/// replaced by its number in `literals` (a string keeps its quotes:
/// `'./api.js'` becomes `'0'`), so nothing inside one is taken for code.
/// A `/` starts a regular expression where a value is expected: not
/// after a name, a number, `)` or `]`.
struct PageCode {
    code: String,
    literals: Vec<String>,
}

fn page_code(source: &str) -> PageCode {
    let chars: Vec<char> = source.chars().collect();
    let mut code = String::with_capacity(source.len());
    let mut literals = Vec::new();
    let mut at = 0;
    let mut before_value = true;
    while at < chars.len() {
        let c = chars[at];
        let next = chars.get(at + 1).copied();
        if c == '/' && next == Some('/') {
            while at < chars.len() && chars[at] != '\n' {
                at += 1;
            }
        } else if c == '/' && next == Some('*') {
            at += 2;
            while at < chars.len() && !(chars[at] == '*' && chars.get(at + 1) == Some(&'/')) {
                if chars[at] == '\n' {
                    code.push('\n');
                }
                at += 1;
            }
            at += 2;
            code.push(' ');
        } else if matches!(c, '\'' | '"' | '`') || (c == '/' && before_value) {
            // To its end; only a template spans lines.
            let mut text = String::new();
            let mut in_class = false;
            at += 1;
            while let Some(&d) = chars.get(at) {
                at += 1;
                if (d == c && !in_class) || (d == '\n' && c != '`') {
                    break;
                }
                text.push(d);
                if d == '\\' {
                    text.extend(chars.get(at));
                    at += 1;
                } else if c == '/' && (d == '[' || d == ']') {
                    in_class = d == '[';
                }
            }
            let number = literals.len();
            literals.push(text);
            if c == '/' {
                code.push_str(&number.to_string());
            } else {
                code.extend([c.to_string(), number.to_string(), c.to_string()]);
            }
            before_value = false;
        } else {
            code.push(c);
            if !c.is_whitespace() {
                before_value = !(c.is_alphanumeric() || matches!(c, '_' | '$' | ')' | ']'));
            }
            at += 1;
        }
    }
    PageCode { code, literals }
}

impl PageCode {
    /// The text of the string literal at the start of `code` (after
    /// blanks), if one is there and has no `${…}` in it; `quotes` says
    /// which quotes may open it.
    fn literal_at(&self, code: &str, quotes: &[char]) -> Option<&str> {
        let code = code.trim_start();
        let quote = code.chars().next().filter(|c| quotes.contains(c))?;
        let number = code[1..].split(quote).next()?.parse::<usize>().ok()?;
        let text = self.literals.get(number)?;
        (!text.contains("${")).then_some(text.as_str())
    }

    /// The specifiers the module imports, or why one cannot be read.
    fn specifiers(&self) -> Result<Vec<String>, String> {
        const QUOTES: [char; 2] = ['\'', '"'];
        let is_name = |c: char| c.is_alphanumeric() || matches!(c, '_' | '$');
        let code = self.code.as_str();
        let mut found = Vec::new();
        for (at, keyword) in code
            .match_indices("import")
            .chain(code.match_indices("export"))
        {
            let before = code[..at].chars().next_back();
            let rest = &code[at + keyword.len()..];
            if before.is_some_and(|c| is_name(c) || c == '.') || rest.starts_with(is_name) {
                continue;
            }
            let after = rest.trim_start();
            let specifier = if keyword == "import" {
                if let Some(call) = after.strip_prefix('(') {
                    let named = self.literal_at(call, &['\'', '"', '`']);
                    Some(named.ok_or("a dynamic import of a computed name")?)
                } else if after.starts_with('.') {
                    None // import.meta
                } else {
                    // A static import: its one string is what it imports.
                    let quote = after.find(QUOTES).ok_or("an import without a specifier")?;
                    self.literal_at(&after[quote..], &QUOTES)
                }
            } else if after.starts_with('*') {
                after
                    .find(QUOTES)
                    .and_then(|quote| self.literal_at(&after[quote..], &QUOTES))
            } else if after.starts_with('{') {
                let close = after.find('}').ok_or("an export list without its end")?;
                let tail = after[close + 1..].trim_start();
                tail.strip_prefix("from")
                    .filter(|from| !from.starts_with(is_name))
                    .and_then(|from| self.literal_at(from, &QUOTES))
            } else {
                None
            };
            found.extend(specifier.map(str::to_owned));
        }
        Ok(found)
    }
}

/// The page's import graph (module → the modules it imports, each a path
/// under the page's folder) and what could not be read: an import by a
/// name that is not relative, or of a file that is not a module of the
/// page.
fn page_graph(
    modules: &BTreeMap<String, String>,
) -> (BTreeMap<String, BTreeSet<String>>, Vec<String>) {
    let mut graph = BTreeMap::new();
    let mut faults = Vec::new();
    for (module, source) in modules {
        let mut targets = BTreeSet::new();
        match page_code(source).specifiers() {
            Err(fault) => faults.push(format!("{module}: {fault}")),
            Ok(specifiers) => {
                for specifier in specifiers {
                    if !(specifier.starts_with("./") || specifier.starts_with("../")) {
                        faults.push(format!(
                            "{module} imports {specifier:?}: not a relative path"
                        ));
                        continue;
                    }
                    let mut segments: Vec<&str> = module.split('/').collect();
                    segments.pop();
                    for segment in specifier.split('/') {
                        match segment {
                            "." => {}
                            ".." => {
                                segments.pop();
                            }
                            segment => segments.push(segment),
                        }
                    }
                    let target = segments.join("/");
                    if modules.contains_key(&target) {
                        targets.insert(target);
                    } else {
                        faults.push(format!(
                            "{module} imports {specifier:?}, which is no module of the page"
                        ));
                    }
                }
            }
        }
        graph.insert(module.clone(), targets);
    }
    (graph, faults)
}

/// The imports that break `layers`: upward, within a flat layer, or from
/// or to a module in no layer; and a layer's module that is not there.
fn page_layer_faults(
    graph: &BTreeMap<String, BTreeSet<String>>,
    layers: &PageLayers,
) -> Vec<String> {
    let layer_of = |module: &str| {
        layers
            .iter()
            .position(|(_, _, modules)| modules.contains(&module))
    };
    let mut faults = Vec::new();
    for (name, _, modules) in layers {
        for module in modules
            .iter()
            .filter(|module| !graph.contains_key(**module))
        {
            faults.push(format!("layer {name} lists {module}, which is not there"));
        }
    }
    for (module, targets) in graph {
        let Some(from) = layer_of(module) else {
            faults.push(format!("{module} is in no layer"));
            continue;
        };
        let (from_name, flat, _) = layers[from];
        for target in targets {
            let Some(to) = layer_of(target) else {
                continue; // said once, as the target's own fault
            };
            let to_name = layers[to].0;
            if to > from || (to == from && flat) {
                faults.push(format!("{module} ({from_name}) → {target} ({to_name})"));
            }
        }
    }
    faults
}

/// Issue #37, points 1 to 3 and 5: no module of the page imports one that
/// imports it back (the sign-in view through the API, the answer view
/// and the list through each other, …), directly or through others.
#[test]
fn page_modules_have_no_import_cycle() {
    let (graph, faults) = page_graph(&page_modules());
    assert!(
        faults.is_empty(),
        "imports that cannot be read: {faults:#?}"
    );
    let cycle = first_cycle(&graph);
    assert!(
        cycle.is_none(),
        "import cycle: {}",
        cycle.unwrap_or_default().join(" → ")
    );
}

/// Issue #37, point 5: every module has its layer, and imports from its
/// own layer or below; the views import none of one another.
#[test]
fn page_modules_import_only_their_layer_or_below() {
    let (graph, _) = page_graph(&page_modules());
    let faults = page_layer_faults(&graph, PAGE_LAYERS);
    assert!(faults.is_empty(), "imports against the layers: {faults:#?}");
}

/// Issue #37, point 4: a module does one job, small enough to read whole.
#[test]
fn page_modules_are_at_most_500_lines() {
    let long: Vec<String> = page_modules()
        .iter()
        .map(|(module, source)| (module, source.lines().count()))
        .filter(|(_, lines)| *lines > PAGE_MODULE_MAX_LINES)
        .map(|(module, lines)| format!("{module}: {lines} lines"))
        .collect();
    assert!(
        long.is_empty(),
        "modules over {PAGE_MODULE_MAX_LINES} lines: {long:#?}"
    );
}

fn page_of(files: &[(&str, &str)]) -> BTreeMap<String, String> {
    files
        .iter()
        .map(|(name, source)| (name.to_string(), source.to_string()))
        .collect()
}

/// The reader: every form of import counts, and nothing in a comment, a
/// string or a regular expression does.
#[test]
fn page_checker_reads_every_import_form() {
    let source = r#"// import { no } from './comment.js';
/** @typedef {import('./typed.js').Type} Type */
import { a, b as c } from './a.js';
import * as d from "./d.js";
import './side.js';
export { e } from './e.js';
export * from './star.js';
export function f() { return import('./lazy.js'); }
const quoted = "import('./string.js')"; // and './tail.js'
const pattern = /['"`]import\(/g; const also = 'export * from "./x.js"';
/* import('./block.js') */ const g = 1 / 2; import("../up.js");
"#;
    let modules = page_of(&[
        ("js/m.js", source),
        ("js/a.js", ""),
        ("js/d.js", ""),
        ("js/side.js", ""),
        ("js/e.js", ""),
        ("js/star.js", ""),
        ("js/lazy.js", ""),
        ("up.js", ""),
    ]);
    let (graph, faults) = page_graph(&modules);
    assert!(faults.is_empty(), "{faults:#?}");
    let read: Vec<&str> = graph["js/m.js"].iter().map(String::as_str).collect();
    assert_eq!(
        read,
        [
            "js/a.js",
            "js/d.js",
            "js/e.js",
            "js/lazy.js",
            "js/side.js",
            "js/star.js",
            "up.js"
        ]
    );
    let (_, faults) = page_graph(&page_of(&[(
        "m.js",
        "import x from 'lib';\nimport('./' + x);",
    )]));
    assert_eq!(faults.len(), 2, "{faults:#?}");
}

/// The checker fails once: a cycle added on purpose is reported, with
/// its path.
#[test]
fn page_checker_reports_a_cycle() {
    let modules = page_of(&[
        ("inbox.js", "import { a } from './js/a.js';\n"),
        (
            "js/a.js",
            "import { b } from './b.js';\nexport const a = 1;\n",
        ),
        (
            "js/b.js",
            "import { a } from './a.js';\nexport const b = a;\n",
        ),
    ]);
    let (graph, faults) = page_graph(&modules);
    assert!(faults.is_empty(), "{faults:#?}");
    assert_eq!(
        first_cycle(&graph).unwrap_or_default(),
        ["js/a.js", "js/b.js", "js/a.js"]
    );
}

/// The checker fails once: an upward import, an import between two views
/// and a module in no layer are each reported.
#[test]
fn page_checker_reports_an_upward_import() {
    let layers: &PageLayers = &[
        ("base", false, &["dom.js"]),
        ("views", true, &["list.js", "answer.js"]),
        ("entry", false, &["inbox.js"]),
    ];
    let modules = page_of(&[
        ("dom.js", "import { open } from './answer.js';\n"),
        ("list.js", "import { open } from './answer.js';\n"),
        ("answer.js", "import { $ } from './dom.js';\n"),
        ("inbox.js", "import './list.js';\nimport './stray.js';\n"),
        ("stray.js", ""),
    ]);
    let (graph, faults) = page_graph(&modules);
    assert!(faults.is_empty(), "{faults:#?}");
    assert_eq!(
        page_layer_faults(&graph, layers),
        [
            "dom.js (base) → answer.js (views)",
            "list.js (views) → answer.js (views)",
            "stray.js is in no layer",
        ]
    );
}

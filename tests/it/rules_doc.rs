//! `docs/rules.md` defines every requirement id that `src/` and `tests/`
//! cite: a citation of an undefined id fails here.

use std::collections::BTreeSet;
use std::path::Path;

/// Words shaped like ids that are not requirement ids.
const NOT_IDS: [&str; 7] = ["SHA", "UTF", "RFC", "ISO", "CVE", "TLS", "AES"];

/// Ids in `text`: 2–6 capitals, a dash, digits, an optional lower-case
/// letter (`ACT-1`, `OPS-3a`, `WAIT-1b`), standing alone.
fn ids_in(text: &str) -> BTreeSet<String> {
    let bytes = text.as_bytes();
    let mut found = BTreeSet::new();
    let mut start = 0;
    while start < bytes.len() {
        let boundary = start == 0 || !bytes[start - 1].is_ascii_alphanumeric();
        let letters = bytes[start..]
            .iter()
            .take_while(|b| b.is_ascii_uppercase())
            .count();
        if boundary && (2..=6).contains(&letters) && bytes.get(start + letters) == Some(&b'-') {
            let digits_at = start + letters + 1;
            let digits = bytes[digits_at..]
                .iter()
                .take_while(|b| b.is_ascii_digit())
                .count();
            if digits > 0 {
                let mut end = digits_at + digits;
                if bytes.get(end).is_some_and(u8::is_ascii_lowercase)
                    && !bytes.get(end + 1).is_some_and(u8::is_ascii_alphanumeric)
                {
                    end += 1;
                }
                let standalone = !bytes.get(end).is_some_and(u8::is_ascii_alphanumeric);
                let id = &text[start..end];
                if standalone && !NOT_IDS.contains(&&id[..letters]) {
                    found.insert(id.to_owned());
                }
            }
        }
        start += letters.max(1);
    }
    found
}

fn cited_in(dir: &Path, found: &mut BTreeSet<String>) {
    for entry in std::fs::read_dir(dir).expect("read dir") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            cited_in(&path, found);
        } else if path
            .extension()
            .is_some_and(|ext| ["rs", "py", "c"].contains(&ext.to_string_lossy().as_ref()))
        {
            found.extend(ids_in(&std::fs::read_to_string(&path).expect("read")));
        }
    }
}

#[test]
fn rules_doc_defines_every_cited_id() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let doc = std::fs::read_to_string(root.join("docs/rules.md")).expect("docs/rules.md");
    let defined: BTreeSet<String> = doc
        .lines()
        .filter_map(|line| line.strip_prefix("- **"))
        .filter_map(|rest| rest.split_once("**").map(|(id, _)| id.to_owned()))
        .collect();
    let mut cited = BTreeSet::new();
    cited_in(&root.join("src"), &mut cited);
    cited_in(&root.join("tests"), &mut cited);
    assert!(cited.len() > 50, "found only {} cited ids", cited.len());
    let undefined: Vec<&String> = cited.difference(&defined).collect();
    assert!(
        undefined.is_empty(),
        "cited but not defined in docs/rules.md: {undefined:?}"
    );
}

#[test]
fn rules_doc_finds_ids_as_written() {
    let ids = ids_in("ACT-1.2, OPS-3a and WAIT-1b; not SHA-256 nor XACT-12345678x9");
    assert_eq!(
        ids.into_iter().collect::<Vec<_>>(),
        ["ACT-1", "OPS-3a", "WAIT-1b"]
    );
}

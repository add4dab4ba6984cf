//! Instances of a published JSON Schema, for the contract test that keeps
//! schema and parser from drifting (`doors_schemas.rs`): values the schema
//! accepts, and single mutations it refuses, each with the path of the
//! field it breaks. It knows the keywords clarion's schemas use (`type`,
//! `anyOf`, `oneOf`, `enum`, `const`, `properties`, `required`,
//! `additionalProperties: false`, `items`, `minItems`, `maxItems`,
//! `minLength`, `maxLength`, `minimum`, `pattern`, `format: date-time`,
//! a `pattern` that starts `^[Hh][Tt][Tt][Pp]` (an http URL),
//! `if`/`then`) and fails loudly on any other, so a new keyword cannot
//! slip past it untested.

use serde_json::{json, Map, Value};

/// A small deterministic generator (xorshift64*): the same seed, the
/// same requests, so a failure can be replayed.
pub struct Rng {
    state: u64,
    /// Every value at the schema's edges.
    edges: bool,
    /// Inside a long list: short values only, so a request stays small.
    quiet: bool,
}

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng {
            state: seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1,
            edges: false,
            quiet: false,
        }
    }

    /// A generator at the schema's edges: every optional property given,
    /// every text as long and every list as full as the schema allows
    /// (beyond anything clarion takes where it sets no bound).
    pub fn at_the_edges(seed: u64) -> Rng {
        Rng {
            edges: true,
            ..Rng::new(seed)
        }
    }

    /// Now and then (always at the edges): a value at its bound.
    fn edge(&mut self) -> bool {
        !self.quiet && (self.edges || self.below(8) == 0)
    }

    pub fn next(&mut self) -> u64 {
        let mut x = self.state;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.state = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.next() % n
        }
    }

    pub fn chance(&mut self, in_four: u64) -> bool {
        self.below(4) < in_four
    }
}

/// Letters that mean nothing to any rule, some beyond ASCII and beyond
/// the Basic Multilingual Plane (runes, not bytes, are counted).
const LETTERS: [&str; 12] = ["a", "b", "k", "z", "Q", "7", "_", "-", "é", "ß", "字", "😀"];

const KNOWN: [&str; 23] = [
    "type",
    "anyOf",
    "oneOf",
    "enum",
    "const",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "minItems",
    "maxItems",
    "minLength",
    "maxLength",
    "minimum",
    "maximum",
    "pattern",
    "format",
    "if",
    "then",
    "description",
    "title",
    "default",
    "$schema",
];

fn check_keywords(schema: &Value) {
    if let Some(map) = schema.as_object() {
        for key in map.keys() {
            assert!(
                KNOWN.contains(&key.as_str()),
                "the generator knows no `{key}`: {schema}"
            );
        }
    }
}

fn types(schema: &Value) -> Vec<&str> {
    match &schema["type"] {
        Value::String(kind) => vec![kind.as_str()],
        Value::Array(kinds) => kinds.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

/// Whether the schema is an http or https URL's (HOOK-1): its pattern
/// says so.
fn is_http_url(schema: &Value) -> bool {
    schema["pattern"]
        .as_str()
        .is_some_and(|pattern| pattern.starts_with("^[Hh][Tt][Tt][Pp]"))
}

/// A string the schema accepts: no NUL, not blank (so every `pattern`
/// clarion publishes holds), within its length bounds.
fn text(rng: &mut Rng, schema: &Value) -> String {
    if schema["format"] == "date-time" {
        let day = 1 + rng.below(28);
        let micros = rng.below(1_000_000);
        return format!("2026-11-{day:02}T12:34:56.{micros:06}Z");
    }
    if is_http_url(schema) {
        let host = format!("https://h{}.example/", rng.below(1000));
        let length = if rng.edge() {
            schema["maxLength"].as_u64().unwrap_or(2000) as usize
        } else {
            host.chars().count() + rng.below(20) as usize
        };
        return std::iter::once(host.as_str())
            .chain(std::iter::repeat("é"))
            .flat_map(str::chars)
            .take(length)
            .collect();
    }
    let min = schema["minLength"].as_u64().unwrap_or(0).max(1);
    // Now and then as long as the schema allows (and, without a bound,
    // longer than any text clarion stores): a schema looser than its
    // parser shows here.
    if rng.edge() {
        let length = schema["maxLength"].as_u64().unwrap_or(4100);
        return std::iter::once("x")
            .chain(std::iter::repeat("😀"))
            .take(length as usize)
            .collect();
    }
    let max = schema["maxLength"].as_u64().unwrap_or(24).min(24).max(min);
    let length = min + rng.below(max - min + 1);
    let mut out = String::from("x");
    for _ in 1..length {
        out.push_str(LETTERS[rng.below(LETTERS.len() as u64) as usize]);
    }
    out
}

/// A value `schema` accepts.
pub fn valid(rng: &mut Rng, schema: &Value) -> Value {
    check_keywords(schema);
    if let Some(value) = schema.get("const") {
        return value.clone();
    }
    if let Some(words) = schema["enum"].as_array() {
        return words[rng.below(words.len() as u64) as usize].clone();
    }
    if let Some(branches) = schema["anyOf"].as_array() {
        let pick = rng.below(branches.len() as u64) as usize;
        return valid(rng, &branches[pick]);
    }
    let kinds = types(schema);
    // A nullable optional is sometimes `null` (not given).
    if kinds.contains(&"null") && (kinds.len() == 1 || (!rng.edges && rng.chance(1))) {
        return Value::Null;
    }
    let kind = kinds
        .iter()
        .copied()
        .find(|kind| *kind != "null")
        .unwrap_or("object");
    match kind {
        "string" => Value::from(text(rng, schema)),
        "integer" => match (
            rng.below(10),
            schema["minimum"].as_i64(),
            schema["maximum"].as_i64(),
        ) {
            // Beyond 64 bits: still an integer, saturated (WIRE-5).
            (0, _, None) => serde_json::from_str("123456789012345678901234567890").unwrap(),
            (1, None, None) => Value::from(i64::MIN),
            (0 | 1, _, Some(high)) => Value::from(high),
            (_, low, high) => {
                let value = low.unwrap_or(-1000) + rng.below(5000) as i64;
                Value::from(high.map_or(value, |high| value.min(high)))
            }
        },
        "boolean" => Value::Bool(rng.chance(2)),
        "array" => {
            let min = schema["minItems"].as_u64().unwrap_or(0);
            let scalar = !types(&schema["items"]).contains(&"object");
            let count = if rng.edge() {
                // As many items as the schema allows, or more than any
                // list clarion takes when it sets no bound.
                match schema["maxItems"].as_u64() {
                    Some(max) => max,
                    None if scalar => 1001,
                    None => 5,
                }
            } else {
                let max = schema["maxItems"].as_u64().unwrap_or(3).min(3).max(min);
                min + rng.below(max - min + 1)
            };
            let quiet = rng.quiet;
            rng.quiet = quiet || count > 10;
            let items = (0..count).map(|_| valid(rng, &schema["items"])).collect();
            rng.quiet = quiet;
            Value::Array(items)
        }
        "object" => object(rng, schema),
        other => panic!("the generator knows no type {other}"),
    }
}

fn object(rng: &mut Rng, schema: &Value) -> Value {
    let required = required(schema);
    let mut out = Map::new();
    if let Some(properties) = schema["properties"].as_object() {
        for (name, property) in properties {
            if required.contains(name) || rng.edges || rng.chance(2) {
                out.insert(name.clone(), valid(rng, property));
            }
        }
    }
    let mut value = Value::Object(out);
    apply_conditions(rng, schema, &mut value);
    value
}

fn required(schema: &Value) -> Vec<String> {
    schema["required"]
        .as_array()
        .map(|names| {
            names
                .iter()
                .filter_map(|name| name.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// `oneOf` (exactly one branch's `required` present) and `if`/`then`,
/// as clarion's schemas use them, made to hold.
fn apply_conditions(rng: &mut Rng, schema: &Value, value: &mut Value) {
    if let Some(branches) = schema["oneOf"].as_array() {
        let chosen = &branches[rng.below(branches.len() as u64) as usize];
        for (name, property) in chosen["properties"].as_object().into_iter().flatten() {
            if required(chosen).contains(name) {
                value[name] = valid(rng, &merge(&schema["properties"][name], property));
            } else if let Some(map) = value.as_object_mut() {
                map.remove(name);
            }
        }
    }
    if let Some(condition) = schema.get("if") {
        if holds(condition, value) {
            for (name, property) in schema["then"]["properties"]
                .as_object()
                .into_iter()
                .flatten()
            {
                if property["maxItems"] == json!(0) && value.get(name).is_some() {
                    value[name] = json!([]);
                }
                // A property the condition rules out: `null` (not given).
                let nothing = json!([{"const": ""}, {"type": "null"}]);
                if property["anyOf"] == nothing && value.get(name).is_some() {
                    value[name] = Value::Null;
                }
            }
        }
    }
}

fn merge(base: &Value, extra: &Value) -> Value {
    let mut merged = base.clone();
    for (key, value) in extra.as_object().into_iter().flatten() {
        merged[key] = value.clone();
    }
    if merged.get("minLength").is_some() {
        // A branch that needs the field present needs it non-null.
        if let Some(Value::Array(kinds)) = merged.get_mut("type") {
            kinds.retain(|kind| kind != "null");
        }
    }
    merged
}

/// The `if` of clarion's schemas: every named property equals its `const`.
fn holds(condition: &Value, value: &Value) -> bool {
    required(condition)
        .iter()
        .all(|name| value.get(name).is_some())
        && condition["properties"]
            .as_object()
            .into_iter()
            .flatten()
            .all(|(name, property)| {
                property
                    .get("const")
                    .is_none_or(|c| value.get(name) == Some(c))
            })
}

/// One way to break a valid value: the value after the change, and the
/// field the refusal must name.
#[derive(Debug, Clone)]
pub struct Broken {
    pub value: Value,
    pub field: String,
    pub how: String,
}

fn join(path: &str, name: &str) -> String {
    if path.is_empty() {
        name.to_owned()
    } else {
        format!("{path}.{name}")
    }
}

/// A value of the wrong JSON type for `schema`.
fn wrong_type(schema: &Value) -> Option<Value> {
    if schema.get("const").is_some() || schema.get("enum").is_some() {
        return Some(json!(17));
    }
    let kinds = if schema.get("anyOf").is_some() {
        schema["anyOf"]
            .as_array()?
            .iter()
            .flat_map(|b| types(b).into_iter().map(str::to_owned))
            .collect()
    } else {
        types(schema)
            .into_iter()
            .map(str::to_owned)
            .collect::<Vec<_>>()
    };
    Some(if kinds.iter().any(|kind| kind == "string") {
        json!(17)
    } else if kinds
        .iter()
        .any(|kind| kind == "object" || kind == "array" || kind == "integer" || kind == "boolean")
    {
        json!("a string")
    } else {
        return None;
    })
}

/// Every single change to `value` (valid for `schema`, found at `path`)
/// that `schema` refuses, each naming the field it breaks.
pub fn broken(schema: &Value, value: &Value, path: &str) -> Vec<Broken> {
    let mut out = Vec::new();
    let mut push = |value: Value, field: String, how: &str| {
        out.push(Broken {
            value,
            field,
            how: how.to_owned(),
        })
    };
    if let Some(wrong) = wrong_type(schema) {
        push(wrong, path.to_owned(), "wrong type");
    }
    match value {
        Value::String(text) => {
            push(Value::from(format!("{text}\u{0}")), path.to_owned(), "NUL");
            if let Some(max) = schema["maxLength"].as_u64() {
                push(
                    Value::from("é".repeat(max as usize + 1)),
                    path.to_owned(),
                    "too long",
                );
            }
            if schema["minLength"].as_u64() == Some(1) {
                push(Value::from(""), path.to_owned(), "empty");
            }
            if is_http_url(schema) {
                push(Value::from("ftp://h.example/"), path.to_owned(), "not http");
            }
            if schema
                .get("pattern")
                .is_some_and(|p| p.as_str().is_some_and(|p| p.contains("\\u3000")))
            {
                push(Value::from(" \u{3000}\u{85} "), path.to_owned(), "blank");
            }
            if schema.get("enum").is_some() || schema["anyOf"][0].get("enum").is_some() {
                push(Value::from("no-such-word"), path.to_owned(), "not a word");
            }
        }
        Value::Number(_) => {
            if let Some(minimum) = schema["minimum"].as_i64() {
                push(
                    Value::from(minimum - 1),
                    path.to_owned(),
                    "below the minimum",
                );
            }
            if let Some(maximum) = schema["maximum"].as_i64() {
                push(
                    Value::from(maximum + 1),
                    path.to_owned(),
                    "above the maximum",
                );
            }
        }
        Value::Array(items) => {
            if let Some(min) = schema["minItems"].as_u64().filter(|min| *min > 0) {
                let short: Vec<Value> = items.iter().take(min as usize - 1).cloned().collect();
                push(Value::Array(short), path.to_owned(), "too few items");
            }
            if let Some(max) = schema["maxItems"]
                .as_u64()
                .filter(|max| *max > 0 && *max <= 1000)
            {
                let filler = items.first().cloned().unwrap_or(json!("x"));
                let mut long = items.clone();
                while long.len() as u64 <= max {
                    long.push(filler.clone());
                }
                push(Value::Array(long), path.to_owned(), "too many items");
            }
            // The first few items stand for the rest.
            for (index, item) in items.iter().enumerate().take(3) {
                for inner in broken(&schema["items"], item, &format!("{path}[{index}]")) {
                    let mut changed = items.clone();
                    changed[index] = inner.value;
                    push(Value::Array(changed), inner.field, &inner.how);
                }
            }
        }
        Value::Object(map) => {
            let properties = schema["properties"]
                .as_object()
                .cloned()
                .unwrap_or_default();
            if schema["additionalProperties"] == json!(false) {
                let mut extra = map.clone();
                extra.insert("surprise".into(), json!(true));
                push(
                    Value::Object(extra),
                    join(path, "surprise"),
                    "unknown argument",
                );
            }
            for name in required(schema) {
                let mut missing = map.clone();
                missing.remove(&name);
                push(Value::Object(missing), join(path, &name), "missing");
            }
            for (name, property) in &properties {
                let Some(current) = map.get(name) else {
                    continue;
                };
                let subschema = property_schema(property, current);
                for inner in broken(&subschema, current, &join(path, name)) {
                    let mut changed = map.clone();
                    changed.insert(name.clone(), inner.value);
                    push(Value::Object(changed), inner.field, &inner.how);
                }
            }
            if let (Some(condition), Some(then)) = (schema.get("if"), schema.get("then")) {
                for (name, property) in then["properties"].as_object().into_iter().flatten() {
                    if property["maxItems"] == json!(0) {
                        let mut changed = map.clone();
                        for (key, part) in condition["properties"].as_object().into_iter().flatten()
                        {
                            changed.insert(key.clone(), part["const"].clone());
                        }
                        let filler = valid(&mut Rng::new(7), &properties[name]["items"]);
                        changed.insert(name.clone(), json!([filler]));
                        push(Value::Object(changed), join(path, name), "if/then");
                    }
                }
            }
            if let Some(branches) = schema["oneOf"].as_array() {
                let mut both = map.clone();
                for branch in branches {
                    for name in required(branch) {
                        both.insert(name.clone(), json!("both"));
                    }
                }
                let first = required(&branches[0]).first().cloned().unwrap_or_default();
                push(Value::Object(both), join(path, &first), "oneOf");
            }
        }
        _ => {}
    }
    out
}

/// The schema a present value of `property` answers to: the non-null
/// branch (a `null` was never broken further).
fn property_schema(property: &Value, current: &Value) -> Value {
    if current.is_null() {
        return json!({});
    }
    if let Some(branches) = property["anyOf"].as_array() {
        let matching = branches.iter().find(|branch| match current {
            Value::String(text) => branch
                .get("const")
                .map_or(types(branch).contains(&"string"), |c| {
                    c == &Value::from(text.as_str())
                }),
            _ => false,
        });
        if let Some(branch) = matching {
            let mut branch = branch.clone();
            // A branch reached through `anyOf` shares the property's enum
            // words for the "not a word" change.
            if branches.iter().any(|b| b.get("enum").is_some()) {
                branch["enum"] = branches
                    .iter()
                    .find_map(|b| b.get("enum").cloned())
                    .unwrap_or_default();
            }
            return branch;
        }
    }
    property.clone()
}

//! Instances of a published JSON Schema, for the contract test that keeps
//! schema and parser from drifting (`doors_schemas.rs`): values the schema
//! accepts, and single mutations it refuses, each with the path of the
//! field it breaks. It knows the keywords clarion's schemas use (`type`,
//! `anyOf`, `oneOf`, `enum`, `const`, `properties`, `required`,
//! `additionalProperties: false`, `items`, `minItems`, `maxItems`,
//! `minLength`, `maxLength`, `minimum`, `pattern`, `format: date-time`,
//! a `pattern` that starts `^[Hh][Tt][Tt][Pp]` (an http URL),
//! and conditions: `if`/`then`, alone or in an `allOf`) and fails loudly
//! on any other, so a new keyword cannot slip past it untested.

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

const KNOWN: [&str; 25] = [
    "type",
    "anyOf",
    "allOf",
    "oneOf",
    "enum",
    "const",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "minItems",
    "maxItems",
    "uniqueItems",
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
            // `uniqueItems`: draw again for an item already drawn (a few
            // times per place; a narrow item schema may run out).
            let unique = schema["uniqueItems"] == Value::Bool(true);
            let mut items: Vec<Value> = Vec::with_capacity(count as usize);
            for _ in 0..count.saturating_mul(if unique { 20 } else { 1 }) {
                if items.len() == count as usize {
                    break;
                }
                let item = valid(rng, &schema["items"]);
                if !unique || !items.contains(&item) {
                    items.push(item);
                }
            }
            rng.quiet = quiet;
            Value::Array(items)
        }
        "object" => object(rng, schema),
        other => panic!("the generator knows no type {other}"),
    }
}

fn object(rng: &mut Rng, schema: &Value) -> Value {
    let required = required(schema);
    // A condition the repairs cannot make hold (an `enum` its `then`
    // narrows): draw again.
    for _ in 0..200 {
        let mut out = Map::new();
        if let Some(properties) = schema["properties"].as_object() {
            for (name, property) in properties {
                if required.contains(name) || rng.edges || rng.chance(2) {
                    out.insert(name.clone(), valid(rng, property));
                }
            }
        }
        let mut value = Value::Object(out);
        apply_one_of(rng, schema, &mut value);
        repair(rng, schema, &mut value, None);
        if conditions(schema)
            .iter()
            .all(|(condition, then)| !matches(condition, &value) || matches(then, &value))
        {
            return value;
        }
    }
    panic!("no value of 200 meets the conditions of {schema}")
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

/// `oneOf` as clarion's schemas use it: exactly one branch's `required`
/// present.
fn apply_one_of(rng: &mut Rng, schema: &Value, value: &mut Value) {
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
}

/// The schema's conditions, `(if, then)`: its own and its `allOf`'s.
fn conditions(schema: &Value) -> Vec<(&Value, &Value)> {
    let mut out = Vec::new();
    if let (Some(condition), Some(then)) = (schema.get("if"), schema.get("then")) {
        out.push((condition, then));
    }
    for part in schema["allOf"].as_array().into_iter().flatten() {
        let keys: Vec<&String> = part
            .as_object()
            .into_iter()
            .flatten()
            .map(|(k, _)| k)
            .collect();
        assert_eq!(
            keys,
            ["if", "then"],
            "the generator knows `allOf` of conditions only: {part}"
        );
        out.push((&part["if"], &part["then"]));
    }
    out
}

/// Whether a `then` names `property` only to rule it out: `null` (or
/// `""`) or an empty list.
fn rules_out(property: &Value) -> bool {
    property == &json!({"type": "null"})
        || property == &json!({"anyOf": [{"const": ""}, {"type": "null"}]})
        || property["maxItems"] == json!(0)
}

/// Each condition's `then` made to hold where its `if` does (but the
/// condition `skip`): what it rules out becomes `null` (or `[]`), what it
/// requires is generated, an `anyOf` gets its first branch, a property
/// it narrows to an `enum` gets the first word (and is repaired in turn).
fn repair(rng: &mut Rng, schema: &Value, value: &mut Value, skip: Option<usize>) {
    for (index, (condition, then)) in conditions(schema).into_iter().enumerate() {
        if Some(index) == skip || !matches(condition, value) || matches(then, value) {
            continue;
        }
        let properties = &schema["properties"];
        for (name, property) in then["properties"].as_object().into_iter().flatten() {
            let Some(current) = value.get(name).filter(|current| !current.is_null()) else {
                continue;
            };
            if property["maxItems"] == json!(0) {
                value[name] = json!([]);
            } else if rules_out(property) {
                value[name] = Value::Null;
            } else if !matches(property, current) {
                let base = object_branch(&properties[name]);
                let mut inner = current.clone();
                narrow(rng, &base, property, &mut inner);
                value[name] = inner;
            }
        }
        let needs = required(then).into_iter().chain(
            then["anyOf"]
                .as_array()
                .filter(|branches| !branches.iter().any(|branch| matches(branch, value)))
                .and_then(|branches| branches.first())
                .map(required)
                .unwrap_or_default(),
        );
        for name in needs {
            if value.get(&name).is_none_or(Value::is_null) {
                value[&name] = valid(rng, &present(&properties[&name]));
            }
        }
    }
}

/// `value`, an instance of the object `base`, changed so that each of its
/// properties `narrowing` gives an `enum` for takes that enum's first word;
/// then repaired against `base`'s own conditions.
fn narrow(rng: &mut Rng, base: &Value, narrowing: &Value, value: &mut Value) {
    for (name, property) in narrowing["properties"].as_object().into_iter().flatten() {
        if let Some(word) = property["enum"].as_array().and_then(|words| words.first()) {
            if value
                .get(name)
                .is_some_and(|current| !property["enum"].as_array().unwrap().contains(current))
            {
                value[name] = word.clone();
            }
        }
    }
    repair(rng, base, value, None);
}

/// The object branch of a property (`anyOf: [{object}, null]` or
/// `type: [object, null]`), never `null`.
fn object_branch(property: &Value) -> Value {
    let mut object = property["anyOf"]
        .as_array()
        .and_then(|branches| {
            branches
                .iter()
                .find(|branch| branch.get("properties").is_some())
        })
        .unwrap_or(property)
        .clone();
    if let Some(Value::Array(kinds)) = object.get_mut("type") {
        kinds.retain(|kind| kind != "null");
    }
    object
}

/// A property's schema for a value that must be given: not `null`, not
/// `""`.
fn present(property: &Value) -> Value {
    if let Some(branches) = property["anyOf"].as_array() {
        let kept: Vec<Value> = branches
            .iter()
            .filter(|branch| types(branch) != ["null"] && branch.get("const") != Some(&json!("")))
            .cloned()
            .collect();
        let mut out = property.clone();
        out["anyOf"] = Value::Array(kept);
        return out;
    }
    merge(property, &json!({"minLength": 1}))
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

/// Whether `value` meets `schema`, for the keywords clarion's conditions
/// use (`type`, `const`, `enum`, `required`, `properties`, `anyOf`,
/// `minLength`, `maxItems`): the `if`s and `then`s.
fn matches(schema: &Value, value: &Value) -> bool {
    let kinds = types(schema);
    let of_kind = |kind: &&str| match *kind {
        "null" => value.is_null(),
        "string" => value.is_string(),
        "integer" => value.is_i64() || value.is_u64(),
        "boolean" => value.is_boolean(),
        "array" => value.is_array(),
        "object" => value.is_object(),
        other => panic!("no type {other} in a condition"),
    };
    (kinds.is_empty() || kinds.iter().any(of_kind))
        && schema.get("const").is_none_or(|c| c == value)
        && schema["enum"]
            .as_array()
            .is_none_or(|words| words.contains(value))
        && schema["anyOf"]
            .as_array()
            .is_none_or(|branches| branches.iter().any(|branch| matches(branch, value)))
        && schema["minLength"].as_u64().is_none_or(|min| {
            value
                .as_str()
                .is_none_or(|text| text.chars().count() as u64 >= min)
        })
        && schema["maxItems"].as_u64().is_none_or(|max| {
            value
                .as_array()
                .is_none_or(|items| items.len() as u64 <= max)
        })
        && value.as_object().is_none_or(|map| {
            required(schema).iter().all(|name| map.contains_key(name))
                && schema["properties"]
                    .as_object()
                    .into_iter()
                    .flatten()
                    .all(|(name, property)| map.get(name).is_none_or(|v| matches(property, v)))
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
            for (index, change) in condition_breaks(schema, value).into_iter().enumerate() {
                let (value, name) = change;
                push(value, join(path, &name), &format!("condition {index}"));
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

/// For each of the schema's conditions: `value` changed so that its `if`
/// holds (every other condition kept) and its `then` does not, with the
/// field the refusal names (below `value`).
fn condition_breaks(schema: &Value, value: &Value) -> Vec<(Value, String)> {
    let mut rng = Rng::new(7);
    let mut out = Vec::new();
    for (index, (condition, then)) in conditions(schema).into_iter().enumerate() {
        let mut held = value.clone();
        make_hold(&mut rng, schema, condition, &mut held);
        repair(&mut rng, schema, &mut held, None);
        // Repairing the others may undo it (a `permission` bundle's default
        // is never `answer`, so `answer` cannot hold beside it): this
        // value cannot break this condition; other values do.
        if !matches(condition, &held) {
            continue;
        }
        let mut each = |change: &dyn Fn(&mut Value, &mut Rng) -> String| {
            let mut changed = held.clone();
            let field = change(&mut changed, &mut rng);
            repair(&mut rng, schema, &mut changed, Some(index));
            assert!(
                matches(condition, &changed) && !matches(then, &changed),
                "{changed}"
            );
            out.push((changed, field));
        };
        for (name, property) in then["properties"].as_object().into_iter().flatten() {
            let base = &schema["properties"][name];
            if rules_out(property) {
                each(&|changed, rng| {
                    changed[name] = if property["maxItems"] == json!(0) {
                        json!([valid(&mut Rng::new(7), &base["items"])])
                    } else {
                        valid(rng, &present(base))
                    };
                    name.clone()
                });
            }
            for (leaf, narrowed) in property["properties"].as_object().into_iter().flatten() {
                let object = object_branch(base);
                let Some(outside) = object["properties"][leaf]["enum"]
                    .as_array()
                    .and_then(|words| words.iter().find(|word| !matches(narrowed, word)))
                else {
                    continue;
                };
                each(&|changed, rng| {
                    if !changed[name].is_object() {
                        changed[name] = valid(rng, &object);
                    }
                    changed[name][leaf] = outside.clone();
                    repair(rng, &object, &mut changed[name], None);
                    format!("{name}.{leaf}")
                });
            }
        }
        for name in required(then) {
            each(&|changed, _| {
                if let Some(map) = changed.as_object_mut() {
                    map.remove(&name);
                }
                name.clone()
            });
        }
        if let Some(branches) = then["anyOf"].as_array() {
            each(&|changed, _| {
                for name in branches.iter().flat_map(required) {
                    if let Some(map) = changed.as_object_mut() {
                        map.remove(&name);
                    }
                }
                leaf_path(condition)
            });
        }
    }
    out
}

/// `value` changed so that `condition` holds: each named property takes
/// its `const` or its `enum`'s first word, a nested condition is made to
/// hold inside the property's object, any other given a value the
/// condition accepts.
fn make_hold(rng: &mut Rng, schema: &Value, condition: &Value, value: &mut Value) {
    for (name, wanted) in condition["properties"].as_object().into_iter().flatten() {
        let base = &schema["properties"][name];
        if value
            .get(name)
            .is_some_and(|current| matches(wanted, current))
        {
            continue;
        }
        value[name] = if let Some(word) = wanted.get("const") {
            word.clone()
        } else if let Some(word) = wanted["enum"].as_array().and_then(|words| words.first()) {
            word.clone()
        } else if wanted.get("properties").is_some() {
            let object = object_branch(base);
            let mut inner = match value.get(name) {
                Some(current) if current.is_object() => current.clone(),
                _ => valid(rng, &object),
            };
            make_hold(rng, &object, wanted, &mut inner);
            repair(rng, &object, &mut inner, None);
            inner
        } else {
            valid(rng, &present(base))
        };
    }
}

/// The path to the first leaf a condition names (`on_expire.action`).
fn leaf_path(condition: &Value) -> String {
    let Some((name, inner)) = condition["properties"]
        .as_object()
        .and_then(|properties| properties.iter().next())
    else {
        return String::new();
    };
    match leaf_path(inner).as_str() {
        "" => name.clone(),
        rest => format!("{name}.{rest}"),
    }
}

/// The schema a present value of `property` answers to: the non-null
/// branch (a `null` was never broken further).
fn property_schema(property: &Value, current: &Value) -> Value {
    if current.is_null() {
        return json!({});
    }
    if current.is_object() {
        return object_branch(property);
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

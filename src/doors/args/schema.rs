//! The JSON Schemas clarion publishes (JSON Schema 2020-12, which is
//! what OpenAPI 3.1 and MCP speak), generated from the types by
//! `schemars`: arguments as they are read (`Deserialize`), bodies as they
//! are written (`Serialize`). Two shapes: self-contained (every subschema
//! inline, for an MCP tool), and with named types under
//! `#/components/schemas/` (the OpenAPI document's components).

use schemars::generate::SchemaSettings;
use schemars::transform::{transform_subschemas, Transform};
use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde_json::{Map, Value};

use crate::rules::limits::NO_NUL_PATTERN;

/// Where the OpenAPI document keeps its named schemas.
pub(crate) const COMPONENTS: &str = "/components/schemas";

/// REL-6 in every string argument's schema: a string that says nothing
/// else about its characters (no `pattern`, `enum` or `const`) gets
/// [`NO_NUL_PATTERN`].
#[derive(Clone)]
struct NoNul;

impl Transform for NoNul {
    fn transform(&mut self, schema: &mut Schema) {
        let is_string = match schema.get("type") {
            Some(Value::String(kind)) => kind == "string",
            Some(Value::Array(kinds)) => kinds.iter().any(|kind| kind == "string"),
            _ => false,
        };
        let constrained = ["pattern", "enum", "const"]
            .iter()
            .any(|key| schema.get(*key).is_some());
        if is_string && !constrained {
            schema.insert("pattern".into(), NO_NUL_PATTERN.into());
        }
        transform_subschemas(self, schema);
    }
}

/// Descriptions come from doc comments, wrapped at 100 columns: a line
/// break inside a paragraph is a space, a blank line stays a paragraph.
/// The doc comments cite the rules they implement for the people who read
/// the code, in parentheses; a schema's reader (a model, a generated
/// client) reads text for people, so those citations are left out
/// ([`without_rule_citations`]).
#[derive(Clone)]
struct Unwrap;

impl Transform for Unwrap {
    fn transform(&mut self, schema: &mut Schema) {
        if let Some(Value::String(text)) = schema.get_mut("description") {
            let unwrapped = text
                .split("\n\n")
                .map(|paragraph| {
                    paragraph
                        .split('\n')
                        .map(str::trim)
                        .collect::<Vec<_>>()
                        .join(" ")
                })
                .collect::<Vec<_>>()
                .join("\n\n");
            *text = unwrapped
                .split("\n\n")
                .map(|paragraph| without_rule_citations(without_leading_citations(paragraph)))
                .collect::<Vec<_>>()
                .join("\n\n");
        }
        transform_subschemas(self, schema);
    }
}

/// Whether `item` is a citation of a rule: an id (`WIRE-4`, `WAIT-1b`), a
/// range of them (`ASK-1..5`) or a section (`§8`).
fn is_citation(item: &str) -> bool {
    let item = item.trim();
    if let Some(section) = item.strip_prefix('§') {
        return !section.is_empty() && section.chars().all(|c| c.is_ascii_alphanumeric());
    }
    let Some((letters, number)) = item.split_once('-') else {
        return false;
    };
    let numbered = |part: &str| {
        let digits = part.trim_end_matches(|c: char| c.is_ascii_lowercase());
        !digits.is_empty()
            && digits.chars().all(|c| c.is_ascii_digit())
            && part.len() - digits.len() <= 1
    };
    let (first, last) = number.split_once("..").unwrap_or((number, "0"));
    (2..=6).contains(&letters.len())
        && letters.chars().all(|c| c.is_ascii_uppercase())
        && numbered(first)
        && numbered(last)
}

/// A paragraph without the citations it starts with (`WIRE-1: a
/// resolve…`, `HOOK-1, HOOK-3: a new…`), its first letter then a capital.
fn without_leading_citations(paragraph: &str) -> std::borrow::Cow<'_, str> {
    let Some((cited, rest)) = paragraph.split_once(": ") else {
        return paragraph.into();
    };
    if !cited.split(", ").all(is_citation) {
        return paragraph.into();
    }
    let mut chars = rest.chars();
    match chars.next() {
        Some(first) => format!("{}{}", first.to_uppercase(), chars.as_str()).into(),
        None => paragraph.into(),
    }
}

/// `text` without its parenthesized rule citations: `(WIRE-5)` goes with
/// the space before it, `(a host operation, ASK-1..5)` becomes `(a host
/// operation)`.
pub(crate) fn without_rule_citations(text: impl AsRef<str>) -> String {
    let text = text.as_ref();
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find('(') {
        let Some(close) = rest[open..].find(')').map(|end| open + end) else {
            break;
        };
        let inner = &rest[open + 1..close];
        if inner.contains('(') {
            out.push_str(&rest[..=open]);
            rest = &rest[open + 1..];
            continue;
        }
        // The items with the separator before each (`""` for the first).
        let mut items: Vec<(&str, &str)> = Vec::new();
        let mut start = 0;
        let mut separator = "";
        for (at, c) in inner.char_indices().filter(|(_, c)| matches!(c, ',' | ';')) {
            items.push((separator, &inner[start..at]));
            separator = if c == ',' { ", " } else { "; " };
            start = at + 1;
        }
        items.push((separator, &inner[start..]));
        let kept: Vec<(&str, &str)> = items
            .iter()
            .copied()
            .filter(|(_, item)| !is_citation(item))
            .collect();
        if kept.len() == items.len() {
            out.push_str(&rest[..=close]);
        } else if kept.is_empty() {
            out.push_str(rest[..open].trim_end_matches(' '));
        } else {
            out.push_str(&rest[..open]);
            out.push('(');
            for (index, (separator, item)) in kept.iter().enumerate() {
                if index > 0 {
                    out.push_str(separator);
                }
                out.push_str(item.trim());
            }
            out.push(')');
        }
        rest = &rest[close + 1..];
    }
    out.push_str(rest);
    out
}

/// The formats JSON Schema 2020-12 defines. `schemars` names Rust's
/// number types (`uint64`, `uint`, `int64`, `double`, …), which JSON Schema
/// does not know and MCP clients warn about; an unsigned integer keeps its
/// `minimum: 0`, and an integer argument is any JSON integer anyway (one
/// beyond 64 bits saturates), so such a format says nothing a client can
/// use.
const STANDARD_FORMATS: &[&str] = &[
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "idn-email",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uuid",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
    "regex",
];

/// Drops every `format` JSON Schema does not define (see
/// [`STANDARD_FORMATS`]), on both sides of the wire.
#[derive(Clone)]
struct StandardFormats;

impl Transform for StandardFormats {
    fn transform(&mut self, schema: &mut Schema) {
        let standard = match schema.get("format") {
            Some(Value::String(format)) => STANDARD_FORMATS.contains(&format.as_str()),
            Some(_) => false,
            None => true,
        };
        if !standard {
            schema.remove("format");
        }
        transform_subschemas(self, schema);
    }
}

/// Which side of the wire a schema describes.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Side {
    /// What a door reads: the arguments.
    Arguments,
    /// What a door writes: the bodies.
    Bodies,
}

/// How subschemas are placed.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Shape {
    /// Everything inline: one self-contained schema (an MCP tool's).
    Inline,
    /// Named types as `$ref`s into [`COMPONENTS`].
    Components,
}

pub(crate) fn generator(side: Side, shape: Shape) -> SchemaGenerator {
    let settings = SchemaSettings::draft2020_12().with(|settings| {
        settings.meta_schema = None;
        settings.inline_subschemas = shape == Shape::Inline;
        if shape == Shape::Components {
            settings.definitions_path = COMPONENTS.into();
        }
    });
    let settings = settings
        .with_transform(Unwrap)
        .with_transform(StandardFormats);
    let settings = match side {
        Side::Arguments => settings.for_deserialize().with_transform(NoNul),
        Side::Bodies => settings.for_serialize(),
    };
    settings.into_generator()
}

/// The schema of `T`, self-contained: what an MCP tool publishes.
pub(crate) fn inline<T: JsonSchema + ?Sized>(side: Side) -> Value {
    let mut schema = generator(side, Shape::Inline).into_root_schema_for::<T>();
    if let Some(map) = schema.as_object_mut() {
        // The title is the Rust type's name: nothing for a client.
        map.remove("title");
    }
    schema.to_value()
}

/// The schema of `T` as a subschema of the OpenAPI document: a `$ref`
/// into the components (or, for a type without a name, the schema
/// itself); the named schemas it needs are added to `components`.
pub(crate) fn component<T: JsonSchema + ?Sized>(
    side: Side,
    components: &mut Map<String, Value>,
) -> Value {
    let mut generator = generator(side, Shape::Components);
    let mut schema = generator.subschema_for::<T>();
    if side == Side::Arguments {
        NoNul.transform(&mut schema);
    }
    StandardFormats.transform(&mut schema);
    for (name, definition) in generator.take_definitions(true) {
        components.entry(name).or_insert(definition);
    }
    schema.to_value()
}

/// How a door that reads arguments from words (a query string, a command
/// line) takes one property, by its JSON type (`null` aside).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PropertyKind {
    /// A string (or anything not listed below).
    Text,
    /// An integer.
    Integer,
    /// A boolean: a flag on a command line.
    Flag,
    /// An array or an object, written as JSON text.
    Json,
}

/// One property of an operation's arguments, as its published schema
/// describes it: the one reader of that schema for every door that needs
/// it (the HTTP door's query strings, the command line's flags).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Property {
    /// The argument's name.
    pub name: String,
    /// Its description (the schema's).
    pub description: String,
    /// Its JSON type.
    pub kind: PropertyKind,
    /// Whether the arguments must hold it.
    pub required: bool,
    /// The words it accepts, when the schema lists them.
    pub words: Vec<String>,
}

/// The properties of an arguments' schema, in the schema's order.
pub(crate) fn properties(schema: &Value) -> Vec<Property> {
    let required: Vec<&str> = schema["required"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    schema["properties"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(name, property)| Property {
            name: name.clone(),
            description: property["description"]
                .as_str()
                .unwrap_or_default()
                .to_owned(),
            kind: kind_of(property),
            required: required.contains(&name.as_str()),
            words: words_of(property),
        })
        .collect()
}

/// A property's JSON type, `null` aside, from `type` (one or several) or
/// the branches of an `anyOf`.
fn kind_of(schema: &Value) -> PropertyKind {
    let types: Vec<&str> = match &schema["type"] {
        Value::String(kind) => vec![kind.as_str()],
        Value::Array(kinds) => kinds.iter().filter_map(Value::as_str).collect(),
        _ => schema["anyOf"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|branch| branch["type"].as_str())
            .collect(),
    };
    match types.into_iter().find(|kind| *kind != "null") {
        Some("integer") => PropertyKind::Integer,
        Some("boolean") => PropertyKind::Flag,
        Some("array" | "object") => PropertyKind::Json,
        _ => PropertyKind::Text,
    }
}

/// The enum words a property accepts, if it lists them.
fn words_of(schema: &Value) -> Vec<String> {
    let listed = schema["enum"].as_array().or_else(|| {
        schema["anyOf"]
            .as_array()?
            .iter()
            .find_map(|branch| branch["enum"].as_array())
    });
    listed
        .into_iter()
        .flatten()
        .filter_map(|word| word.as_str().map(str::to_owned))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::without_rule_citations;

    #[test]
    fn rule_citations_are_left_out_of_descriptions() {
        assert_eq!(without_rule_citations("Asks (ASK-1..5)."), "Asks.");
        assert_eq!(
            without_rule_citations("Asks (a host operation, ASK-1..5)."),
            "Asks (a host operation)."
        );
        assert_eq!(
            without_rule_citations("Waits (WAIT-1, WAIT-1b; §8) now (1 s to 30 days)."),
            "Waits now (1 s to 30 days)."
        );
        assert_eq!(without_rule_citations("(at most 2000)"), "(at most 2000)");
        assert_eq!(
            without_rule_citations("(default `running`; a terminal one ends, LIFE-3)"),
            "(default `running`; a terminal one ends)"
        );
        assert_eq!(
            super::without_leading_citations("HOOK-1, HOOK-3: a new endpoint's"),
            "A new endpoint's"
        );
        assert_eq!(
            super::without_leading_citations("Note: WIRE-1 here"),
            "Note: WIRE-1 here"
        );
    }
}

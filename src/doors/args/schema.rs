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
#[derive(Clone)]
struct Unwrap;

impl Transform for Unwrap {
    fn transform(&mut self, schema: &mut Schema) {
        if let Some(Value::String(text)) = schema.get_mut("description") {
            *text = text
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
        }
        transform_subschemas(self, schema);
    }
}

/// An integer argument is any JSON integer: one beyond 64 bits saturates
/// (WIRE-5), so its schema names no `int64` format to violate.
#[derive(Clone)]
struct AnyInteger;

impl Transform for AnyInteger {
    fn transform(&mut self, schema: &mut Schema) {
        let integer = match schema.get("type") {
            Some(Value::String(kind)) => kind == "integer",
            Some(Value::Array(kinds)) => kinds.iter().any(|kind| kind == "integer"),
            _ => false,
        };
        if integer {
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
    let settings = settings.with_transform(Unwrap);
    let settings = match side {
        Side::Arguments => settings
            .for_deserialize()
            .with_transform(NoNul)
            .with_transform(AnyInteger),
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
        AnyInteger.transform(&mut schema);
    }
    for (name, definition) in generator.take_definitions(true) {
        components.entry(name).or_insert(definition);
    }
    schema.to_value()
}

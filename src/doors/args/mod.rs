//! Typed arguments (WIRE-5): each operation's arguments are a struct that
//! derives `Deserialize` (read by [`read`], whose errors name the field as
//! WIRE-5 does) and `JsonSchema` (the schema the OpenAPI document, the MCP
//! tools and the command line publish). The field types here carry the
//! rules every argument shares: a required id, a timeout, and, for every
//! string, no NUL character (REL-6), said once in the reader and once in
//! the schema ([`schema`]).

mod reader;
pub(crate) mod schema;

use std::time::Duration;

use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde::de::{Deserialize, Deserializer, Error as _};

pub(crate) use reader::{read, read_at, type_name};

/// Absent arguments (`null`, or no `args`/`arguments` member) are no
/// arguments: `{}`. The one rule every door applies before reading them.
pub(crate) fn or_empty(arguments: &serde_json::Value) -> &serde_json::Value {
    static EMPTY: std::sync::LazyLock<serde_json::Value> =
        std::sync::LazyLock::new(|| serde_json::Value::Object(serde_json::Map::new()));
    if arguments.is_null() {
        &EMPTY
    } else {
        arguments
    }
}

/// A required id: absent, `null` or `""` is a 400 (WIRE-5).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Id(pub String);

impl<'de> Deserialize<'de> for Id {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Id, D::Error> {
        let text = String::deserialize(deserializer)?;
        if text.is_empty() {
            return Err(D::Error::custom("must not be empty"));
        }
        Ok(Id(text))
    }
}

impl JsonSchema for Id {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Id".into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({"type": "string", "minLength": 1})
    }
}

impl std::ops::Deref for Id {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

/// A wait's timeout in milliseconds (`timeout_ms`, `wait_ms`): a
/// non-negative JSON integer written without fraction or exponent;
/// beyond 64 bits it saturates, and each door then applies its own
/// [`WaitBounds`](crate::rules::limits::WaitBounds) (WAIT-1, HTTP-5).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Millis(pub Duration);

impl<'de> Deserialize<'de> for Millis {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Millis, D::Error> {
        let ms = i64::deserialize(deserializer)?;
        u64::try_from(ms)
            .map(|ms| Millis(Duration::from_millis(ms)))
            .map_err(|_| D::Error::custom("must not be negative"))
    }
}

impl JsonSchema for Millis {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Millis".into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({"type": "integer", "minimum": 0})
    }
}

/// An optional string argument: `""` means not given, as `null` does
/// (WIRE-5).
pub(crate) fn given(text: Option<String>) -> Option<String> {
    text.filter(|text| !text.is_empty())
}

/// An optional word argument (`kind`, `state`): `null` and `""` are not
/// given; any other word must be one `parse` knows (its error names
/// `field`).
pub(crate) fn word<T>(
    field: &str,
    text: Option<String>,
    parse: fn(&str, &str) -> Result<T, crate::error::ValidationError>,
) -> Result<Option<T>, crate::error::ValidationError> {
    given(text).map(|text| parse(field, &text)).transpose()
}

/// The schema of an optional word argument: one of `T`'s words, `""` or
/// `null` (both: not given).
pub(crate) fn optional_word<T: JsonSchema>(generator: &mut SchemaGenerator) -> Schema {
    let words = generator.subschema_for::<T>();
    json_schema!({"anyOf": [words, {"const": ""}, {"type": "null"}]})
}

/// The schema of a required word argument: one of `T`'s words.
pub(crate) fn required_word<T: JsonSchema>(generator: &mut SchemaGenerator) -> Schema {
    generator.subschema_for::<T>()
}

//! A JSON object read field by field: every reader checks the type, and
//! every error names the field by its full path
//! (`questions[1].options[0].label`). The door's argument parsing is built
//! on it.

use std::time::Duration;

use serde_json::{Map, Value};

use crate::error::ValidationError;
use crate::rules::limits::{wait_time, WIRE_WAIT};

pub(crate) type Checked<T> = std::result::Result<T, ValidationError>;

/// How an error names the JSON type it found instead.
pub(crate) fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn wrong_type(field: String, expected: &str, value: &Value) -> ValidationError {
    ValidationError::new(
        field,
        format!("expected {expected}, got {}", type_name(value)),
    )
}

/// An integer literal too long for u64: serde_json hands it over as a
/// float. Written with a fraction or an exponent, a number that large is
/// indistinguishable here, and is taken as the integer it equals.
fn beyond_u64(value: &Value) -> bool {
    value
        .as_f64()
        .is_some_and(|f| f.is_finite() && f.fract() == 0.0 && f >= 18_446_744_073_709_551_616.0)
}

/// A JSON object read field by field; every error names the field by its
/// full path (`questions[1].options[0].label`).
pub(crate) struct Fields<'v> {
    prefix: String,
    map: &'v Map<String, Value>,
}

impl<'v> Fields<'v> {
    /// A nested object; `name` is its own path.
    pub(crate) fn of(value: &'v Value, name: &str) -> Checked<Fields<'v>> {
        let Value::Object(map) = value else {
            return Err(wrong_type(name.to_owned(), "an object", value));
        };
        Ok(Fields {
            prefix: format!("{name}."),
            map,
        })
    }

    /// A top-level object (the request, or an operation's arguments):
    /// errors name the field alone (`pending_id: required`), as the
    /// library's own errors do.
    pub(crate) fn top(value: &'v Value, name: &str) -> Checked<Fields<'v>> {
        let Value::Object(map) = value else {
            return Err(wrong_type(name.to_owned(), "an object", value));
        };
        Ok(Fields {
            prefix: String::new(),
            map,
        })
    }

    fn field(&self, key: &str) -> String {
        format!("{}{key}", self.prefix)
    }

    /// Refuses keys outside `allowed`: a misspelt argument is never
    /// silently ignored (LIST-4).
    pub(crate) fn only(&self, allowed: &[&str]) -> Checked<()> {
        match self.map.keys().find(|key| !allowed.contains(&key.as_str())) {
            None => Ok(()),
            Some(key) => Err(ValidationError::new(self.field(key), "unknown argument")),
        }
    }

    /// The value, `None` when absent or `null` ("not given").
    pub(crate) fn given(&self, key: &str) -> Option<&'v Value> {
        self.map.get(key).filter(|value| !value.is_null())
    }

    /// An optional string; `""` means not given (WIRE-5).
    pub(crate) fn text(&self, key: &str) -> Checked<Option<&'v str>> {
        match self.given(key) {
            None => Ok(None),
            Some(Value::String(text)) if text.is_empty() => Ok(None),
            Some(Value::String(text)) => Ok(Some(text)),
            Some(other) => Err(wrong_type(self.field(key), "a string", other)),
        }
    }

    /// An optional string, `""` kept as given.
    pub(crate) fn text_as_given(&self, key: &str) -> Checked<Option<&'v str>> {
        match self.given(key) {
            None => Ok(None),
            Some(Value::String(text)) => Ok(Some(text)),
            Some(other) => Err(wrong_type(self.field(key), "a string", other)),
        }
    }

    pub(crate) fn text_or_empty(&self, key: &str) -> Checked<String> {
        Ok(self.text(key)?.unwrap_or_default().to_owned())
    }

    /// A required id: absent, `null` or `""` is a 400.
    pub(crate) fn id(&self, key: &str) -> Checked<&'v str> {
        match self.given(key) {
            None => Err(ValidationError::new(self.field(key), "required")),
            Some(Value::String(text)) if text.is_empty() => {
                Err(ValidationError::new(self.field(key), "must not be empty"))
            }
            Some(Value::String(text)) => Ok(text),
            Some(other) => Err(wrong_type(self.field(key), "a string", other)),
        }
    }

    pub(crate) fn boolean(&self, key: &str) -> Checked<Option<bool>> {
        match self.given(key) {
            None => Ok(None),
            Some(Value::Bool(flag)) => Ok(Some(*flag)),
            Some(other) => Err(wrong_type(self.field(key), "a boolean", other)),
        }
    }

    pub(crate) fn integer(&self, key: &str) -> Checked<Option<i64>> {
        match self.given(key) {
            None => Ok(None),
            // An integer beyond i64 is still an integer: saturate, and let
            // the caps (limit, timeout_ms) apply.
            Some(value) => value
                .as_i64()
                .or_else(|| value.as_u64().map(|_| i64::MAX))
                .or_else(|| beyond_u64(value).then_some(i64::MAX))
                .map(Some)
                .ok_or_else(|| wrong_type(self.field(key), "an integer", value)),
        }
    }

    pub(crate) fn array(&self, key: &str) -> Checked<Option<&'v Vec<Value>>> {
        match self.given(key) {
            None => Ok(None),
            Some(Value::Array(items)) => Ok(Some(items)),
            Some(other) => Err(wrong_type(self.field(key), "an array", other)),
        }
    }

    pub(crate) fn required_array(&self, key: &str) -> Checked<&'v Vec<Value>> {
        self.array(key)?
            .ok_or_else(|| ValidationError::new(self.field(key), "required"))
    }

    /// An array of strings, each element checked.
    pub(crate) fn strings(&self, key: &str, items: &[Value]) -> Checked<Vec<String>> {
        items
            .iter()
            .enumerate()
            .map(|(index, item)| match item {
                Value::String(text) => Ok(text.clone()),
                other => Err(wrong_type(
                    format!("{}[{index}]", self.field(key)),
                    "a string",
                    other,
                )),
            })
            .collect()
    }

    /// Each element of an array of objects, with its path.
    pub(crate) fn objects(&self, key: &str, items: &'v [Value]) -> Checked<Vec<Fields<'v>>> {
        items
            .iter()
            .enumerate()
            .map(|(index, item)| Fields::of(item, &format!("{}[{index}]", self.field(key))))
            .collect()
    }

    /// `timeout_ms`: the default when absent, capped, never negative (WAIT-1).
    pub(crate) fn timeout(&self, key: &str) -> Checked<Duration> {
        match self.integer(key)? {
            None => Ok(WIRE_WAIT.default),
            Some(ms) if ms < 0 => Err(ValidationError::new(
                self.field(key),
                "must not be negative",
            )),
            Some(ms) => Ok(wait_time(Duration::from_millis(ms as u64))),
        }
    }
}

//! A serde `Deserializer` over a parsed JSON value that reports what
//! WIRE-5 reports: every error names the field by its full path
//! (`answers[1].selected_options: expected an array, got a string`), a
//! field given as `null` is not given (so a required one is `required`),
//! integers too large for 64 bits saturate (the caps then apply), and no
//! string holds a NUL character (REL-6). The typed arguments of every
//! operation derive `Deserialize` and are read through it, so their
//! checks are serde's derive plus these rules, never a parser per
//! operation.

use std::fmt;

use serde::de::{self, DeserializeSeed, IntoDeserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use crate::error::ValidationError;
use crate::rules::limits::check_text;

/// An error on its way out of the reader: located once some level knows
/// the field's path.
#[derive(Debug)]
pub(crate) struct ArgError {
    field: Option<String>,
    /// A field serde's derive found missing, to be named under the path of
    /// the object that lacks it.
    missing: Option<&'static str>,
    message: String,
}

impl ArgError {
    fn new(message: impl Into<String>) -> ArgError {
        ArgError {
            field: None,
            missing: None,
            message: message.into(),
        }
    }

    fn at(field: String, message: impl Into<String>) -> ArgError {
        ArgError {
            field: Some(field),
            missing: None,
            message: message.into(),
        }
    }

    /// The error's path relative to the value it came out of: the missing
    /// field's name, `""` for the value itself, or what a deeper level
    /// already named.
    fn relative(mut self) -> ArgError {
        if self.field.is_none() {
            self.field = Some(self.missing.take().unwrap_or_default().to_owned());
        }
        self
    }

    /// Puts the segment of the value it came out of in front of its path:
    /// a field's name (`x` → `answers.x`, `[1].x` → `answers[1].x`) or an
    /// element's index (`x` → `[1].x`).
    fn under(self, segment: &str) -> ArgError {
        let mut error = self.relative();
        let field = error.field.take().unwrap_or_default();
        error.field = Some(if field.is_empty() {
            segment.to_owned()
        } else if field.starts_with('[') {
            format!("{segment}{field}")
        } else {
            format!("{segment}.{field}")
        });
        error
    }

    /// The validation error, its field named under the top level's rules:
    /// a field of the top object alone (`pending_id: required`), the top
    /// value itself by `root` (`args: expected an object, got a string`).
    pub(crate) fn into_validation(self, root: &str) -> ValidationError {
        let error = self.relative();
        let field = error.field.unwrap_or_default();
        let field = if field.is_empty() {
            root.to_owned()
        } else {
            field
        };
        ValidationError::new(field, error.message)
    }
}

impl fmt::Display for ArgError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.field {
            Some(field) => write!(f, "{field}: {}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for ArgError {}

impl de::Error for ArgError {
    fn custom<T: fmt::Display>(message: T) -> Self {
        ArgError::new(message.to_string())
    }

    fn missing_field(field: &'static str) -> Self {
        ArgError {
            field: None,
            missing: Some(field),
            message: "required".to_owned(),
        }
    }

    /// LIST-4: a misspelt argument is never silently ignored.
    fn unknown_field(_field: &str, _expected: &'static [&'static str]) -> Self {
        ArgError::new("unknown argument")
    }
}

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

/// An integer literal too long for u64: serde_json hands it over as a
/// float. Written with a fraction or an exponent, a number that large is
/// indistinguishable here, and is taken as the integer it equals.
fn beyond_u64(value: &Value) -> bool {
    value
        .as_f64()
        .is_some_and(|f| f.is_finite() && f.fract() == 0.0 && f >= 18_446_744_073_709_551_616.0)
}

/// Reads `T` from `value`; errors name fields as WIRE-5 does, the top
/// value itself as `root`.
pub(crate) fn read<T: de::DeserializeOwned>(
    value: &Value,
    root: &str,
) -> Result<T, ValidationError> {
    T::deserialize(Reader {
        value,
        in_field: false,
    })
    .map_err(|error| error.into_validation(root))
}

/// Reads `T` from `value`, which sits at `path` inside a larger request:
/// every error names its field under `path` (`principal.kind: required`).
pub(crate) fn read_at<T: de::DeserializeOwned>(
    value: &Value,
    path: &str,
) -> Result<T, ValidationError> {
    T::deserialize(Reader {
        value,
        in_field: false,
    })
    .map_err(|error| error.under(path).into_validation(path))
}

/// One value being read. `in_field`: it is the value of an object's field,
/// where `null` means "not given".
struct Reader<'v> {
    value: &'v Value,
    in_field: bool,
}

impl<'v> Reader<'v> {
    /// The value is not of the type asked for. A field that is `null` was
    /// not given at all: for a type that needs a value, that is `required`.
    fn wrong(&self, expected: &str) -> ArgError {
        if self.in_field && self.value.is_null() {
            return ArgError::new("required");
        }
        ArgError::new(format!(
            "expected {expected}, got {}",
            type_name(self.value)
        ))
    }

    /// An integer, saturating beyond i64 (the caps of `limit` and
    /// `timeout_ms` then apply).
    fn integer(&self) -> Result<i64, ArgError> {
        self.value
            .as_i64()
            .or_else(|| self.value.as_u64().map(|_| i64::MAX))
            .or_else(|| beyond_u64(self.value).then_some(i64::MAX))
            .ok_or_else(|| self.wrong("an integer"))
    }

    fn text(&self) -> Result<&'v str, ArgError> {
        match self.value {
            Value::String(text) => {
                check_text("", text).map_err(|error| ArgError::new(error.message))?;
                Ok(text)
            }
            _ => Err(self.wrong("a string")),
        }
    }
}

macro_rules! integers {
    ($($method:ident)*) => {
        $(
            fn $method<V: Visitor<'v>>(self, visitor: V) -> Result<V::Value, ArgError> {
                visitor.visit_i64(self.integer()?)
            }
        )*
    };
}

impl<'v> de::Deserializer<'v> for Reader<'v> {
    type Error = ArgError;

    fn deserialize_any<V: Visitor<'v>>(self, visitor: V) -> Result<V::Value, ArgError> {
        match self.value {
            Value::Null => visitor.visit_unit(),
            Value::Bool(flag) => visitor.visit_bool(*flag),
            Value::Number(_) => match self.value.as_i64() {
                Some(n) => visitor.visit_i64(n),
                None => match self.value.as_u64() {
                    Some(n) => visitor.visit_u64(n),
                    None => visitor.visit_f64(self.value.as_f64().unwrap_or_default()),
                },
            },
            Value::String(_) => visitor.visit_borrowed_str(self.text()?),
            Value::Array(items) => visitor.visit_seq(Items::new(items)),
            Value::Object(map) => visitor.visit_map(Fields::new(map)),
        }
    }

    fn deserialize_bool<V: Visitor<'v>>(self, visitor: V) -> Result<V::Value, ArgError> {
        match self.value {
            Value::Bool(flag) => visitor.visit_bool(*flag),
            _ => Err(self.wrong("a boolean")),
        }
    }

    integers!(deserialize_i8 deserialize_i16 deserialize_i32 deserialize_i64 deserialize_i128
        deserialize_u8 deserialize_u16 deserialize_u32 deserialize_u64 deserialize_u128);

    fn deserialize_f32<V: Visitor<'v>>(self, visitor: V) -> Result<V::Value, ArgError> {
        self.deserialize_f64(visitor)
    }

    fn deserialize_f64<V: Visitor<'v>>(self, visitor: V) -> Result<V::Value, ArgError> {
        match self.value.as_f64() {
            Some(number) => visitor.visit_f64(number),
            None => Err(self.wrong("a number")),
        }
    }

    fn deserialize_char<V: Visitor<'v>>(self, visitor: V) -> Result<V::Value, ArgError> {
        self.deserialize_str(visitor)
    }

    fn deserialize_str<V: Visitor<'v>>(self, visitor: V) -> Result<V::Value, ArgError> {
        visitor.visit_borrowed_str(self.text()?)
    }

    fn deserialize_string<V: Visitor<'v>>(self, visitor: V) -> Result<V::Value, ArgError> {
        self.deserialize_str(visitor)
    }

    fn deserialize_bytes<V: Visitor<'v>>(self, visitor: V) -> Result<V::Value, ArgError> {
        self.deserialize_str(visitor)
    }

    fn deserialize_byte_buf<V: Visitor<'v>>(self, visitor: V) -> Result<V::Value, ArgError> {
        self.deserialize_str(visitor)
    }

    /// `null` (or a field not given) is `None` (WIRE-5).
    fn deserialize_option<V: Visitor<'v>>(self, visitor: V) -> Result<V::Value, ArgError> {
        match self.value {
            Value::Null => visitor.visit_none(),
            _ => visitor.visit_some(self),
        }
    }

    fn deserialize_unit<V: Visitor<'v>>(self, visitor: V) -> Result<V::Value, ArgError> {
        match self.value {
            Value::Null => visitor.visit_unit(),
            _ => Err(self.wrong("null")),
        }
    }

    fn deserialize_unit_struct<V: Visitor<'v>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, ArgError> {
        self.deserialize_unit(visitor)
    }

    fn deserialize_newtype_struct<V: Visitor<'v>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, ArgError> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_seq<V: Visitor<'v>>(self, visitor: V) -> Result<V::Value, ArgError> {
        match self.value {
            Value::Array(items) => visitor.visit_seq(Items::new(items)),
            _ => Err(self.wrong("an array")),
        }
    }

    fn deserialize_tuple<V: Visitor<'v>>(
        self,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, ArgError> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_tuple_struct<V: Visitor<'v>>(
        self,
        _name: &'static str,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, ArgError> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_map<V: Visitor<'v>>(self, visitor: V) -> Result<V::Value, ArgError> {
        match self.value {
            Value::Object(map) => visitor.visit_map(Fields::new(map)),
            _ => Err(self.wrong("an object")),
        }
    }

    fn deserialize_struct<V: Visitor<'v>>(
        self,
        _name: &'static str,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, ArgError> {
        self.deserialize_map(visitor)
    }

    /// Word-valued arguments (`kind`, `state`, `action`) are plain strings
    /// read by their own `Deserialize`; an enum of another shape is not
    /// part of any argument.
    fn deserialize_enum<V: Visitor<'v>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, ArgError> {
        let text = self.text()?;
        visitor.visit_enum(text.into_deserializer())
    }

    fn deserialize_identifier<V: Visitor<'v>>(self, visitor: V) -> Result<V::Value, ArgError> {
        self.deserialize_str(visitor)
    }

    /// Never looked at: the request envelope's `args` is read only after
    /// the capability check (WIRE-5).
    fn deserialize_ignored_any<V: Visitor<'v>>(self, visitor: V) -> Result<V::Value, ArgError> {
        visitor.visit_unit()
    }
}

/// An array's elements, each located as `[index]` of the array's path.
struct Items<'v> {
    items: std::slice::Iter<'v, Value>,
    index: usize,
}

impl<'v> Items<'v> {
    fn new(items: &'v [Value]) -> Items<'v> {
        Items {
            items: items.iter(),
            index: 0,
        }
    }
}

impl<'v> SeqAccess<'v> for Items<'v> {
    type Error = ArgError;

    fn next_element_seed<T: DeserializeSeed<'v>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, ArgError> {
        let Some(value) = self.items.next() else {
            return Ok(None);
        };
        let index = self.index;
        self.index += 1;
        seed.deserialize(Reader {
            value,
            in_field: false,
        })
        .map(Some)
        .map_err(|error| error.under(&format!("[{index}]")))
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.items.len())
    }
}

/// An object's fields; each error is located under the field's name.
struct Fields<'v> {
    entries: serde_json::map::Iter<'v>,
    value: Option<(&'v str, &'v Value)>,
}

impl<'v> Fields<'v> {
    fn new(map: &'v Map<String, Value>) -> Fields<'v> {
        Fields {
            entries: map.iter(),
            value: None,
        }
    }
}

impl<'v> MapAccess<'v> for Fields<'v> {
    type Error = ArgError;

    fn next_key_seed<K: DeserializeSeed<'v>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, ArgError> {
        let Some((key, value)) = self.entries.next() else {
            return Ok(None);
        };
        self.value = Some((key, value));
        seed.deserialize(key.as_str().into_deserializer())
            .map(Some)
            .map_err(|error: ArgError| ArgError::at(key.clone(), error.message))
    }

    fn next_value_seed<T: DeserializeSeed<'v>>(&mut self, seed: T) -> Result<T::Value, ArgError> {
        let Some((key, value)) = self.value.take() else {
            return Err(ArgError::new("a value without its key"));
        };
        seed.deserialize(Reader {
            value,
            in_field: true,
        })
        .map_err(|error| error.under(key))
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.entries.len())
    }
}

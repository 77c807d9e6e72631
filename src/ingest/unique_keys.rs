//! JSON values read with every object's keys checked to be distinct (hostile input D10).
//!
//! `serde_json::Value`, like Python's `json`, keeps the last of two equal keys in one
//! object: `{"role": "user", "role": "assistant"}` reads as an assistant message, and
//! which value the writer meant is unknowable. The trajectory readers parse records with
//! [`from_str`] instead: the same value when every key is distinct (a differential test
//! compares the two on the sample trajectories), an error naming the key and its
//! position otherwise. The parse is one pass; the check is one map lookup per key.

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};

/// The start of the message of a repeated-key error ([`is_repeated_key`]).
const REPEATED: &str = "duplicate key";

/// Parses `text` as one JSON value, as `serde_json::from_str::<Value>` does, refusing an
/// object that holds a key twice.
///
/// Errors: serde_json's syntax errors; for a repeated key, a data error
/// `duplicate key "role" in one object (which value the writer meant is unknowable) at
/// line L column C` (the position of the second value's end, within `text`).
pub fn from_str(text: &str) -> serde_json::Result<Value> {
    serde_json::from_str::<Unique>(text).map(|u| u.0)
}

/// Whether `error` (from [`from_str`]) is a repeated key rather than malformed JSON.
pub fn is_repeated_key(error: &serde_json::Error) -> bool {
    error.is_data() && error.to_string().starts_with(REPEATED)
}

/// A [`Value`] whose objects name each key once.
struct Unique(Value);

impl<'de> Deserialize<'de> for Unique {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(UniqueVisitor).map(Unique)
    }
}

struct UniqueVisitor;

impl<'de> Visitor<'de> for UniqueVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(Number::from_f64(v).map_or(Value::Null, Value::Number))
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }

    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        Unique::deserialize(deserializer).map(|u| u.0)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        while let Some(Unique(v)) = seq.next_element()? {
            out.push(v);
        }
        Ok(Value::Array(out))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if out.contains_key(&key) {
                return Err(de::Error::custom(format!(
                    "{REPEATED} {key:?} in one object (which value the writer meant is unknowable)"
                )));
            }
            let Unique(v) = map.next_value()?;
            out.insert(key, v);
        }
        Ok(Value::Object(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_value_as_serde_json_when_keys_are_distinct() {
        for text in [
            r#"{"a": [1, -2, 3.5, 1e300, 18446744073709551615, true, null, "x\u00e9\n"], "b": {"c": {}}, "d": []}"#,
            "[]",
            "\"\\ud83d\\ude00\"",
            "-0.0",
            r#"[{"role": "user"}, {"role": "user"}]"#,
        ] {
            assert_eq!(from_str(text).unwrap(), serde_json::from_str::<Value>(text).unwrap(), "{text}");
        }
    }

    #[test]
    fn repeated_key_is_named_with_its_position() {
        let err = from_str("{\"messages\": [\n {\"role\": \"user\",\n  \"role\": \"assistant\"}]}").unwrap_err();
        assert!(is_repeated_key(&err), "{err}");
        assert_eq!(err.line(), 3);
        assert!(err.to_string().starts_with("duplicate key \"role\" in one object"), "{err}");
        // the same key in two objects is not a repeat; malformed JSON is not one either
        assert!(from_str(r#"[{"k": 1}, {"k": 2}]"#).is_ok());
        let err = from_str(r#"{"k": 1,"#).unwrap_err();
        assert!(!is_repeated_key(&err), "{err}");
        // keys equal once escapes are read are equal
        assert!(is_repeated_key(&from_str(r#"{"k": 1, "\u006b": 2}"#).unwrap_err()));
    }
}

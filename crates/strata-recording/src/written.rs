//! A header part as a command wrote it ([`Written`]): the typed part strata
//! reads back, beside the whole object as written for people. Reads go
//! through the type; a change to the type (a merge naming its shards) is
//! written back over the object, and everything else is written again as it
//! was read.
//!
//! Not for: what the part holds ([`crate::Environment`], [`crate::Options`])
//! or the commands' own types, which they write directly.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};
use std::ops::{Deref, DerefMut};

/// A header's `options` or `environment` as read: `T` is what strata
/// reads of it (by `Deref`), the object itself is kept only to be written
/// again. A null part (a run stopped before it had an environment) reads
/// as `T::default()`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Written<T> {
    typed: T,
    object: Option<Map<String, Value>>,
}

/// A part of the header strata reads back, by its name there.
pub trait HeaderPart: Serialize + DeserializeOwned + Default {
    const NAME: &'static str;
}

impl HeaderPart for crate::Environment {
    const NAME: &'static str = "environment";
}

impl HeaderPart for crate::Options {
    const NAME: &'static str = "options";
}

impl<T: HeaderPart> Written<T> {
    /// The part a command's own type `described` writes, as a reader sees
    /// it.
    pub fn of(described: &impl Serialize) -> anyhow::Result<Self> {
        match serde_json::to_value(described)? {
            Value::Null => Ok(Self::default()),
            Value::Object(object) => Self::from_object(object),
            other => anyhow::bail!("a header part is an object, not {other}"),
        }
    }

    fn from_object(object: Map<String, Value>) -> anyhow::Result<Self> {
        let typed = T::deserialize(Value::Object(object.clone()))
            .map_err(|error| anyhow::anyhow!(error).context(format!("the header's {}", T::NAME)))?;
        Ok(Written {
            typed,
            object: Some(object),
        })
    }

    /// The object to write: as read, with every field of `T` that differs
    /// from what was read written over it.
    fn to_write(&self) -> Result<Option<Map<String, Value>>, serde_json::Error> {
        let as_read = match &self.object {
            Some(object) => T::deserialize(Value::Object(object.clone()))?,
            None => T::default(),
        };
        let (Value::Object(now), Value::Object(then)) = (
            serde_json::to_value(&self.typed)?,
            serde_json::to_value(&as_read)?,
        ) else {
            return Ok(self.object.clone());
        };
        // A field the type no longer writes (now `None`) is written null.
        let mut changed: Vec<(String, Value)> = then
            .keys()
            .filter(|key| !now.contains_key(*key))
            .map(|key| (key.clone(), Value::Null))
            .collect();
        changed.extend(
            now.into_iter()
                .filter(|(key, value)| then.get(key) != Some(value)),
        );
        if changed.is_empty() {
            return Ok(self.object.clone());
        }
        let mut object = self.object.clone().unwrap_or_default();
        object.extend(changed);
        Ok(Some(object))
    }
}

/// `T` written with the keys of its objects in order, as header parts and
/// `environment` records always were (and the JSON documents' `options`):
/// the order of a type's fields does not change the bytes of a Recording.
pub struct SortedKeys<T>(pub T);

impl<T: Serialize> Serialize for SortedKeys<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serde_json::to_value(&self.0)
            .map_err(serde::ser::Error::custom)?
            .serialize(serializer)
    }
}

impl<T> From<T> for Written<T> {
    /// A part made by strata itself rather than read (a Recording made in
    /// memory): its object is the type's.
    fn from(typed: T) -> Self {
        Written {
            typed,
            object: None,
        }
    }
}

impl<T> Deref for Written<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.typed
    }
}

impl<T> DerefMut for Written<T> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.typed
    }
}

impl<T: HeaderPart> Serialize for Written<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.to_write()
            .map_err(serde::ser::Error::custom)?
            .serialize(serializer)
    }
}

impl<'de, T: HeaderPart> Deserialize<'de> for Written<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match Option::<Map<String, Value>>::deserialize(deserializer)? {
            None => Ok(Self::default()),
            Some(object) => Self::from_object(object)
                .map_err(|error| serde::de::Error::custom(format!("{error:#}"))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Environment;

    fn environment(text: &str) -> Written<Environment> {
        serde_json::from_str(text).unwrap()
    }

    #[test]
    fn what_strata_does_not_read_is_written_again_as_read() {
        let text = r#"{"engine":"postgres","people":{"note":"kept"},"server":"throwaway cluster"}"#;
        let read = environment(text);
        assert_eq!(read.engine.as_deref(), Some("postgres"));
        assert_eq!(serde_json::to_string(&read).unwrap(), text);
    }

    #[test]
    fn a_change_to_the_type_is_written_over_the_object() {
        let mut read = environment(
            r#"{"engine":"postgres","extra":1,"shard":{"run_id":"r","shard":1,"shards":2,
                "host":"h","pid":1,"server":"s","start_server_unix_s":1.0,
                "window_start_server_unix_s":null,"clock_offset_ms":0.0}}"#,
        );
        assert!(read.shard.is_some());
        read.shard = None;
        read.server = Some("merged".into());
        let written: Value = serde_json::to_value(&read).unwrap();
        assert_eq!(written["shard"], Value::Null);
        assert_eq!(written["server"], "merged");
        assert_eq!(written["extra"], 1);
        assert_eq!(written["engine"], "postgres");
    }

    #[test]
    fn a_null_part_reads_as_the_default_and_is_written_as_null() {
        let read = environment("null");
        assert_eq!(*read, Environment::default());
        assert_eq!(serde_json::to_string(&read).unwrap(), "null");
    }

    #[test]
    fn a_part_of_the_wrong_type_names_the_field() {
        let error = serde_json::from_str::<Written<Environment>>(r#"{"engine":3}"#).unwrap_err();
        assert!(
            error
                .to_string()
                .starts_with("the header's environment: invalid type"),
            "{error}"
        );
    }
}

//! Reading a request's field values as the CLI reads its flags' (the same parsers, so the same
//! values are taken and refused): precisions by name or alias, a memory reserve as a share or a
//! size, a fusion preset, a parallel degree, a launch overhead with its unit.

use crate::args::values::{
    parse_degree, parse_duration_small, parse_precision, parse_preset, parse_reserve,
};
use roofline_core::memory::Reserve;
use roofline_core::precision::Precision;
use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;
use std::borrow::Cow;

/// A string or a number, as its text (`8`, `"10%"`).
fn text<'de, D: Deserializer<'de>>(d: D, what: &str) -> Result<String, D::Error> {
    match Value::deserialize(d)? {
        Value::String(s) => Ok(s),
        Value::Number(n) => Ok(n.to_string()),
        other => Err(D::Error::custom(format!("expected {what}, got {other}"))),
    }
}

/// A precision by name (`bf16`, `bfloat16`, `int4`).
pub(super) fn precision<'de, D: Deserializer<'de>>(d: D) -> Result<Precision, D::Error> {
    let s = String::deserialize(d)?;
    parse_precision(&s).map_err(D::Error::custom)
}

/// An optional precision by name; `null` is none.
pub(super) fn opt_precision<'de, D: Deserializer<'de>>(
    d: D,
) -> Result<Option<Precision>, D::Error> {
    Option::<String>::deserialize(d)?
        .map(|s| parse_precision(&s).map_err(D::Error::custom))
        .transpose()
}

/// An optional fusion preset (`eager`, `compiled`, `max`); `null` is none.
pub(super) fn opt_preset<'de, D: Deserializer<'de>>(
    d: D,
) -> Result<Option<roofline_core::fusion::Preset>, D::Error> {
    Option::<String>::deserialize(d)?
        .map(|s| parse_preset(&s).map_err(D::Error::custom))
        .transpose()
}

/// A parallel degree: a whole number from 1 to the most devices a system has.
pub(super) fn degree<'de, D: Deserializer<'de>>(d: D) -> Result<u32, D::Error> {
    let n = u64::deserialize(d)?;
    parse_degree(&n.to_string()).map_err(D::Error::custom)
}

/// An optional degree; `null` is none.
pub(super) fn opt_degree<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u32>, D::Error> {
    Option::<u64>::deserialize(d)?
        .map(|n| parse_degree(&n.to_string()).map_err(D::Error::custom))
        .transpose()
}

/// An optional launch overhead: seconds as a number, or a duration with its unit (`7us`);
/// `null` is none.
pub(super) fn opt_duration<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    match Value::deserialize(d)? {
        Value::Null => Ok(None),
        v => text(v, "a duration (`7us`) or seconds")
            .map_err(D::Error::custom)
            .and_then(|s| parse_duration_small(&s).map_err(D::Error::custom))
            .map(Some),
    }
}

/// The schema of a launch overhead: seconds, or a duration with its unit.
pub(super) fn duration_schema(_: &mut SchemaGenerator) -> Schema {
    json_schema!({
        "description": "Seconds (`7e-6`), or a duration with its unit: `7us`, `0.5ms`.",
        "type": ["number", "string", "null"],
    })
}

/// `memory_reserve`: a share of the chip's capacity (`"10%"`) or a size (`"2GB"`, `0`), as
/// `--memory-reserve` takes it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MemoryReserve(pub Reserve);

impl Default for MemoryReserve {
    fn default() -> Self {
        MemoryReserve(Reserve::DEFAULT)
    }
}

impl<'de> Deserialize<'de> for MemoryReserve {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = text(d, "a share (`10%`) or a size (`2GB`)")?;
        parse_reserve(&s)
            .map(MemoryReserve)
            .map_err(D::Error::custom)
    }
}

impl Serialize for MemoryReserve {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            Reserve::Fraction(f) => s.serialize_str(&format!("{}%", f * 100.0)),
            Reserve::Bytes(b) => s.serialize_str(&format!("{}B", b.get())),
        }
    }
}

impl JsonSchema for MemoryReserve {
    fn schema_name() -> Cow<'static, str> {
        "MemoryReserve".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "description": "Memory the runtime keeps for itself on the chip: a share of its \
                capacity (`\"10%\"`) or a size (`\"2GB\"`, `\"1.5GiB\"`, `0`).",
            "type": ["string", "number"],
        })
    }
}

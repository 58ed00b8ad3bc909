//! The JSON documents the CLI writes (`--format json`), as typed structs.
//!
//! Every document is a struct here that derives [`serde::Serialize`] (what is written) and
//! [`schemars::JsonSchema`] (what the committed schema in `docs/schema/` says), so that the two
//! cannot drift: [`schemas`] generates one JSON Schema (draft 2020-12) per document kind, and the
//! `schema` test of this crate fails when a committed schema differs from the generated one
//! (`UPDATE_SCHEMA=1 cargo test -p roofline-report --test schema` rewrites them).
//!
//! Numbers are in base units (FLOP, bytes, seconds, FLOP/s, B/s, FLOP/byte); a number that is
//! not finite (a zero-byte operator's intensity) is written as `null`, as `serde_json` does.
//! Documents are written by [`write_json`]: through a [`serde_json::Value`], so that the keys of
//! every object come out sorted, as they always have.

use crate::WriteError;
use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde::Serialize;
use std::borrow::Cow;
use std::io::Write;

pub mod analyze;
pub mod collective;
pub mod explain;
pub mod fuse;
pub mod generate;
pub mod hardware;
pub mod measure;
pub mod mfu;
pub mod models;
pub mod op;
pub mod parallel;
pub mod plan;
pub mod profile;
pub mod report;
pub mod serve_sim;
pub mod sweep;
pub mod train;
pub mod train_plan;

/// Version of the JSON documents' schema (`docs/schema/`); raised on any incompatible change.
/// Every document carries it as `schema_version`.
pub const SCHEMA_VERSION: u32 = 3;

/// The `schema_version` field: serialises as [`SCHEMA_VERSION`]; its schema admits that
/// constant only.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SchemaVersion;

impl Serialize for SchemaVersion {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u32(SCHEMA_VERSION)
    }
}

impl JsonSchema for SchemaVersion {
    fn inline_schema() -> bool {
        true
    }
    fn schema_name() -> Cow<'static, str> {
        "SchemaVersion".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "description": "Version of the schema; raised on any incompatible change.",
            "type": "integer",
            "const": SCHEMA_VERSION,
        })
    }
}

/// Schema of a map keyed by precision name (`{"bf16": …}`) with number values.
pub(crate) fn precision_map_num(g: &mut SchemaGenerator) -> Schema {
    let keys = g.subschema_for::<roofline_core::precision::Precision>();
    json_schema!({
        "type": "object",
        "propertyNames": keys,
        "additionalProperties": { "type": "number", "format": "double" },
    })
}

/// Schema of a map keyed by precision name with string values (sources).
pub(crate) fn precision_map_str(g: &mut SchemaGenerator) -> Schema {
    let keys = g.subschema_for::<roofline_core::precision::Precision>();
    json_schema!({
        "type": "object",
        "propertyNames": keys,
        "additionalProperties": { "type": "string" },
    })
}

/// A number that may be written as `null`: serde_json writes a non-finite `f64` (a
/// zero-byte operator's arithmetic intensity, a zero-time ratio) as `null`. Its schema is
/// `number | null`.
pub type Num = f64;

/// Schema of a [`Num`] field: `number` or `null`.
pub(crate) fn num_or_null(_: &mut SchemaGenerator) -> Schema {
    json_schema!({ "type": ["number", "null"], "format": "double" })
}

/// Writes `doc` as pretty JSON and a newline. The document goes through a [`serde_json::Value`]
/// (whose objects are sorted maps), so that keys come out in alphabetical order.
///
/// # Errors
/// A failed write.
pub fn write_json<T: Serialize + ?Sized>(doc: &T, out: &mut dyn Write) -> Result<(), WriteError> {
    let v = serde_json::to_value(doc)?;
    serde_json::to_writer_pretty(&mut *out, &v)?;
    writeln!(out)?;
    Ok(())
}

/// Closes every object schema that lists its properties (`additionalProperties: false`), so
/// that a field written but not in the schema fails validation; and leaves open only what
/// serde leaves open (maps, whose schema has no `properties`).
fn close_objects(schema: &mut Schema) {
    if let Some(o) = schema.as_object_mut() {
        if o.contains_key("properties") && !o.contains_key("additionalProperties") {
            o.insert("additionalProperties".into(), false.into());
        }
    }
    schemars::transform::transform_subschemas(&mut close_objects, schema);
}

/// The schema of `T` as committed: draft 2020-12, for what serialisation writes, every object
/// closed.
pub fn schema_of<T: JsonSchema>() -> Schema {
    let settings = schemars::generate::SchemaSettings::draft2020_12()
        .for_serialize()
        .with_transform(close_objects);
    let mut schema = settings.into_generator().into_root_schema_for::<T>();
    if let Some(root) = schema.as_object_mut() {
        let defs = root
            .get("$defs")
            .and_then(|d| d.as_object())
            .cloned()
            .unwrap_or_default();
        for v in root.values_mut() {
            inline_tagged_refs(v, &defs);
        }
        drop_unused_defs(root);
    }
    schema
}

/// An internally tagged variant (`{"type": "gemm", …the fields of Gemm}`) comes out of schemars
/// as its tag's `properties` beside a `$ref` to the fields' struct; closed, each side would
/// reject the other's members. This merges the struct's `properties` and `required` into the
/// variant and drops the `$ref`, so that the variant lists every member it admits.
fn inline_tagged_refs(
    v: &mut serde_json::Value,
    defs: &serde_json::Map<String, serde_json::Value>,
) {
    use serde_json::Value;
    match v {
        Value::Object(o) => {
            let target = match (o.get("$ref"), o.get("properties")) {
                (Some(Value::String(r)), Some(_)) => r
                    .strip_prefix("#/$defs/")
                    .and_then(|name| defs.get(name))
                    .cloned(),
                _ => None,
            };
            if let Some(Value::Object(def)) = target {
                o.remove("$ref");
                if let (Some(Value::Object(props)), Some(Value::Object(extra))) =
                    (o.get_mut("properties"), def.get("properties"))
                {
                    for (k, s) in extra {
                        props.entry(k.clone()).or_insert_with(|| s.clone());
                    }
                }
                let mut required: Vec<Value> = o
                    .get("required")
                    .and_then(|r| r.as_array())
                    .cloned()
                    .unwrap_or_default();
                for r in def
                    .get("required")
                    .and_then(|r| r.as_array())
                    .into_iter()
                    .flatten()
                {
                    if !required.contains(r) {
                        required.push(r.clone());
                    }
                }
                o.insert("required".into(), Value::Array(required));
            }
            for x in o.values_mut() {
                inline_tagged_refs(x, defs);
            }
        }
        Value::Array(a) => {
            for x in a {
                inline_tagged_refs(x, defs);
            }
        }
        _ => {}
    }
}

/// Removes the `$defs` no `$ref` points to any more (the structs [`inline_tagged_refs`] merged).
fn drop_unused_defs(root: &mut serde_json::Map<String, serde_json::Value>) {
    fn refs(v: &serde_json::Value, out: &mut Vec<String>) {
        match v {
            serde_json::Value::Object(o) => {
                for (k, x) in o {
                    match (k.as_str(), x) {
                        ("$ref", serde_json::Value::String(r)) => out.push(r.clone()),
                        _ => refs(x, out),
                    }
                }
            }
            serde_json::Value::Array(a) => a.iter().for_each(|x| refs(x, out)),
            _ => {}
        }
    }
    loop {
        let mut used = Vec::new();
        refs(&serde_json::Value::Object(root.clone()), &mut used);
        let Some(serde_json::Value::Object(defs)) = root.get_mut("$defs") else {
            return;
        };
        let before = defs.len();
        defs.retain(|name, _| used.iter().any(|r| r == &format!("#/$defs/{name}")));
        if defs.len() == before {
            return;
        }
    }
}

/// Every document kind the CLI writes as JSON: its file stem under `docs/schema/`
/// (`analyze` → `docs/schema/analyze.schema.json`), the commands that write it, and its schema.
pub fn schemas() -> Vec<(&'static str, &'static str, Schema)> {
    let mut all = vec![
        (
            "analyze",
            "roofline analyze",
            schema_of::<analyze::AnalyzeDoc>(),
        ),
        (
            "analyze-parallel",
            "roofline analyze --tp/--pp/--ep/--system",
            schema_of::<parallel::AnalyzeParallelDoc>(),
        ),
        (
            "analyze-fusion",
            "roofline analyze --fusion PRESET",
            schema_of::<analyze::AnalyzeFusionDoc>(),
        ),
        (
            "explain",
            "roofline analyze --explain NAME, roofline op … --explain",
            schema_of::<explain::ExplainDoc>(),
        ),
        (
            "join",
            "roofline analyze --profile FILE",
            schema_of::<profile::JoinDoc>(),
        ),
        ("op", "roofline op", schema_of::<op::OpReportDoc>()),
        (
            "collective",
            "roofline op all-reduce|reduce-scatter|all-gather|all-to-all|broadcast|send-recv",
            schema_of::<collective::CollectiveDoc>(),
        ),
        (
            "fuse",
            "roofline fuse --chain",
            schema_of::<fuse::FuseDoc>(),
        ),
        ("sweep", "roofline sweep", schema_of::<sweep::SweepDoc>()),
        (
            "sweep-tp",
            "roofline sweep --tp",
            schema_of::<parallel::SweepTpDoc>(),
        ),
        ("plan", "roofline plan", schema_of::<plan::PlanSearchDoc>()),
        (
            "serve-sim",
            "roofline serve-sim",
            schema_of::<serve_sim::ServeSimDoc>(),
        ),
        (
            "plan-train",
            "roofline plan --stage train",
            schema_of::<train_plan::TrainPlanSearchDoc>(),
        ),
        (
            "mfu",
            "roofline mfu (model known)",
            schema_of::<mfu::MfuDoc>(),
        ),
        (
            "mfu-by-size",
            "roofline mfu (no model: MFU as a function of N)",
            schema_of::<mfu::MfuBySizeDoc>(),
        ),
        (
            "mfu-reported",
            "roofline mfu --achieved-flops (no model)",
            schema_of::<mfu::MfuReportedDoc>(),
        ),
        ("mbu", "roofline mbu", schema_of::<mfu::MbuDoc>()),
        (
            "hardware-list",
            "roofline hardware list",
            schema_of::<hardware::HardwareListDoc>(),
        ),
        (
            "hardware-show",
            "roofline hardware show ID",
            schema_of::<hardware::HardwareShowDoc>(),
        ),
        (
            "hardware-show-system",
            "roofline hardware show SYSTEM",
            schema_of::<hardware::SystemShowDoc>(),
        ),
        (
            "hardware-list-systems",
            "roofline hardware list --systems",
            schema_of::<hardware::SystemListDoc>(),
        ),
        (
            "hardware-compare",
            "roofline hardware compare ID…",
            schema_of::<hardware::HardwareCompareDoc>(),
        ),
        (
            "models",
            "roofline models",
            schema_of::<models::ModelsDoc>(),
        ),
        (
            "import-profile",
            "roofline import PROFILE (ncu CSV, torch trace)",
            schema_of::<profile::KernelsDoc>(),
        ),
        (
            "import-roof",
            "roofline import ROOF (mixbench, ERT)",
            schema_of::<profile::RoofDoc>(),
        ),
        (
            "measure",
            "roofline measure",
            schema_of::<measure::MeasureDoc>(),
        ),
        (
            "measure-kernels",
            "roofline measure kernels",
            schema_of::<measure::KernelsCheckDoc>(),
        ),
        ("train", "roofline train", schema_of::<train::TrainDoc>()),
        (
            "generate",
            "roofline generate",
            schema_of::<generate::GenerateDoc>(),
        ),
        (
            "sweep-pareto",
            "roofline sweep --pareto",
            schema_of::<crate::pareto::ParetoDoc>(),
        ),
        (
            "report",
            "roofline report --out FILE",
            schema_of::<report::ReportSummaryDoc>(),
        ),
    ];
    for (_, commands, schema) in &mut all {
        schema.insert(
            "$comment".into(),
            format!(
                "Written by `{commands} --format json`. Generated from the Rust types of \
                 crates/report/src/doc/; do not edit: UPDATE_SCHEMA=1 cargo test -p \
                 roofline-report --test schema"
            )
            .into(),
        );
    }
    all
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Serialize, JsonSchema)]
    struct Two {
        schema_version: SchemaVersion,
        zeta: f64,
        alpha: f64,
    }

    #[test]
    fn documents_come_out_with_sorted_keys_and_null_for_non_finite_numbers(
    ) -> Result<(), Box<dyn std::error::Error>> {
        let mut out = Vec::new();
        let doc = Two {
            schema_version: SchemaVersion,
            zeta: f64::INFINITY,
            alpha: 0.5,
        };
        write_json(&doc, &mut out)?;
        // JSON has no infinity: serde_json writes a non-finite number as null.
        assert_eq!(
            String::from_utf8(out)?,
            format!(
                "{{\n  \"alpha\": 0.5,\n  \"schema_version\": {SCHEMA_VERSION},\n  \"zeta\": null\n}}\n"
            )
        );
        Ok(())
    }

    #[test]
    fn objects_are_closed_and_the_version_is_a_constant() -> Result<(), Box<dyn std::error::Error>>
    {
        let s = serde_json::to_value(schema_of::<Two>())?;
        assert_eq!(s["additionalProperties"], false);
        assert_eq!(s["properties"]["schema_version"]["const"], SCHEMA_VERSION);
        let required = s["required"].as_array().ok_or("no required")?;
        assert_eq!(required.len(), 3);
        Ok(())
    }

    #[test]
    fn every_document_kind_has_one_schema_that_carries_the_version(
    ) -> Result<(), Box<dyn std::error::Error>> {
        let all = schemas();
        // Thirty-one kinds: analyze (plain, on many devices, with fusion), explain, join, op,
        // collective, fuse, sweep (over batches, over tensor-parallel degrees, serving's
        // Pareto front), plan (inference, training), mfu (by formula, by size, from a reported
        // FLOP/s), mbu, hardware (list, show, show a system, list systems, compare), models,
        // import (profile, roof), measure, measure kernels, train, generate, serve-sim, report.
        assert_eq!(all.len(), 31);
        for (i, (name, _, schema)) in all.iter().enumerate() {
            assert!(
                all[..i].iter().all(|(n, _, _)| n != name),
                "{name} listed twice"
            );
            let v = serde_json::to_value(schema)?;
            assert_eq!(
                v["properties"]["schema_version"]["const"], SCHEMA_VERSION,
                "{name}"
            );
            assert!(
                v["required"]
                    .as_array()
                    .is_some_and(|r| r.iter().any(|x| x == "schema_version")),
                "{name}"
            );
        }
        Ok(())
    }
}

//! The committed JSON Schemas (`docs/schema/*.schema.json`) are the ones generated from the
//! document types of `roofline_report::doc`: a schema that differs from its types (stale) fails
//! here. `UPDATE_SCHEMA=1 cargo test -p roofline-report --test schema` rewrites them.

use std::path::PathBuf;

type TestResult = Result<(), Box<dyn std::error::Error>>;

fn schema_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/schema")
}

/// The text of a schema file: pretty JSON and a final newline.
fn text(schema: &schemars::Schema) -> Result<String, serde_json::Error> {
    Ok(serde_json::to_string_pretty(schema)? + "\n")
}

#[test]
fn committed_schemas_match_the_types() -> TestResult {
    let dir = schema_dir();
    let update = std::env::var_os("UPDATE_SCHEMA").is_some_and(|v| v == "1");
    let mut stale = Vec::new();
    let all = roofline_report::doc::schemas();
    for (name, _, schema) in &all {
        let path = dir.join(format!("{name}.schema.json"));
        let want = text(schema)?;
        if update {
            std::fs::create_dir_all(&dir)?;
            std::fs::write(&path, &want)?;
            continue;
        }
        match std::fs::read_to_string(&path) {
            Ok(have) if have == want => {}
            Ok(_) => stale.push(format!("{} differs from its types", path.display())),
            Err(e) => stale.push(format!("{}: {e}", path.display())),
        }
    }
    // A committed schema no document kind generates is stale too.
    for entry in std::fs::read_dir(&dir)? {
        let file = entry?.file_name().to_string_lossy().into_owned();
        let known = all
            .iter()
            .any(|(name, _, _)| file == format!("{name}.schema.json"));
        if !known && file.ends_with(".schema.json") {
            if update {
                std::fs::remove_file(dir.join(&file))?;
            } else {
                stale.push(format!("{file}: no document kind generates it"));
            }
        }
    }
    assert!(
        stale.is_empty(),
        "stale JSON schemas:\n  {}\nregenerate them: UPDATE_SCHEMA=1 cargo test -p roofline-report --test schema",
        stale.join("\n  ")
    );
    Ok(())
}

#[test]
fn every_schema_is_a_valid_draft_2020_12_schema() -> TestResult {
    for (name, _, schema) in roofline_report::doc::schemas() {
        let v = serde_json::to_value(&schema)?;
        assert_eq!(
            v["$schema"], "https://json-schema.org/draft/2020-12/schema",
            "{name}"
        );
        if let Err(e) = jsonschema::draft202012::meta::validate(&v) {
            panic!("{name}: not a valid schema: {e}");
        }
        jsonschema::draft202012::new(&v).map_err(|e| format!("{name}: {e}"))?;
    }
    Ok(())
}

//! The everyday tables fit 120 columns when stdout is not a terminal, and `--wide` gives every
//! column back.

use assert_cmd::Command;

fn stdout(args: &[&str]) -> Result<String, Box<dyn std::error::Error>> {
    let out = Command::cargo_bin("roofline")?.args(args).output()?;
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Ok(String::from_utf8(out.stdout)?)
}

/// The widest table line (a line that starts with `|` or `+`), in characters.
fn widest_table_line(text: &str) -> usize {
    text.lines()
        .filter(|l| l.starts_with('|') || l.starts_with('+'))
        .map(|l| l.chars().count())
        .max()
        .unwrap_or(0)
}

fn presets() -> Result<Vec<String>, Box<dyn std::error::Error>> {
    let v: serde_json::Value = serde_json::from_str(&stdout(&["models", "--format", "json"])?)?;
    Ok(v["models"]
        .as_array()
        .ok_or("no models")?
        .iter()
        .filter_map(|m| m["name"].as_str().map(String::from))
        .collect())
}

#[test]
fn analyze_fusion_and_sweep_fit_120_columns_for_every_preset(
) -> Result<(), Box<dyn std::error::Error>> {
    let models = presets()?;
    assert!(models.len() >= 10, "{models:?}");
    for m in &models {
        for args in [
            vec![
                "analyze",
                m.as_str(),
                "--hardware",
                "h100-sxm",
                "--stage",
                "both",
            ],
            vec![
                "analyze",
                m.as_str(),
                "--hardware",
                "h100-sxm",
                "--fusion",
                "max",
            ],
            vec![
                "sweep",
                m.as_str(),
                "--hardware",
                "h100-sxm",
                "--batch",
                "1,2,4,8,16,32,64,128,256,512",
            ],
        ] {
            let text = stdout(&args)?;
            let w = widest_table_line(&text);
            assert!(w > 0 && w <= 120, "{args:?}: a table {w} columns wide");
        }
    }
    Ok(())
}

#[test]
fn hardware_show_fits_120_columns_for_every_chip_and_system(
) -> Result<(), Box<dyn std::error::Error>> {
    for systems in [false, true] {
        let mut args = vec!["hardware", "list", "--format", "json"];
        if systems {
            args.push("--systems");
        }
        let v: serde_json::Value = serde_json::from_str(&stdout(&args)?)?;
        let key = if systems { "systems" } else { "hardware" };
        let ids: Vec<String> = v[key]
            .as_array()
            .ok_or("no list")?
            .iter()
            .filter_map(|c| c["id"].as_str().map(String::from))
            .collect();
        assert!(!ids.is_empty(), "{key}");
        for id in &ids {
            let text = stdout(&["hardware", "show", id])?;
            let w = widest_table_line(&text);
            assert!(
                w > 0 && w <= 120,
                "hardware show {id}: a table {w} columns wide"
            );
        }
    }
    Ok(())
}

#[test]
fn wide_gives_every_column_back() -> Result<(), Box<dyn std::error::Error>> {
    let narrow = stdout(&[
        "analyze",
        "llama-2-7b",
        "--hardware",
        "a6000",
        "--stage",
        "prefill",
    ])?;
    let wide = stdout(&[
        "analyze",
        "llama-2-7b",
        "--hardware",
        "a6000",
        "--stage",
        "prefill",
        "--wide",
    ])?;
    let header = |t: &str| t.lines().find(|l| l.contains("operator")).map(String::from);
    let (n, w) = (
        header(&narrow).ok_or("no header")?,
        header(&wide).ok_or("no header")?,
    );
    assert!(!n.contains("ridge") && !n.contains("launch"), "{n}");
    assert!(w.contains("ridge") && w.contains("launch"), "{w}");
    // The A6000's bf16 ridge, 154.8e12 / 768e9 = 201.6 FLOP/B, is under the narrow table.
    assert!(narrow.contains("201.6 FLOP/B (from q_proj)"), "{narrow}");
    let fused = stdout(&["analyze", "--fusion", "max", "--stage", "prefill", "--wide"])?;
    assert!(fused.contains("tile (on chip)"));
    let show = stdout(&["hardware", "show", "h100-sxm", "--wide", "--sources"])?;
    assert!(show
        .lines()
        .any(|l| l.contains("precision") && l.contains("source")));
    Ok(())
}

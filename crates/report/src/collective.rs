//! Rendering of a collective (`roofline op all-reduce …`): the α–β bound with its algorithm,
//! link tier, latency and transfer terms, algorithm and bus bandwidth, and the estimate beside
//! it, labelled as one; with `--explain`, the worked derivation.

use crate::explain::write_step;
use crate::units::{human_bytes, human_bytes_per_s, human_seconds};
use crate::{Format, WriteError};
use roofline_core::comm::{AlgorithmChoice, CollectiveCost, CommBound};
use roofline_core::explain::{exact_number, CollectiveDerivation};
use std::io::Write;

/// What `roofline op all-reduce` (and the other collectives) reports.
#[derive(Debug, Clone, Copy)]
pub struct CollectiveReport<'a> {
    /// The collective in words (`all-reduce of 64 MiB over 8 ranks`).
    pub title: &'a str,
    /// The system's name (`8 × NVIDIA H100 SXM (HGX H100 8-GPU)`).
    pub system: &'a str,
    /// The name of the bounding tier's links (`NVLink 4 + NVSwitch`), empty for none.
    pub link: &'a str,
    /// What `--algorithm` asked for.
    pub choice: AlgorithmChoice,
    /// The cost.
    pub cost: &'a CollectiveCost,
    /// With `--explain`, the derivation.
    pub derivation: Option<&'a CollectiveDerivation>,
}

/// Writes `r` in `format` to `out`.
///
/// # Errors
/// A failed write.
pub fn write_collective(
    r: &CollectiveReport<'_>,
    format: Format,
    out: &mut dyn Write,
) -> Result<(), WriteError> {
    let c = r.cost;
    let e = c.estimate();
    match format {
        Format::Json => crate::doc::write_json(&crate::doc::collective::CollectiveDoc::of(r), out)?,
        Format::Csv => {
            let mut w = csv::Writer::from_writer(out);
            w.write_record([
                "collective",
                "algorithm",
                "bytes",
                "ranks",
                "ranks_per_node",
                "nodes",
                "tier",
                "link_bytes_per_s",
                "traffic_bytes",
                "latency_s",
                "transfer_s",
                "time_s",
                "bound",
                "algbw_bytes_per_s",
                "busbw_bytes_per_s",
                "estimate_time_s",
                "estimate_efficiency",
            ])?;
            w.write_record([
                c.collective.to_string(),
                c.algorithm.to_string(),
                c.bytes.get().to_string(),
                c.group.ranks.to_string(),
                c.group.ranks_per_node.to_string(),
                c.group.nodes().to_string(),
                c.tier.to_string(),
                c.link.get().to_string(),
                c.traffic.get().to_string(),
                c.latency.get().to_string(),
                c.transfer.get().to_string(),
                c.time().get().to_string(),
                bound_word(c.bound()).to_string(),
                c.algbw().get().to_string(),
                c.busbw().get().to_string(),
                e.time.get().to_string(),
                e.efficiency.to_string(),
            ])?;
            w.flush()?;
        }
        Format::Table => {
            writeln!(out, "{} on {}", r.title, r.system)?;
            let algo = match r.choice {
                AlgorithmChoice::Auto => format!(
                    "{} in NCCL's {} protocol (auto: the fastest bound)",
                    c.algorithm, c.protocol
                ),
                AlgorithmChoice::Only(_) => format!(
                    "{} (--algorithm) in NCCL's {} protocol (its fastest)",
                    c.algorithm, c.protocol
                ),
            };
            let link = if r.link.is_empty() {
                format!("{} (no link used)", c.tier)
            } else {
                format!(
                    "{} ({}), {} per GPU per direction",
                    r.link,
                    c.tier,
                    human_bytes_per_s(c.link.get())
                )
            };
            let rows = [
                ("algorithm", algo),
                ("bounding link", link),
                (
                    "traffic",
                    format!("{} per rank over that link", human_bytes(c.traffic.get())),
                ),
                ("latency (α)", human_seconds(c.latency.get())),
                ("transfer (β)", human_seconds(c.transfer.get())),
                (
                    "time",
                    format!(
                        "{}  α–β lower bound, {}",
                        human_seconds(c.time().get()),
                        c.bound()
                    ),
                ),
                (
                    "algbw / busbw",
                    format!(
                        "{} / {}",
                        human_bytes_per_s(c.algbw().get()),
                        human_bytes_per_s(c.busbw().get())
                    ),
                ),
                (
                    "estimate",
                    format!(
                        "{}  at η = {} of the link's speed (estimate, not a bound); busbw {}",
                        human_seconds(e.time.get()),
                        exact_number((e.efficiency * 1000.0).round() / 1000.0),
                        human_bytes_per_s(e.busbw.get())
                    ),
                ),
            ];
            for (k, v) in rows {
                writeln!(out, "  {k:<15} {v}")?;
            }
            writeln!(
                out,
                "time = latency + transfer: NCCL's latency model (tuning.cc) and the bytes per rank \
                 over the slowest link it crosses; η from published nccl-tests bus bandwidths. \
                 `--explain` derives every number."
            )?;
            if let Some(d) = r.derivation {
                writeln!(out)?;
                writeln!(out, "Given")?;
                for g in &d.given {
                    let unit = if g.unit.is_empty() {
                        String::new()
                    } else {
                        format!(" {}", g.unit)
                    };
                    writeln!(
                        out,
                        "  {} = {}{unit}  {}",
                        g.symbol,
                        exact_number(g.value),
                        g.meaning
                    )?;
                }
                writeln!(out)?;
                writeln!(out, "Steps")?;
                let mut previous: Option<&str> = None;
                for (i, s) in d.steps.iter().enumerate() {
                    write_step(out, i, s, previous)?;
                    previous = Some(s.source.as_str());
                }
            }
        }
    }
    Ok(())
}

fn bound_word(b: CommBound) -> &'static str {
    match b {
        CommBound::Latency => "latency",
        CommBound::Bandwidth => "bandwidth",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use roofline_core::cited::Cited;
    use roofline_core::comm::{collective_cost, Collective, Fabric, Group, LinkTier};
    use roofline_core::explain::explain_collective;
    use roofline_core::units::{Bytes, BytesPerSec, Seconds};

    fn render(format: Format, explain: bool) -> Result<String, Box<dyn std::error::Error>> {
        let fabric = Fabric {
            scale_up: Some(LinkTier::new(
                "NVLink 4",
                Cited::new(BytesPerSec(450e9), "H100 datasheet 900 GB/s ÷ 2"),
                Cited::new(Seconds(3.4e-6), "NCCL tuning.cc hwLatencies"),
            )),
            ..Fabric::default()
        };
        let cost = collective_cost(
            Collective::AllReduce,
            Bytes(67_108_864.0),
            Group::in_one_node(8),
            &fabric,
            AlgorithmChoice::Auto,
        )?;
        let d = explain_collective("all-reduce of 64 MiB", &cost, &fabric);
        let mut out = Vec::new();
        write_collective(
            &CollectiveReport {
                title: "all-reduce of 64 MiB",
                system: "8 × H100",
                link: "NVLink 4",
                choice: AlgorithmChoice::Auto,
                cost: &cost,
                derivation: explain.then_some(&d),
            },
            format,
            &mut out,
        )?;
        Ok(String::from_utf8(out)?)
    }

    #[test]
    fn the_table_shows_the_bound_and_the_labelled_estimate(
    ) -> Result<(), Box<dyn std::error::Error>> {
        let t = render(Format::Table, false)?;
        // 56 µs + 117,440,512 B / 450e9 B/s = 316.98 µs.
        assert!(t.contains("ring in NCCL's simple protocol (auto"), "{t}");
        assert!(t.contains("NVLink 4 (scale-up), 450"), "{t}");
        assert!(t.contains("α–β lower bound, bandwidth-bound"), "{t}");
        assert!(t.contains("316.98 µs") || t.contains("317.0 µs"), "{t}");
        assert!(t.contains("(estimate, not a bound)"), "{t}");
        let e = render(Format::Table, true)?;
        assert!(e.contains("D = 2·(n − 1)·S/n"), "{e}");
        assert!(e.contains("algbw = S/t"), "{e}");
        assert!(e.contains("estimated time (estimate, not a bound)"), "{e}");
        let j: serde_json::Value = serde_json::from_str(&render(Format::Json, true)?)?;
        assert_eq!(j["algorithm"], "ring");
        assert_eq!(j["tier"], "scale_up");
        assert_eq!(j["estimate"]["label"], "estimate");
        assert_eq!(j["traffic_bytes"], 117_440_512.0);
        assert!(j["steps"].is_array());
        let c = render(Format::Csv, false)?;
        assert_eq!(c.lines().count(), 2);
        Ok(())
    }
}

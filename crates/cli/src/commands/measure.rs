//! `roofline measure`: the machine's own roofline, measured; written as a chip file that
//! `--hardware FILE` reads, a table/JSON/CSV, and a hierarchical roofline plot.

use crate::args::MeasureArgs;
use crate::error::{CliError, Kind};
use crate::output::{check_output, write_output};
use roofline_core::measured::Measurement;
use roofline_inputs::hardware::{device_to_toml, parse_device};
use roofline_measure::gpu::{measure_gpu, GpuOptions};
use roofline_measure::{measure_cpu, CpuOptions, ErrorKind, MeasureError, Progress};
use roofline_report::hier_plot::{render, HierChart};
use std::io::Write;

/// Measures this machine: GPU `gpu` when given, else the CPU with `cpu`'s options (the GPU
/// takes its quickness and date from them).
pub(super) fn measure_machine(
    gpu: Option<u32>,
    cpu: CpuOptions,
    bar: &mut Bar,
) -> Result<Measurement, CliError> {
    Ok(match gpu {
        Some(device) => measure_gpu(
            &GpuOptions {
                device: device as usize,
                quick: cpu.quick,
                date: cpu.date,
            },
            bar,
        )?,
        None => measure_cpu(&cpu, bar)?,
    })
}

impl From<MeasureError> for CliError {
    fn from(e: MeasureError) -> Self {
        Self {
            kind: match e.kind {
                ErrorKind::Usage => Kind::BadInput,
                ErrorKind::Environment => Kind::Internal,
            },
            message: e.message,
            hint: e.hint,
        }
    }
}

/// A progress bar on stderr (indicatif draws nothing when stderr is not a terminal).
pub(super) struct Bar(pub(super) Option<indicatif::ProgressBar>);

impl Progress for Bar {
    fn start(&mut self, total: u64) {
        let bar = indicatif::ProgressBar::new(total);
        if let Ok(style) = indicatif::ProgressStyle::with_template(
            "measuring {bar:30} {pos}/{len} {elapsed} {msg}",
        ) {
            bar.set_style(style);
        }
        self.0 = Some(bar);
    }
    fn step(&mut self, label: &str) {
        if let Some(b) = &self.0 {
            b.set_message(label.to_string());
            b.inc(1);
        }
    }
    fn finish(&mut self) {
        if let Some(b) = self.0.take() {
            b.finish_and_clear();
        }
    }
}

pub fn run(a: &MeasureArgs, out: &mut dyn Write) -> Result<(), CliError> {
    // Every output path is checked before the minute of measuring.
    let plot_format = match &a.plot.plot {
        Some(p) => Some(super::plot::check_plot_path(p, a.plot.force)?),
        None => None,
    };
    if let Some(p) = &a.out {
        if !p
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| e.eq_ignore_ascii_case("toml"))
        {
            return Err(CliError::bad_input(
                format!("`--out {}`: a chip file is TOML", p.display()),
                Some("end the file name in `.toml`, e.g. `--out host.toml`".into()),
            ));
        }
        check_output(p, a.plot.force, "--out", "host.toml")?;
    }
    if a.id.trim().is_empty() || a.id.chars().any(char::is_whitespace) {
        return Err(CliError::bad_input(
            format!("`--id {}`: a chip id is one word", a.id),
            Some("use lowercase letters, digits and `-`, e.g. `--id my-host`".into()),
        ));
    }

    if let Some(secs) = a.wait_idle {
        wait_for_quiet(secs)?;
    }
    let mut bar = Bar(None);
    let cpu = CpuOptions {
        quick: a.quick,
        threads: a.threads.map(|t| t as usize),
        max_working_set: a.max_working_set.map(|m| m as f64 * 1048576.0),
        date: today_utc(),
    };
    let m = measure_machine(a.gpu.then_some(a.device), cpu, &mut bar)?;
    let name = a
        .name
        .clone()
        .unwrap_or_else(|| format!("{} (measured on {})", short_model(&m.processor), m.host));
    let device = m.to_device(&a.id, &name);

    if let (Some(path), false, false) = (&a.out, m.unsettled.is_empty(), a.accept_unsettled) {
        // The table still shows what was measured; the chip file is refused.
        roofline_report::measure::write_measurement(&m, &device, a.format.format.into(), out)?;
        return Err(CliError::bad_input(
            format!(
                "{} figure(s) did not settle ({}): `{}` not written",
                m.unsettled.len(),
                m.unsettled.join("; "),
                path.display()
            ),
            Some(
                "measure again on a quiet machine (`--wait-idle` waits for one), or pass --accept-unsettled to write them marked"
                    .into(),
            ),
        ));
    }
    if let Some(path) = &a.out {
        let text = format!(
            "# Measured by `roofline measure` on {} ({}), {}.\n# Use it: roofline analyze llama-2-7b --hardware {}\n{}",
            m.host,
            m.processor,
            m.date,
            path.display(),
            device_to_toml(&device)
        );
        // The file must read back as the catalog's format before it is written.
        parse_device(&text, &path.display().to_string()).map_err(|e| CliError {
            kind: Kind::Internal,
            message: format!(
                "the measured chip does not make a valid chip file: {}",
                e.message
            ),
            hint: e.hint,
        })?;
        write_output(path, a.plot.force, text.as_bytes())?;
    }
    if let (Some(path), Some(format)) = (&a.plot.plot, plot_format) {
        let bytes = render(&HierChart::from_measurement(&m), format).map_err(|e| CliError {
            kind: Kind::Internal,
            message: e.to_string(),
            hint: None,
        })?;
        write_output(path, a.plot.force, &bytes)?;
    }
    roofline_report::measure::write_measurement(&m, &device, a.format.format.into(), out)?;
    if let Some(path) = &a.out {
        let mut err = std::io::stderr().lock();
        let _ = writeln!(
            err,
            "wrote `{}`; use it: roofline analyze llama-2-7b --hardware {}",
            path.display(),
            path.display()
        );
    }
    Ok(())
}

/// Waits up to `secs` seconds for a quiet machine ([`roofline_measure::idle::wait_idle`]),
/// saying so on stderr.
fn wait_for_quiet(secs: u64) -> Result<(), CliError> {
    use roofline_measure::idle::{wait_idle, Idle, QUIET_BELOW, QUIET_SAMPLES};
    let mut err = std::io::stderr().lock();
    let _ = writeln!(
        err,
        "waiting for a quiet machine (other work under {:.0} % of the CPUs for {QUIET_SAMPLES} s, at most {secs} s)",
        100.0 * QUIET_BELOW
    );
    match wait_idle(std::time::Duration::from_secs(secs)) {
        Idle::Quiet(t) => {
            let _ = writeln!(err, "quiet after {t:.0} s; measuring");
            Ok(())
        }
        Idle::Busy(share) => Err(CliError::bad_input(
            format!(
                "`--wait-idle {secs}`: the machine stayed busy ({:.0} % of the CPUs in the last second)",
                100.0 * share
            ),
            Some("stop the other work, wait longer (`--wait-idle 900`), or measure without --wait-idle and accept unsettled figures".into()),
        )),
        Idle::Unknown => Err(CliError::bad_input(
            format!("`--wait-idle {secs}`: this OS gives no CPU counters (/proc/stat)"),
            Some("measure without --wait-idle".into()),
        )),
    }
}

/// The processor model without the cache list `measure` appends (`AMD EPYC; L1 32 KiB, …`).
pub(super) fn short_model(p: &str) -> &str {
    p.split(';').next().unwrap_or(p).trim()
}

/// Today's date in UTC, `YYYY-MM-DD`, from the system clock (days since 1970-01-01 to a civil
/// date: H. Hinnant, "chrono-Compatible Low-Level Date Algorithms", `civil_from_days`).
pub(super) fn today_utc() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let (y, m, d) = civil_from_days((secs / 86_400) as i64);
    format!("{y:04}-{m:02}-{d:02}")
}

fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn civil_dates_by_hand() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        // 2000-03-01 is day 11017: 30 years of 365 days + 7 leap days (72, 76, …, 96) + 31 + 29.
        assert_eq!(civil_from_days(30 * 365 + 7 + 31 + 29), (2000, 3, 1));
        assert_eq!(civil_from_days(-1), (1969, 12, 31));
        assert_eq!(short_model("AMD EPYC; L1 32 KiB"), "AMD EPYC");
    }
}

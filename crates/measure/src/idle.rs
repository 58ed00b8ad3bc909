//! Waiting for a quiet machine before measuring: the share of CPU time other work takes, from
//! the kernel's counters (`/proc/stat`, Linux), sampled once a second.
//!
//! The first line of `/proc/stat` sums every CPU's time, in clock ticks, by state: `user nice
//! system idle iowait irq softirq steal …` (proc(5)). Busy time is everything but `idle` and
//! `iowait`; the busy share over an interval is Δbusy / Δtotal. `steal` (time the hypervisor
//! gave another guest) counts as busy: a measurement in a guest whose host is busy is not
//! quiet either.

use std::time::{Duration, Instant};

/// The busy share below which the machine counts as quiet.
pub const QUIET_BELOW: f64 = 0.10;

/// Consecutive quiet one-second samples needed.
pub const QUIET_SAMPLES: u32 = 3;

/// Busy and total ticks of all CPUs together.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CpuTicks {
    /// Ticks in every state but idle and iowait.
    pub busy: u64,
    /// Ticks in every state.
    pub total: u64,
}

/// The `cpu` line of `/proc/stat` text as [`CpuTicks`]; `None` when it is missing or malformed.
pub fn parse_proc_stat(text: &str) -> Option<CpuTicks> {
    let line = text.lines().find(|l| l.starts_with("cpu "))?;
    let v: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .map(str::parse)
        .collect::<Result<_, _>>()
        .ok()?;
    if v.len() < 4 {
        return None;
    }
    let total: u64 = v.iter().take(8).sum();
    let idle = v[3] + v.get(4).copied().unwrap_or(0);
    Some(CpuTicks {
        busy: total.saturating_sub(idle),
        total,
    })
}

/// The busy share between two readings, 0–1; `None` when no tick passed.
pub fn busy_share(before: CpuTicks, after: CpuTicks) -> Option<f64> {
    let total = after.total.checked_sub(before.total)?;
    if total == 0 {
        return None;
    }
    let busy = after.busy.saturating_sub(before.busy);
    Some((busy as f64 / total as f64).min(1.0))
}

/// Whether the last [`QUIET_SAMPLES`] shares are all below [`QUIET_BELOW`].
pub fn is_quiet(shares: &[f64]) -> bool {
    shares.len() >= QUIET_SAMPLES as usize
        && shares[shares.len() - QUIET_SAMPLES as usize..]
            .iter()
            .all(|s| *s < QUIET_BELOW)
}

/// What [`wait_idle`] found.
#[derive(Debug, Clone, PartialEq)]
pub enum Idle {
    /// Quiet after this many seconds of waiting.
    Quiet(f64),
    /// Still busy when the time ran out: the last share seen.
    Busy(f64),
    /// The OS gives no CPU counters (not Linux).
    Unknown,
}

/// Samples `/proc/stat` once a second until [`QUIET_SAMPLES`] samples in a row are below
/// [`QUIET_BELOW`], or `max` has passed.
pub fn wait_idle(max: Duration) -> Idle {
    let read = || {
        std::fs::read_to_string("/proc/stat")
            .ok()
            .and_then(|t| parse_proc_stat(&t))
    };
    let Some(mut prev) = read() else {
        return Idle::Unknown;
    };
    let started = Instant::now();
    let mut shares = Vec::new();
    loop {
        std::thread::sleep(Duration::from_secs(1));
        let Some(now) = read() else {
            return Idle::Unknown;
        };
        if let Some(s) = busy_share(prev, now) {
            shares.push(s);
        }
        prev = now;
        if is_quiet(&shares) {
            return Idle::Quiet(started.elapsed().as_secs_f64());
        }
        if started.elapsed() >= max {
            return Idle::Busy(shares.last().copied().unwrap_or(1.0));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn busy_share_from_two_readings() -> Result<(), String> {
        // user nice system idle iowait irq softirq steal guest guest_nice
        let a = parse_proc_stat("cpu  100 0 50 800 50 0 0 0 0 0\ncpu0 1 2 3 4\n")
            .ok_or("no cpu line")?;
        assert_eq!(
            a,
            CpuTicks {
                busy: 150,
                total: 1000
            }
        );
        // 100 ticks later: 30 user, 5 steal, 60 idle, 5 iowait → 35 busy of 100.
        let b = parse_proc_stat("cpu  130 0 50 860 55 0 0 5 0 0\n").ok_or("no cpu line")?;
        assert_eq!(busy_share(a, b), Some(0.35));
        assert_eq!(busy_share(a, a), None);
        assert_eq!(parse_proc_stat("intr 1 2 3\n"), None);
        assert_eq!(parse_proc_stat("cpu  1 x 3 4\n"), None);
        Ok(())
    }

    #[test]
    fn quiet_means_three_quiet_seconds_in_a_row() {
        assert!(!is_quiet(&[0.01, 0.02]));
        assert!(is_quiet(&[0.9, 0.05, 0.02, 0.09]));
        assert!(!is_quiet(&[0.05, 0.02, 0.5]));
    }
}

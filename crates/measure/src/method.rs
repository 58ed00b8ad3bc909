//! The measurement method: how long a repetition lasts, when to stop repeating, which statistic.
//!
//! Every figure is a rate (FLOP/s, B/s) computed from one repetition: the work all threads did
//! divided by the slowest thread's time. A repetition lasts at least [`Method::target_rep`]
//! seconds (the work per repetition is calibrated to it, which also warms the caches, the clock
//! and the page tables); repetitions go on until the last [`Method::window`] of them agree
//! within [`Method::tolerance`] (relative spread `(max − min) / median`), or until
//! [`Method::max_reps`] or [`Method::max_task_secs`]; the figure is the median of that window.

use roofline_core::measured::Stat;

/// Parameters of the method.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Method {
    /// Shortest repetition, seconds.
    pub target_rep: f64,
    /// Fewest repetitions.
    pub min_reps: u32,
    /// Most repetitions.
    pub max_reps: u32,
    /// Repetitions that must agree (the last ones).
    pub window: u32,
    /// Largest relative spread of the window that counts as stable.
    pub tolerance: f64,
    /// Time after which one figure stops repeating even if not stable, seconds.
    pub max_task_secs: f64,
}

impl Method {
    /// The default run: 10 ms repetitions, 5 to 25 of them, the last 5 within 3 %, at most
    /// 0.4 s per figure (past 5 repetitions): the 99 sweep figures and 6 peaks of two cores stay
    /// under a minute even on a noisy machine.
    pub fn standard() -> Method {
        Method {
            target_rep: 0.010,
            min_reps: 5,
            max_reps: 25,
            window: 5,
            tolerance: 0.03,
            max_task_secs: 0.4,
        }
    }

    /// `--quick`: 2 ms repetitions, 3 to 8 of them, the last 3 within 5 %, at most 0.1 s.
    pub fn quick() -> Method {
        Method {
            target_rep: 0.002,
            min_reps: 3,
            max_reps: 8,
            window: 3,
            tolerance: 0.05,
            max_task_secs: 0.1,
        }
    }

    /// Peaks get repetitions five times as long (the compute kernels are short to start).
    pub fn for_peaks(self) -> Method {
        Method {
            target_rep: self.target_rep * 5.0,
            max_task_secs: self.max_task_secs * 2.0,
            ..self
        }
    }

    /// One line describing the method, for the output and the chip file's notes.
    pub fn describe(&self) -> String {
        format!(
            "warm-up, then repetitions of ≥ {} ms until the last {} agree within {:.0} % ({} to {}, ≤ {} s each); median of those {}",
            self.target_rep * 1e3,
            self.window,
            self.tolerance * 100.0,
            self.min_reps,
            self.max_reps,
            self.max_task_secs,
            self.window
        )
    }

    /// After a repetition: the figure if done, `None` to repeat. `samples` are the rates so far
    /// (oldest first), `elapsed` the seconds spent on this figure.
    ///
    /// Done when at least `min_reps` samples exist and the last `window` agree within
    /// `tolerance` (stable), or when `max_reps` or `max_task_secs` is reached (not stable; still
    /// the median of the last `window`).
    pub fn done(&self, samples: &[f64], elapsed: f64) -> Option<Stat> {
        let n = samples.len();
        if n == 0 || (n as u32) < self.min_reps.max(1) {
            return None;
        }
        let w = (self.window.max(1) as usize).min(n);
        let last = &samples[n - w..];
        let stat = Stat::of(last, true)?;
        if stat.spread() <= self.tolerance {
            return Some(stat);
        }
        if n as u32 >= self.max_reps || elapsed >= self.max_task_secs {
            return Some(Stat {
                stable: false,
                ..stat
            });
        }
        None
    }

    /// Work units for one repetition, from a calibration run of `units` that took `secs`:
    /// enough for [`Method::target_rep`], at least 1.
    pub fn units_for(&self, units: u64, secs: f64) -> u64 {
        if secs <= 0.0 || !secs.is_finite() {
            return units.saturating_mul(4).max(1);
        }
        let scaled = (units as f64 * self.target_rep / secs).ceil();
        if scaled >= u64::MAX as f64 {
            u64::MAX
        } else {
            (scaled as u64).max(1)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m() -> Method {
        Method {
            target_rep: 0.01,
            min_reps: 3,
            max_reps: 6,
            window: 3,
            tolerance: 0.05,
            max_task_secs: 1.0,
        }
    }

    #[test]
    fn stops_when_the_last_window_agrees() -> Result<(), Box<dyn std::error::Error>> {
        // Too few samples.
        assert!(m().done(&[100.0, 100.0], 0.0).is_none());
        // 50, 100, 102, 101: after four, the last three (100, 102, 101) spread 2 / 101 < 5 %.
        assert!(m().done(&[50.0, 100.0, 102.0], 0.0).is_none());
        let s = m()
            .done(&[50.0, 100.0, 102.0, 101.0], 0.0)
            .ok_or("expected a value, got None")?;
        assert!(s.stable);
        assert_eq!(s.median, 101.0);
        assert_eq!((s.min, s.max, s.samples), (100.0, 102.0, 3));
        Ok(())
    }

    #[test]
    fn gives_up_at_the_limits_and_says_so() -> Result<(), Box<dyn std::error::Error>> {
        // Alternating 100 / 150 never agrees within 5 %; at max_reps = 6 it stops, unstable,
        // with the median of the last three (150, 100, 150) = 150.
        let noisy = [100.0, 150.0, 100.0, 150.0, 100.0, 150.0];
        assert!(m().done(&noisy[..5], 0.0).is_none());
        let s = m().done(&noisy, 0.0).ok_or("expected a value, got None")?;
        assert!(!s.stable);
        assert_eq!(s.median, 150.0);
        // The time limit stops it as well.
        assert!(
            !m().done(&noisy[..3], 2.0)
                .ok_or("expected a value, got None")?
                .stable
        );
        Ok(())
    }

    #[test]
    fn calibration_scales_to_the_target() {
        // 1000 units took 2 ms; 10 ms needs 5000.
        assert_eq!(m().units_for(1000, 0.002), 5000);
        assert_eq!(m().units_for(1, 1.0), 1);
        assert_eq!(m().units_for(10, 0.0), 40);
    }
}

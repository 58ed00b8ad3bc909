//! The core clock from dependency chains whose latency the vendors document, checked so that a
//! chain the core shortcuts cannot pass for a fast clock.
//!
//! A chain of `n` dependent instructions of latency `L` cycles takes `n · L` cycles, so the
//! clock is `n · L / seconds`. That holds only while the core runs each instruction at its
//! documented latency: Intel's Golden Cove and later cores fold `add reg, imm` at rename,
//! several per cycle, and a chain of them reads 3–7× the real clock. Two chains of different
//! instructions ([`ClockChain::Imul`], 3 cycles; [`ClockChain::Add`] with a register operand,
//! 1 cycle) give two estimates; a shortcut in either makes them disagree. The clock is given
//! only when both agree within [`AGREEMENT`] and lie within [`PLAUSIBLE_HZ`]; otherwise none,
//! with the reason, and the theoretical figures that need it are left out.
//!
//! Pure arithmetic on timings: [`estimate`] is tested on synthetic ones.

use crate::bench_kernels::ClockChain;

/// Clocks outside this range (Hz) are a fault of the measurement: no x86-64 core ships below
/// 0.5 GHz, and the fastest boost clock in 2025 is 6.2 GHz.
pub const PLAUSIBLE_HZ: (f64, f64) = (0.5e9, 7.0e9);

/// The two chains' clocks must agree within this fraction of the lower one.
pub const AGREEMENT: f64 = 0.10;

/// The fastest repetition of one chain: `instructions` dependent instructions in `seconds`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ChainTiming {
    /// Which chain.
    pub chain: ClockChain,
    /// Instructions run (on the slowest thread of the round).
    pub instructions: f64,
    /// Seconds they took.
    pub seconds: f64,
}

impl ChainTiming {
    /// The clock this chain implies, Hz: instructions × latency / seconds (`None` for a
    /// non-positive time).
    pub fn hz(&self) -> Option<f64> {
        (self.seconds > 0.0 && self.instructions > 0.0)
            .then(|| self.instructions * self.chain.latency_cycles() / self.seconds)
    }
}

/// The clock, or why there is none.
#[derive(Debug, Clone, PartialEq)]
pub struct ClockEstimate {
    /// The clock, Hz, when the chains agree and it is plausible.
    pub hz: Option<f64>,
    /// How it was found (each chain's figure), or why it was left out, in one sentence.
    pub how: String,
}

fn ghz(v: f64) -> String {
    format!("{:.3} GHz", v / 1e9)
}

/// The clock from the chains' fastest repetitions.
///
/// Rules, in order: no timing → none (no chain on this architecture); any chain outside
/// [`PLAUSIBLE_HZ`] → none; the chains differing by more than [`AGREEMENT`] → none (one of them
/// did not run at its documented latency); else the multiply chain's figure (a multiplier has
/// no shortcut for a register operand). `nominal` (Hz and the OS's source) is quoted beside the
/// result, never used in its place.
pub fn estimate(timings: &[ChainTiming], nominal: Option<&(f64, String)>) -> ClockEstimate {
    let said = match nominal {
        Some((hz, src)) => format!("; the OS names {} ({src})", ghz(*hz)),
        None => String::new(),
    };
    let figures: Vec<(ClockChain, f64)> = timings
        .iter()
        .filter_map(|t| t.hz().map(|h| (t.chain, h)))
        .collect();
    let list = figures
        .iter()
        .map(|(c, h)| {
            let cycles = c.latency_cycles();
            format!(
                "{} chain ({cycles} cycle{} each) {}",
                c.instruction(),
                if cycles == 1.0 { "" } else { "s" },
                ghz(*h)
            )
        })
        .collect::<Vec<_>>()
        .join(", ");
    let none = |why: String| ClockEstimate {
        hz: None,
        how: format!("{why}{said}"),
    };
    if figures.is_empty() {
        return none("no clock: no dependency chain was timed on this architecture".into());
    }
    if let Some((c, h)) = figures
        .iter()
        .find(|(_, h)| *h < PLAUSIBLE_HZ.0 || *h > PLAUSIBLE_HZ.1)
    {
        return none(format!(
            "no clock: the {} chain gives {}, outside the plausible {}–{} GHz ({list}): the core did not run it at its documented latency, or the timer is wrong",
            c.instruction(),
            ghz(*h),
            PLAUSIBLE_HZ.0 / 1e9,
            PLAUSIBLE_HZ.1 / 1e9
        ));
    }
    let lo = figures.iter().map(|f| f.1).fold(f64::INFINITY, f64::min);
    let hi = figures.iter().map(|f| f.1).fold(0.0, f64::max);
    if hi > lo * (1.0 + AGREEMENT) {
        return none(format!(
            "no clock: the chains disagree by {:.0} % ({list}), so one of them did not run at its documented latency",
            100.0 * (hi / lo - 1.0)
        ));
    }
    let hz = figures
        .iter()
        .find(|(c, _)| *c == ClockChain::Imul)
        .map_or(lo, |f| f.1);
    let agree = if figures.len() > 1 {
        format!(", agreeing within {:.1} %", 100.0 * (hi / lo - 1.0))
    } else {
        String::new()
    };
    ClockEstimate {
        hz: Some(hz),
        how: format!("{} from {list}{agree}{said}", ghz(hz)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The timing a core at `hz` gives for `n` instructions of `chain` when it runs `speedup`×
    /// faster than the documented latency.
    fn timing(chain: ClockChain, hz: f64, speedup: f64) -> ChainTiming {
        let n = 128.0 * 10_000.0;
        ChainTiming {
            chain,
            instructions: n,
            seconds: n * chain.latency_cycles() / hz / speedup,
        }
    }

    #[test]
    fn agreeing_chains_give_the_multiply_chains_clock() -> Result<(), String> {
        // 2.0 GHz: 1.28 M imuls take 3 × 1.28e6 / 2e9 = 1.92 ms; the adds 0.64 ms, timed 2 %
        // slow (an interrupt), so they read 1.96 GHz: within 10 %.
        let t = [
            timing(ClockChain::Imul, 2.0e9, 1.0),
            timing(ClockChain::Add, 2.0e9, 1.0 / 1.02),
        ];
        assert!((t[0].seconds - 1.92e-3).abs() < 1e-12);
        let e = estimate(&t, Some(&(2.0e9, "the model name's base frequency".into())));
        let hz = e.hz.ok_or(e.how.clone())?;
        assert!((hz - 2.0e9).abs() < 1.0, "{hz}");
        assert!(e.how.contains("agreeing within 2.0 %"), "{}", e.how);
        assert!(e.how.contains("the OS names 2.000 GHz"), "{}", e.how);
        Ok(())
    }

    #[test]
    fn a_folded_add_chain_gives_no_clock() {
        // Golden Cove folding adds at rename, 5 per cycle on a 2 GHz part: the add chain reads
        // 10 GHz; the old single-chain method printed exactly that.
        let t = [
            timing(ClockChain::Imul, 2.0e9, 1.0),
            timing(ClockChain::Add, 2.0e9, 5.0),
        ];
        let e = estimate(&t, None);
        assert_eq!(e.hz, None);
        assert!(
            e.how.contains("outside the plausible 0.5–7 GHz"),
            "{}",
            e.how
        );
        // Folded only 2× (4 GHz, plausible): the chains disagree by 100 %.
        let t = [
            timing(ClockChain::Imul, 2.0e9, 1.0),
            timing(ClockChain::Add, 2.0e9, 2.0),
        ];
        let e = estimate(&t, None);
        assert_eq!(e.hz, None);
        assert!(e.how.contains("disagree by 100 %"), "{}", e.how);
    }

    #[test]
    fn implausible_or_missing_timings_give_no_clock() {
        // Both chains agree on 9 GHz: still out of range.
        let t = [
            timing(ClockChain::Imul, 9.0e9, 1.0),
            timing(ClockChain::Add, 9.0e9, 1.0),
        ];
        assert_eq!(estimate(&t, None).hz, None);
        // 0.3 GHz: below the range.
        assert_eq!(
            estimate(&[timing(ClockChain::Imul, 0.3e9, 1.0)], None).hz,
            None
        );
        // Nothing timed, or a zero time.
        let e = estimate(&[], None);
        assert_eq!(e.hz, None);
        assert!(e.how.contains("no dependency chain"), "{}", e.how);
        let zero = ChainTiming {
            chain: ClockChain::Add,
            instructions: 128.0,
            seconds: 0.0,
        };
        assert_eq!(estimate(&[zero], None).hz, None);
    }

    #[test]
    fn one_chain_alone_is_taken_when_plausible() {
        let e = estimate(&[timing(ClockChain::Add, 3.5e9, 1.0)], None);
        assert_eq!(e.hz.map(|h| (h / 1e6).round()), Some(3500.0));
    }
}

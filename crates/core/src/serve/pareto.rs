//! Throughput against latency: the serving configurations no other beats on both.
//!
//! A configuration (chip, precision, layout, batch) serves a request at a TPOT and gives some
//! output tokens per second per device. One **dominates** another when it is at least as fast
//! per token and gives at least as many tokens/s per device, and strictly better in one. The
//! **Pareto front** is the set no configuration dominates; a latency target (`TPOT ≤ x`, and
//! `TTFT ≤ y`) picks from it the one with the most tokens/s per device.

use serde::Serialize;

/// One configuration's latency and throughput under one pricing (bound or estimate).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Operating {
    /// TTFT, seconds.
    pub ttft: f64,
    /// TPOT, (E2E − TTFT) / (N − 1), seconds.
    pub tpot: f64,
    /// Output tokens per second per device.
    pub tokens_per_s_per_device: f64,
}

impl Operating {
    /// Whether `self` dominates `o`: TPOT no longer, tokens/s no fewer, one of them strictly.
    pub fn dominates(&self, o: &Operating) -> bool {
        self.tpot <= o.tpot
            && self.tokens_per_s_per_device >= o.tokens_per_s_per_device
            && (self.tpot < o.tpot || self.tokens_per_s_per_device > o.tokens_per_s_per_device)
    }
}

/// Which of `points` are on the Pareto front (those `usable` only; an unusable point, one that
/// does not fit, is never on it): O(n log n), by TPOT then by throughput.
///
/// ```
/// use roofline_core::serve::pareto::{front, Operating};
/// let p = |tpot, tps| Operating { ttft: 0.1, tpot, tokens_per_s_per_device: tps };
/// // (10 ms, 100) and (20 ms, 300) trade off; (20 ms, 200) is dominated by (20 ms, 300).
/// let pts = [p(0.010, 100.0), p(0.020, 200.0), p(0.020, 300.0), p(0.030, 250.0)];
/// assert_eq!(front(&pts, &[true; 4]), vec![true, false, true, false]);
/// ```
pub fn front(points: &[Operating], usable: &[bool]) -> Vec<bool> {
    let mut idx: Vec<usize> = (0..points.len())
        .filter(|&i| usable.get(i).copied().unwrap_or(false))
        .filter(|&i| points[i].tpot.is_finite() && points[i].tokens_per_s_per_device.is_finite())
        .collect();
    idx.sort_by(|&a, &b| {
        points[a].tpot.total_cmp(&points[b].tpot).then(
            points[b]
                .tokens_per_s_per_device
                .total_cmp(&points[a].tokens_per_s_per_device),
        )
    });
    let mut on = vec![false; points.len()];
    let mut best = f64::NEG_INFINITY;
    for i in idx {
        if points[i].tokens_per_s_per_device > best {
            on[i] = true;
            best = points[i].tokens_per_s_per_device;
        }
    }
    on
}

/// The usable point with the most tokens/s per device whose TPOT is at most `tpot` and whose
/// TTFT is at most `ttft` (each `None`: no target); `None` when none meets them.
pub fn best_under(
    points: &[Operating],
    usable: &[bool],
    tpot: Option<f64>,
    ttft: Option<f64>,
) -> Option<usize> {
    (0..points.len())
        .filter(|&i| usable.get(i).copied().unwrap_or(false))
        .filter(|&i| !matches!(tpot, Some(t) if points[i].tpot > t))
        .filter(|&i| !matches!(ttft, Some(t) if points[i].ttft > t))
        .max_by(|&a, &b| {
            points[a]
                .tokens_per_s_per_device
                .total_cmp(&points[b].tokens_per_s_per_device)
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(tpot: f64, tps: f64) -> Operating {
        Operating {
            ttft: tpot * 10.0,
            tpot,
            tokens_per_s_per_device: tps,
        }
    }

    #[test]
    fn the_front_is_what_nothing_dominates() {
        let pts = [
            p(1.0, 10.0),
            p(2.0, 30.0),
            p(3.0, 20.0),
            p(0.5, 5.0),
            p(2.0, 30.0),
        ];
        let on = front(&pts, &[true; 5]);
        // Brute force: a point is on the front when no other dominates it (ties both on).
        for (i, a) in pts.iter().enumerate() {
            let dominated = pts.iter().any(|b| b.dominates(a));
            assert_eq!(on[i] || (i == 4 && on[1]), !dominated, "point {i}");
        }
        assert_eq!(on, vec![true, true, false, true, false]);
        // A point that does not fit is never on it.
        let on = front(&pts, &[true, false, true, true, false]);
        assert_eq!(on, vec![true, false, true, true, false]);
    }

    #[test]
    fn the_best_under_a_target() {
        let pts = [p(1.0, 10.0), p(2.0, 30.0), p(3.0, 40.0)];
        let all = [true; 3];
        assert_eq!(best_under(&pts, &all, Some(2.5), None), Some(1));
        assert_eq!(best_under(&pts, &all, None, None), Some(2));
        // TTFT is 10 × TPOT here: a 15 s TTFT target leaves the first only.
        assert_eq!(best_under(&pts, &all, Some(5.0), Some(15.0)), Some(0));
        assert_eq!(best_under(&pts, &all, Some(0.1), None), None);
    }
}

/// One serving configuration of a sweep: where it runs, how, and what it gives.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ServingPoint {
    /// Index of the configuration in the sweep's list ([`Config`]).
    pub config: usize,
    /// Sequences served together.
    pub batch: u64,
    /// Devices of one replica.
    pub devices: u64,
    /// At the roofline bound.
    pub bound: Operating,
    /// At the estimate's shares and launches.
    pub estimate: Operating,
    /// Whether every step fits in memory (`None`: capacity unknown).
    pub fits: Option<bool>,
}

/// A configuration a sweep serves at each batch: a system, a layout and precisions.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// The system.
    pub system: crate::comm::System,
    /// The layout of one replica.
    pub layout: crate::parallel::Layout,
    /// The base workload: precisions, attention kernel, logits.
    pub base: crate::workload::Workload,
}

/// Serves `request` (its batch replaced by each of `batches`) under every configuration.
///
/// # Errors
/// The first configuration [`super::generate::generate`] refuses.
pub fn sweep_serving(
    model: &crate::model::Transformer,
    configs: &[Config],
    request: &super::Request,
    batches: &[u64],
    reserve: crate::memory::Reserve,
    eff: &crate::pricing::Estimate,
) -> Result<Vec<ServingPoint>, crate::parallel::ParallelAnalysisError> {
    let mut out = Vec::with_capacity(configs.len() * batches.len());
    for (i, c) in configs.iter().enumerate() {
        for &b in batches {
            let r = super::Request {
                batch: b,
                ..*request
            };
            let g = super::generate(model, &c.base, &r, &c.system, c.layout, reserve, eff)?;
            let op = |l: &super::Latency| Operating {
                ttft: l.ttft.get(),
                tpot: l.tpot.map_or(l.e2e_per_token.get(), |t| t.get()),
                tokens_per_s_per_device: l.tokens_per_s_per_device,
            };
            out.push(ServingPoint {
                config: i,
                batch: b,
                devices: g.devices,
                bound: op(&g.bound),
                estimate: op(&g.estimate),
                fits: g.fits,
            });
        }
    }
    Ok(out)
}

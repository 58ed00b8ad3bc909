//! What one step of a continuous-batching engine computes: decode tokens of running sequences
//! and prefill chunks of new ones in one forward pass, summarised by the five quantities every
//! operator's cost is linear in.
//!
//! A sequence in the step brings q new tokens after c tokens already in its KV cache (decode:
//! q = 1, c = its context; a prefill chunk: q = the chunk, c = the tokens before it). Its
//! queries attend c + q keys, the causal mask leaving q·c + q(q + 1)/2 pairs
//! ([`crate::ops::causal_pairs`]). Over the sequences of the step:
//!
//! - **tokens** T = Σ q: rows of every projection, norm, MLP and residual;
//! - **sampled** S: sequences whose next token is sampled this step (every decode, and a
//!   prefill's last chunk): the rows of lm_head;
//! - **cross pairs** X = Σ q·c: (query, key) pairs against the cached keys;
//! - **diagonal pairs** D = Σ q(q + 1)/2: pairs among the new tokens;
//! - **cached keys** K = Σ c: keys read from the KV cache.
//!
//! A homogeneous pass ([`crate::workload::Workload`]: b sequences of the same q and c) has
//! T = b·q, S = b, X = b·q·c, D = b·q(q + 1)/2, K = b·c.

use crate::ops::causal_pairs;
use serde::Serialize;

/// The quantities of one engine step ([module docs](self)). Counts are f64 so that sums over
/// many steps and sequences stay exact far past 2^53 pairs' worth of rounding: every value is
/// an integer below 2^53 for any step a validated workload allows.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct Mix {
    /// T = Σ q: new tokens in the step.
    pub tokens: f64,
    /// S: sequences sampled this step (lm_head rows).
    pub sampled: f64,
    /// X = Σ q·c: (query, key) pairs against cached keys.
    pub cross_pairs: f64,
    /// D = Σ q(q + 1)/2: (query, key) pairs among the new tokens.
    pub diagonal_pairs: f64,
    /// K = Σ c: cached keys read.
    pub cached: f64,
}

impl Mix {
    /// An empty step.
    pub const EMPTY: Mix = Mix {
        tokens: 0.0,
        sampled: 0.0,
        cross_pairs: 0.0,
        diagonal_pairs: 0.0,
        cached: 0.0,
    };

    /// `batch` sequences of `q` new tokens after `c` cached ones each, sampled when `sampled`.
    ///
    /// ```
    /// use roofline_core::serve::Mix;
    /// // A 512-token chunk after 1024 cached tokens, not the prompt's last.
    /// let m = Mix::sequences(1, 512, 1024, false);
    /// assert_eq!((m.tokens, m.sampled, m.cross_pairs, m.diagonal_pairs, m.cached),
    ///            (512.0, 0.0, 512.0 * 1024.0, 512.0 * 513.0 / 2.0, 1024.0));
    /// ```
    pub fn sequences(batch: u64, q: u64, c: u64, sampled: bool) -> Mix {
        let b = batch as f64;
        Mix {
            tokens: b * q as f64,
            sampled: if sampled { b } else { 0.0 },
            cross_pairs: b * q as f64 * c as f64,
            diagonal_pairs: b * causal_pairs(q, q),
            cached: b * c as f64,
        }
    }

    /// `batch` decode steps against `context` cached tokens each: q = 1, sampled.
    ///
    /// ```
    /// use roofline_core::serve::Mix;
    /// let m = Mix::decode(8, 4096);
    /// assert_eq!((m.tokens, m.sampled, m.cross_pairs, m.diagonal_pairs, m.cached),
    ///            (8.0, 8.0, 8.0 * 4096.0, 8.0, 8.0 * 4096.0));
    /// ```
    pub fn decode(batch: u64, context: u64) -> Mix {
        Mix::sequences(batch, 1, context, true)
    }

    /// Adds one sequence of `q` new tokens after `c` cached ones.
    #[inline]
    pub fn add(&mut self, q: u64, c: u64, sampled: bool) {
        let (qf, cf) = (q as f64, c as f64);
        self.tokens += qf;
        if sampled {
            self.sampled += 1.0;
        }
        self.cross_pairs += qf * cf;
        self.diagonal_pairs += qf * (qf + 1.0) / 2.0;
        self.cached += cf;
    }

    /// The five quantities with a leading 1 (the constant term), in the order the step
    /// model's coefficients take them.
    #[inline]
    pub fn features(&self) -> [f64; 6] {
        [
            1.0,
            self.tokens,
            self.sampled,
            self.cross_pairs,
            self.diagonal_pairs,
            self.cached,
        ]
    }

    /// Whether the step computes nothing.
    pub fn is_empty(&self) -> bool {
        self.tokens == 0.0
    }
}

impl std::ops::Add for Mix {
    type Output = Mix;
    fn add(self, o: Mix) -> Mix {
        Mix {
            tokens: self.tokens + o.tokens,
            sampled: self.sampled + o.sampled,
            cross_pairs: self.cross_pairs + o.cross_pairs,
            diagonal_pairs: self.diagonal_pairs + o.diagonal_pairs,
            cached: self.cached + o.cached,
        }
    }
}

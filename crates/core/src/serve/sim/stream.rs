//! Seeded request streams: arrival processes and length distributions.
//!
//! The generator is Xoshiro256++ seeded through SplitMix64 (`rand`'s
//! [`Xoshiro256PlusPlus::seed_from_u64`]), whose output is fixed by its specification, and the
//! distributions are `rand_distr`'s (their math through `libm`, the same on every platform):
//! one seed gives one stream everywhere. Each request draws, in order, its inter-arrival gap
//! (Poisson only), its prompt and its output length.

use super::{Request, SimError, MAX_REQUESTS};
use rand::rngs::Xoshiro256PlusPlus;
use rand::{RngExt, SeedableRng};
use rand_distr::{Distribution, Exp, LogNormal, Normal};
use serde::Serialize;
use std::fmt;

/// When requests arrive.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Arrivals {
    /// A Poisson process: exponential gaps of mean 1/rate, the first after one gap from 0.
    Poisson {
        /// Requests per second (finite, > 0).
        rate: f64,
    },
    /// Every request at time 0 (an offline batch: throughput, not latency under load).
    AllAtOnce,
}

/// A token-length distribution; samples are integers, at least 1.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Dist {
    /// Always n (≥ 1).
    Fixed(u64),
    /// Uniform on the integers lo..=hi (1 ≤ lo ≤ hi).
    Uniform {
        /// Smallest.
        lo: u64,
        /// Largest.
        hi: u64,
    },
    /// Normal, rounded to the nearest integer and clamped to ≥ 1 (the clamp raises the mean
    /// when sd is not small against it).
    Normal {
        /// Mean, tokens (finite).
        mean: f64,
        /// Standard deviation, tokens (finite, ≥ 0).
        sd: f64,
    },
    /// Log-normal: exp of a normal of mean mu and sd sigma, rounded and clamped to ≥ 1.
    LogNormal {
        /// Mean of the logarithm (finite).
        mu: f64,
        /// Standard deviation of the logarithm (finite, ≥ 0).
        sigma: f64,
    },
}

impl fmt::Display for Dist {
    /// The CLI's spelling: `fixed:N`, `uniform:A..B`, `normal:MEAN,SD`, `lognormal:MU,SIGMA`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Dist::Fixed(n) => write!(f, "fixed:{n}"),
            Dist::Uniform { lo, hi } => write!(f, "uniform:{lo}..{hi}"),
            Dist::Normal { mean, sd } => write!(f, "normal:{mean},{sd}"),
            Dist::LogNormal { mu, sigma } => write!(f, "lognormal:{mu},{sigma}"),
        }
    }
}

/// A validated [`Dist`], ready to sample.
enum Sampler {
    Fixed(u64),
    Uniform(u64, u64),
    Normal(Normal<f64>),
    LogNormal(LogNormal<f64>),
}

impl Sampler {
    fn new(d: Dist, field: &'static str) -> Result<Sampler, SimError> {
        let bad = |reason: String| Err(SimError::BadStream { field, reason });
        match d {
            Dist::Fixed(0) => bad("a fixed length must be at least 1 token".into()),
            Dist::Fixed(n) => Ok(Sampler::Fixed(n)),
            Dist::Uniform { lo, hi } if lo == 0 || lo > hi => {
                bad(format!("uniform {lo}..{hi}: needs 1 ≤ lo ≤ hi"))
            }
            Dist::Uniform { lo, hi } => Ok(Sampler::Uniform(lo, hi)),
            Dist::Normal { mean, sd } => match Normal::new(mean, sd) {
                Ok(n) if mean.is_finite() && sd.is_finite() && sd >= 0.0 => Ok(Sampler::Normal(n)),
                _ => bad(format!(
                    "normal mean {mean}, sd {sd}: needs a finite mean and a finite sd ≥ 0"
                )),
            },
            Dist::LogNormal { mu, sigma } => match LogNormal::new(mu, sigma) {
                Ok(n) if mu.is_finite() && sigma.is_finite() && sigma >= 0.0 => {
                    Ok(Sampler::LogNormal(n))
                }
                _ => bad(format!(
                    "lognormal mu {mu}, sigma {sigma}: needs a finite mu and a finite sigma ≥ 0"
                )),
            },
        }
    }

    fn sample(&self, rng: &mut Xoshiro256PlusPlus) -> u64 {
        // `as` saturates: a huge or infinite draw becomes u64::MAX, which the engine rejects.
        let round = |x: f64| x.round().max(1.0) as u64;
        match self {
            Sampler::Fixed(n) => *n,
            Sampler::Uniform(lo, hi) => rng.random_range(*lo..=*hi),
            Sampler::Normal(d) => round(d.sample(rng)),
            Sampler::LogNormal(d) => round(d.sample(rng)),
        }
    }
}

/// `count` requests arriving by `arrivals`, with prompt and output lengths drawn from
/// `prompt` and `output`, from `seed` ([module docs](self)).
///
/// # Errors
///
/// [`SimError::RequestCount`] for 0 or more than [`MAX_REQUESTS`] requests;
/// [`SimError::BadStream`] for a rate that is not finite and positive or a distribution out
/// of range (field `rate`, `prompt` or `output`).
///
/// ```
/// use roofline_core::serve::sim::{generate, Arrivals, Dist};
/// let a = generate(3, Arrivals::Poisson { rate: 4.0 }, Dist::Fixed(512),
///                  Dist::Uniform { lo: 1, hi: 8 }, 7)?;
/// let b = generate(3, Arrivals::Poisson { rate: 4.0 }, Dist::Fixed(512),
///                  Dist::Uniform { lo: 1, hi: 8 }, 7)?;
/// assert_eq!(a, b);
/// assert!(a.windows(2).all(|w| w[0].arrival <= w[1].arrival));
/// # Ok::<(), roofline_core::serve::sim::SimError>(())
/// ```
pub fn generate(
    count: usize,
    arrivals: Arrivals,
    prompt: Dist,
    output: Dist,
    seed: u64,
) -> Result<Vec<Request>, SimError> {
    if count == 0 || count > MAX_REQUESTS {
        return Err(SimError::RequestCount { count });
    }
    let gap = match arrivals {
        Arrivals::Poisson { rate } => match Exp::new(rate) {
            Ok(e) if rate.is_finite() && rate > 0.0 => Some(e),
            _ => {
                return Err(SimError::BadStream {
                    field: "rate",
                    reason: format!("{rate} requests/s: needs a finite rate > 0"),
                })
            }
        },
        Arrivals::AllAtOnce => None,
    };
    let prompt = Sampler::new(prompt, "prompt")?;
    let output = Sampler::new(output, "output")?;
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut t = 0.0;
    let mut out = Vec::with_capacity(count);
    for _ in 0..count {
        if let Some(g) = &gap {
            t += g.sample(&mut rng);
        }
        let p = prompt.sample(&mut rng);
        let o = output.sample(&mut rng);
        out.push(Request {
            arrival: t,
            prompt: p,
            output: o,
        });
    }
    Ok(out)
}

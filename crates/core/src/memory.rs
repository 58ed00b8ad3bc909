//! The one memory model: what a step needs in a device's main memory, and whether it fits.
//!
//! Every command that says "fits" (analyze, sweep, report, and the parallel plans built on the
//! same graph) asks [`footprint`]:
//!
//! - **weights**: parameters × bytes per weight (group-wise quantization scales included,
//!   [`crate::workload::Precisions::weight_bytes`]);
//! - **KV cache**: [`Transformer::kv_cache_bytes`] for the keys the step attends
//!   ([`Workload::kv_len`]);
//! - **activations**: the peak of live activation tensors over the step's nodes
//!   ([`OpGraph::peak_live_activations`]);
//! - **reserve**: memory the runtime keeps for itself (CUDA context, allocator fragmentation,
//!   workspaces, CUDA graphs). The default, 10 % of capacity, is vLLM's: its
//!   `--gpu-memory-utilization` defaults to 0.9, the share of device memory the engine plans
//!   to use (vLLM engine arguments).
//!
//! A step fits when weights + KV cache + activations + reserve ≤ capacity.

use crate::graph::{LiveActivations, OpGraph};
use crate::model::Transformer;
use crate::units::Bytes;
use crate::workload::Workload;
use serde::{Deserialize, Serialize};
use std::fmt;

/// The largest reserve accepted, bytes (1 PB: beyond it a value is taken for a typo).
pub const MAX_RESERVE_BYTES: f64 = 1e15;

/// Memory the runtime keeps for itself on each device.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", content = "value", rename_all = "snake_case")]
pub enum Reserve {
    /// A share of the device's capacity, in [0, 1).
    Fraction(f64),
    /// A fixed amount.
    Bytes(Bytes),
}

impl Reserve {
    /// 10 % of capacity: vLLM's default `--gpu-memory-utilization` of 0.9.
    pub const DEFAULT: Reserve = Reserve::Fraction(0.10);

    /// The bytes kept on a device of `capacity` (a fraction of an unknown capacity is 0).
    pub fn bytes(self, capacity: Option<Bytes>) -> Bytes {
        match self {
            Reserve::Fraction(f) => capacity.map(|c| c * f).unwrap_or(Bytes::ZERO),
            Reserve::Bytes(b) => b,
        }
    }

    /// Checks the reserve is a fraction in [0, 1) or a finite, non-negative size.
    ///
    /// # Errors
    /// What is wrong, for the `--memory-reserve` flag.
    pub fn validate(self) -> Result<(), String> {
        match self {
            Reserve::Fraction(f) if !(0.0..1.0).contains(&f) => Err(format!(
                "a share of memory must be in [0 %, 100 %), got {}",
                f * 100.0
            )),
            Reserve::Bytes(b) if !(b.get().is_finite() && b.get() >= 0.0) => Err(format!(
                "a size must be finite and not negative, got {}",
                b.get()
            )),
            _ => Ok(()),
        }
    }
}

impl Reserve {
    /// Checks the reserve leaves room on a device of `capacity`: below the capacity (a fraction
    /// always is; unknown capacities are not checked).
    ///
    /// # Errors
    /// The reserve is at or above the capacity, for the `--memory-reserve` flag.
    pub fn validate_for(self, capacity: Option<Bytes>) -> Result<(), String> {
        self.validate()?;
        match (self, capacity) {
            (Reserve::Bytes(b), Some(c)) if b.get() >= c.get() => Err(format!(
                "{:.1} GB is not below the chip's {:.1} GB: nothing would be left for the model",
                b.get() / 1e9,
                c.get() / 1e9
            )),
            _ => Ok(()),
        }
    }
}

impl Default for Reserve {
    fn default() -> Self {
        Reserve::DEFAULT
    }
}

impl fmt::Display for Reserve {
    /// `10 % of capacity` or `2.0 GB`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Reserve::Fraction(x) => write!(f, "{} % of capacity", x * 100.0),
            Reserve::Bytes(b) => write!(f, "{:.1} GB", b.get() / 1e9),
        }
    }
}

/// Memory one device needs for a step.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct MemoryFootprint {
    /// All weights: parameters × bytes per weight, bytes.
    pub weights: Bytes,
    /// KV cache of the keys attended, bytes.
    pub kv_cache: Bytes,
    /// Activation tensors alive at once at the peak, bytes.
    pub activations: Bytes,
    /// The node at which the activation peak is reached.
    pub activations_at: &'static str,
    /// Kept by the runtime, bytes.
    pub reserve: Bytes,
    /// Main-memory capacity of the device, if known, bytes.
    pub capacity: Option<Bytes>,
}

impl MemoryFootprint {
    /// Nothing: zero bytes, no node, capacity unknown.
    pub const EMPTY: MemoryFootprint = MemoryFootprint {
        weights: Bytes::ZERO,
        kv_cache: Bytes::ZERO,
        activations: Bytes::ZERO,
        activations_at: "",
        reserve: Bytes::ZERO,
        capacity: None,
    };

    /// Weights + KV cache + activations + reserve.
    #[inline]
    pub fn total(&self) -> Bytes {
        self.weights + self.kv_cache + self.activations + self.reserve
    }

    /// Whether the total fits in the capacity (`None` when the capacity is unknown).
    #[inline]
    pub fn fits(&self) -> Option<bool> {
        self.capacity.map(|c| self.total() <= c)
    }
}

/// The footprint of `model` running `workload`, whose built graph is `graph`, on a device of
/// `capacity` keeping `reserve` (see the module docs for each term).
#[inline]
pub fn footprint(
    model: &Transformer,
    workload: &Workload,
    graph: &OpGraph,
    capacity: Option<Bytes>,
    reserve: Reserve,
) -> MemoryFootprint {
    footprint_of(
        model.parameters(),
        graph.peak_live_activations(),
        model,
        workload,
        capacity,
        reserve,
    )
}

/// [`footprint`] for a caller that knows `model` has `parameters` parameters
/// ([`Transformer::parameters`]) and its graph's peak of live activations `live`
/// ([`OpGraph::peak_live_activations`]).
#[inline(always)]
pub(crate) fn footprint_of(
    parameters: u64,
    live: LiveActivations,
    model: &Transformer,
    workload: &Workload,
    capacity: Option<Bytes>,
    reserve: Reserve,
) -> MemoryFootprint {
    debug_assert_eq!(parameters, model.parameters());
    let p = workload.precisions;
    let LiveActivations { bytes, at } = live;
    MemoryFootprint {
        weights: Bytes(parameters as f64 * p.weight_bytes()),
        kv_cache: model.kv_cache_bytes(workload.batch, workload.kv_len(), p.kv),
        activations: bytes,
        activations_at: at,
        reserve: reserve.bytes(capacity),
        capacity,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reserve_of_a_capacity() {
        let c = Some(Bytes(80e9));
        assert_eq!(Reserve::DEFAULT.bytes(c), Bytes(8e9));
        assert_eq!(Reserve::Fraction(0.25).bytes(None), Bytes::ZERO);
        assert_eq!(Reserve::Bytes(Bytes(2e9)).bytes(None), Bytes(2e9));
        assert!(Reserve::Fraction(1.0).validate().is_err());
        assert!(Reserve::Fraction(-0.1).validate().is_err());
        assert!(Reserve::Bytes(Bytes(f64::NAN)).validate().is_err());
        assert!(Reserve::Fraction(0.0).validate().is_ok());
        // A size must leave room on the chip: 80 GB of an 80 GB chip does not.
        assert!(Reserve::Bytes(Bytes(80e9)).validate_for(c).is_err());
        assert!(Reserve::Bytes(Bytes(79e9)).validate_for(c).is_ok());
        assert!(Reserve::Bytes(Bytes(1e30)).validate_for(None).is_ok());
    }

    #[test]
    fn fits_counts_every_term() {
        let m = MemoryFootprint {
            weights: Bytes(50e9),
            kv_cache: Bytes(10e9),
            activations: Bytes(5e9),
            activations_at: "softmax",
            reserve: Bytes(8e9),
            capacity: Some(Bytes(80e9)),
        };
        // 50 + 10 + 5 + 8 = 73 GB ≤ 80 GB; with 8 GB more activations, 81 GB does not fit.
        assert_eq!(m.total(), Bytes(73e9));
        assert_eq!(m.fits(), Some(true));
        let over = MemoryFootprint {
            activations: Bytes(13e9),
            ..m
        };
        assert_eq!(over.fits(), Some(false));
        assert_eq!(
            MemoryFootprint {
                capacity: None,
                ..m
            }
            .fits(),
            None
        );
    }
}

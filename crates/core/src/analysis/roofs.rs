//! A chip's roofs resolved once for a workload: the peak and bandwidth each node is held
//! against.

use crate::device::{Device, DeviceError, LaunchModel};
use crate::ops::Compute;
use crate::precision::Precision;
use crate::roofline::Roof;
use crate::units::{BytesPerSec, FlopPerSec, Seconds};

/// The peak that applies to an operator computing on `compute`: the dense matrix peak of its
/// precision, or for vector work the fp32 peak (falling back to the activation precision's
/// peak on chips that publish no fp32 figure, such as TPUs).
pub fn peak_for(
    device: &Device,
    compute: Compute,
    act: Precision,
) -> Result<FlopPerSec, DeviceError> {
    match compute {
        Compute::Matrix(p) => device.peak(p),
        // A collective does no FLOPs: its roof is the link's ([`crate::ops::Communication`]).
        Compute::Vector | Compute::Network => {
            device.peak(Precision::Fp32).or_else(|_| device.peak(act))
        }
    }
}

/// A chip's roofs resolved once for a workload's activation precision: every dense peak in a
/// table indexed by precision, main-memory bandwidth and launch overhead. Looking up the roof of
/// a node is then an array index; [`ChipRoofs::peak`] answers exactly as [`peak_for`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ChipRoofs<'d> {
    device: &'d Device,
    act: Precision,
    /// The peak of each precision in [`Precision::ALL`] order, then the vector peak; `None`
    /// where the chip has none.
    peaks: [Option<FlopPerSec>; Compute::SLOTS],
    /// Main-memory bandwidth, B/s.
    pub bandwidth: BytesPerSec,
    /// Launch overhead of one kernel, seconds (0 on a chip that runs a step as one compiled
    /// program, [`LaunchModel::PerProgram`]).
    pub launch: Seconds,
    /// Launch overhead of one step's compiled program, seconds (0 on a chip that launches
    /// each kernel, [`LaunchModel::PerKernel`]).
    pub per_step: Seconds,
}

/// `p`'s place in [`Precision::ALL`] (declaration order; a test checks they agree).
#[inline(always)]
pub(crate) fn precision_index(p: Precision) -> usize {
    p as usize
}

/// The slot of `compute` in [`ChipRoofs`]'s table ([`Compute::slot`]): the precisions in
/// order, then vector work, then the network (always empty: a collective's roof is its link's,
/// so the walk meets it where a missing peak would be, off the operators' path).
#[inline(always)]
fn compute_index(compute: Compute) -> usize {
    compute.slot()
}

impl<'d> ChipRoofs<'d> {
    /// The roofs of `device` for work whose activations are in `act`.
    ///
    /// # Errors
    /// The chip has no main-memory bandwidth.
    // `always`: returned through memory, the table is read back wider than it was written (a
    // store-forwarding stall, a few percent of an analysis).
    #[inline(always)]
    pub fn new(device: &'d Device, act: Precision) -> Result<Self, DeviceError> {
        let bandwidth = device.bandwidth()?;
        let mut peaks = [None; Compute::SLOTS];
        for (p, c) in &device.peaks {
            let slot = &mut peaks[precision_index(*p)];
            // The first entry wins, as `Device::peak` finds it.
            if slot.is_none() {
                *slot = Some(c.value);
            }
        }
        // Vector work: the fp32 peak, else the activation precision's ([`peak_for`]).
        peaks[compute_index(Compute::Vector)] =
            peaks[precision_index(Precision::Fp32)].or(peaks[precision_index(act)]);
        Ok(Self {
            device,
            act,
            peaks,
            bandwidth,
            launch: match device.launch_model {
                LaunchModel::PerKernel => device.launch_overhead.value,
                LaunchModel::PerProgram => Seconds::ZERO,
            },
            per_step: match device.launch_model {
                LaunchModel::PerKernel => Seconds::ZERO,
                LaunchModel::PerProgram => device.launch_overhead.value,
            },
        })
    }

    /// The roof of `compute`; `None` when the chip has no peak for it ([`ChipRoofs::roof`]
    /// says why).
    #[inline(always)]
    pub fn roof_of(&self, compute: Compute) -> Option<Roof> {
        self.peaks[compute_index(compute)].map(|peak| Roof {
            peak,
            bandwidth: self.bandwidth,
        })
    }

    /// The roof in slot `slot` ([`Compute::slot`]): [`ChipRoofs::roof_of`] for a node that
    /// keeps its slot.
    #[inline(always)]
    pub(crate) fn roof_at(&self, slot: usize) -> Option<Roof> {
        self.peaks.get(slot).copied().flatten().map(|peak| Roof {
            peak,
            bandwidth: self.bandwidth,
        })
    }

    /// The peak that applies to `compute` ([`peak_for`]).
    ///
    /// # Errors
    /// The chip has no peak for the precision needed.
    #[inline]
    pub fn peak(&self, compute: Compute) -> Result<FlopPerSec, DeviceError> {
        let compute = match compute {
            Compute::Network => Compute::Vector,
            c => c,
        };
        match self.peaks[compute_index(compute)] {
            Some(p) => Ok(p),
            None => Err(self.missing_peak(compute)),
        }
    }

    /// Why the chip has no roof for `compute` ([`ChipRoofs::roof_of`] gave `None`), as
    /// [`peak_for`] says it: the matrix precision is missing, or for vector work both fp32 and
    /// the activation precision (the error names the latter, where `peak_for` ends).
    pub(crate) fn missing_peak(&self, compute: Compute) -> DeviceError {
        self.device.no_peak(match compute {
            Compute::Matrix(p) => p,
            Compute::Vector | Compute::Network => self.act,
        })
    }

    /// The roof a node computing on `compute` is held against.
    ///
    /// # Errors
    /// The chip has no peak for the precision needed.
    #[inline]
    pub fn roof(&self, compute: Compute) -> Result<Roof, DeviceError> {
        Ok(Roof {
            peak: self.peak(compute)?,
            bandwidth: self.bandwidth,
        })
    }
}

//! Disaggregated prefill and decode: prompts run on a pool of P devices, generation on a pool
//! of D, and each request's KV cache crosses the link between them (Zhong et al. 2024,
//! "DistServe"; Patel et al. 2024, "Splitwise").
//!
//! Each pool holds replicas of the layout (its t·p·e devices each). Over a request of B
//! sequences:
//!
//! - the prefill pool finishes B prompts per TTFT on each replica: P/r · B / TTFT requests/s;
//! - the decode pool finishes B sequences per Σ decode on each replica: D/r · B / Σ decode;
//! - the transfer moves B sequences' cache of P tokens, each device its shard over its own
//!   link (a send/recv on the system's fabric, across nodes when the pools do not fit in one
//!   node): each prefill replica sends B per transfer time, overlapped with its next prefill;
//! - the sustained rate is the least of the three: the bottleneck. TTFT grows by the
//!   transfer (the first token is sampled on the prefill pool, the second needs the cache on
//!   the decode pool).
//!
//! Beside it, the same P + D devices colocated: each replica prefills and decodes its own
//! requests, (P + D)/r · B / E2E requests/s.

use super::generate::Generation;
use crate::comm::collective::CollectiveError;
use crate::comm::System;
use crate::units::{Bytes, Seconds};
use serde::Serialize;

/// The part of a disaggregated deployment that limits its rate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Bottleneck {
    /// The prefill pool.
    Prefill,
    /// The decode pool.
    Decode,
    /// The KV transfer between them.
    Transfer,
}

/// A disaggregated deployment of one request shape, bound.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Disaggregated {
    /// P: devices of the prefill pool.
    pub prefill_devices: u64,
    /// D: devices of the decode pool.
    pub decode_devices: u64,
    /// Replicas of the layout in each pool.
    pub prefill_replicas: u64,
    /// Replicas of the layout in the decode pool.
    pub decode_replicas: u64,
    /// The batch's KV cache one device sends, bytes.
    pub kv_per_device: Bytes,
    /// Its send over the link, seconds.
    pub transfer: Seconds,
    /// Requests (of B sequences) per second the prefill pool sustains.
    pub prefill_rate: f64,
    /// Requests per second the decode pool sustains.
    pub decode_rate: f64,
    /// Requests per second the links sustain.
    pub transfer_rate: f64,
    /// The least of the three, requests per second.
    pub rate: f64,
    /// What limits it.
    pub bottleneck: Bottleneck,
    /// TTFT with the transfer: prefill + transfer, seconds.
    pub ttft: Seconds,
    /// The same devices colocated: requests per second.
    pub colocated_rate: f64,
}

/// The deployment of `g`'s request on `prefill_devices` + `decode_devices` of `system`, at the
/// bound; `None` when a pool holds no replica of the layout.
///
/// # Errors
/// The fabric cannot carry the send ([`CollectiveError`]).
pub fn disaggregate(
    g: &Generation,
    system: &System,
    prefill_devices: u64,
    decode_devices: u64,
) -> Result<Option<Disaggregated>, CollectiveError> {
    let r = g.devices.max(1);
    let (pr, dr) = (prefill_devices / r, decode_devices / r);
    if pr == 0 || dr == 0 {
        return Ok(None);
    }
    let b = g.request.batch as f64;
    let kv = g.prefill.memory.kv_cache;
    let across = prefill_devices + decode_devices > u64::from(system.gpus_per_node);
    let send = crate::parallel::analysis::stage_send_cost(kv, across, system)?;
    let transfer = send.latency + send.transfer;
    let prefill_rate = pr as f64 * b / g.bound.ttft.get();
    let decode_rate = if g.bound.decode.get() > 0.0 {
        dr as f64 * b / g.bound.decode.get()
    } else {
        f64::INFINITY
    };
    let transfer_rate = if transfer.get() > 0.0 {
        pr as f64 * b / transfer.get()
    } else {
        f64::INFINITY
    };
    let (rate, bottleneck) = [
        (prefill_rate, Bottleneck::Prefill),
        (decode_rate, Bottleneck::Decode),
        (transfer_rate, Bottleneck::Transfer),
    ]
    .into_iter()
    .fold((f64::INFINITY, Bottleneck::Prefill), |acc, x| {
        if x.0 < acc.0 {
            x
        } else {
            acc
        }
    });
    let colocated = (prefill_devices + decode_devices) / r;
    Ok(Some(Disaggregated {
        prefill_devices,
        decode_devices,
        prefill_replicas: pr,
        decode_replicas: dr,
        kv_per_device: kv,
        transfer,
        prefill_rate: prefill_rate / b,
        decode_rate: decode_rate / b,
        transfer_rate: transfer_rate / b,
        rate: rate / b,
        bottleneck,
        ttft: g.bound.ttft + transfer,
        colocated_rate: colocated as f64 / g.bound.e2e.get(),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::Reserve;
    use crate::parallel::Layout;
    use crate::pricing::Estimate;
    use crate::serve::{generate, Request};
    use crate::workload::Workload;

    #[test]
    fn rates_of_each_pool_by_hand() -> Result<(), Box<dyn std::error::Error>> {
        let m = crate::fixtures::llama2_7b();
        let sys = crate::parallel::tests::dgx(1);
        let r = Request {
            prompt: 2048,
            generate: 256,
            batch: 8,
            cached_prefix: 0,
        };
        let base = Workload::decode(1, 1).flash_attention(true);
        let eff = Estimate::published();
        let g = generate(&m, &base, &r, &sys, Layout::SINGLE, Reserve::DEFAULT, &eff)?;
        let d = disaggregate(&g, &sys, 2, 6)?.ok_or("no replica")?;
        // 2 prefill replicas finish 8 prompts (one request) each per TTFT.
        assert!((d.prefill_rate - 2.0 / g.bound.ttft.get()).abs() < 1e-9 * d.prefill_rate);
        assert!((d.decode_rate - 6.0 / g.bound.decode.get()).abs() < 1e-9 * d.decode_rate);
        // 8 × 2048 tokens × 524,288 B = 8.59 GB over one NVLink 4 send at 450 GB/s per
        // direction: about 19 ms, plus latency.
        assert_eq!(d.kv_per_device.get(), 8.0 * 2048.0 * 524_288.0);
        assert!(d.transfer.get() > 8.0 * 2048.0 * 524_288.0 / 450e9);
        assert!(d.rate <= d.prefill_rate && d.rate <= d.decode_rate && d.rate <= d.transfer_rate);
        assert!((d.colocated_rate - 8.0 / g.bound.e2e.get()).abs() < 1e-9 * d.colocated_rate);
        assert!(disaggregate(&g, &sys, 0, 8)?.is_none());
        Ok(())
    }
}

//! The command line of a request, as `roofline analyze` takes it: what each "what to change"
//! command of the advice starts from.

use super::analyze::{AnalyzeRequest, StageChoice};
use roofline_core::memory::Reserve;
use roofline_core::precision::Precision;
use roofline_core::workload::Logits;
use roofline_report::advice::Arg;

/// The model, the chip and the workload always, every other setting where it differs from its
/// default (the parallel, output and `advice` settings left out). An inline model or chip is
/// named by its name or id.
pub(crate) fn command_args(r: &AnalyzeRequest) -> Vec<Arg> {
    let mut v = vec![
        Arg::model(&r.model.name()),
        Arg::value("--hardware", r.hardware.name()),
    ];
    match r.stage {
        StageChoice::Prefill => v.push(Arg::value("--stage", "prefill")),
        StageChoice::Decode => v.push(Arg::value("--stage", "decode")),
        StageChoice::Both => {}
    }
    v.push(Arg::value("--batch", r.batch));
    if r.stage != StageChoice::Decode {
        v.push(Arg::value("--seq-len", r.seq_len));
    }
    if r.stage != StageChoice::Prefill {
        v.push(Arg::value("--context", r.context));
    }
    if r.precision != Precision::Bf16 {
        v.push(Arg::value("--precision", r.precision));
    }
    if let Some(p) = r.weight_precision {
        v.push(Arg::value("--weight-precision", p));
    }
    if let Some(p) = r.kv_precision {
        v.push(Arg::value("--kv-precision", p));
    }
    if let Some(g) = r.group_size {
        v.push(Arg::value("--group-size", g));
    }
    if r.scale_precision != Precision::Fp16 {
        v.push(Arg::value("--scale-precision", r.scale_precision));
    }
    if let Some(p) = r.zero_point_precision {
        v.push(Arg::value("--zero-point-precision", p));
    }
    if r.w8a8 {
        v.push(Arg::switch("--w8a8"));
    }
    if !r.flash_attention {
        v.push(Arg::switch("--no-flash-attention"));
    }
    if r.logits == Logits::All {
        v.push(Arg::value("--logits", "all"));
    }
    match r.memory_reserve.0 {
        x if x == Reserve::DEFAULT => {}
        Reserve::Fraction(f) => v.push(Arg::value("--memory-reserve", format!("{}%", f * 100.0))),
        Reserve::Bytes(b) => v.push(Arg::value("--memory-reserve", b.get())),
    }
    if let Some(l) = r.launch_overhead {
        v.push(Arg::value("--launch-overhead", format!("{l:e}")));
    }
    v
}

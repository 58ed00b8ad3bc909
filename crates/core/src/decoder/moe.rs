//! The mixture-of-experts MLP (Mixtral, Qwen3-MoE, DeepSeek-V3): router, top-k routed experts,
//! shared experts and the weighted combine.

use super::cx::Cx;
use crate::graph::{Emit, Role, Span, TensorId, TensorRole};
use crate::model::{Moe, Naming};
use crate::ops::{Elementwise, ExpertGemm, Op, Softmax, MUL_FLOPS_PER_ELEMENT};
use crate::units::to_f64;
use TensorRole::{Activation as Act, Weight};

/// A mixture-of-experts MLP in `span`: router GEMM and top-k, the routed experts as grouped
/// GEMMs over the T·k routed rows (only the experts some token chose are read, see
/// [`crate::ops::ExpertGemm`]), shared experts as a dense gated MLP, and the weighted combine.
pub(super) fn mlp_moe(
    cx: &Cx,
    gr: &mut impl Emit,
    moe: &Moe,
    span: Span,
    x3: TensorId,
    out: TensorId,
) {
    let (t, d) = (cx.t, cx.d);
    let (tf, df) = (cx.tf, cx.df);
    let (w, a) = (cx.w, cx.a);
    let (e_n, k, fe) = (moe.experts, moe.top_k, moe.expert_intermediate);
    let mixtral = cx.model.variant.naming == Naming::Mixtral;
    let wr = gr.tensor("gate.weight", df * to_f64(e_n), w, Weight);
    let logits = gr.tensor("router_logits", tf * to_f64(e_n), a, Act);
    gr.node(
        "gate",
        Role::Router,
        span,
        cx.linear(t, e_n, d, false),
        &[x3, wr],
        &[logits],
    );
    let probs = gr.tensor("router_probs", tf * to_f64(e_n), a, Act);
    let topk = Op::Softmax(Softmax {
        rows: t,
        cols: e_n,
        scale_mask: false,
        precision: a,
    });
    gr.node(
        "router_topk",
        Role::RouterTopK,
        span,
        topk,
        &[logits],
        &[probs],
    );
    let rows = to_f64(t * k);
    let expert = |n: u64, kk: u64| {
        Op::ExpertGemm(ExpertGemm {
            tokens: t,
            top_k: k,
            experts: e_n,
            n,
            k: kk,
            a: cx.ga,
            b: w,
            b_scale: cx.w_scale,
            c: a,
            compute: cx.ga,
        })
    };
    let (n_gate, n_up, n_down) = if mixtral {
        ("experts.w1", "experts.w3", "experts.w2")
    } else {
        ("experts.gate_proj", "experts.up_proj", "experts.down_proj")
    };
    let ew = to_f64(e_n * d * fe);
    let wg = gr.tensor("experts.gate.weight", ew, w, Weight);
    let wu = gr.tensor("experts.up.weight", ew, w, Weight);
    let wd = gr.tensor("experts.down.weight", ew, w, Weight);
    let gate = gr.tensor("expert_gate", rows * to_f64(fe), a, Act);
    let up = gr.tensor("expert_up", rows * to_f64(fe), a, Act);
    let gact = gr.tensor("expert_gate_act", rows * to_f64(fe), a, Act);
    let hact = gr.tensor("expert_act_out", rows * to_f64(fe), a, Act);
    let eout = gr.tensor("expert_out", rows * df, a, Act);
    gr.node(
        n_gate,
        Role::ExpertGateProj,
        span,
        expert(fe, d),
        &[x3, wg],
        &[gate],
    );
    gr.node(
        n_up,
        Role::ExpertUpProj,
        span,
        expert(fe, d),
        &[x3, wu],
        &[up],
    );
    let unary = Op::Elementwise(Elementwise {
        elements: t * k * fe,
        inputs: 1,
        flops_per_element: cx.act_flops(),
        precision: a,
    });
    gr.node(
        "experts.act_fn",
        Role::ExpertActivation,
        span,
        unary,
        &[gate],
        &[gact],
    );
    let mul = Op::Elementwise(Elementwise {
        elements: t * k * fe,
        inputs: 2,
        flops_per_element: MUL_FLOPS_PER_ELEMENT,
        precision: a,
    });
    gr.node(
        "experts.act_mul",
        Role::ExpertGateMul,
        span,
        mul,
        &[gact, up],
        &[hact],
    );
    gr.node(
        n_down,
        Role::ExpertDownProj,
        span,
        expert(d, fe),
        &[hact, wd],
        &[eout],
    );
    // A fixed array, not a `Vec`: walking the graph allocates nothing (sweeps rely on it).
    let mut combine_in = [eout, probs, probs];
    let mut combine_n = 2;
    let mut inputs = k;
    if moe.shared_experts > 0 {
        let fs = moe.shared_experts * fe;
        let (fsf, sw) = (to_f64(fs), to_f64(d * fs));
        let wsg = gr.tensor("shared_experts.gate_proj.weight", sw, w, Weight);
        let wsu = gr.tensor("shared_experts.up_proj.weight", sw, w, Weight);
        let wsd = gr.tensor("shared_experts.down_proj.weight", sw, w, Weight);
        let sg = gr.tensor("shared_gate", tf * fsf, a, Act);
        let su = gr.tensor("shared_up", tf * fsf, a, Act);
        let sga = gr.tensor("shared_gate_act", tf * fsf, a, Act);
        let sh = gr.tensor("shared_act_out", tf * fsf, a, Act);
        let so = gr.tensor("shared_out", tf * df, a, Act);
        gr.node(
            "shared_experts.gate_proj",
            Role::SharedGateProj,
            span,
            cx.linear(t, fs, d, false),
            &[x3, wsg],
            &[sg],
        );
        gr.node(
            "shared_experts.up_proj",
            Role::SharedUpProj,
            span,
            cx.linear(t, fs, d, false),
            &[x3, wsu],
            &[su],
        );
        let op = Op::Elementwise(Elementwise {
            elements: t * fs,
            inputs: 1,
            flops_per_element: cx.act_flops(),
            precision: a,
        });
        gr.node(
            "shared_experts.act_fn",
            Role::SharedActivation,
            span,
            op,
            &[sg],
            &[sga],
        );
        let op = Op::Elementwise(Elementwise {
            elements: t * fs,
            inputs: 2,
            flops_per_element: MUL_FLOPS_PER_ELEMENT,
            precision: a,
        });
        gr.node(
            "shared_experts.act_mul",
            Role::SharedGateMul,
            span,
            op,
            &[sga, su],
            &[sh],
        );
        gr.node(
            "shared_experts.down_proj",
            Role::SharedDownProj,
            span,
            cx.linear(t, d, fs, false),
            &[sh, wsd],
            &[so],
        );
        combine_in[2] = so;
        combine_n = 3;
        inputs += 1;
    }
    // Σ_i p_i·y_i over the k routed outputs (+ the shared output): a multiply and an add each.
    let combine = Op::Elementwise(Elementwise {
        elements: t * d,
        inputs: inputs as u32,
        flops_per_element: 2.0 * to_f64(inputs),
        precision: a,
    });
    gr.node(
        "moe_combine",
        Role::MoeCombine,
        span,
        combine,
        &combine_in[..combine_n],
        &[out],
    );
}

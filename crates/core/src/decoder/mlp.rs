//! The dense MLP: gated (Llama's `gate_proj`, `up_proj`, `act_fn(gate) * up`, `down_proj`) or
//! plain (GPT-2's and OPT's `fc1`, activation, `fc2`).

use super::cx::Cx;
use crate::graph::{Emit, Role, Span, TensorId, TensorRole};
use crate::model::MlpKind;
use crate::ops::{Elementwise, Op, MUL_FLOPS_PER_ELEMENT};
use crate::units::to_f64;
use TensorRole::{Activation as Act, Weight};

/// A dense MLP in `span`: gated (gate, up, act, mul, down) or plain (up, act, down), writing
/// `out`.
#[inline(always)]
pub(super) fn mlp_dense(cx: &Cx, gr: &mut impl Emit, span: Span, x3: TensorId, out: TensorId) {
    let m = cx.model;
    let (t, d, f) = (cx.t, cx.d, m.intermediate);
    let (tf, df, ff) = (cx.tf, cx.df, to_f64(f));
    let (w, a) = (cx.w, cx.a);
    let mb = m.mlp_bias;
    let bias = |n: f64| if mb { n } else { 0.0 };
    let names = cx.names();
    let hidden_act = gr.tensor("mlp_act_out", tf * ff, a, Act);
    let unary = |flops| {
        Op::Elementwise(Elementwise {
            elements: t * f,
            inputs: 1,
            flops_per_element: flops,
            precision: a,
        })
    };
    match m.mlp {
        MlpKind::Gated => {
            let wg = gr.tensor("gate_proj.weight", df * ff + bias(ff), w, Weight);
            let wu = gr.tensor("up_proj.weight", df * ff + bias(ff), w, Weight);
            let gate = gr.tensor("gate", tf * ff, a, Act);
            let up = gr.tensor("up", tf * ff, a, Act);
            let gate_act = gr.tensor("gate_act", tf * ff, a, Act);
            gr.node(
                names.gate,
                Role::GateProj,
                span,
                cx.linear(t, f, d, mb),
                &[x3, wg],
                &[gate],
            );
            gr.node(
                names.up,
                Role::UpProj,
                span,
                cx.linear(t, f, d, mb),
                &[x3, wu],
                &[up],
            );
            // Eager PyTorch runs `act_fn(gate) * up` as two kernels.
            gr.node(
                "act_fn",
                Role::Activation,
                span,
                unary(cx.act_flops()),
                &[gate],
                &[gate_act],
            );
            let mul = Op::Elementwise(Elementwise {
                elements: t * f,
                inputs: 2,
                flops_per_element: MUL_FLOPS_PER_ELEMENT,
                precision: a,
            });
            gr.node(
                "act_mul",
                Role::GateMul,
                span,
                mul,
                &[gate_act, up],
                &[hidden_act],
            );
        }
        MlpKind::Plain => {
            let w1 = gr.tensor("up_proj.weight", df * ff + bias(ff), w, Weight);
            let up = gr.tensor("up", tf * ff, a, Act);
            gr.node(
                names.up,
                Role::UpProj,
                span,
                cx.linear(t, f, d, mb),
                &[x3, w1],
                &[up],
            );
            gr.node(
                "act_fn",
                Role::Activation,
                span,
                unary(cx.act_flops()),
                &[up],
                &[hidden_act],
            );
        }
    }
    let wd = gr.tensor("down_proj.weight", ff * df + bias(df), w, Weight);
    gr.node(
        names.down,
        Role::DownProj,
        span,
        cx.linear(t, d, f, mb),
        &[hidden_act, wd],
        &[out],
    );
}

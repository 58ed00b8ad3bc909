use super::*;
use crate::analysis::analyze;
use crate::fixtures::llama2_7b;

type TestResult = Result<(), Box<dyn std::error::Error>>;

fn model_on(
    layout: Layout,
    devices: u64,
) -> Result<(Transformer, System, StepModel), ParallelAnalysisError> {
    let m = llama2_7b();
    let mut sys = crate::parallel::tests::dgx(1);
    sys.gpus_per_node = devices as u32;
    let base = Workload::decode(1, 1).flash_attention(true);
    let s = StepModel::new(&m, &base, &sys, layout, Reserve::DEFAULT)?;
    Ok((m, sys, s))
}

#[test]
fn a_dense_model_is_linear_in_the_step_quantities() -> TestResult {
    let (_, _, s) = model_on(Layout::SINGLE, 1)?;
    assert!(s.fit_error() < 1e-9, "fit error {}", s.fit_error());
    Ok(())
}

#[test]
fn the_bound_of_a_homogeneous_step_is_the_analysis_time_without_launches() -> TestResult {
    let (m, sys, s) = model_on(Layout::SINGLE, 1)?;
    for w in [
        Workload::decode(16, 4000).flash_attention(true),
        Workload::prefill(2, 333)
            .with_cached(1000)
            .flash_attention(true),
    ] {
        let a = analyze(&m, &w, &sys.chip, Reserve::DEFAULT)?;
        let mix = match w.stage {
            Stage::Decode => Mix::decode(w.batch, w.context),
            Stage::Prefill => Mix::sequences(w.batch, w.seq_len, w.cached, true),
        };
        let (fitted, analysed) = (s.bound(&mix).get(), a.totals.time.get());
        assert!(
            (fitted - analysed).abs() <= 1e-9 * analysed,
            "{fitted} vs {analysed}"
        );
        assert_eq!(s.kernels(&mix), a.totals.kernels);
    }
    Ok(())
}

#[test]
fn a_mixed_step_reads_the_weights_once() -> TestResult {
    // Decode at batch 8 and a 512-token chunk together cost less than apart (the weights are
    // read once), and more than either alone.
    let (_, _, s) = model_on(Layout::SINGLE, 1)?;
    let d = Mix::decode(8, 2048);
    let p = Mix::sequences(1, 512, 1024, false);
    let (td, tp, tm) = (s.bound(&d), s.bound(&p), s.bound(&(d + p)));
    assert!(tm < td + tp && tm > td && tm > tp, "{td:?} {tp:?} {tm:?}");
    Ok(())
}

#[test]
fn kv_capacity_is_what_is_left_over_kv_bytes_per_token() -> TestResult {
    let (m, sys, s) = model_on(Layout::SINGLE, 1)?;
    // Llama-2-7B, bf16: 2 (K and V) · 32 layers · 32 heads · 128 · 2 B = 524,288 B a token.
    assert_eq!(s.kv_bytes_per_token().get(), 524_288.0);
    let cap = sys.chip.capacity().ok_or("capacity")?.get();
    let weights = 6_738_415_616.0 * 2.0;
    let act = s.activations(&Mix::sequences(1, 8192, 0, true)).get();
    let want = ((cap - 0.1 * cap - weights - act) / 524_288.0).floor() as u64;
    assert_eq!(s.weights().get(), weights);
    assert_eq!(s.kv_capacity_tokens(), Some(want));
    let _ = m;
    Ok(())
}

#[test]
fn tensor_parallel_steps_fit_with_their_all_reduces() -> TestResult {
    let (_, _, s) = model_on(
        Layout {
            tp: 2,
            ..Layout::SINGLE
        },
        2,
    )?;
    assert!(s.fit_error() < 1e-9, "fit error {}", s.fit_error());
    // Each device holds half the KV heads: half the KV bytes per token.
    assert_eq!(s.kv_bytes_per_token().get(), 262_144.0);
    Ok(())
}

#[test]
fn the_estimate_is_never_below_the_bound() -> TestResult {
    let (_, _, s) = model_on(Layout::SINGLE, 1)?;
    let e = crate::pricing::Estimate::published();
    for mix in [Mix::decode(1, 100), Mix::sequences(4, 2048, 0, true)] {
        assert!(s.estimate(&mix, &e) > s.bound(&mix));
        let graphs = e.with_cuda_graphs(true);
        assert!(s.estimate(&mix, &graphs) < s.estimate(&mix, &e));
    }
    Ok(())
}

#[test]
fn a_mixture_of_experts_step_is_exact_at_any_token_count() -> TestResult {
    // Experts touched, E·(1 − (1 − k/E)^T), is not linear in the tokens: with E = 8, k = 2 it
    // is 2 at one token, 8·(1 − 0.75²) = 3.5 at two, nearly 8 at 64. The step model evaluates
    // the grouped GEMM's cost at the step's tokens, so each decode equals its analysis.
    let m = crate::fixtures::mixtral_like();
    let sys = crate::parallel::tests::dgx(1);
    let base = Workload::decode(1, 1).flash_attention(true);
    let s = StepModel::new(&m, &base, &sys, Layout::SINGLE, Reserve::DEFAULT)?;
    assert!(s.fit_error() < 1e-9, "fit error {}", s.fit_error());
    for batch in [1, 2, 3, 5, 64] {
        let w = Workload::decode(batch, 2000).flash_attention(true);
        let a = analyze(&m, &w, &sys.chip, Reserve::DEFAULT)?;
        let (fitted, analysed) = (
            s.bound(&Mix::decode(batch, 2000)).get(),
            a.totals.time.get(),
        );
        assert!(
            (fitted - analysed).abs() <= 1e-9 * analysed,
            "batch {batch}: {fitted} vs {analysed}"
        );
    }
    Ok(())
}

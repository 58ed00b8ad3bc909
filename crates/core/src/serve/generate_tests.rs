use super::*;
use crate::analysis::analyze;
use crate::fixtures::llama2_7b;

fn dgx1() -> System {
    let mut s = crate::parallel::tests::dgx(1);
    s.gpus_per_node = 1;
    s
}

fn base() -> Workload {
    Workload::decode(1, 1).flash_attention(true)
}

fn request(prompt: u64, generate: u64, batch: u64) -> Request {
    Request {
        prompt,
        generate,
        batch,
        cached_prefix: 0,
    }
}

#[test]
fn exact_sum_of_a_convex_piecewise_linear_function() -> Result<(), ()> {
    // f(c) = max(2c, 3c − 100) + 5: one kink at c = 100.
    let f = |c: u64| -> Result<[f64; 2], ()> {
        let c = c as f64;
        let v = (2.0 * c).max(3.0 * c - 100.0) + 5.0;
        Ok([v, 2.0 * v])
    };
    for (lo, hi) in [
        (0u64, 1000u64),
        (7, 7),
        (7, 8),
        (50, 150),
        (101, 5000),
        (0, 99),
    ] {
        let brute: f64 = (lo..=hi)
            .map(|c| f(c).map(|v| v[0]))
            .sum::<Result<f64, ()>>()?;
        let ends = (f(lo)?, f(hi)?);
        let (s, evals) = sum_steps(lo, hi, ends, &[], f)?;
        assert!(
            (s[0] - brute).abs() <= 1e-9 * brute,
            "{lo}..{hi}: {} vs {brute}",
            s[0]
        );
        assert!((s[1] - 2.0 * brute).abs() <= 1e-9 * brute);
        assert!(evals <= 2 + 2 * 13 * 2, "{evals} evaluations");
    }
    // A concave kink (a sliding window's min) is summed exactly when named.
    let g = |c: u64| -> Result<[f64; 2], ()> {
        let v = (c.min(4096) as f64) * 3.0 + 1.0;
        Ok([v, v])
    };
    let brute: f64 = (1000..=9000)
        .map(|c| g(c).map(|v| v[0]))
        .sum::<Result<f64, ()>>()?;
    let ends = (g(1000)?, g(9000)?);
    let (s, _) = sum_steps(1000, 9000, ends, &[4095, 4096], g)?;
    assert!((s[0] - brute).abs() <= 1e-9 * brute);
    Ok(())
}

#[test]
fn ttft_tpot_and_e2e_of_llama_2_7b_by_hand() -> Result<(), Box<dyn std::error::Error>> {
    let (m, sys) = (llama2_7b(), dgx1());
    let r = request(2048, 256, 16);
    let eff = crate::pricing::Estimate::published();
    let g = generate(
        &m,
        &base(),
        &r,
        &sys,
        Layout::SINGLE,
        Reserve::DEFAULT,
        &eff,
    )?;
    let chip = &sys.chip;
    // TTFT: the prefill of 16 × 2048 tokens, its roofline time (no launches).
    let p = analyze(
        &m,
        &Workload::prefill(16, 2048).flash_attention(true),
        chip,
        Reserve::DEFAULT,
    )?;
    assert!((g.bound.ttft.get() - p.totals.time.get()).abs() <= 1e-12 * p.totals.time.get());
    // Decode: the 255 steps at contexts 2048..=2302, each analysed.
    let mut decode = 0.0;
    let mut decode_est = 0.0;
    for c in 2048..=2302 {
        let d = analyze(
            &m,
            &Workload::decode(16, c).flash_attention(true),
            chip,
            Reserve::DEFAULT,
        )?;
        decode += d.totals.time.get();
        // The estimate by hand: each row at max(FLOPs / (peak · η), bytes / (bandwidth ·
        // η_memory)), η the attention or matmul share on the matrix units, 1 for vector work;
        // one launch overhead per kernel.
        let e = &eff.efficiency;
        for r in &d.rows {
            let eta = match r.compute {
                crate::ops::Compute::Matrix(_) if r.role.is_attention_core() => e.attention,
                crate::ops::Compute::Matrix(_) => e.matmul,
                _ => 1.0,
            };
            let c = r.cost.flops.get() / (r.roof.peak.get() * eta);
            let b = r.cost.bytes().get() / (r.roof.bandwidth.get() * e.memory);
            decode_est += r.count as f64 * (c.max(b) + chip.launch_overhead.value.get());
        }
    }
    assert!((g.bound.decode.get() - decode).abs() <= 1e-9 * decode);
    assert!((g.estimate.decode.get() - decode_est).abs() <= 1e-9 * decode_est);
    assert!(g.decode_steps_analysed < 20, "{}", g.decode_steps_analysed);
    // The two TPOT conventions.
    let e2e = p.totals.time.get() + decode;
    assert!((g.bound.e2e.get() - e2e).abs() <= 1e-9 * e2e);
    let tpot = g.bound.tpot.ok_or("tpot")?.get();
    assert!((tpot - decode / 255.0).abs() <= 1e-9 * tpot);
    assert!((g.bound.e2e_per_token.get() - e2e / 256.0).abs() <= 1e-9 * e2e);
    assert!((g.bound.tokens_per_s - 16.0 * 256.0 / e2e).abs() <= 1e-6);
    // The cache at the end: 16 sequences × 2303 tokens × 524,288 B.
    assert_eq!(g.kv_at_end.get(), 16.0 * 2303.0 * 524_288.0);
    assert_eq!(g.fits, Some(true));
    // The estimate is slower than the bound in every phase.
    assert!(g.estimate.ttft > g.bound.ttft && g.estimate.decode > g.bound.decode);
    Ok(())
}

#[test]
fn one_token_is_the_prefill_alone() -> Result<(), Box<dyn std::error::Error>> {
    let g = generate(
        &llama2_7b(),
        &base(),
        &request(128, 1, 1),
        &dgx1(),
        Layout::SINGLE,
        Reserve::DEFAULT,
        &crate::pricing::Estimate::published(),
    )?;
    assert_eq!(g.bound.decode, Seconds::ZERO);
    assert_eq!(g.bound.tpot, None);
    assert_eq!(g.bound.e2e, g.bound.ttft);
    assert!(g.last_decode.is_none());
    Ok(())
}

#[test]
fn a_cached_prefix_prefills_only_the_rest() -> Result<(), Box<dyn std::error::Error>> {
    let (m, sys) = (llama2_7b(), dgx1());
    let eff = crate::pricing::Estimate::published();
    let r = Request {
        cached_prefix: 1536,
        ..request(2048, 16, 4)
    };
    let g = generate(
        &m,
        &base(),
        &r,
        &sys,
        Layout::SINGLE,
        Reserve::DEFAULT,
        &eff,
    )?;
    let w = Workload::prefill(4, 512)
        .with_cached(1536)
        .flash_attention(true);
    let p = analyze(&m, &w, &sys.chip, Reserve::DEFAULT)?;
    assert_eq!(g.bound.ttft, p.totals.time);
    let whole = generate(
        &m,
        &base(),
        &request(2048, 16, 4),
        &sys,
        Layout::SINGLE,
        Reserve::DEFAULT,
        &eff,
    )?;
    assert!(g.bound.ttft.get() < 0.5 * whole.bound.ttft.get());
    // Decoding is the same either way.
    assert_eq!(g.bound.decode, whole.bound.decode);
    Ok(())
}

#[test]
fn the_first_token_that_does_not_fit() -> Result<(), Box<dyn std::error::Error>> {
    let (m, sys) = (llama2_7b(), dgx1());
    // 80 GB − 8 GB reserve − 13.48 GB weights leaves ~58.5 GB: at batch 64, 524,288 B a token,
    // ~1,745 tokens a sequence. A 1,024-token prompt overflows during decode.
    let r = request(1024, 2048, 64);
    let g = generate(
        &m,
        &base(),
        &r,
        &sys,
        Layout::SINGLE,
        Reserve::DEFAULT,
        &crate::pricing::Estimate::published(),
    )?;
    assert_eq!(g.fits, Some(false));
    let tok = g.first_overflow.ok_or("overflow")?;
    // The decode feeding token j − 1 attends P + j − 1 keys; find the first j by hand from the
    // memory model: the step at context c fits when its total is within 80 GB.
    let fits = |c: u64| -> Result<bool, crate::analysis::AnalysisError> {
        let w = Workload::decode(64, c).flash_attention(true);
        let d = analyze(&m, &w, &sys.chip, Reserve::DEFAULT)?;
        Ok(d.memory.fits() == Some(true))
    };
    let mut c_last_fit = None;
    for c in 1024..=3070 {
        if !fits(c)? {
            break;
        }
        c_last_fit = Some(c);
    }
    let c_last_fit = c_last_fit.ok_or("none fit")?;
    assert_eq!(tok, c_last_fit + 1 - 1024 + 2);
    assert!(!fits(c_last_fit + 1)?);
    Ok(())
}

#[test]
fn bad_lengths_name_their_field() {
    for (r, field) in [
        (request(0, 1, 1), "prompt"),
        (request(10, 0, 1), "generate"),
        (
            Request {
                cached_prefix: 10,
                ..request(10, 1, 1)
            },
            "cached_prefix",
        ),
        (request(MAX_TOKENS, 2, 1), "generate"),
    ] {
        assert_eq!(r.validate().map_err(|e| e.quantity), Err(field));
    }
}

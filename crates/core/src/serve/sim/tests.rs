//! The simulator against hand arithmetic: a step costs A + B·tokens unless said otherwise.

use super::*;
use crate::serve::Mix;
use proptest::prelude::*;
use std::cell::RefCell;

type TestResult = Result<(), Box<dyn std::error::Error>>;

const A: f64 = 0.01;
const B: f64 = 1e-5;

fn linear(m: &Mix) -> f64 {
    A + B * m.tokens
}

fn config(max_seqs: u64, budget: u64, kv_blocks: u64, block: u64, chunked: bool) -> EngineConfig {
    EngineConfig {
        max_seqs,
        max_batched_tokens: budget,
        kv_blocks,
        block_tokens: block,
        chunked_prefill: chunked,
    }
}

fn req(arrival: f64, prompt: u64, output: u64) -> Request {
    Request {
        arrival,
        prompt,
        output,
    }
}

#[track_caller]
fn close(got: f64, want: f64) {
    assert!(
        (got - want).abs() <= 1e-12 * want.abs().max(1.0),
        "got {got}, want {want}"
    );
}

#[test]
fn one_request_alone_prefills_in_one_step_then_decodes_one_token_a_step() -> TestResult {
    let sim = simulate(
        &[req(0.5, 1000, 10)],
        &config(8, 2048, 1000, 16, true),
        &linear,
    )?;
    let r = &sim.requests[0];
    // TTFT = A + B·1000 = 0.02 s; each of the 9 decodes A + B = 0.01001 s.
    close(r.ttft, 0.02);
    close(r.tpot.ok_or("no TPOT")?, 0.01001);
    close(r.e2e, 0.02 + 9.0 * 0.01001);
    close(r.queue, 0.0);
    close(r.admitted, 0.5);
    close(r.finish, 0.5 + 0.02 + 9.0 * 0.01001);
    let s = &sim.summary;
    assert_eq!(
        (s.count, s.steps, s.preemptions, s.output_tokens),
        (1, 10, 0, 10)
    );
    close(s.makespan, 0.02 + 9.0 * 0.01001);
    close(s.output_tokens_per_s, 10.0 / (0.02 + 9.0 * 0.01001));
    close(s.mean_batch, 1.0);
    Ok(())
}

#[test]
fn one_output_token_has_no_tpot_and_finishes_at_the_prefill() -> TestResult {
    let sim = simulate(
        &[req(0.0, 100, 1)],
        &config(8, 2048, 100, 16, true),
        &linear,
    )?;
    let r = &sim.requests[0];
    assert_eq!(r.tpot, None);
    assert_eq!(sim.summary.tpot, None);
    close(r.ttft, A + 100.0 * B);
    close(r.e2e, r.ttft);
    Ok(())
}

#[test]
fn two_requests_together_share_the_prefill_step_and_batch_their_decodes() -> TestResult {
    let sim = simulate(
        &[req(0.0, 100, 5), req(0.0, 200, 5)],
        &config(8, 1024, 1000, 16, true),
        &linear,
    )?;
    // Step 1: both prompts, 300 tokens: A + 300B. Then 4 steps of 2 decodes: A + 2B each.
    let ttft = A + 300.0 * B;
    let e2e = ttft + 4.0 * (A + 2.0 * B);
    for r in &sim.requests {
        close(r.ttft, ttft);
        close(r.e2e, e2e);
        close(r.tpot.ok_or("no TPOT")?, A + 2.0 * B);
    }
    assert_eq!(sim.summary.steps, 5);
    close(sim.summary.mean_batch, 2.0);
    Ok(())
}

#[test]
fn without_chunked_prefill_a_prompt_over_the_remaining_budget_waits_a_step() -> TestResult {
    // Budget 250: step 1 prefills the 100-token prompt (150 left < 200); step 2 decodes it
    // and prefills the 200-token one: 201 tokens.
    let sim = simulate(
        &[req(0.0, 100, 3), req(0.0, 200, 2)],
        &config(8, 250, 1000, 16, false),
        &linear,
    )?;
    let s1 = A + 100.0 * B;
    let s2 = A + 201.0 * B;
    let (r0, r1) = (&sim.requests[0], &sim.requests[1]);
    close(r0.ttft, s1);
    close(r1.queue, s1);
    close(r1.ttft, s1 + s2);
    // Step 3: both decode (2 tokens); r1 is done (2 outputs), r0 too (3 outputs).
    close(r0.e2e, s1 + s2 + A + 2.0 * B);
    close(r1.e2e, s1 + s2 + A + 2.0 * B);
    assert_eq!(sim.summary.steps, 3);
    Ok(())
}

#[test]
fn chunked_prefill_splits_a_3000_token_prompt_into_three_steps_under_a_1024_budget() -> TestResult {
    let seen = RefCell::new(Vec::new());
    let step = |m: &Mix| {
        seen.borrow_mut().push(*m);
        linear(m)
    };
    let sim = simulate(
        &[req(0.0, 3000, 2)],
        &config(8, 1024, 1000, 16, true),
        &step,
    )?;
    // 1024 after 0, 1024 after 1024, 952 after 2048 (sampled), then one decode after 3000.
    assert_eq!(
        *seen.borrow(),
        vec![
            Mix::sequences(1, 1024, 0, false),
            Mix::sequences(1, 1024, 1024, false),
            Mix::sequences(1, 952, 2048, true),
            Mix::decode(1, 3000),
        ]
    );
    let r = &sim.requests[0];
    close(r.ttft, 3.0 * A + 3000.0 * B);
    close(r.e2e, 4.0 * A + 3001.0 * B);
    close(r.tpot.ok_or("no TPOT")?, A + B);
    Ok(())
}

#[test]
fn decodes_go_before_a_chunked_prefill_which_takes_the_rest_of_the_budget() -> TestResult {
    // r0 (prompt 10, 3 outputs) is decoding when r1 (prompt 2000) arrives at 0.015 s.
    let seen = RefCell::new(Vec::new());
    let step = |m: &Mix| {
        seen.borrow_mut().push(*m);
        linear(m)
    };
    simulate(
        &[req(0.0, 10, 3), req(0.015, 2000, 1)],
        &config(8, 1024, 1000, 16, true),
        &step,
    )?;
    let seen = seen.borrow();
    assert_eq!(seen[0], Mix::sequences(1, 10, 0, true));
    // Step 1 ends at A + 10B = 0.0101 s < 0.015: step 2 decodes r0 alone.
    assert_eq!(seen[1], Mix::decode(1, 10));
    assert_eq!(seen[2], {
        let mut m = Mix::decode(1, 11);
        m.add(1023, 0, false);
        m
    });
    // r0 is done; r1's last 977 tokens after 1023.
    assert_eq!(seen[3], Mix::sequences(1, 977, 1023, true));
    assert_eq!(seen.len(), 4);
    Ok(())
}

#[test]
fn max_seqs_one_serves_requests_one_after_the_other() -> TestResult {
    let sim = simulate(
        &[req(0.0, 100, 3), req(0.0, 100, 3)],
        &config(1, 1024, 1000, 16, true),
        &linear,
    )?;
    // r0: A + 100B, then 2 × (A + B): done at 3A + 102B, when r1 is admitted.
    let done0 = 3.0 * A + 102.0 * B;
    close(sim.requests[0].e2e, done0);
    close(sim.requests[1].queue, done0);
    close(sim.requests[1].ttft, done0 + A + 100.0 * B);
    close(sim.requests[1].e2e, 2.0 * done0);
    Ok(())
}

#[test]
fn a_small_kv_cache_preempts_the_newest_sequence_which_recomputes_and_finishes() -> TestResult {
    // Blocks of 1 token, 10 blocks; two requests of prompt 4, output 4 (7 tokens at most each).
    // Step 1: both prefill (8 blocks, 2 free): A + 8B. Step 2: both decode (0 free): A + 2B.
    // Step 3: r0 needs a block: r1 (newest) is preempted, 5 freed; r0 decodes alone: A + B.
    // Step 4: r0's last decode (r1's re-prefill of 4 + 2 = 6 tokens needs 6 > 3 free): A + B.
    // Step 5: r1 re-prefills 6 tokens, sampling its 3rd: A + 6B. Step 6: its last: A + B.
    let sim = simulate(
        &[req(0.0, 4, 4), req(0.0, 4, 4)],
        &config(8, 1024, 10, 1, true),
        &linear,
    )?;
    assert_eq!(sim.summary.preemptions, 1);
    assert_eq!(sim.summary.steps, 6);
    let (r0, r1) = (&sim.requests[0], &sim.requests[1]);
    assert_eq!((r0.preemptions, r1.preemptions), (0, 1));
    close(r0.ttft, A + 8.0 * B);
    close(r1.ttft, A + 8.0 * B);
    close(r0.e2e, 4.0 * A + 12.0 * B);
    close(r1.e2e, 6.0 * A + 19.0 * B);
    close(r1.queue, 0.0);
    Ok(())
}

#[test]
fn heavy_kv_pressure_preempts_many_times_and_every_request_finishes() -> TestResult {
    let reqs: Vec<Request> = (0..50).map(|i| req(0.001 * i as f64, 300, 200)).collect();
    // Each needs ⌈499/16⌉ = 32 blocks at most; 100 blocks hold about three.
    let sim = simulate(&reqs, &config(64, 2048, 100, 16, true), &linear)?;
    assert!(sim.summary.preemptions > 10, "{}", sim.summary.preemptions);
    assert!(sim.requests.iter().all(|r| r.finish.is_finite()));
    assert_eq!(sim.summary.output_tokens, 50 * 200);
    Ok(())
}

#[test]
fn without_chunked_prefill_a_re_prefill_over_the_budget_is_split_and_finishes() -> TestResult {
    // Prompts of 16 under a budget of 80; a sequence preempted after generating g tokens
    // re-prefills 16 + g, over 80 once g > 64: split into chunks, every step within the budget.
    let reqs: Vec<Request> = (0..30).map(|i| req(0.0005 * i as f64, 16, 200)).collect();
    let seen = RefCell::new(Vec::new());
    let step = |m: &Mix| {
        seen.borrow_mut().push(*m);
        linear(m)
    };
    // 16 + 200 − 1 = 215 blocks of 1 token at most each; 400 blocks hold under two.
    let sim = simulate(&reqs, &config(16, 80, 400, 1, false), &step)?;
    assert!(sim.summary.preemptions > 0);
    assert_eq!(sim.summary.output_tokens, 30 * 200);
    let seen = seen.borrow();
    assert!(seen.iter().all(|m| m.tokens <= 80.0));
    // X − K = Σ (q − 1)·c is positive only for a chunk of q > 1 after c > 0 cached tokens:
    // the second chunk of a split re-prefill (a whole prefill has c = 0, a decode q = 1).
    assert!(seen.iter().any(|m| m.cross_pairs > m.cached));
    assert!(sim.requests.iter().all(|r| r.finish.is_finite()));
    Ok(())
}

#[test]
fn littles_law_holds_on_a_poisson_run() -> TestResult {
    let rate = 5.0;
    let reqs = generate(
        20_000,
        Arrivals::Poisson { rate },
        Dist::Fixed(256),
        Dist::Uniform { lo: 16, hi: 64 },
        3,
    )?;
    let sim = simulate(&reqs, &config(64, 2048, 100_000, 16, true), &|m: &Mix| {
        0.005 + 2e-5 * m.tokens
    })?;
    // Mean number in the system, integrated over time from the arrival and finish events.
    let mut events: Vec<(f64, i64)> = sim
        .requests
        .iter()
        .flat_map(|r| [(r.arrival, 1), (r.finish, -1)])
        .collect();
    events.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    let (mut area, mut n, mut t) = (0.0, 0i64, events[0].0);
    for (at, d) in events {
        area += n as f64 * (at - t);
        n += d;
        t = at;
    }
    let l = area / sim.summary.makespan;
    let lambda_w = rate * sim.summary.e2e.mean;
    assert!((l / lambda_w - 1.0).abs() < 0.03, "L {l}, λW {lambda_w}");
    assert!(sim.summary.tpot.is_some());
    Ok(())
}

#[test]
fn one_seed_gives_one_run_and_another_seed_another() -> TestResult {
    let run = |seed| -> Result<Simulation, Box<dyn std::error::Error>> {
        let reqs = generate(
            500,
            Arrivals::Poisson { rate: 20.0 },
            Dist::Normal {
                mean: 300.0,
                sd: 100.0,
            },
            Dist::LogNormal {
                mu: 4.0,
                sigma: 0.5,
            },
            seed,
        )?;
        Ok(simulate(&reqs, &config(32, 512, 5000, 16, true), &linear)?)
    };
    assert_eq!(run(1)?, run(1)?);
    assert_ne!(run(1)?, run(2)?);
    Ok(())
}

#[test]
fn all_at_once_arrive_at_zero_and_the_uniform_stays_in_range() -> TestResult {
    let reqs = generate(
        1000,
        Arrivals::AllAtOnce,
        Dist::Uniform { lo: 5, hi: 9 },
        Dist::Normal { mean: 1.0, sd: 5.0 },
        0,
    )?;
    assert!(reqs.iter().all(|r| r.arrival == 0.0));
    assert!(reqs.iter().all(|r| (5..=9).contains(&r.prompt)));
    assert!(reqs.iter().all(|r| r.output >= 1));
    assert!(reqs.iter().any(|r| r.prompt == 5) && reqs.iter().any(|r| r.prompt == 9));
    Ok(())
}

#[test]
fn a_poisson_stream_has_the_rate_it_was_asked_for() -> TestResult {
    let reqs = generate(
        100_000,
        Arrivals::Poisson { rate: 4.0 },
        Dist::Fixed(1),
        Dist::Fixed(1),
        9,
    )?;
    // The last of 10^5 arrivals: 25 000 s, within 1 % (the sd of the sum is 0.3 %).
    let last = reqs[reqs.len() - 1].arrival;
    assert!((last / 25_000.0 - 1.0).abs() < 0.01, "{last}");
    Ok(())
}

#[test]
fn a_request_that_can_never_fit_is_an_error_naming_it() {
    // 1000 + 100 − 1 = 1099 tokens: 69 blocks of 16; 68 given.
    let e = simulate(
        &[req(0.0, 10, 1), req(0.0, 1000, 100)],
        &config(8, 2048, 68, 16, true),
        &linear,
    )
    .unwrap_err();
    assert!(matches!(e, SimError::NeverFits { index: 1, .. }), "{e}");
    assert!(e.to_string().contains("69 KV blocks"), "{e}");
    // Without chunked prefill a prompt over the budget never runs.
    let e = simulate(
        &[req(0.0, 3000, 1)],
        &config(8, 2048, 1000, 16, false),
        &linear,
    )
    .unwrap_err();
    assert!(matches!(e, SimError::NeverFits { index: 0, .. }), "{e}");
    // With it, it does.
    assert!(simulate(
        &[req(0.0, 3000, 1)],
        &config(8, 2048, 1000, 16, true),
        &linear
    )
    .is_ok());
}

#[test]
fn bad_limits_requests_step_times_and_streams_are_errors() {
    let ok = [req(0.0, 10, 2)];
    let e = simulate(&ok, &config(0, 2048, 100, 16, true), &linear).unwrap_err();
    assert_eq!(e, SimError::ZeroLimit { field: "max_seqs" });
    let e = simulate(&[], &config(1, 2048, 100, 16, true), &linear).unwrap_err();
    assert_eq!(e, SimError::RequestCount { count: 0 });
    for bad in [
        req(-1.0, 10, 2),
        req(f64::NAN, 10, 2),
        req(0.0, 0, 2),
        req(0.0, 10, 0),
    ] {
        let e = simulate(&[bad], &config(1, 2048, 100, 16, true), &linear).unwrap_err();
        assert!(matches!(e, SimError::BadRequest { index: 0, .. }), "{e}");
    }
    for t in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        let e = simulate(&ok, &config(1, 2048, 100, 16, true), &|_| t).unwrap_err();
        assert!(matches!(e, SimError::BadStepTime { step: 0, .. }), "{e}");
    }
    let g = |a, p, o| generate(10, a, p, o, 0);
    let poisson = |rate| Arrivals::Poisson { rate };
    let f = Dist::Fixed(1);
    for (a, p, o, field) in [
        (poisson(0.0), f, f, "rate"),
        (poisson(f64::INFINITY), f, f, "rate"),
        (poisson(-2.0), f, f, "rate"),
        (Arrivals::AllAtOnce, Dist::Fixed(0), f, "prompt"),
        (
            Arrivals::AllAtOnce,
            f,
            Dist::Uniform { lo: 5, hi: 4 },
            "output",
        ),
        (
            Arrivals::AllAtOnce,
            Dist::Normal {
                mean: 10.0,
                sd: -1.0,
            },
            f,
            "prompt",
        ),
    ] {
        match g(a, p, o) {
            Err(SimError::BadStream { field: got, .. }) => assert_eq!(got, field),
            other => panic!("{a:?} {p:?} {o:?}: {other:?}"),
        }
    }
    assert_eq!(
        generate(0, Arrivals::AllAtOnce, f, f, 0).unwrap_err(),
        SimError::RequestCount { count: 0 }
    );
}

#[test]
fn dists_print_as_the_cli_spells_them() {
    assert_eq!(Dist::Fixed(2048).to_string(), "fixed:2048");
    assert_eq!(
        Dist::Uniform { lo: 64, hi: 512 }.to_string(),
        "uniform:64..512"
    );
    assert_eq!(
        Dist::Normal {
            mean: 1024.0,
            sd: 256.5
        }
        .to_string(),
        "normal:1024,256.5"
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn every_request_finishes_with_ordered_non_negative_times(
        reqs in prop::collection::vec((0.0..2.0f64, 1u64..300, 1u64..40), 1..25),
        max_seqs in 1u64..8,
        budget in 1u64..600,
        block in 1u64..32,
        spare in 0u64..40,
        chunked in any::<bool>(),
    ) {
        let reqs: Vec<Request> = reqs.into_iter().map(|(a, p, o)| req(a, p, o)).collect();
        let need = reqs.iter().map(|r| (r.prompt + r.output - 1).div_ceil(block)).max().ok_or_else(|| TestCaseError::fail("no request"))?;
        let max_prompt = reqs.iter().map(|r| r.prompt).max().ok_or_else(|| TestCaseError::fail("no request"))?;
        let budget = if chunked { budget } else { budget.max(max_prompt) };
        let c = config(max_seqs, budget, need + spare, block, chunked);
        let sim = simulate(&reqs, &c, &|m: &Mix| 1e-3 + 1e-6 * m.tokens + 1e-9 * m.cached)
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        let mut tokens = 0;
        for (r, m) in reqs.iter().zip(&sim.requests) {
            prop_assert!(m.finish.is_finite());
            prop_assert!(m.queue >= 0.0);
            prop_assert!(m.admitted <= m.first_token);
            prop_assert!(0.0 < m.ttft && m.ttft <= m.e2e);
            prop_assert_eq!(m.tpot.is_some(), r.output > 1);
            if let Some(t) = m.tpot {
                prop_assert!(t > 0.0);
            }
            tokens += r.output;
        }
        prop_assert_eq!(sim.summary.output_tokens, tokens);
        prop_assert!(sim.summary.mean_batch >= 1.0);
        prop_assert!(sim.summary.mean_batch <= max_seqs as f64);
    }

    #[test]
    fn an_ample_engine_never_preempts(
        reqs in prop::collection::vec((0.0..1.0f64, 1u64..200, 1u64..30), 1..20),
    ) {
        let reqs: Vec<Request> = reqs.into_iter().map(|(a, p, o)| req(a, p, o)).collect();
        let sim = simulate(&reqs, &config(64, 8192, 100_000, 16, false), &linear)
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(sim.summary.preemptions, 0);
        // Nothing waits: every request is admitted at the first step boundary after it arrives,
        // at most one step (A + B·tokens, tokens < 20·200 + 20) after.
        for m in &sim.requests {
            prop_assert!(m.queue <= A + B * 4020.0 + 1e-12);
        }
    }
}

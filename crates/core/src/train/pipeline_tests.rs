//! Pipeline timelines checked by hand: the closed forms of Narayanan et al. 2021 (§2.2) and Qi
//! et al. 2024 worked out for small pipelines, and properties of every timeline.

use super::*;
use proptest::prelude::*;

fn even(p: usize, f: f64, b: f64, w: f64) -> Vec<StageTimes> {
    vec![StageTimes::new(f, b, w); p]
}

#[test]
fn one_f_one_b_p4_m8_makespan_is_m_plus_p_minus_1_times_f_plus_b() -> Result<(), PipelineError> {
    // F = 1, B = 2 (W = 0), p = 4, m = 8: makespan (m + p − 1)(F + B) = 11 · 3 = 33; each
    // stage busy m(F + B) = 24; bubble (p − 1)(F + B) = 9, a fraction 9/24 = (p − 1)/m = 3/8.
    let t = simulate(PipelineSchedule::OneFOneB, &even(4, 1.0, 2.0, 0.0), 8, 0.0)?;
    assert_eq!(t.busy, vec![24.0; 4]);
    assert_eq!(t.makespan, 33.0);
    assert_eq!(t.bubble, 9.0);
    assert_eq!(t.bubble_fraction, 3.0 / 8.0);
    // Stage i runs p − 1 − i warm-up forwards and one more before its first backward: stage 0
    // holds min(m, p) = 4, the last stage 1.
    assert_eq!(t.peak_in_flight, vec![4.0, 3.0, 2.0, 1.0]);
    // 1F1B runs B + W as one backward: the same stage with B = 1, W = 1 is the same timeline.
    let split = simulate(PipelineSchedule::OneFOneB, &even(4, 1.0, 1.0, 1.0), 8, 0.0)?;
    assert_eq!(split, t);
    Ok(())
}

#[test]
fn one_f_one_b_with_fewer_micro_batches_than_stages_holds_m() -> Result<(), PipelineError> {
    // m = 2 < p = 4: stage 0 holds min(m, p) = 2; makespan (m + p − 1)(F + B) = 5 · 3 = 15.
    let t = simulate(PipelineSchedule::OneFOneB, &even(4, 1.0, 2.0, 0.0), 2, 0.0)?;
    assert_eq!(t.peak_in_flight[0], 2.0);
    assert_eq!(t.makespan, 15.0);
    Ok(())
}

#[test]
fn interleaved_v2_divides_the_bubble_by_v() -> Result<(), PipelineError> {
    // v = 2 chunks a device, each F/2 = 0.5 and (B + W)/2 = 1: bubble (p − 1)(F + B)/v =
    // 3 · 3 / 2 = 4.5, a fraction (p − 1)/(v·m) = 3/16; makespan 24 + 4.5 = 28.5.
    let s = PipelineSchedule::Interleaved { virtual_stages: 2 };
    let t = simulate(s, &even(4, 1.0, 2.0, 0.0), 8, 0.0)?;
    assert_eq!(t.busy, vec![24.0; 4]);
    assert_eq!(t.bubble, 4.5);
    assert_eq!(t.makespan, 28.5);
    assert_eq!(t.bubble_fraction, 3.0 / 16.0);
    // Device 0 runs (p − 1)·2 + (v − 1)·p = 10 warm-up chunk forwards and one more: 11 chunks
    // of 1/2 micro-batch, 5.5 = p·(1 + (p − 1)/(p·v)) = 4 · (1 + 3/8).
    assert_eq!(t.peak_in_flight[0], 5.5);
    // v = 1 is 1F1B.
    let one = simulate(
        PipelineSchedule::Interleaved { virtual_stages: 1 },
        &even(4, 1.0, 2.0, 0.0),
        8,
        0.0,
    )?;
    assert_eq!(one.makespan, 33.0);
    Ok(())
}

#[test]
fn zb_h1_with_f_b_w_equal_leaves_p_minus_1_times_f_plus_b_minus_w() -> Result<(), PipelineError> {
    // F = B = W = 1, p = 4, m = 8: busy m(F + B + W) = 24 on every stage. Qi et al.'s ZB-H1
    // bubble (p − 1)(F + B − W) = 3 · 1 = 3 (1F1B's would be (p − 1)(F + B + W) = 9), so
    // makespan 27. DeepSeek-V3's (p − 1)(F + B − 2W) reads B as the full backward (B + W = 2
    // here): 3 · (1 + 2 − 2) = 3 as well; with B = 1 put in it would say 0, which no ZB-H1
    // timeline reaches.
    let t = simulate(
        PipelineSchedule::ZeroBubble,
        &even(4, 1.0, 1.0, 1.0),
        8,
        0.0,
    )?;
    assert_eq!(t.busy, vec![24.0; 4]);
    assert_eq!(t.bubble, 3.0);
    assert_eq!(t.makespan, 27.0);
    // Stage i defers at most i weight gradients: every stage holds p = 4, 1F1B's stage-0 peak.
    assert_eq!(t.peak_in_flight, vec![4.0; 4]);
    let one_f_one_b = simulate(PipelineSchedule::OneFOneB, &even(4, 1.0, 1.0, 1.0), 8, 0.0)?;
    assert_eq!(one_f_one_b.bubble, 9.0);
    // With W = 0 there is nothing to defer: 1F1B's (p − 1)(F + B) = 9.
    let no_w = simulate(
        PipelineSchedule::ZeroBubble,
        &even(4, 1.0, 2.0, 0.0),
        8,
        0.0,
    )?;
    assert_eq!(no_w.bubble, 9.0);
    Ok(())
}

#[test]
fn zb_h1_matches_the_closed_form_until_w_outgrows_the_gaps() -> Result<(), PipelineError> {
    // p = 4, m = 8, (p − 1)(F + B − W) by hand: F = 1, B = 1, W = 0.5: 3 · 1.5 = 4.5; F = 1,
    // B = 2, W = 1: 3 · 2 = 6; F = 2, B = 1, W = 1: 3 · 2 = 6.
    for (f, b, w, bubble) in [
        (1.0, 1.0, 0.5, 4.5),
        (1.0, 2.0, 1.0, 6.0),
        (2.0, 1.0, 1.0, 6.0),
    ] {
        let t = simulate(PipelineSchedule::ZeroBubble, &even(4, f, b, w), 8, 0.0)?;
        assert_eq!(t.bubble, bubble, "F = {f}, B = {b}, W = {w}");
    }
    // F = 1, B = 1, W = 2: the closed form says 3 · 0 = 0, but each W (2) is longer than the
    // one-unit wait it fills in the cool-down, and the last stage's p − 1 deferred W's run
    // after its last B: the timeline keeps 1 per boundary, 3.
    let t = simulate(
        PipelineSchedule::ZeroBubble,
        &even(4, 1.0, 1.0, 2.0),
        8,
        0.0,
    )?;
    assert_eq!(t.bubble, 3.0);
    Ok(())
}

#[test]
fn the_slowest_stage_dominates_uneven_stages() -> Result<(), PipelineError> {
    // Stage 2 twice as slow (F = 2, B = 4), the others F = 1, B = 2; m = 8.
    let mut stages = even(4, 1.0, 2.0, 0.0);
    stages[2] = StageTimes::new(2.0, 4.0, 0.0);
    let t = simulate(PipelineSchedule::OneFOneB, &stages, 8, 0.0)?;
    // makespan ≥ m(F_max + B_max) = 48. By hand: stage 2's first forward starts after stages 0
    // and 1's (t = 2); it runs F0 (2..4) and F1 (4..6) while stage 3 runs F0 (4..5) and B0
    // (5..7), so it waits 1 before B0 (7..11); from then it is never idle (stage 3's F + B of 3
    // hides behind each of its backwards of 4), and its last backward goes back through
    // stages 1 and 0 (B = 2 each): 2 + 48 + 1 + 4 = 55, a bubble of 55 − 48 = 7.
    assert!(t.makespan >= 48.0);
    assert_eq!(t.makespan, 55.0);
    assert_eq!(t.bubble, 7.0);
    assert_eq!(t.busy, vec![24.0, 24.0, 48.0, 24.0]);
    Ok(())
}

#[test]
fn p2p_sends_add_one_hop_a_boundary_each_way() -> Result<(), PipelineError> {
    // One micro-batch through p = 4 stages with a send of 0.5: p·F + p·B + 2(p − 1)·0.5 =
    // 4 + 8 + 3 = 15.
    let t = simulate(PipelineSchedule::OneFOneB, &even(4, 1.0, 2.0, 0.0), 1, 0.5)?;
    assert_eq!(t.makespan, 15.0);
    // With m = 8 the sends also stretch the steady state: at least the 33 + 3 of the fill.
    let t = simulate(PipelineSchedule::OneFOneB, &even(4, 1.0, 2.0, 0.0), 8, 0.5)?;
    assert!(t.makespan >= 36.0);
    Ok(())
}

#[test]
fn bad_inputs_are_refused() {
    let s = even(4, 1.0, 2.0, 0.0);
    assert_eq!(
        simulate(PipelineSchedule::OneFOneB, &[], 8, 0.0),
        Err(PipelineError::NoStages)
    );
    assert_eq!(
        simulate(PipelineSchedule::OneFOneB, &s, 0, 0.0),
        Err(PipelineError::NoMicroBatches)
    );
    assert_eq!(
        simulate(
            PipelineSchedule::Interleaved { virtual_stages: 0 },
            &s,
            8,
            0.0
        ),
        Err(PipelineError::NoVirtualStages)
    );
    let e = simulate(
        PipelineSchedule::Interleaved { virtual_stages: 2 },
        &s,
        6,
        0.0,
    );
    assert_eq!(
        e,
        Err(PipelineError::MicroBatchesNotMultipleOfStages {
            micro_batches: 6,
            stages: 4
        })
    );
    assert!(e.is_err_and(|e| e.to_string().contains("multiple")));
    assert_eq!(
        simulate(PipelineSchedule::OneFOneB, &s, 8, -1.0),
        Err(PipelineError::BadTime(-1.0))
    );
    let nan = simulate(
        PipelineSchedule::ZeroBubble,
        &even(2, f64::NAN, 1.0, 1.0),
        2,
        0.0,
    );
    assert!(matches!(nan, Err(PipelineError::BadTime(t)) if t.is_nan()));
}

fn schedule() -> impl Strategy<Value = PipelineSchedule> {
    prop_oneof![
        Just(PipelineSchedule::OneFOneB),
        (1usize..4).prop_map(|v| PipelineSchedule::Interleaved { virtual_stages: v }),
        Just(PipelineSchedule::ZeroBubble),
    ]
}

fn stage() -> impl Strategy<Value = StageTimes> {
    (0.0f64..4.0, 0.0f64..4.0, 0.0f64..4.0).prop_map(|(f, b, w)| StageTimes::new(f, b, w))
}

proptest! {
    #[test]
    fn the_makespan_covers_the_busiest_stage(
        s in schedule(),
        stages in prop::collection::vec(stage(), 1..7),
        per_stage in 1usize..5,
        p2p in 0.0f64..1.0,
    ) {
        // m a multiple of p, as the interleaved schedule needs.
        let m = per_stage * stages.len();
        let t = simulate(s, &stages, m, p2p).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let busiest = t.busy.iter().copied().fold(0.0, f64::max);
        prop_assert!(t.makespan >= busiest * (1.0 - 1e-12));
        prop_assert!(t.bubble >= 0.0 && t.bubble_fraction >= 0.0);
        for &held in &t.peak_in_flight {
            prop_assert!(held > 0.0 && held <= m as f64);
        }
    }

    #[test]
    fn one_stage_has_no_bubble(
        s in schedule(),
        one in stage(),
        m in 1usize..12,
        p2p in 0.0f64..1.0,
    ) {
        let t = simulate(s, &[one], m, p2p).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert!(t.bubble <= 1e-9 * t.makespan.max(1.0), "{t:?}");
    }
}

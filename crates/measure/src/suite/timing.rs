//! How a kernel of the suite is timed: the method ([`kernel_method`]) and the repetitions
//! ([`time_kernel`]).

use crate::method::Method;
use crate::MeasureError;
use roofline_core::measured::Stat;
use std::time::Instant;

/// The method of the kernel suite: repetitions of ≥ 20 ms (5 ms with `quick`), 5 to 30 of them
/// (3 to 10), until the last 5 (3) agree within 5 % (8 %), at most 1 s (0.15 s) per kernel past
/// the minimum; the median of that window.
pub fn kernel_method(quick: bool) -> Method {
    if quick {
        Method {
            target_rep: 0.005,
            min_reps: 3,
            max_reps: 10,
            window: 3,
            tolerance: 0.08,
            max_task_secs: 0.15,
        }
    } else {
        Method {
            target_rep: 0.02,
            min_reps: 5,
            max_reps: 30,
            window: 5,
            tolerance: 0.05,
            max_task_secs: 1.0,
        }
    }
}

/// Times `run` (one execution of a kernel): a warm-up execution, a calibration execution, then
/// repetitions of `units` back-to-back executions (enough for the method's target time) until
/// [`Method::done`]. Returns seconds per execution: the median, min and max over the window.
///
/// # Errors
/// The first error `run` returns.
pub fn time_kernel(
    method: &Method,
    run: &mut dyn FnMut() -> Result<(), MeasureError>,
) -> Result<Stat, MeasureError> {
    run()?;
    let started = Instant::now();
    let t0 = Instant::now();
    run()?;
    let units = method.units_for(1, t0.elapsed().as_secs_f64());
    let mut rates = Vec::new();
    loop {
        let t = Instant::now();
        for _ in 0..units {
            run()?;
        }
        let s = t.elapsed().as_secs_f64();
        if s > 0.0 {
            rates.push(units as f64 / s);
        }
        if let Some(r) = method.done(&rates, started.elapsed().as_secs_f64()) {
            return Ok(r.reciprocal());
        }
    }
}

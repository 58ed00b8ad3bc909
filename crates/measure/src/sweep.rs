//! The working-set sweep's pure logic: the sizes, the plateaus in the bandwidth curve, and the
//! memory level each size belongs to. No clock here; tested on synthetic sweeps.
//!
//! A bandwidth curve over working-set sizes is a staircase: flat while the working set fits a
//! cache level, falling once it spills into the next. The OS gives each level's size; with `T`
//! threads, a private cache (L1, L2) holds `T ×` its size and a shared one its size per instance
//! (see [`crate::host::cache_levels`]). A level's figure is the median of the points well inside
//! it: working sets from twice the level below to half the level's capacity (main memory: from 4
//! times the last cache), where neither the level below nor the capacity edge (associativity,
//! other data, the page tables) distorts it. The plateaus found in the curve itself confirm the
//! placement and, without OS cache sizes, replace it.

use crate::host::CacheLevel;
use roofline_core::device::MemoryKind;
use roofline_core::measured::{BandwidthKernel, BandwidthPoint, MeasuredLevel};

/// Sizes from `min` to `max` bytes (both included when on the grid), `steps_per_doubling`
/// geometric steps per factor 2 (2 gives √2 steps), rounded to whole bytes.
pub fn sweep_sizes(min: f64, max: f64, steps_per_doubling: u32) -> Vec<f64> {
    let mut out = Vec::new();
    if !(min > 0.0 && max >= min) || steps_per_doubling == 0 {
        return out;
    }
    let step = 2f64.powf(1.0 / f64::from(steps_per_doubling));
    let mut k = 0i32;
    loop {
        let s = (min * step.powi(k)).round();
        if s > max * (1.0 + 1e-9) {
            break;
        }
        out.push(s);
        k += 1;
    }
    out
}

/// A run of consecutive sweep points whose bandwidths agree.
#[derive(Debug, Clone, PartialEq)]
pub struct Plateau {
    /// Smallest working set in it, bytes.
    pub first: f64,
    /// Largest working set in it, bytes.
    pub last: f64,
    /// Median bandwidth of its points, B/s.
    pub value: f64,
    /// Points in it.
    pub points: usize,
}

fn median(v: &[f64]) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let n = s.len();
    Some(if n % 2 == 1 {
        s[n / 2]
    } else {
        (s[n / 2 - 1] + s[n / 2]) / 2.0
    })
}

/// Plateaus of a curve of `(working set, bandwidth)` points (any order): maximal runs of
/// consecutive sizes each within `tolerance` (relative) of the run's median so far, keeping runs
/// of at least two points. Points on a slope between two levels form runs of one and are
/// dropped.
pub fn find_plateaus(points: &[(f64, f64)], tolerance: f64) -> Vec<Plateau> {
    let mut pts: Vec<(f64, f64)> = points
        .iter()
        .copied()
        .filter(|(s, b)| s.is_finite() && b.is_finite() && *b > 0.0)
        .collect();
    pts.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut runs: Vec<Vec<(f64, f64)>> = Vec::new();
    for p in pts {
        let joins = runs.last().and_then(|r| {
            let m = median(&r.iter().map(|q| q.1).collect::<Vec<_>>())?;
            Some((p.1 / m - 1.0).abs() <= tolerance)
        });
        match (joins, runs.last_mut()) {
            (Some(true), Some(r)) => r.push(p),
            _ => runs.push(vec![p]),
        }
    }
    runs.into_iter()
        .filter(|r| r.len() >= 2)
        .filter_map(|r| {
            Some(Plateau {
                first: r.first()?.0,
                last: r.last()?.0,
                value: median(&r.iter().map(|q| q.1).collect::<Vec<_>>())?,
                points: r.len(),
            })
        })
        .collect()
}

/// The memory levels a sweep shows, and notes where the sweep and the OS disagree.
#[derive(Debug, Clone, PartialEq)]
pub struct Placement {
    /// Levels, innermost first, main memory last (theoretical figures not filled in).
    pub levels: Vec<MeasuredLevel>,
    /// Caveats, one line each.
    pub notes: Vec<String>,
}

fn kind_of(level: u8) -> Option<(MemoryKind, &'static str)> {
    match level {
        1 => Some((MemoryKind::L1, "L1d")),
        2 => Some((MemoryKind::L2, "L2")),
        3 => Some((MemoryKind::L3, "L3")),
        _ => None,
    }
}

fn human(bytes: f64) -> String {
    const KI: f64 = 1024.0;
    if bytes >= KI * KI * KI {
        format!("{:.3} GiB", bytes / (KI * KI * KI))
    } else if bytes >= KI * KI {
        format!("{:.3} MiB", bytes / (KI * KI))
    } else {
        format!("{:.1} KiB", bytes / KI)
    }
    .replace(".000 ", " ")
    .replace(".0 KiB", " KiB")
}

/// Median per kernel of the sweep points with `lo < working set ≤ hi`.
fn level_from(
    sweep: &[BandwidthPoint],
    kind: MemoryKind,
    name: &str,
    capacity: Option<f64>,
    in_window: &dyn Fn(f64) -> bool,
) -> Option<MeasuredLevel> {
    let of = |k: BandwidthKernel| -> Vec<&BandwidthPoint> {
        sweep
            .iter()
            .filter(|p| p.kernel == k && in_window(p.working_set))
            .collect()
    };
    let read = of(BandwidthKernel::Read);
    if read.is_empty() {
        return None;
    }
    let med =
        |k: BandwidthKernel| median(&of(k).iter().map(|p| p.bandwidth.median).collect::<Vec<_>>());
    let lo = read
        .iter()
        .map(|p| p.working_set)
        .fold(f64::INFINITY, f64::min);
    let hi = read.iter().map(|p| p.working_set).fold(0.0, f64::max);
    Some(MeasuredLevel {
        kind,
        name: name.to_string(),
        capacity,
        effective_capacity: None,
        window: (lo, hi),
        points: read.len() as u32,
        read: med(BandwidthKernel::Read),
        copy: med(BandwidthKernel::Copy),
        triad: med(BandwidthKernel::Triad),
        theoretical: None,
        theoretical_source: None,
    })
}

/// Places the sweep's points in memory levels.
///
/// With the OS cache sizes (`caches`, capacities summed over the threads' instances, sorted by
/// level): level `l` takes the points with `2 · C(l−1) < working set ≤ C(l) / 2` (from 0 for
/// L1), or, if that window holds no point, `C(l−1) < working set ≤ C(l)`; main memory takes the
/// points at or beyond `4 · C(last)` (else beyond `2 ·`, else beyond `C(last)`), narrowed to the
/// curve's last plateau when that plateau starts beyond `C(last)`; if the sweep never left the
/// caches, the largest point stands in for main memory, with a note. Without cache sizes, the
/// plateaus are the levels: the last one main memory, the ones before L1, L2, L3.
///
/// `tolerance` is the plateau tolerance ([`find_plateaus`], on the read kernel); `mem_total`
/// the main memory's capacity, bytes.
pub fn place_levels(
    sweep: &[BandwidthPoint],
    caches: &[CacheLevel],
    mem_total: Option<f64>,
    tolerance: f64,
) -> Placement {
    let mut notes = Vec::new();
    let mut levels = Vec::new();
    let read_pts: Vec<(f64, f64)> = sweep
        .iter()
        .filter(|p| p.kernel == BandwidthKernel::Read)
        .map(|p| (p.working_set, p.bandwidth.median))
        .collect();
    let plateaus = find_plateaus(&read_pts, tolerance);
    let largest = read_pts.iter().map(|p| p.0).fold(0.0, f64::max);

    let caches: Vec<&CacheLevel> = caches.iter().filter(|c| c.capacity > 0.0).collect();
    if caches.is_empty() {
        notes.push(
            "the OS reports no cache sizes: levels placed from the sweep's plateaus alone".into(),
        );
        let n = plateaus.len();
        for (i, p) in plateaus.iter().enumerate() {
            let (kind, name, capacity) = if i + 1 == n && n > 1 {
                (MemoryKind::Main, "DRAM", mem_total)
            } else if let Some((k, nm)) = kind_of(i as u8 + 1) {
                (k, nm, None)
            } else {
                notes.push(format!(
                    "plateau {} from {} to {} left out: more plateaus than L1, L2, L3 and DRAM",
                    i + 1,
                    human(p.first),
                    human(p.last)
                ));
                continue;
            };
            let (lo, hi) = (p.first, p.last);
            if let Some(l) = level_from(sweep, kind, name, capacity, &|s| s >= lo && s <= hi) {
                levels.push(l);
            }
        }
        if !levels.iter().any(|l| l.kind == MemoryKind::Main) {
            main_fallback(sweep, largest, mem_total, &mut levels, &mut notes);
        }
        effective_capacities(sweep, &mut levels, &mut notes);
        return Placement { levels, notes };
    }

    let mut prev = 0.0;
    for c in &caches {
        let Some((kind, name)) = kind_of(c.level) else {
            notes.push(format!(
                "cache level {} ({}) is not placed: only L1, L2 and L3 are",
                c.level,
                human(c.capacity)
            ));
            continue;
        };
        let cap = c.capacity;
        let strict = |s: f64| s > 2.0 * prev && s <= cap / 2.0;
        let loose = |s: f64| s > prev && s <= cap;
        let level = level_from(sweep, kind, name, Some(cap), &strict).or_else(|| {
            let l = level_from(sweep, kind, name, Some(cap), &loose);
            if l.is_some() {
                notes.push(format!(
                    "{name}: no sweep point between 2 × the level below and half of {}; points up to the full capacity used",
                    human(cap)
                ));
            }
            l
        });
        match level {
            Some(l) => {
                if let Some(p) = plateaus
                    .iter()
                    .find(|p| p.first <= l.window.1 && p.last >= l.window.0)
                {
                    if let Some(r) = l.read {
                        if (r / p.value - 1.0).abs() > 2.0 * tolerance {
                            notes.push(format!(
                                "{name}: the window's median differs from the sweep's plateau ({:.1} vs {:.1} GB/s)",
                                r / 1e9,
                                p.value / 1e9
                            ));
                        }
                    }
                } else {
                    notes.push(format!(
                        "{name}: no flat plateau in its window ({} to {}): the figure is on a slope",
                        human(l.window.0),
                        human(l.window.1)
                    ));
                }
                levels.push(l);
            }
            None => notes.push(format!("{name} ({}): no sweep point inside it", human(cap))),
        }
        prev = cap;
    }

    // Main memory beyond the last cache.
    let last_cap = prev;
    let mut main = None;
    for factor in [4.0, 2.0, 1.0] {
        let from = factor * last_cap;
        if read_pts.iter().any(|p| p.0 >= from && p.0 > last_cap) {
            // Narrow to the curve's last plateau when it lies beyond the last cache.
            let narrowed = plateaus
                .last()
                .filter(|p| p.first > last_cap && p.last >= from)
                .map(|p| p.first.max(from));
            if let Some(start) = narrowed {
                if start > from * (1.0 + 1e-9) {
                    notes.push(format!(
                        "DRAM: the sweep's last plateau starts at {}, beyond {} × the last cache ({}); DRAM figure taken from it",
                        human(start),
                        factor,
                        human(last_cap)
                    ));
                }
            }
            let lo = narrowed.unwrap_or(from);
            main = level_from(sweep, MemoryKind::Main, "DRAM", mem_total, &|s| {
                s >= lo && s > last_cap
            });
            if factor < 4.0 {
                notes.push(format!(
                    "DRAM: no sweep point at 4 × the last cache ({}); points from {} × used",
                    human(4.0 * last_cap),
                    factor
                ));
            }
            break;
        }
    }
    match main {
        Some(m) => levels.push(m),
        None => main_fallback(sweep, largest, mem_total, &mut levels, &mut notes),
    }
    effective_capacities(sweep, &mut levels, &mut notes);
    Placement { levels, notes }
}

/// The working set, bytes, where the read curve first falls below `threshold` at or beyond
/// `from`: interpolated in log size between the last point above and the first below; `None`
/// when it never falls below.
pub fn crossing(read: &[(f64, f64)], from: f64, threshold: f64) -> Option<f64> {
    let mut pts: Vec<(f64, f64)> = read.iter().copied().filter(|p| p.0 >= from).collect();
    pts.sort_by(|a, b| a.0.total_cmp(&b.0));
    let i = pts.iter().position(|p| p.1 < threshold)?;
    let (s1, b1) = pts[i];
    if i == 0 {
        return Some(s1);
    }
    let (s0, b0) = pts[i - 1];
    // Bandwidth is taken as linear in log size between the two points.
    let f = ((b0 - threshold) / (b0 - b1)).clamp(0.0, 1.0);
    Some(s0 * (s1 / s0).powf(f))
}

/// Fills each cache level's [`MeasuredLevel::effective_capacity`]: where the read curve falls
/// to the geometric mean of the level's figure and the next level's ([`crossing`]). Where that
/// is below three quarters of the OS's size, a note says so, and the level's figures are taken
/// again from the points below half the effective capacity (the OS's window reached into the
/// slope).
pub fn effective_capacities(
    sweep: &[BandwidthPoint],
    levels: &mut [MeasuredLevel],
    notes: &mut Vec<String>,
) {
    let read: Vec<(f64, f64)> = sweep
        .iter()
        .filter(|p| p.kernel == BandwidthKernel::Read)
        .map(|p| (p.working_set, p.bandwidth.median))
        .collect();
    for i in 0..levels.len() {
        if levels[i].kind == MemoryKind::Main {
            continue;
        }
        let (Some(here), Some(next)) = (levels[i].read, levels.get(i + 1).and_then(|l| l.read))
        else {
            continue;
        };
        if next >= here {
            continue;
        }
        let Some(mut eff) = crossing(&read, levels[i].window.0, (here * next).sqrt()) else {
            continue;
        };
        levels[i].effective_capacity = Some(eff);
        let Some(cap) = levels[i].capacity else {
            continue;
        };
        if eff >= 0.75 * cap {
            continue;
        }
        // The OS's window reached into the slope: take the figure again from the points below
        // half the effective capacity, and the effective capacity again from that figure,
        // until they settle (a few rounds).
        let (lo, kind) = (levels[i].window.0, levels[i].kind);
        let name = levels[i].name.clone();
        for _ in 0..8 {
            if levels[i].window.1 <= eff / 2.0 {
                break;
            }
            let Some(l) = level_from(sweep, kind, &name, Some(cap), &|s| {
                s >= lo && s <= eff / 2.0
            }) else {
                break;
            };
            let Some(r) = l.read else { break };
            levels[i] = l;
            match crossing(&read, lo, (r * next).sqrt()) {
                Some(e) => eff = e,
                None => break,
            }
            levels[i].effective_capacity = Some(eff);
        }
        notes.push(format!(
            "{}: the bandwidth falls off at {}, not at the {} the OS reports: a share of a cache shared with other cores or guests; predictions take {}",
            levels[i].name,
            human(eff),
            human(cap),
            human(eff)
        ));
    }
}

fn main_fallback(
    sweep: &[BandwidthPoint],
    largest: f64,
    mem_total: Option<f64>,
    levels: &mut Vec<MeasuredLevel>,
    notes: &mut Vec<String>,
) {
    if largest <= 0.0 {
        notes.push("no sweep point: no memory level measured".into());
        return;
    }
    if let Some(l) = level_from(sweep, MemoryKind::Main, "DRAM", mem_total, &|s| {
        s >= largest
    }) {
        notes.push(format!(
            "DRAM: the sweep never left the caches; its largest working set ({}) stands in, an upper bound",
            human(largest)
        ));
        levels.push(l);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use roofline_core::measured::Stat;

    fn point(kernel: BandwidthKernel, ws: f64, bw: f64) -> BandwidthPoint {
        BandwidthPoint {
            kernel,
            working_set: ws,
            bandwidth: Stat {
                median: bw,
                min: bw,
                max: bw,
                samples: 5,
                stable: true,
            },
        }
    }

    const KI: f64 = 1024.0;
    const MI: f64 = 1024.0 * 1024.0;

    /// A synthetic machine: 2 threads; plateaus L1 (≤ 32 KiB) at 400 GB/s, L2 (128 to 512 KiB)
    /// at 200, L3 (2 to 4 MiB) at 100, DRAM (≥ 32 MiB) at 40; between plateaus the curve falls
    /// geometrically in log size, as a real one slopes. Copy and triad at half the read figure.
    fn staircase(sizes: &[f64]) -> Vec<BandwidthPoint> {
        let steps: [(f64, f64); 6] = [
            (32.0 * KI, 400e9),
            (128.0 * KI, 200e9),
            (512.0 * KI, 200e9),
            (2.0 * MI, 100e9),
            (4.0 * MI, 100e9),
            (32.0 * MI, 40e9),
        ];
        let bw = |s: f64| {
            if s <= steps[0].0 {
                return steps[0].1;
            }
            for w in steps.windows(2) {
                let ((a, va), (b, vb)) = (w[0], w[1]);
                if s <= b {
                    let f = (s / a).ln() / (b / a).ln();
                    return va * (vb / va).powf(f);
                }
            }
            40e9
        };
        let mut out = Vec::new();
        for &s in sizes {
            out.push(point(BandwidthKernel::Read, s, bw(s)));
            out.push(point(BandwidthKernel::Copy, s, bw(s) / 2.0));
            out.push(point(BandwidthKernel::Triad, s, bw(s) / 2.0));
        }
        out
    }

    fn caches() -> Vec<CacheLevel> {
        vec![
            CacheLevel {
                level: 1,
                instance_size: 32768,
                instances: 2,
                capacity: 64.0 * KI,
            },
            CacheLevel {
                level: 2,
                instance_size: 524288,
                instances: 2,
                capacity: MI,
            },
            CacheLevel {
                level: 3,
                instance_size: 8 * 1048576,
                instances: 1,
                capacity: 8.0 * MI,
            },
        ]
    }

    #[test]
    fn effective_capacity_where_the_curve_falls_half_way() -> Result<(), Box<dyn std::error::Error>>
    {
        // Two points around the fall from 100 to 25 GB/s: threshold √(100 · 25) = 50 GB/s;
        // 60 GB/s at 16 MiB and 40 at 32 MiB: half-way in bandwidth, so √(16 · 32) MiB.
        let read = [
            (8.0 * MI, 100e9),
            (16.0 * MI, 60e9),
            (32.0 * MI, 40e9),
            (64.0 * MI, 25e9),
        ];
        let c = crossing(&read, 4.0 * MI, 50e9).ok_or("no crossing")?;
        assert!(
            (c / MI - (16.0f64 * 32.0).sqrt()).abs() < 1e-9,
            "{}",
            c / MI
        );
        assert_eq!(crossing(&read, 4.0 * MI, 10e9), None);

        // A guest that gets a share of a 100 MiB L3: the OS's window (2 to 50 MiB) would
        // straddle the fall; the level keeps the points below half the effective capacity.
        let mut c3 = caches();
        c3[2].capacity = 100.0 * MI;
        let sizes = sweep_sizes(16.0 * KI, 1024.0 * MI, 2);
        // The staircase's L3 plateau ends at 4 MiB and falls to DRAM by 32 MiB; the "OS" says
        // 100 MiB.
        let sweep = staircase(&sizes);
        let pl = place_levels(&sweep, &c3, Some(16e9), PLATEAU_TOLERANCE_TEST);
        let l3 = pl
            .levels
            .iter()
            .find(|l| l.kind == MemoryKind::L3)
            .ok_or("no L3")?;
        let eff = l3.effective_capacity.ok_or("no effective capacity")?;
        // The staircase falls from 100 (at 4 MiB) to 40 GB/s (at 32 MiB) geometrically in log
        // size: √(100 · 40) = 63.2 GB/s is reached half-way in log size, at √(4 · 32) = 11.3 MiB.
        assert!((eff / MI - 11.31).abs() < 1.0, "{}", eff / MI);
        assert!(l3.window.1 <= eff / 2.0, "{:?}", l3.window);
        assert!((l3.read.ok_or("no read")? / 1e9 - 100.0).abs() < 5.0);
        assert!(
            pl.notes.iter().any(|n| n.contains("shared")),
            "{:?}",
            pl.notes
        );
        Ok(())
    }

    const PLATEAU_TOLERANCE_TEST: f64 = 0.12;

    #[test]
    fn sqrt2_steps_from_16_kib_to_1_gib() -> Result<(), Box<dyn std::error::Error>> {
        // 16 KiB = 2^14 to 1 GiB = 2^30: 16 doublings × 2 steps + 1 = 33 sizes.
        let s = sweep_sizes(16.0 * KI, 1024.0 * MI, 2);
        assert_eq!(s.len(), 33);
        assert_eq!(s[0], 16384.0);
        assert_eq!(s[2], 32768.0);
        // 16384 · √2 = 23170.475… → 23170.
        assert_eq!(s[1], 23170.0);
        assert_eq!(*s.last().ok_or("expected a value, got None")?, 1073741824.0);
        assert!(sweep_sizes(2.0, 1.0, 2).is_empty());
        Ok(())
    }

    #[test]
    fn plateaus_of_a_staircase() {
        let pts: Vec<(f64, f64)> = [
            (16.0, 400.0),
            (32.0, 404.0),
            (64.0, 396.0),
            (128.0, 300.0), // a slope point, alone
            (256.0, 200.0),
            (512.0, 198.0),
            (1024.0, 40.0),
            (2048.0, 41.0),
            (4096.0, 39.0),
        ]
        .to_vec();
        let p = find_plateaus(&pts, 0.1);
        assert_eq!(p.len(), 3);
        assert_eq!((p[0].first, p[0].last, p[0].points), (16.0, 64.0, 3));
        assert_eq!(p[0].value, 400.0);
        assert_eq!((p[1].first, p[1].last), (256.0, 512.0));
        assert_eq!(p[1].value, 199.0);
        assert_eq!(p[2].value, 40.0);
    }

    #[test]
    fn levels_from_os_cache_sizes() -> Result<(), Box<dyn std::error::Error>> {
        let sweep = staircase(&sweep_sizes(16.0 * KI, 256.0 * MI, 2));
        let pl = place_levels(&sweep, &caches(), Some(24e9), 0.1);
        let kinds: Vec<MemoryKind> = pl.levels.iter().map(|l| l.kind).collect();
        assert_eq!(
            kinds,
            [
                MemoryKind::L1,
                MemoryKind::L2,
                MemoryKind::L3,
                MemoryKind::Main
            ]
        );
        let read: Vec<f64> = pl
            .levels
            .iter()
            .map(|l| l.read.ok_or("no read bandwidth"))
            .collect::<Result<_, _>>()?;
        assert_eq!(read, [400e9, 200e9, 100e9, 40e9]);
        // L1 window: up to 64 KiB / 2 = 32 KiB: 16, 22.6, 32 KiB.
        assert_eq!(pl.levels[0].window, (16384.0, 32768.0));
        assert_eq!(pl.levels[0].points, 3);
        // L2: above 2 × 64 KiB = 128 KiB (the next size is 16 KiB · 2^3.5), up to 512 KiB.
        let above_128k = (16384.0 * 2f64.powf(3.5)).round();
        assert_eq!(pl.levels[1].window, (above_128k, 512.0 * KI));
        // DRAM from 4 × 8 MiB = 32 MiB.
        assert_eq!(pl.levels[3].window.0, 32.0 * MI);
        assert_eq!(pl.levels[3].capacity, Some(24e9));
        assert_eq!(pl.levels[3].copy, Some(20e9));
        assert_eq!(pl.levels[3].triad, Some(20e9));
        assert!(pl.notes.is_empty(), "{:?}", pl.notes);
        Ok(())
    }

    #[test]
    fn dram_narrowed_to_the_last_plateau_when_the_os_understates_l3(
    ) -> Result<(), Box<dyn std::error::Error>> {
        // The OS says 8 MiB of L3, but the curve stays at 100 GB/s up to 48 MiB (the VM hides a
        // bigger cache): DRAM must come from the last plateau, not from 32 MiB on.
        let sizes = sweep_sizes(16.0 * KI, 512.0 * MI, 2);
        let sweep: Vec<BandwidthPoint> = staircase(&sizes)
            .into_iter()
            .map(|mut p| {
                if p.working_set > 6.0 * MI && p.working_set <= 48.0 * MI {
                    let f = if p.kernel == BandwidthKernel::Read {
                        1.0
                    } else {
                        0.5
                    };
                    p.bandwidth.median = 100e9 * f;
                }
                p
            })
            .collect();
        let pl = place_levels(&sweep, &caches(), None, 0.1);
        let main = pl.levels.last().ok_or("expected a value, got None")?;
        assert_eq!(main.kind, MemoryKind::Main);
        assert_eq!(main.read, Some(40e9));
        assert!(main.window.0 > 48.0 * MI);
        assert!(
            pl.notes.iter().any(|n| n.contains("last plateau")),
            "{:?}",
            pl.notes
        );
        Ok(())
    }

    #[test]
    fn levels_from_plateaus_without_os_sizes() -> Result<(), Box<dyn std::error::Error>> {
        let sweep = staircase(&sweep_sizes(16.0 * KI, 256.0 * MI, 2));
        let pl = place_levels(&sweep, &[], None, 0.1);
        let got: Vec<(MemoryKind, f64)> = pl
            .levels
            .iter()
            .map(|l| l.read.map(|r| (l.kind, r)).ok_or("no read bandwidth"))
            .collect::<Result<_, _>>()?;
        assert_eq!(
            got,
            [
                (MemoryKind::L1, 400e9),
                (MemoryKind::L2, 200e9),
                (MemoryKind::L3, 100e9),
                (MemoryKind::Main, 40e9)
            ]
        );
        assert!(pl.notes[0].contains("no cache sizes"));
        Ok(())
    }

    #[test]
    fn a_sweep_that_never_leaves_the_caches_says_so() -> Result<(), Box<dyn std::error::Error>> {
        let sweep = staircase(&sweep_sizes(16.0 * KI, 4.0 * MI, 2));
        let pl = place_levels(&sweep, &caches(), None, 0.1);
        let main = pl.levels.last().ok_or("expected a value, got None")?;
        assert_eq!(main.kind, MemoryKind::Main);
        assert_eq!(main.window, (4.0 * MI, 4.0 * MI));
        assert!(
            pl.notes.iter().any(|n| n.contains("upper bound")),
            "{:?}",
            pl.notes
        );
        Ok(())
    }
}

use super::cpu::{AttentionShape, ChainShape};
use super::*;
use roofline_core::ops::Compute;

#[test]
fn costs_come_from_the_cost_model() -> Result<(), Box<dyn std::error::Error>> {
    // gemm 1×4096×4096 fp32: 2·4096² = 33,554,432 FLOP; (4096 + 4096² + 4096)·4 bytes.
    let l = Spec::Gemm {
        m: 1,
        n: 4096,
        k: 4096,
        note: "",
    }
    .launches()?;
    assert_eq!(l[0].cost.flops.get(), 33_554_432.0);
    assert_eq!(
        l[0].cost.bytes().get(),
        (4096.0 + 16_777_216.0 + 4096.0) * 4.0
    );
    assert_eq!(l[0].compute, Compute::Matrix(Precision::Fp32));
    // add over 2^18: 2^18 FLOP, 3 × 2^18 × 4 = 3 MiB moved and touched.
    let l = Spec::Add {
        n: 1 << 18,
        note: "",
    }
    .launches()?;
    assert_eq!(l[0].cost.flops.get(), 262_144.0);
    assert_eq!(l[0].working_set.get(), 3.0 * 1048576.0);
    // silu·mul: 3 + 1 = 4 FLOP per element.
    let l = Spec::SiluMul { n: 10 }.launches()?;
    assert_eq!(l[0].cost.flops.get(), 40.0);
    Ok(())
}

#[test]
fn materialised_attention_is_the_decoders_three_kernels() -> Result<(), Box<dyn std::error::Error>>
{
    // 2 heads × 8 tokens × 4: QKᵀ 2·2·8·8·4 = 1024 FLOP; softmax 2·8·8·7 = 896; S·V 1024.
    let a = AttentionShape {
        heads: 2,
        seq: 8,
        head_dim: 4,
    };
    let l = Spec::AttentionMaterialised(a).launches()?;
    let names: Vec<&str> = l.iter().map(|l| l.name.as_str()).collect();
    assert_eq!(names, ["qk_matmul", "softmax", "sv_matmul"]);
    let f: Vec<f64> = l.iter().map(|l| l.cost.flops.get()).collect();
    assert_eq!(f, [1024.0, 896.0, 1024.0]);
    // Scores 2·8·8·4 = 512 bytes written by QKᵀ.
    assert_eq!(l[0].cost.bytes_written.get(), 512.0);
    // Flash: causal pairs 8·9/2 = 36 per head; 2·36·(4·4 + 7) = 1656 FLOP; writes O only.
    let l = Spec::AttentionFlash(a).launches()?;
    assert_eq!(l[0].cost.flops.get(), 1656.0);
    assert_eq!(l[0].cost.bytes_written.get(), 2.0 * 8.0 * 4.0 * 4.0);
    assert_eq!(l[0].working_set.get(), 4.0 * 64.0 * 4.0);
    Ok(())
}

#[test]
fn each_launch_declares_the_exponentials_its_kernel_evaluates(
) -> Result<(), Box<dyn std::error::Error>> {
    // 2 heads × 128 causal tokens: 128·129/2 = 8256 visible scores per head, 16,512 in all,
    // each exponentiated once (masked ones are written as 0).
    let a = AttentionShape {
        heads: 2,
        seq: 128,
        head_dim: 4,
    };
    let l = Spec::AttentionMaterialised(a).launches()?;
    let e: Vec<f64> = l.iter().map(|l| l.exps).collect();
    assert_eq!(e, [0.0, 16_512.0, 0.0]);
    // Flash, 64-row blocks: the same 16,512, plus one correction per query row per key
    // block it visits: block 0's 64 rows visit 1 block, block 1's visit 2: 64 + 128 = 192
    // per head, 384 for two: 16,896.
    let l = Spec::AttentionFlash(a).launches()?;
    assert_eq!(l[0].exps, 16_896.0);
    // Softmax rows × cols; SiLU·mul one per element; add, RMSNorm and GEMMs none.
    let sm = Spec::Softmax { rows: 3, cols: 5 }.launches()?;
    assert_eq!(sm[0].exps, 15.0);
    assert_eq!(Spec::SiluMul { n: 7 }.launches()?[0].exps, 7.0);
    let g = Spec::Gemm {
        m: 2,
        n: 3,
        k: 4,
        note: "",
    };
    assert_eq!(g.launches()?[0].exps, 0.0);
    // The chain: only the SiLU launch (or the fused one) exponentiates, T·f = 16·12 = 192.
    let c = ChainShape {
        tokens: 16,
        hidden: 8,
        intermediate: 12,
    };
    let sep = Spec::ChainSeparate(c).launches()?;
    let e: Vec<f64> = sep.iter().map(|l| l.exps).collect();
    assert_eq!(e, [0.0, 0.0, 192.0, 0.0]);
    assert_eq!(Spec::ChainFused(c).launches()?[0].exps, 192.0);
    Ok(())
}

#[test]
fn the_chain_is_four_launches_or_one_with_the_fused_bytes() -> Result<(), Box<dyn std::error::Error>>
{
    // T 16, d 8, f 12, fp32. Separate: rmsnorm, linear1, silu, linear2. Fused: reads x
    // (16·8), the norm weight (8), W1 and W2 (2·8·12); writes out (16·8); × 4 bytes.
    let c = ChainShape {
        tokens: 16,
        hidden: 8,
        intermediate: 12,
    };
    let sep = Spec::ChainSeparate(c).launches()?;
    let names: Vec<&str> = sep.iter().map(|l| l.name.as_str()).collect();
    assert_eq!(names, ["rmsnorm", "linear1", "silu", "linear2"]);
    let fused = Spec::ChainFused(c).launches()?;
    assert_eq!(fused.len(), 1);
    assert_eq!(fused[0].name, "rmsnorm+linear1+silu+linear2");
    assert_eq!(
        fused[0].cost.bytes_read.get(),
        (16.0 * 8.0 + 8.0 + 2.0 * 8.0 * 12.0) * 4.0
    );
    assert_eq!(fused[0].cost.bytes_written.get(), 16.0 * 8.0 * 4.0);
    // The same FLOPs either way: 4·16·8·12 (two GEMMs) + 4·16·8 (norm) + 3·16·12 (silu).
    let total: f64 = sep.iter().map(|l| l.cost.flops.get()).sum();
    assert_eq!(total, 6144.0 + 512.0 + 576.0);
    assert_eq!(fused[0].cost.flops.get(), total);
    Ok(())
}

#[test]
fn every_entry_builds_and_runs_at_a_small_size() -> Result<(), Box<dyn std::error::Error>> {
    let a = AttentionShape {
        heads: 2,
        seq: 40,
        head_dim: 8,
    };
    let c = ChainShape {
        tokens: 70,
        hidden: 16,
        intermediate: 24,
    };
    let specs = [
        Spec::Gemm {
            m: 1,
            n: 300,
            k: 20,
            note: "",
        },
        Spec::Gemm {
            m: 9,
            n: 7,
            k: 5,
            note: "",
        },
        Spec::Add { n: 100, note: "" },
        Spec::SiluMul { n: 100 },
        Spec::RmsNorm {
            rows: 3,
            cols: 50,
            note: "",
        },
        Spec::Softmax { rows: 3, cols: 50 },
        Spec::AttentionMaterialised(a),
        Spec::AttentionFlash(a),
        Spec::ChainSeparate(c),
        Spec::ChainFused(c),
    ];
    let method = kernel_method(true);
    for s in specs {
        let mut b = build_cpu(&s)?;
        let t = time_kernel(&method, &mut *b.run)?;
        assert!(
            t.median > 0.0 && t.min <= t.median && t.median <= t.max,
            "{s:?}"
        );
        assert!(!s.note().is_empty());
    }
    Ok(())
}

#[test]
fn suites_have_unique_names_and_their_pairs_exist() -> Result<(), Box<dyn std::error::Error>> {
    for quick in [false, true] {
        let s = cpu_suite(quick);
        let names: Vec<String> = s.specs.iter().map(Spec::name).collect();
        for (i, n) in names.iter().enumerate() {
            assert!(!names[i + 1..].contains(n), "{n} twice");
        }
        for (_, a, b) in &s.pairs {
            assert!(names.contains(a) && names.contains(b));
        }
    }
    assert_eq!(cpu_suite(false).specs.len(), 17);
    // `only` keeps what matches and says what there is when nothing does.
    let e = run_cpu(
        &SuiteOptions {
            quick: true,
            only: vec!["nothing".into()],
            device: 0,
        },
        &mut crate::NoProgress,
    )
    .unwrap_err();
    assert_eq!(e.kind, crate::ErrorKind::Usage);
    assert!(e
        .hint
        .ok_or("expected a value, got None")?
        .contains("gemm 1×4096×4096"));
    Ok(())
}

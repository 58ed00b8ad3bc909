//! The CPU and GPU suites ([`cpu_suite`], [`gpu_suite`]), their fused/separate pairs, and the
//! `--only` selection.

use super::cpu::{AttentionShape, ChainShape};
use super::spec::Spec;
use crate::MeasureError;

/// A suite: its entries and the fused/separate pairs whose speedups are compared.
#[derive(Debug, Clone, PartialEq)]
pub struct Suite {
    /// Entries, in the order they run.
    pub specs: Vec<Spec>,
    /// (what was fused, the separate entry's name, the fused entry's name).
    pub pairs: Vec<(String, String, String)>,
}

/// Llama-2-7B's hidden size (`../shared/models`, `hidden_size`).
const LLAMA_D: usize = 4096;
/// Llama-2-7B's MLP width (`intermediate_size`).
const LLAMA_F: usize = 11008;
/// The small Llama of `scripts/small-llama/config.json`: hidden 256, intermediate 688.
const SMALL_D: usize = 256;
const SMALL_F: usize = 688;

/// The CPU suite. Default: the DRAM-bound entries have working sets of 128 MiB or more (beyond
/// any L3 we run on); the run is about 15 s on two cores. `quick`: smaller shapes (still beyond
/// an 8 MiB L3 where meant for DRAM), a few seconds.
pub fn cpu_suite(quick: bool) -> Suite {
    let (prefill, square, elems, rows, seq, tokens) = if quick {
        (128, 512, 1 << 24, 4096, 512, 2048)
    } else {
        (128, 2048, 1 << 24, 4096, 1024, 8192)
    };
    let mut specs = vec![Spec::Gemm {
        m: 1,
        n: LLAMA_D,
        k: LLAMA_D,
        note: "Llama-2-7B decode, 1 token: q/k/v/o_proj",
    }];
    if !quick {
        specs.push(Spec::Gemm {
            m: 1,
            n: LLAMA_F,
            k: LLAMA_D,
            note: "Llama-2-7B decode, 1 token: gate/up_proj",
        });
        specs.push(Spec::Gemm {
            m: 1,
            n: LLAMA_D,
            k: LLAMA_F,
            note: "Llama-2-7B decode, 1 token: down_proj",
        });
    }
    specs.push(Spec::Gemm {
        m: prefill,
        n: LLAMA_D,
        k: LLAMA_D,
        note: "Llama-2-7B prefill, 128-token chunk: q/k/v/o_proj",
    });
    if !quick {
        specs.push(Spec::Gemm {
            m: prefill,
            n: LLAMA_F,
            k: LLAMA_D,
            note: "Llama-2-7B prefill, 128-token chunk: gate/up_proj",
        });
        specs.push(Spec::Gemm {
            m: prefill,
            n: LLAMA_D,
            k: LLAMA_F,
            note: "Llama-2-7B prefill, 128-token chunk: down_proj",
        });
    }
    specs.push(Spec::Gemm {
        m: square,
        n: square,
        k: square,
        note: "square",
    });
    specs.push(Spec::Add {
        n: elems,
        note: "from DRAM",
    });
    specs.push(Spec::Add {
        n: 1 << 18,
        note: "fits in L3",
    });
    specs.push(Spec::SiluMul { n: elems });
    specs.push(Spec::RmsNorm {
        rows,
        cols: LLAMA_D,
        note: "from DRAM",
    });
    specs.push(Spec::RmsNorm {
        rows: 128,
        cols: LLAMA_D,
        note: "fits in L3",
    });
    specs.push(Spec::Softmax {
        rows,
        cols: LLAMA_D,
    });
    let att = AttentionShape {
        heads: 8,
        seq,
        head_dim: 64,
    };
    specs.push(Spec::AttentionMaterialised(att));
    specs.push(Spec::AttentionFlash(att));
    let chain = ChainShape {
        tokens,
        hidden: SMALL_D,
        intermediate: SMALL_F,
    };
    specs.push(Spec::ChainSeparate(chain));
    specs.push(Spec::ChainFused(chain));
    Suite {
        specs,
        pairs: pairs(att, chain),
    }
}

/// The GPU suite: the CPU suite's kernels at sizes for a data-centre GPU (a 50 MiB L2, tens of
/// GB of HBM): DRAM-bound entries of 256 MiB or more, L2-resident ones of 12 and 16 MiB, GEMMs
/// of a 2048-token prefill and 8192³, attention over 4096 tokens. `quick`: a quarter of each.
pub fn gpu_suite(quick: bool) -> Suite {
    let (prefill, square, elems, rows, seq, tokens) = if quick {
        (512, 4096, 1 << 24, 4096, 2048, 16384)
    } else {
        (2048, 8192, 1 << 26, 16384, 4096, 65536)
    };
    let mut specs = vec![
        Spec::Gemm {
            m: 1,
            n: LLAMA_D,
            k: LLAMA_D,
            note: "Llama-2-7B decode, 1 token: q/k/v/o_proj",
        },
        Spec::Gemm {
            m: 1,
            n: LLAMA_F,
            k: LLAMA_D,
            note: "Llama-2-7B decode, 1 token: gate/up_proj",
        },
        Spec::Gemm {
            m: 1,
            n: LLAMA_D,
            k: LLAMA_F,
            note: "Llama-2-7B decode, 1 token: down_proj",
        },
        Spec::Gemm {
            m: prefill,
            n: LLAMA_D,
            k: LLAMA_D,
            note: "Llama-2-7B prefill: q/k/v/o_proj",
        },
        Spec::Gemm {
            m: prefill,
            n: LLAMA_F,
            k: LLAMA_D,
            note: "Llama-2-7B prefill: gate/up_proj",
        },
        Spec::Gemm {
            m: prefill,
            n: LLAMA_D,
            k: LLAMA_F,
            note: "Llama-2-7B prefill: down_proj",
        },
        Spec::Gemm {
            m: square,
            n: square,
            k: square,
            note: "square",
        },
        Spec::Add {
            n: elems,
            note: "from HBM",
        },
        Spec::Add {
            n: 1 << 20,
            note: "fits in L2",
        },
        Spec::SiluMul { n: elems },
        Spec::RmsNorm {
            rows,
            cols: LLAMA_D,
            note: "from HBM",
        },
        Spec::RmsNorm {
            rows: 512,
            cols: LLAMA_D,
            note: "fits in L2",
        },
        Spec::Softmax {
            rows,
            cols: LLAMA_D,
        },
    ];
    let att = AttentionShape {
        heads: 32,
        seq,
        head_dim: 64,
    };
    let chain = ChainShape {
        tokens,
        hidden: SMALL_D,
        intermediate: SMALL_F,
    };
    specs.extend([
        Spec::AttentionMaterialised(att),
        Spec::AttentionFlash(att),
        Spec::ChainSeparate(chain),
        Spec::ChainFused(chain),
    ]);
    Suite {
        specs,
        pairs: pairs(att, chain),
    }
}

fn pairs(att: AttentionShape, chain: ChainShape) -> Vec<(String, String, String)> {
    vec![
        (
            "rmsnorm → linear → silu → linear".to_string(),
            Spec::ChainSeparate(chain).name(),
            Spec::ChainFused(chain).name(),
        ),
        (
            "attention: QKᵀ → softmax → ·V".to_string(),
            Spec::AttentionMaterialised(att).name(),
            Spec::AttentionFlash(att).name(),
        ),
    ]
}

/// Checks `--only` against the suite that would run, before anything is measured.
///
/// # Errors
/// A usage error when a name of `only` is empty, or matches no kernel (listing the suite's
/// kernels).
pub fn check_only(only: &[String], gpu: bool, quick: bool) -> Result<(), MeasureError> {
    let suite = if gpu {
        gpu_suite(quick)
    } else {
        cpu_suite(quick)
    };
    // Each name must select something: `gemm,nosuch` is a typo, not "the GEMMs", and an empty
    // name (`--only ""`, `gemm,`) would select everything.
    for o in only {
        if o.trim().is_empty() {
            return Err(MeasureError::usage(
                format!("`--only {}` has an empty name", only.join(",")),
                Some("name kernels by part of their name, comma-separated: `--only gemm,chain`; leave --only out for all".into()),
            ));
        }
        let one = [o.clone()];
        if selected(suite.clone(), &one).specs.is_empty() {
            return Err(no_match(&one, &suite));
        }
    }
    Ok(())
}

pub(crate) fn selected(suite: Suite, only: &[String]) -> Suite {
    if only.is_empty() {
        return suite;
    }
    let keep = |n: &str| only.iter().any(|o| n.contains(o.as_str()));
    Suite {
        specs: suite
            .specs
            .into_iter()
            .filter(|s| keep(&s.name()))
            .collect(),
        pairs: suite.pairs,
    }
}

fn no_match(only: &[String], suite: &Suite) -> MeasureError {
    MeasureError::usage(
        format!("`--only {}` matches no kernel of the suite", only.join(",")),
        Some(format!(
            "kernels: {}",
            suite
                .specs
                .iter()
                .map(Spec::name)
                .collect::<Vec<_>>()
                .join(", ")
        )),
    )
}

"""Each command's function against the CLI's `--format json` document for the same flags."""

import pytest

import roofline


def test_op_gemm(cli):
    doc = roofline.op("gemm", "h100-sxm", m=8, n=4096, k=4096, bias=True, precision="fp8")
    assert doc == cli.json(["op", "gemm", "--hardware", "h100-sxm", "--precision", "fp8",
                            "--m", "8", "--n", "4096", "--k", "4096", "--bias"])
    assert doc["kernels"][0]["flops"] == 2 * 8 * 4096 * 4096 + 8 * 4096


def test_op_attention(cli):
    doc = roofline.op("attention", "a100-sxm-80gb", heads=32, kv_heads=8, head_dim=128,
                      q_len=2048, causal=True, fused=True, batch=2)
    assert doc == cli.json(["op", "attention", "--hardware", "a100-sxm-80gb", "--heads", "32",
                            "--kv-heads", "8", "--head-dim", "128", "--q-len", "2048",
                            "--causal", "--fused", "--batch", "2"])


def test_op_collective_with_a_system(cli):
    doc = roofline.op("all-reduce", bytes="1GiB", system="dgx-h100-su", devices=16)
    assert doc == cli.json(["op", "all-reduce", "--bytes", "1GiB", "--system", "dgx-h100-su",
                            "--devices", "16"])


def test_op_collective_on_the_default_chip(cli):
    doc = roofline.op("all-gather", bytes=64 * 2**20, devices=8)
    assert doc == cli.json(["op", "all-gather", "--hardware", "h100-sxm", "--bytes",
                            str(64 * 2**20), "--devices", "8"])


def test_sweep(cli):
    doc = roofline.sweep("llama-3.1-8b", ["h100-sxm", "mi300x"], batch=[1, 8, 64],
                         context="1024..4096", precision=["bf16", "fp8"])
    assert doc == cli.json(["sweep", "llama-3.1-8b", "--hardware", "h100-sxm,mi300x",
                            "--stage", "decode", "--batch", "1,8,64", "--context",
                            "1024..4096", "--precision", "bf16,fp8"])


def test_sweep_pareto(cli):
    doc = roofline.sweep("llama-3.1-8b", batch="1..64", pareto=True, generate=128,
                         slo_tpot="20ms")
    assert doc == cli.json(["sweep", "llama-3.1-8b", "--hardware", "h100-sxm", "--stage",
                            "decode", "--batch", "1..64", "--pareto", "--generate", "128",
                            "--slo-tpot", "20ms"])


def test_mfu(cli):
    doc = roofline.mfu("llama-3.1-8b", "h100-sxm", tokens=1e12, time="30d", devices=64,
                       seq_len=8192)
    assert doc == cli.json(["mfu", "llama-3.1-8b", "--hardware", "h100-sxm", "--tokens",
                            "1e12", "--time", "30d", "--devices", "64", "--seq-len", "8192"])


def test_mfu_without_a_model(cli):
    doc = roofline.mfu(params="70B", tokens_per_s=1.2e6, devices=1024, hardware="a100-sxm-80gb")
    assert doc == cli.json(["mfu", "--params", "70B", "--tokens-per-s", "1200000.0",
                            "--devices", "1024", "--hardware", "a100-sxm-80gb"])


def test_mbu(cli):
    doc = roofline.mbu("llama-3.1-70b", "h100-sxm", tpot="25ms", batch=4, context=4096,
                       devices=4)
    assert doc == cli.json(["mbu", "llama-3.1-70b", "--hardware", "h100-sxm", "--tpot", "25ms",
                            "--batch", "4", "--context", "4096", "--devices", "4"])


def test_fuse(cli):
    doc = roofline.fuse(["rmsnorm", "linear", "silu"], tokens=8, hidden=4096,
                        intermediate=14336, launch_overhead="7us")
    assert doc == cli.json(["fuse", "--chain", "rmsnorm,linear,silu", "--tokens", "8",
                            "--hidden", "4096", "--intermediate", "14336", "--hardware",
                            "h100-sxm", "--launch-overhead", "7us"])


def test_train(cli):
    doc = roofline.train("llama-3.1-8b", 512, devices=64, tp=2, pp=2, zero=1,
                         recompute="selective", tokens="1T",
                         efficiency={"matmul": 0.7, "network": 0.8})
    assert doc == cli.json(["train", "llama-3.1-8b", "--global-batch", "512", "--hardware",
                            "h100-sxm", "--devices", "64", "--tp", "2", "--pp", "2",
                            "--zero", "1", "--recompute", "selective", "--tokens", "1T",
                            "--efficiency", "matmul=0.7,network=0.8"])


def test_train_zero_stage_0_is_passed(cli):
    doc = roofline.train("llama-3.1-8b", 64, devices=8, zero=0)
    assert doc == cli.json(["train", "llama-3.1-8b", "--global-batch", "64", "--devices", "8",
                            "--zero", "0"])


def test_generate(cli):
    doc = roofline.generate("llama-3.1-70b", "h100-sxm", prompt=1024, generate=128, batch=4,
                            tp=4, max_batch=True, draft="llama-3.1-8b", draft_len=4)
    assert doc == cli.json(["generate", "llama-3.1-70b", "--hardware", "h100-sxm", "--prompt",
                            "1024", "--generate", "128", "--batch", "4", "--tp", "4",
                            "--max-batch", "--draft", "llama-3.1-8b", "--draft-len", "4"])
    assert len(doc.to_pandas()) == sum(len(s["ops"]) for s in doc["stages"])


def test_plan(cli):
    doc = roofline.plan("llama-3.1-70b", "h100-sxm", devices=8, batch=16, top=3)
    assert doc == cli.json(["plan", "llama-3.1-70b", "--hardware", "h100-sxm", "--devices",
                            "8", "--stage", "decode", "--batch", "16", "--top", "3"])


def test_plan_train(cli):
    doc = roofline.plan("llama-3.1-8b", devices=16, stage="train", global_batch=256,
                        policies="megatron-2022")
    assert doc == cli.json(["plan", "llama-3.1-8b", "--devices", "16", "--stage", "train",
                            "--global-batch", "256", "--policies", "megatron-2022"])


def test_models(cli):
    doc = roofline.models()
    assert doc == cli.json(["models"])
    df = doc.to_pandas()
    assert list(df["name"]) == [m["name"] for m in doc["models"]]


def test_hardware_list_and_show(cli):
    assert roofline.hardware_list() == cli.json(["hardware", "list"])
    assert roofline.hardware_list(systems=True) == cli.json(["hardware", "list", "--systems"])
    assert len(roofline.hardware_list().to_pandas()) == len(cli.json(["hardware", "list"])["hardware"])
    for chip in ("h100-sxm", "mi300x", "tpu-v5p"):
        assert roofline.hardware_show(chip) == cli.json(["hardware", "show", chip])


def test_run_returns_any_format(cli):
    args = ["analyze", "gpt2", "--hardware", "l4", "--format", "csv"]
    assert roofline.run(args) == cli.run(args).stdout
    assert roofline.run(["hardware", "list"]) == cli.run(["hardware", "list"]).stdout


def test_format_is_not_a_flag():
    with pytest.raises(TypeError, match="format"):
        roofline.analyze(format="csv")


def test_explain_is_a_document_too(cli):
    doc = roofline.analyze("gpt2", "l4", explain="c_attn")
    assert doc == cli.json(["analyze", "gpt2", "--hardware", "l4", "--stage", "decode",
                            "--batch", "8", "--context", "4096", "--explain", "c_attn"])


def test_text_output_is_refused_with_a_pointer_to_run():
    with pytest.raises(ValueError, match="roofline.run"):
        roofline.analyze(help=True)

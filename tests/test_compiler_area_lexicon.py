"""Settings of areas the lexicon did not name before the sixth held-out set (mixture-of-experts routing, TD3's
target smoothing, PGD attacks, VQ codebooks, model-based RL ensembles, bootstrap tests, pose heatmaps), the
words that pick which of two parameters a number is (an attack's step size, an evaluation's batch), and library
calls a claim writes out (`torch.cumprod`, `F.logsigmoid`), checked end to end on small repos."""

from __future__ import annotations

import textwrap

import pytest

from verifier.compiler import compile_claim, terms
from verifier.engine import run_repo
from verifier.spec.model import SAU


def compiled(claim: str, dimension: str = "D1"):
    return compile_claim(SAU(id="s-D1-001", dimension=dimension, claim=claim))


def values(claim: str, dimension: str = "D1") -> list[tuple]:
    return [(c.name, c.expect) for c in compiled(claim, dimension).checks if c.kind == "value"]


def calls(claim: str, dimension: str = "D2") -> list[str]:
    return [c.target for c in compiled(claim, dimension).checks if c.kind == "call"]


@pytest.mark.parametrize(
    ("claim", "expected"),
    [
        ("MoE: num_experts=64, router aux loss 0.01, router z-loss 1e-3",
         [("num_experts", 64), ("router_aux_loss_coef", 0.01), ("router_z_loss_coef", 0.001)]),
        ("64 experts and a load-balancing loss coefficient of 0.01", [("num_experts", 64), ("router_aux_loss_coef", 0.01)]),
        ("TD3: noise clip 0.5, policy_freq=2", [("noise_clip", 0.5), ("policy_delay", 2)]),
        ("PGD-AT: 10 PGD steps with step size 2/255 and ε=8/255, SGD lr 0.1",
         [("attack_epsilon", 8 / 255), ("attack_steps", 10), ("attack_step_size", 2 / 255), ("learning_rate", 0.1)]),
        ("SGD with step size 0.1 and momentum 0.9", [("learning_rate", 0.1), ("momentum", 0.9)]),  # no attack: the optimizer's
        ("VQ: commitment weight β = 0.25, codebook size 16384, code dimension 8",
         [("commitment_cost", 0.25), ("codebook_size", 16384), ("codebook_dim", 8)]),
        ("MBPO keeps 5 elites", [("num_elites", 5)]),
        ("1,000 bootstrap resamples", [("num_bootstrap_samples", 1000)]),
        ("17 keypoints", [("num_keypoints", 17)]),
        ("300k iterations at η = 5e-4 with 5k warm-up iterations", [("learning_rate", 0.0005), ("num_steps", 300000), ("warmup_steps", 5000)]),
        ("ClusterGCN: numLayers=3, hiddenChannels=256", [("num_layers", 3), ("hidden_size", 256)]),
        # the batch a speed measurement runs at, named in an earlier fragment of its sentence
        ("latency is measured end to end, with TensorRT FP16 at batch size 1", [("eval_batch_size", 1)]),
        ("a 256 batch size balances convergence speed", [("minibatch_size", 256)]),  # a speed that is no measurement
        ("attention dropout 0.2, FFN dropout 0.1", [("attention_dropout", 0.2), ("ffn_dropout", 0.1)]),
        ("decoded with beam search of width 3", [("num_beams", 3)]),
        ("hidden size 512, 8 heads", [("hidden_size", 512), ("num_heads", 8)]),  # a width that is no beam's
        ("batch-norm momentum 0.99, SGD momentum 0.9", [("bn_momentum", 0.99), ("momentum", 0.9)]),
        # a step count that is a window's or an adaptation's is not the run's training steps
        ("Adam at 1e-3: input window of 512 steps", [("learning_rate", 0.001), ("lookback_window", 512)]),
        ("Adam lr 4e-4, dead-feature window 25k steps", [("learning_rate", 0.0004)]),
        ("Adam lr 1e-3, 1 gradient step per batch", [("learning_rate", 0.001)]),
        ("eval every 50K steps, save every 1000 steps, log every 100 steps",
         [("eval_interval", 50000), ("save_interval", 1000), ("log_interval", 100)]),
        ("under 5-fold cross-validation", [("num_folds", 5)]),
        # an adversarial attack's own step size, steps and norm; a negative sampler's "self-adversarial" temperature
        ("PGD-AT: L∞ ε=8/255, step α=2/255, 10 steps w/ random start, SGD lr 0.1",
         [("attack_epsilon", 8 / 255), ("attack_step_size", 2 / 255), ("attack_steps", 10), ("learning_rate", 0.1)]),
        ("RotatE: self-adversarial sampling temp α = 1.0", [("adversarial_temperature", 1.0)]),
        ("TD3: policy noise 0.2 (clip 0.5)", [("noise_clip", 0.5), ("noise_std", 0.2)]),
        ("heatmaps drawn with a Gaussian of σ = 2", [("heatmap_sigma", 2)]),
        # a part described, then its settings: the part's own; "a decoder with" an LLM's width is the model's
        ("the predictor is a narrow ViT of depth 12", [("predictor_depth", 12)]),
        ("ViT-L encoder, decoder of depth 8", [("num_decoder_layers", 8)]),
        ("a 24-layer decoder with hidden size 2048", [("hidden_size", 2048), ("num_layers", 24)]),
    ],
)
def test_settings_of_more_areas_get_their_canonical_names(claim, expected):
    got = sorted(values(claim), key=lambda p: p[0])
    expected = sorted(expected, key=lambda p: p[0])
    assert [name for name, _ in got] == [name for name, _ in expected]
    assert all(g == pytest.approx(e) for (_, g), (_, e) in zip(got, expected))


@pytest.mark.parametrize(
    ("claim", "targets"),
    [
        ("T_i from torch.cumprod and the risk set from torch.logcumsumexp",
         ["torch.cumprod | cumprod", "torch.logcumsumexp | logcumsumexp"]),
        ("log-odds as logp - torch.log1p(-torch.exp(logp)); log sigma is F.logsigmoid",
         ["torch.log1p | log1p", "torch.exp | exp", "torch.nn.functional.logsigmoid"]),
        ("the scale and shift get requires_grad_(True)", ["requires_grad_"]),
        ("sorted with np.argsort, the loss trained with nn.L1Loss", ["numpy.argsort | argsort", "torch.nn.L1Loss"]),
        ("weights kept in torch.bfloat16 and built from torch.nn modules", []),  # a dtype and a namespace are no calls
    ],
)
def test_library_calls_written_out_are_call_checks(claim, targets):
    assert calls(claim) == targets


def test_a_written_call_never_doubles_a_name_the_table_knows():
    hits = [h.target for h in terms.find_apis("gradient from torch.autograd.grad")]
    assert hits == ["torch.autograd.grad | torch.func.grad | jax.grad | jax.value_and_grad | jax.jacrev | jax.jacfwd"]


def _repo(tmp_path, code: str, claim: str):
    (tmp_path / "sau.yaml").write_text(
        "version: 1\nsaus:\n  - id: w\n    dimension: D2\n    claim: 'Transmittance T_i from torch.cumprod'\n")
    (tmp_path / "render.py").write_text(textwrap.dedent(code))
    return tmp_path


@pytest.mark.parametrize(
    ("code", "status", "line"),
    [
        # through the module or as the tensor's own method: both are the call the claim names
        ("""
            import torch

            def weights(alpha):
                return torch.cumprod(1 - alpha, dim=-1)

            if __name__ == "__main__":
                weights(torch.rand(4))
         """, "pass", 5),
        ("""
            import torch

            def weights(alpha):
                return (1 - alpha).cumprod(-1)

            if __name__ == "__main__":
                weights(torch.rand(4))
         """, "pass", 5),
        # drifted: a running sum where the claim multiplies
        ("""
            import torch

            def weights(alpha):
                return torch.cumsum(1 - alpha, dim=-1)

            if __name__ == "__main__":
                weights(torch.rand(4))
         """, "missing", None),
    ],
)
def test_a_written_call_is_decided_on_the_repo(tmp_path, code, status, line):
    (verdict,) = run_repo(_repo(tmp_path, code, "T_i from torch.cumprod"), use_cache=False).verdicts
    assert verdict.status.value == status
    assert verdict.score == (1.0 if status == "pass" else 0.0)
    if line is not None:
        assert ("render.py", line) in {(e.file, e.line) for e in verdict.evidence}


TRAIN = """
    import argparse


    def main():
        parser = argparse.ArgumentParser()
        parser.add_argument("--batch_size", type=int, default=64)
        parser.add_argument("--gradient_accumulation_steps", type=int, default={accum})
        args = parser.parse_args()
        print(args.batch_size * args.gradient_accumulation_steps)


    if __name__ == "__main__":
        main()
"""


@pytest.mark.parametrize(
    ("claim", "accum", "status", "score"),
    [
        ("global batch size 512", 8, "pass", 1.0),  # 64 per step x 8 accumulated steps
        ("batch size 512", 8, "pass", 1.0),
        ("global batch size 512", 4, "partial", 0.75),  # 64 x 4 = 256 in effect: 2x smaller, not the 8x of a step
        ("batch size 64", 8, "pass", 1.0),  # the batch a step sees, as the code holds it
    ],
)
def test_an_effective_batch_is_the_batch_times_its_accumulation_steps(tmp_path, claim, accum, status, score):
    checks = [c for c in compiled(claim).checks if c.kind == "value"]
    assert len(checks) == 1 and checks[0].expect in (64, 512)
    (tmp_path / "sau.yaml").write_text(f"version: 1\nsaus:\n  - id: b\n    dimension: D1\n    claim: '{claim}'\n")
    (tmp_path / "train.py").write_text(textwrap.dedent(TRAIN).replace("{accum}", str(accum)))
    (verdict,) = run_repo(tmp_path, use_cache=False).verdicts
    assert (verdict.status.value, verdict.score) == (status, score), verdict.message
    lines = {(e.file, e.line) for e in verdict.evidence}
    assert ("train.py", 7) in lines  # the batch_size option
    assert (("train.py", 8) in lines) == (checks[0].expect == 512)  # the accumulation steps, when they are read


@pytest.mark.parametrize(
    ("claim", "rule", "names"),
    [
        ("baselines: the Cox proportional-hazards model (CoxPH), random survival forests (RSF) and DeepSurv",
         "baseline", ["CoxPH", "RSF", "DeepSurv"]),  # a spelled-out method by its short name
        ("the U-Net, VAE and text encoder of Stable Diffusion 1.5 stay frozen; 3,000 steps",
         "frozen", ["unet", "vae", "text_encoder"]),  # a list the commas cut into fragments
        ("Starting from the SFT checkpoint, which also serves as the frozen reference policy, we run DPO",
         "frozen", ["ref_model"]),
    ],
)
def test_protocol_parts_named_in_lists_and_long_forms(claim, rule, names):
    checks = [c for c in compiled(claim, "D3").checks if c.kind == "protocol" and c.rule == rule]
    assert [c.name for c in checks] == names


def test_an_attack_norm_is_no_max_error_metric():
    metrics = [c.expect for c in compiled("PGD-AT: L∞ ε=8/255", "D3").checks if c.kind == "protocol" and c.rule == "metric"]
    assert metrics == []
    errors = [c.expect for c in compiled("metrics: relative L2 and L∞ errors", "D3").checks if c.kind == "protocol"]
    assert errors == ["relative L2 error", "max error"]

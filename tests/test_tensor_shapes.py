"""Runtime tensor shapes ("state shape [81, 120]", "KV-cache shape (1, 25, hw, C)"): what the claim compiler emits,
and the ``shape`` rule with ``tensors: runtime`` on small repos (verdict, score, evidence line)."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from test_shape_rule import lines, run  # the same rule, the same harness

from verifier.analysis.protocol import implementation, load_rule, validate_protocol_params, with_defaults
from verifier.compiler import compile_claim
from verifier.results import Status
from verifier.spec.model import SAU

RULE = "shape"
STATE = {"tensors": "runtime", "expect": {"state": [81, 120]}}
KV = {"tensors": "runtime", "expect": {"kv_cache": [1, 25, "h*w", "C"]}}
FORWARD = {"tensors": "runtime", "expect": {"model_input": [1, 4, 8, 32, 32]}}


def compiled(text: str, dimension: str = "D1"):
    out = compile_claim(SAU(id="t-D1-001", dimension=dimension, claim=text))
    return out, [c.model_dump(exclude_none=True, exclude_defaults=True) for c in out.checks]




# ----- compiler ------------------------------------------------------------------------------------------------
def test_state_and_force_shapes_compile_to_runtime_checks():
    out, checks = compiled("Solver data: nu=0.01; state shape [81,120], force shape [80, 120].")
    assert {"rule": "shape", "tensors": "runtime", "expect": {"state": [81, 120]}} in checks
    assert {"rule": "shape", "tensors": "runtime", "expect": {"force": [80, 120]}} in checks
    assert not any(c.get("name") in ("state_shape", "force_shape") for c in checks)


def test_symbolic_dims_and_heading_compile_whole():
    out, checks = compiled(
        "Cache and model tensor shapes: KV-cache shape (1, 25, hw, C), model forward shape (1, 4, 8, 32, 32)")
    assert checks == [
        {"rule": "shape", "tensors": "runtime", "expect": {"kv_cache": [1, 25, "h*w", "C"]}},
        {"rule": "shape", "tensors": "runtime", "expect": {"model_input": [1, 4, 8, 32, 32]}},
    ]
    assert out.coverage == "full"


def test_unbracketed_and_of_shape_forms():
    _, checks = compiled("Video latents of shape 4×8×32×32; the state shape is 81x120.")
    assert checks == [{"rule": "shape", "tensors": "runtime", "expect": {"latent": [4, 8, 32, 32]}},
                      {"rule": "shape", "tensors": "runtime", "expect": {"state": [81, 120]}}]


@pytest.mark.parametrize("text", [
    "The hidden state shape (2, 81, 120) of the GRU.",  # another tensor than the state
    "Latent shape (B, T, H, W) throughout.",  # symbols only: nothing a static check decides
    "KV-cache shape (T, 16, h'w', C') per step.",  # primed symbols: not sizes the rule reads
])
def test_no_runtime_check_without_a_named_tensor_and_a_number(text):
    _, checks = compiled(text)
    assert not any(c.get("tensors") == "runtime" for c in checks)


def test_a_generic_noun_keeps_its_value_check():
    _, checks = compiled("Wavelet transform: input shape [32,64,64].")
    assert {"name": "input_shape", "expect": [32, 64, 64]} in checks


# ----- rule: where a shape is written ----------------------------------------------------------------------------
def test_dataset_array_passes_on_its_trailing_dims():
    r = run("""
        import numpy as np

        def simulate(n, nt=81, nx=120):
            u = np.zeros((n, nt, nx), dtype=np.float32)
            return u
        """, STATE)
    assert (r.status, r.score, lines(r)) == (Status.pass_, 1.0, [("train.py", 5)])


def test_other_grid_is_a_mismatch_and_a_permutation_is_not():
    r = run("import numpy as np\n\nstates = np.zeros((50, 81, 128))\n", STATE)
    assert (r.status, r.score, lines(r)) == (Status.mismatch, 0.0, [("train.py", 3)])
    r = run("import numpy as np\n\nstates = np.zeros((50, 120, 81))\n", STATE)
    assert (r.status, r.score) == (Status.unverified, None)
    assert "another order" in r.message


def test_jax_draw_assertion_and_reshape_are_read():
    r = run("import jax\n\ndef init(key, n):\n    u = jax.random.normal(key, (n, 81, 120))\n    return u\n", STATE)
    assert (r.status, lines(r)) == (Status.pass_, [("train.py", 4)])
    r = run("import torch\n\ndef check(u, n):\n    assert u.shape == (n, 81, 120)\n", STATE)
    assert (r.status, lines(r)) == (Status.pass_, [("train.py", 4)])
    r = run("""
        import torch

        class Attn:
            def forward(self, kv, b, h, w, c):
                kv_cache = kv.view(b, 25, h * w, c)
                return kv_cache
        """, KV)
    assert (r.status, lines(r)) == (Status.pass_, [("train.py", 6)])


def test_kv_cache_batch_dim_and_per_step_stack():
    ok = run("""
        import torch

        class Attn(torch.nn.Module):
            def __init__(self, batch_size, dim, h, w):
                super().__init__()
                self.register_buffer("cache_k", torch.zeros(batch_size, 25, h * w, dim))
        """, KV)
    assert (ok.status, ok.score, lines(ok)) == (Status.pass_, 1.0, [("train.py", 7)])
    drifted = run("""
        import torch

        class Attn(torch.nn.Module):
            def __init__(self, dim, h, w, steps=50):
                super().__init__()
                self.cache_k = torch.zeros(steps, 25, h * w, dim)
        """, KV)
    assert (drifted.status, drifted.score, lines(drifted)) == (Status.mismatch, 0.0, [("train.py", 7)])


def test_forward_input_is_the_tensor_passed_to_the_model():
    r = run("""
        import torch

        def smoke(model):
            x = torch.randn(1, 4, 8, 32, 32)
            return model(x, 0)
        """, FORWARD)
    assert (r.status, lines(r)) == (Status.pass_, [("train.py", 5)])
    # another model's input (a VAE's images) may differ: shown, never a mismatch; a named dummy input can be one
    r = run("import torch\n\ndef smoke(vae_net):\n    return vae_net(torch.randn(1, 3, 256, 256))\n", FORWARD)
    assert (r.status, r.score, lines(r)) == (Status.unverified, None, [("train.py", 4)])
    r = run("import torch\n\ndummy_input = torch.randn(1, 4, 16, 32, 32)\n", FORWARD)
    assert (r.status, r.score, lines(r)) == (Status.mismatch, 0.0, [("train.py", 3)])


# ----- rule: which tensor, and when it is not decided -------------------------------------------------------------
def test_einops_output_axes_sized_by_keywords():
    code = """
        import torch
        from einops import rearrange

        def cache(k, frames=25):
            kv_cache = rearrange(k, "(b t) n c -> b t n c", t=frames)
            return kv_cache
        """
    r = run(code, KV)
    assert (r.status, r.score, lines(r)) == (Status.pass_, 1.0, [("train.py", 6)])
    r = run(code.replace("frames=25", "frames=16"), KV)
    assert (r.status, r.score, lines(r)) == (Status.unverified, None, [("train.py", 6)])


def test_a_reshape_confirms_but_never_contradicts():
    r = run("import torch\n\ndef flat(u, n):\n    u = u.reshape(n * 81, 120)\n    return u\n\nflat(None, 16)\n", STATE)
    assert r.status == Status.unverified
    r = run("import torch\n\ndef flat(u):\n    u = u.reshape(16 * 81, 120)\n    return u\n", STATE)
    assert (r.status, r.score) == (Status.unverified, None)


def test_other_state_tensors_and_slices_do_not_count():
    r = run("""
        import numpy as np

        hidden_state = np.zeros((2, 81, 128))
        init_state = np.zeros((50, 120))
        u = np.zeros((50, 81, 120))
        u0 = np.zeros(120)
        """, STATE)
    assert (r.status, lines(r)) == (Status.pass_, [("train.py", 6)])


def test_disagreeing_tensors_and_unwritten_shapes_are_unverified():
    r = run("import numpy as np\n\nu = np.zeros((9, 81, 120))\nstate = np.zeros((9, 81, 128))\n", STATE)
    assert (r.status, r.score, lines(r)) == (Status.unverified, None, [("train.py", 3), ("train.py", 4)])
    r = run("import numpy as np\n\nu = np.load('burgers.npy')\n", STATE)
    assert (r.status, r.score) == (Status.unverified, None)
    assert "written statically" in r.message


def test_absent_tensor_missing_only_where_a_repo_may_lack_it():
    r = run("import torch\n\nx = torch.zeros(1, 25, 64, 320)\n", KV)
    assert (r.status, r.score, r.evidence) == (Status.missing, 0.0, ())
    r = run("import numpy as np\n\nsol = np.zeros((9, 81, 120))\n", STATE)
    assert (r.status, r.score) == (Status.unverified, None)


def test_unreadable_or_number_free_shapes_are_unverified():
    assert run("x = 1\n", {"tensors": "runtime", "expect": {"state": ["B", "T"]}}).status == Status.unverified
    assert "parameters, runtime" in validate_protocol_params(RULE, {"tensors": "mode", "expect": {"state": [81]}})


# ----- rule: a `<tensor>_shape` setting, as a value check reads it --------------------------------------------------
def _repo_check(tmp_path: Path, files: dict[str, str], params: dict):
    from verifier.checks.base import Context
    from verifier.index.build import build_index
    from verifier.spec.model import Spec

    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(textwrap.dedent(text))
    ctx = Context(build_index(tmp_path, use_cache=False), Spec())
    return implementation(RULE)(with_defaults(RULE, params), ctx, None, load_rule(RULE))


def test_config_setting_passes_and_contradicts(tmp_path):
    code = "import yaml\n\ncfg = yaml.safe_load(open('configs/burgers.yaml'))\n"
    r = _repo_check(tmp_path / "a", {"train.py": code, "configs/burgers.yaml": "state_shape: [81, 120]\n"}, STATE)
    assert (r.status, r.score, lines(r)) == (Status.pass_, 1.0, [("configs/burgers.yaml", 1)])
    r = _repo_check(tmp_path / "b", {"train.py": code, "configs/burgers.yaml": "nu: 0.01\nstate_shape: [81, 128]\n"},
                    STATE)
    assert (r.status, r.score, lines(r)) == (Status.mismatch, 0.0, [("configs/burgers.yaml", 2)])


def test_fixture_spec_compiles_to_runtime_checks():
    spec = Path(__file__).resolve().parent.parent / "fixtures/protocol-shape-runtime-pde-video/repo/sau.yaml"
    import yaml

    claims = {s["id"]: s["claim"] for s in yaml.safe_load(spec.read_text())["saus"]}
    _, checks = compiled(claims["sr-D1-002"])
    assert checks == [{"rule": "shape"} | KV]
    assert json.dumps(compiled(claims["sr-D1-004"])[1]) == json.dumps(
        [{"rule": "shape", "tensors": "runtime", "expect": {"latent": [4, 8, 32, 32]}}])


def test_settings_composing_the_model_input_confirm_it(tmp_path):
    code = "import torch\nimport yaml\n\ncfg = yaml.safe_load(open('configs/model.yaml'))\n"
    config = "model:\n  in_channels: 4\n  num_frames: 8\n  image_size: 32\n"
    r = _repo_check(tmp_path / "a", {"train.py": code, "configs/model.yaml": config}, FORWARD)
    assert (r.status, r.score, lines(r)) == (
        Status.pass_, 1.0, [("configs/model.yaml", 2), ("configs/model.yaml", 3), ("configs/model.yaml", 4)])
    # image_size 256 (pixels a VAE downsamples): no evidence either way, never a mismatch
    r = _repo_check(tmp_path / "b", {"train.py": code, "configs/model.yaml": config.replace("32", "256")}, FORWARD)
    assert (r.status, r.score) == (Status.unverified, None)


def test_one_factor_of_a_claimed_product_is_not_the_product():
    # "hw" is h·w: a cache over `h` rows only is not the claimed one (it used to pass, `hw` binding to `h`);
    # a name that may hold the product (`hw = h * w`) still passes
    short = run("""
        import torch

        class Attn(torch.nn.Module):
            def __init__(self, dim, h, w):
                super().__init__()
                self.register_buffer("cache_k", torch.zeros(1, 25, h, dim))
        """, KV)
    # (C may face `h` and hw `dim` in another order: undecided, never a pass)
    assert (short.status, short.score, lines(short)) == (Status.unverified, None, [("train.py", 7)])
    named = run("""
        import torch

        class Attn(torch.nn.Module):
            def __init__(self, dim, h, w):
                super().__init__()
                hw = h * w
                self.register_buffer("cache_k", torch.zeros(1, 25, hw, dim))
        """, KV)
    assert (named.status, named.score, lines(named)) == (Status.pass_, 1.0, [("train.py", 8)])

"""Distributions in claims: the standard normal and uniform are drawn by `randn`/`rand` as often as by
`normal`/`uniform`, so a claim's `eps ~ N(0, I)` must accept all of them (and still fail when nothing is drawn)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from verifier.compiler import compile_claim
from verifier.engine import run_repo
from verifier.spec.model import SAU


def calls(claim: str, dimension: str = "D2") -> list[tuple[str, dict]]:
    result = compile_claim(SAU(id="d-D2-001", dimension=dimension, claim=claim))
    return [(c.target, dict(c.args)) for c in result.checks if c.kind == "call"]


@pytest.mark.parametrize(
    ("claim", "expected"),
    [
        ("Noise: eps ~ N(0, I) is added to the latents", [("normal | randn | randn_like | standard_normal", {})]),
        ("z ~ N(0, 1) per dimension", [("normal | randn | randn_like | standard_normal", {})]),
        ("V ~ Uniform(0, 1) for each draw", [("uniform | rand | rand_like | random | random_sample", {})]),
        # any other parameters keep the parameterised sampler, with its arguments
        ("X ~ Uniform(0, 4) as inputs", [("uniform", {"low": 0, "high": 4})]),
        ("noise ~ N(0, 0.5) on the actions", [("normal", {"mean": 0, "std": 0.5})]),
    ],
)
def test_standard_forms_accept_every_sampler(claim, expected):
    assert calls(claim) == expected


def _verdict(tmp_path: Path, source: str, claim: str):
    repo = tmp_path / "repo"
    repo.mkdir(parents=True)
    (repo / "noise.py").write_text(source)
    spec = {"version": 1, "paper": {"id": "d"}, "saus": [{"id": "d-D2-001", "dimension": "methodological", "claim": claim}]}
    (repo / "sau.yaml").write_text(yaml.safe_dump(spec))
    (verdict,) = run_repo(repo, use_cache=False).verdicts
    return verdict


CLAIM = "Forward noising draws eps ~ N(0, I)."


@pytest.mark.parametrize(
    ("source", "line"),
    [
        ("import torch\n\n\ndef noise_like(x):\n    return torch.randn_like(x)\n", 5),
        ("import numpy as np\n\n\ndef noise(n):\n    return np.random.standard_normal(n)\n", 5),
        ("import torch\n\n\ndef noise(shape):\n    return torch.normal(0.0, 1.0, size=shape)\n", 5),
    ],
)
def test_a_faithful_sampler_passes_with_its_call_site(tmp_path, source, line):
    verdict = _verdict(tmp_path, source, CLAIM)
    assert (verdict.status.value, verdict.score) == ("pass", 1.0)
    (check,) = verdict.checks
    assert [(e.file, e.line) for e in check.evidence] == [("noise.py", line)]


def test_no_draw_at_all_does_not_pass(tmp_path):
    verdict = _verdict(tmp_path, "import torch\n\n\ndef noise_like(x):\n    return torch.zeros_like(x)\n", CLAIM)
    assert verdict.status.value != "pass" and verdict.score < 1.0


def test_a_single_letter_matrix_with_its_shape_is_not_a_distribution():
    assert calls("Factorise W = U (d×k) times V (k×n) from the SVD") == [("svd | svd_lowrank | svds", {})]  # no uniform
    assert calls("entries drawn from U(0, 1)") == [("uniform | rand | rand_like | random | random_sample", {})]

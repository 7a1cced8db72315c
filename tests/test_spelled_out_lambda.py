"""``lambda`` spelled out is the letter λ, not Python's keyword: "L = L_rec + lambda * L_kl" is how ASCII claims
and hand-written specs write a loss weight, and it used to be a spec error ("unexpected `lambda`") or an
untranslated formula."""

from __future__ import annotations

from pathlib import Path

import pytest

from minirepo import make_repo
from verifier.compiler import compile_claim
from verifier.compiler.formulas import to_sympy
from verifier.engine import run_repo
from verifier.spec.model import SAU
from verifier.symbolic.latex import parse_sympy

VAE = """
    import torch.nn.functional as F


    def vae_loss(recon, x, kl, lam=0.5):
        rec = F.mse_loss(recon, x)
        return rec + lam * kl
    """
DRIFTED = VAE.replace("rec + lam * kl", "rec + kl")  # the weight dropped


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("L_rec + lambda * L_kl", "L_rec + lam * L_kl"),
        ("eta * lambda * g", "eta * lam * g"),
        ("x + lambda_1 * y", "x + lambda_1 * y"),  # a name that only starts with the word stays as it is
    ],
)
def test_the_compiler_reads_lambda_as_the_letter(text, expected):
    assert to_sympy(text) == (expected, "")


def test_a_spec_formula_with_lambda_parses_like_the_greek_letter():
    assert parse_sympy("L_rec + lambda * L_kl").expr == parse_sympy("L_rec + λ * L_kl").expr


def test_a_claim_with_lambda_compiles_to_a_formula_check():
    result = compile_claim(SAU(id="t-D2-001", dimension="D2", claim="Total loss: L = L_rec + lambda * L_kl"))
    assert result.coverage == "full"
    assert [(c.kind, c.expect) for c in result.checks] == [("formula", "L_rec + lam * L_kl")]


def _verdict(tmp_path: Path, source: str):
    sau = {"id": "t-D2-001", "dimension": "methodological", "claim": "L = L_rec + lambda * L_kl",
           "check": {"kind": "formula", "expect": "L_rec + lambda * L_kl"}}
    v = {v.id: v for v in run_repo(make_repo(tmp_path, {"train.py": source}, [sau]), use_cache=False).verdicts}["t-D2-001"]
    return v.status.value, v.score, [(e.file, e.line) for e in v.evidence][:1]


def test_the_weighted_loss_passes_and_the_dropped_weight_fails(tmp_path):
    assert _verdict(tmp_path / "a", VAE) == ("pass", 1.0, [("train.py", 7)])
    status, score, _ = _verdict(tmp_path / "b", DRIFTED)
    assert status in ("mismatch", "missing") and score == 0.0, status


def test_a_sentence_defining_lambda_after_a_formula_is_its_glossary():
    # the sentence after ")." starts with a lower-case symbol: it is cut there, and it defines the formula's λ
    claim = ("Guided step: x_prev = x - eta * (g_theta(x, k) + lambda * grad_x J(x_hat)) + xi. "
             "x_hat = (x - sqrt(1 - a_k) * g_theta(x, k)) / sqrt(a_k). lambda is the guidance weight.")
    result = compile_claim(SAU(id="t-D2-001", dimension="D2", claim=claim))
    assert result.coverage == "full", [(f.outcome, f.text, f.reason) for f in result.fragments]
    assert [c.expect for c in result.checks] == [
        "x - eta * (g_theta(x, k) + lam * grad(J(x_hat), x)) + xi",
        "(x - sqrt(1 - a_k) * g_theta(x, k)) / sqrt(a_k)",
    ]

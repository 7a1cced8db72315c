"""The matrix inverse of a paper formula: ``(BᵀB)⁻¹`` compiles to the opaque ``inv`` the formula check also
reads ``torch.linalg.inv`` / ``torch.inverse`` / ``np.linalg.inv`` as; a scalar's ``^{-1}`` stays refused."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from verifier.compiler.formulas import find_formula
from verifier.engine import run_repo


@pytest.mark.parametrize(
    ("text", "expect"),
    [
        ("P = (BᵀB)⁻¹ Bᵀ", "matmul(inv((matmul(transpose(B), B))), transpose(B))"),
        ("w = (XᵀX)^{-1} Xᵀ y", "matmul(inv((matmul(transpose(X), X))), transpose(X), y)"),
        ("x = W^{-1} y", "matmul(inv(W), y)"),
        ("y = K^(-1) b", "matmul(inv(K), b)"),
        ("G = BᵀB", "matmul(transpose(B), B)"),
        ("A = softmax(Q (K^T K)^{-1} K^T / √d) V", "matmul(softmax(matmul(Q, inv((matmul(transpose(K), K))), transpose(K)) / sqrt(d)), V)"),
    ],
)
def test_an_inverse_of_a_matrix_translates_to_inv(text, expect):
    found = find_formula(text)
    assert (found.expect, found.reason) == (expect, "")


@pytest.mark.parametrize(
    "text",
    ["z = s^{-1} x", "z = (1 + x)^{-1}", "h = f^{-1}(x)", "q = σ^{-1}"],
)
def test_an_inverse_of_a_scalar_or_a_function_is_left_with_the_reason(text):
    found = find_formula(text)
    assert found is not None and found.expect is None
    assert "inverse" in found.reason


CLAIM = "Preconditioned gradient: g_R = (BᵀB)⁻¹ g (AAᵀ)⁻¹"
REPO = """\
import torch


def precondition(B, g, A):
    left = {inv}(B.T @ B)
    right = {inv}({right})
    return left @ g @ right


if __name__ == "__main__":
    print(precondition(torch.randn(6, 3), torch.randn(3, 3), torch.randn(3, 5)))
"""


def _verdict(tmp_path: Path, inv: str, right: str):
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "precond.py").write_text(REPO.format(inv=inv, right=right))
    saus = [{"id": "t-D2-001", "dimension": "methodological", "claim": CLAIM}]
    (repo / "sau.yaml").write_text(yaml.safe_dump({"version": 1, "paper": {"id": "t"}, "saus": saus}))
    (verdict,) = run_repo(repo, use_cache=False).verdicts
    return verdict


@pytest.mark.parametrize("inv", ["torch.linalg.inv", "torch.inverse", "np.linalg.inv"])
def test_the_compiled_inverse_passes_on_a_faithful_repo(tmp_path, inv):
    verdict = _verdict(tmp_path, inv, "A @ A.T")
    assert [c.kind for c in verdict.checks] == ["formula"]
    assert (verdict.status.value, verdict.score) == ("pass", 1.0)
    assert [(e.file, e.line) for e in verdict.evidence] == [("precond.py", 7)]


def test_the_compiled_inverse_fails_when_the_repo_inverts_the_other_gram_matrix(tmp_path):
    verdict = _verdict(tmp_path, "torch.linalg.inv", "A.T @ A")
    assert (verdict.status.value, verdict.score) == ("missing", 0.0)
    assert "nothing computes the formula" in verdict.message
    assert [(e.file, e.line) for e in verdict.evidence] == [("precond.py", 7)]


def test_a_pseudo_inverse_is_not_taken_for_the_inverse(tmp_path):
    """pinv equals inv only for full-rank matrices, which the check cannot see: not a pass."""
    verdict = _verdict(tmp_path, "torch.linalg.pinv", "A @ A.T")
    assert (verdict.status.value, verdict.score) == ("missing", 0.0)

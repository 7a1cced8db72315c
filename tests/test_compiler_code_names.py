"""Formula symbols spelled as code names ("logvar", "logits") are symbols, not prose: the VAE's KL term in a
claim written for this test compiles, passes on the usual implementation and fails on a drifted one."""

from __future__ import annotations

from pathlib import Path

import yaml

from verifier.compiler import compile_claim
from verifier.engine import run_repo
from verifier.spec.model import SAU

CLAIM = "KL term of the ELBO for a diagonal Gaussian posterior: KL = -0.5 * sum(1 + logvar - mu^2 - exp(logvar))."

FAITHFUL = """import torch


def kl_term(mu, logvar):
    kld = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
    return kld
"""

DRIFTED = FAITHFUL.replace("1 + logvar", "logvar")  # the constant 1 dropped


def _verdict(tmp_path: Path, source: str):
    repo = tmp_path / "repo"
    repo.mkdir(parents=True)
    (repo / "vae.py").write_text(source)
    spec = {"version": 1, "paper": {"id": "v"}, "saus": [{"id": "v-D2-001", "dimension": "methodological", "claim": CLAIM}]}
    (repo / "sau.yaml").write_text(yaml.safe_dump(spec))
    (verdict,) = run_repo(repo, use_cache=False).verdicts
    return verdict


def test_code_named_symbols_compile_into_a_formula():
    result = compile_claim(SAU(id="v-D2-001", dimension="D2", claim=CLAIM))
    assert [(c.kind, c.expect) for c in result.checks] == [("formula", "- 0.5 * sum(1 + logvar - mu**2 - exp(logvar))")]
    assert result.coverage == "full"


def test_the_usual_kl_implementation_passes_at_its_line(tmp_path):
    verdict = _verdict(tmp_path, FAITHFUL)
    assert (verdict.status.value, verdict.score) == ("pass", 1.0)
    assert [(e.file, e.line) for e in verdict.checks[0].evidence][:1] == [("vae.py", 5)]


def test_a_kl_without_its_constant_does_not_pass(tmp_path):
    verdict = _verdict(tmp_path, DRIFTED)
    assert verdict.status.value != "pass" and verdict.score < 1.0

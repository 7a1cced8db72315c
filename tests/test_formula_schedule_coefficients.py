"""A coefficient the paper writes as a function of the noise level or time ("c_{skip}(\\sigma) x") is one value the
code computes (`c_skip = ...`), not a product with sigma: EDM's preconditioning passes as written, and fails when a
term is dropped."""

from __future__ import annotations

import pytest
import yaml

from verifier.engine import run_repo
from verifier.symbolic.latex import parse_latex

PRECOND = '''import torch


class EDMPrecond(torch.nn.Module):
    def __init__(self, model, sigma_data=0.5):
        super().__init__()
        self.model = model
        self.sigma_data = sigma_data

    def forward(self, x, sigma):
        c_skip = self.sigma_data ** 2 / (sigma ** 2 + self.sigma_data ** 2)
        c_out = sigma * self.sigma_data / (sigma ** 2 + self.sigma_data ** 2).sqrt()
        c_in = 1 / (self.sigma_data ** 2 + sigma ** 2).sqrt()
        c_noise = sigma.log() / 4
        F_x = self.model(c_in * x, c_noise)
        D_x = {output}
        return D_x
'''
LATEX = r"c_{skip}(\sigma) x + c_{out}(\sigma) F_\theta(c_{in}(\sigma) x; c_{noise}(\sigma))"


def test_the_coefficient_is_one_symbol_and_an_application_stays_one():
    formula = parse_latex(LATEX)
    assert {str(s) for s in formula.expr.free_symbols} >= {"c_skip", "c_out", "x"}
    assert "sigma" not in {str(s) for s in formula.expr.free_symbols}
    assert parse_latex(r"W_q(x)").expr == parse_latex(r"W_q x").expr  # a one-letter argument is still a product


@pytest.mark.parametrize(("output", "status"), [("c_skip * x + c_out * F_x", "pass"), ("c_out * F_x", "missing")])  # a dropped term: only near
def test_edm_preconditioning_is_decided_on_the_code(tmp_path, output, status):
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "precond.py").write_text(PRECOND.format(output=output))
    spec = {"version": 1, "saus": [{"id": "e-D2-001", "dimension": "methodological", "claim": "EDM preconditioning",
                                     "check": {"kind": "formula", "latex": LATEX}}]}
    (repo / "sau.yaml").write_text(yaml.safe_dump(spec))
    (verdict,) = run_repo(repo, use_cache=False).verdicts
    assert verdict.status.value == status, verdict.message
    assert verdict.score == (1.0 if status == "pass" else 0.0)
    assert [(e.file, e.line) for e in verdict.evidence][:1] == [("precond.py", 16)]

"""``pattern`` checks: metavariables, wildcards, inside, where on folded values, and bad patterns."""

from __future__ import annotations

import pytest

from verifier.analysis.pattern import PatternError, compile_pattern, compile_where
from verifier.analysis.protocol.examples import context_for
from verifier.checks.pattern import check_pattern, validate_pattern_check
from verifier.spec.model import PatternCheck

SRC = '''import argparse
import torch
import torch.nn as nn
from torch.optim import AdamW

parser = argparse.ArgumentParser()
parser.add_argument("--lr", type=float, default=3e-4)
args = parser.parse_args()


def train(model, loader):
    opt = AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    for x, y in loader:
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad()


def evaluate(model, loader):
    model.eval()
    with torch.no_grad():
        return [model(x) for x, _ in loader]
'''


@pytest.fixture(scope="module")
def ctx():
    return context_for({"train.py": SRC, "scripts/run.sh": "python train.py --lr 1e-4\n"})


def run(ctx, **fields):
    return check_pattern(PatternCheck(**fields), ctx)


def where(result):
    return [(e.file, e.line) for e in result.evidence]


def test_require_with_metavariable_and_import_resolution(ctx):
    result = run(ctx, require="torch.optim.AdamW($P, lr=$LR, ...)")
    assert result.status.value == "pass" and where(result) == [("train.py", 12)]


def test_where_folds_through_the_launch_flag(ctx):
    result = run(ctx, require="torch.optim.AdamW($P, lr=$LR, ...)", where="$LR == 1e-4")
    assert result.status.value == "pass"
    result = run(ctx, require="torch.optim.AdamW($P, lr=$LR, ...)", where="$LR == 3e-4")
    assert result.status.value == "mismatch" and result.score == 0.0 and where(result) == [("train.py", 12)]


def test_where_on_literal_and_membership(ctx):
    assert run(ctx, require="clip_grad_norm_($P, $N)", where="$N in [0.5, 1.0]").status.value == "pass"
    assert run(ctx, require="clip_grad_norm_($P, $N)", where=["$N > 0", "$N < 1"]).status.value == "mismatch"


def test_metavariables_bind_consistently(ctx):
    assert run(ctx, require="$O.step()\n$O.zero_grad()").status.value == "pass"
    assert run(ctx, require="$O.zero_grad()\n$O.step()").status.value == "missing"


def test_statement_patterns_with_wildcards(ctx):
    result = run(ctx, require="for $X, $Y in $L:\n    ...\n    $LOSS.backward()\n    ...")
    assert result.status.value == "pass" and where(result) == [("train.py", 13)]
    result = run(ctx, require="def $F(...): ...", **{"in": "evaluate"})
    assert result.status.value == "pass" and where(result) == [("train.py", 21)]


def test_inside_pattern_and_inside_scope(ctx):
    assert run(ctx, require="$M(...)", inside="with torch.no_grad(): ...", **{"in": "evaluate"}).status.value == "pass"
    assert run(ctx, forbid="$L.backward()", inside="evaluate").status.value == "pass"
    result = run(ctx, forbid="$L.backward()", inside="train")
    assert result.status.value == "mismatch" and where(result) == [("train.py", 15)]
    assert run(ctx, require="$L.backward()", inside="with torch.no_grad(): ...").status.value == "missing"


def test_partial_when_some_required_patterns_are_absent(ctx):
    result = run(ctx, require=["$L.backward()", "$S.step()", "torch.cuda.amp.GradScaler(...)"])
    assert result.status.value == "partial" and result.score == 0.5
    assert "GradScaler" in result.message


def test_keyword_arguments_need_a_wildcard_for_extras(ctx):
    assert run(ctx, require="AdamW($P, lr=$LR)").status.value == "missing"
    assert run(ctx, require="AdamW($P, weight_decay=0.01, ...)").status.value == "pass"


def test_undecidable_where_is_unverified(ctx):
    result = run(ctx, require="nn.functional.cross_entropy($A, $B)", where="$A > 1")
    assert result.status.value == "unverified" and result.score is None


@pytest.mark.parametrize("bad", ["$A $B", "def (", ""])
def test_bad_patterns_are_spec_errors(bad):
    with pytest.raises(PatternError):
        compile_pattern(bad)


def test_validate_pattern_check_reports_bad_where_and_inside():
    assert validate_pattern_check(PatternCheck(require="$X.step()", where="$X <")) is not None
    assert validate_pattern_check(PatternCheck(require="$X.step()", inside="with (:")) is not None
    assert validate_pattern_check(PatternCheck(require="$X.step()", inside="Trainer.train", where="$X == 1")) is None
    with pytest.raises(PatternError):
        compile_where("$X ==")


def test_checker_errors_instead_of_raising_on_bad_input(ctx):
    result = run(ctx, require="$A $B")
    assert result.status.value == "error" and "not Python" in result.message

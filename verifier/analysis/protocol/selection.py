"""Rule ``select-on-validation``: checkpoint / hyperparameter / early-stopping decisions use validation data."""

from __future__ import annotations

from verifier.analysis.protocol.common import evidence, scope_admits, sorted_evidence
from verifier.analysis.protocol.flow import flow
from verifier.results import CheckResult, Status

KIND = "protocol"


def evaluate(params: dict, ctx, scope: str | None, rule: dict) -> CheckResult:
    glob = scope if scope and ("/" in scope or scope.endswith(".py")) else None
    result = flow(ctx, glob)
    points = [e for e in result.of("selection") if scope_admits(scope, e.scope)]
    if not points:
        if result.bounded:
            return CheckResult.unverified(KIND, f"no selection point found before the flow analysis stopped: {result.bounded}")
        return CheckResult.failed(KIND, Status.missing, "no model selection (best checkpoint, early stopping, "
                                  "hyperparameter search) found", [])

    def ev(events):
        out = []
        for e in events[:4]:
            out.append(evidence(ctx, e.file, e.line, "rule", note=e.detail, end=e.end_line))
            for kind, origin in sorted(e.kinds.items()):
                out.append(evidence(ctx, origin.file, origin.line, "source", note=f"{kind} data"))
        return sorted_evidence(out)

    on_test = [e for e in points if "test" in e.kinds]
    if on_test:
        e = on_test[0]
        return CheckResult.failed(KIND, Status.mismatch, f"selection on test data: {e.detail} ({e.file}:{e.line})", ev(on_test))
    on_val = [e for e in points if "val" in e.kinds]
    if on_val:
        e = on_val[0]
        return CheckResult.passed(KIND, f"selection on validation data: {e.detail} ({e.file}:{e.line})", ev(on_val))
    on_train = [e for e in points if "train" in e.kinds]
    if on_train:
        e = on_train[0]
        return CheckResult.partial(KIND, 0.5, f"selection on training data, no validation set: {e.detail} "
                                   f"({e.file}:{e.line})", ev(on_train))
    e = points[0]
    return CheckResult.unverified(KIND, f"selection at {e.file}:{e.line} ({e.detail}), but which split its metric "
                                  "comes from could not be traced", ev(points))

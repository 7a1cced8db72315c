"""Rule ``no-test-leakage``: no def-use path carries held-out (test) data into training or model selection."""

from __future__ import annotations

from verifier.analysis.protocol.common import evidence, scope_admits, sorted_evidence
from verifier.analysis.protocol.flow import flow
from verifier.results import CheckResult, Status

KIND = "protocol"


def _held_out(params: dict) -> set[str]:
    return {"test", "val"} if params.get("include_validation") else {"test"}


def evaluate(params: dict, ctx, scope: str | None, rule: dict) -> CheckResult:
    held = _held_out(params)
    result = flow(ctx, scope if scope and "/" in scope or (scope or "").endswith(".py") else None)
    leaks = []
    for event in result.of("train-sink") + result.of("norm-before-split"):
        if event.kinds.keys() & held and scope_admits(scope, event.scope):
            leaks.append(event)
    if params.get("selection", True):
        for event in result.of("selection"):
            if event.kinds.keys() & held and scope_admits(scope, event.scope):
                leaks.append(event)
    if leaks:
        first = leaks[0]
        ev = []
        for event in leaks[:4]:
            ev.append(evidence(ctx, event.file, event.line, "rule", note=event.detail, end=event.end_line))
            for kind in sorted(event.kinds.keys() & held):
                origin = event.kinds[kind]
                if event.kind != "norm-before-split":
                    ev.append(evidence(ctx, origin.file, origin.line, "source", note=f"{kind} data"))
            if event.kind == "norm-before-split" and event.callee.isdigit():
                ev.append(evidence(ctx, event.file, int(event.callee), "source", note="statistics fitted on all data"))
        what = "validation data" if set(first.kinds) & held == {"val"} else "test data"
        return CheckResult.failed(KIND, Status.mismatch, f"{what} reaches training/selection: {first.detail} "
                                  f"({first.file}:{first.line})", sorted_evidence(ev), leaks=len(leaks))
    if result.bounded:
        return CheckResult.unverified(KIND, f"no leak found, but the flow analysis stopped early: {result.bounded}")
    sinks = [e for e in result.of("train-sink") if scope_admits(scope, e.scope)]
    sources = [e for e in result.events if any(k in held for k in e.kinds)]
    if not sinks and not result.of("selection"):
        if not sources:
            return CheckResult.unverified(KIND, "no training step and no held-out data recognised; nothing to trace")
    ev = [evidence(ctx, e.file, e.line, "rule", note=e.detail, end=e.end_line) for e in (sinks + result.of("selection"))[:4]]
    # The pass also rests on where the training data comes from: a split renamed there would be a leak.
    ev += [evidence(ctx, o.file, o.line, "source", note="training data")
           for e in sinks[:4] for k, o in sorted(e.kinds.items()) if k == "train"]
    return CheckResult.passed(KIND, f"{len(sinks)} training sink(s) and {len(result.of('selection'))} selection point(s) "
                              f"see no {'/'.join(sorted(held))} data", sorted_evidence(ev))


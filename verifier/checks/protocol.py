"""``protocol`` checks: an experimental-protocol rule from the rule library (rules/protocol/*.yaml)."""

from __future__ import annotations

from verifier.analysis.protocol import (
    KIND,
    implementation,
    load_rule,
    validate_protocol_params,
    with_defaults,
)
from verifier.checks.base import checker
from verifier.results import CheckResult


@checker("protocol")
def check_protocol(check, ctx) -> CheckResult:
    params = check.params
    problem = validate_protocol_params(check.rule, params)
    if problem:
        # Normally caught at spec load (exit 2); kept so a spec built in code still gets a clear verdict.
        return CheckResult.errored(KIND, problem, rule=check.rule)
    rule = load_rule(check.rule) or {}
    try:
        result = implementation(check.rule)(with_defaults(check.rule, params), ctx, check.scope, rule)
    except (RecursionError, MemoryError) as exc:
        return CheckResult.unverified(KIND, f"rule {check.rule} exceeded its analysis bounds ({type(exc).__name__})",
                                      rule=check.rule)
    except (SyntaxError, ValueError, UnicodeDecodeError, OSError) as exc:
        return CheckResult.errored(KIND, f"rule {check.rule} could not read the repo: {exc}".splitlines()[0],
                                   rule=check.rule)
    details = dict(result.details)
    details["rule"] = check.rule
    evidence = tuple(sorted(set(result.evidence), key=lambda e: e.sort_key()))
    return CheckResult(result.status, result.score, result.message, KIND, evidence, details, result.deterministic)

"""Shared helpers of the claim-compiler tests: compile one claim, and its checks as plain dicts to compare."""

from __future__ import annotations

from verifier.compiler import compile_claim
from verifier.spec.model import SAU


def compiled(claim: str, dimension: str = "D2"):
    return compile_claim(SAU(id=f"t-{dimension}-001", dimension=dimension, claim=claim))


def dumps(result) -> list[dict]:
    return [c.model_dump(by_alias=True, exclude_none=True, exclude_defaults=True) for c in result.checks]

"""Shared helpers of the claim-compiler tests: compile one claim, and its checks as plain dicts to compare."""

from __future__ import annotations

from verifier.compiler import compile_claim
from verifier.spec.model import SAU


def compiled(claim: str, dimension: str = "D2"):
    return compile_claim(SAU(id=f"t-{dimension}-001", dimension=dimension, claim=claim))


def dumps(result) -> list[dict]:
    return [c.model_dump(by_alias=True, exclude_none=True, exclude_defaults=True) for c in result.checks]


def verdict_of(tmp_path, files: dict[str, str], claim: str, dimension: str = "numerical"):
    """The one verdict of a one-claim spec run over a repo of ``files`` (path -> text) under ``tmp_path``."""
    import yaml

    from verifier.engine import run_repo

    repo = tmp_path / "repo"
    repo.mkdir(parents=True)
    for path, text in files.items():
        (repo / path).write_text(text)
    spec = {"version": 1, "paper": {"id": "t"}, "saus": [{"id": "t-D1-001", "dimension": dimension, "claim": claim}]}
    (repo / "sau.yaml").write_text(yaml.safe_dump(spec))
    (verdict,) = run_repo(repo, use_cache=False).verdicts
    return verdict

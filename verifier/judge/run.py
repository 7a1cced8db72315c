"""The judge pass of a run: which SAUs the LLM decides, from what evidence, through the lock file.

Called by the engine after every deterministic check has run. A SAU goes to the judge when it has no
deterministic score (unverified: nothing typed, a ``judge`` check, or checks that could not decide) or when
its free-text claim was only partly typed. The judge sees the claim, the deterministic partial results,
what the compiler could not type, and the index's evidence for the names the claim uses.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from verifier.compiler import compile_claim
from verifier.index.repo import RepoIndex
from verifier.judge.client import JudgeClient, Transport
from verifier.judge.config import JudgeConfig
from verifier.judge.evidence import check_names, checked_places, claim_tokens, evidence_hash, gather
from verifier.judge.lockfile import LockFile, cache_key, lock_path_for, text_hash
from verifier.judge.prompt import PROMPT_VERSION, JudgeRequest
from verifier.results import Evidence, Status, Verdict
from verifier.spec.model import SAU


@dataclass
class JudgePass:
    verdicts: list[Verdict]
    summary: dict[str, Any] = field(default_factory=dict)


def wants_judge(sau: SAU, verdict: Verdict, aliases: dict[str, list[str]]) -> tuple[bool, list[str], list[Any]]:
    """(goes to the judge?, untyped leftovers, the checks it ran) for one SAU."""
    checks = sau.all_checks()
    leftover: list[str] = []
    if not checks:
        compiled = compile_claim(sau, aliases)
        checks, leftover = compiled.checks, compiled.leftover
    if verdict.accepted_deviation is not None:
        return False, leftover, checks
    return verdict.score is None or bool(leftover), leftover, checks


def _request(sau: SAU, verdict: Verdict, leftover: list[str], checks: list[Any], index: RepoIndex) -> JudgeRequest:
    gathered = gather(index, claim_tokens(sau.claim, check_names(checks)))
    places = {(s.file, s.line) for s in gathered}
    snippets = sorted([*gathered, *(s for s in checked_places(index, verdict.evidence) if (s.file, s.line) not in places)],
                      key=lambda s: (s.file, s.line))
    partial = [
        {"check": r.kind, "status": r.status.value, "score": r.score, "message": r.message} for r in verdict.checks
    ]
    return JudgeRequest(
        claim_id=sau.id,
        claim=sau.claim,
        dimension=sau.dimension.value,
        snippets=snippets,
        partial=partial,
        leftover=list(leftover),
        evidence_hash=evidence_hash(snippets, partial),
    )


def _judged(verdict: Verdict, request: JudgeRequest, entry: dict[str, Any], key: str, cached: bool, model: str) -> Verdict:
    refs = set(entry.get("evidence_refs") or [])
    quoted = [
        Evidence(s.file, s.line, s.end_line, s.text.splitlines()[0][:200] if s.text else "", "judge", s.kind)
        for s in request.snippets
        if s.ref in refs
    ]
    evidence = {e.sort_key(): e for e in (*verdict.evidence, *quoted)}
    return dataclasses.replace(
        verdict,
        status=Status.judged,
        score=float(entry["score"]),
        message=f"judge ({model}): {entry.get('reasoning', '')}".strip(),
        deterministic=False,
        evidence=tuple(evidence[k] for k in sorted(evidence)),
        judge={
            "model": model,
            "prompt_version": PROMPT_VERSION,
            "cache_key": key,
            "cached": cached,
            "evidence_refs": sorted(refs),
            "deterministic_score": verdict.score,
        },
    )


def run_judge(
    saus: list[SAU],
    verdicts: list[Verdict],
    index: RepoIndex,
    config: JudgeConfig,
    spec_path: str | Path,
    aliases: dict[str, list[str]] | None = None,
    transport: Transport | None = None,
    lock: LockFile | None = None,
) -> JudgePass:
    """Verdicts with the judge's decisions folded in, and a summary (calls, tokens, cost, cache hits)."""
    by_id = {s.id: s for s in saus}
    lock = lock or LockFile(lock_path_for(spec_path))
    client = JudgeClient(config, transport=transport)
    out = {v.id: v for v in verdicts}
    pending: dict[str, tuple[JudgeRequest, str]] = {}
    hits = misses = 0
    for verdict in verdicts:
        sau = by_id.get(verdict.id)
        if sau is None:
            continue
        wanted, leftover, checks = wants_judge(sau, verdict, aliases or {})
        if not wanted:
            continue
        request = _request(sau, verdict, leftover, checks, index)
        key = cache_key(config.model, sau.id, sau.claim, request.evidence_hash)
        entry = lock.get(key)
        if entry is not None:
            hits += 1
            out[sau.id] = _judged(verdict, request, entry, key, True, config.model)
        elif config.cache_only:
            misses += 1
            if verdict.score is None:
                out[sau.id] = dataclasses.replace(
                    verdict, status=Status.unverified, score=None, message=f"no cached judge verdict ({verdict.message})"
                )
        else:
            pending[sau.id] = (request, key)
    errors = 0
    if pending:
        answers = client.judge([r for r, _ in pending.values()])
        for cid, (request, key) in sorted(pending.items()):
            answer = answers[cid]
            verdict = out[cid]
            if answer.score is None:
                errors += 1
                if verdict.score is None:  # a deterministic partial score stands; an undecided claim errors
                    out[cid] = dataclasses.replace(verdict, status=Status.error, score=None, message=f"judge: {answer.error}")
                continue
            entry = {
                "claim_id": cid,
                "claim_hash": text_hash(request.claim),
                "evidence_hash": request.evidence_hash,
                "evidence_refs": list(answer.evidence_refs),
                "model": config.model,
                "prompt_version": PROMPT_VERSION,
                "reasoning": answer.reasoning,
                "score": answer.score,
            }
            lock.put(key, entry)
            out[cid] = _judged(verdict, request, entry, key, False, config.model)
    try:
        written = lock.save()
    except OSError as exc:  # a read-only checkout: the verdicts stand, only the cache is lost
        written = False
        lock.problem = f"cannot write {lock.path.name}: {exc.strerror or exc}"
    summary = {
        "model": config.model,
        "prompt_version": PROMPT_VERSION,
        "cache_only": config.cache_only,
        "cached": hits,
        "uncached": misses,
        "judged": len(pending) - errors,
        "errors": errors,
        "lock_file": str(lock.path.name),
        "lock_written": written,
        **client.usage.to_json(),
    }
    if lock.problem:
        summary["lock_problem"] = lock.problem
    return JudgePass([out[v.id] for v in verdicts], summary)

"""Run a spec against a repository: load, index once, run every SAU's checks, score.

One index serves all claims; every check runs inside a guard so an internal failure becomes that SAU's
``error`` verdict (with a one-line reason) instead of a traceback or lost results.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from verifier.checks import UNAVAILABLE, Context, Options, checker_for, validate_check
from verifier.index.build import build_index
from verifier.index.repo import RepoIndex
from verifier.results import CheckResult, Report, Status, Verdict
from verifier.scoring import aggregate, combine, merged_evidence
from verifier.spec.load import find_spec, load_spec
from verifier.spec.model import SAU, LoadedSpec


class InputError(Exception):
    """Bad arguments (a path that does not exist, no spec found): exit 2 with this one-line message."""


def run_repo(
    repo: Path,
    spec_path: Path | None = None,
    *,
    use_cache: bool = True,
    only: set[str] | None = None,
    options: Options | None = None,
    loaded: LoadedSpec | None = None,
    index: RepoIndex | None = None,
    judge: Any = None,
    judge_transport: Any = None,
) -> Report:
    repo = Path(repo)
    if loaded is None:
        loaded = load_for(repo, spec_path)
    else:
        check_repo(repo)
    spec = loaded.spec
    if only:
        unknown = sorted(only - {s.id for s in spec.saus})
        if unknown:
            raise InputError(f"--only: no SAU with id {', '.join(unknown)} in {loaded.path}")
    if index is None:
        index = build_index(repo, include=list(spec.repo.include), exclude=list(spec.repo.exclude), use_cache=use_cache)
    ctx = Context(index=index, spec=spec, options=options or Options())
    saus = sorted((s for s in spec.saus if not only or s.id in only), key=lambda s: s.id)
    verdicts = [evaluate_sau(sau, ctx) for sau in saus]
    extras: dict[str, Any] = {}
    if judge is not None:
        verdicts, extras["judge"] = judge_unverified(saus, verdicts, ctx, judge, loaded.path, judge_transport)
    return Report(
        repo=str(repo),
        spec_path=str(loaded.path),
        spec_shape=loaded.shape,
        paper=spec.paper.model_dump(exclude_none=True),
        verdicts=verdicts,
        scores=aggregate(verdicts),
        notes=sorted(index.notes, key=lambda n: (n.file, n.line or 0, n.reason)),
        extras=extras,
    )


def check_repo(repo: Path) -> None:
    if not repo.exists():
        raise InputError(f"{repo}: no such directory")
    if not repo.is_dir():
        raise InputError(f"{repo}: not a directory (give the repository root)")


def load_for(repo: Path, spec_path: Path | None = None) -> LoadedSpec:
    """The spec given, or the one found in the repo (sau.yaml, sau.yml, sau.json, sau.toml)."""
    repo = Path(repo)
    check_repo(repo)
    if spec_path is None:
        spec_path = find_spec(repo)
        if spec_path is None:
            raise InputError(f"{repo}: no sau.yaml, sau.yml, sau.json or sau.toml found (use --spec PATH)")
    return load_spec(Path(spec_path), check_validator=validate_check)


def checks_for(sau: SAU) -> tuple[list, str | None]:
    """The typed checks of a SAU, and why there are none (free text the compiler could not type)."""
    checks = sau.all_checks()
    if checks:
        return checks, None
    return [], "free-text claim with no typed check"


def run_check(check: Any, ctx: Context) -> CheckResult:
    fn = checker_for(check.kind)
    if fn is None and check.kind in UNAVAILABLE:
        return CheckResult.errored(check.kind, f"the {check.kind} checker cannot load: {UNAVAILABLE[check.kind]}")
    if fn is None:
        return CheckResult.unverified(check.kind, f"no deterministic checker for kind '{check.kind}' in this version")
    try:
        return fn(check, ctx)
    except RecursionError:
        return CheckResult.errored(check.kind, f"{check.kind} check: input too deeply nested")
    except Exception as exc:  # a bug or an input the check did not foresee: that SAU errors, the run goes on
        return CheckResult.errored(check.kind, f"{check.kind} check failed: {type(exc).__name__}: {exc}")


def evaluate_sau(sau: SAU, ctx: Context) -> Verdict:
    ctx.sau = sau
    if not sau.all_checks():
        return evaluate_compiled(sau, ctx)
    checks, why_none = checks_for(sau)
    if checks:
        results = [run_check(c, ctx) for c in checks]
    else:
        results = [CheckResult.unverified("judge" if why_none is None else "claim", why_none or "no check")]
    status, score, message, deterministic = combine(results)
    kinds = sorted({r.kind for r in results})
    return Verdict(
        id=sau.id,
        dimension=sau.dimension.value,
        status=status,
        score=score,
        message=message,
        check="+".join(kinds),
        deterministic=deterministic,
        evidence=merged_evidence(results),
        checks=tuple(results),
        weight=sau.weight,
        claim=sau.claim,
        accepted_deviation=(sau.deviation.reason or "accepted") if sau.deviation and sau.deviation.accepted else None,
    )


# ----- free-text claims and the judge (issue 6: verifier/compiler, verifier/judge) -----------------------------
def evaluate_compiled(sau: SAU, ctx: Context) -> Verdict:
    """A SAU with no typed check: compile its claim, run what it became, fold the results into one score."""
    from verifier.compiler import aggregate as aggregate_claim
    from verifier.compiler import compile_claim

    try:
        compiled = compile_claim(sau, ctx.aliases)
    except Exception as exc:  # the compiler must never cost the run: the claim stays for the judge
        compiled = None
        results, leftover = [], [f"{sau.claim[:80]}: claim compiler failed ({type(exc).__name__}: {exc})"]
    if compiled is not None:
        results = [_undecided_if_guessed(c, run_check(c, ctx), sau.claim or "", ctx.aliases) for c in compiled.checks]
        leftover = compiled.leftover
    claim = aggregate_claim(results, leftover)
    kinds = sorted({r.kind for r in results}) or ["claim"]
    return Verdict(
        id=sau.id,
        dimension=sau.dimension.value,
        status=claim.status,
        score=claim.score,
        message=claim.message,
        check="+".join(kinds),
        deterministic=all(r.deterministic for r in results),
        evidence=merged_evidence(results),
        checks=tuple(results),
        weight=sau.weight,
        claim=sau.claim,
        accepted_deviation=(sau.deviation.reason or "accepted") if sau.deviation and sau.deviation.accepted else None,
    )


def _undecided_if_guessed(check, result, claim: str, aliases) -> Any:
    """A value the compiler named from the claim's own words ("50 demonstrations" -> num_demonstrations), not
    from the lexicon nor from a code name the claim writes, that binds nothing: the repo may call it anything, so
    the value is undecided (the judge's), not absent. A lexicon name that binds nothing stays missing."""
    from verifier.compiler import terms

    if check.kind != "value" or result.status is not Status.missing or not result.message.startswith("no binding of"):
        return result
    if terms.decided_when_unbound(check.all_names(), claim, aliases):
        return result  # a lexicon name, an alias, or the repo's own name written in the claim ("num_rollouts=20")
    return CheckResult.unverified(
        result.kind, f"{result.message}: a name made from the claim's words, not a known parameter's, so undecided",
        result.evidence, **result.details,
    )


def judge_unverified(saus, verdicts, ctx: Context, judge, spec_path, transport=None):
    """Send what static analysis left undecided (or only partly typed) to the configured judge."""
    from verifier.judge import run_judge

    done = run_judge(saus, verdicts, ctx.index, judge, spec_path, aliases=ctx.aliases, transport=transport)
    return done.verdicts, done.summary

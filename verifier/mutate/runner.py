"""``sau-verify mutate``: apply drifts to a temporary copy of a faithful repo and see which SAUs notice.

The repo itself is never written: a private copy takes each mutant in turn (one file changed, then restored),
and the index's content-hash cache means only the changed file is re-read. A mutant is *caught* when some
SAU's verdict gets worse than on the original.
"""

from __future__ import annotations

import ast
import re
import shutil
import tempfile
from collections import defaultdict
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from verifier.engine import load_for, run_repo
from verifier.index.build import build_index
from verifier.index.facts import FileRole, Language
from verifier.mutate.mutants import Mutant, build_mutants
from verifier.mutate.operators import OPERATORS
from verifier.results import Verdict
from verifier.spec.model import LoadedSpec
from verifier import pysource


@dataclass
class MutantOutcome:
    mutant: Mutant
    caught_by: list[str] = field(default_factory=list)  # SAUs whose verdict got worse
    changed: list[str] = field(default_factory=list)  # SAUs whose verdict changed at all
    touched: list[str] = field(default_factory=list)  # SAUs whose claimed code the mutant changes (relevant)
    false_alarms: list[str] = field(default_factory=list)  # changed, though the mutant touches nothing they claim


@dataclass
class MutationReport:
    repo: str
    seed: int
    saus: list[str]
    outcomes: list[MutantOutcome]
    discarded: dict[str, int]

    def summary(self) -> dict:
        total = len(self.outcomes)
        killed = sum(1 for o in self.outcomes if o.caught_by)
        relevant = [o for o in self.outcomes if o.touched]
        per_op: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        for o in self.outcomes:
            per_op[o.mutant.operator][0] += 1
            per_op[o.mutant.operator][1] += bool(o.caught_by)
        per_sau = {s: 0 for s in self.saus}
        for o in self.outcomes:
            for s in o.caught_by:
                per_sau[s] += 1
        pairs = total * len(self.saus)
        alarms = sum(len(o.false_alarms) for o in self.outcomes)
        return {
            "mutants": total,
            "killed": killed,
            "kill_rate": _ratio(killed, total),
            "relevant_mutants": len(relevant),
            "relevant_killed": sum(1 for o in relevant if o.caught_by),
            "relevant_kill_rate": _ratio(sum(1 for o in relevant if o.caught_by), len(relevant)),
            "false_alarms": alarms,
            "false_alarm_rate": _ratio(alarms, pairs),
            "discarded": dict(sorted(self.discarded.items())),
            "per_operator": {
                op: {"mutants": n, "killed": k, "kill_rate": _ratio(k, n), "dimension": OPERATORS[op][0]}
                for op, (n, k) in sorted(per_op.items())
            },
            "per_sau": dict(sorted(per_sau.items())),
            "never_catching": sorted(s for s, n in per_sau.items() if n == 0),
        }


def _ratio(a: int, b: int) -> float | None:
    return round(a / b, 4) if b else None


def _function_spans(root: Path, rel: str, cache: dict) -> list[tuple[int, int]]:
    if rel not in cache:
        try:
            tree = pysource.parse((root / rel).read_text(encoding="utf-8", errors="replace"))
            cache[rel] = [
                (n.lineno, n.end_lineno or n.lineno)
                for n in ast.walk(tree)
                if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
            ]
        except (SyntaxError, ValueError, OSError):
            cache[rel] = []
    return cache[rel]


# Which evidence a drift of each family changes the meaning of. A mutant is *relevant* to a SAU when it lies
# exactly on such evidence of one of its checks: an overridden default, a value in a test or a comment, or a
# neighbouring statement is not behaviour the claim talks about. Evidence a check cites without resting on it
# (role `redundant`: a seeding call the verdict holds without) is never relevant, and `presence` evidence (a
# call that must be there, whatever values it passes) only to drifts that remove or stub it. Equivalent mutants
# are not relevant either: a swap counts only when both swapped statements are claimed, mean/sum only when the
# formula keeps its reduction, a constant in a call only when that check names the call's arguments, and code
# removal never falsifies a rule that asserts an absence (no test data reaches training). False alarms use
# generous, function-wide regions instead.
_BEHAVIOUR_ROLES = {
    "D1": {"effective", "call", "init", "expression", "rule", "setting", "source"},
    "D2": {"effective", "expression", "init", "rule"},
    "D3": {"rule", "setting", "source", "effective", "presence"},
    "D4": {"step"},
}
_STUB_ROLES = {"definition", "expression", "step", "rule", "init", "effective", "call", "setting", "source", "presence"}
# Drifts that only take behaviour away: they cannot add the data flow an absence rule forbids.
_REMOVALS = {"stub-body", "remove-eval-mode", "remove-no-grad", "remove-seeding"}


# What each drift changes, in the terms a protocol rule uses to say what its verdict never depends on.
_ASPECTS = {
    "swap-split": "split-names",
    "const-neighbour": "constant-arguments",
    "const-plus-one": "constant-arguments",
    "const-scale": "constant-arguments",
}


def _rule_of(check) -> dict:
    if getattr(check, "kind", None) != "protocol":
        return {}
    from verifier.analysis.protocol import load_rule

    return load_rule(check.rule) or {}


def _rule_unaffected(mutant: Mutant, check) -> bool:
    """A rule asserting an absence cannot be falsified by removing code; a rule insensitive to an aspect (the
    dataset rule to split names) does not rest on what that drift changes."""
    rule = _rule_of(check)
    if mutant.operator in _REMOVALS and rule.get("asserts") == "absence":
        return True
    return _ASPECTS.get(mutant.operator, mutant.operator) in (rule.get("insensitive_to") or [])


def _relevant(mutant: Mutant, v: Verdict, checks: list) -> bool:
    """Does the mutant change code one of the SAU's checks rests on? Checks pair with their results in order."""
    results = list(v.checks)
    if len(checks) != len(results):  # no typed or compiled checks to pair with: judge on the whole verdict
        return _relevant_to(mutant, v.evidence, None, list(v.checks))
    return any(_relevant_to(mutant, r.evidence, c, [r]) for c, r in zip(checks, results))


def _relevant_to(mutant: Mutant, evidence, check, results: list) -> bool:
    if mutant.operator == "stub-body":
        roles = set(_STUB_ROLES)
    else:
        roles = set(_BEHAVIOUR_ROLES[mutant.dimension])
    if check is not None:
        if _rule_unaffected(mutant, check):
            return False
        if mutant.operator == "mean-sum-swap" and check.kind == "formula" and check.reduction == "strip":
            return False
        if mutant.dimension == "D1" and check.kind == "call" and not check.args:
            roles.discard("call")
        if mutant.operator == "out-of-loop" and check.kind == "order" and check.relation != "per-iteration":
            return False  # moving a step after its loop keeps a plain "A before B" order
        if mutant.dimension == "D1" and check.kind == "pattern" and not check.where:
            old = _old_constant(mutant)
            if old is not None and not any(_same_number(old, n) for n in _pattern_numbers(check)):
                return False  # a pattern with no `where` matches any value its `...` and `$X` stand for
        if mutant.dimension == "D1" and check.kind == "value":
            used = _chain_values(results)
            old = _old_constant(mutant)
            if used and old is not None and not any(_same_number(old, u) for u in used):
                return False  # another constant on the same line: not a value this claim resolved
    spans = [(e.line, e.end_line) for e in evidence if e.file == mutant.file and e.role in roles]

    def hit(lo: int, hi: int) -> bool:
        return any(a <= hi and lo <= b for a, b in spans)

    if mutant.operator == "swap-steps" and len(mutant.parts) == 2:
        return all(hit(lo, hi) for lo, hi in mutant.parts)
    return hit(mutant.line, mutant.end_line)


def _chain_values(results: list) -> list[float]:
    """Every number the value resolution used for these results (the effective binding and its chain)."""
    out: list[float] = []

    def add(value) -> None:
        if isinstance(value, bool):
            return
        if isinstance(value, (int, float)):
            out.append(float(value))
        elif isinstance(value, (list, tuple)):
            for item in value:
                add(item)

    for result in results:
        details = result.details if isinstance(result.details, dict) else {}
        for link in details.get("chain", []):
            if isinstance(link, dict):
                add(link.get("value"))
        for site in details.get("sites", []):  # `call` + `arg`: the argument's value at each call site
            if isinstance(site, dict):
                add(site.get("value"))
    return out


_NUMBER = re.compile(r"(?<![\w.$])\d[\d_]*(?:\.\d*)?(?:[eE][-+]?\d+)?")


def _pattern_numbers(check) -> list[float]:
    """The numbers a pattern check's own text spells out (`kernel_size=3` in `require`)."""
    texts = []
    for part in (check.require, check.forbid, check.inside):
        texts += part if isinstance(part, list) else [part] if part else []
    out = []
    for text in texts:
        for token in _NUMBER.findall(text):
            try:
                out.append(float(token.replace("_", "")))
            except ValueError:
                continue
    return out


def _old_constant(mutant: Mutant) -> float | None:
    head = mutant.description.split(" -> ", 1)[0]
    try:
        return float(head)
    except ValueError:
        return None


def _same_number(a: float, b: float) -> bool:
    return a == b or abs(a - b) <= 1e-9 * max(abs(a), abs(b))


def _checks_of(sau, loaded: LoadedSpec) -> list:
    """The checks a SAU's verdict ran, in result order: its typed checks, or what its free-text claim compiles to."""
    checks = sau.all_checks()
    if checks:
        return list(checks)
    from verifier.compiler import compile_claim

    try:
        aliases = {k: list(v) for k, v in loaded.spec.aliases.items()}
        return list(compile_claim(sau, aliases).checks)
    except Exception:  # the engine tolerates a compiler failure the same way: no checks, nothing to pair
        return []


def _regions(v: Verdict, root: Path, cache: dict) -> list[tuple[str, int, int]]:
    """Where a SAU's claim lives: its evidence lines, widened to the innermost enclosing function."""
    out = []
    for e in v.evidence:
        lo, hi = e.line, e.end_line
        spans = [s for s in _function_spans(root, e.file, cache) if s[0] <= e.line <= s[1]] if e.file.endswith(".py") else []
        if spans:
            inner = min(spans, key=lambda s: s[1] - s[0])
            lo, hi = min(lo, inner[0]), max(hi, inner[1])
        out.append((e.file, lo, hi))
    return out


def _rank(v: Verdict) -> float:
    return 0.0 if v.score is None else v.score


def _run_chunk(args) -> list[tuple[int, dict[str, tuple[str, float | None, list]]]]:
    """Worker: a private copy of the repo takes each mutant in turn."""
    repo, loaded, chunk = args
    results = []
    with tempfile.TemporaryDirectory(prefix="sau-verify-mutate-") as tmp:
        copy = Path(tmp) / "repo"
        shutil.copytree(repo, copy, symlinks=True, ignore=shutil.ignore_patterns(".git"))
        for mutant, new_source in chunk:
            target = copy / mutant.file
            original = target.read_bytes()
            target.write_text(new_source, encoding="utf-8")
            try:
                report = run_repo(copy, loaded=loaded, use_cache=True)
                results.append((mutant.id, {v.id: (v.status.value, v.score, v) for v in report.verdicts}))
            finally:
                target.write_bytes(original)
    return results


def mutate_repo(
    repo: Path,
    spec_path: Path | None = None,
    *,
    seed: int = 0,
    max_mutants: int = 100,
    operators: list[str] | None = None,
    jobs: int = 1,
    loaded: LoadedSpec | None = None,
) -> MutationReport:
    repo = Path(repo)
    loaded = loaded or load_for(repo, spec_path)
    ops = sorted(operators or OPERATORS)
    spec = loaded.spec
    index = build_index(repo, include=list(spec.repo.include), exclude=list(spec.repo.exclude), use_cache=True)
    original = run_repo(repo, loaded=loaded, index=index)
    index_files = sorted(
        p for p, f in index.files.items() if f.language == Language.python and f.role == FileRole.code
    )
    mutants, discarded = build_mutants(repo, index_files, ops, max_mutants, seed)
    chunks = [mutants[i::jobs] for i in range(jobs)] if jobs > 1 else [mutants]
    results: dict[int, dict] = {}
    if jobs > 1 and len(mutants) > 1:
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            for part in pool.map(_run_chunk, [(repo, loaded, c) for c in chunks if c]):
                results.update(dict(part))
    else:
        results.update(dict(_run_chunk((repo, loaded, mutants))))
    base = {v.id: v for v in original.verdicts}
    claimed = {sau.id: _checks_of(sau, loaded) for sau in loaded.spec.saus}
    cache: dict = {}
    base_regions = {sid: _regions(v, repo, cache) for sid, v in base.items()}
    outcomes = []
    for mutant, _ in mutants:
        outcome = MutantOutcome(mutant)
        for sid, (status, score, verdict) in sorted(results.get(mutant.id, {}).items()):
            old = base[sid]
            regions = base_regions[sid] + _regions(verdict, repo, cache)
            touches = any(f == mutant.file and lo <= mutant.end_line and mutant.line <= hi for f, lo, hi in regions)
            if _relevant(mutant, old, claimed.get(sid, [])):
                outcome.touched.append(sid)
            if status != old.status.value or score != old.score:
                outcome.changed.append(sid)
                if not touches:
                    outcome.false_alarms.append(sid)
            if _rank(verdict) < _rank(old) - 1e-9:
                outcome.caught_by.append(sid)
        outcomes.append(outcome)
    return MutationReport(str(repo), seed, sorted(base), outcomes, discarded)

"""Rule ``split-ratio``: the train/val/test fractions the code produces, composed across nested splits.

Sources: sklearn/HF ``train_test_split`` (``test_size``/``train_size``, default 0.25), ``random_split`` lengths
(fractions or counts, ``int(0.8 * len(ds))``), slicing by fraction or count (``X[:n_train]``), and split
settings in configs (``val_split: 0.1``) when the code reads them by name. Lengths are evaluated with
``len(dataset)`` as a free size, so ``n - int(0.9 * n)`` is 0.1 of the data.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

from verifier.analysis.protocol.common import (
    FileView,
    dotted,
    evidence,
    file_view,
    is_ml_text,
    leaf,
    own_statements,
    python_paths,
    scope_admits,
    search_text,
    sorted_evidence,
    target_names,
    text_of,
    tokens,
    views_mentioning,
)
from verifier.analysis.protocol.flow import call_source_kind
from verifier.analysis.protocol.values import Resolver, config_settings, option_settings
from verifier.results import CheckResult, Status

KIND = "protocol"
SIZE = 1_000_000.0  # stands for len(dataset) while folding lengths
SPLIT_WORDS = ("split", "[", "train_size", "test_size", "val_size")
_SPLIT_RE = re.compile(r"train_test_split|random_split|(train|test|val|valid|dev)\w*\s*=\s*[\w.]+\[[^\]\n]*:", re.IGNORECASE)
# Its branches apart ("valid..." is a "val..."): without the literal branches the regex engine can look for the last
# one's first letters only (3x faster), and the literals alone are `in` tests (see common.search_text).
_SPLIT_CALL_RE = re.compile(r"train_test_split|random_split", re.IGNORECASE)
_SLICED_SPLIT_RE = re.compile(r"(?:train|test|val|dev)\w*\s*=\s*[\w.]+\[[^\]\n]*:", re.IGNORECASE)


def _mentions_split(ctx, path: str) -> bool:
    """``search_text(ctx, path, _SPLIT_RE)``: a match of the alternation is a match of one of its branches."""
    return search_text(ctx, path, _SPLIT_CALL_RE) or search_text(ctx, path, _SLICED_SPLIT_RE)


def part_kind(name: str) -> str | None:
    toks = tokens(name.rsplit(".", 1)[-1])
    for kind, starts in (("test", ("test", "tst", "holdout")), ("val", ("val", "dev", "valid")), ("train", ("train", "tr"))):
        for t in toks:
            if t.startswith(starts) and not t.startswith("valu") and t not in ("trainer", "true", "tree", "transform"):
                return kind
    return None


@dataclass
class Part:
    name: str
    kind: str
    fraction: float | None
    count: float | None
    root: str
    line: int


@dataclass
class SplitSite:
    file: str
    line: int
    end_line: int
    root: str
    parts: list[Part] = field(default_factory=list)
    how: str = ""
    sources: list = field(default_factory=list)  # settings the sizes were resolved through (`--val-fraction`)


def _resolve(ctx, view: FileView, body, node, line, sources: list | None = None) -> tuple[float | None, bool]:
    resolver = Resolver(ctx, view, body, length=SIZE)
    value = resolver.value(node, line=line)
    if sources is not None:
        sources.extend(resolver.trail)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None, False
    return float(value), resolver.used_length


def _sites_in(ctx, view: FileView, qual: str, body: list[ast.stmt]) -> list[SplitSite]:
    sites: list[SplitSite] = []
    slices: dict[str, SplitSite] = {}
    for stmt in own_statements(body):
        if not isinstance(stmt, (ast.Assign, ast.AnnAssign)) or stmt.value is None:
            continue
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        names = [n for t in targets for n in target_names(t)]
        value = stmt.value
        if isinstance(value, ast.Call) and leaf(dotted(value.func) or "") == "train_test_split":
            site = _train_test_split(ctx, view, body, value, names)
            if site:
                sites.append(site)
        elif isinstance(value, ast.Call) and leaf(dotted(value.func) or "") == "random_split":
            site = _random_split(ctx, view, body, value, names)
            if site:
                sites.append(site)
        elif isinstance(value, ast.Subscript) and isinstance(value.slice, ast.Slice) and names:
            kind = part_kind(names[0])
            base = dotted(value.value)
            if not kind or not base:
                continue
            lower, lo_len = (0.0, False) if value.slice.lower is None else _resolve(ctx, view, body, value.slice.lower, stmt.lineno)
            upper, up_len = (SIZE, True) if value.slice.upper is None else _resolve(ctx, view, body, value.slice.upper, stmt.lineno)
            if lower is None or upper is None:
                continue
            if value.slice.upper is not None and upper < 0:
                upper, up_len = SIZE + upper, True
            relative = lo_len or up_len
            site = slices.setdefault(base, SplitSite(view.path, stmt.lineno, stmt.lineno, base, how=f"slices of `{base}`"))
            site.end_line = max(site.end_line, stmt.end_lineno or stmt.lineno)
            width = upper - lower
            site.parts.append(Part(names[0], kind, width / SIZE if relative else None, None if relative else width, base, stmt.lineno))
    for site in slices.values():
        if len({p.kind for p in site.parts}) >= 2:
            sites.append(site)
    return sites



def _train_test_split(ctx, view, body, call: ast.Call, names: list[str]) -> SplitSite | None:
    kw = {k.arg: k.value for k in call.keywords if k.arg}
    root = dotted(call.args[0]) if call.args else (dotted(call.func.value) if isinstance(call.func, ast.Attribute) else None)
    if isinstance(call.func, ast.Attribute) and not call.args:
        root = dotted(call.func.value)  # HF: ds.train_test_split(test_size=...)
    test, train = None, None
    sources: list = []
    if "test_size" in kw:
        test, _ = _resolve(ctx, view, body, kw["test_size"], call.lineno, sources)
    if "train_size" in kw:
        train, _ = _resolve(ctx, view, body, kw["train_size"], call.lineno, sources)
    if test is None and train is None:
        if "test_size" in kw or "train_size" in kw:
            return None
        test = 0.25  # library default (sklearn and HF datasets)
    if test is None and train is not None:
        test = (1 - train) if train <= 1 else None
    if train is None and test is not None:
        train = (1 - test) if test <= 1 else None
    site = SplitSite(view.path, call.lineno, call.end_lineno or call.lineno, root or "?", how="`train_test_split`",
                     sources=sources)
    first = names[0] if names else "train"
    second = names[1] if len(names) > 1 else "test"
    counts = test is not None and test > 1
    site.parts.append(Part(first, part_kind(first) or "train", None if counts else train, train if counts else None, root or "?", call.lineno))
    second_kind = part_kind(second) or "test"
    if second_kind == "train":
        second_kind = "test"
    site.parts.append(Part(second, second_kind, None if counts else test, test if counts else None, root or "?", call.lineno))
    return site


def _random_split(ctx, view, body, call: ast.Call, names: list[str]) -> SplitSite | None:
    lengths = call.args[1] if len(call.args) > 1 else next((k.value for k in call.keywords if k.arg == "lengths"), None)
    root = dotted(call.args[0]) if call.args else None
    if not isinstance(lengths, (ast.List, ast.Tuple)):
        return None
    sources: list = []
    values = [_resolve(ctx, view, body, e, call.lineno, sources) for e in lengths.elts]
    if any(v is None for v, _ in values):
        return None
    nums = [v for v, _ in values]
    relative = any(r for _, r in values)
    fractions_given = not relative and abs(sum(nums) - 1.0) < 1e-6
    default_kinds = ["train", "val", "test"] if len(nums) == 3 else ["train", "val"]
    site = SplitSite(view.path, call.lineno, call.end_lineno or call.lineno, root or "?", how="`random_split`",
                     sources=sources)
    total = sum(nums) or 1.0
    for i, num in enumerate(nums):
        name = names[i] if i < len(names) else f"part{i}"
        kind = part_kind(name) or (default_kinds[i] if i < len(default_kinds) else "test")
        if relative:
            frac, count = num / SIZE, None
        elif fractions_given:
            frac, count = num, None
        else:
            frac, count = num / total, num
        site.parts.append(Part(name, kind, frac, count, root or "?", call.lineno))
    return site


def find_sites(ctx, scope: str | None) -> list[SplitSite]:
    sites = []
    for path in python_paths(ctx, scope):
        text = text_of(ctx, path)
        if "train_test_split" not in text and "random_split" not in text:
            if not (is_ml_text(ctx, path) or "numpy" in text or "pandas" in text) or not _mentions_split(ctx, path):
                continue
        view = file_view(ctx, path)
        if view is None:
            continue
        bodies = [("<module>", view.tree.body)] + [(q, f.node.body) for q, f in sorted(view.functions.items())]
        for qual, body in bodies:
            if qual != "<module>" and not scope_admits(scope, qual):
                continue
            body = [s for s in body if not isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))] if qual == "<module>" else body
            sites.extend(_sites_in(ctx, view, qual, body))
    return sites


def compose(sites: list[SplitSite]) -> list[tuple[dict[str, float], dict[str, float], list[SplitSite]]]:
    """Fractions (and counts) per split kind from each top-level root, following re-split parts."""
    by_root: dict[str, list[SplitSite]] = {}
    for site in sites:
        by_root.setdefault(site.root, []).append(site)
    part_names = {p.name for s in sites for p in s.parts}
    results = []
    for root, root_sites in sorted(by_root.items()):
        if root in part_names:
            continue  # a re-split of an earlier part: handled from its top root

        fractions: dict[str, float] = {}
        counts: dict[str, float] = {}
        used: list[SplitSite] = []
        _expand(root_sites[0], 1.0, by_root, fractions, counts, used)
        results.append((fractions, counts, used))
    return results


def _expand(site: SplitSite, scale: float | None, by_root, fractions: dict, counts: dict, used: list, depth: int = 0) -> None:
    """Accumulate leaf parts' fractions of the root; a part that is split again is replaced by its parts."""
    used.append(site)
    for part in site.parts:
        child = by_root.get(part.name)
        frac = None if part.fraction is None or scale is None else part.fraction * scale
        if child and depth < 5:
            _expand(child[0], frac, by_root, fractions, counts, used, depth + 1)
            continue
        if frac is not None:
            fractions[part.kind] = fractions.get(part.kind, 0.0) + frac
        if part.count is not None:
            counts[part.kind] = counts.get(part.kind, 0.0) + part.count


def _setting_fractions(ctx) -> tuple[dict[str, float], list]:
    fractions: dict[str, float] = {}
    where = []
    for s in config_settings(ctx) + option_settings(ctx):
        toks = tokens(s.name)
        if not toks or not set(toks) & {"ratio", "split", "size", "frac", "fraction", "pct", "percent", "proportion"}:
            continue
        kind = part_kind(s.name)
        if kind and isinstance(s.value, (int, float)) and not isinstance(s.value, bool) and 0 < s.value < 1:
            fractions.setdefault(kind, float(s.value))
            where.append(s)
    if fractions and "train" not in fractions and sum(fractions.values()) < 1:
        fractions["train"] = 1.0 - sum(fractions.values())
    return fractions, where


def _external_kinds(ctx, scope) -> set[str]:
    kinds = set()
    words = ("split=", "train=", "[\"test\"]", "['test']", "subset=", "is_train=")
    for view in views_mentioning(ctx, words, scope, ml_only=True):
        for call in view.calls:
            kind = call_source_kind(call.node)
            if kind:
                kinds.add(kind)
    return kinds


def _judge(expect: dict[str, float], got: dict[str, float], tol: float, external: set[str]):
    """(score or None for a mismatch, message, max deviation)."""
    keys = [k for k in ("train", "val", "test") if k in expect]
    covered = [k for k in keys if k in got]
    missing = [k for k in keys if k not in got and k not in external]
    if not covered:
        return None, "no split of the claimed parts", 1.0
    exp_total = sum(expect[k] for k in covered) or 1.0
    got_total = sum(got[k] for k in covered) or 1.0
    renorm = len(covered) < len(keys)
    deviations = {k: abs(expect[k] / exp_total - got[k] / got_total) if renorm else abs(expect[k] - got[k]) for k in covered}
    worst = max(deviations.values())
    shown = ", ".join(f"{k}={got[k]:.3g}" for k in covered)
    claimed = ", ".join(f"{k}={expect[k]:.3g}" for k in covered)
    note = f" (relative to the {'+'.join(covered)} portion)" if renorm else ""
    if missing:
        return 0.5, f"no {'/'.join(missing)} split; code gives {shown}{note}", worst
    if worst <= tol + 1e-9:
        return 1.0, f"split {shown}{note} matches {claimed}", worst
    if worst <= 0.05 + tol:
        return 0.75, f"split {shown}{note} is slightly off the claimed {claimed}", worst
    return None, f"split {shown}{note} contradicts the claimed {claimed}", worst


def evaluate(params: dict, ctx, scope: str | None, rule: dict) -> CheckResult:
    expect = {k: float(v) for k, v in params["expect"].items()}
    tol = float(params.get("tolerance", 0.01))
    counts_claimed = any(v > 1 for v in expect.values())
    sites = find_sites(ctx, scope)
    external = _external_kinds(ctx, scope)
    candidates = []
    for fractions, counts, used in compose(sites):
        got = counts if counts_claimed else fractions
        if not got:
            continue
        if counts_claimed:
            rel = {k: (expect[k] and abs(got[k] - expect[k]) / expect[k]) for k in expect if k in got}
            worst = max(rel.values()) if rel else 1.0
            missing = [k for k in expect if k not in got and k not in external]
            shown = ", ".join(f"{k}={int(got[k])}" for k in sorted(got))
            if missing:
                score, msg = 0.5, f"no {'/'.join(missing)} split; code gives {shown}"
            elif worst <= tol:
                score, msg = 1.0, f"split {shown} matches"
            elif worst <= 0.1:
                score, msg = 0.75, f"split {shown} is slightly off"
            else:
                score, msg = None, f"split {shown} contradicts the claim"
        else:
            score, msg, worst = _judge(expect, got, tol, external)
        ev = [evidence(ctx, s.file, s.line, "rule", end=s.end_line, note=s.how) for s in used]
        ev += [evidence(ctx, src.file, src.line, "source", note=f"`{src.path}` = {src.value!r}")
               for s in used for src in s.sources]
        candidates.append((-(score if score is not None else -1), worst, msg, score, ev))
    if not candidates:
        fractions, where = _setting_fractions(ctx)
        if fractions and not counts_claimed:
            score, msg, worst = _judge(expect, fractions, tol, external)
            ev = [evidence(ctx, s.file, s.line, "effective") for s in where]
            candidates.append((-(score if score is not None else -1), worst, msg + " (from settings)", score, ev))
    if not candidates:
        if external & set(expect):
            return CheckResult.unverified(KIND, "the data comes in the dataset's predefined splits "
                                          f"({', '.join(sorted(external))}); their sizes are not in the code")
        return CheckResult.failed(KIND, Status.missing, "no train/val/test split found", [])
    candidates.sort(key=lambda c: (c[0], c[1], c[2]))
    _, _, msg, score, ev = candidates[0]
    ev = sorted_evidence(ev)
    if score is None:
        return CheckResult.failed(KIND, Status.mismatch, msg, ev)
    if score == 1.0:
        return CheckResult.passed(KIND, msg, ev)
    return CheckResult.partial(KIND, score, msg, ev)

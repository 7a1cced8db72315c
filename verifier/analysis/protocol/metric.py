"""Rule ``metric``: the named metric is computed, by a library API or a local implementation that is real."""

from __future__ import annotations

import ast
from dataclasses import dataclass

from verifier.analysis.protocol.common import (
    const_str,
    dotted,
    evidence,
    norm,
    scope_admits,
    sorted_evidence,
    target_names,
    tokens,
    views_mentioning,
)
from verifier.analysis.taxonomy import classify_node, mentions
from verifier.results import CheckResult, Status

KIND = "protocol"


def metric_entry(rule: dict, name: str) -> dict:
    key = norm(name)
    for entry in rule.get("lexicon", {}).get("metrics", []):
        if key in {norm(a) for a in [entry["name"]] + list(entry.get("aliases", []))}:
            return entry
    return {"name": name, "aliases": [name], "apis": [], "strings": [name]}


def name_matches(name: str, alias_norms: set[str]) -> bool:
    """``compute_fid`` matches alias "fid"; ``frechet_inception_distance`` matches "frechetinceptiondistance"."""
    toks = tokens(name)
    for i in range(len(toks)):
        for j in range(i + 1, min(len(toks), i + 4) + 1):
            if "".join(toks[i:j]) in alias_norms:
                return True
    return False


@dataclass(frozen=True)
class Found:
    rank: int  # lower is stronger
    status: str  # pass | partial | stub
    score: float
    message: str
    file: str
    line: int
    end_line: int
    role: str = "rule"
    extra: tuple = ()


def find(ctx, scope: str | None, rule: dict, expect: str) -> list[Found]:
    entry = metric_entry(rule, expect)
    aliases = {norm(a) for a in [entry["name"]] + list(entry.get("aliases", [])) if norm(a)}
    apis = [a for a in entry.get("apis", [])]
    strings = {norm(s) for s in entry.get("strings", [])} | aliases
    loaders = set(rule.get("lexicon", {}).get("string_loaders", ["load", "load_metric"]))
    words = {entry["name"]} | set(entry.get("aliases", [])) | {a.rsplit(".", 1)[-1] for a in apis}
    words = {w for w in words if len(w) >= 2}
    out: list[Found] = []
    for view in views_mentioning(ctx, sorted(words | {w.lower() for w in words}), scope):
        for call in view.calls:
            if not scope_admits(scope, call.scope):
                continue
            if any(call.qual == a or call.qual.endswith("." + a) or call.name.endswith(a) for a in apis):
                out.append(Found(0, "pass", 1.0, f"{entry['name']} computed by `{call.name}`", view.path, call.line, call.end_line))
            elif call.leaf in loaders:
                arg = const_str(call.node.args[0]) if call.node.args else None
                if arg and norm(arg.rsplit("/", 1)[-1]) in strings:
                    out.append(Found(0, "pass", 1.0, f"{entry['name']} loaded by `{call.name}({arg!r})`", view.path,
                                     call.line, call.end_line))
        for qual, fn in sorted(view.functions.items()):
            if not name_matches(fn.name, aliases) or not scope_admits(scope, qual):
                continue
            tax = classify_node(ctx, view.path, fn.node, qual)
            line, end = fn.node.lineno, fn.node.lineno
            if tax.category == "implemented":
                out.append(Found(1, "pass", 1.0, f"{entry['name']} implemented in `{qual}`", view.path, line, end, "definition"))
            elif tax.category == "stub":
                out.append(Found(4, "stub", 0.0, f"`{qual}` is a placeholder ({tax.reason})", view.path, line,
                                 fn.node.end_lineno or line, "stub"))
            else:
                out.append(Found(3, "partial", tax.cap, f"`{qual}` computes {entry['name']} but {tax.reason}",
                                 view.path, line, end, "definition", tax.evidence))
        out.extend(_assignments(view, aliases, entry["name"], scope))
    return sorted(out, key=lambda f: (f.rank, f.file, f.line))


def _assignments(view, aliases: set[str], metric: str, scope) -> list[Found]:
    """``ppl = math.exp(loss)`` / ``acc = correct / total``: a metric computed inline (a literal is a stub)."""
    values: dict[str, list[ast.AST]] = {}
    for node in ast.walk(view.tree):
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for name in (n for t in targets for n in target_names(t)):
                leafname = name.rsplit(".", 1)[-1]
                if name_matches(leafname, aliases):
                    values.setdefault(leafname, []).append(node)
    out = []
    for name, nodes in sorted(values.items()):
        computed = [n for n in nodes if isinstance(n, ast.AugAssign) or _computes(n.value, aliases, view.imports)]
        if computed:
            n = computed[-1]
            out.append(Found(2, "pass", 1.0, f"{metric} computed inline as `{name}`", view.path, n.lineno,
                             n.end_lineno or n.lineno))
        elif all(isinstance(n.value, ast.Constant) for n in nodes):
            n = nodes[0]
            out.append(Found(5, "stub", 0.0, f"`{name}` is set to a literal and never computed", view.path, n.lineno,
                             n.lineno, "stub"))
    return out


def _computes(value: ast.AST, aliases: set[str], imports: dict[str, str]) -> bool:
    """Arithmetic or a library math call on names; a bare call of some other function only delegates."""
    local = False
    for n in ast.walk(value):
        if isinstance(n, ast.Call):
            callee = n.func.attr if isinstance(n.func, ast.Attribute) else getattr(n.func, "id", "")
            if callee and name_matches(callee, aliases):
                return False  # delegates to a metric function: that definition decides
            root = (dotted(n.func) or "").split(".")[0]
            if root in imports:
                local = True
        elif isinstance(n, (ast.BinOp, ast.Compare, ast.UnaryOp)):
            local = True
    return local and any(isinstance(n, ast.Name) for n in ast.walk(value))


def evaluate(params: dict, ctx, scope: str | None, rule: dict) -> CheckResult:
    expect = str(params["expect"])
    entry = metric_entry(rule, expect)
    found = find(ctx, scope, rule, expect)
    if found:
        best = found[0]
        ev = [evidence(ctx, best.file, best.line, best.role, end=best.end_line)] + list(best.extra)
        ev += [evidence(ctx, f.file, f.line, f.role, end=f.end_line) for f in found[1:3] if f.status == best.status]
        if best.status == "pass":
            return CheckResult.passed(KIND, best.message, sorted_evidence(ev))
        if best.status == "partial":
            return CheckResult.partial(KIND, best.score, best.message, sorted_evidence(ev), taxonomy="unwired-or-unrunnable")
        return CheckResult.failed(KIND, Status.stub, best.message, sorted_evidence(ev))
    seen = mentions(ctx, [entry["name"]] + [a for a in entry.get("aliases", []) if len(a) > 3])
    if seen:
        return CheckResult.failed(KIND, Status.missing, f"{entry['name']} is only mentioned; nothing computes it", seen,
                                  taxonomy="mention")
    return CheckResult.failed(KIND, Status.missing, f"nothing computes {entry['name']}", [])

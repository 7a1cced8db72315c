"""Rule ``baseline``: a named baseline / method variant is implemented and actually run by the experiment.

"Run" means a reachable call of the implementation, or a registry/dispatch entry for it whose key is what a
launch flag, a shell loop, a config value or an option default actually selects. Defining a baseline that no
experiment selects is the common failure of generated repos, so it is reported, not passed.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, replace

from verifier.analysis.protocol.common import (
    const_str,
    dotted,
    evidence,
    nodes_of,
    norm,
    scope_admits,
    sorted_evidence,
    text_of,
    views_mentioning,
)
from verifier.analysis.protocol.metric import name_matches
from verifier.analysis.protocol.reach import reach
from verifier.analysis.protocol.values import config_settings, option_settings
from verifier.analysis.taxonomy import classify_node, mentions
from verifier.index.facts import Language
from verifier.results import CheckResult, Status

KIND = "protocol"
_SHELL_FOR = re.compile(r"^\s*for\s+\w+\s+in\s+(.+?)\s*(?:;\s*do\b.*)?$")


@dataclass(frozen=True)
class Impl:
    file: str
    qualname: str
    node: ast.AST


def _names(params: dict, rule: dict) -> list[str]:
    names = [params["name"]] + list(params.get("aliases") or [])
    for entry in rule.get("lexicon", {}).get("baselines", []):
        if norm(params["name"]) in {norm(a) for a in [entry["name"]] + entry.get("aliases", [])}:
            names += [entry["name"]] + entry.get("aliases", [])
    return names


def _aliases(params: dict, rule: dict) -> set[str]:
    return {norm(n) for n in _names(params, rule) if norm(n)}


def _apis(params: dict, rule: dict) -> list[str]:
    for entry in rule.get("lexicon", {}).get("baselines", []):
        if norm(params["name"]) in {norm(a) for a in [entry["name"]] + entry.get("aliases", [])}:
            return list(entry.get("apis", []))
    return []


def run_values(ctx) -> dict[str, tuple[str, int]]:
    """Normalised string values an experiment run actually selects -> where."""
    out: dict[str, tuple[str, int]] = {}

    def add(value, file, line):
        if isinstance(value, str):
            out.setdefault(norm(value), (file, line))
        elif isinstance(value, list):
            for v in value:
                if isinstance(v, str):
                    out.setdefault(norm(v), (file, line))

    for s in option_settings(ctx) + config_settings(ctx):
        add(s.value, s.file, s.line)
    for path, facts in sorted(ctx.index.files.items()):
        if facts.language != Language.shell:
            continue
        for i, line in enumerate(text_of(ctx, path).splitlines(), 1):
            m = _SHELL_FOR.match(line)
            if m:
                for word in m.group(1).replace('"', " ").split():
                    if not word.startswith("$"):
                        out.setdefault(norm(word), (path, i))
    return out


def _dispatch_keys(view, impl_names: set[str]) -> list[tuple[str, int]]:
    """String keys that select one of ``impl_names``: registry dicts and ``if method == "x":`` branches."""
    out = []
    for node in ast.walk(view.tree):
        if isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values):
                text = const_str(key)
                target = dotted(value.func if isinstance(value, ast.Call) else value) or ""
                if text and target.rsplit(".", 1)[-1] in impl_names:
                    out.append((text, key.lineno))
        elif isinstance(node, ast.If) and isinstance(node.test, ast.Compare):
            texts = [const_str(x) for x in [node.test.left] + list(node.test.comparators)]
            called = {(dotted(c.func) or "").rsplit(".", 1)[-1] for s in node.body for c in ast.walk(s) if isinstance(c, ast.Call)}
            if called & impl_names:
                out.extend((t, node.lineno) for t in texts if t)
    return out


def evaluate(params: dict, ctx, scope: str | None, rule: dict) -> CheckResult:
    aliases = _aliases(params, rule)
    apis = _apis(params, rule)
    name = params["name"]
    words = sorted(set(_names(params, rule)) | {a.rsplit(".", 1)[-1] for a in apis})
    lowered = sorted({w.lower() for w in words} | set(words) | {w.replace("-", "_") for w in words})
    views = views_mentioning(ctx, lowered, scope)
    impls: list[tuple[Impl, object]] = []
    api_calls = []
    for view in views:
        for qual, fn in sorted(view.functions.items()):
            if name_matches(fn.name, aliases) and scope_admits(scope, qual):
                impls.append((Impl(view.path, qual, fn.node), None))
        for node in nodes_of(ctx, view, (ast.ClassDef,)):
            if name_matches(node.name, aliases):
                impls.append((Impl(view.path, node.name, node), None))
        for call in view.calls:
            if apis and any(call.qual.endswith(a) or call.name.endswith(a) for a in apis):
                api_calls.append(call)
    impls = [(i, classify_node(ctx, i.file, i.node, i.qualname)) for i, _ in impls]
    real = [(i, t) for i, t in impls if t.category != "stub"]
    values = run_values(ctx)
    graph = reach(ctx) if (api_calls or impls) else None
    for call in api_calls:
        if graph.reaches(call.file, call.scope):
            return CheckResult.passed(KIND, f"baseline {name} runs via `{call.name}`",
                                      [evidence(ctx, call.file, call.node, "call")])
    impl_names = {i.node.name for i, _ in real}
    for impl, tax in real:
        defn = evidence(ctx, impl.file, impl.node, "definition")
        for view in views_mentioning(ctx, [impl.node.name]):
            for call in view.calls:
                if call.leaf == impl.node.name and graph.reaches(view.path, call.scope) and call.scope != impl.qualname:
                    if tax.category == "unrunnable":
                        return CheckResult.partial(KIND, tax.cap, f"baseline {name} is run but {tax.reason}",
                                                   sorted_evidence([defn, evidence(ctx, view.path, call.node, "call"), *tax.evidence]))
                    return CheckResult.passed(KIND, f"baseline {name} ({impl.qualname}) is run from {view.path}:{call.line}",
                                              sorted_evidence([defn, evidence(ctx, view.path, call.node, "call")]))
            for key, line in _dispatch_keys(view, impl_names):
                if norm(key) in aliases and norm(key) in values:
                    where = values[norm(key)]
                    return CheckResult.passed(
                        KIND, f"baseline {name} selected as {key!r} by {where[0]}:{where[1]}",
                        sorted_evidence([defn, evidence(ctx, view.path, line, "rule"), evidence(ctx, where[0], where[1], "effective")]),
                    )
    if real:
        impl, tax = real[0]
        return CheckResult.partial(
            KIND, 0.5, f"baseline {name} is implemented ({impl.file}:{impl.node.lineno}) but no experiment runs it",
            sorted_evidence([evidence(ctx, impl.file, impl.node, "definition"), *tax.evidence]), taxonomy="unwired",
        )
    if impls:
        impl, tax = impls[0]
        return CheckResult.failed(KIND, Status.stub, f"baseline {name} is a placeholder ({tax.reason})",
                                  sorted_evidence([evidence(ctx, impl.file, impl.node.lineno, "stub",
                                                            end=getattr(impl.node, "end_lineno", None))]))
    loaded = _loaded_model(name, ctx, scope)
    if loaded is not None:
        return loaded
    seen = mentions(ctx, words)
    if seen:
        return CheckResult.failed(KIND, Status.missing, f"baseline {name} is only mentioned; nothing implements it", seen,
                                  taxonomy="mention")
    return CheckResult.failed(KIND, Status.missing, f"no implementation of baseline {name}", [])


def _loaded_model(name: str, ctx, scope: str | None) -> CheckResult | None:
    """A pretrained model compared as a baseline ("Pythia-1.4B", "OPT") runs by being loaded, not by a class of
    the repo's named after it: the model rule decides it (another size or tuning of the family is a mismatch).
    A loader whose model name cannot be read leaves a sized name undecided, not missing."""
    from verifier.analysis.protocol import load_rule
    from verifier.analysis.protocol import model as model_rule

    result = model_rule.evaluate({"expect": name}, ctx, scope, load_rule("model") or {})
    if result.status in (Status.pass_, Status.mismatch):
        return replace(result, message=f"baseline {name}: {result.message}")
    if result.status is Status.unverified and model_rule.sized(name):
        return replace(result, message=f"baseline {name} may be loaded as a pretrained model: {result.message}")
    return None

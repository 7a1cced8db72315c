"""Rule ``dataset``: the named dataset is loaded (torchvision / torchtext / tfds / HF ``load_dataset`` / keras /
sklearn / configs), with the aliases of rules/protocol/dataset.yaml ("CIFAR-10" = ``CIFAR10`` = ``cifar10``)."""

from __future__ import annotations

import ast
from dataclasses import dataclass

from verifier.analysis.protocol.common import (
    const_str,
    evidence,
    file_view,
    leaf,
    norm,
    python_paths,
    scope_admits,
    sorted_evidence,
)
from verifier.analysis.protocol.values import config_settings, option_settings
from verifier.analysis.taxonomy import mentions
from verifier.results import CheckResult, Status

KIND = "protocol"


@dataclass(frozen=True)
class Load:
    dataset: str  # canonical name (or the normalised text when unknown)
    file: str
    line: int
    end_line: int
    how: str
    dynamic: bool = False  # a loader whose dataset name comes from a setting


def alias_table(rule: dict) -> dict[str, str]:
    """normalised alias -> canonical name."""
    table: dict[str, str] = {}
    for entry in rule.get("lexicon", {}).get("datasets", []):
        canon = entry["name"]
        for alias in [canon] + list(entry.get("aliases", [])):
            table.setdefault(norm(alias), canon)
    return table


def canonical(name: str, table: dict[str, str]) -> str:
    return table.get(norm(name), name)


def _candidate_views(ctx, scope, table: dict[str, str], loaders: set[str]) -> list:
    """Files that name a known dataset or call a loader, decided from the index facts when it has them (no
    parse); a hand-built index without facts falls back to parsing every file."""
    paths = python_paths(ctx, scope)
    if any(f.calls or f.reads for f in ctx.index.files.values()):
        loaders = loaders - {"make"}
        keep = []
        for path in paths:
            facts = ctx.index.files[path]
            reads = facts.reads
            dynamic = ({"getattr"} if "datasets" in reads else set()) | ({"make"} if reads & {"gym", "gymnasium"} else set())
            if any(leaf(c.callee) in loaders or leaf(c.callee) in dynamic or leaf(c.callee).startswith(("load_", "fetch_"))
                   for c in facts.calls) or any(norm(r) in table for r in reads):
                keep.append(path)
        paths = keep
    return [v for p in paths if (v := file_view(ctx, p)) is not None]


def find_loads(ctx, scope: str | None, rule: dict) -> list[Load]:
    lex = rule.get("lexicon", {})
    table = alias_table(rule)
    string_loaders = set(lex.get("string_loaders", []))
    modules = tuple(lex.get("dataset_modules", []))
    out: list[Load] = []
    for view in _candidate_views(ctx, scope, table, string_loaders):
        for call in view.calls:
            if not scope_admits(scope, call.scope):
                continue
            key = norm(call.leaf)
            if key in table and (call.qual.startswith(modules) or call.leaf[:1].isupper() or "datasets" in call.qual):
                out.append(Load(table[key], view.path, call.line, call.end_line, f"`{call.name}(...)`"))
                continue
            if call.leaf.startswith(("load_", "fetch_")) and norm(call.leaf[5:] if call.leaf.startswith("load_") else call.leaf[6:]) in table:
                name = table[norm(call.leaf.split("_", 1)[1])]
                out.append(Load(name, view.path, call.line, call.end_line, f"`{call.name}()`"))
                continue
            if call.leaf in string_loaders or call.qual.endswith(tuple("." + s for s in string_loaders)):
                args = [call.node.args[i] for i in range(min(2, len(call.node.args)))]
                args += [kw.value for kw in call.node.keywords if kw.arg in ("path", "name", "dataset", "data_dir", "root")]
                texts = [t for t in (const_str(a) for a in args) if t]
                matched = None
                for text in reversed(texts):
                    pieces = [text] + text.replace("\\", "/").split("/")
                    for piece in pieces:
                        if norm(piece) in table:
                            matched = table[norm(piece)]
                            break
                    if matched:
                        break
                if matched:
                    out.append(Load(matched, view.path, call.line, call.end_line, f"`{call.name}({texts[0]!r}...)`"))
                elif not texts and args:
                    out.append(Load("", view.path, call.line, call.end_line, f"`{call.name}(<setting>)`", dynamic=True))
            elif call.name == "getattr" and len(call.node.args) >= 2 and "datasets" in (ast.unparse(call.node.args[0])):
                out.append(Load("", view.path, call.line, call.end_line, "`getattr(datasets, <setting>)`", dynamic=True))
        # A registry / dispatch on a dataset-name string: {"cifar10": CIFAR10, ...} or `if name == "cifar10":`.
        for node in ast.walk(view.tree):
            keys: list[ast.expr] = []
            if isinstance(node, ast.Dict):
                keys = [k for k in node.keys if k is not None]
            elif isinstance(node, ast.Compare):
                keys = [node.left] + list(node.comparators)
            for key in keys:
                text = const_str(key)
                if text and norm(text) in table:
                    out.append(Load(table[norm(text)], view.path, key.lineno, key.lineno,
                                    f"dispatch on {text!r}", dynamic=True))
    return sorted(out, key=lambda l: (l.file, l.line, l.dataset))


def evaluate(params: dict, ctx, scope: str | None, rule: dict) -> CheckResult:
    table = alias_table(rule)
    expect = str(params["expect"])
    want = canonical(expect, table)
    loads = find_loads(ctx, scope, rule)
    direct = [l for l in loads if l.dataset == want and not l.dynamic]
    if direct:
        ev = [evidence(ctx, l.file, l.line, "rule", end=l.end_line) for l in direct[:4]]
        return CheckResult.passed(KIND, f"{want} loaded via {direct[0].how} ({direct[0].file}:{direct[0].line})",
                                  sorted_evidence(ev))
    dynamic_loaders = [l for l in loads if l.dynamic and not l.dataset]
    dispatch = [l for l in loads if l.dynamic and l.dataset == want]
    settings = [s for s in config_settings(ctx) + option_settings(ctx)
                if isinstance(s.value, str) and canonical(s.value, table) == want
                and any(t in s.name.lower() for t in ("data", "task", "name", "corpus", "benchmark", "env"))]
    if (settings or dispatch) and (dynamic_loaders or dispatch):
        ev = [evidence(ctx, s.file, s.line, "effective") for s in settings[:2]]
        ev += [evidence(ctx, l.file, l.line, "rule", end=l.end_line) for l in (dispatch + dynamic_loaders)[:3]]
        where = settings[0] if settings else dispatch[0]
        return CheckResult.passed(KIND, f"{want} selected by setting/dispatch ({where.file}:{where.line}) and loaded by name",
                                  sorted_evidence(ev))
    others = sorted({l.dataset for l in loads if l.dataset and l.dataset != want})
    if others:
        wrong = [l for l in loads if l.dataset in others and not l.dynamic] or [l for l in loads if l.dataset in others]
        ev = [evidence(ctx, l.file, l.line, "rule", end=l.end_line) for l in wrong[:4]]
        return CheckResult.failed(KIND, Status.mismatch, f"loads {', '.join(others)}, not {want}", sorted_evidence(ev),
                                  found=others)
    words = sorted({expect, want} | {a for a, c in table.items() if c == want and len(a) > 3})
    seen = mentions(ctx, words)
    if seen:
        return CheckResult.failed(KIND, Status.missing, f"{want} is only mentioned ({seen[0].file}:{seen[0].line}); "
                                  "nothing loads it", seen, taxonomy="mention")
    return CheckResult.failed(KIND, Status.missing, f"no code loads {want}", [])

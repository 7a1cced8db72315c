"""Small constant resolution for protocol rules: ``range(args.num_seeds)``, ``int(0.8 * len(ds))``.

Resolves a name through the enclosing function, the module, argparse/click defaults, config files and launch
flags (the launch flag wins, as at run time). Anything else is "unknown" (None): rules then say unverified
rather than guess.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass
from typing import Any

import yaml

from verifier.analysis.protocol.common import (
    FileView,
    dotted,
    leaf,
    per_node,
    text_of,
    views_mentioning,
    walk_list,
)
from verifier.index.facts import BindingKind, Language

MAX_DEPTH = 8
_LAUNCH_FLAG = re.compile(r"--([A-Za-z_][\w-]*)[ =]([^\s\\;]+)")


@dataclass(frozen=True, slots=True)
class Setting:
    name: str  # leaf key, dashes as underscores
    path: str  # dotted key path / option
    value: Any
    file: str
    line: int
    source: str  # config | argparse | launch | assign | binding


MAX_KEYS = 20_000  # YAML anchors can make a small file expand exponentially: stop counting there


def _flatten(data: Any) -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []
    stack: list[tuple[str, Any, int]] = [("", data, 0)]
    while stack and len(out) < MAX_KEYS:
        prefix, node, depth = stack.pop()
        if not isinstance(node, dict) or depth > 20:
            continue
        items = list(node.items())
        for key, value in items:
            path = f"{prefix}.{key}" if prefix else str(key)
            out.append((path, value))
        for key, value in reversed(items):
            if isinstance(value, dict):
                stack.append((f"{prefix}.{key}" if prefix else str(key), value, depth + 1))
    return out


def config_settings(ctx) -> list[Setting]:
    """Keys of the repo's YAML/JSON config files (safe_load only), with their line numbers."""

    def make() -> list[Setting]:
        out: list[Setting] = []
        for path, facts in sorted(ctx.index.files.items()):
            if facts.language not in (Language.yaml, Language.json) or facts.role.value != "code":
                continue
            text = text_of(ctx, path)
            if len(text) > 500_000:
                continue
            try:
                data = yaml.safe_load(text) if facts.language == Language.yaml else json.loads(text)
            except (yaml.YAMLError, ValueError, RecursionError):
                continue
            lines = text.splitlines()
            for key_path, value in _flatten(data):
                key = key_path.rsplit(".", 1)[-1]
                pattern = re.compile(rf"^\s*[\"']?{re.escape(key)}[\"']?\s*:")
                line = next((i for i, t in enumerate(lines, 1) if pattern.search(t)), 1)
                out.append(Setting(key.replace("-", "_"), key_path, value, path, line, "config"))
        return out

    return ctx.memo("protocol.config_settings", make)


def option_settings(ctx) -> list[Setting]:
    """argparse/click defaults and shell launch flags (scanned from the code so hand-built indexes work too)."""

    def make() -> list[Setting]:
        out: list[Setting] = []
        for view in views_mentioning(ctx, ("add_argument", "click.option", "@option")):
            for call in view.calls:
                if call.leaf not in ("add_argument", "option"):
                    continue
                flags = [a.value for a in call.node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
                longs = [f for f in flags if f.startswith("--")] or [f for f in flags if not f.startswith("-")]
                if not longs:
                    continue
                dest = call.kwarg("dest")
                name = (dest.value if isinstance(dest, ast.Constant) else longs[0].lstrip("-")).replace("-", "_")
                default = call.kwarg("default")
                value = literal(default) if default is not None else None
                out.append(Setting(name, name, value, view.path, call.line, "argparse"))
        for path, facts in sorted(ctx.index.files.items()):
            if facts.language != Language.shell:
                continue
            for i, text in enumerate(text_of(ctx, path).splitlines(), 1):
                if "python" not in text and "launch" not in text and "torchrun" not in text:
                    continue
                for match in _LAUNCH_FLAG.finditer(text):
                    out.append(Setting(match.group(1).replace("-", "_"), match.group(1), _scalar(match.group(2)),
                                       path, i, "launch"))
        return out

    return ctx.memo("protocol.option_settings", make)


def _scalar(text: str) -> Any:
    text = text.strip("\"'")
    for conv in (int, float):
        try:
            return conv(text)
        except ValueError:
            pass
    return text


def literal(node: ast.AST | None) -> Any:
    if node is None:
        return None
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None


def setting(ctx, name: str) -> Setting | None:
    """The effective value of a named setting: launch flag, then config, then option default; None if ambiguous."""
    key = name.replace("-", "_")
    candidates = [s for s in option_settings(ctx) + config_settings(ctx) if s.name == key and s.value is not None]
    for binding in _index_bindings(ctx, key):
        candidates.append(binding)
    for source in ("launch", "config", "argparse", "binding"):
        found = [s for s in candidates if s.source == source and not isinstance(s.value, dict)]
        values = {repr(s.value) for s in found}
        if len(values) == 1:
            return sorted(found, key=lambda s: (s.file, s.line))[0]
        if len(values) > 1:
            return None
    return None


def _index_bindings(ctx, key: str) -> list[Setting]:
    out = []
    try:
        bindings = ctx.index.bindings_named([key])
    except (AttributeError, TypeError):
        return out
    for b in bindings:
        if b.constant and b.kind in (BindingKind.field, BindingKind.click, BindingKind.default):
            out.append(Setting(b.name, b.path, b.value, b.span.file, b.span.line, "binding"))
    return out


def assigned_before(ctx, body: list[ast.stmt], name: str, before: int) -> ast.expr | None:
    """The value last assigned to ``name`` (a plain or tuple assignment, or an annotated one) in ``body`` before
    line ``before``, from a table of the body's assignments built once per body for the run."""
    if not body:
        return None
    tables: dict[int, tuple[list, dict]] = ctx.memo("protocol.values.assignments", dict)
    found = None
    for line, value in per_node(tables, body, lambda: _assignment_table(body)).get(name, ()):
        if line < before:
            found = value
    return found


def _assignment_table(body: list[ast.stmt]) -> dict[str, list[tuple[int, ast.expr]]]:
    """name -> (line, value) of every assignment in ``body``, nested ones too, in ``ast.walk`` order."""
    table: dict[str, list[tuple[int, ast.expr]]] = {}
    for stmt in body:
        for sub in walk_list(stmt):  # ast.walk's order; it leaves out only nodes without fields
            if isinstance(sub, ast.Assign):
                for target in sub.targets:
                    chain = dotted(target)
                    if chain is not None:
                        table.setdefault(chain, []).append((sub.lineno, sub.value))
                    elif isinstance(target, ast.Tuple) and isinstance(sub.value, ast.Tuple):
                        for t, v in zip(target.elts, sub.value.elts):
                            inner = dotted(t)
                            if inner is not None:
                                table.setdefault(inner, []).append((sub.lineno, v))
            elif isinstance(sub, ast.AnnAssign) and sub.value is not None:
                chain = dotted(sub.target)
                if chain is not None:
                    table.setdefault(chain, []).append((sub.lineno, sub.value))
    return table


class Resolver:
    """Folds an expression to a number/list using the scope it sits in; ``len(x)`` stays a free symbol."""

    def __init__(self, ctx, view: FileView, fn_body: list[ast.stmt] | None, length: float | None = None):
        self.ctx = ctx
        self.view = view
        self.fn_body = fn_body or []
        self.length = length  # value substituted for len(dataset)
        self.used_length = False
        self.trail: list[Setting] = []

    def value(self, node: ast.AST | None, depth: int = 0, line: int | None = None) -> Any:
        if node is None or depth > MAX_DEPTH:
            return None
        line = line or getattr(node, "lineno", 10**9)
        if isinstance(node, ast.Constant):
            return node.value if isinstance(node.value, (int, float, str, bool)) else None
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            items = [self.value(e, depth + 1, line) for e in node.elts]
            return None if any(i is None for i in items) else items
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            v = self.value(node.operand, depth + 1, line)
            return -v if isinstance(v, (int, float)) else None
        if isinstance(node, ast.BinOp):
            a, b = self.value(node.left, depth + 1, line), self.value(node.right, depth + 1, line)
            if not isinstance(a, (int, float)) or not isinstance(b, (int, float)) or isinstance(a, bool) or isinstance(b, bool):
                return None
            try:
                if isinstance(node.op, ast.Add):
                    return a + b
                if isinstance(node.op, ast.Sub):
                    return a - b
                if isinstance(node.op, ast.Mult):
                    return a * b
                if isinstance(node.op, ast.Div):
                    return a / b
                if isinstance(node.op, ast.FloorDiv):
                    return a // b if not self.used_length else a / b
            except ZeroDivisionError:
                return None
            return None
        if isinstance(node, ast.Call):
            name = dotted(node.func) or ""
            if name in ("int", "round", "math.floor", "math.ceil", "float", "np.floor", "np.ceil", "math.trunc") and node.args:
                v = self.value(node.args[0], depth + 1, line)
                if not isinstance(v, (int, float)):
                    return None
                return v if self.used_length else (int(v) if name in ("int", "math.floor", "math.trunc") else v)
            if name == "len" and node.args:
                seq = self.value(node.args[0], depth + 1, line)
                if isinstance(seq, list):
                    return len(seq)
                if self.length is not None:
                    self.used_length = True
                    return self.length
                return None
            if name in ("range",) and node.args:
                bounds = [self.value(a, depth + 1, line) for a in node.args]
                if all(isinstance(b, int) for b in bounds) and len(bounds) <= 3:
                    r = range(*bounds)
                    return list(r) if len(r) <= 10_000 else None
                return None
            if name in ("list", "tuple") and node.args:
                return self.value(node.args[0], depth + 1, line)
            return None
        if isinstance(node, ast.Attribute) and node.attr == "shape":
            return None
        if isinstance(node, ast.Subscript):
            base = node.value
            if isinstance(base, ast.Attribute) and base.attr == "shape" and self.length is not None:
                self.used_length = True
                return self.length
            key = self.value(node.slice, depth + 1, line)
            if isinstance(key, str):
                return self._named(key, depth, line)
            return None
        if isinstance(node, (ast.Name, ast.Attribute)):
            chain = dotted(node)
            if not chain:
                return None
            local = assigned_before(self.ctx, self.fn_body, chain, line)
            if local is not None:
                return self.value(local, depth + 1, line)
            module = assigned_before(self.ctx, self.view.tree.body, chain, 10**9)
            if module is not None and isinstance(node, ast.Name):
                return self.value(module, depth + 1, line)
            return self._named(leaf(chain), depth, line)
        return None

    def _named(self, key: str, depth: int, line: int) -> Any:
        found = setting(self.ctx, key)
        if found is None:
            return None
        self.trail.append(found)
        return found.value

"""Rule ``metric``: the named metric is computed, by a library API or a local implementation that is real.

A metric is found where it is computed or logged, never where it is only named: a library call, a function or
an assignment named after it (``aesthetic_quality = scores.mean()``), a logged key (``wandb.log({"fid": fid})``),
a timer difference for wall-clock time. Names are matched on word pieces (``peak_memory``, ``peakMemory``), so a
name outside the lexicon ("motion smoothness") still finds ``motion_smoothness``; words that are also common
identifier pieces (``is``, ``map``) identify a metric only through its APIs and longer aliases.
"""

from __future__ import annotations

import ast
import functools
import re
from dataclasses import dataclass

from verifier.analysis.protocol.common import (
    const_str,
    dotted,
    evidence,
    file_view,
    lower_text,
    name_mentions,
    name_spans,
    nodes_of,
    norm,
    python_paths,
    scope_admits,
    sorted_evidence,
    spelling_pattern,
    target_names,
    text_of,
    tokens,
)
from verifier.analysis.taxonomy import classify_node
from verifier.index.names import qualify
from verifier.results import CheckResult, Status

KIND = "protocol"


def metric_entry(rule: dict, name: str) -> dict:
    key = norm(name)
    for entry in rule.get("lexicon", {}).get("metrics", []):
        if key in {norm(a) for a in [entry["name"]] + list(entry.get("aliases", []))}:
            return entry
    return {"name": name, "aliases": [name], "apis": [], "strings": [name]}


def identifier_aliases(entry: dict, rule: dict) -> set[str]:
    """Normalised names an identifier may carry for this metric, without words that are also everyday
    identifier pieces (``is_valid`` is not the Inception Score, ``map_labels`` not mAP)."""
    ambiguous = _ambiguous(rule)
    return {n for a in [entry["name"]] + list(entry.get("aliases", [])) if (n := norm(a)) and n not in ambiguous}


def _ambiguous(rule: dict) -> set[str]:
    """Normalised lexicon words that are also everyday identifier pieces (``is``, ``map``)."""
    return {norm(w) for w in rule.get("lexicon", {}).get("ambiguous", [])}


def name_matches(name: str, alias_norms: set[str]) -> bool:
    """``compute_fid`` matches alias "fid"; ``frechet_inception_distance`` matches "frechetinceptiondistance"."""
    return bool(name_spans(name, alias_norms))


# Name pieces of a setting about the metric, not its value (``num_fid_samples``, ``fid_every``, ``lpips_weight``).
_SETTING_PIECES = frozenset("num n every freq frequency interval steps batch weight weights coef coeff coefficient "
                            "lambda lam scale threshold thresh lr eps tol path dir file key name".split())


def value_name(name: str, alias_norms: set[str]) -> bool:
    """A variable or logged key that holds the metric's value: named after it, not a setting about it."""
    return name_matches(name, alias_norms) and not (set(tokens(name)) & _SETTING_PIECES)


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


def _views(ctx, scope, entry: dict, aliases: set[str]) -> list:
    """Files whose lower-cased text spells the metric, one of its APIs or a timer of its entry (``time.time``,
    ``perf_counter``; ``from time import time`` is read as ``time.time`` too)."""
    names = [a for a in [entry["name"]] + list(entry.get("aliases", [])) if norm(a) in aliases]
    names += [_api_needle(a) for a in entry.get("apis", [])] + list(entry.get("strings", []))
    names += list(entry.get("timers", [])) + list(entry.get("events", [])) + list(entry.get("attributes", []))
    names += ["from time import"] if entry.get("timers") else []
    pattern = spelling_pattern(n for n in names if len(norm(n)) >= 2)
    if pattern is None:
        return []
    return [v for p in python_paths(ctx, scope) if pattern.search(lower_text(ctx, p)) and (v := file_view(ctx, p))]


def _api_needle(api: str) -> str:
    """What a file using the API must contain: its name, or its module for a one-word name (``thop`` for
    ``thop.profile``, ``timeit`` for ``timeit.repeat``: "profile" and "repeat" are everywhere)."""
    parts = api.split(".")
    return parts[-2] if len(parts) > 1 and len(tokens(parts[-1])) == 1 else parts[-1]


def _api_matches(call, api: str) -> bool:
    return call.qual == api or call.qual.endswith("." + api) or call.name.endswith(api)


# ----- a paper's own symbol ("Metric: J", the control objective J) ------------------------------------------
_SYMBOL = re.compile(r"[A-Z](?:_[A-Za-z0-9]+)?")  # J, L, J_T: one capital letter, optionally subscripted


def is_symbol(expect: str, rule: dict | None = None) -> bool:
    """A metric named by a capital letter (``J``) the lexicon does not know: matched case-sensitively as a whole
    ``_``-separated piece of an identifier (``J``, ``total_J``, ``J_actual``), never inside a word
    (``Jacobian``, ``nablaJ``) or as a lower-case loop index (``j``)."""
    if not _SYMBOL.fullmatch(expect.strip()):
        return False
    key = norm(expect)
    entries = (rule or {}).get("lexicon", {}).get("metrics", [])
    return not any(key in {norm(a) for a in [e["name"]] + list(e.get("aliases", []))} for e in entries)


def _symbol_piece(name: str, symbol: str) -> bool:
    return symbol in name.rsplit(".", 1)[-1].split("_")


def _symbol_found(ctx, view, symbol: str, scope, report_calls: frozenset[str]) -> list[Found]:
    """``total_J = mse + wf * energy`` that is then returned, printed, logged, saved or collected: the paper's
    symbol computed and reported. Computed but never reported, or only set to a literal, is not the metric."""
    computed: list[tuple[str, ast.AST]] = []
    literal: list[tuple[str, ast.AST]] = []
    for node in nodes_of(ctx, view, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
        if node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for name in (n for t in targets if not isinstance(t, ast.Subscript) for n in target_names(t)):
                if _symbol_piece(name, symbol):
                    if isinstance(node, ast.AugAssign) or _computes(node.value, set(), view.imports):
                        computed.append((name, node))
                    elif _number_literal(node.value):
                        literal.append((name, node))
    reported: dict[str, str] = {}
    for node in nodes_of(ctx, view, (ast.Return, ast.Call)):
        if isinstance(node, ast.Return) and node.value is not None:
            for n in ast.walk(node.value):
                if isinstance(n, (ast.Name, ast.Attribute)) and _symbol_piece(dotted(n) or "", symbol):
                    reported.setdefault(dotted(n), "returned")
        elif isinstance(node, ast.Call):
            leaf = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if leaf in report_calls:
                for arg in list(node.args) + [kw.value for kw in node.keywords]:
                    for n in ast.walk(arg):
                        if isinstance(n, (ast.Name, ast.Attribute)) and _symbol_piece(dotted(n) or "", symbol):
                            reported.setdefault(dotted(n), f"passed to `{leaf}`")
    out = []
    for name, node in computed:
        how = reported.get(name)
        if how is None:
            continue
        owners = [q for q, fn in view.functions.items() if fn.node.lineno <= node.lineno <= (fn.node.end_lineno or 0)]
        if not scope_admits(scope, max(owners, key=len) if owners else "<module>"):
            continue
        out.append(Found(2, "pass", 1.0, f"{symbol} computed as `{name}` and {how}", view.path, node.lineno,
                         node.end_lineno or node.lineno))
    if not out and literal and not computed:
        name, node = literal[0]
        out.append(Found(5, "stub", 0.0, f"`{name}` is set to a literal and never computed", view.path, node.lineno,
                         node.lineno, "stub"))
    return out


def _find_symbol(ctx, scope: str | None, symbol: str, rule: dict) -> list[Found]:
    piece = re.compile(rf"(?<![A-Za-z0-9]){re.escape(symbol)}(?![a-z0-9])")
    report_calls = frozenset(rule.get("lexicon", {}).get("report_calls", []))
    out: list[Found] = []
    for path in python_paths(ctx, scope):
        if piece.search(text_of(ctx, path)) and (view := file_view(ctx, path)):
            out.extend(_symbol_found(ctx, view, symbol, scope, report_calls))
    return sorted(set(out), key=lambda f: (f.rank, f.file, f.line, f.message))


def find(ctx, scope: str | None, rule: dict, expect: str) -> list[Found]:
    if is_symbol(expect, rule):
        return _find_symbol(ctx, scope, expect.strip(), rule)
    lex = rule.get("lexicon", {})
    entry = metric_entry(rule, expect)
    aliases = identifier_aliases(entry, rule)
    apis = list(entry.get("apis", []))
    strings = {norm(s) for s in entry.get("strings", [])} | aliases
    loaders = set(lex.get("string_loaders", ["load", "load_metric"]))
    log_calls = set(lex.get("log_calls", []))
    out: list[Found] = []
    for view in _views(ctx, scope, entry, aliases):
        for call in view.calls:
            if not scope_admits(scope, call.scope):
                continue
            if any(_api_matches(call, a) for a in apis):
                out.append(Found(0, "pass", 1.0, f"{entry['name']} computed by `{call.name}`", view.path, call.line, call.end_line))
            elif call.leaf in loaders:
                arg = const_str(call.node.args[0]) if call.node.args else None
                if arg and norm(arg.rsplit("/", 1)[-1]) in strings:
                    out.append(Found(0, "pass", 1.0, f"{entry['name']} loaded by `{call.name}({arg!r})`", view.path,
                                     call.line, call.end_line))
            elif call.leaf in log_calls:
                out.extend(_logged(view, call, strings, entry["name"]))
            elif _selects(call, view, entry, lex):
                out.append(Found(0, "pass", 1.0, f"{entry['name']} computed by `{call.name}` (selected by name)",
                                 view.path, call.line, call.end_line))
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
        out.extend(_assignments(ctx, view, aliases | strings, entry["name"], scope))
        if entry.get("timers"):
            out.extend(_timer_differences(ctx, view, entry, scope))
        for attr in entry.get("attributes", []):
            for node in nodes_of(ctx, view, (ast.Attribute,)):
                if node.attr == attr and isinstance(node.ctx, ast.Load):
                    out.append(Found(0, "pass", 1.0, f"{entry['name']} read from `.{attr}`", view.path, node.lineno,
                                     node.end_lineno or node.lineno))
    return sorted(set(out), key=lambda f: (f.rank, f.file, f.line, f.message))


def _selects(call, view, entry: dict, lex: dict) -> bool:
    """A metric suite run with the metric named in its selection list (``VBench(...).evaluate(
    dimension_list=["motion_smoothness"])``)."""
    for selector in lex.get("selectors", []):
        if call.leaf != selector["call"] or not any(q.split(".")[0] == selector["module"] for q in view.imports.values()):
            continue
        arg = call.kwarg(selector["keyword"])
        if arg is None:
            continue
        wanted = {norm(a) for a in [entry["name"]] + list(entry.get("aliases", [])) + list(entry.get("strings", []))}
        if any(norm(t) in wanted for t in (n.value for n in ast.walk(arg) if isinstance(n, ast.Constant)) if isinstance(t, str)):
            return True
    return False


def _logged(view, call, strings: set[str], metric: str) -> list[Found]:
    """``self.log("val/psnr", psnr)``, ``writer.add_scalar("FID", fid, step)``, ``wandb.log({"fid": fid})``:
    a value logged under the metric's name (a literal value is a stub)."""
    pairs: list[tuple[str, ast.expr]] = []
    args = call.node.args
    if len(args) >= 2 and const_str(args[0]):
        pairs.append((const_str(args[0]), args[1]))
    for arg in list(args) + [kw.value for kw in call.node.keywords]:
        if isinstance(arg, ast.Dict):
            pairs += [(const_str(k), v) for k, v in zip(arg.keys, arg.values) if const_str(k)]
    out = []
    for key, value in pairs:
        if not value_name(key, strings):
            continue
        if _number_literal(value):
            out.append(Found(5, "stub", 0.0, f"`{call.name}` logs {key!r} as the literal {value.value!r}", view.path,
                             call.line, call.end_line, "stub"))
        elif isinstance(value, ast.Constant):
            continue
        else:
            out.append(Found(3, "pass", 1.0, f"{metric} logged as {key!r} by `{call.name}`", view.path, call.line,
                             call.end_line))
    return out


def _assigned(ctx, view) -> list[tuple[str, ast.AST, ast.expr, bool]]:
    """Every (name, where, value, augmented) a file assigns or returns in a dict, in walk order: read once per run,
    then each metric check keeps the names after its metric."""

    def build() -> list[tuple[str, ast.AST, ast.expr, bool]]:
        out: list[tuple[str, ast.AST, ast.expr, bool]] = []
        for node in nodes_of(ctx, view, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Return)):
            if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)) and node.value is not None:
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                names = [n.rsplit(".", 1)[-1] for t in targets if not isinstance(t, ast.Subscript) for n in target_names(t)]
                names += [key for t in targets if isinstance(t, ast.Subscript) and (key := const_str(t.slice))]
                out += [(name, node, node.value, isinstance(node, ast.AugAssign)) for name in names]
            elif isinstance(node, ast.Return) and isinstance(node.value, ast.Dict):
                for key, value in zip(node.value.keys, node.value.values):
                    name = const_str(key)
                    if name and not isinstance(value, ast.Constant):
                        out.append((name, value, value, False))
        return out

    return ctx.memo(f"protocol.metric.assigned:{view.path}", build)


@functools.lru_cache(maxsize=1 << 16)
def _holds_value(name: str, aliases: frozenset[str]) -> bool:
    return value_name(name, aliases)


def _assignments(ctx, view, aliases: set[str], metric: str, scope) -> list[Found]:
    """``ppl = math.exp(loss)`` / ``acc = correct / total`` / ``results["psnr"] = ...`` / ``return {"psnr": ...}``:
    a metric computed inline (a literal is a stub)."""
    values: dict[str, list[tuple[ast.AST, ast.expr, bool]]] = {}  # name -> (where, value, augmented)
    wanted = frozenset(aliases)
    for name, where, value, augmented in _assigned(ctx, view):
        if _holds_value(name, wanted):
            values.setdefault(name, []).append((where, value, augmented))
    out = []
    for name, items in sorted(values.items()):
        computed = [where for where, value, aug in items if aug or _computes(value, aliases, view.imports)]
        if computed:
            n = computed[-1]
            out.append(Found(2, "pass", 1.0, f"{metric} computed inline as `{name}`", view.path, n.lineno,
                             n.end_lineno or n.lineno))
        elif all(_number_literal(value) for _, value, _ in items):
            n = items[0][0]
            out.append(Found(5, "stub", 0.0, f"`{name}` is set to a literal and never computed", view.path, n.lineno,
                             n.lineno, "stub"))
    return out


_NUMERIC_LIBRARIES = frozenset("torch numpy scipy sklearn jax tensorflow torchmetrics skimage".split())


def _number_literal(value: ast.AST) -> bool:
    """``fid = 12.5`` fakes a result; ``ACCURACY = "accuracy"`` only names a key."""
    return isinstance(value, ast.Constant) and (value.value is None or (
        isinstance(value.value, (int, float)) and not isinstance(value.value, bool)))


def _computes(value: ast.AST, aliases: set[str], imports: dict[str, str]) -> bool:
    """Arithmetic or a library math call on names; a bare call of some other function only delegates (a numeric
    library's function named after the metric, ``F.mse_loss``, computes it)."""
    local = False
    for n in ast.walk(value):
        if isinstance(n, ast.Call):
            callee = n.func.attr if isinstance(n.func, ast.Attribute) else getattr(n.func, "id", "")
            root = (dotted(n.func) or "").split(".")[0]
            if callee and name_matches(callee, aliases):
                if qualify(dotted(n.func) or "", imports).split(".")[0] in _NUMERIC_LIBRARIES:
                    local = True
                    continue
                return False  # delegates to a metric function: that definition decides
            if root in imports:
                local = True
        elif isinstance(n, (ast.BinOp, ast.Compare, ast.UnaryOp)):
            local = True
    return local and any(isinstance(n, ast.Name) for n in ast.walk(value))


def _timer_differences(ctx, view, entry: dict, scope) -> list[Found]:
    """``time.perf_counter() - t0`` / ``end - start`` between two clock readings, or a CUDA event's
    ``start.elapsed_time(end)``: a measured duration. A difference only compared (a timeout) measures nothing."""
    timers = set(entry.get("timers", []))
    events = set(entry.get("events", []))
    roots = {t.split(".")[0] for t in timers | events}
    if not any(q.split(".")[0] in roots for q in view.imports.values()):
        return []

    def qual_of(call: ast.Call) -> str:
        return qualify(dotted(call.func) or "", view.imports)

    readings: set[str] = set()  # names (``t0``, ``self.start``) assigned a clock reading
    event_names: set[str] = set()
    for node in nodes_of(ctx, view, (ast.Assign, ast.AnnAssign)):
        if node.value is None:
            continue
        for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
            pairs = [(target, node.value)]
            if isinstance(target, ast.Tuple) and isinstance(node.value, ast.Tuple):
                pairs = list(zip(target.elts, node.value.elts))  # start, end = Event(...), Event(...)
            for t, value in pairs:
                if isinstance(value, ast.Call) and qual_of(value) in timers:
                    readings.update(target_names(t))
                elif isinstance(value, ast.Call) and qual_of(value) in events:
                    event_names.update(target_names(t))
    if not readings and not event_names:
        return []

    def is_reading(node: ast.AST) -> bool:
        return (isinstance(node, ast.Call) and qual_of(node) in timers) or (dotted(node) or "") in readings

    quals = {id(fn.node): qual for qual, fn in view.functions.items()}
    out: list[Found] = []

    stack: list[tuple[ast.AST, str, bool]] = [(view.tree, "<module>", False)]
    while stack:  # iterative: a deeply nested expression must not overflow the interpreter stack
        node, qual, compared = stack.pop()
        qual = quals.get(id(node), qual)
        if not compared and scope_admits(scope, qual):
            if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Sub) and is_reading(node.left) and is_reading(node.right):
                out.append(Found(1, "pass", 1.0, f"{entry['name']} measured as `{ast.unparse(node)}`", view.path,
                                 node.lineno, node.end_lineno or node.lineno))
            elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "elapsed_time"
                  and (dotted(node.func.value) or "") in event_names):
                out.append(Found(1, "pass", 1.0, f"{entry['name']} measured by CUDA events (`{ast.unparse(node)}`)",
                                 view.path, node.lineno, node.end_lineno or node.lineno))
        stack.extend((child, qual, compared or isinstance(node, ast.Compare)) for child in ast.iter_child_nodes(node))
    return sorted(out, key=lambda f: f.line)


# ----- "MSE excluding initial conditions": the metric taken on the steps after the given initial state -------
def _drops_leading(node: ast.AST) -> bool:
    """``u[:, 1:]`` / ``pred[1:]`` / ``x[..., t0:, :]``: a slice that starts past the first index, open-ended."""
    for sub in ast.walk(node):
        if isinstance(sub, ast.Subscript):
            parts = sub.slice.elts if isinstance(sub.slice, ast.Tuple) else [sub.slice]
            for part in parts:
                if isinstance(part, ast.Slice) and part.upper is None and part.step is None and part.lower is not None and not (
                    isinstance(part.lower, ast.Constant) and part.lower.value in (0, None)
                ) and not (isinstance(part.lower, ast.UnaryOp) and isinstance(part.lower.op, ast.USub)):
                    return True
    return False


def _skipping_initial(ctx, scope, rule: dict, expect: str) -> list[Found]:
    """The metric computed on a prediction and a target that both drop their leading step: a call named after
    it (``mse_deviation(u[:, 1:], gt[:, 1:])``, ``F.mse_loss(pred[:, 1:], y[:, 1:])``) or an inline value
    (``mse = ((pred[:, 1:] - y[:, 1:]) ** 2).mean()``)."""
    entry = metric_entry(rule, expect)
    aliases = identifier_aliases(entry, rule)
    apis = list(entry.get("apis", []))
    out: list[Found] = []
    for view in _views(ctx, scope, entry, aliases):
        for node in nodes_of(ctx, view, (ast.Call, ast.Assign, ast.AnnAssign)):
            if isinstance(node, ast.Call):
                leaf = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
                qual = qualify(dotted(node.func) or "", view.imports)
                named = value_name(leaf, aliases) or any(qual == a or qual.endswith("." + a) for a in apis)
                operands = list(node.args[:2])
                if named and len(operands) == 2 and all(_drops_leading(a) for a in operands):
                    out.append(Found(0, "pass", 1.0, f"{entry['name']} taken after the initial step (`{ast.unparse(node)[:80]}`)",
                                     view.path, node.lineno, node.end_lineno or node.lineno))
            elif isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                names = [n for t in targets for n in target_names(t)]
                operands = [n for n in ast.walk(node.value) if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Sub)]
                if any(value_name(n.rsplit(".", 1)[-1], aliases) for n in names) and any(
                    _drops_leading(o.left) and _drops_leading(o.right) for o in operands
                ):
                    out.append(Found(0, "pass", 1.0, f"{entry['name']} taken after the initial step (`{ast.unparse(node)[:80]}`)",
                                     view.path, node.lineno, node.end_lineno or node.lineno))
    return sorted(set(out), key=lambda f: (f.file, f.line, f.rank, f.message))


def evaluate(params: dict, ctx, scope: str | None, rule: dict) -> CheckResult:
    expect = str(params["expect"])
    entry = metric_entry(rule, expect)
    found = find(ctx, scope, rule, expect)
    if found and params.get("skip_initial") and found[0].status == "pass":
        skipping = _skipping_initial(ctx, scope, rule, expect)
        if skipping:
            ev = [evidence(ctx, f.file, f.line, "rule", end=f.end_line) for f in skipping[:3]]
            return CheckResult.passed(KIND, skipping[0].message, sorted_evidence(ev))
        best = found[0]
        return CheckResult.partial(
            KIND, 0.5, f"{best.message}, but nowhere on predictions and targets that drop the initial step "
            "(the claim excludes the initial conditions)", sorted_evidence([evidence(ctx, best.file, best.line, best.role, end=best.end_line)]),
        )
    if found:
        best = found[0]
        ev = [evidence(ctx, best.file, best.line, best.role, end=best.end_line)] + list(best.extra)
        ev += [evidence(ctx, f.file, f.line, f.role, end=f.end_line) for f in found[1:3] if f.status == best.status]
        if best.status == "pass":
            return CheckResult.passed(KIND, best.message, sorted_evidence(ev))
        if best.status == "partial":
            return CheckResult.partial(KIND, best.score, best.message, sorted_evidence(ev), taxonomy="unwired-or-unrunnable")
        return CheckResult.failed(KIND, Status.stub, best.message, sorted_evidence(ev))
    if is_symbol(expect, rule):  # a one-letter mention is everywhere: only a computed, reported value counts
        return CheckResult.failed(KIND, Status.missing, f"nothing computes and reports {expect.strip()}", [])
    ambiguous = _ambiguous(rule)
    names = [entry["name"]] + [a for a in entry.get("aliases", []) if norm(a) not in ambiguous and len(norm(a)) > 3]
    seen = name_mentions(ctx, names)
    if seen:
        return CheckResult.failed(KIND, Status.missing, f"{entry['name']} is only mentioned; nothing computes it", seen,
                                  taxonomy="mention")
    return CheckResult.failed(KIND, Status.missing, f"nothing computes {entry['name']}", [])

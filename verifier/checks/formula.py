"""`formula`: some expression computed in the repo is mathematically the paper's formula.

The checker is not told which variable implements the formula: it translates the repo's functions to SymPy
(once per run, memoised), ranks every computed value by how much its shape resembles the formula, maps the
paper's symbols onto code names (spec ``symbols`` first, then names, then a bounded numeric search) and
decides equivalence (numeric screen, high-precision confirmation, proof under a hard timeout).
"""

from __future__ import annotations

import ast
import functools
import itertools
import re
import time
from collections import Counter
from dataclasses import dataclass, replace
from typing import Any

import sympy as sp
from sympy.core.function import AppliedUndef

from verifier.analysis.callsite import snippet
from verifier.analysis.code_sympy import (
    MATMUL,
    api_table,
    REDUCTIONS,
    UNKNOWN,
    Candidate,
    FunctionModel,
    StructureUse,
    Translator,
    expr_nodes,
    is_matrix_op,
    sym,
    transpose,
)
from verifier.analysis.entry import MODULE
from verifier.analysis.equivalence import (
    APPLY,
    Decision,
    MatchResult,
    Target,
    as_integrals,
    canonical,
    decide,
    has_matrix_ops,
    is_spacing_name,
    match,
    similarity,
    strip_reductions,
)
from verifier.analysis.liveness import UNUSED_CAP, scope_unused
from verifier.symbolic.latex import (
    Formula,
    Grad,
    gradients_in,
    is_concat,
    is_opaque_call,
    is_slice,
    structures_in,
    FormulaSyntaxError,
    FormulaTooLarge,
    parse_formula,
    parse_latex,
    parse_sympy,
)
from verifier.checks.base import Context, checker
from verifier.index.facts import FileRole
from verifier.index.repo import PYTHONISH, looks_like_glob
from verifier.results import CheckResult, Evidence, Status
from verifier.spec.model import FormulaCheck

KIND = "formula"
TOP_CANDIDATES = 8
MIN_MISMATCH_RANK = 0.5
MAX_FILES = 60
PROOF_BUDGET = 1.0  # safety net (s) for the bonus proof after a numeric pass; its work is bounded by z3's rlimit


@checker(KIND)
def check_formula(check: FormulaCheck, ctx: Context) -> CheckResult:
    try:
        formula = parse_formula(check.expect, check.latex, check.functions, check.matrices)
    except FormulaTooLarge as exc:
        field = "expect" if check.expect else "latex"
        return CheckResult.unverified(KIND, f"`{field}` is beyond the analysis bounds: {exc}", position=exc.position)
    except FormulaSyntaxError as exc:
        field = "expect" if check.expect else "latex"
        return CheckResult.errored(KIND, f"`{field}` does not parse: {exc}", position=exc.position)
    try:
        return _check(check, formula, ctx)
    except RecursionError:
        return CheckResult.errored(KIND, "formula check: expression nested too deeply")


# ----------------------------------------------------------------------------------------- repo models
class RepoFormulas:
    """Translated functions of the repo, file by file on demand; shared by every formula check of a run.
    With structures kept, a function whose translation with none kept (``base``) met none of them is that
    translation: only the others are translated again."""

    def __init__(self, ctx: Context, pin: dict[str, Any], structures: frozenset = frozenset(),
                 base: "RepoFormulas | None" = None):
        self.index = ctx.index
        self.pin = pin
        self.structures = structures  # "concat" / "slice": kept as objects only for formulas that have them
        self.base = base if structures else None
        self.use = StructureUse()
        self.effective = _effective_values(ctx)
        self._translators: dict[str, Translator | None] = {}
        self._models: dict[str, list[FunctionModel]] = {}
        self._prepared: dict[tuple, list] = {}
        self._helpers: dict[str, Any] = {}
        self._signatures: dict[tuple, Signature | None] = {}

    def translator(self, path: str) -> Translator | None:
        if path not in self._translators:
            tree = self.index.tree(path)
            self._translators[path] = (
                None
                if tree is None
                else Translator(
                    tree, path, self.index.source(path), pin=self.pin, helper=self._helper, effective=self.effective,
                    structures=self.structures, use=self.use,
                )
            )
        return self._translators[path]

    def models(self, path: str) -> list[FunctionModel]:
        if path not in self._models:
            if self.base is not None:
                self._models[path] = self._kept_structures(path)
            else:
                tr = self.translator(path)
                self._models[path] = tr.all_functions() if tr is not None else []
        return self._models[path]

    def _kept_structures(self, path: str) -> list[FunctionModel]:
        shared = self.base.models(path)
        if not any(m.structures_met & self.structures for m in shared):
            return shared
        tr = self.translator(path)
        return [
            tr.function(node, qualname, cls) if m.structures_met & self.structures else m
            for m, (qualname, node, cls) in zip(shared, tr.function_nodes(), strict=True)
        ]

    def prepared(self, model: FunctionModel, keep: bool, measure: tuple = ()) -> list[tuple[Candidate, sp.Expr, frozenset, set[str]]]:
        """A function's candidates with their compared form, shape and symbol names (once per run)."""
        if self.base is not None and not measure and not (model.structures_met & self.structures):
            return self.base.prepared(model, keep)  # the plain translation's model: its candidates are prepared there
        key = (model.file, model.qualname, model.line, keep, measure)
        if key not in self._prepared:
            out = []
            spacings = self.spacings(model) if measure else frozenset()
            for cand in model.candidates:
                expr = _compared(cand.expr, keep, measure, spacings)
                if not isinstance(expr, sp.Expr) or expr.is_Atom or not expr.free_symbols:
                    continue
                out.append((cand, expr, profile(expr), {s.name for s in expr.free_symbols}))
            self._prepared[key] = out
        return self._prepared[key]

    def spacings(self, model: FunctionModel) -> frozenset:
        """Numbers the function's cell-size variables hold (``dx = 1.0 / 64``, ``self.dx = 0.01`` in
        ``__init__``): the translation inlines them, so a sum times ``dx`` arrives as a sum times 1/64."""
        values = {expr for name, versions in model.named.items() if is_spacing_name(name.rsplit(".", 1)[-1])
                  for _, _, expr in versions if isinstance(expr, sp.Expr) and expr.is_Number}
        tr = self.translator(model.file) if "." in model.qualname else None
        if tr is not None:
            attrs = tr.init_attrs(model.qualname.rsplit(".", 1)[0])
            values |= {expr for attr, expr in attrs.items() if is_spacing_name(attr) and isinstance(expr, sp.Expr) and expr.is_Number}
        return frozenset(values)

    def signature(self, file: str, callee: tuple) -> "Signature | None":
        """The parameters of what a call calls, when the repo settles it (see `CallShape.callee`)."""
        key = (file, callee)
        if key not in self._signatures:
            self._signatures[key] = self._find_signature(file, callee) if callee else None
        return self._signatures[key]

    def _find_signature(self, file: str, callee: tuple) -> "Signature | None":
        if callee[0] == "global":
            return self._one_signature([d for d in self.index.definitions_named(callee[1])
                                        if d.kind == "function" and d.qualname == d.name])
        _, cls, attr = callee
        tr = self.translator(file)
        classdef = tr.classes.get(cls) if tr is not None else None
        built = _constructed_class(classdef, attr) if classdef is not None else None
        if built is None:
            return None  # `self.model = model` (given from outside), a wrapper, a factory: unknown
        found = []
        for c in self.index.definitions_named(built):
            facts = self.index.files.get(c.span.file)
            if c.kind != "class" or facts is None or facts.role is not FileRole.code:
                continue
            methods = {d.name: d for d in facts.definitions
                       if d.kind == "method" and d.qualname in (f"{c.qualname}.__call__", f"{c.qualname}.forward")}
            method = methods.get("__call__") or methods.get("forward")  # nn.Module's __call__ runs forward
            if method is None:
                return None  # inherited: not followed
            found.append(method)
        return self._one_signature(found)

    @staticmethod
    def _one_signature(defs: list) -> "Signature | None":
        sigs = {Signature.of(d) for d in defs}  # a placeholder body still has the parameters a call binds to
        return sigs.pop() if len(sigs) == 1 else None

    def _helper(self, name: str, cls: str | None):
        """A repo function called by name from another file (``from utils import extract``)."""
        if cls is not None:
            return None
        if name not in self._helpers:
            self._helpers[name] = self._find_helper(name)
        return self._helpers[name]

    def _find_helper(self, name: str):
        for d in self.index.definitions_named(name):
            if d.kind != "function" or d.stub:
                continue
            facts = self.index.files.get(d.span.file)
            if facts is None or facts.role is not FileRole.code:
                continue
            tr = self.translator(d.span.file)
            if tr is None:
                continue
            for node in ast.walk(tr.tree):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name and node.lineno == d.span.line:
                    return node, tr
            node = tr.functions.get(name)
            if node is not None:
                return node, tr
        return None


@dataclass(frozen=True)
class Signature:
    """A callee's parameters (``self`` dropped), to bind a call's arguments by name."""

    positional: tuple[str, ...]
    keyword_only: tuple[str, ...]
    varargs: bool
    varkw: bool

    @classmethod
    def of(cls, d) -> "Signature":
        params = list(d.params)
        if d.kind == "method" and params and not any("staticmethod" in x for x in d.decorators):
            params = params[1:]
        star = next((i for i, p in enumerate(params) if p.startswith("*") and not p.startswith("**")), None)
        head = params if star is None else params[:star]
        tail = [] if star is None else params[star + 1:]
        return cls(tuple(p for p in head if not p.startswith("*")), tuple(p for p in tail if not p.startswith("*")),
                   star is not None, any(p.startswith("**") for p in params))


def _constructed_class(classdef: ast.ClassDef, attr: str) -> str | None:
    """The class every assignment of ``self.<attr>`` in the class builds (``self.model = UNet(...)``), or None
    when any assignment is something else (``self.model = model``, ``torch.compile(self.model)``)."""
    built = set()
    for node in ast.walk(classdef):
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        else:
            continue
        for target in targets:
            if isinstance(target, ast.Attribute) and target.attr == attr and isinstance(target.value, ast.Name) \
                    and target.value.id == "self":
                func = value.func if isinstance(value, ast.Call) else None
                name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
                if name is None:
                    return None
                built.add(name)
    return built.pop() if len(built) == 1 else None


CONFIG_KINDS = {"field", "assign", "argparse", "click", "config", "launch", "env", "dict"}


def _effective_values(ctx: Context):
    """Branch conditions on config values follow the repo's effective value (part 1's resolver)."""
    try:
        from verifier.analysis.values import ValueResolver
    except ImportError:  # pragma: no cover - the resolver ships with the tool
        return None

    known: dict[str, Any] = ctx.memo("formula.config-lookups", dict)  # a branch's setting, once per run

    def lookup(name: str) -> Any:
        if name not in known:
            known[name] = _config_value(name)
        return known[name]

    def _config_value(name: str) -> Any:
        resolver = ctx.memo("analysis.values.resolver", lambda: ValueResolver(ctx.index, ctx.aliases))
        res = resolver.resolve([name])
        top = [c for c in res.top if c.resolved]
        if not top or len(top) != len(res.top):
            return UNKNOWN
        kinds = {getattr(c.binding.kind, "value", str(c.binding.kind)) for c in top}
        values = {repr(c.value) for c in top}
        if len(values) != 1 or not kinds <= CONFIG_KINDS:
            return UNKNOWN
        return top[0].value

    return lookup


def _repo(ctx: Context, pin: dict[str, Any], structures: frozenset = frozenset()) -> RepoFormulas:
    key = "formula.repo:" + repr(sorted((str(k), repr(v)) for k, v in pin.items())) + repr(sorted(structures))
    base = _repo(ctx, pin) if structures else None
    return ctx.memo(key, lambda: RepoFormulas(ctx, pin, structures, base))


def _structure_kinds(expr: sp.Basic) -> frozenset:
    """Which of concatenation and slicing the paper side uses: the code keeps those as objects too."""
    kinds = set()
    for n in sp.preorder_traversal(expr):
        if is_concat(n):
            kinds.add("concat")
        elif is_slice(n):
            kinds.add("slice")
    return frozenset(kinds)


def _is_rprod(node: sp.Basic) -> bool:
    return isinstance(node, AppliedUndef) and node.func.__name__ == "rprod"


def _outer_product(expr: sp.Expr) -> bool:
    """The formula is a product over entries, alone or times constants (``P = ∏_i σ(s_i - t_i)``)."""
    factors = sp.Mul.make_args(expr)
    return any(_is_rprod(f) for f in factors) and all(_is_rprod(f) or not f.free_symbols or isinstance(f, sp.Symbol) for f in factors)


def _keeps_reductions(check: FormulaCheck, expr: sp.Expr) -> bool:
    """Compared with its reductions: asked for, or a product over the entries (Π_i p_i is no loose outer
    reduction: stripped, Σ p_i would pass for it)."""
    return check.reduction == "keep" or _outer_product(expr)


def _measure(check: FormulaCheck, formula: Formula) -> tuple:
    """(one differential?, the paper's symbol names) for a formula whose means are integrals; () otherwise."""
    if not check.integral or check.reduction == "keep":
        return ()
    return (len(set(check.integral)) == 1, frozenset(s.name for s in formula.expr.free_symbols))


def _compared(expr: sp.Expr, keep: bool, measure: tuple, spacings: frozenset = frozenset()) -> sp.Expr:
    """The code value as it is compared: outer reductions stripped, an integral's cell size first."""
    if keep:
        return expr
    if measure:
        expr = as_integrals(expr, *measure, spacings)
    return strip_reductions(expr)


# ----------------------------------------------------------------------------------------- shape ranking
def profile(expr: sp.Basic) -> frozenset[str]:
    kinds = set()
    for node in sp.preorder_traversal(expr):
        if isinstance(node, Grad):
            kinds.add("grad")
        elif isinstance(node, sp.exp):
            kinds.add("exp")
        elif isinstance(node, sp.log):
            kinds.add("log")
        elif isinstance(node, (sp.Min, sp.Max)):
            kinds.add("minmax")
        elif isinstance(node, sp.Abs):
            kinds.add("abs")
        elif isinstance(node, sp.Piecewise):
            kinds.add("piecewise")
        elif isinstance(node, sp.Pow):
            e = node.args[1]
            if e in (sp.Rational(1, 2), sp.Rational(-1, 2)):
                kinds.add("sqrt")
            elif not e.is_Integer:
                kinds.add("pow")
            elif e == -1:
                kinds.add("div")
            else:
                kinds.add("square")
        elif is_matrix_op(node):
            kinds.add(node.func.__name__)
        elif isinstance(node, AppliedUndef):
            name = node.func.__name__
            kinds.add("reduce" if name in REDUCTIONS else ("pick" if name == "pick" else "opaque"))
        elif isinstance(node, (sp.erf, sp.tanh)):
            kinds.add(type(node).__name__)
        elif isinstance(node, sp.Mul):
            kinds.add("mul")
        elif isinstance(node, sp.Add):
            kinds.add("add")
    return frozenset(kinds)


def _shape_similarity(p: frozenset, c: frozenset, np_: int, nc: int) -> float:
    union = p | c
    jac = len(p & c) / len(union) if union else 1.0
    size = 1 - abs(np_ - nc) / max(np_, nc, 1)
    return 0.75 * jac + 0.25 * size


@dataclass
class Ranked:
    score: float
    cand: Candidate
    expr: sp.Expr  # stripped (or not, with reduction: keep)
    model: FunctionModel


# ----------------------------------------------------------------------------------------- the check
def _check(check: FormulaCheck, formula: Formula, ctx: Context) -> CheckResult:
    pin = {**ctx.pin, **check.pin}
    product = _outer_product(formula.expr)
    plain = "reduce" not in profile(formula.expr)
    keep = _keeps_reductions(check, formula.expr)
    measure = _measure(check, formula)
    paper = formula.expr if keep else strip_reductions(formula.expr, formula.sum_bounds)
    if not paper.free_symbols:
        return CheckResult.errored(KIND, "the formula has no symbols to match against code")
    structures = _structure_kinds(paper)
    repo = _repo(ctx, pin, structures)
    update_name, strict = _update_name(check, formula, ctx)
    update = next((s for s in paper.free_symbols if s.name == update_name), None)
    strict = strict and update is not None  # θ ← ...: only an update decides; θ_{t+1} = ...: updates first
    words = _claim_words(ctx, formula, check)
    files = _files(ctx, check.scope, paper, words, tuple(check.symbols.values()))
    ranked: list[Ranked] = []
    stubs: list[tuple[float, Any]] = []
    p_profile = profile(paper)
    spec_names = {_leaf_of(str(v)) for v in check.symbols.values()} - {""}
    p_syms = len(paper.free_symbols)
    dropped: list[tuple[str, int, str, str, str]] = []  # values an analysis bound kept out of the ranking
    best_fit = 0.0  # how well the best-named update in scope fits the rule's variable (θ -> p, m -> exp_avg)
    for path in files:
        facts = ctx.index.files[path]
        stub_defs = {d.qualname: d for d in facts.definitions if d.stub}
        for d in stub_defs.values():
            if _qual_in_scope(d.qualname, check.scope):
                stubs.append((_name_score(d.name, words), d))
        for model in repo.models(path):
            if not _qual_in_scope(model.qualname, check.scope) or model.qualname in stub_defs:
                continue
            dropped.extend((model.file, line, target, bound, model.qualname) for line, target, bound in model.dropped)
            for cand, expr, shape, names in repo.prepared(model, keep, measure):
                if product and "reduce" not in shape:
                    continue  # a product over the entries needs a reduction (prod, exp of a sum of logs) in the code
                if plain and any(_is_rprod(n) for n in sp.preorder_traversal(expr)):
                    continue  # ... and a formula of one entry (σ(r_i - r_j)) is no product over all of them
                score = _shape_similarity(p_profile, shape, p_syms, len(names))
                if update is not None:
                    is_update = _old_value(model, cand) is not None
                    if strict and cand.target != "return" and not is_update:
                        continue  # an update rule is a new value of the variable (or a step's result), from its old one
                    fit = similarity(update.name, _target_leaf(cand.target))
                    if is_update:
                        best_fit = max(best_fit, fit)
                    score += 0.2 * fit
                score += 0.15 * max(_name_score(cand.target, words), _name_score(model.qualname.rsplit(".", 1)[-1], words))
                if spec_names:
                    present = names | {k.rsplit(".", 1)[-1] for k in model.named}
                    score += 0.3 * len(spec_names & present) / len(spec_names)
                ranked.append(Ranked(score, cand, expr, model))
    ranked.sort(key=lambda r: (-r.score, r.cand.file, r.cand.line, r.cand.target, r.cand.path))
    if not ranked and strict:
        return _bounded(dropped, ctx) or _no_update(update, formula)
    if not ranked and structures:
        # a stack, a reshape or a library call may build the same tensor with no expression to read
        return _bounded(dropped, ctx) or CheckResult.unverified(
            KIND, "no value in scope could be read to compare with the formula's concatenation or slice."
        )
    if not ranked:
        return _bounded(dropped, ctx) or _no_candidate(check, stubs, ctx, "no computed expression in scope")
    timeout = float(getattr(ctx.options, "formula_timeout", 5.0))
    positive = {name for name, what in check.assume.items() if str(what).lower() in ("positive", "nonnegative", "pos")}
    results: list[tuple[Ranked, MatchResult]] = []
    paper = _matrix_reading(paper, formula, [r.expr for r in ranked])
    noises = _noise_symbols(check, paper)
    pinned: set[int] = set()  # candidates that update the rule's variable, which is pinned to its old value
    unrun = None  # the first faithful candidate in a function no run reaches
    for r in _diverse(ranked, TOP_CANDIDATES):
        targets, fixed = _targets_for(r, repo, check, formula)
        options: list[tuple[sp.Expr, dict]] = [(paper, {})]
        old = _old_value(r.model, r.cand) if update is not None else None
        if old is not None:
            if update in fixed and fixed[update].expr != old:
                continue  # the spec names another variable than the one this assignment updates
            # the X on the right: the variable's value before this assignment
            fixed = {**fixed, update: Target(old.name if isinstance(old, sp.Symbol) else r.cand.target, old)}
            pinned.add(id(r))
        if update is not None and (old is not None or strict):
            options = _gradient_options(paper, update, r)
            # the step's settings (lr, weight_decay), used or not: a dropped term's coefficient is still there
            shown = {t.name for t in targets} | {n.func.__name__ for n in sp.preorder_traversal(r.expr) if isinstance(n, AppliedUndef)}
            targets = targets + [Target(n, sym(n)) for n in r.model.params if n not in shown]
        res = None
        for variant, known in options:
            for drawn in _noise_mappings(noises, r):
                got = match(
                    variant, r.expr, targets, {**drawn, **known, **fixed},  # the spec's symbols: first
                    positive=_positive_code(positive, fixed), sign=check.sign, timeout=timeout, proof_budget=min(PROOF_BUDGET, timeout),
                    scope_names=tuple(sorted(set(r.model.params) | {k for k in r.model.named if "@" not in k})),
                    matrices=formula.matrices, inputs=frozenset(r.model.params),
                )
                if res is None or got.decision.equivalent:
                    res = got
                if got.decision.equivalent:
                    break
            if res.decision.equivalent:
                break
        if formula.applications:
            res = _with_applications(res, r, repo, fixed, options, noises, formula, check, timeout, positive)
        if res.decision.equivalent and not res.name_inconsistent:
            res.name_inconsistent = _crosswise(res, paper)
        stored = _layer_orientation(fixed, r.model)
        if stored and not res.decision.equivalent:
            # `symbols: {W: proj.weight}` of an nn.Linear: the paper's W may be the stored weight's transpose
            other = match(
                paper, r.expr, targets, stored,
                positive=_positive_code(positive, stored), sign=check.sign, timeout=timeout,
                proof_budget=min(PROOF_BUDGET, timeout), matrices=formula.matrices, inputs=frozenset(r.model.params),
            )
            if other.decision.equivalent or other.decision.kind != "not-equivalent":
                res = other
        results.append((r, res))
        if res.decision.equivalent and not res.name_inconsistent:
            unused = scope_unused(ctx, r.model.file, r.model.qualname) if r.model.qualname != MODULE else None
            if unused is None:
                return _passed(check, r, res, repo, paper, ctx, formula, timeout, positive)
            unrun = unrun or (r, res, unused)  # written as the paper says, but no run computes it: look on
    if unrun is not None:
        return _unused(_passed(check, *unrun[:2], repo, paper, ctx, formula, timeout, positive), unrun[2], ctx)
    suspects = [(r, res) for r, res in results if res.decision.equivalent]
    mismatches = [(r, res) for r, res in results if res.decision.kind == "not-equivalent"]
    operands = set() if update is not None or not formula.applications else spec_names
    strong = [
        (r, res)
        for r, res in mismatches
        if r.score >= MIN_MISMATCH_RANK
        and r.cand.target not in operands  # `symbols: {x_t: x_t}` names an operand (an argument), not the formula
        and _post_score(r, res) >= 0.5
        and _mapped_by_names(res, lenient=bool(check.scope or check.symbols) or _named_like_claim(r, words))
    ]
    paper_grads = bool(gradients_in(paper))
    if paper_grads:
        # a value with no gradient in it (a hand-derived closed form, an unrelated loss) cannot contradict
        # a formula that takes one: only a gradient the code computes decides (in an update rule, also the
        # gradient an optimizer reads, `p.grad`, `grads`)
        strong = [(r, res) for r, res in strong if gradients_in(r.expr) or (id(r) in pinned and _gradient_leaves(r.expr))]
    if structures:
        # a value that concatenates or slices otherwise (no cat, another layout: `V[:, :r]ᵀ` against `Vh[:r]`)
        # cannot contradict the paper's: only the same layout with other operands, order or bounds does
        layout = structures_in(paper)
        strong = [(r, res) for r, res in strong if structures_in(r.expr) == layout]
    strong.sort(key=lambda rr: -_post_score(*rr))
    if suspects:
        r, res = suspects[0]
        return CheckResult.unverified(
            KIND,
            f"{_where(r)} equals the formula only under a mapping that contradicts the names "
            f"({'; '.join(res.name_inconsistent)}); confirm it with `symbols:`.",
            [_evidence(r, res, "expression")],
            **_details(r, res, formula),
        )
    if pinned:
        # another update, or another value of the function, fits the rule's variable by name clearly better
        # (m -> exp_avg while this updates exp_avg_sq): a different rule for a different variable, not a drift
        strong = [(r, res) for r, res in strong if id(r) not in pinned or not _better_named(update, r, best_fit)]
    if strong and id(strong[0][0]) in pinned and (library := _library_optimizer(ctx)) is not None:
        r, res = strong[0]
        qualname, file, line = library
        return CheckResult.unverified(
            KIND,
            f"{_where(r)} updates `{r.cand.target}` otherwise than the rule, but the repo also builds {qualname} "
            f"({file}:{line}), which may apply the rule in its step(): that is the `call` check's to decide.",
            [_evidence(r, res, "expression"), Evidence(file, line, line, _short_line(ctx, file, line), "call", qualname)],
            **_details(r, res, formula),
        )
    if strong:
        r, res = strong[0]
        stub_hit = _stub_named(stubs)
        if stub_hit is not None and r.score < 0.8:
            return _stub(stub_hit)
        ce = res.decision.counterexample or {}
        if ce.get("values"):
            why = f"at {_point(ce)} the paper gives {ce.get('paper')} and the code {ce.get('code')}"
            if ce.get("application"):
                why = f"{ce['application']}: {why}"
        else:
            why = res.decision.reason or "no mapping of the paper's symbols makes them equal"
        return CheckResult.failed(
            KIND,
            Status.mismatch,
            f"{_where(r)} computes {_show(r.expr)}, which differs from the formula: {why}.",
            [_evidence(r, res, "expression")],
            **_details(r, res, formula),
        )
    limited = [(r, res) for r, res in results if res.decision.limit]
    if limited:
        r, res = limited[0]
        return CheckResult.unverified(
            KIND,
            f"{_where(r)} was not compared with the formula: {res.decision.limit}.",
            [_evidence(r, res, "expression")],
            **_details(r, res, formula),
        )
    undecided = [(r, res) for r, res in results if res.decision.kind == "undecided" and r.score >= MIN_MISMATCH_RANK]
    if undecided:
        r, res = undecided[0]
        return CheckResult.unverified(
            KIND,
            f"{_where(r)} looks like the formula but equivalence is undecided after {timeout:.1f} s "
            f"({res.decision.reason.split('(')[-1].rstrip(')') or 'no proof'}).",
            [_evidence(r, res, "expression")],
            **_details(r, res, formula),
        )
    relevant = [d for d in dropped if check.scope or max(_name_score(d[2], words), _name_score(d[4], words)) > 0]
    if strict or structures:
        return _bounded(relevant, ctx) or _undecided_structure(ranked[0], results, update, structures)
    if paper_grads:
        return _bounded(relevant, ctx) or _gradient_unverified(ranked, repo, files, check)
    return _bounded(relevant, ctx) or _no_candidate(
        check, stubs, ctx, f"closest is {_where(ranked[0])}", ranked[0], results
    )


# ----------------------------------------------------------------------------------------- applications
MAX_ARGUMENT_READINGS = 24  # ways keyword or extra arguments of one call may line up with the paper's
APPLICATION_TIMEOUT = 2.0


def _applications_agree(res: MatchResult, r: Ranked, repo: RepoFormulas, formula: Formula, check: FormulaCheck,
                        timeout: float, positive: set[str]) -> MatchResult:
    """A paper application (``D(x̂)``, ``ε_θ(x_t, t)``) that the match mapped onto a code call (``critic(real)``,
    or the leaf ``d_out`` such a call was assigned to) must also apply to the same arguments: both become one
    fixed opaque function of their arguments and the comparison is redone. Only applications whose argument
    symbols are all mapped (or named as in the call) are compared, in the order the callee's signature or the
    arguments' roles give (`_argument_readings`); a call with an unreadable argument, or extra / keyword
    arguments that fit no reading, is `unverified`; a decisive reading with other arguments is a mismatch
    (through the usual filters)."""
    subs = dict(res.subs or {})
    for psym in sorted(res.paper.free_symbols if res.paper is not None else (), key=lambda s_: s_.name):
        app = formula.applications.get(psym.name)
        value = subs.get(psym)
        if app is None or value is None:
            continue
        call = value if is_opaque_call(value) else r.model.applications.get(value.name) if isinstance(value, sp.Symbol) else None
        shape = r.model.calls.get(call) if call is not None else None
        if shape is None:
            continue  # not a call of the code (a parameter, a hand-written value), or one inlined from a helper
        fname, pargs = app
        leaves = {s_.name: s_ for a in call.args for s_ in a.free_symbols}
        named = {}
        for s_ in sorted(set().union(*(a.free_symbols for a in pargs)), key=lambda x: x.name):
            if s_ not in subs and s_.name in leaves:
                named[s_] = leaves[s_.name]
        if any(s_ not in subs and s_ not in named for a in pargs for s_ in a.free_symbols):
            continue  # an argument only the application names (D(x) of a WGAN loss): nothing to compare it with
        where = f"{call.func.__name__}(...) in {r.model.qualname} ({r.cand.file}:{r.cand.line})"
        if shape.unreadable:
            return _not_compared(res, f"an argument of {where} could not be read, so it is not compared with {fname}'s")
        readings, decisive = _argument_readings(pargs, call.args, shape, repo.signature(r.model.file, shape.callee))
        if not readings:
            return _not_compared(res, f"{where} takes {len(call.args)} argument(s) where the paper's {fname} takes {len(pargs)}")
        function = sym(call.func.__name__)  # the match mapped the paper's function onto this one
        paper_side = res.paper.xreplace({psym: APPLY(function, *pargs)})
        inner = {k: v for k, v in {**subs, **named}.items() if k != psym}
        outcome = None
        for args in readings:
            code_side = r.expr.xreplace({value: APPLY(function, *args)})
            got = decide(paper_side, code_side, positive=_positive_code(positive, {}), sign=check.sign,
                         timeout=min(timeout, APPLICATION_TIMEOUT), proof_budget=0.3, subs=inner,
                         matrices=formula.matrices, inputs=frozenset(r.model.params))
            if got.equivalent:
                outcome = None
                break
            outcome = got if outcome is None or got.kind == "not-equivalent" else outcome
        if outcome is None:
            continue
        if outcome.kind != "not-equivalent":
            return _not_compared(res, f"the arguments of {where} were not decided against {fname}'s ({outcome.reason})")
        if not decisive:
            return _not_compared(res, f"{where} has arguments the paper's {fname} does not name, and none of its "
                                      "readings applies it to the paper's arguments")
        shown = ", ".join(_show(a, 40) for a in pargs)
        outcome.reason = f"the code applies {call.func.__name__} to other arguments ({_show(call, 80)}) than the paper's {fname}({shown})"
        if outcome.counterexample is not None:
            outcome.counterexample = {**outcome.counterexample, "application": outcome.reason}
        res.decision = outcome
        return res
    return res


def _with_applications(res: MatchResult, r: Ranked, repo: RepoFormulas, fixed, options, noises, formula: Formula,
                       check: FormulaCheck, timeout: float, positive: set[str]) -> MatchResult:
    """The paper applies functions to arguments: an equivalence found with the applications as opaque leaves
    must also hold for their arguments, and a comparison the leaves could not make (their arguments mapped,
    the code's hidden in an output leaf) is made with the applications spelled out."""
    if not res.decision.equivalent or res.name_inconsistent:
        spelled = _applied_reading(res, r, repo, fixed, options, noises, formula, check, timeout, positive)
        if spelled is not res and (spelled.decision.equivalent or not res.decision.equivalent):
            return spelled
    if res.decision.equivalent:
        return _applications_agree(res, r, repo, formula, check, timeout, positive)
    return res


def _applied_reading(res: MatchResult, r: Ranked, repo: RepoFormulas, fixed, options, noises, formula: Formula,
                     check: FormulaCheck, timeout: float, positive: set[str]) -> MatchResult:
    """The comparison redone with applications spelled out on both sides: the paper's ``Q(s_next, a_next)``
    as ``apply(Q, s_next, a_next)`` and the code's ``q_next = target_net(next_obs, next_act)`` as
    ``apply(target_net, next_obs, next_act)``, the function symbols mapped like any other. Needed when the
    paper's arguments are mapped (``symbols: {s_next: next_obs}``) while the code hides them in an output
    leaf. It replaces the leaf reading when it is equivalent, or when it is a mismatch every symbol of which
    is mapped by spec or name and the leaf reading's is not; otherwise the leaf reading stands."""
    paper_names = {s_.name for v, _ in options for s_ in v.free_symbols}
    apps = {sym(k): (sym(f), args) for k, (f, args) in formula.applications.items() if f not in paper_names}
    if not apps:
        return res
    codes, functions, spelled_leaves = _code_applied(r, repo, [args for _, args in apps.values()])
    code = codes[0]
    # a leaf reading that failed with no counterexample used values the code hides in a call's arguments
    hidden = not res.decision.equivalent and not (res.decision.counterexample or {}).get("values")
    doubt = _uncompared_calls(r, repo, [args for _, args in apps.values()]) if hidden else ""
    if not functions:
        # the leaf reading's mismatch may come from a call whose arguments could not be lined up alone
        return _not_compared(replace(res), doubt) if doubt else res
    # the calls' arguments are values of the function now (`symbols: {s_next: next_obs}` resolves to them);
    # an output leaf spelled out is no value to map a paper symbol to any more
    targets, _ = _targets_for(Ranked(r.score, r.cand, code, r.model), repo, check, formula)
    by_name = {t.name: t for t in targets if t.name not in spelled_leaves}
    for name in [*r.model.params, *sorted(functions)]:
        by_name.setdefault(name, Target(name, sym(name)))
    for key, value in sorted(check.symbols.items()):
        psym, target = _paper_symbol(key), _resolve_target(str(value), by_name, {})
        if psym is not None and target is not None:
            fixed = {**fixed, psym: target}
    targets = sorted(by_name.values(), key=lambda t: t.name)
    scope = tuple(sorted((set(r.model.params) | {k for k in r.model.named if "@" not in k}) - spelled_leaves))
    best = None
    started = time.perf_counter()
    for variant, known in options:
        if time.perf_counter() - started >= timeout:
            break  # bounded like one match: the readings share the check's time limit
        spelled = variant.xreplace({k: APPLY(f, *args) for k, (f, args) in apps.items() if k in variant.free_symbols})
        if spelled == variant:
            continue
        for drawn, code in itertools.product(_noise_mappings(noises, r), codes):
            if time.perf_counter() - started >= timeout:
                break
            got = match(
                spelled, code, targets, {**drawn, **known, **fixed},
                positive=_positive_code(positive, fixed), sign=check.sign, timeout=timeout,
                proof_budget=min(PROOF_BUDGET, timeout), scope_names=scope,
                matrices=formula.matrices, inputs=frozenset(r.model.params),
            )
            if got.decision.equivalent and not got.name_inconsistent:
                return got
            best = best or got
    if best is None or res.decision.equivalent:
        return res
    if best.decision.equivalent:
        return best  # equal only under a mapping against the names: `unverified`, asking for `symbols:`
    if doubt:
        return _not_compared(replace(res), doubt)
    lenient = bool(check.scope or check.symbols)
    unmapped = "unmapped" in res.how.values() or not _mapped_by_names(res, lenient)
    if best.decision.kind == "not-equivalent" and _mapped_by_names(best, lenient) and "unmapped" not in best.how.values() \
            and unmapped:
        return best  # every symbol of the spelled-out reading is mapped, and some of the leaf reading's were not
    return res


def _uncompared_calls(r: Ranked, repo: RepoFormulas, paper_args: list[tuple]) -> str:
    """Why a call of the candidate could not be lined up with the paper's applications: an unreadable
    argument, keyword arguments (their order is the signature's) or an arity no application has, unless the
    arguments' roles settle the reading (with the callee's signature, extra arguments too)."""
    arities = {len(a) for a in paper_args}
    calls = [r.model.applications[s_.name] for s_ in sorted(r.expr.free_symbols, key=lambda x: x.name)
             if s_.name in r.model.applications]
    calls += sorted((n for n in sp.preorder_traversal(r.expr) if is_opaque_call(n) and n in r.model.calls), key=sp.default_sort_key)
    for call in calls:
        shape = r.model.calls.get(call)
        if shape is None:
            continue
        where = f"{_show(call, 60)} in {r.model.qualname} ({r.cand.file}:{r.cand.line})"
        if shape.unreadable:
            return f"an argument of {where} could not be read, so the paper's application is not compared with it"
        signature = repo.signature(r.model.file, shape.callee)
        settled = any(_role_reading(a, call.args, shape, signature) for a in paper_args if len(a) <= len(call.args))
        if shape.keywords and not settled:
            return f"{where} passes keyword arguments, whose order against the paper's arguments is its signature's"
        if len(call.args) not in arities and not (settled and signature is not None):
            return f"{where} takes {len(call.args)} argument(s), which the paper's application does not"
    for leaf in sorted(s_.name for s_ in r.expr.free_symbols if s_.name in r.model.unread_calls):
        return (f"no argument of {r.model.unread_calls[leaf]}(...) (`{leaf}` in {r.model.qualname}, {r.cand.file}:"
                f"{r.cand.line}) could be read, so the paper's application is not compared with it")
    return ""


def _code_applied(r: Ranked, repo: RepoFormulas, paper_args: list[tuple]) -> tuple[list[sp.Expr], set[str], set[str]]:
    """The candidate with its calls spelled ``apply(f, args...)`` (output leaves such as ``d_out = critic(x)``
    and calls written in place, when their arguments were all read): in the order the callee's signature or
    the arguments' roles give when they settle it (``model(t, x_t)`` of ``def forward(self, t, x)`` for
    ``ε_θ(x_t, t)``), else in every reading of calls with keyword or extra arguments against the paper's
    arity (``model(x_t, t, cond)``), the call as written first."""
    functions: set[str] = set()
    arities = {len(a) for a in paper_args}

    def readings(call: sp.Expr) -> list[sp.Expr] | None:
        shape = r.model.calls.get(call)
        if shape is None or shape.unreadable:
            return None
        functions.add(call.func.__name__)
        f = sym(call.func.__name__)
        signature = repo.signature(r.model.file, shape.callee)
        settled = [reading for pargs in paper_args if (reading := _role_reading(pargs, call.args, shape, signature))]
        if settled:
            return [APPLY(f, *a) for a in dict.fromkeys(settled)]
        out = [tuple(call.args)] if len(call.args) in arities or len(arities) != 1 else []
        if len(arities) == 1 and (shape.keywords or len(call.args) > min(arities)):
            pargs = next(a for a in paper_args if len(a) == min(arities))
            out += [a for a in _argument_readings(pargs, call.args, shape, signature)[0] if a not in out]
        return [APPLY(f, *a) for a in out] or [APPLY(f, *call.args)]

    options: dict[sp.Expr, list[sp.Expr]] = {}
    for s_ in sorted(r.expr.free_symbols, key=lambda x: x.name):
        call = r.model.applications.get(s_.name)
        if call is not None and (values := readings(call)) is not None:
            options[s_] = values
    names = {s_.name for s_ in options}
    for n in sorted(sp.preorder_traversal(r.expr), key=sp.default_sort_key):
        if is_opaque_call(n) and n in r.model.calls and n not in options and (values := readings(n)) is not None:
            options[n] = values
    if not options:
        return [r.expr], functions, names
    keys = list(options)
    codes = []
    for combo in itertools.islice(itertools.product(*(options[k] for k in keys)), MAX_ARGUMENT_READINGS):
        codes.append(r.expr.xreplace(dict(zip(keys, combo))))
    return codes, functions, names


def _argument_readings(pargs: tuple, args: tuple, shape, signature: "Signature | None" = None) -> tuple[list[tuple], bool]:
    """How a call's arguments may stand for the paper's ``pargs``, and whether a reading that differs from the
    paper's is a mismatch (decisive) rather than a doubt. When the roles settle it (`_role_reading`), that
    one reading. Otherwise positional ones in order, a keyword one for any paper argument its name does not
    contradict (``model(x, timesteps=t)``), extra ones ignored (``model(x_t, t, cond)`` for ``ε_θ(x_t, t)``);
    none when the call has fewer arguments. A signature's parameter names rule out readings against their
    role too. An argument left out that has the role of a paper argument (``model(x_0, x_t, t)``: which
    state is the input?) makes a differing reading a doubt; with no signature, no reading leaves it out."""
    n = len(pargs)
    if len(args) < n:
        return [], True
    settled = _role_reading(pargs, args, shape, signature)
    if settled is not None:
        # the signature binds each argument; with no signature, an extra argument with no role might be the one
        return [settled], signature is not None or len(args) == n
    paper_roles = [_paper_role(a) for a in pargs]
    bound = _bound_names(shape, signature, len(args))
    code_roles = _code_roles(args, shape, signature, bound) or [""] * len(args)
    out = []
    doubtful = False
    for picks in itertools.permutations(range(len(args)), n):  # picks[i]: the code argument for paper argument i
        positional = [j for j in picks if j < shape.positional]
        if positional != sorted(positional):
            continue
        if bound is not None and any(
            (code := argument_role(bound[j])) and paper_roles[i] and code != paper_roles[i] for i, j in enumerate(picks)
        ):
            continue  # `model(x, t=...)` binds t by name: it is not the paper's x_t
        if any(code_roles[j] in paper_roles for j in range(len(args)) if j not in picks and code_roles[j]):
            if signature is None:
                continue
            doubtful = True
        out.append(tuple(args[j] for j in picks))
        if len(out) >= MAX_ARGUMENT_READINGS:
            break
    return out, not (len(out) > 1 and len(args) > n) and not doubtful


# the role an argument's name gives it: a diffusion / flow time (or noise level) or the state it acts on
_TIME_HEADS = frozenset({"t", "ts", "tt", "time", "times", "timestep", "timesteps", "sigma", "sigmas"})
_STATE_HEAD = re.compile(r"(?:[xyz]t?|xs|ys|zs|sample|samples|latent|latents|state|states|noisy)")


def argument_role(name: str) -> str:
    """``time`` for ``t``, ``t0``, ``timesteps``, ``sigma``; ``state`` for ``x``, ``x_t``, ``xt``, ``z_0``,
    ``y``, ``latents``; "" for any other name (``cond``, ``a_next``) and a lone capital (``T``: a horizon,
    ``X``: a data matrix): its first word decides."""
    if not name or (len(name) == 1 and name.isupper()):
        return ""
    head = re.sub(r"\d+$", "", re.split(r"_+", name.strip("_").lower(), maxsplit=1)[0])
    if head in _TIME_HEADS:
        return "time"
    return "state" if _STATE_HEAD.fullmatch(head) else ""


def _paper_role(arg: sp.Expr) -> str:
    return argument_role(arg.name) if isinstance(arg, sp.Symbol) else ""


def _bound_names(shape, signature: "Signature | None", count: int) -> list[str] | None:
    """The parameter name each code argument binds to: the signature's for positional ones, the keyword for
    keyword ones (no signature: "" for positional ones); None when the signature cannot take the call."""
    positional = shape.positional
    if len(shape.keyword_names) != count - positional:
        return None
    if signature is None:
        return [""] * positional + list(shape.keyword_names)
    if positional > len(signature.positional) and not signature.varargs:
        return None
    names = [signature.positional[i] if i < len(signature.positional) else "" for i in range(positional)]
    for k in shape.keyword_names:
        if k in names or (k not in signature.positional and k not in signature.keyword_only and not signature.varkw):
            return None  # bound twice, or no such parameter: not this callee's signature
        names.append(k)
    return names


def _role_reading(pargs: tuple, args: tuple, shape, signature: "Signature | None") -> tuple | None:
    """The code arguments in the paper's order when roles settle it: each paper argument is named for a
    distinct role (``ε_θ(x_t, t)``: a state, a time) and exactly one code argument has that role -- by the
    parameter it binds to in the callee's signature (``def forward(self, t, x)``), by its keyword, or, with
    no signature, by the name it was written with (``func(t, y)``, ``model(noisy, timesteps)``) or the only
    role its value's names have. Two states (``f(x_a, x_b)``) are never told apart: None, positional order."""
    roles = [_paper_role(a) for a in pargs]
    if not all(roles) or len(set(roles)) != len(roles) or not shape.exact or shape.unreadable:
        return None
    code = _code_roles(args, shape, signature, _bound_names(shape, signature, len(args)))
    if code is None:
        return None
    out = []
    for role in roles:
        hits = [j for j, c in enumerate(code) if c == role]
        if len(hits) != 1:
            return None
        out.append(args[hits[0]])
    return tuple(out)


def _code_roles(args: tuple, shape, signature: "Signature | None", bound: list[str] | None) -> list[str] | None:
    """Each code argument's role: its parameter's in the signature, else its keyword's, else the name it was
    written with or the one role its value's names have; None when the call cannot be bound."""
    if bound is None or not shape.exact:
        return None
    if signature is not None:
        return [argument_role(b) for b in bound]
    if len(shape.written) != len(args):
        return None
    return [argument_role(b) if b else argument_role(w) or _value_role(a) for a, b, w in zip(args, bound, shape.written)]


def _value_role(value: sp.Expr) -> str:
    """The one role the names in a value have (``sqrt(a)*x_0 + sqrt(1 - a)*noise``: a state), else ""."""
    roles = {argument_role(s.name.split("__")[0]) for s in value.free_symbols} - {""}
    return roles.pop() if len(roles) == 1 else ""


def _not_compared(res: MatchResult, why: str) -> MatchResult:
    res.decision = Decision("undecided", res.decision.seconds, reason=why, limit=why)
    return res


# ----------------------------------------------------------------------------------------- update rules
_NEW_AFFIX = re.compile(r"^(?:new|next|updated)_|_(?:new|next|updated|tp1|out)$")
_OLD_AFFIX = re.compile(r"^(?:old|prev|last)_|_(?:old|prev|tm1|t)$")
# the gradient an optimizer step reads: `p.grad` (a leaf `grad`), `grads`, `g`, `d_p`, `grad_w`
_GRADIENT_LEAF = re.compile(r"(?:^|_)(?:grad|grads|gradient|gradients|g|dp|d_p)(?:$|_|\d)|^g\d*$", re.IGNORECASE)
MAX_GRADIENT_LEAVES = 3


def _update_name(check: FormulaCheck, formula: Formula, ctx: Context) -> tuple[str | None, bool]:
    """The paper symbol the formula gives a new value: from `expect: "θ <- ..."` / a LaTeX left arrow, or, for a
    check compiled from a claim (its `expect` the rule's right side), from the claim's own ``θ ← ...``."""
    if formula.update or not check.expect or ctx.sau is None or ctx.sau.check is not None or ctx.sau.checks:
        return formula.update, formula.update_arrow
    from verifier.compiler.formulas import update_in_claim

    return update_in_claim(ctx.sau.claim, check.expect)


def _target_leaf(target: str) -> str:
    m = re.search(r"\[['\"](\w+)['\"]\]$", target)
    return m.group(1) if m else target.rsplit(".", 1)[-1]


def _old_value(model: FunctionModel, cand: Candidate) -> sp.Expr | None:
    """The value the candidate's variable had before this assignment, when the assignment computes from it
    (``p -= lr * p.grad``, ``m.mul_(b).add_(g)``, ``params = tree_map(..., params, grads)``, ``w_new = w - ...``);
    None for a value that is not an update of a variable."""
    expr_syms = cand.expr.free_symbols
    earlier = [
        expr for line, path, expr in model.named.get(cand.target, [])
        if line < cand.line and (not path or cand.path.startswith(path)) and isinstance(expr, sp.Expr)
    ]  # the variable's latest value before this statement (as _named_before, for one name)
    if earlier:
        old = earlier[-1]
        if old.free_symbols and old.free_symbols <= expr_syms and old != cand.expr:
            return old
    leaf = re.sub(r"\W+", "_", _target_leaf(cand.target)).strip("_")
    stems = {leaf, _NEW_AFFIX.sub("", leaf)}
    found = sorted(
        (s for s in expr_syms if s.name.split("__")[0] in stems or _OLD_AFFIX.sub("", s.name.split("__")[0]) in stems - {leaf}),
        key=lambda s: s.name,
    )
    if len(found) != 1 or cand.expr == found[0]:
        return None
    return found[0]


def _better_named(update: sp.Symbol, r: Ranked, best_fit: float) -> bool:
    """Some update in scope (``best_fit``) or some name of the candidate's function fits the rule's variable
    clearly better than the variable this candidate updates."""
    own = similarity(update.name, _target_leaf(r.cand.target))
    names = {_target_leaf(k) for k in r.model.named if "@" not in k} | set(r.model.params)
    best = max([best_fit, *(similarity(update.name, n) for n in sorted(names))])
    return best >= 0.5 and best > own + 0.2


def _gradient_leaves(expr: sp.Expr) -> list[sp.Symbol]:
    return sorted((s for s in expr.free_symbols if _GRADIENT_LEAF.search(s.name.split("__")[0])), key=lambda s: s.name)


def _gradient_options(paper: sp.Expr, update: sp.Symbol, r: Ranked) -> list[tuple[sp.Expr, dict]]:
    """An update rule's ``∇_θ L`` is, in an optimizer step, the gradient the step reads (``p.grad`` after a
    backward elsewhere, the ``grads`` given to it): the paper's gradient w.r.t. the updated symbol may stand
    for such a leaf of the candidate; the gradient computed in place (``jax.grad``, a backward here) is
    compared as it is (the last option)."""
    grads = sorted({g for g in gradients_in(paper) if g.args[1] == update}, key=sp.default_sort_key)
    if len(grads) != 1:
        return [(paper, {})]
    stand_in = sym(f"grad_{update.name}")
    variant = paper.xreplace({grads[0]: stand_in})
    options = [(variant, {stand_in: Target(leaf.name, leaf)}) for leaf in _gradient_leaves(r.expr)[:MAX_GRADIENT_LEAVES]]
    return options + [(paper, {})]


def _library_optimizer(ctx: Context) -> tuple[str, str, int] | None:
    """The first library optimizer the repo builds (``torch.optim.SGD(...)``, ``optax.adam(...)``), if any;
    learning-rate schedules are not optimizers."""
    prefixes = api_table().library_optimizers
    for path in sorted(ctx.index.files):
        for call in ctx.index.files[path].calls:
            name = call.qualname
            if name.startswith(prefixes) and "schedul" not in name.lower() and not name.endswith(".Optimizer"):
                return name, call.span.file, call.span.line
    return None


def _no_update(update: sp.Symbol, formula: Formula) -> CheckResult:
    return CheckResult.unverified(
        KIND,
        f"no assignment in scope gives `{update}` a new value computed from its old one ({_show(formula.expr, 80)}); "
        "a library optimizer (torch.optim, optax) may apply the rule, which the `call` check decides, not this one.",
    )


def _undecided_structure(best: Ranked, results, update: sp.Symbol | None, structures: frozenset) -> CheckResult:
    """An update rule or a concatenation / slice that no candidate decides: `unverified`, never `missing` (a
    library optimizer, `torch.svd_lowrank(W, q=r)` returning the truncated factors or a reshape in place of
    a concatenation implement the claim with no such expression)."""
    res = next((m for rr, m in results if rr is best), None)
    if structures:
        what = " and ".join(("a concatenation" if k == "concat" else "a slice") for k in sorted(structures))
        why = f"no value in scope has {what} of the formula's layout that decides it"
    else:
        why = (f"no update of `{update}` in scope decides the rule (a library optimizer such as torch.optim or optax "
               "may apply it: the `call` check decides that)")
    return CheckResult.unverified(KIND, f"{why}; closest is {_where(best)}.", [_evidence(best, res, "missing-near")])


def _gradient_unverified(ranked: list[Ranked], repo: RepoFormulas, files: list[str], check: FormulaCheck) -> CheckResult:
    """The formula takes a gradient and no gradient the translator read decides it: `unverified`, naming a
    gradient it could not read (a ``x.grad`` with no ``backward()`` in its function, an unknown autodiff
    call) or the closest gradient it compared."""
    unresolved = sorted(
        (model.file, line, model.qualname, why)
        for path in files
        for model in repo.models(path)
        if _qual_in_scope(model.qualname, check.scope)
        for line, why in model.unresolved_gradients
    )
    if unresolved:
        file, line, qualname, why = unresolved[0]
        more = f" (and {len(unresolved) - 1} more)" if len(unresolved) > 1 else ""
        return CheckResult.unverified(
            KIND,
            f"the formula takes a gradient, and the gradient in {qualname} ({file}:{line}) cannot be read: {why}{more}.",
            [Evidence(file, line, line, why, "expression", qualname)],
        )
    with_grad = [r for r in ranked if gradients_in(r.expr)]
    if with_grad:
        r = with_grad[0]
        return CheckResult.unverified(
            KIND,
            f"the formula takes a gradient; the closest gradient the code computes, {_where(r)}, was not decided "
            "against it (its symbols could not be mapped by name).",
            [_evidence(r, None, "expression")],
        )
    return CheckResult.unverified(
        KIND,
        "the formula takes a gradient, and no gradient computed in scope could be read (autograd, backward, "
        "jax.grad); a closed form derived by hand is not compared with it.",
    )


def _short_line(ctx: Context, file: str, line: int) -> str:
    try:
        text = "".join(ctx.index.lines(file, line, line)).strip()
    except (OSError, ValueError, IndexError, KeyError):
        return ""
    return text if len(text) <= 120 else text[:117] + "..."


def _bounded(dropped: list[tuple[str, int, str, str, str]], ctx: Context) -> CheckResult | None:
    """A value the translator gave up on (too large, too deep) may be the formula: not `missing`."""
    if not dropped:
        return None
    file, line, target, bound, qualname = min(set(dropped))
    shown = "the return value" if target == "return" else f"`{target}`"
    more = f" (and {len(set(dropped)) - 1} more)" if len(set(dropped)) > 1 else ""
    return CheckResult.unverified(
        KIND,
        f"nothing translated computes the formula, but {shown} of {qualname} ({file}:{line}) is too large to "
        f"analyse ({bound}){more}.",
        [Evidence(file, line, line, _short_line(ctx, file, line), "expression", f"{qualname}: {bound}")],
        bound=bound,
    )


def _passed(check, r: Ranked, res: MatchResult, repo, paper, ctx, formula, timeout, positive) -> CheckResult:
    how = "proven" if res.decision.kind == "proven" else "numerically equivalent"
    if check.paths == "all":
        failing = _other_paths(r, res, repo, paper, check, timeout, positive, formula.matrices, _measure(check, formula))
        opaque = [(o, m, _opaque_calls(o)) for o, m in failing if _opaque_calls(o)]
        failing = [(o, m) for o, m in failing if not _opaque_calls(o)]
        if not failing and opaque:
            other, other_res, calls = opaque[0]
            return CheckResult.unverified(
                KIND,
                f"path `{r.cand.path or 'default'}` of {r.model.qualname} is the formula ({how}), but path "
                f"`{other.cand.path or 'default'}` calls {', '.join(calls)}, which cannot be checked.",
                [_evidence(other, other_res, "expression"), _evidence(r, res, "expression")],
                **_details(other, other_res, formula),
            )
        if failing:
            other, other_res = failing[0]
            return CheckResult.failed(
                KIND,
                Status.mismatch,
                f"path `{other.cand.path or 'default'}` of {r.model.qualname} is not the formula "
                f"(computes {_show(other.expr)}), although path `{r.cand.path or 'default'}` is ({how}).",
                [_evidence(other, other_res, "expression"), _evidence(r, res, "expression")],
                **_details(other, other_res, formula),
            )
    sign = "" if res.decision.sign == 1 else " (up to sign)"
    branch = f" on path `{r.cand.path}`" if r.cand.path else ""
    return CheckResult.passed(
        KIND,
        f"{_where(r)}{branch} implements the formula: {how}{sign}.",
        [_evidence(r, res, "expression")],
        **_details(r, res, formula),
    )


def _unused(result: CheckResult, unused, ctx: Context) -> CheckResult:
    """A faithful formula no run computes (``focal_loss`` written, ``cross_entropy`` trained on) is a minor
    deviation, as a right value no run uses is: capped at 0.75, cited with the function runs start in."""
    if result.status is not Status.pass_:
        return result
    clause, cited = unused.cited(lambda file, line: snippet(ctx.index, file, line))
    return CheckResult.partial(KIND, UNUSED_CAP, result.message.rstrip(".") + clause + ".", [*result.evidence, *cited],
                               **result.details)


def _opaque_calls(r: Ranked) -> list[str]:
    """Unknown calls (a fused kernel, an extension op) that a path's value depends on."""
    calls = {r.model.opaque[s.name] for s in r.expr.free_symbols if s.name in r.model.opaque}
    calls |= {
        n.func.__name__
        for n in sp.preorder_traversal(r.expr)
        if is_opaque_call(n, concat_and_slice=True)
    }
    return sorted(calls)


def _other_paths(r: Ranked, res: MatchResult, repo, paper, check, timeout, positive, matrices=None, measure=()):
    """With `paths: all`: the same value on every other branch of the function must also be the formula."""
    failing = []
    latest: dict[str, Candidate] = {}
    for cand in r.model.candidates:
        if cand.target == r.cand.target and cand.path != r.cand.path:
            latest[cand.path] = cand
    for path, cand in sorted(latest.items()):
        expr = _compared(cand.expr, _keeps_reductions(check, paper), measure, repo.spacings(r.model) if measure else frozenset())
        other = Ranked(r.score, cand, expr, r.model)
        targets, fixed = _targets_for(other, repo, check, None)
        got = match(paper, expr, targets, fixed, positive=_positive_code(positive, fixed), sign=check.sign,
                    timeout=timeout, proof_budget=min(PROOF_BUDGET, timeout), matrices=matrices,
                    inputs=frozenset(r.model.params))
        if not got.decision.equivalent:
            failing.append((other, got))
    return failing


def _no_candidate(check, stubs, ctx, why: str, best: Ranked | None = None, results=None) -> CheckResult:
    hit = _stub_named(stubs) or (stubs[0][1] if stubs and check.scope and not looks_like_glob(check.scope) else None)
    if hit is not None:
        return _stub(hit)
    evidence = []
    if best is not None:
        res = next((m for rr, m in (results or []) if rr is best), None)
        evidence.append(_evidence(best, res, "missing-near"))
    scope = f" in `{check.scope}`" if check.scope else ""
    return CheckResult.failed(KIND, Status.missing, f"nothing{scope} computes the formula ({why}).", evidence)


def _stub(d) -> CheckResult:
    span = d.span
    ev = Evidence(span.file, span.line, max(span.end_line, span.line), f"def {d.name}(...)", "stub", d.stub or "")
    return CheckResult.failed(
        KIND, Status.stub, f"{d.qualname} ({span.file}:{span.line}) is a placeholder ({d.stub}).", [ev], function=d.qualname
    )


def _stub_named(stubs: list) -> Any:
    named = sorted((s for s in stubs if s[0] >= 0.34), key=lambda s: (-s[0], s[1].span.file, s[1].span.line))
    return named[0][1] if named else None


# ----------------------------------------------------------------------------------------- mapping targets
def _targets_for(r: Ranked, repo: RepoFormulas, check: FormulaCheck, formula: Formula | None):
    """Code values a paper symbol may stand for: the candidate's leaves and the function's named values."""
    targets: dict[str, Target] = {}
    named = _named_before(r.model, r.cand)
    cls = r.model.qualname.rsplit(".", 1)[0] if "." in r.model.qualname else None
    if cls is not None:
        tr = repo.translator(r.model.file)
        if tr is not None:
            for attr, expr in sorted(tr.init_attrs(cls).items()):
                named.setdefault(f"self.{attr}", expr)
    # a name's latest value wins over the leaf of the same name (its value before the update)
    for name, expr in sorted(named.items()):
        targets[name] = Target(name, expr)
    for grad in sorted(set(gradients_in(r.expr)), key=sp.default_sort_key):
        # what a gradient is of (the loss inside jax.grad, an inlined model call) and the gradient itself
        # (the paper's `g` of `θ - η g`) are values the paper may name
        f = grad.args[0]
        inner = f.args[0] if isinstance(f, AppliedUndef) and f.func.__name__ in REDUCTIONS and f.args else None
        applied = sorted(
            (n for n in sp.preorder_traversal(f) if is_opaque_call(n, concat_and_slice=True)),
            key=sp.default_sort_key,
        )  # a model or density applied inside it: the paper's D(x̂), p(x)
        for value in (f, inner, grad, *applied):
            if isinstance(value, sp.Expr) and not value.is_Symbol:
                targets.setdefault(_show(value, 60), Target(_show(value, 60), value))
    shown = {t.expr.name for t in targets.values() if isinstance(t.expr, sp.Symbol)}
    for s in sorted(r.expr.free_symbols, key=lambda x: x.name):
        if s.name not in shown:
            key = s.name if s.name not in targets else f"{s.name}@entry"
            targets[key] = Target(key, s)
        if "log" in s.name.lower() and "logit" not in s.name.lower():
            targets[f"exp({s.name})"] = Target(f"exp({s.name})", sp.exp(s))
        if s.name in r.model.layer_weights:
            # a layer stores its weight in the library's orientation (nn.Linear: out x in), not the paper's
            targets[f"{s.name}.T"] = Target(f"{s.name}.T", transpose(s))
    fixed: dict[sp.Symbol, Target] = {}
    for key, value in sorted(check.symbols.items()):
        psym = _paper_symbol(key)
        target = _resolve_target(str(value), targets, named)
        if psym is not None and target is not None:
            fixed[psym] = target
    return sorted(targets.values(), key=lambda t: t.name), fixed


def _crosswise(res: MatchResult, paper: sp.Expr) -> list[str]:
    """Two symbols the search mapped crosswise (x_0 -> x1 while x_1 -> x0), each name fitting the other's
    value: swapped operands of a symmetric-looking formula, or a code naming convention the names cannot settle.
    A formula that is the same with the two swapped (``(pred - target)**2``) fits the names either way."""
    pairs = sorted((p, c) for p, c in res.mapping.items() if res.how.get(p) in ("name", "search"))
    symbols = {s.name: s for s in paper.free_symbols}
    out = []
    for i, (p1, c1) in enumerate(pairs):
        for p2, c2 in pairs[i + 1 :]:
            fit, cross = similarity(p1, c1) + similarity(p2, c2), similarity(p1, c2) + similarity(p2, c1)
            if min(similarity(p1, c2), similarity(p2, c1)) >= 0.5 and cross > fit + 0.4:
                a, b = symbols.get(p1), symbols.get(p2)
                if a is not None and b is not None and _symmetric_in(paper, a, b):
                    continue  # symmetric in the two: the swapped mapping is the same claim
                out.append(f"{p1}->{c1} and {p2}->{c2} although the names fit crosswise")
    return out


def _symmetric_in(paper: sp.Expr, a: sp.Symbol, b: sp.Symbol) -> bool:
    """The formula is unchanged when ``a`` and ``b`` swap: checked at three fixed points, not by expanding
    (``(a + b)**1000`` expands without end); an opaque function of them counts as not symmetric."""
    swapped = paper.xreplace({a: b, b: a})
    if swapped == paper:
        return True
    names = sorted(paper.free_symbols, key=lambda s: s.name)
    for k in range(3):
        point = {s: sp.Float(0.31 + 0.17 * i + 0.23 * k) for i, s in enumerate(names)}
        x, y = paper.xreplace(point).evalf(), swapped.xreplace(point).evalf()
        if not (x.is_number and y.is_number) or x.has(sp.nan, sp.zoo) or abs(x - y) > 1e-9 * (1 + abs(x)):
            return False
    return True


NOISE_ROLE = "standard_normal"
MAX_DRAWS = 2  # standard-normal draws of one value tried for the paper's noise (each with both signs)


def _noise_symbols(check: FormulaCheck, paper: sp.Expr) -> list[sp.Symbol]:
    """Paper symbols declared ``assume: {eps: standard_normal}``: the draw of a reparameterised sample."""
    names = {name for name, what in check.assume.items() if str(what).lower() == NOISE_ROLE}
    return sorted((s for s in paper.free_symbols if s.name in names), key=lambda s: s.name)


def _noise_mappings(noises: list[sp.Symbol], r: Ranked) -> list[dict[sp.Symbol, Target]]:
    """The ways the paper's noise may stand for the candidate's draws: a randn-like leaf of the function, of
    either sign (a normal draw is symmetric: ``mean - std * eps`` samples the same law). A value with no draw
    gets a noise nothing in the code equals, so the mean alone (a dropped noise term) is no match."""
    if not noises:
        return [{}]
    draws = sorted((s for s in r.expr.free_symbols if s.name in r.model.normal_draws), key=lambda s: s.name)[:MAX_DRAWS]
    if not draws:
        return [{n: Target("<no Gaussian draw>", sym(f"{n.name}__undrawn")) for n in noises}]
    first, *others = noises
    options = [{first: Target(d.name, sign * d if sign < 0 else d)} for d in draws for sign in (1, -1)]
    for other in others:  # more than one noise: each takes the next draw, same sign
        options = [{**o, other: Target(d.name, d)} for o in options for d in draws if d.name not in {t.name for t in o.values()}]
    return options or [{}]


def _matrix_reading(paper: sp.Expr, formula: Formula, code: list[sp.Expr]) -> sp.Expr:
    """Capitals side by side are matrices only in code that multiplies matrices: where no value in scope
    does (``n * R * T``), the paper's ``n R T`` is the product it always was. A transpose, ``@`` or
    `matrices:` keeps the matrix reading whatever the code does."""
    if formula.explicit_matrices or any(has_matrix_ops(e) for e in code):
        return paper
    if not any(isinstance(n, AppliedUndef) and n.func is MATMUL for n in sp.preorder_traversal(paper)):
        return paper
    return paper.replace(lambda n: isinstance(n, AppliedUndef) and n.func is MATMUL, lambda n: sp.Mul(*n.args))


def _layer_orientation(fixed: dict[sp.Symbol, Target], model: FunctionModel) -> dict[sp.Symbol, Target] | None:
    """The spec's mapping with every layer weight transposed (None when it maps none)."""
    if not any(isinstance(t.expr, sp.Symbol) and t.expr.name in model.layer_weights for t in fixed.values()):
        return None
    return {
        p: Target(f"{t.name}.T", transpose(t.expr)) if isinstance(t.expr, sp.Symbol) and t.expr.name in model.layer_weights else t
        for p, t in fixed.items()
    }


def _named_before(model: FunctionModel, cand: Candidate) -> dict[str, sp.Expr]:
    out: dict[str, sp.Expr] = {}
    for name, versions in model.named.items():
        usable = [
            (line, path, expr)
            for line, path, expr in versions
            if line <= cand.line and (not path or cand.path.startswith(path)) and isinstance(expr, sp.Expr)
        ]
        if not usable:
            continue
        if name == cand.target and usable[-1][0] == cand.line:
            usable = usable[:-1]  # not the candidate itself
            if not usable:
                continue
        out[name] = usable[-1][2]
        for line, _, expr in usable[:-1]:
            out.setdefault(f"{name}@{line}", expr)
    return out


def _paper_symbol(key: str) -> sp.Symbol | None:
    text = key.strip()
    try:
        expr = parse_latex(text).expr if "\\" in text else parse_sympy(text).expr
    except FormulaSyntaxError:
        name = re.sub(r"\W+", "_", text).strip("_") or "x"
        return sym(f"{name}_" if name == "lambda" else name)  # `lambda`: the parsers spell λ `lambda_`
    return expr if isinstance(expr, sp.Symbol) else None


def _resolve_target(value: str, targets: dict[str, Target], named: dict[str, sp.Expr]) -> Target | None:
    text = value.strip()
    bare = text.replace("self.", "")
    for name in (text, f"self.{bare}", bare, bare.replace(".", "_")):  # self.proj.weight: the layer's proj_weight
        if name in targets:
            return targets[name]
    leafish = re.split(r"[.\[]", bare.replace("'", "").replace('"', "").rstrip("]"))[-1]
    if re.fullmatch(r"[A-Za-z_]\w*", leafish) and re.fullmatch(r"[\w.\[\]'\"]+", text):
        for name, t in targets.items():
            if name.rsplit(".", 1)[-1] == leafish or name.endswith(f"['{leafish}']"):
                return t
        best = max(targets.values(), key=lambda t: (similarity(leafish, t.name), t.name), default=None)
        if best is not None and similarity(leafish, best.name) >= 0.3:
            return best
        return Target(leafish, sym(leafish))
    try:
        expr = parse_sympy(bare).expr
    except FormulaSyntaxError:
        return None
    subs = {}
    for s in expr.free_symbols:
        for name in (s.name, f"self.{s.name}"):
            if name in targets:
                subs[s] = targets[name].expr
                break
    return Target(text, expr.xreplace(subs))


def _leaf_of(text: str) -> str:
    leaf = re.split(r"[.\[]", text.strip().replace("'", "").replace('"', "").rstrip("]"))[-1]
    return leaf if re.fullmatch(r"[A-Za-z_]\w*", leaf) else ""


def _positive_code(positive: set[str], fixed: dict[sp.Symbol, Target]) -> set[str]:
    out = set(positive)
    for psym, t in fixed.items():
        if psym.name in positive:
            out |= {s.name for s in t.expr.free_symbols}
    return out


def _post_score(r: Ranked, res: MatchResult) -> float:
    """How alike the mapped paper formula and the code value are: shared code symbols and operations."""
    if res.paper_expr is None:
        return 0.0
    ps, cs = res.paper_expr.free_symbols, r.expr.free_symbols
    sym_overlap = len(ps & cs) / len(ps | cs) if ps | cs else 0.0
    pp, cp = _op_counts(res.paper_expr), _op_counts(r.expr)
    union = sum((pp | cp).values())
    ops = sum((pp & cp).values()) / union if union else 1.0
    return 0.5 * sym_overlap + 0.5 * ops


def _op_counts(expr: sp.Basic) -> Counter:
    out: Counter = Counter()
    for node in sp.preorder_traversal(expr):
        if not node.is_Atom:
            out[node.func.__name__ if not isinstance(node, AppliedUndef) else "f:" + node.func.__name__] += 1
    return out


def _mapped_by_names(res: MatchResult, lenient: bool) -> bool:
    """A mismatch needs the paper's symbols to have found their code values by spec or by name: all of them,
    or (when `in:` or the function's name points at this code) most of them."""
    if not res.how:
        return False
    good = sum(
        1
        for name, v in res.how.items()
        if v in ("spec", "name") or (v == "identity" and (lenient or len(name) > 1))  # `x` alone proves little
    )
    return good == len(res.how) or (lenient and good * 2 >= len(res.how))


def _named_like_claim(r: Ranked, words: str) -> bool:
    return max(_name_score(r.cand.target, words), _name_score(r.model.qualname.rsplit(".", 1)[-1], words)) > 0


# ----------------------------------------------------------------------------------------- scope and words
def _claim_words(ctx: Context, formula: Formula, check: FormulaCheck) -> str:
    parts = [formula.lhs or ""]
    if ctx.sau is not None:
        parts.append(ctx.sau.claim[:200])
    return " ".join(parts)


@functools.lru_cache(maxsize=1 << 16)
def _name_score(name: str, words: str) -> float:
    """The share of a code name's meaning tokens the claim's words contain (cached: every candidate of every
    formula check of a spec is scored against the same few claims)."""
    if not words.strip():
        return 0.0
    tokens = canonical(name).tokens
    if not tokens:
        return 0.0
    text = canonical(re.sub(r"[^A-Za-z0-9]+", "_", words)).tokens
    return len(tokens & text) / len(tokens)


def _qual_in_scope(qualname: str, scope: str | None) -> bool:
    if not scope or looks_like_glob(scope):
        return True
    return qualname == scope or qualname.startswith(scope + ".") or qualname.endswith("." + scope) or (
        "." in scope and qualname.endswith(scope)
    )


def _files(ctx: Context, scope: str | None, paper: sp.Expr, words: str, spec_values=()) -> list[str]:
    index = ctx.index
    paths = [
        p
        for p, f in index.files.items()
        if f.language in PYTHONISH and f.role is FileRole.code and index.in_scope(p, scope)
    ]
    if scope and not looks_like_glob(scope):
        leaf = scope.rsplit(".", 1)[-1]
        owners = {d.span.file for d in index.definitions_named(scope)} | {d.span.file for d in index.definitions_named(leaf)}
        paths = [p for p in paths if p in owners] or paths
    if len(paths) <= MAX_FILES:
        return sorted(paths)
    # a large repo: translate only the files whose identifiers look most like the formula's
    names = {t for s in paper.free_symbols for t in canonical(s.name).tokens} | set(re.findall(r"[a-z_]{3,}", words.lower()))
    names |= {_leaf_of(str(v)).lower() for v in spec_values} - {""}
    names |= {API_HINTS[k] for k in profile(paper) if k in API_HINTS}
    scored = sorted(paths, key=lambda p: (-len(names & {r.lower() for r in index.files[p].reads}), p))
    return sorted(scored[:MAX_FILES])


API_HINTS = {"exp": "exp", "log": "log", "sqrt": "sqrt", "minmax": "clamp", "reduce": "mean", "abs": "abs"}


def _diverse(ranked: list[Ranked], n: int) -> list[Ranked]:
    """The top candidates, distinct expressions first (a value and its copy into `loss` are one)."""
    out: list[Ranked] = []
    seen: dict = {}
    for r in ranked:
        key = (r.expr, r.cand.path)
        if key in seen:
            kept = seen[key]
            if kept.model is r.model and abs(kept.cand.line - r.cand.line) <= 3:
                # the same value under two names (v_loss_max, v_loss = v_loss_max.mean()): one span for both
                kept.cand = replace(
                    kept.cand, line=min(kept.cand.line, r.cand.line), end_line=max(kept.cand.end_line, r.cand.end_line)
                )
            continue
        if len(out) < n:
            r = Ranked(r.score, r.cand, r.expr, r.model)
            seen[key] = r
            out.append(r)
    return out


# ----------------------------------------------------------------------------------------- reporting
def _where(r: Ranked) -> str:
    target = "the return value" if r.cand.target == "return" else f"`{r.cand.target}`"
    return f"{target} of {r.model.qualname} ({r.cand.file}:{r.cand.line})"


def _show(expr: sp.Expr, limit: int = 160) -> str:
    text = str(expr) if expr_nodes(expr, 400) < 400 else f"<expression of {expr_nodes(expr, 10**6)} nodes>"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _point(ce: dict) -> str:
    values = ce.get("values", {})
    return ", ".join(f"{k}={_compact(v)}" for k, v in list(values.items())[:8]) or "a sample point"


def _compact(value: Any) -> str:
    """A sample value in a message: matrices (lists of rows) to 3 digits; the details keep 6."""
    if isinstance(value, list) and value and isinstance(value[0], list):
        return "[" + ", ".join("[" + ", ".join(f"{x:.3g}" for x in row) + "]" for row in value) + "]"
    return str(value)


def _evidence(r: Ranked, res: MatchResult | None, role: str) -> Evidence:
    note = f"{r.model.qualname}"
    if r.cand.path:
        note += f" [path: {r.cand.path}]"
    if res is not None and res.decision.sign == -1:
        note += " [sign: -1]"
    return Evidence(r.cand.file, r.cand.line, r.cand.end_line, r.cand.snippet, role, note)


def _details(r: Ranked, res: MatchResult, formula: Formula) -> dict[str, Any]:
    d = res.decision
    out: dict[str, Any] = {
        "function": r.model.qualname,
        "lines": [r.cand.line, r.cand.end_line],
        "target": r.cand.target,
        "translated": _show(r.expr, 400),
        "paper": _show(formula.expr, 400),
        "mapping": dict(sorted(res.mapping.items())),
        "mapped_by": dict(sorted(res.how.items())),
        "path": r.cand.path,
        "sign": d.sign,
        "decision": d.kind,
    }
    if d.method:
        out["method"] = d.method
    if d.counterexample and d.counterexample.get("values"):
        out["counterexample"] = d.counterexample
    if res.name_inconsistent:
        out["name_inconsistent"] = sorted(res.name_inconsistent)
    return out

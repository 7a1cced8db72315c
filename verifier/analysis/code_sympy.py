"""Python / PyTorch / NumPy / JAX function bodies as SymPy expressions.

Every assignment is inlined in order (SSA-style), in-place chains update their receiver, ``self.x`` reads
take the value set in ``__init__``, small repo helpers are inlined, and an ``if`` splits the function into
paths unless the spec's ``pin`` decides it. Each intermediate value is kept as a :class:`Candidate`, since
the formula checker is not told which variable implements the paper's formula. Nothing is executed: the
input is an ``ast`` tree, and every expensive step is bounded (paths, statements, expression size, depth).
"""

from __future__ import annotations

import ast
import functools
import math
import re
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import sympy as sp
from sympy.core.function import AppliedUndef
from sympy.parsing.sympy_parser import parse_expr

from verifier import rules
from verifier.index.names import attribute_chain
from verifier.symbolic.latex import Grad, concat, is_opaque_call, slice_of
from verifier import pysource
from verifier.symbolic.core import (  # noqa: F401  (re-exported: the translator's vocabulary)
    MATMUL,
    MATRIX_OPS,
    MAX_EXPONENT,
    MAX_POWER_BITS,
    PICK,
    TRANSPOSE,
    is_matrix_op,
    matmul,
    transpose,
    REDUCTIONS,
    RMAX,
    RMEAN,
    RMIN,
    RSUM,
    RVAR1,
    power_too_large,
    sym,
)

MAX_PATHS = 16
MAX_STATEMENTS = 600
MAX_EXPR_NODES = 800
MAX_HELPER_DEPTH = 3
MAX_HELPER_STATEMENTS = 60
KNOWN_FUNCS: dict[str, Any] = {
    **REDUCTIONS,
    **MATRIX_OPS,
    "pick": PICK,
    "exp": sp.exp,
    "log": sp.log,
    "sqrt": sp.sqrt,
    "Abs": sp.Abs,
    "Max": sp.Max,
    "Min": sp.Min,
    "Piecewise": sp.Piecewise,
    "erf": sp.erf,
    "tanh": sp.tanh,
    "sin": sp.sin,
    "cos": sp.cos,
    "sign": sp.sign,
}
# Names that would clash with SymPy's own functions when an unknown call gets an opaque function.
_RESERVED_FUNC_NAMES = set(KNOWN_FUNCS) | {"E", "I", "S", "N", "O", "Q", "pi", "beta", "gamma", "zeta"}
_VALUE_ATTRS = {"data", "values", "real"}
_TRANSPOSE_ATTRS = {"T", "mT", "H", "mH"}  # x.T, x.mT: the matrix transpose (real tensors: H is T)
# layers applied as `self.proj(x)`: (weight orientation in y = x W^T + b, bias keyword, bias default)
_LINEAR_LAYERS = {"Linear": ("transposed", "bias"), "LazyLinear": ("transposed", "bias"), "Dense": ("kernel", "use_bias")}
ARRAY_NAMESPACES = {"xp", "np", "jnp", "torch", "F", "math", "tf", "backend", "B"}


UNKNOWN = object()  # an effective config value that could not be determined


class Marker:
    """A non-numeric value met while translating: a string, a tuple, a fresh tensor, None."""

    def __init__(self, kind: str, value: Any = None, site: int = 0):
        self.kind = kind
        self.value = value
        self.site = site  # a Gaussian draw's call site: the same call gives the same noise leaf on every path


# ----------------------------------------------------------------------------------------- API table
@dataclass(frozen=True)
class ApiEntry:
    name: str
    # template | identity | source | clamp | where | maxmin | var | std | loss | matmul | transpose | linear | einsum
    kind: str
    args: tuple[str, ...] = ()
    defaults: tuple[tuple[str, Any], ...] = ()
    aliases: tuple[tuple[str, str], ...] = ()
    template: sp.Expr | None = None
    reduce: str | None = None
    default_reduction: str = "mean"


@dataclass(frozen=True)
class ApiTable:
    prefixes: tuple[str, ...]
    entries: dict[str, ApiEntry]
    builtins: dict[str, str]
    synonyms: tuple[tuple[str, ...], ...]
    # Gaussian samplers by qualified name, distribution classes, and generator/tensor methods (see the YAML)
    samplers: dict[str, "Sampler"] = field(default_factory=dict)
    distributions: dict[str, "Sampler"] = field(default_factory=dict)
    sampler_methods: dict[str, "Sampler"] = field(default_factory=dict)
    gradients: dict[str, str] = field(default_factory=dict)  # autodiff calls by qualified name -> kind (the YAML)
    concatenations: frozenset = frozenset()  # cat / concatenate leaves: `concat(...)` when structures are kept
    tree_maps: frozenset = frozenset()  # jax.tree_util.tree_map and its spellings (qualified names)
    library_optimizers: tuple[str, ...] = ()  # qualified-name prefixes of optimizers that apply update rules

    def strip_prefix(self, dotted: str) -> str | None:
        """The leaf of a library call (``torch.nn.functional.relu`` -> ``relu``), None if not a library."""
        for prefix in self.prefixes:
            if dotted.startswith(prefix):
                rest = dotted[len(prefix) :]
                return rest if "." not in rest else rest.rsplit(".", 1)[-1]
        return None


@dataclass(frozen=True)
class Sampler:
    """A Gaussian draw's call: which parameters (positional order, keywords) are its mean and its std."""

    args: tuple[str, ...] = ()
    mean: str = ""
    std: str = ""

    def parameters(self, args: list, kwargs: dict) -> tuple[Any, Any]:
        bound = dict(zip(self.args, args))
        bound.update(kwargs)
        mean = bound.get(self.mean, sp.Integer(0)) if self.mean else sp.Integer(0)
        std = bound.get(self.std, sp.Integer(1)) if self.std else sp.Integer(1)
        return mean, std


def _samplers(data: Any) -> dict[str, Sampler]:
    return {
        str(name): Sampler(tuple(spec.get("args") or ()), str(spec.get("mean") or ""), str(spec.get("std") or ""))
        for name, spec in sorted((data or {}).items())
    }


_GENERATOR_NAME = re.compile(r"(?:^|_)(?:rng|prng|rs|random|random_state|generator|np_random|gen)(?:$|_)", re.IGNORECASE)


def _generator_like(receiver: Any) -> bool:
    """``rng.normal(loc, scale)``: a receiver named as a random generator (``surface.normal(p)`` is no draw)."""
    return isinstance(receiver, sp.Symbol) and bool(_GENERATOR_NAME.search(re.sub(r"__\d+$", "", receiver.name)))


def _template_symbol(name: str) -> sp.Symbol:
    return sym(f"_arg_{name}")


@functools.cache
def api_table() -> ApiTable:
    data = rules.load("sympy_map.yaml")
    entries: dict[str, ApiEntry] = {}
    for name, spec in sorted(data["functions"].items()):
        args = tuple(spec.get("args", ()))
        defaults = spec.get("defaults", {}) or {}
        template = None
        if "expr" in spec:
            names = set(args) | set(defaults) | {"label_smoothing"}
            local = {n: _template_symbol(n) for n in names}
            local.update(KNOWN_FUNCS)
            template = parse_expr(spec["expr"], local_dict=local, evaluate=True)
        kind = spec.get("kind", "template")
        entries[name] = ApiEntry(
            name=name,
            kind=kind,
            args=args,
            defaults=tuple(sorted(defaults.items())),
            aliases=tuple(sorted((spec.get("aliases") or {}).items())),
            template=template,
            reduce=spec.get("reduce"),
            default_reduction=spec.get("default_reduction", "mean"),
        )
    return ApiTable(
        prefixes=tuple(data["prefixes"]),
        entries=entries,
        builtins=dict(data.get("builtins", {})),
        synonyms=tuple(tuple(s.lower() for s in group) for group in data.get("name_synonyms", [])),
        samplers=_samplers(data.get("normal_samplers")),
        distributions=_samplers(data.get("normal_distributions")),
        sampler_methods=_samplers(data.get("normal_methods")),
        gradients={str(k): str(v) for k, v in sorted((data.get("gradients") or {}).items())},
        concatenations=frozenset(str(v) for v in data.get("concatenations") or ()),
        tree_maps=frozenset(str(v) for v in data.get("tree_maps") or ()),
        library_optimizers=tuple(str(v) for v in data.get("library_optimizers") or ()),
    )


# ----------------------------------------------------------------------------------------- results
@dataclass(frozen=True)
class Candidate:
    """One value computed in a function: an assignment target, an in-place update or a return."""

    file: str
    function: str
    target: str
    line: int
    end_line: int
    expr: sp.Expr
    path: str  # the branch conditions taken, "" when the function has one path
    snippet: str


@dataclass
class FunctionModel:
    file: str
    qualname: str
    line: int
    end_line: int
    candidates: list[Candidate] = field(default_factory=list)
    # name -> [(line, path, expr)] for every named value (locals and attributes), for symbol mapping
    named: dict[str, list[tuple[int, str, sp.Expr]]] = field(default_factory=dict)
    paths: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    params: list[str] = field(default_factory=list)
    opaque: dict[str, str] = field(default_factory=dict)  # leaf name -> the unknown call whose result it is
    # values an analysis bound replaced by a leaf: (line, target, the bound); a check must not call them absent
    dropped: list[tuple[int, str, str]] = field(default_factory=list)
    # weight symbols of applied layers (`self.proj(x)`): their storage orientation is the library's, not the paper's
    layer_weights: set[str] = field(default_factory=set)
    # leaves that are standard-normal draws (randn, the eps of mean + std * eps): a formula's noise maps to one
    normal_draws: set[str] = field(default_factory=set)
    # gradients the translator could not read (line, why): a formula with a gradient is then unverified
    unresolved_gradients: list[tuple[int, str]] = field(default_factory=list)
    # leaf name -> the opaque call it holds (``d_out = self.critic(x_hat)``: ``critic(x_hat)``), so a paper's
    # ``D(x̂)`` mapped to the leaf is compared with the call's arguments
    applications: dict[str, sp.Expr] = field(default_factory=dict)
    # an opaque call -> how its arguments were written, for comparing them with a paper's application
    calls: dict[sp.Expr, "CallShape"] = field(default_factory=dict)
    # leaf name -> the call none of whose arguments could be read (``pred = model(torch.cat([x, t], -1))``):
    # a paper application mapped to the leaf is not compared with arguments the code hides
    unread_calls: dict[str, str] = field(default_factory=dict)
    # the kept structures ("slice", "concat") whose translation this function met, inlined code included:
    # with none of them met, it translates the same whatever structures a formula keeps (`StructureUse`)
    structures_met: frozenset = frozenset()


class StructureUse:
    """The structure kinds a translation reached the point of keeping (a value subscripted with a ``:``, a
    concatenation of values), whether or not it keeps them: translation branches on the kept structures
    only there, so a function that met none of a formula's kinds has the model it has with none kept.
    Shared by the translators of one run, so a helper inlined from another file counts for its caller."""

    def __init__(self) -> None:
        self.met: set[str] = set()


@dataclass(frozen=True)
class CallShape:
    """How an opaque call's arguments were written: positional ones keep their order, keyword ones (sorted
    by keyword after them) may stand for any of the paper's arguments; an argument the translator could not
    read was dropped from the call, so its arguments cannot be compared."""

    positional: int
    keywords: int
    unreadable: bool
    # the keywords in the order their values follow the positional ones (sorted), so a keyword binds by name
    keyword_names: tuple[str, ...] = ()
    # per argument, the name it was written with (``x_t`` of ``x_t.detach()``; "" for an expression): the
    # value may be inlined (``x_t`` read as its definition) while the name still tells its role
    written: tuple[str, ...] = ()
    # whose call it is: ("self", class, attribute) for ``self.model(...)``, ("global", name) for a module-level
    # name; () when unknown (a parameter, a local, a starred argument list), so no signature is looked up
    callee: tuple[str, ...] = ()
    exact: bool = True  # no ``*args`` / ``**kwargs``: each value is one argument in its written place


def merged_shape(known: "CallShape | None", shape: CallShape) -> CallShape:
    """The same call written twice: alike, it keeps its shape; with other arguments or keywords it is
    unreadable as a whole; only the names it was written with differ: those it does not agree on are dropped."""
    if known is None or known == shape:
        return shape
    if (known.positional, known.keywords, known.keyword_names, known.unreadable, known.exact) != (
        shape.positional, shape.keywords, shape.keyword_names, shape.unreadable, shape.exact
    ) or len(known.written) != len(shape.written):
        return replace(known, unreadable=True)
    written = tuple(a if a == b else "" for a, b in zip(known.written, shape.written))
    return replace(known, written=written, callee=known.callee if known.callee == shape.callee else ())


def expr_nodes(expr: sp.Basic, limit: int = MAX_EXPR_NODES) -> int:
    """Node count of ``expr``, stopping at ``limit`` (so a huge expression costs at most ``limit`` steps)."""
    count = 0
    for _ in sp.preorder_traversal(expr):
        count += 1
        if count >= limit:
            break
    return count


# ----------------------------------------------------------------------------------------- translator
@dataclass
class _Path:
    env: dict[str, Any]
    conds: tuple[str, ...] = ()
    done: bool = False  # returned
    dead: bool = False  # raised
    cut: bool = False  # left the loop iteration (continue / break)

    def fork(self, cond: str) -> _Path:
        return _Path(dict(self.env), self.conds + (cond,), self.done, self.dead, self.cut)

    @property
    def label(self) -> str:
        return " and ".join(self.conds)


HelperLookup = Callable[[str, str | None], "tuple[ast.FunctionDef, Translator] | None"]


class Translator:
    """Translates the functions of one parsed file; ``helper`` finds repo functions to inline."""

    def __init__(
        self,
        tree: ast.Module,
        file: str,
        source: str = "",
        *,
        pin: dict[str, Any] | None = None,
        helper: HelperLookup | None = None,
        effective: Callable[[str], Any] | None = None,
        structures: frozenset = frozenset(),
        use: StructureUse | None = None,
    ):
        self.tree = tree
        self.use = use if use is not None else StructureUse()
        # "concat" / "slice": keep torch.cat and x[:, :r] as the ordered opaque objects a paper's [P, Z] and
        # V[:, :r] are (verifier.symbolic.latex); otherwise a cat is a new tensor and indexing keeps the value
        self.structures = frozenset(structures)
        self.file = file
        self.lines = source.splitlines()
        self.pin = {str(k).lower(): v for k, v in (pin or {}).items()}
        self.helper = helper
        self.effective = effective  # config name -> its effective value, or UNKNOWN
        self._effective_cache: dict[str, Any] = {}
        self.table = api_table()
        self.module_aliases = _module_aliases(tree)
        self.uses_torch = any(v.split(".")[0] == "torch" for v in self.module_aliases.values())
        self.classes: dict[str, ast.ClassDef] = {}
        self.functions: dict[str, ast.FunctionDef] = {}
        for node in tree.body:
            if isinstance(node, ast.ClassDef):
                self.classes[node.name] = node
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.functions[node.name] = node
        self._init_attrs: dict[str, dict[str, sp.Expr]] = {}
        self._init_met: dict[str, frozenset] = {}  # what a memoised __init__ translation met, for each later reader
        self._layers: dict[str, dict[str, tuple[str, bool]]] = {}
        self._depth = 0
        # per-function state
        self._model: FunctionModel | None = None
        self._class: str | None = None
        self._leaf_names: dict[str, int] = {}
        self._leaf_sites: dict[tuple[str, int], sp.Symbol] = {}
        self._foreign_sites: dict[str, dict[tuple[str, int], sp.Symbol]] = {}  # leaves of helpers from other files
        self._statements = 0
        self._forks = 0  # branches split so far in this function (bounds the number of paths)

    # ----- public ---------------------------------------------------------------------------------
    def all_functions(self) -> list[FunctionModel]:
        return [self.function(node, qualname, cls) for qualname, node, cls in self.function_nodes()]

    def function_nodes(self) -> list[tuple[str, ast.FunctionDef, str | None]]:
        """(qualname, node, enclosing class) of every function, in the order `all_functions` returns them."""
        return _walk_functions(self.tree)

    def function(self, node: ast.FunctionDef, qualname: str, cls: str | None) -> FunctionModel:
        model = FunctionModel(self.file, qualname, node.lineno, getattr(node, "end_lineno", node.lineno))
        saved = (self._model, self._class, self._leaf_names, self._leaf_sites, self._statements, self._forks,
                 self._foreign_sites)
        self._model, self._class, self._leaf_names, self._leaf_sites, self._statements = model, cls, {}, {}, 0
        self._forks, self._foreign_sites = 0, {}
        outer_met, self.use.met = self.use.met, set()
        try:
            env = self._param_env(node)
            model.params = sorted(k for k in env if isinstance(env[k], sp.Symbol))
            paths = self._block(node.body, [_Path(env)])
            model.paths = sorted({p.label for p in paths if not p.dead})
        except RecursionError:
            model.notes.append("nesting too deep: translation stopped")
        finally:
            (self._model, self._class, self._leaf_names, self._leaf_sites, self._statements, self._forks,
             self._foreign_sites) = saved
            model.structures_met = frozenset(self.use.met)
            outer_met |= self.use.met  # an enclosing translation (a class's __init__ read from a method) met them too
            self.use.met = outer_met
        return model

    # ----- environment ----------------------------------------------------------------------------
    def _param_env(self, node: ast.FunctionDef) -> dict[str, Any]:
        env: dict[str, Any] = {}
        a = node.args
        for arg in [*a.posonlyargs, *a.args, *a.kwonlyargs]:
            if arg.arg not in ("self", "cls"):
                env[arg.arg] = self._leaf(arg.arg)
        for arg in (a.vararg, a.kwarg):
            if arg is not None:
                env[arg.arg] = Marker("opaque")
        return env

    def _leaf(self, name: str, site: int = 0) -> sp.Symbol:
        """A leaf symbol named after the code; a second, different leaf of the same name gets ``__2``.

        ``site`` (the statement's line) makes the same statement give the same leaf on every path."""
        clean = _clean_name(name)
        key = (clean, site)
        if site and key in self._leaf_sites:
            return self._leaf_sites[key]
        n = self._leaf_names.get(clean, 0) + 1
        self._leaf_names[clean] = n
        out = sym(clean if n == 1 else f"{clean}__{n}")
        if site:
            self._leaf_sites[key] = out
        return out

    def _attr_leaf(self, name: str) -> sp.Symbol:
        return sym(_clean_name(name))

    def init_attrs(self, cls: str | None) -> dict[str, sp.Expr]:
        """Compound values a class's ``__init__``/``setup`` stores on ``self`` (register_buffer included)."""
        if cls is None or cls not in self.classes:
            return {}
        if cls in self._init_attrs:
            self.use.met |= self._init_met.get(cls, frozenset())
            return self._init_attrs[cls]
        self._init_attrs[cls] = {}
        attrs: dict[str, sp.Expr] = {}
        met: set[str] = set()
        for item in self.classes[cls].body:
            if isinstance(item, ast.FunctionDef) and item.name in ("__init__", "setup", "__post_init__"):
                model = self.function(item, f"{cls}.{item.name}", cls)
                met |= model.structures_met
                for name, versions in model.named.items():
                    if not name.startswith("self."):
                        continue
                    expr = versions[-1][2]
                    if isinstance(expr, sp.Expr) and not expr.is_Atom:
                        attrs[name[5:]] = expr
        self._init_attrs[cls] = attrs
        self._init_met[cls] = frozenset(met)
        return attrs

    # ----- statements -----------------------------------------------------------------------------
    def _block(self, stmts: list[ast.stmt], paths: list[_Path]) -> list[_Path]:
        for stmt in stmts:
            self._statements += 1
            if self._statements > MAX_STATEMENTS:
                if self._model is not None and "statement limit reached" not in self._model.notes:
                    self._model.notes.append("statement limit reached")
                break
            nxt: list[_Path] = []
            for path in paths:
                if path.done or path.dead or path.cut:
                    nxt.append(path)
                else:
                    nxt.extend(self._stmt(stmt, path))
            paths = nxt
        return paths

    def _stmt(self, stmt: ast.stmt, path: _Path) -> list[_Path]:
        try:
            return self._stmt_inner(stmt, path)
        except Exception as exc:  # noqa: BLE001 - SymPy raises many kinds on odd input; one statement is lost
            why = "expression too deep" if isinstance(exc, RecursionError) else f"not translated ({type(exc).__name__})"
            for target in _assigned_names(stmt):
                path.env[target] = self._leaf(_key_leaf(target), stmt.lineno)
                if isinstance(exc, RecursionError) and self._model is not None:
                    self._model.dropped.append((stmt.lineno, target, "expression nested too deeply"))
            if self._model is not None:
                self._model.notes.append(f"line {stmt.lineno}: {why}, kept as a leaf")
            return [path]

    def _stmt_inner(self, stmt: ast.stmt, path: _Path) -> list[_Path]:
        if isinstance(stmt, ast.Assign):
            value = self.expr(stmt.value, path)
            for target in stmt.targets:
                self._bind(target, value, stmt, path)
        elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
            self._bind(stmt.target, self.expr(stmt.value, path), stmt, path)
        elif isinstance(stmt, ast.AugAssign):
            current = self.expr(stmt.target, path)
            value = self._binop(stmt.op, current, self.expr(stmt.value, path))
            self._bind(stmt.target, value, stmt, path)
        elif isinstance(stmt, ast.Expr):
            if isinstance(stmt.value, ast.Call):
                self.expr(stmt.value, path, stmt=stmt)
        elif isinstance(stmt, ast.Return):
            if stmt.value is not None:
                value = self._drawn(self.expr(stmt.value, path))
                if isinstance(value, sp.Basic) and expr_nodes(value) >= MAX_EXPR_NODES:
                    self._drop(stmt.lineno, "return")
                    value = self._leaf("return", stmt.lineno)
                self._record("return", value, stmt, path)
                path.env["<return>"] = value
            path.done = True
        elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            path.env[f"<def {stmt.name}>"] = Marker("def", stmt)  # a closure jax.grad may differentiate
        elif isinstance(stmt, ast.Raise):
            path.dead = True
        elif isinstance(stmt, (ast.Continue, ast.Break)):
            path.cut = True  # loops run once: what follows `continue` on this path never runs
        elif isinstance(stmt, ast.If):
            return self._if(stmt, path)
        elif isinstance(stmt, (ast.For, ast.AsyncFor)):
            for name in _target_names(stmt.target):
                path.env[name] = self._leaf(name, stmt.lineno)
            return self._loop(stmt.body, path)
        elif isinstance(stmt, ast.While):
            return self._loop(stmt.body, path)
        elif isinstance(stmt, (ast.With, ast.AsyncWith)):
            for item in stmt.items:
                if item.optional_vars is not None:
                    for name in _target_names(item.optional_vars):
                        path.env[name] = self._leaf(name, stmt.lineno)
            return self._block(stmt.body, [path])
        elif isinstance(stmt, ast.Try):
            paths = self._block(stmt.body, [path])
            return self._block(stmt.finalbody, paths) if stmt.finalbody else paths
        return [path]

    def _loop(self, body: list[ast.stmt], path: _Path) -> list[_Path]:
        """One iteration; a path cut by `continue`/`break` goes on after the loop, no longer cut."""
        out = self._block(body, [path])
        kept = [p for p in out if not p.cut]
        for p in out:
            p.cut = False
        return kept or out

    def _if(self, stmt: ast.If, path: _Path) -> list[_Path]:
        decided = self._decide(stmt.test)
        if decided is not None:
            return self._block(stmt.body if decided else stmt.orelse, [path])
        label = _short(ast.unparse(stmt.test))
        if self._forks >= MAX_PATHS - 1:
            if self._model is not None:
                self._model.notes.append(f"line {stmt.lineno}: path limit reached, took `{label}`")
            return self._block(stmt.body, [path])
        self._forks += 1
        yes = self._block(stmt.body, [path.fork(label)])
        no = self._block(stmt.orelse, [path.fork(f"not ({label})")])
        return yes + no

    def _decide(self, test: ast.expr) -> bool | None:
        """Evaluate a branch condition from pinned config values; None when it depends on anything else."""
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            inner = self._decide(test.operand)
            return None if inner is None else not inner
        if isinstance(test, ast.BoolOp):
            parts = [self._decide(v) for v in test.values]
            if isinstance(test.op, ast.And):
                if any(p is False for p in parts):
                    return False
                return True if all(p is True for p in parts) else None
            if any(p is True for p in parts):
                return True
            return False if all(p is False for p in parts) else None
        leaf = _leaf_name(test)
        if leaf is not None and self._known(leaf) is not UNKNOWN and not isinstance(test, ast.Subscript):
            return bool(self._known(leaf))
        if isinstance(test, ast.Compare) and len(test.ops) == 1:
            left, right = test.left, test.comparators[0]
            leaf = _leaf_name(left)
            if leaf is None or self._known(leaf) is UNKNOWN:
                leaf, left, right = _leaf_name(right), right, left
            if leaf is None or self._known(leaf) is UNKNOWN:
                return None
            pinned = self._known(leaf)
            try:
                other = ast.literal_eval(right)
            except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                return None
            op = test.ops[0]
            if isinstance(op, (ast.Eq, ast.Is)):
                return pinned == other
            if isinstance(op, (ast.NotEq, ast.IsNot)):
                return pinned != other
            if isinstance(op, ast.In) and isinstance(other, (tuple, list, set, str)):
                return pinned in other
            if isinstance(op, ast.NotIn) and isinstance(other, (tuple, list, set, str)):
                return pinned not in other
        return None

    def _known(self, leaf: str) -> Any:
        """A branch's config value: the spec's pin first, then the repo's effective value."""
        key = leaf.lower()
        if key in self.pin:
            return self.pin[key]
        if self.effective is None:
            return UNKNOWN
        if leaf not in self._effective_cache:  # by the name as written: `Foo` and `foo` are two settings
            try:
                self._effective_cache[leaf] = self.effective(leaf)
            except Exception:  # noqa: BLE001 - a resolver failure only means "not known"
                self._effective_cache[leaf] = UNKNOWN
        return self._effective_cache[leaf]

    def _bind(self, target: ast.expr, value: Any, stmt: ast.stmt, path: _Path) -> None:
        if isinstance(target, (ast.Tuple, ast.List)):
            elts = target.elts
            if isinstance(value, Marker) and value.kind == "tuple" and len(value.value) == len(elts):
                for t, v in zip(elts, value.value):
                    self._bind(t, v, stmt, path)
            else:
                for t in elts:
                    inner = t.value if isinstance(t, ast.Starred) else t
                    key = _target_key(inner)
                    if key:
                        self._bind(inner, self._leaf(_key_leaf(key), stmt.lineno), stmt, path)
            return
        if isinstance(target, ast.Subscript) and _const_key(target) is None:
            return  # x[mask] = y: a partial update, the name keeps its value
        key = _target_key(target)
        if key is None:
            return
        leafname = _key_leaf(key)
        if isinstance(value, Marker) and value.kind == "normal":
            value = self._draw(value, leafname, stmt.lineno)  # noise = randn_like(x): the leaf is `noise`
        elif isinstance(value, Marker) and value.kind in ("source", "opaque"):
            unread = value.value if value.kind == "opaque" and isinstance(value.value, str) else None
            value = self._leaf(leafname, stmt.lineno)
            if unread and self._model is not None:
                self._model.unread_calls[value.name] = unread
        elif is_opaque_call(value):
            called = value.func.__name__
            applied = value
            value = self._leaf(leafname, stmt.lineno)  # an opaque call's result is a named leaf (model outputs)
            if self._model is not None:
                self._model.opaque[value.name] = called
                self._model.applications.setdefault(value.name, applied)
        elif isinstance(value, sp.Basic) and expr_nodes(value) >= MAX_EXPR_NODES:
            self._drop(stmt.lineno, key)
            value = self._leaf(leafname, stmt.lineno)
        path.env[key] = value
        self._record(key, value, stmt, path)

    def _drop(self, line: int, target: str) -> None:
        if self._model is not None:
            self._model.notes.append(f"line {line}: `{target}` too large to inline, kept as a leaf")
            self._model.dropped.append((line, target, f"more than {MAX_EXPR_NODES} expression nodes"))

    def _record(self, target: str, value: Any, stmt: ast.stmt, path: _Path) -> None:
        if self._model is None or not isinstance(value, sp.Expr):
            return
        end = getattr(stmt, "end_lineno", stmt.lineno) or stmt.lineno
        snippet = "\n".join(self.lines[stmt.lineno - 1 : end]).strip() if self.lines else ast.unparse(stmt)
        self._model.candidates.append(
            Candidate(self.file, self._model.qualname, target, stmt.lineno, end, value, path.label, _short(snippet, 200))
        )
        self._model.named.setdefault(target, []).append((stmt.lineno, path.label, value))

    # ----- expressions ----------------------------------------------------------------------------
    def expr(self, node: ast.expr, path: _Path, stmt: ast.stmt | None = None) -> Any:
        if isinstance(node, ast.Constant):
            return _constant(node.value)
        if isinstance(node, ast.Name):
            if node.id in path.env:
                return path.env[node.id]
            if node.id in ("True", "False", "None"):
                return Marker("const", node.id)
            return self._attr_leaf(node.id)
        if isinstance(node, ast.Attribute):
            return self._attribute(node, path)
        if isinstance(node, ast.Subscript):
            key = _target_key(node)
            if key is not None and key in path.env:
                return path.env[key]
            const = _const_key(node)
            base = self.expr(node.value, path)
            if isinstance(base, Marker) and base.kind == "tuple" and isinstance(const, int):
                items = base.value
                return items[const] if -len(items) <= const < len(items) else Marker("opaque")
            if isinstance(const, str):
                return self._attr_leaf(const)
            if _is_shape(node.value):
                return self._attr_leaf(f"{_leaf_name(node.value.value) or 'x'}_dim")
            if isinstance(base, sp.Expr) and _has_slice(node.slice):
                self.use.met.add("slice")
                if "slice" in self.structures:
                    sliced = self._slice(base, node.slice, path)
                    if sliced is not None:
                        return sliced
            return base  # indexing keeps the value (elementwise comparison)
        if isinstance(node, ast.BinOp):
            if isinstance(node.op, ast.MatMult):
                return self._binop(node.op, self._operand(node.left, path), self._operand(node.right, path))
            return self._binop(node.op, self._drawn(self.expr(node.left, path)), self._drawn(self.expr(node.right, path)))
        if isinstance(node, ast.UnaryOp):
            operand = self._drawn(self.expr(node.operand, path))
            if not isinstance(operand, sp.Basic):
                return Marker("opaque")
            if isinstance(node.op, ast.USub):
                return -operand
            if isinstance(node.op, ast.UAdd):
                return operand
            if isinstance(node.op, ast.Not) and isinstance(operand, sp.logic.boolalg.Boolean):
                return sp.Not(operand)
            return Marker("opaque")
        if isinstance(node, ast.Compare) and len(node.ops) == 1:
            return _compare(node.ops[0], self.expr(node.left, path), self.expr(node.comparators[0], path))
        if isinstance(node, ast.BoolOp):
            parts = [self.expr(v, path) for v in node.values]
            if all(isinstance(p, sp.logic.boolalg.Boolean) for p in parts):
                return sp.And(*parts) if isinstance(node.op, ast.And) else sp.Or(*parts)
            return Marker("opaque")
        if isinstance(node, ast.IfExp):
            return _piecewise(self.expr(node.test, path), self.expr(node.body, path), self.expr(node.orelse, path))
        if isinstance(node, (ast.Tuple, ast.List)):
            return Marker("tuple", [self.expr(e, path) for e in node.elts])
        if isinstance(node, ast.Call):
            value = self._call(node, path, stmt)
            if isinstance(value, Marker) and value.kind == "normal" and not value.site:
                value.site = node.lineno * 10000 + node.col_offset
            return value
        return Marker("opaque")

    def _slice(self, base: sp.Expr, index: ast.expr, path: _Path) -> sp.Expr | None:
        """``x[:, :r]`` -> ``slice_ah(x, r)`` (bounds translated); None when there is no ``:`` in it, a step,
        or a bound that is not a value (a mask, a list)."""
        if not _has_slice(index):
            return None
        parts = index.elts if isinstance(index, ast.Tuple) else [index]
        axes: list[tuple[str, list[sp.Expr]]] = []
        for part in parts:
            if isinstance(part, ast.Constant) and part.value is Ellipsis:
                axes.append(("e", []))
                continue
            if not isinstance(part, ast.Slice):
                value = self.expr(part, path)
                if not isinstance(value, sp.Expr):
                    return None
                axes.append(("i", [value]))
                continue
            if part.step is not None:
                return None
            lo = self.expr(part.lower, path) if part.lower is not None else None
            hi = self.expr(part.upper, path) if part.upper is not None else None
            if any(v is not None and not isinstance(v, sp.Expr) for v in (lo, hi)):
                return None
            letter = {(False, False): "a", (False, True): "h", (True, False): "l", (True, True): "b"}[(lo is not None, hi is not None)]
            axes.append((letter, [v for v in (lo, hi) if v is not None]))
        return slice_of(base, axes)

    def _draw(self, marker: Marker, name: str, site: int) -> Any:
        """A Gaussian draw as ``mean + std * z``: z a standard-normal leaf, named ``name`` when the draw is
        the whole assigned value (``eps = randn_like(x)``), recorded so a formula's noise maps to it."""
        mean, std = marker.value
        if not (isinstance(mean, sp.Expr) and isinstance(std, sp.Expr)):
            return self._leaf(name, site)
        standard = mean == 0 and std == 1
        leaf = self._leaf(name if standard else "noise", site if standard else marker.site or site)
        if self._model is not None:
            self._model.normal_draws.add(leaf.name)
        return leaf if standard else mean + std * leaf

    def _drawn(self, value: Any) -> Any:
        """A draw inside an expression (``mean + std * randn_like(x)``) is its own noise leaf."""
        if isinstance(value, Marker) and value.kind == "normal":
            return self._draw(value, "noise", value.site)
        return value

    def _attribute(self, node: ast.Attribute, path: _Path) -> Any:
        if node.attr in _TRANSPOSE_ATTRS:
            base = self.expr(node.value, path)
            return transpose(base) if isinstance(base, sp.Expr) else Marker("opaque")
        key = _target_key(node)
        if key is not None and key in path.env:
            return path.env[key]
        if node.attr == "grad" and not (isinstance(node.value, ast.Name) and node.value.id == "self"):
            found = self._accumulated_grad(node, path)
            if found is not None:
                return found
        if node.attr in _VALUE_ATTRS:
            return self.expr(node.value, path)
        if isinstance(node.value, ast.Name) and node.value.id == "self":
            attrs = self.init_attrs(self._class)
            if node.attr in attrs:
                return attrs[node.attr]
        return self._attr_leaf(node.attr)

    def _binop(self, op: ast.operator, a: Any, b: Any) -> Any:
        if not (isinstance(a, sp.Expr) and isinstance(b, sp.Expr)):
            return Marker("opaque")
        try:
            if isinstance(op, ast.Add):
                return a + b
            if isinstance(op, ast.Sub):
                return a - b
            if isinstance(op, ast.Mult):
                return a * b
            if isinstance(op, ast.Div):
                return a / b
            if isinstance(op, ast.Pow):
                return Marker("opaque") if power_too_large(a, b) else a**b
            if isinstance(op, ast.FloorDiv):
                return sp.floor(a / b)
            if isinstance(op, ast.Mod):
                return sp.Mod(a, b)
            if isinstance(op, ast.MatMult):
                return matmul(a, b)
        except (TypeError, ValueError, ZeroDivisionError):
            return Marker("opaque")
        return Marker("opaque")

    # ----- calls ----------------------------------------------------------------------------------
    def _operand(self, node: ast.expr, path: _Path) -> Any:
        """A matrix-product operand: ``k.transpose(1, 2)`` right before a product swaps the matrix axes
        (``bmm(q, k.transpose(1, 2))``), while elsewhere the same call reorders batch or head axes."""
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("transpose", "swapaxes"):
            dotted = attribute_chain(node.func) or ""
            root = dotted.split(".")[0]
            if root in self.module_aliases and root not in path.env:
                operands = node.args[:1]
                axes = node.args[1:]
            else:
                operands = [node.func.value]
                axes = node.args
            if len(operands) == 1 and len(axes) == 2 and all(_int_literal(a) is not None for a in axes):
                base = self.expr(operands[0], path)
                return transpose(base) if isinstance(base, sp.Expr) else Marker("opaque")
        return self.expr(node, path)

    def layers(self, cls: str | None) -> dict[str, tuple[str, bool]]:
        """Linear layers a class builds in ``__init__``/``setup``: attribute -> (orientation, has a bias)."""
        if cls is None or cls not in self.classes:
            return {}
        if cls not in self._layers:
            found: dict[str, tuple[str, bool]] = {}
            for item in self.classes[cls].body:
                if not (isinstance(item, ast.FunctionDef) and item.name in ("__init__", "setup")):
                    continue
                for node in ast.walk(item):
                    if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.value, ast.Call)):
                        continue
                    target = node.targets[0]
                    if not (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self"):
                        continue
                    called = attribute_chain(node.value.func) or ""
                    kind = _LINEAR_LAYERS.get(called.rsplit(".", 1)[-1])
                    if kind is None:
                        continue
                    orientation, bias_kw = kind
                    bias = next((k.value for k in node.value.keywords if k.arg == bias_kw), None)
                    has_bias = not (isinstance(bias, ast.Constant) and bias.value is False)
                    found[target.attr] = (orientation, has_bias)
            self._layers[cls] = found
        return self._layers[cls]

    def _apply_layer(self, attr: str, orientation: str, has_bias: bool, args: list) -> Any:
        """``self.proj(x)`` of an ``nn.Linear``: x W^T + b (flax ``Dense``: x K + b), with named weight symbols."""
        if len(args) != 1 or not isinstance(args[0], sp.Expr):
            return None
        weight = self._attr_leaf(f"{attr}_weight" if orientation == "transposed" else f"{attr}_kernel")
        if self._model is not None:
            self._model.layer_weights.add(weight.name)
        out = matmul(args[0], transpose(weight) if orientation == "transposed" else weight)
        return out + self._attr_leaf(f"{attr}_bias") if has_bias else out

    def _call(self, node: ast.Call, path: _Path, stmt: ast.stmt | None) -> Any:
        func = node.func
        called = func.attr if isinstance(func, ast.Attribute) else (func.id if isinstance(func, ast.Name) else "")
        entry = api_table().entries.get(called)  # matmul/mm/bmm (`kind: matmul`) and np.dot: matrix-product operands
        evaluate = self._operand if called == "dot" or (entry is not None and entry.kind == "matmul") else self.expr
        args = [evaluate(a.value if isinstance(a, ast.Starred) else a, path) for a in node.args]
        kwargs = {k.arg: self.expr(k.value, path) for k in node.keywords if k.arg}
        qualified = self._qualified(func, path)
        if qualified in self.table.gradients:
            return self._gradient_call(self.table.gradients[qualified], qualified, node, args, kwargs, path)
        if qualified in self.table.tree_maps and node.args and len(args) >= 2:
            # tree_map(lambda p, g: p - lr * g, params, grads): the function on the trees as on one tensor each
            return self._applied(node.args[0], args[1:], {}, path)
        if isinstance(func, ast.Call):  # jax.grad(f)(x)
            inner = self._call(func, path, None)
            if isinstance(inner, Marker) and inner.kind == "gradfn":
                return self._apply_values(inner, args, kwargs, node.lineno, path)
            return Marker("opaque")
        if isinstance(func, ast.Name) and isinstance(path.env.get(func.id), Marker) and path.env[func.id].kind == "gradfn":
            return self._apply_values(path.env[func.id], args, kwargs, node.lineno, path)  # g_fn = jax.grad(f); g_fn(x)
        if isinstance(func, ast.Attribute) and func.attr == "backward":
            self._backward(func, node, kwargs, path)
        if qualified in self.table.samplers:  # torch.normal(mean, std), np.random.normal(loc, scale), randn
            return Marker("normal", self.table.samplers[qualified].parameters(args, kwargs))
        if qualified in self.table.distributions:  # Normal(mu, sigma): .rsample() / .sample() draw from it
            return Marker("gaussian", self.table.distributions[qualified].parameters(args, kwargs))
        if isinstance(func, ast.Name):
            name = func.id
            if name in path.env:
                return self._opaque(name, args, kwargs, node)  # a parameter or a local: its signature is unknown
            if name in self.module_aliases:  # from torch.nn.functional import relu
                leaf = self.table.strip_prefix(self.module_aliases[name]) or name
                return self._library(leaf, args, kwargs, numpy_like=not self._is_torch(self.module_aliases[name]))
            builtin = self.table.builtins.get(name)
            if builtin is not None:
                return self._library(builtin, args, kwargs, numpy_like=False, builtin=True)
            inlined = self._inline_helper(name, None, args, kwargs)
            if inlined is not None:
                return inlined
            return self._opaque(name, args, kwargs, node, ("global", name))
        if isinstance(func, ast.Attribute):
            dotted = attribute_chain(func)
            root = dotted.split(".")[0] if dotted else None
            if dotted and root in self.module_aliases and root not in path.env:
                qualified = self.module_aliases[root] + dotted[len(root) :]
                leaf = self.table.strip_prefix(qualified + "") or self.table.strip_prefix(dotted)
                if leaf is not None:
                    return self._library(leaf, args, kwargs, numpy_like=not self._is_torch(qualified))
                return self._opaque(func.attr, args, kwargs)
            if dotted and self.table.strip_prefix(dotted) is not None and root not in path.env and root != "self":
                leaf = self.table.strip_prefix(dotted)
                return self._library(leaf, args, kwargs, numpy_like=not dotted.startswith(("torch", "F.")))
            if dotted and root in ARRAY_NAMESPACES and dotted.count(".") == 1 and func.attr in self.table.entries:
                # `xp = array_namespace(x); xp.exp(x)`: an array-API namespace, not a tensor method
                return self._library(func.attr, args, kwargs, numpy_like=True)
            if isinstance(func.value, ast.Name) and func.value.id == "self":
                layer = self.layers(self._class).get(func.attr)
                if layer is not None:
                    applied = self._apply_layer(func.attr, *layer, args)
                    if applied is not None:
                        return applied
                inlined = self._inline_helper(func.attr, self._class, args, kwargs)
                if inlined is not None:
                    return inlined
                return self._opaque(func.attr, args, kwargs, node, ("self", self._class, func.attr) if self._class else ())
            method = func.attr
            receiver = self.expr(func.value, path)
            if method.endswith("_") and not method.endswith("__"):
                base = method[:-1]
                value = self._method(base, receiver, args, kwargs)
                if method in self.table.sampler_methods:  # eps.normal_(): the tensor is refilled with a draw
                    value = Marker("normal", self.table.sampler_methods[method].parameters(args, kwargs))
                    key = _inplace_base(func.value)
                    site = node.lineno * 10000 + node.col_offset
                    value.site = site
                    if key is not None:
                        value = self._draw(value, _key_leaf(key), site)
                if base in ("zero",):
                    value = sp.Integer(0)
                elif base == "fill":
                    value = args[0] if args else Marker("opaque")
                key = _inplace_base(func.value)
                if key is not None and isinstance(value, sp.Expr):
                    path.env[key] = value
                    if stmt is not None:
                        self._record(key, value, stmt, path)
                return value
            return self._method(method, receiver, args, kwargs)
        return Marker("opaque")

    # ----- gradients ------------------------------------------------------------------------------
    def _unresolved(self, line: int, why: str) -> Marker:
        if self._model is not None:
            self._model.unresolved_gradients.append((line, why))
        return Marker("opaque")

    def _backward(self, func: ast.Attribute, node: ast.Call, kwargs: dict, path: _Path) -> None:
        """``loss.backward()``: the ``x.grad`` read after it in this function is the gradient of that loss."""
        loss = self.expr(func.value, path)
        weight = kwargs.get("gradient", self.expr(node.args[0], path) if node.args else None)
        if isinstance(weight, Marker) and weight.kind == "source" and weight.value in ("ones_like", "ones"):
            weight = None
        if not isinstance(loss, sp.Expr) or (weight is not None and not isinstance(weight, sp.Expr)):
            path.env["<backward>"] = self._unresolved(node.lineno, f"`{ast.unparse(func.value)}.backward(...)` not translated")
            return
        path.env["<backward>"] = loss if weight is None else loss * weight

    def _accumulated_grad(self, node: ast.Attribute, path: _Path) -> Any:
        """``x.grad`` after ``loss.backward()`` in the same function; None (the old leaf ``grad``) when no
        backward call precedes it here, recorded as unresolved: an optimizer's ``p.grad`` stays a leaf."""
        loss = path.env.get("<backward>")
        if loss is None:
            self._unresolved(node.lineno, f"`{ast.unparse(node)}` read with no `backward()` before it in the function")
            return None
        wrt = self.expr(node.value, path)
        if not isinstance(loss, sp.Expr) or not isinstance(wrt, sp.Expr):
            return self._unresolved(node.lineno, f"`{ast.unparse(node)}`: the loss or the tensor is not translated")
        return Grad(loss, wrt)

    def _gradient_call(self, kind: str, qualified: str, node: ast.Call, args: list, kwargs: dict, path: _Path) -> Any:
        if kind == "autograd":
            return self._autograd(node, args, kwargs)
        if kind in ("transform", "value_and_grad", "grad_and_value"):
            if not node.args:
                return self._unresolved(node.lineno, f"`{qualified}` with no function")
            argnums = node.args[1] if len(node.args) > 1 else next((k.value for k in node.keywords if k.arg == "argnums"), None)
            aux = next((k.value for k in node.keywords if k.arg == "has_aux"), None)
            return Marker("gradfn", (node.args[0], argnums, kind, isinstance(aux, ast.Constant) and aux.value is True, qualified))
        if kind == "jacobian_call" and len(node.args) >= 2:
            inputs = node.args[1]
            call_args = inputs.elts if isinstance(inputs, ast.Tuple) else [inputs]
            values = [self.expr(a, path) for a in call_args]
            fn = Marker("gradfn", (node.args[0], None if len(call_args) == 1 else ast.Tuple(
                [ast.Constant(i) for i in range(len(call_args))]), "transform", False, qualified))
            return self._apply_values(fn, values, {}, node.lineno, path)
        return self._unresolved(node.lineno, f"`{qualified}` is not read as a gradient")

    def _autograd(self, node: ast.Call, args: list, kwargs: dict) -> Any:
        """``torch.autograd.grad(outputs, inputs, grad_outputs)``: one gradient per input, as a tuple."""
        names = ("outputs", "inputs", "grad_outputs")
        bound = dict(zip(names, args))
        bound.update({k: v for k, v in kwargs.items() if k in names})
        outputs, inputs, weights = bound.get("outputs"), bound.get("inputs"), bound.get("grad_outputs")
        outs = outputs.value if isinstance(outputs, Marker) and outputs.kind == "tuple" else [outputs]
        ins = inputs.value if isinstance(inputs, Marker) and inputs.kind == "tuple" else [inputs]
        ws = weights.value if isinstance(weights, Marker) and weights.kind == "tuple" else [weights] * len(outs)
        total = []
        for out, w in zip(outs, ws):
            if isinstance(w, Marker) and (w.kind == "source" and w.value in ("ones_like", "ones") or w.kind == "const"):
                w = None
            if not isinstance(out, sp.Expr) or (w is not None and not isinstance(w, sp.Expr)):
                return self._unresolved(node.lineno, "torch.autograd.grad: outputs or grad_outputs not translated")
            total.append(out if w is None else out * w)
        if not total or not ins or not all(isinstance(x, sp.Expr) for x in ins):
            return self._unresolved(node.lineno, "torch.autograd.grad: inputs not translated")
        f = sp.Add(*total)
        return Marker("tuple", [Grad(f, x) for x in ins])

    def _apply_values(self, fn: Marker, args: list, kwargs: dict, line: int, path: _Path) -> Any:
        """``jax.grad(f, argnums)`` applied: f inlined on the arguments, differentiated w.r.t. the chosen ones."""
        fnode, argnums, kind, aux, qualified = fn.value
        if argnums is None:
            picked: Any = 0
        elif isinstance(argnums, ast.Constant) and isinstance(argnums.value, int):
            picked = argnums.value
        elif isinstance(argnums, ast.Tuple) and all(isinstance(e, ast.Constant) and isinstance(e.value, int) for e in argnums.elts):
            picked = [e.value for e in argnums.elts]
        else:
            return self._unresolved(line, f"`{qualified}`: argnums not a literal")
        indexes = picked if isinstance(picked, list) else [picked]
        if any(not -len(args) <= i < len(args) for i in indexes) or not indexes:
            return self._unresolved(line, f"`{qualified}`: the differentiated argument is not given")
        value = self._applied(fnode, args, kwargs, path)
        if aux:  # has_aux=True: f returns (loss, aux), the gradient is of the loss
            value = value.value[0] if isinstance(value, Marker) and value.kind == "tuple" and value.value else Marker("opaque")
        if not isinstance(value, sp.Expr) or not all(isinstance(args[i], sp.Expr) for i in indexes):
            return self._unresolved(line, f"`{qualified}`: the function or its argument is not translated")
        grads = [Grad(value, args[i]) for i in indexes]
        grad = grads[0] if not isinstance(picked, list) else Marker("tuple", grads)
        if kind == "value_and_grad":
            return Marker("tuple", [value, grad])
        if kind == "grad_and_value":
            return Marker("tuple", [grad, value])
        return grad

    def _applied(self, fnode: ast.expr, args: list, kwargs: dict, path: _Path) -> Any:
        """The value of a function given to a gradient transform, called on ``args``: a lambda, a nested
        ``def`` (with its closure), a module function or repo helper, or a method of this class."""
        if isinstance(fnode, ast.Lambda):
            env = dict(path.env)
            params = [a.arg for a in [*fnode.args.posonlyargs, *fnode.args.args]]
            if len(params) < len(args):
                return Marker("opaque")
            env.update(zip(params, args))
            return self.expr(fnode.body, _Path(env))
        if isinstance(fnode, ast.Name):
            nested = path.env.get(f"<def {fnode.id}>")
            if isinstance(nested, Marker) and nested.kind == "def":
                return self._run_nested(nested.value, args, kwargs, path)
            found = self._inline_helper(fnode.id, None, args, kwargs)
            return found if found is not None else Marker("opaque")
        if isinstance(fnode, ast.Attribute) and isinstance(fnode.value, ast.Name) and fnode.value.id == "self":
            found = self._inline_helper(fnode.attr, self._class, args, kwargs)
            return found if found is not None else Marker("opaque")
        return Marker("opaque")

    def _run_nested(self, node: ast.FunctionDef, args: list, kwargs: dict, path: _Path) -> Any:
        if _count_statements(node) > MAX_HELPER_STATEMENTS or self._depth >= MAX_HELPER_DEPTH:
            return Marker("opaque")
        env = dict(path.env)
        params = [a.arg for a in [*node.args.posonlyargs, *node.args.args]]
        if len(params) < len(args):
            return Marker("opaque")
        env.update(zip(params, args))
        env.update({k: v for k, v in kwargs.items() if k in params})
        saved = (self._model, self._statements, self._forks)
        self._model, self._statements, self._forks = None, 0, MAX_PATHS
        self._depth += 1
        try:
            paths = self._block(node.body, [_Path(env)])
        except RecursionError:
            return Marker("opaque")
        finally:
            self._model, self._statements, self._forks = saved
            self._depth -= 1
        for p in paths:
            value = p.env.get("<return>")
            if p.done and not p.dead and isinstance(value, (sp.Expr, Marker)):
                return value
        return Marker("opaque")

    def _qualified(self, func: ast.expr, path: _Path) -> str:
        """The imported name a call spells (``np.random.normal`` -> ``numpy.random.normal``), "" otherwise."""
        if isinstance(func, ast.Name):
            return self.module_aliases.get(func.id, "") if func.id not in path.env else ""
        dotted = attribute_chain(func) if isinstance(func, ast.Attribute) else None
        root = dotted.split(".")[0] if dotted else ""
        if not dotted or root not in self.module_aliases or root in path.env:
            return ""
        return self.module_aliases[root] + dotted[len(root) :]

    def _is_torch(self, qualified: str) -> bool:
        return qualified.split(".")[0] == "torch"

    def _method(self, name: str, receiver: Any, args: list, kwargs: dict) -> Any:
        if isinstance(receiver, Marker) and receiver.kind == "gaussian":
            if name in ("sample", "rsample"):
                return Marker("normal", receiver.value)
            receiver = sp.Function("Normal")(*[v for v in receiver.value if isinstance(v, sp.Expr)])  # log_prob, ...
        if name in self.table.sampler_methods and _generator_like(receiver):
            return Marker("normal", self.table.sampler_methods[name].parameters(args, kwargs))  # rng.normal(loc, scale)
        if name in self.table.entries:
            return self._library(name, [receiver, *args], kwargs, numpy_like=not self.uses_torch, method=True)
        if isinstance(receiver, sp.Expr):
            return self._opaque(name, [receiver, *args], kwargs)
        return self._opaque(name, args, kwargs)

    def _opaque(self, name: str, args: list, kwargs: dict, node: ast.Call | None = None, callee: tuple = ()) -> Any:
        """An unknown call, kept as a function of its arguments; ``node`` (a call written as ``f(...)`` or
        ``self.f(...)``, not a method of a value) gives the names its arguments were written with."""
        values = [a for a in [*args, *(kwargs[k] for k in sorted(kwargs))] if isinstance(a, sp.Expr)]
        fname = _clean_name(name)
        if fname in _RESERVED_FUNC_NAMES:
            fname = f"{fname}_"
        if not values:
            return Marker("opaque", fname if node is not None and (node.args or node.keywords) else None)
        out = sp.Function(fname)(*values)
        if self._model is not None and isinstance(out, AppliedUndef):
            unreadable = len(values) < len(args) + len(kwargs)
            exact = node is not None and not any(isinstance(a, ast.Starred) for a in node.args) and all(
                k.arg for k in node.keywords
            )
            written: tuple[str, ...] = ()
            if node is not None and exact and not unreadable:
                by_keyword = {k.arg: k.value for k in node.keywords}
                written = tuple(_written_name(a) for a in [*node.args, *(by_keyword[k] for k in sorted(kwargs))])
            shape = CallShape(
                positional=sum(isinstance(a, sp.Expr) for a in args), keywords=sum(isinstance(kwargs[k], sp.Expr) for k in kwargs),
                unreadable=unreadable, keyword_names=tuple(sorted(k for k in kwargs if isinstance(kwargs[k], sp.Expr))),
                written=written, callee=callee if exact else (), exact=exact,
            )
            self._model.calls[out] = merged_shape(self._model.calls.get(out), shape)
        return out

    def _library(
        self, leaf: str, args: list, kwargs: dict, *, numpy_like: bool, method: bool = False, builtin: bool = False
    ) -> Any:
        entry = self.table.entries.get(leaf)
        if entry is None:
            return self._opaque(leaf, args, kwargs)
        kind = entry.kind
        if kind == "identity":
            return args[0] if args else Marker("opaque")
        if kind == "source":
            if leaf in self.table.concatenations and args:
                self.use.met.add("concat")
                items = args[0].value if isinstance(args[0], Marker) and args[0].kind == "tuple" else [args[0]]
                if "concat" in self.structures and items and all(isinstance(v, sp.Expr) for v in items):
                    return concat(*items)  # the axis (dim=, axis=) is not compared
            return Marker("source", leaf)
        if kind in ("matmul", "transpose", "linear", "einsum") or (leaf == "dot" and numpy_like):
            return _matrix_call(kind if leaf != "dot" else "matmul", args, kwargs, permutation=leaf == "permute")
        bound = _bind_args(entry, args, kwargs)
        x = bound.get("x", args[0] if args else None)
        if kind == "clamp":
            if not isinstance(x, sp.Expr):
                return Marker("opaque")
            lo = bound.get("min")
            hi = bound.get("max")
            out = x
            if isinstance(lo, sp.Expr):
                out = sp.Max(out, lo)
            if isinstance(hi, sp.Expr):
                out = sp.Min(out, hi)
            return out
        if kind == "where":
            return _piecewise(bound.get("condition"), bound.get("x"), bound.get("other"))
        if kind == "maxmin":
            other = bound.get("other")
            if isinstance(other, sp.Expr) and isinstance(x, sp.Expr) and not (other.is_Integer and not builtin):
                return sp.Max(x, other) if entry.name == "max" else sp.Min(x, other)
            if isinstance(x, Marker) and x.kind == "tuple" and builtin:
                items = [v for v in x.value if isinstance(v, sp.Expr)]
                if items:
                    return sp.Max(*items) if entry.name == "max" else sp.Min(*items)
            if isinstance(x, sp.Expr):
                return REDUCTIONS[entry.reduce or "rmax"](x)
            return Marker("opaque")
        if kind in ("var", "std"):
            if not isinstance(x, sp.Expr):
                return Marker("opaque")
            unbiased = _unbiased(args, kwargs, default=not numpy_like)
            var = RVAR1(x) if unbiased else RMEAN((x - RMEAN(x)) ** 2)
            return sp.sqrt(var) if kind == "std" else var
        if entry.template is None:
            return self._opaque(leaf, args, kwargs)
        if builtin and leaf == "sum" and isinstance(x, Marker) and x.kind == "tuple":
            items = [v for v in x.value if isinstance(v, sp.Expr)]
            return sp.Add(*items) if items else Marker("opaque")
        subs = {}
        for name in entry.template.free_symbols:
            pname = name.name[len("_arg_") :]
            value = bound.get(pname)
            if not isinstance(value, sp.Expr):
                return self._opaque(leaf, args, kwargs)
            subs[name] = value
        for power in entry.template.atoms(sp.Pow):
            if power_too_large(power.base.xreplace(subs), power.exp.xreplace(subs)):
                return self._opaque(leaf, args, kwargs)
        try:
            out = entry.template.xreplace(subs)
        except (TypeError, ValueError):
            return self._opaque(leaf, args, kwargs)
        if kind == "loss":
            reduction = kwargs.get("reduction")
            mode = reduction.value if isinstance(reduction, Marker) and reduction.kind == "str" else entry.default_reduction
            if mode == "mean":
                out = RMEAN(out)
            elif mode == "sum":
                out = RSUM(out)
        return out

    def _inline_helper(self, name: str, cls: str | None, args: list, kwargs: dict) -> Any:
        if self._depth >= MAX_HELPER_DEPTH:
            return None
        found = None
        if cls is not None and cls in self.classes:
            for item in self.classes[cls].body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and item.name == name:
                    found = (item, self)
        elif name in self.functions:
            found = (self.functions[name], self)
        elif self.helper is not None:
            found = self.helper(name, cls)
        if found is None:
            return None
        node, owner = found
        if _count_statements(node) > MAX_HELPER_STATEMENTS or name in ("__init__", "forward"):
            return None
        env: dict[str, Any] = {}
        params = [a.arg for a in [*node.args.posonlyargs, *node.args.args] if a.arg not in ("self", "cls")]
        defaults = node.args.defaults
        default_map = dict(zip(params[len(params) - len(defaults) :], defaults)) if defaults else {}
        for i, pname in enumerate(params):
            if i < len(args):
                env[pname] = args[i]
            elif pname in kwargs:
                env[pname] = kwargs[pname]
            elif pname in default_map:
                env[pname] = owner.expr(default_map[pname], _Path({}))
            else:
                env[pname] = sym(pname)
        for a in node.args.kwonlyargs:
            env[a.arg] = kwargs.get(a.arg, sym(a.arg))
        depth = owner._depth
        owner._depth = self._depth + 1
        saved = (owner._model, owner._class, owner._statements, owner._forks, owner._leaf_names, owner._leaf_sites,
                 owner._foreign_sites)
        owner._model, owner._statements, owner._forks = None, 0, MAX_PATHS  # a helper is not split
        owner._class = cls
        if owner is not self:
            # a helper from another file names its leaves among the caller's (not after whatever function its
            # own file translated last), and one statement of it gives one leaf, as in the caller's file
            owner._leaf_names, owner._foreign_sites = self._leaf_names, self._foreign_sites
            owner._leaf_sites = self._foreign_sites.setdefault(owner.file, {})
        try:
            paths = owner._block(node.body, [_Path(env)])
        except RecursionError:
            return None
        finally:
            (owner._model, owner._class, owner._statements, owner._forks, owner._leaf_names, owner._leaf_sites,
             owner._foreign_sites) = saved
            owner._depth = depth  # restored: an inlined helper must not use up the depth of later calls
        for p in paths:
            value = p.env.get("<return>")
            if p.done and not p.dead and isinstance(value, (sp.Expr, Marker)):
                return value
        return None


# ----------------------------------------------------------------------------------------- helpers
def translate_source(
    source: str, file: str = "<string>", *, pin: dict[str, Any] | None = None, structures: frozenset = frozenset()
) -> list[FunctionModel]:
    """All functions of a source string (for tests and single files); never executes anything."""
    try:
        tree = pysource.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    return Translator(tree, file, source, pin=pin, structures=structures).all_functions()


# calls that keep an argument's value (and so its role): ``x_t.detach()``, ``t.float()``, ``t.to(device)``
_VALUE_KEEPING = frozenset({"detach", "float", "double", "half", "long", "int", "to", "cuda", "cpu", "clone",
                            "contiguous", "type", "type_as", "squeeze", "unsqueeze", "view", "reshape", "flatten"})


def _has_slice(index: ast.expr) -> bool:
    """A subscript with a ``:`` in it (``x[:, :r]``), the only kind `Translator._slice` keeps."""
    return any(isinstance(p, ast.Slice) for p in (index.elts if isinstance(index, ast.Tuple) else [index]))


def _written_name(node: ast.expr) -> str:
    """The name an argument is written with (``x_t``, ``self.sigma`` -> ``sigma``, ``t.float()`` -> ``t``)."""
    while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _VALUE_KEEPING:
        node = node.func.value
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return ""


def _walk_functions(tree: ast.Module):
    """(qualname, node, enclosing class) for every function, methods and nested functions included."""
    stack: list[tuple[ast.AST, str, str | None]] = [(tree, "", None)]
    out = []
    while stack:
        node, prefix, cls = stack.pop()
        for child in getattr(node, "body", []):
            if isinstance(child, ast.ClassDef):
                stack.append((child, f"{prefix}{child.name}.", child.name))
            elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                qual = f"{prefix}{child.name}"
                out.append((qual, child, cls))
                stack.append((child, f"{qual}.", cls))
    out.sort(key=lambda t: t[1].lineno)
    return out


_STATEMENT_HOLDERS = (ast.stmt, ast.excepthandler, ast.match_case)


def _statements_breadth_first(tree: ast.Module):
    """The nodes of ``ast.walk`` that are or hold statements, in its order (an import is a statement, and no
    expression holds one): the same imports in the same order without visiting every expression node."""
    todo = deque([tree])
    while todo:
        node = todo.popleft()
        todo.extend(c for c in ast.iter_child_nodes(node) if isinstance(c, _STATEMENT_HOLDERS))
        yield node


def _module_aliases(tree: ast.Module) -> dict[str, str]:
    """Local names bound to library modules or functions by imports (``F`` -> ``torch.nn.functional``)."""
    out: dict[str, str] = {}
    for node in _statements_breadth_first(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.asname:
                    out[a.asname] = a.name
                else:
                    out[a.name.split(".")[0]] = a.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for a in node.names:
                out[a.asname or a.name] = f"{node.module}.{a.name}"
    table = api_table()
    drawn = [*table.samplers, *table.distributions]  # `from jax import random`, `import tensorflow as tf`
    return {
        k: v
        for k, v in out.items()
        if table.strip_prefix(v + ".") is not None
        or v in ("math", "torch", "numpy", "jax")
        or any(name == v or name.startswith(v + ".") for name in drawn)
    }


def _bind_args(entry: ApiEntry, args: list, kwargs: dict) -> dict[str, Any]:
    aliases = dict(entry.aliases)
    bound: dict[str, Any] = {}
    for name, value in dict(entry.defaults).items():
        if value is not None:
            bound[name] = _constant(value)
    for name, value in zip(entry.args, args):
        bound[name] = value
    for key, value in kwargs.items():
        key = aliases.get(key, key)
        if key == "input":
            key = "x"
        bound[key] = value
    if "label_smoothing" not in bound:
        bound["label_smoothing"] = sp.Integer(0)
    return bound


def _int_literal(node: ast.expr) -> int | None:
    try:
        value = ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _axes(values: list) -> tuple[list[int] | None, bool]:
    """Integer axes given as arguments or as one tuple (``permute(0, 2, 1)``, ``transpose(x, (1, 0))``);
    True when they came as one tuple (a full permutation, not a pair of axes to swap)."""
    packed = len(values) == 1 and isinstance(values[0], Marker) and values[0].kind == "tuple"
    if packed:
        values = values[0].value
    out = []
    for v in values:
        if not (isinstance(v, sp.Integer) or (isinstance(v, sp.Mul) and v.is_Integer)):
            return None, packed
        out.append(int(v))
    return out, packed


def _matrix_call(kind: str, args: list, kwargs: dict, permutation: bool = False) -> Any:
    """matmul/mm/bmm/np.dot, transposes and permutations, F.linear and two-operand einsum."""
    if kind == "einsum":
        if len(args) == 3 and isinstance(args[0], Marker) and args[0].kind == "str":
            return _einsum(args[0].value, args[1], args[2])
        return Marker("opaque")
    if kind == "matmul":
        other = kwargs.get("other", kwargs.get("mat2", kwargs.get("b")))
        pair = args[:2] if len(args) >= 2 else [*args, other]
        if len(pair) == 2 and all(isinstance(a, sp.Expr) for a in pair):
            return matmul(*pair)
        return Marker("opaque")
    if not args or not isinstance(args[0], sp.Expr):
        return Marker("opaque")
    x = args[0]
    if kind == "linear":
        weight = args[1] if len(args) > 1 else kwargs.get("weight")
        bias = args[2] if len(args) > 2 else kwargs.get("bias")
        if not isinstance(weight, sp.Expr):
            return Marker("opaque")
        out = matmul(x, transpose(weight))
        return out + bias if isinstance(bias, sp.Expr) else out
    # a transpose: no axes (2-D .t(), numpy's reversal), the last two axes, or a permutation swapping only them
    axes, packed = _axes(args[1:]) if len(args) > 1 else _axes([kwargs["axes"]]) if "axes" in kwargs else ([], False)
    if axes is None:
        return x
    full = permutation or packed or len(axes) > 2
    if not axes or sorted(axes) == [-2, -1] or (full and len(axes) >= 2 and axes[:-2] == list(range(len(axes) - 2))
                                                 and axes[-2:] == [len(axes) - 1, len(axes) - 2]):
        return transpose(x)
    return x  # batch or head axes reordered: elementwise, the value is unchanged (as for view/reshape)


def _einsum(equation: str, a: Any, b: Any) -> Any:
    """``ij,jk->ik``, ``bij,bjk->bik``, ``...d,ed->...e``: one contracted index, one free index per operand,
    shared batch indices; anything else (traces, outer products, three operands) stays opaque."""
    if not (isinstance(a, sp.Expr) and isinstance(b, sp.Expr)):
        return Marker("opaque")
    text = equation.replace(" ", "")
    m = re.fullmatch(r"((?:\.\.\.)?[a-zA-Z]*),((?:\.\.\.)?[a-zA-Z]*)->((?:\.\.\.)?[a-zA-Z]*)", text)
    if not m:
        return sp.Function("einsum")(a, b)
    split = [re.findall(r"\.\.\.|[a-zA-Z]", g) for g in m.groups()]
    first, second, out = split
    if any(len(set(t)) != len(t) for t in split):
        return sp.Function("einsum")(a, b)
    batch = [t for t in first if t in second and t in out]
    rows = [t for t in first if t not in second and t in out]
    cols = [t for t in second if t not in first and t in out]
    contracted = [t for t in first if t in second and t not in out]
    leftover = set(first + second + out) - set(batch + rows + cols + contracted)
    if len(rows) != 1 or len(cols) != 1 or len(contracted) != 1 or leftover:
        return sp.Function("einsum")(a, b)
    if not (first[: len(batch)] == second[: len(batch)] == out[: len(batch)] == batch):
        return sp.Function("einsum")(a, b)
    (i,), (j,), (c,) = rows, cols, contracted
    left = a if first[len(batch) :] == [i, c] else transpose(a)
    right = b if second[len(batch) :] == [c, j] else transpose(b)
    product = matmul(left, right)
    return product if out[len(batch) :] == [i, j] else transpose(product)


def _unbiased(args: list, kwargs: dict, *, default: bool) -> bool:
    for key in ("unbiased",):
        v = kwargs.get(key)
        if isinstance(v, Marker) and v.kind == "const":
            return v.value == "True"
    for key in ("correction", "ddof"):
        v = kwargs.get(key)
        if isinstance(v, sp.Number):
            return v != 0
    for v in args[1:]:
        if isinstance(v, Marker) and v.kind == "const" and v.value in ("True", "False"):
            return v.value == "True"
    return default


def _constant(value: Any) -> Any:
    if isinstance(value, bool):
        return Marker("const", str(value))
    if isinstance(value, int):
        return sp.Integer(value)
    if isinstance(value, float):
        if math.isnan(value):
            return Marker("opaque")
        if math.isinf(value):
            return sp.oo if value > 0 else -sp.oo
        text = repr(value)
        return sp.Rational(text) if len(text) <= 12 else sp.Float(value)
    if isinstance(value, str):
        return Marker("str", value)
    if value is None:
        return Marker("const", "None")
    return Marker("opaque")


def _compare(op: ast.cmpop, a: Any, b: Any) -> Any:
    if not (isinstance(a, sp.Expr) and isinstance(b, sp.Expr)):
        return Marker("opaque")
    table = {ast.Lt: sp.StrictLessThan, ast.LtE: sp.LessThan, ast.Gt: sp.StrictGreaterThan, ast.GtE: sp.GreaterThan}
    for cls, rel in table.items():
        if isinstance(op, cls):
            try:
                return rel(a, b)
            except TypeError:
                return Marker("opaque")
    return Marker("opaque")


def _piecewise(cond: Any, a: Any, b: Any) -> Any:
    if not (isinstance(a, sp.Expr) and isinstance(b, sp.Expr)):
        return Marker("opaque")
    if isinstance(cond, (bool, sp.logic.boolalg.BooleanAtom)):
        return a if bool(cond) else b
    if isinstance(cond, sp.logic.boolalg.Boolean):
        try:
            return sp.Piecewise((a, cond), (b, True))
        except (TypeError, ValueError):
            return Marker("opaque")
    if isinstance(cond, sp.Expr):
        return sp.Function("where_")(cond, a, b)
    return Marker("opaque")


def _clean_name(name: str) -> str:
    out = re.sub(r"\W+", "_", name).strip("_") or "x"
    return out if not out[0].isdigit() else f"v_{out}"


def _key_leaf(key: str) -> str:
    """The leaf name of an environment key: ``self.x`` -> ``x``, ``state['step']`` -> ``step``."""
    m = re.search(r"\[['\"](\w+)['\"]\]$", key)
    return m.group(1) if m else key.rsplit(".", 1)[-1]


def _short(text: str, limit: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."




def _leaf_name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Subscript):
        key = _const_key(node)
        return key if isinstance(key, str) else None
    return None


def _const_key(node: ast.Subscript) -> Any:
    sl = node.slice
    if isinstance(sl, ast.Constant) and isinstance(sl.value, (str, int)) and not isinstance(sl.value, bool):
        return sl.value
    return None


def _is_shape(node: ast.expr) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == "shape"


def _target_key(node: ast.expr) -> str | None:
    """The environment key of an assignment target or a read: ``x``, ``self.x``, ``state['step']``."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        if node.attr in _VALUE_ATTRS:
            return _target_key(node.value)
        base = _target_key(node.value)
        return f"{base}.{node.attr}" if base else None
    if isinstance(node, ast.Subscript):
        key = _const_key(node)
        base = _target_key(node.value)
        if base and isinstance(key, str):
            return f"{base}[{key!r}]"
    return None


def _inplace_base(node: ast.expr) -> str | None:
    """Where an in-place chain writes: ``m.mul_(b).add_(g)`` -> ``m``; ``p.data.add_`` -> ``p``."""
    while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr.endswith("_"):
        node = node.func.value
    return _target_key(node)


def _target_names(node: ast.expr) -> list[str]:
    if isinstance(node, ast.Name):
        return [node.id]
    if isinstance(node, (ast.Tuple, ast.List)):
        return [n for e in node.elts for n in _target_names(e)]
    return []


def _assigned_names(stmt: ast.stmt) -> list[str]:
    targets: list[ast.expr] = []
    if isinstance(stmt, ast.Assign):
        targets = stmt.targets
    elif isinstance(stmt, (ast.AugAssign, ast.AnnAssign)):
        targets = [stmt.target]
    return [k for t in targets for k in ([_target_key(t)] if _target_key(t) else _target_names(t))]


_STATEMENT_COUNTS: dict[int, tuple[ast.AST, int]] = {}


def _count_statements(node: ast.AST) -> int:
    """Statements in a helper's body, counted once per node (helpers are looked at on every call)."""
    hit = _STATEMENT_COUNTS.get(id(node))
    if hit is not None and hit[0] is node:
        return hit[1]
    count = sum(1 for n in ast.walk(node) if isinstance(n, ast.stmt))
    if len(_STATEMENT_COUNTS) > 50000:
        _STATEMENT_COUNTS.clear()
    _STATEMENT_COUNTS[id(node)] = (node, count)
    return count

"""Rule ``placement``: where a module runs inside a block — after the MLP or the attention (sequential), before
it, or beside it (parallel).

A sequential adapter put in parallel, or after the attention instead of the MLP, runs and trains: only the data
flow of the block tells them apart. Each block forward (``forward`` / ``__call__``, a forward patched onto a
block, a wrapper's forward, a forward hook) is run abstractly over its statements: every value carries the
sub-module calls it derives from, and whether it derives from one *directly* (through element-wise ops,
dropout, a residual add — no norm, attention or MLP call in between). A placed module P then sits

- after R when R's output reaches P's input directly (``x = x + adapter(mlp(norm2(x)))``, ``h = mlp(h); h = adapter(h)``);
- before R when P's output reaches R's input directly (``mlp(adapter(norm2(x)))``);
- parallel to R when neither reaches the other and their outputs are summed (``x = x + mlp(h) + s * adapter(h)``).

Roles (placed module, MLP, attention, norm) are read from attribute names, the constructors assigned to them
(``self.ft_mlp_module = Adapter(...)`` is the adapter, ``self.mlp = Mlp(...)`` the MLP) and Flax's inline
``MlpBlock(...)(y)``; the vocabulary is rules/protocol/placement.yaml's lexicon.
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
    innermost_scope,
    lower_text,
    nodes_of,
    python_paths,
    scope_admits,
    sorted_evidence,
    text_of,
    views_mentioning,
)
from verifier.results import CheckResult, Status

KIND = "protocol"
TARGETS = ("attention", "mlp")
RELATIONS = ("after", "before", "parallel")
_PARAM_OF_RELATION = {"after": "after", "before": "before", "parallel": "parallel_to"}


# ----- vocabulary ------------------------------------------------------------------------------------------
class Lexicon:
    """Name pieces that say which role a sub-module plays (rules/protocol/placement.yaml)."""

    def __init__(self, rule: dict):
        lex = rule.get("lexicon") or {}
        self.families = {str(k): tuple(str(w).lower() for w in v) for k, v in (lex.get("modules") or {}).items()}
        roles = lex.get("roles") or {}
        self.names = {str(k): re.compile(rf"^(?:{'|'.join(v.get('names') or ['(?!)'])})(?:_?\d+)?$")
                      for k, v in roles.items()}
        self.classes = {str(k): tuple(str(w).lower() for w in v.get("classes") or []) for k, v in roles.items()}
        self.transparent = frozenset(str(w).lower() for w in lex.get("transparent") or [])

    def placed_word(self, family: str, text: str) -> bool:
        low = text.lower()
        return any(w in low for w in self.families.get(family, ()))

    def any_placed_word(self, text: str) -> bool:
        return any(self.placed_word(f, text) for f in self.families)

    def role_of_name(self, family: str, name: str) -> str | None:
        """The role an attribute or variable name says (the placed module's words win: ``mlp_adapter``)."""
        piece = name.rsplit(".", 1)[-1]
        if self.placed_word(family, piece):
            return "placed"
        low = piece.lower()
        for role in ("norm", "mlp-in", "mlp-out", "mlp", "attention"):  # a norm first: ``ffn_norm`` is a norm
            pattern = self.names.get(role)
            if pattern is not None and pattern.match(low):
                return role
        return None

    def role_of_class(self, family: str, name: str) -> str | None:
        """The role a constructor's name says (``Adapter``, ``MlpBlock``, ``nn.MultiHeadDotProductAttention``)."""
        leaf = name.rsplit(".", 1)[-1]
        if self.placed_word(family, leaf):
            return "placed"
        low = leaf.lower()
        for role in ("norm", "attention", "mlp"):
            if any(w in low for w in self.classes.get(role, ())):
                return role
        return None


# ----- what the analysis finds -----------------------------------------------------------------------------
@dataclass(frozen=True)
class Placement:
    relation: str  # after | before | parallel
    target: str  # mlp | attention
    file: str
    line: int  # the placed module's call
    end_line: int
    target_line: int  # the MLP / attention call it is placed against
    site: str  # the forward, wrapper or hook it was read in
    conditional: bool  # under an ``if`` inside the forward (a config option, one of several designs)


@dataclass(frozen=True)
class Note:
    """A placed module applied where its placement cannot be read (why), or defined and never applied."""

    file: str
    line: int
    reason: str


@dataclass
class _Node:
    role: str
    line: int
    end_line: int
    conditional: bool
    inputs: dict[int, bool] = field(default_factory=dict)  # node id -> reached directly


Value = dict  # node id -> bool (True: derives from that node directly)


def _union(*values: Value) -> Value:
    out: Value = {}
    for v in values:
        for k, direct in v.items():
            out[k] = out.get(k, False) or direct
    return out


class _Flow:
    """One forward run abstractly: the role nodes it calls, what each one's input derives from, and which node
    pairs are summed."""

    def __init__(self, lex: Lexicon, family: str, roles: dict[str, str], mixed: frozenset[str], file: str,
                 inner: bool = False):
        self.lex, self.family, self.roles, self.mixed, self.file = lex, family, roles, mixed, file
        self.inner = inner  # the forward of an attention or MLP class: its other sub-modules are its inner steps
        self.nodes: list[_Node] = []
        self.by_call: dict[int, int] = {}
        self.joins: set[frozenset[int]] = set()
        self.notes: list[Note] = []
        self.returned: Value = {}
        self.depth = 0  # inside an ``if`` of the forward
        self.aliases: dict[str, str] = {}  # local name -> the ``self.`` chain it holds (``mlp = self.mlp``)
        self.loop_vars: dict[str, str] = {}  # loop variable -> the container it iterates
        self.owner_role: str | None = None  # attention | mlp: the class whose forward this is
        self.input_node: int | None = None  # the forward's input, when ``owner_role`` is set

    # -- roles --
    def role(self, func: ast.expr) -> str | None:
        if isinstance(func, ast.Call):  # Flax: ``MlpBlock(...)(y)``, ``Adapter(dim)(y)``
            name = dotted(func.func) or ""
            return self.lex.role_of_class(self.family, name) if name else None
        name = dotted(func)
        if not name:
            return None
        if isinstance(func, ast.Name):
            if func.id in self.loop_vars:
                container = self.loop_vars[func.id]
                if container in self.mixed:
                    return "mixed"
                return self._chain_role(container) or self.lex.role_of_name(self.family, func.id)
            if func.id in self.aliases:
                return self._chain_role(self.aliases[func.id])
            return self.lex.role_of_name(self.family, func.id)
        if name.startswith("self."):
            chain = name[len("self."):]
            if chain.split(".", 1)[0] in self.mixed:
                return "mixed"
            return self._chain_role(chain)
        return None  # a method of a value (``x.view``), a library function (``F.gelu``): element-wise here

    def _chain_role(self, chain: str) -> str | None:
        chain = chain.removeprefix("self.")
        if "." in chain or "()" in chain:
            return None  # ``self.attn.qkv``: inside a sub-module, not one of the block's own
        if chain in self.roles:
            return self.roles[chain]
        role = self.lex.role_of_name(self.family, chain)
        if role is None and self.inner and not any(w in chain.lower() for w in self.lex.transparent):
            return "inner"  # qkv, proj, dense: a step of the attention or MLP itself
        return role

    def _node(self, call: ast.AST, role: str, inputs: Value) -> int:
        key = id(call)
        if key not in self.by_call:
            self.by_call[key] = len(self.nodes)
            self.nodes.append(_Node(role, call.lineno, getattr(call, "end_lineno", call.lineno), self.depth > 0))
        index = self.by_call[key]
        self.nodes[index].inputs = _union(self.nodes[index].inputs, inputs)
        return index

    def _applied(self, call: ast.AST, role: str, inputs: Value) -> Value:
        index = self._node(call, role, inputs)
        return _union({index: True}, {k: False for k in inputs})

    # -- expressions --
    def value(self, node: ast.AST | None, env: dict[str, Value]) -> Value:
        if node is None:
            return {}
        if isinstance(node, ast.Name):
            return env.get(node.id, {})
        if isinstance(node, ast.Attribute):
            chain = dotted(node)
            if chain and chain in env:
                return env[chain]
            return self.value(node.value, env)
        if isinstance(node, ast.Subscript):
            return self.value(node.value, env)
        if isinstance(node, ast.BinOp):
            if isinstance(node.op, ast.Mult) and self.family == "scale":
                for factor, other in ((node.left, node.right), (node.right, node.left)):
                    if self._is_placed_factor(factor):  # ``self.gamma_1 * h``: the scale applied to h
                        return self._applied(node, "placed", self.value(other, env))
            if isinstance(node.op, (ast.Add, ast.Sub)):
                return self._summed(_terms(node), env)
            return _union(self.value(node.left, env), self.value(node.right, env))
        if isinstance(node, ast.Call):
            return self._call(node, env)
        if isinstance(node, ast.IfExp):
            self.depth += 1
            try:
                return _union(self.value(node.body, env), self.value(node.orelse, env))
            finally:
                self.depth -= 1
        if isinstance(node, (ast.Lambda, ast.ListComp, ast.GeneratorExp, ast.SetComp, ast.DictComp)):
            return {}
        if isinstance(node, ast.Starred):
            return self.value(node.value, env)
        return _union(*(self.value(c, env) for c in ast.iter_child_nodes(node) if isinstance(c, ast.expr)))

    def _is_placed_factor(self, node: ast.AST) -> bool:
        name = dotted(node)
        if not name or not (isinstance(node, ast.Name) or name.startswith("self.")):
            return False
        return self._chain_role(name) == "placed" if name.startswith("self.") else self.role(node) == "placed"

    def _summed(self, terms: list[ast.expr], env: dict[str, Value]) -> Value:
        values = [self.value(t, env) for t in terms]
        for i in range(len(values)):
            for j in range(i + 1, len(values)):
                for a, da in values[i].items():
                    for b, db in values[j].items():
                        if da and db and a != b:
                            self.joins.add(frozenset((a, b)))
        return _union(*values)

    def _call(self, node: ast.Call, env: dict[str, Value]) -> Value:
        args = _union(*(self.value(a, env) for a in node.args), *(self.value(k.value, env) for k in node.keywords))
        func = node.func
        if isinstance(func, ast.Call) and dotted(func.func) == "getattr":
            if any(self.lex.placed_word(self.family, ast.unparse(a)) for a in func.args[1:]):
                self.notes.append(Note(self.file, node.lineno, "the module is looked up by `getattr`: which one runs "
                                                               "cannot be told statically"))
            return args
        if isinstance(func, ast.Name) and func.id in ("sum",) and node.args and isinstance(node.args[0], (ast.List, ast.Tuple)):
            return self._summed(list(node.args[0].elts), env)
        if dotted(func) == "torch.add" and len(node.args) >= 2:
            return self._summed(list(node.args[:2]), env)
        role = self.role(func)
        if role == "mixed":
            self.notes.append(Note(self.file, node.lineno, "a loop over a container that holds the placed module and "
                                                           "other sub-modules: their order is not read"))
            return args
        if role is not None:
            return self._applied(node, role, args)
        if isinstance(func, ast.Attribute) and func.attr in ("add_",) and isinstance(func.value, ast.Name):
            receiver = self.value(func.value, env)
            joined = self._summed([func.value, *node.args], env)
            env[func.value.id] = _union(receiver, joined)
            return env[func.value.id]
        receiver = self.value(func.value, env) if isinstance(func, ast.Attribute) else {}
        return _union(receiver, args)

    # -- statements --
    def run(self, body: list[ast.stmt], env: dict[str, Value]) -> dict[str, Value]:
        for stmt in body:
            env = self.statement(stmt, env)
        return env

    def statement(self, stmt: ast.stmt, env: dict[str, Value]) -> dict[str, Value]:
        if isinstance(stmt, ast.Assign):
            value = self.value(stmt.value, env)
            for target in stmt.targets:
                self._bind(target, value, env, stmt.value)
        elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
            self._bind(stmt.target, self.value(stmt.value, env), env, stmt.value)
        elif isinstance(stmt, ast.AugAssign):
            current = ast.Name(id=stmt.target.id, ctx=ast.Load()) if isinstance(stmt.target, ast.Name) else stmt.target
            if isinstance(stmt.op, (ast.Add, ast.Sub)):
                value = self._summed([current, stmt.value], env)
            elif isinstance(stmt.op, ast.Mult) and self.family == "scale" and self._is_placed_factor(stmt.value):
                value = self._applied(stmt, "placed", self.value(current, env))
            else:
                value = _union(self.value(current, env), self.value(stmt.value, env))
            self._bind(stmt.target, value, env, None)
        elif isinstance(stmt, ast.Expr):
            self.value(stmt.value, env)
        elif isinstance(stmt, ast.Return):
            self.returned = _union(self.returned, self.value(stmt.value, env))
        elif isinstance(stmt, ast.If):
            self.value(stmt.test, env)
            self.depth += 1
            try:
                first = self.run(stmt.body, dict(env))
                second = self.run(stmt.orelse, dict(env))
            finally:
                self.depth -= 1
            env = _merge(first, second)
        elif isinstance(stmt, (ast.For, ast.AsyncFor, ast.While)):
            if isinstance(stmt, (ast.For, ast.AsyncFor)) and isinstance(stmt.target, ast.Name):
                container = dotted(stmt.iter) or ""
                if container.startswith("self."):
                    self.loop_vars[stmt.target.id] = container[len("self."):]
                self._bind(stmt.target, self.value(stmt.iter, env), env, None)
            for _ in range(2):  # a loop-carried value reaches the next iteration
                env = _merge(env, self.run(stmt.body, dict(env)))
            env = _merge(env, self.run(stmt.orelse, dict(env)))
        elif isinstance(stmt, (ast.With, ast.AsyncWith)):
            env = self.run(stmt.body, env)
        elif isinstance(stmt, ast.Try):
            env = self.run(stmt.body, env)
            for handler in stmt.handlers:
                env = _merge(env, self.run(handler.body, dict(env)))
            env = self.run(stmt.orelse + stmt.finalbody, env)
        return env

    def _bind(self, target: ast.expr, value: Value, env: dict[str, Value], source: ast.expr | None) -> None:
        if isinstance(target, ast.Name):
            env[target.id] = value
            chain = dotted(source) if isinstance(source, (ast.Attribute, ast.Subscript)) else None
            if chain and chain.startswith("self."):
                self.aliases[target.id] = chain[len("self."):]
            else:
                self.aliases.pop(target.id, None)
        elif isinstance(target, (ast.Tuple, ast.List)):
            for elt in target.elts:
                self._bind(elt.value if isinstance(elt, ast.Starred) else elt, value, env, None)
        elif isinstance(target, ast.Attribute):
            chain = dotted(target)
            if chain:
                env[chain] = value
        elif isinstance(target, ast.Subscript):
            root = dotted(target.value)
            if root:
                env[root] = _union(env.get(root, {}), value)


def _terms(node: ast.expr) -> list[ast.expr]:
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
        return _terms(node.left) + _terms(node.right)
    return [node]


def _merge(a: dict[str, Value], b: dict[str, Value]) -> dict[str, Value]:
    return {k: _union(a.get(k, {}), b.get(k, {})) for k in sorted(set(a) | set(b))}


def _target_of(role: str, relation: str) -> str | None:
    """What a placement against a role node names: the MLP's entrance (fc1) counts only for *before*, its exit
    (fc2) for *after* and *parallel*; a module between fc1 and fc2 is inside the MLP."""
    if role == "attention":
        return "attention"
    if role == "mlp":
        return "mlp"
    if role == "mlp-in":
        return "mlp" if relation == "before" else None
    if role == "mlp-out":
        return "mlp" if relation in ("after", "parallel") else None
    return None


_BESIDE_NOTHING = "the module is applied, but no MLP or attention call beside it says where it sits"


def _inside_placement(flow: _Flow, p: int, site: str, out: list[Placement]) -> bool:
    """A placed module in the forward of an attention or MLP class: after it when the module's output is what
    the forward returns and its input is the forward's own computation; parallel to it when it reads the
    forward's input directly and is summed with an inner step's output in what is returned."""
    node, nodes, returned, entry = flow.nodes[p], flow.nodes, flow.returned, flow.input_node
    if not returned.get(p) or any(nodes[n].inputs.get(p) for n in returned if n != p):
        return False
    computed = [n for n, direct in node.inputs.items() if direct and nodes[n].role == "inner"]
    if computed and not node.inputs.get(entry):
        relation = "after"
    elif node.inputs.get(entry) and any(nodes[n].role == "inner" and returned.get(n) and frozenset((p, n)) in flow.joins
                                        for n in range(len(nodes))):
        relation = "parallel"
    else:
        return False
    out.append(Placement(relation, str(flow.owner_role), flow.file, node.line, node.end_line, node.line, site,
                         node.conditional))
    return True


def placements_of(flow: _Flow, site: str) -> tuple[list[Placement], list[tuple[int, str]]]:
    """Every placement the flow's placed nodes have, and the placed nodes whose placement it cannot read (line, why)."""
    out: list[Placement] = []
    undecided: list[tuple[int, str]] = []
    nodes = flow.nodes
    role_ids = [i for i, n in enumerate(nodes) if n.role in ("mlp", "mlp-in", "mlp-out", "attention")]
    for p, node in enumerate(nodes):
        if node.role != "placed":
            continue
        if any(nodes[r].role == "mlp-in" and node.inputs.get(r) for r in role_ids):
            undecided.append((node.line, "the module is applied inside the MLP (after its first layer), not after, "
                                         "before or beside it"))
            continue
        found: list[tuple[str, int]] = []
        for r in role_ids:
            reads, reached = r in node.inputs, p in nodes[r].inputs
            if not reads and not reached and frozenset((p, r)) in flow.joins:
                found.append(("parallel", r))
            elif node.inputs.get(r):
                found.append(("after", r))
            elif nodes[r].inputs.get(p) and not reads:
                found.append(("before", r))
        anchors = [r for rel, r in found if rel in ("after", "parallel")]
        # a role node upstream of another one the module sits after or beside is not where it sits
        found = [(rel, r) for rel, r in found
                 if rel == "before" or not any(r in nodes[other].inputs for other in anchors if other != r)]
        placed = False
        for rel, r in found:
            target = _target_of(nodes[r].role, rel)
            if target is None:
                continue
            placed = True
            out.append(Placement(rel, target, flow.file, node.line, node.end_line, nodes[r].line, site, node.conditional))
        if not placed and flow.owner_role is not None:
            placed = _inside_placement(flow, p, site, out)
        if not placed:
            undecided.append((node.line, _BESIDE_NOTHING))
    return out, undecided


# ----- where block forwards are ----------------------------------------------------------------------------
_FORWARD = re.compile(r"^_?forward(?:_\w+)?$|^__call__$")


def _init_roles(lex: Lexicon, family: str, cls: ast.ClassDef | None, registry: dict[str, list[str]],
                extra: dict[str, str]) -> tuple[dict[str, str], frozenset[str]]:
    """Roles of ``self.X`` from the constructors assigned in ``__init__`` / ``setup`` (or anywhere in the
    class), and the containers that hold the placed module among other roles (``nn.ModuleList([...])``)."""
    roles: dict[str, str] = dict(extra)
    mixed: set[str] = set()
    if cls is None:
        return roles, frozenset()
    for node in ast.walk(cls):
        if not (isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None):
            continue
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        pairs = [(t, node.value) for t in targets]
        if isinstance(node.value, ast.Tuple) and any(isinstance(t, ast.Tuple) for t in targets):
            # self.norm1, self.norm2 = nn.LayerNorm(d), nn.LayerNorm(d)
            pairs = [(e, v) for t in targets if isinstance(t, ast.Tuple) and len(t.elts) == len(node.value.elts)
                     for e, v in zip(t.elts, node.value.elts)]
        for target, value in pairs:
            if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self":
                found = _constructed_roles(lex, family, value, registry)
                if "placed" in found:
                    roles[target.attr] = "placed"
                elif len(found) == 1 and None not in found:
                    roles[target.attr] = next(iter(found))
                if _container_mixed(lex, family, value, registry):
                    mixed.add(target.attr)
    return roles, frozenset(mixed)


def _constructed_roles(lex: Lexicon, family: str, value: ast.expr, registry: dict[str, list[str]]) -> set[str | None]:
    if isinstance(value, ast.IfExp):
        return _constructed_roles(lex, family, value.body, registry) | _constructed_roles(lex, family, value.orelse, registry)
    if isinstance(value, ast.Call):
        func = value.func
        if isinstance(func, ast.Subscript) and isinstance(func.value, ast.Name) and func.value.id in registry:
            classes = registry[func.value.id]  # MODULE_REGISTRY[name](...): every class it may construct
            if classes and all(lex.role_of_class(family, c) == "placed" for c in classes):
                return {"placed"}
            return {None}
        name = dotted(func) or ""
        if name.rsplit(".", 1)[-1] in ("Identity",):
            return set()
        if name.rsplit(".", 1)[-1] == "Parameter" and family == "scale":
            return {None}
        return {lex.role_of_class(family, name)}
    return {None}


def _container_mixed(lex: Lexicon, family: str, value: ast.expr, registry: dict[str, list[str]]) -> bool:
    if not (isinstance(value, ast.Call) and (dotted(value.func) or "").rsplit(".", 1)[-1] in ("ModuleList", "Sequential")):
        return False
    items = [e for a in value.args for e in (a.elts if isinstance(a, (ast.List, ast.Tuple)) else [a])]
    roles = set()
    for item in items:
        roles |= _constructed_roles(lex, family, item, registry) if isinstance(item, ast.Call) else {None}
    return "placed" in roles and bool(roles & {"mlp", "attention"})


def _registries(view: FileView) -> dict[str, list[str]]:
    """Module-level dicts of classes (``MODULE_REGISTRY = {'adapter': Adapter, ...}``)."""
    out: dict[str, list[str]] = {}
    for node in view.tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                and isinstance(node.value, ast.Dict) and node.value.values:
            names = [dotted(v) for v in node.value.values]
            if all(names):
                out[node.targets[0].id] = [n for n in names if n]
    return out


def _classes_of(view: FileView) -> dict[str, ast.ClassDef]:
    """Classes at module level, in class bodies and under module-level ``if`` / ``try`` (not inside functions:
    walking every function body of a large modeling file would cost more than the rest of the rule)."""
    out: dict[str, ast.ClassDef] = {}
    stack: list[ast.stmt] = list(view.tree.body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.ClassDef):
            out.setdefault(node.name, node)
            stack.extend(node.body)
        elif isinstance(node, (ast.If, ast.Try, ast.With)):
            for name in ("body", "orelse", "finalbody", "handlers"):
                stack.extend(getattr(node, name, None) or [])
        elif isinstance(node, ast.ExceptHandler):
            stack.extend(node.body)
    return out


def _owners(classes: dict[str, ast.ClassDef]) -> dict[int, ast.ClassDef]:
    """id(method node) -> the class whose body defines it."""
    return {id(n): cls for cls in classes.values() for n in cls.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}


_FORWARD_ASSIGNED = re.compile(r"\.forward\s*=\s*(?:[\w.]*partial\(\s*)?([A-Za-z_]\w*)\b")


def _bound_forwards(ctx, view: FileView) -> set[str]:
    """Functions bound to a block as its forward: ``blk.forward = types.MethodType(f, blk)``, ``f.__get__(blk)``,
    ``blk.forward = partial(f, blk)``, ``blk.forward = f`` (read from the file's calls and text, no tree walk)."""
    out: set[str] = set()
    for call in view.calls:
        node = call.node
        if call.leaf == "MethodType" and node.args and isinstance(node.args[0], ast.Name):
            out.add(node.args[0].id)
        elif call.leaf == "__get__" and isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name):
            out.add(node.func.value.id)
    out.update(m.group(1) for m in _FORWARD_ASSIGNED.finditer(text_of(ctx, view.path)))
    return out


def _assigned_roles(ctx, lex: Lexicon, family: str, view: FileView, registry) -> dict[str, str]:
    """``blk.adapter_mlp = Adapter(...)`` outside a class: the attribute a patched forward reads as ``self.``."""
    out: dict[str, str] = {}
    for node in nodes_of(ctx, view, (ast.Assign,)):
        if isinstance(node.value, ast.Call):
            for target in node.targets:
                if isinstance(target, ast.Attribute) and not (isinstance(target.value, ast.Name) and target.value.id == "self"):
                    found = _constructed_roles(lex, family, node.value, registry)
                    if "placed" in found:
                        out[target.attr] = "placed"
    return out


@dataclass
class Findings:
    placements: list[Placement] = field(default_factory=list)
    notes: list[Note] = field(default_factory=list)  # undecided applications and unreadable flows
    defined: list[Note] = field(default_factory=list)  # placed modules defined (a class, an attribute), maybe never applied


def _run(lex: Lexicon, family: str, fn: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda, roles: dict[str, str],
         mixed: frozenset[str], file: str, site: str, params: dict[str, Value] | None = None,
         owner: str | None = None) -> _Flow:
    flow = _Flow(lex, family, roles, mixed, file, inner=owner is not None)
    env = dict(params or {})
    args = [a.arg for a in fn.args.args]
    if owner is not None and len(args) >= 2:  # the forward's input: (self, x, ...)
        flow.owner_role = owner
        flow.input_node = flow._node(fn, "input", {})
        env[args[1]] = {flow.input_node: True}
    if isinstance(fn, ast.Lambda):
        flow.returned = flow.value(fn.body, env)
    else:
        flow.run(fn.body, env)
    return flow


def _collect(flow: _Flow, site: str, findings: Findings, inside_placed_class: bool) -> None:
    placements, undecided = placements_of(flow, site)
    findings.placements += placements
    findings.notes += flow.notes
    if not inside_placed_class:
        findings.notes += [Note(flow.file, line, why) for line, why in undecided]


def find(ctx, scope: str | None, rule: dict, family: str) -> Findings:
    lex = ctx.memo("protocol.placement.lexicon", lambda: Lexicon(rule))
    words = lex.families.get(family, ())
    needles = tuple(w for w in words if not any(o != w and o in w for o in words))
    findings = Findings()
    # Lower-cased text (memoised, shared with other rules) holds every spelling of the family's words; not
    # ml_only: a forward patched onto a library block may import nothing but ``types``.
    views = [v for path in python_paths(ctx, scope) if any(w in lower_text(ctx, path) for w in needles)
             and (v := file_view(ctx, path)) is not None]
    binders = views_mentioning(ctx, ("MethodType", ".forward =", ".forward=", '"forward"')) if views else []
    bound = set().union(*(_bound_forwards(ctx, v) for v in binders))
    for view in views:
        registry = _registries(view)
        classes = _classes_of(view)
        owners = _owners(classes)
        assigned: dict[str, str] | None = None
        text = lower_text(ctx, view.path).splitlines()
        for name, cls in sorted(classes.items()):
            if lex.placed_word(family, name):
                findings.defined.append(Note(view.path, cls.lineno, f"`{name}` is defined"))
        for qual, fv in sorted(view.functions.items()):
            fn = fv.node
            if not scope_admits(scope, qual):
                continue
            cls = owners.get(id(fn))
            is_forward = bool(_FORWARD.match(fn.name)) and cls is not None
            patched = fn.name in bound and fv.params[:1] == ("self",)  # an unbound one is dead code
            if not (is_forward or patched):
                continue
            if cls is None and assigned is None:
                assigned = _assigned_roles(ctx, lex, family, view, registry)
            roles, mixed = _init_roles(lex, family, cls, registry, {} if cls is not None else assigned or {})
            body = "\n".join(text[fn.lineno - 1: getattr(fn, "end_lineno", fn.lineno)])
            placed_names = [a.lower() for a, r in roles.items() if r == "placed"] + [m.lower() for m in mixed]
            if not any(w in body for w in needles) and not any(a in body for a in placed_names):
                continue  # applies nothing of the family: a plain block
            owner = lex.role_of_class(family, cls.name) if cls is not None else None
            flow = _run(lex, family, fn, roles, mixed, view.path, qual,
                        owner=owner if owner in ("attention", "mlp") and is_forward else None)
            _collect(flow, qual, findings, cls is not None and lex.placed_word(family, cls.name))
        _wrapping_sites(ctx, lex, family, view, classes, registry, findings, scope)
        _hook_sites(lex, family, view, findings, scope)
    return findings


# ----- injection: wrapping and hooks -----------------------------------------------------------------------
def _block_role(lex: Lexicon, family: str, chain: str) -> str | None:
    role = lex.role_of_name(family, chain.rsplit(".", 1)[-1])
    return role if role in ("mlp", "attention") else None


_ASSIGNED_CALL = re.compile(r"(?<![\w.])(?!self\.)([A-Za-z_][\w.]*\.(\w+))\s*=\s*[\w.]+\(([^\n]*)")


def _wrapping_sites(ctx, lex, family, view, classes, registry, findings: Findings, scope) -> None:
    """``blk.mlp = nn.Sequential(blk.mlp, Adapter(d))`` (the order is the placement) and ``blk.mlp =
    Wrapper(blk.mlp, ...)`` (the wrapper's forward, with the wrapped module in the MLP's role)."""
    if not any(_block_role(lex, family, m.group(2)) and re.search(rf"(?<![\w.]){re.escape(m.group(1))}\s*[,)]", m.group(3))
               for m in _ASSIGNED_CALL.finditer(text_of(ctx, view.path))):
        return  # no block's MLP or attention assigned a call that takes its old value
    for node in nodes_of(ctx, view, (ast.Assign,)):
        if not (len(node.targets) == 1 and isinstance(node.targets[0], ast.Attribute)
                and isinstance(node.value, ast.Call)):
            continue
        chain = dotted(node.targets[0]) or ""
        role = _block_role(lex, family, chain)
        if role is None or chain.startswith("self."):
            continue
        site = innermost_scope(view, node)
        if not scope_admits(scope, site):
            continue
        call = node.value
        callee = dotted(call.func) or ""
        args = list(call.args) + [k.value for k in call.keywords]
        wrapped = [i for i, a in enumerate(args) if ast.unparse(a) == chain]
        if not wrapped:
            continue
        if callee.rsplit(".", 1)[-1] == "Sequential":
            k = wrapped[0]
            for i, a in enumerate(call.args):
                ctor = dotted(a.func) if isinstance(a, ast.Call) else dotted(a)
                if i == k or not ctor or lex.role_of_class(family, ctor) != "placed" and lex.role_of_name(family, ctor) != "placed":
                    continue
                rel = "after" if i > k else "before"
                findings.placements.append(Placement(rel, role, view.path, a.lineno, getattr(a, "end_lineno", a.lineno),
                                                     node.lineno, site, False))
            continue
        cls = classes.get(callee.rsplit(".", 1)[-1])
        if cls is None:
            if lex.role_of_class(family, callee) == "placed":
                findings.notes.append(Note(view.path, node.lineno, f"`{chain}` is wrapped in `{callee}`, whose forward "
                                                                   "is not in the repo"))
            continue
        _wrapper_forward(lex, family, view, cls, call, wrapped[0], role, registry, findings, site, node)


def _wrapper_forward(lex, family, view, cls, call, position, role, registry, findings, site, assign) -> None:
    init = next((n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "__init__"), None)
    forward = next((n for n in cls.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
                    and n.name in ("forward", "__call__")), None)
    if init is None or forward is None:
        return
    params = [a.arg for a in init.args.args[1:]]
    keyword = call.keywords[position - len(call.args)].arg if position >= len(call.args) else None
    param = keyword if keyword else (params[position] if position < len(params) else None)
    holder = next((t.attr for n in ast.walk(init) if isinstance(n, ast.Assign) and isinstance(n.value, ast.Name)
                   and n.value.id == param for t in n.targets
                   if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self"), None)
    if holder is None:
        return
    roles, mixed = _init_roles(lex, family, cls, registry, {})
    roles[holder] = role
    if "placed" not in roles.values() and lex.placed_word(family, cls.name):
        # the wrapper is the adapter: its own sub-modules (down, up) are the placed computation
        for n in ast.walk(forward):
            if isinstance(n, ast.Call) and (name := dotted(n.func) or "").startswith("self.") and name.count(".") == 1:
                attr = name.split(".", 1)[1]
                if attr != holder and roles.get(attr) is None:
                    roles[attr] = "placed"
    flow = _run(lex, family, forward, roles, mixed, view.path, site)
    _collect(flow, site, findings, True)


def _hook_sites(lex, family, view, findings: Findings, scope) -> None:
    """``blk.mlp.register_forward_hook(fn)``: the hook gets the module's input and output (its return replaces
    the output); a pre-hook's return replaces the input."""
    hooks = [c.node for c in view.calls if c.leaf in ("register_forward_hook", "register_forward_pre_hook")]
    defs = {fv.name: fv.node for fv in view.functions.values()} if hooks else {}
    for call in hooks:
        if not (isinstance(call.func, ast.Attribute) and call.args):
            continue
        role = _block_role(lex, family, dotted(call.func.value) or "")
        if role is None:
            continue
        site = innermost_scope(view, call)
        if not scope_admits(scope, site):
            continue
        hook = _hook_function(call.args[0], defs)
        if hook is None:
            if lex.any_placed_word(ast.unparse(call.args[0])):
                findings.notes.append(Note(view.path, call.lineno, "a hook whose function is not in the repo"))
            continue
        args = [a.arg for a in hook.args.args]
        if args and args[0] == "self":
            args = args[1:]
        flow = _Flow(lex, family, {}, frozenset(), view.path)
        hooked = flow._node(call, role, {})
        env: dict[str, Value] = {}
        pre = call.func.attr == "register_forward_pre_hook"
        if not pre and len(args) >= 3:
            env[args[2]] = {hooked: True}
        elif pre and len(args) < 2 or not pre and len(args) < 3:
            continue
        if isinstance(hook, ast.Lambda):
            flow.returned = flow.value(hook.body, env)
        else:
            flow.run(hook.body, env)
        if pre:
            flow.nodes[hooked].inputs = _union(flow.nodes[hooked].inputs, flow.returned)
        if not any(n.role == "placed" for n in flow.nodes):
            continue
        _collect(flow, site, findings, False)


def _hook_function(arg: ast.expr, defs: dict[str, ast.AST]):
    if isinstance(arg, ast.Lambda):
        return arg
    if isinstance(arg, ast.Name):
        return defs.get(arg.id)
    if isinstance(arg, ast.Call) and isinstance(arg.func, ast.Name) and arg.func.id in defs:
        factory = defs[arg.func.id]  # make_hook(adapter): the closure it returns
        returned = [n.value for n in ast.walk(factory) if isinstance(n, ast.Return) and n.value is not None]
        for value in returned:
            if isinstance(value, ast.Lambda):
                return value
            if isinstance(value, ast.Name):
                inner = next((n for n in factory.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
                              and n.name == value.id), None)
                if inner is not None:
                    return inner
    return None


# ----- verdict ---------------------------------------------------------------------------------------------
def _claimed(params: dict) -> tuple[set[tuple[str, str]], str]:
    out: set[tuple[str, str]] = set()
    for relation, key in _PARAM_OF_RELATION.items():
        given = params.get(key)
        if given is None:
            continue
        for target in [given] if isinstance(given, str) else list(given):
            target = str(target).strip().lower()
            if target not in TARGETS:
                return set(), f"`{key}: {target}` is not a block part ({', '.join(TARGETS)})"
            out.add((relation, target))
    if not out:
        return set(), "the rule needs `after`, `before` or `parallel_to` (mlp, attention)"
    return out, ""


def _label(pairs) -> str:
    words = {"after": "after", "before": "before", "parallel": "parallel to"}
    return ", ".join(f"{words[r]} the {'MLP' if t == 'mlp' else 'attention'}" for r, t in sorted(pairs))


def _evidence(ctx, items: list[Placement]) -> list:
    out = []
    for p in items:
        out.append(evidence(ctx, p.file, p.line, "rule", end=p.end_line,
                            note=f"{_label([(p.relation, p.target)])} (`{p.site}`)"))
        if p.target_line != p.line:
            out.append(evidence(ctx, p.file, p.target_line, "call", note="the MLP / attention call it is placed against"))
    return sorted_evidence(out)


def evaluate(params: dict, ctx, scope: str | None, rule: dict) -> CheckResult:
    claimed, bad = _claimed(params)
    if bad:
        return CheckResult.unverified(KIND, bad)
    family = str(params.get("module") or "adapter")
    found = ctx.memo(f"protocol.placement.find:{family}:{scope or ''}", lambda: find(ctx, scope, rule, family))
    placements = sorted(set(found.placements), key=lambda p: (p.file, p.line, p.relation, p.target))
    notes = [n for n in found.notes if n.reason]
    claim = _label(claimed)
    if not placements:
        if notes:
            n = notes[0]
            return CheckResult.unverified(KIND, f"{n.reason} ({n.file}:{n.line})",
                                          evidence=[evidence(ctx, n.file, n.line, "rule")])
        defined = found.defined[:1]
        where = f"; {defined[0].reason} ({defined[0].file}:{defined[0].line}) but never applied in a block" if defined else ""
        return CheckResult.failed(KIND, Status.missing, f"no {family} module applied in any block forward{where}",
                                  [evidence(ctx, d.file, d.line, "mention") for d in defined])
    kinds = {(p.relation, p.target) for p in placements}
    covered = claimed & kinds
    if covered == claimed:
        chosen = [next(p for p in placements if (p.relation, p.target) == c) for c in sorted(claimed)]
        sites = {p.site for p in chosen}
        extras = [p for p in placements if (p.relation, p.target) not in claimed and not p.conditional and p.site in sites
                  and not any(c.site == p.site and c.line == p.line for c in chosen)]
        if extras:
            return CheckResult.partial(KIND, 0.75, f"{claim} as claimed, and also {_label({(p.relation, p.target) for p in extras})} "
                                       f"({extras[0].file}:{extras[0].line})", _evidence(ctx, chosen + extras[:1]),
                                       found=_label(kinds))
        return CheckResult.passed(KIND, f"{family} {claim} ({chosen[0].file}:{chosen[0].line})", _evidence(ctx, chosen))
    if covered and notes:  # the missing placement may be the one applied where it cannot be read
        n = notes[0]
        return CheckResult.unverified(KIND, f"{_label(covered)} found; {n.reason} ({n.file}:{n.line})",
                                      evidence=[evidence(ctx, n.file, n.line, "rule")])
    if covered:
        chosen = [next(p for p in placements if (p.relation, p.target) == c) for c in sorted(covered)]
        others = [next(p for p in placements if (p.relation, p.target) == k) for k in sorted(kinds - claimed)]
        where = f" (placed {_label(kinds - claimed)} instead, {others[0].file}:{others[0].line})" if others else ""
        return CheckResult.partial(KIND, 0.5, f"{_label(covered)} found, not {_label(claimed - covered)}{where}",
                                   _evidence(ctx, chosen + others), found=_label(kinds))
    if notes:
        n = notes[0]
        return CheckResult.unverified(KIND, f"{n.reason} ({n.file}:{n.line}); placed {_label(kinds)} elsewhere",
                                      evidence=[evidence(ctx, n.file, n.line, "rule")])
    shown = [next(p for p in placements if (p.relation, p.target) == k) for k in sorted(kinds)]
    return CheckResult.failed(KIND, Status.mismatch, f"{family} placed {_label(kinds)} "
                              f"({shown[0].file}:{shown[0].line}), not {claim}", _evidence(ctx, shown), found=_label(kinds))

"""Rule ``shape``: the learnable tensors a claim sizes ("W_down ∈ ℝ^{r×D}") have those shapes in the code.

Papers size tensors in their symbols, code in names (``nn.Linear(dim, rank)``). Both sides become SymPy: code
names that stand for a dimension parameter (``dim``, ``in_features`` -> hidden_size) become that parameter's
symbol, the paper's anchored symbols (``symbols: {D: hidden_size}``) the same symbol, free ones bind to the
code dimension they face. A transposition is never a mismatch (``W x`` and ``x W`` size one map both ways);
a mismatch needs both sides made of known parameters and numbers. See rules/protocol/shape.yaml. Runtime tensors
(``tensors: runtime``: "state shape [81, 120]") are judged in runtime_shape.py.
"""

from __future__ import annotations

import ast
import itertools
import re
from dataclasses import dataclass

import sympy

from verifier.analysis.protocol.common import leaf as _leaf
from verifier.analysis.protocol.common import (
    dotted,
    evidence,
    file_view,
    is_ml_text,
    python_paths,
    scope_admits,
    sorted_evidence,
    text_of,
    tokens,
    written_dims,
)
from verifier.results import CheckResult, Status
from verifier.symbolic.tensor_shapes import GREEK as _GREEK
from verifier.symbolic.tensor_shapes import PAPER_NAME as _PAPER_NAME
from verifier.symbolic.tensor_shapes import mappable, paper_dim

KIND = "protocol"
_CREATORS = frozenset({"zeros", "ones", "randn", "rand", "empty", "Tensor", "FloatTensor", "full", "eye", "normal",
                       "randint", "ones_like", "zeros_like", "tensor"})
_SHAPED = frozenset({"zeros", "ones", "randn", "rand", "empty", "Tensor", "FloatTensor"})
_MAX_COMBOS = 4096
_LAYER_WORDS = ("Parameter", "Linear", "Embedding", "LayerNorm", "Conv", "self.param(", "Dense", "get_parameter")


@dataclass(frozen=True)
class Tensor:
    """One learnable tensor of the code: its name pieces, how it is made, its dims (None: not written)."""

    file: str
    line: int
    end_line: int
    owner: str  # the class (or function) that creates it
    name: str  # attribute or parameter name as written: "down", "lora_A", "fc1"
    part: str  # "weight" | "bias" | "" (a Parameter itself)
    how: str  # "Parameter" | "Linear" | ...
    dims: tuple[ast.AST | None, ...]
    scope: str  # the function whose locals the dims read


class Lexicon:
    def __init__(self, rule: dict):
        lex = rule.get("lexicon") or {}
        self.spelling: dict[str, str] = {}
        for param, names in sorted((lex.get("dimensions") or {}).items()):
            for n in names:
                self.spelling.setdefault(str(n).lower(), str(param))
        self.parameters = frozenset(str(p) for p in (lex.get("dimensions") or {}))
        self.libraries = tuple(str(x) for x in lex.get("libraries") or [])
        self.prefixes = frozenset(str(x).lower() for x in lex.get("method_prefixes") or [])
        self.numbered = frozenset(str(x).lower() for x in lex.get("numbered_layers") or [])
        self.backbone = frozenset(str(x).lower() for x in lex.get("backbone_names") or [])


# ----- the repo's tensors ------------------------------------------------------------------------------------
def _shape_args(call: ast.Call) -> tuple[ast.AST, ...] | None:
    """The dims a tensor-creating call writes: ``zeros(a, b)``, ``zeros((a, b))``, ``full((a, b), v)``, ``eye(n)``."""
    leaf = _leaf(dotted(call.func))
    if leaf == "eye" and call.args:
        n = call.args[0]
        return (n, call.args[1] if len(call.args) > 1 else n)
    if leaf == "full":
        return written_dims(call, _elements, shape_first=True)
    if leaf not in _SHAPED:
        return None
    return written_dims(call, _elements)


def _elements(node: ast.AST) -> tuple[ast.AST, ...] | None:
    """A tuple or list's elements as written (a starred one included: it is a dim the pairing cannot read)."""
    return tuple(node.elts) if isinstance(node, (ast.Tuple, ast.List)) else None


def _created_dims(node: ast.AST) -> tuple[ast.AST, ...] | None:
    """The shape of the tensor an expression makes: ``torch.randn(r, d) * 0.01``, ``torch.zeros(d).normal_()``."""
    if isinstance(node, ast.BinOp):
        found = [d for d in (_created_dims(node.left), _created_dims(node.right)) if d is not None]
        return found[0] if len(found) == 1 else None
    if isinstance(node, ast.Call):
        name = dotted(node.func) or ""
        if _leaf(name) in _CREATORS and ("torch" in name or name in _CREATORS or name.startswith(("jnp.", "np."))):
            return _shape_args(node)
        if isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Call):
            return _created_dims(node.func.value)  # torch.zeros(d).normal_(0, 0.02), .to(device)
    return None


def _arg(call: ast.Call, index: int, name: str) -> ast.AST | None:
    for k in call.keywords:
        if k.arg == name:
            return k.value
    positional = [a for a in call.args if not isinstance(a, ast.Starred)]
    return positional[index] if index < len(positional) and len(positional) == len(call.args) else None


def _flag(call: ast.Call, name: str, default: bool) -> bool | None:
    value = next((k.value for k in call.keywords if k.arg == name), None)
    if value is None:
        return default
    return value.value if isinstance(value, ast.Constant) and isinstance(value.value, bool) else None


def _layer_tensors(call: ast.Call) -> list[tuple[str, str, tuple]] | None:
    """(part, how, dims) of the tensors a layer constructor creates; None when it is not a known layer."""
    leaf = _leaf(dotted(call.func))
    if leaf == "Linear":
        fan_in, fan_out = _arg(call, 0, "in_features"), _arg(call, 1, "out_features")
        if fan_in is None or fan_out is None:
            return []
        bias = _flag(call, "bias", True)
        out = [("weight", "Linear", (fan_out, fan_in))]
        return out + ([("bias", "Linear", (fan_out,))] if bias else [])
    if leaf == "Embedding":
        n, d = _arg(call, 0, "num_embeddings"), _arg(call, 1, "embedding_dim")
        return [] if n is None or d is None else [("weight", "Embedding", (n, d))]
    if leaf == "LayerNorm":
        d = _arg(call, 0, "normalized_shape")
        if d is None or isinstance(d, (ast.Tuple, ast.List)):
            return []
        affine = _flag(call, "elementwise_affine", True)
        return [("weight", "LayerNorm", (d,)), ("bias", "LayerNorm", (d,))] if affine else []
    if leaf in ("Conv1d", "Conv2d", "Conv3d"):
        c_in, c_out, k = _arg(call, 0, "in_channels"), _arg(call, 1, "out_channels"), _arg(call, 2, "kernel_size")
        groups = next((kw.value for kw in call.keywords if kw.arg == "groups"), None)
        if c_in is None or c_out is None or k is None:
            return []
        spatial = int(leaf[4])
        kernel = tuple(k.elts) if isinstance(k, (ast.Tuple, ast.List)) else (k,) * spatial
        fan_in = c_in if groups is None else ast.BinOp(c_in, ast.FloorDiv(), groups)
        out = [("weight", leaf, (c_out, fan_in, *kernel))]
        return out + ([("bias", leaf, (c_out,))] if _flag(call, "bias", True) else [])
    if leaf == "Dense" and isinstance(call.func, ast.Attribute):  # Flax: the kernel's input width is not written
        features = _arg(call, 0, "features")
        if features is None:
            return []
        out = [("weight", "Dense", (None, features))]
        return out + ([("bias", "Dense", (features,))] if _flag(call, "use_bias", True) else [])
    return None


def _string(node: ast.AST | None) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _param_call(call: ast.Call) -> tuple[str, tuple] | None:
    """Flax ``self.param("w", init, (a, b))`` / Haiku ``hk.get_parameter("w", shape=[a, b])``: (name, dims)."""
    name = dotted(call.func) or ""
    if name == "self.param" and len(call.args) >= 3 and _string(call.args[0]):
        shape = call.args[2]
    elif _leaf(name) == "get_parameter" and call.args and _string(call.args[0]):
        shape = next((k.value for k in call.keywords if k.arg == "shape"), call.args[1] if len(call.args) > 1 else None)
    else:
        return None
    if isinstance(shape, (ast.Tuple, ast.List)):
        return _string(call.args[0]), tuple(shape.elts)
    return None


def _parameter_dims(value: ast.AST) -> tuple | None:
    """``nn.Parameter(<tensor>)`` (or a ParameterList comprehension of them): the tensor's dims."""
    if isinstance(value, ast.Call) and _leaf(dotted(value.func)) == "Parameter" and value.args:
        return _created_dims(value.args[0])
    if isinstance(value, ast.Call) and _leaf(dotted(value.func)) == "ParameterList" and value.args:
        inner = value.args[0]
        if isinstance(inner, (ast.ListComp, ast.GeneratorExp)):
            return _parameter_dims(inner.elt)
    return None


def _class_tensors(path: str, cls: ast.ClassDef, prefix: str) -> list[Tensor]:
    out: list[Tensor] = []
    owner = prefix + cls.name
    for fn in cls.body:
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        scope = f"{owner}.{fn.name}"
        for node in ast.walk(fn):
            target, value = None, None
            if isinstance(node, ast.Assign) and len(node.targets) == 1:
                target, value = node.targets[0], node.value
            elif isinstance(node, ast.AnnAssign) and node.value is not None:
                target, value = node.target, node.value
            attr = target.attr if isinstance(target, ast.Attribute) and dotted(target.value) == "self" else None
            local = target.id if isinstance(target, ast.Name) else None
            span = (getattr(node, "lineno", 0), getattr(node, "end_lineno", None) or getattr(node, "lineno", 0))
            if isinstance(node, ast.Call):
                flax = _param_call(node)
                if flax is not None:
                    out.append(Tensor(path, node.lineno, node.end_lineno or node.lineno, owner, flax[0], "", "param",
                                      flax[1], scope))
                elif _leaf(dotted(node.func)) == "Dense" and (label := _string(next((k.value for k in node.keywords if k.arg == "name"), None))):
                    for part, how, dims in _layer_tensors(node) or []:  # nn.Dense(r, name="down")(x) in a compact call
                        out.append(Tensor(path, node.lineno, node.end_lineno or node.lineno, owner, label, part, how, dims, scope))
                continue
            if value is None or (attr is None and local is None):
                continue
            dims = _parameter_dims(value)
            if dims is not None and (attr or local):
                out.append(Tensor(path, *span, owner, attr or local, "", "Parameter", dims, scope))
                continue
            if attr and isinstance(value, ast.Call):
                for part, how, dims in _layer_tensors(value) or []:
                    out.append(Tensor(path, *span, owner, attr, part, how, dims, scope))
    return out


def repo_tensors(ctx, scope: str | None) -> list[Tensor]:
    out: list[Tensor] = []
    for path in python_paths(ctx, scope):
        text = text_of(ctx, path)
        if not any(w in text for w in _LAYER_WORDS) or not is_ml_text(ctx, path):
            continue  # a C-speed look first: only files of an ML framework that create layers or parameters
        view = file_view(ctx, path)
        if view is None:
            continue
        stack: list[tuple[ast.AST, str]] = [(n, "") for n in view.tree.body]
        while stack:
            node, prefix = stack.pop()  # any order: the tensors are sorted below
            if isinstance(node, ast.ClassDef):
                if scope_admits(scope, prefix + node.name) or scope_admits(scope, prefix + node.name + ".__init__"):
                    out += _class_tensors(path, node, prefix)
                stack += [(n, f"{prefix}{node.name}.") for n in node.body if isinstance(n, ast.ClassDef)]
    unique = {(t.file, t.line, t.owner, t.name, t.part): t for t in out}  # `self.down = nn.Dense(r, name="down")`
    return [unique[k] for k in sorted(unique)]


# ----- names ---------------------------------------------------------------------------------------------------


def _accepts(lex: Lexicon, paper: str, words: list[str], t: Tensor) -> bool:
    """Does code tensor ``t`` carry paper tensor ``paper``'s name (or the code ``words`` given for it)?"""
    own = tokens(t.name)
    full = t.name.lower()
    if words:  # "prompt" ~ prompts, prompt_embeddings, deep_prompt
        return any(tok in (w.lower(), w.lower() + "s") for w in words for tok in own) and t.part != "bias"
    m = _PAPER_NAME.match(paper.strip())
    if not m:
        return False
    base, sub = m.group("base"), (m.group("sub") or "").strip()
    bias_wanted = base == "b"
    is_bias = t.part == "bias" or (t.part == "" and ("bias" in own or own[:1] == ["b"]))
    if base.lower() in _GREEK:
        digit = sub if sub.isdigit() else ""
        return base.lower() in own and (not digit or digit in own) and not is_bias
    if re.fullmatch(r"[A-Za-z]{2,}", sub) and base in ("W", "w", "b", "E", "P", "h", "M"):
        key = sub.lower()
        if full in lex.backbone:
            return False
        if base == "E" and key == "pos":
            return ("pos" in own or "position" in own) and not is_bias
        return key in own and (is_bias == bias_wanted)
    if sub.isdigit() and base in ("W", "w", "b"):
        layer = own[:-1] if own and own[-1] == sub else None
        if t.part and layer and len(layer) == 1 and layer[0] in lex.numbered:
            return is_bias == bias_wanted
        return t.part == "" and own == [base.lower(), sub] and is_bias == bias_wanted
    if len(base) == 1 and base.isupper() and (not sub or re.fullmatch(r"\d|[a-z]|[a-z][-+]\d", sub)):
        letter = base.lower()
        if t.part == "bias":
            return False
        if own == [letter] and t.name == base:
            return True
        prefix = re.sub(r"[^a-z]", "", t.name[:-1].lower())
        if own[-1:] != [letter] or t.name[-1].lower() != letter or prefix not in lex.prefixes:
            return False
        # ``lora_v`` / ``adapter_q`` are a method on the value / query projection, not a factor V or Q; other
        # lower-case factors (``lora_a``, ``FacT_u``) are the factors themselves
        return t.name[-1] == base or not (letter in "qkvo" and prefix in ("lora", "adapter"))
    return False


# ----- dimensions as SymPy -----------------------------------------------------------------------------------
def _locals(ctx, t: Tensor) -> dict[str, ast.AST]:
    """Names (and ``self.x``) assigned exactly once in the tensor's function: inlined into its dims."""

    def make() -> dict[str, ast.AST]:
        view = file_view(ctx, t.file)
        fn = view.functions.get(t.scope) if view else None
        if fn is None:
            return {}
        seen: dict[str, list[ast.AST]] = {}
        for node in ast.walk(fn.node):
            if isinstance(node, ast.Assign) and len(node.targets) == 1:
                key = dotted(node.targets[0]) if isinstance(node.targets[0], (ast.Name, ast.Attribute)) else None
                if key:
                    seen.setdefault(key, []).append(node.value)
            elif isinstance(node, (ast.AugAssign, ast.For)) and isinstance(node.target, ast.Name):
                seen.setdefault(node.target.id, []).extend([node, node])
        return {k: v[0] for k, v in seen.items() if len(v) == 1}

    return ctx.memo(f"protocol.shape.locals:{t.file}:{t.scope}", make)


class _Opaque:
    """Code atoms that are no dimension parameter: symbol -> (expression text, tensor) for the value resolver."""

    def __init__(self):
        self.atoms: dict[sympy.Symbol, tuple[str, Tensor]] = {}


def code_dim(ctx, lex: Lexicon, t: Tensor, node: ast.AST, opaque: _Opaque, depth: int = 0) -> sympy.Expr | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        return sympy.nsimplify(node.value)
    if isinstance(node, ast.BinOp):
        left = code_dim(ctx, lex, t, node.left, opaque, depth)
        right = code_dim(ctx, lex, t, node.right, opaque, depth)
        if left is None or right is None:
            return None
        op = type(node.op)
        if op is ast.Add:
            return left + right
        if op is ast.Sub:
            return left - right
        if op is ast.Mult:
            return left * right
        if op in (ast.Div, ast.FloorDiv):
            return left / right
        if op is ast.Pow:
            return left**right
        return None
    if isinstance(node, ast.Call) and _leaf(dotted(node.func)) in ("int", "round", "ceil", "floor") and len(node.args) == 1:
        return code_dim(ctx, lex, t, node.args[0], opaque, depth)
    name = dotted(node) if isinstance(node, (ast.Name, ast.Attribute)) else None
    if name is None:  # `x.shape[-1]`, `len(vocab)`: a width no name states, which only a free symbol can face
        text = ast.unparse(node)
        symbol = sympy.Symbol("code_" + re.sub(r"\W+", "_", text).strip("_"), positive=True)
        opaque.atoms.setdefault(symbol, (text, t))
        return symbol
    leaf = _leaf(name).lower()
    inline = _locals(ctx, t).get(name)
    literal = isinstance(inline, ast.Constant)
    if inline is not None and depth < 4 and not (literal and leaf in lex.spelling):
        # `hidden = dim * mlp_ratio` is read through; `rank = 8` and `hidden_size = x.shape[-1]` keep their names
        inner = code_dim(ctx, lex, t, inline, opaque, depth + 1)
        if inner is not None and not (leaf in lex.spelling and any(s in opaque.atoms for s in inner.free_symbols)):
            return inner
    if leaf in lex.spelling:
        return sympy.Symbol(lex.spelling[leaf], positive=True)
    symbol = sympy.Symbol(f"code_{_leaf(name)}", positive=True)
    opaque.atoms.setdefault(symbol, (name, t))
    return symbol


def _resolve_opaque(ctx, expr: sympy.Expr, opaque: _Opaque) -> sympy.Expr:
    """Opaque code atoms (``mlp_ratio``) replaced by the numbers configs and defaults give them."""
    from verifier.analysis.protocol.target_modules import _resolver

    subs = {}
    for symbol in sorted(expr.free_symbols, key=str):
        if symbol not in opaque.atoms:
            continue
        text, t = opaque.atoms[symbol]

        def value(text=text, t=t):
            cand = _resolver(ctx).value_at(text, t.file, t.scope, t.line)
            v = cand.value if cand is not None and cand.resolved else None
            return v if isinstance(v, (int, float)) and not isinstance(v, bool) else None

        found = ctx.memo(f"protocol.shape.value:{t.file}:{t.scope}:{t.line}:{text}", value)
        if found is not None:
            subs[symbol] = sympy.nsimplify(found)
    return expr.subs(subs) if subs else expr


def _strip_ones(dims: list) -> list:
    return [d for d in dims if not (d is not None and d == 1)]


# ----- the decision --------------------------------------------------------------------------------------------
EQ, NEQ, UNKNOWN = "eq", "neq", "unknown"


def _compare(ctx, p: sympy.Expr, c: sympy.Expr | None, binding: dict, anchored: dict, opaque: _Opaque) -> str:
    """eq, neq (both sides known parameters and numbers, and they differ) or unknown."""
    if c is None:
        return UNKNOWN
    expr = p.subs(anchored).subs(binding)
    if any(str(s).startswith("paper_") for s in expr.free_symbols):
        return UNKNOWN
    if sympy.simplify(expr - c) == 0:
        return EQ
    expr, c = _resolve_opaque(ctx, expr, opaque), _resolve_opaque(ctx, c, opaque)
    diff = sympy.simplify(expr - c)
    if diff == 0:
        return EQ
    if any(s not in anchored.values() for s in diff.free_symbols):
        # a code name outside the claim's anchors (`hidden_features`, an unresolved `self.width`): its relation to
        # the claimed symbols is set elsewhere (`Mlp(hidden_features=4 * dim)`), so no contradiction is shown
        return UNKNOWN
    if not c.free_symbols and expr.free_symbols:
        return UNKNOWN  # a literal width (`nn.Linear(d, 8)`) may be the rank's value: not a contradiction
    return NEQ


def _orientations(paper: list, code: list) -> list[list[tuple]]:
    """Dim pairings to try: same order, all reversed; a code tensor with extra leading (stacking) dims by its tail."""
    if len(code) < len(paper) or not paper:
        return []
    tail = code[len(code) - len(paper):]
    pairs = [list(zip(paper, tail))]
    if len(paper) >= 2:
        pairs.append(list(zip(paper, tail[::-1])))
    return pairs


def _assess(ctx, shapes: dict[str, list], found: dict[str, tuple[Tensor, list]], anchored: dict, free: set,
            opaque: _Opaque) -> tuple[str, dict[str, str]]:
    """The best outcome over orientations and free-symbol bindings: (eq | neq | unknown, per-tensor outcome)."""
    names = sorted(found)
    options = [_orientations(shapes[n], found[n][1]) for n in names]
    if any(not o for o in options):
        return UNKNOWN, {n: (UNKNOWN if not o else "") for n, o in zip(names, options)}
    best: tuple[int, dict[str, str]] | None = None
    for combo in itertools.islice(itertools.product(*options), _MAX_COMBOS):
        binding: dict = {}
        per: dict[str, str] = {}
        forbidden = set(anchored.values())
        for name, pairs in zip(names, combo):
            for p, c in pairs:
                if p in free and p not in binding and c is not None and c not in forbidden:
                    binding[p] = c
        for name, pairs in zip(names, combo):
            results = [_compare(ctx, p, c, binding, anchored, opaque) for p, c in pairs]
            per[name] = NEQ if NEQ in results else UNKNOWN if UNKNOWN in results else EQ
        rank = 2 if all(v == EQ for v in per.values()) else 1 if NEQ not in per.values() else 0
        if best is None or rank > best[0]:
            best = (rank, per)
        if rank == 2:
            break
    assert best is not None
    return {2: EQ, 1: UNKNOWN, 0: NEQ}[best[0]], best[1]


def _anchors(lex: Lexicon, symbols: dict) -> dict:
    out = {}
    for paper, code in sorted(symbols.items()):
        name = str(code).strip()
        param = name if name in lex.parameters else lex.spelling.get(name.lower())
        out[sympy.Symbol(f"paper_{paper}", positive=True)] = sympy.Symbol(param, positive=True) if param else sympy.Symbol(
            f"code_{_leaf(name)}", positive=True)
    return out


def _shape_text(dims) -> str:
    return "×".join("?" if d is None else str(d).replace("paper_", "") for d in dims)


def _code_text(t: Tensor) -> str:
    dims = ", ".join("?" if d is None else ast.unparse(d) for d in t.dims)
    what = f"{t.name}.{t.part}" if t.part else t.name
    return f"{what} ({dims})"


def _uses_library(ctx, lex: Lexicon) -> str | None:
    """A library the repo imports whose layers may hold the claimed tensors (read from the index's imports)."""
    for path in python_paths(ctx):
        facts = ctx.index.files.get(path)
        for imp in (facts.imports if facts is not None else ()) or ():
            if imp.relative_level:
                continue
            module = imp.module or ""
            for lib in lex.libraries:
                if module == lib or module.startswith(lib + "."):
                    return lib
    return None


def evaluate(params: dict, ctx, scope: str | None, rule: dict) -> CheckResult:
    if params.get("tensors") == "runtime":  # "state shape [81, 120]": a tensor a run builds, not a parameter
        from verifier.analysis.protocol import runtime_shape

        return runtime_shape.evaluate(params, ctx, scope, rule)
    lex = ctx.memo("protocol.shape.lexicon", lambda: Lexicon(rule))
    expect = params.get("expect") or {}
    words = {str(k): [str(w) for w in v] for k, v in (params.get("names") or {}).items()}
    shapes: dict[str, list] = {}
    for name, dims in sorted(expect.items()):
        parsed = [paper_dim(str(d)) for d in (dims if isinstance(dims, list) else [dims])]
        if any(p is None for p in parsed):
            return CheckResult.unverified(KIND, f"cannot read the shape of {name}: {dims!r}")
        shapes[str(name)] = _strip_ones(parsed)
        if not mappable(str(name), words.get(str(name))):
            return CheckResult.unverified(KIND, f"`{name}` maps to no code name (give `names: {{{name}: [...]}}`)")
    anchored = _anchors(lex, dict(params.get("symbols") or {}))
    for name, dims in shapes.items():
        if not any(s in anchored for d in dims for s in d.free_symbols):
            return CheckResult.unverified(KIND, f"no dimension of {name} is anchored to a parameter: the shape says nothing checkable")
    free = {s for dims in shapes.values() for d in dims for s in d.free_symbols} - set(anchored)

    tensors = ctx.memo(f"protocol.shape.tensors:{scope or ''}", lambda: repo_tensors(ctx, scope))
    candidates = {name: [t for t in tensors if _accepts(lex, name, words.get(name, []), t)] for name in shapes}
    owners = sorted({t.owner + "@" + t.file for ts in candidates.values() for t in ts})
    if not owners:
        library = _uses_library(ctx, lex)
        listing = ", ".join(sorted(shapes))
        if library:
            return CheckResult.unverified(KIND, f"no tensor named like {listing} in the repo's code; it uses {library}, "
                                          "whose layers may define them")
        return CheckResult.failed(KIND, Status.missing, f"no tensor named like {listing} found", [])
    verdicts = []
    for owner in owners:
        here = {n: [t for t in ts if t.owner + "@" + t.file == owner] for n, ts in candidates.items()}
        for name, ts in candidates.items():  # a tensor absent here but unique in the repo joins it
            if not here[name] and len(ts) == 1:
                here[name] = ts
        verdicts.append(_judge(ctx, lex, shapes, here, anchored, free))
    verdicts.sort(key=lambda v: (-v[0], v[1].file if v[1] else "", v[1].line if v[1] else 0))
    top = [v for v in verdicts if v[0] == verdicts[0][0]]
    outcomes = {(r.status, r.score) for _, _, r in top}
    if len(outcomes) > 1:
        return CheckResult.unverified(KIND, "classes with tensors of those names disagree: "
                                      + "; ".join(r.message for _, _, r in top[:3]),
                                      evidence=sorted_evidence(e for _, _, r in top for e in r.evidence))
    return top[0][2]


def _judge(ctx, lex, shapes, here, anchored, free) -> tuple[int, Tensor | None, CheckResult]:
    """One owner's tensors against the claimed shapes: (how many found, first tensor, verdict)."""
    found_count = sum(1 for ts in here.values() if ts)
    first = next((ts[0] for _, ts in sorted(here.items()) if ts), None)
    ambiguous = [n for n, ts in sorted(here.items()) if len(ts) > 1]
    ev = sorted_evidence(evidence(ctx, t.file, t.line, "rule", end=t.end_line) for ts in here.values() for t in ts)
    if ambiguous:
        name = ambiguous[0]
        which = ", ".join(f"{t.name}{'.' + t.part if t.part else ''} ({t.file}:{t.line})" for t in here[name][:3])
        return found_count, first, CheckResult.unverified(KIND, f"`{name}` matches several tensors: {which}", evidence=ev)
    opaque = _Opaque()
    found: dict[str, tuple[Tensor, list]] = {}
    for name, ts in here.items():
        if ts:
            t = ts[0]
            found[name] = (t, _strip_ones([None if d is None else code_dim(ctx, lex, t, d, opaque) for d in t.dims]))
    outcome, per = _assess(ctx, shapes, found, anchored, free, opaque)
    described = "; ".join(f"{n} {_shape_text(shapes[n])} ~ {_code_text(found[n][0])} at {found[n][0].file}:{found[n][0].line}"
                          for n in sorted(found))
    absent = sorted(n for n in shapes if n not in found)
    details = {"found": {n: _code_text(found[n][0]) for n in sorted(found)}}
    if outcome == NEQ:
        wrong = sorted(n for n, v in per.items() if v == NEQ)
        wrong_ev = sorted_evidence(evidence(ctx, found[n][0].file, found[n][0].line, "rule", end=found[n][0].end_line) for n in wrong)
        return found_count, first, CheckResult.failed(
            KIND, Status.mismatch, f"shape contradicts the claim under every reading: "
            + "; ".join(f"{n} {_shape_text(shapes[n])} vs {_code_text(found[n][0])} at {found[n][0].file}:{found[n][0].line}" for n in wrong),
            wrong_ev, **details)
    if outcome == UNKNOWN:
        return found_count, first, CheckResult.unverified(
            KIND, f"dimensions not decided statically: {described}", evidence=ev, **details)
    if absent:
        return found_count, first, CheckResult.partial(
            KIND, 0.5, f"{described}; no tensor for {', '.join(absent)}", ev, **details)
    return found_count, first, CheckResult.passed(KIND, described, ev, **details)

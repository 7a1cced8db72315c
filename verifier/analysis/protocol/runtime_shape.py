"""``shape`` with ``tensors: runtime``: the shape of a tensor a run builds ("state shape [81, 120]", "KV-cache shape
(1, 25, hw, C)") against the shapes the code writes for tensors of that name.

Where code fixes a runtime shape statically: allocations (``torch.zeros(b, 25, h * w, c)``, ``np.zeros((n, 81,
120))``, ``jax.random.normal(key, shape)``, ``register_buffer("cache_k", torch.zeros(...))``), reshapes
(``.view(...)`` / ``.reshape(...)``), shape assertions (``assert u.shape == (n, 81, 120)``) and a setting named
``<tensor>_shape`` (configs, defaults: what a value check reads). Comments stating a shape are not evidence: they
are not what runs. Which tensor: the claim's noun through the lexicon's code names, compared by tokens (``kv_cache``,
``cache_k``; ``u``, ``state``), a name carrying any other word (``hidden_state``, ``init_state``) is another tensor.

Literal 1 dimensions are dropped on both sides (a batch of one), a code tensor with extra leading dimensions (the
samples of a dataset array, a batch, a layer index) is compared on its trailing ones, and a dimension written in
symbols (``hw``, ``C``, ``B``) binds to the code dimension it faces, the same one everywhere. A contradiction needs
every dimension the claim gives as a number resolved, and the same rank up to one leading (sample) dimension.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

import sympy

from verifier.analysis.protocol.common import (
    const_str,
    dotted,
    evidence,
    file_view,
    innermost_scope,
    nodes_of,
    python_paths,
    sorted_evidence,
    text_of,
    tokens,
    written_dims,
)
from verifier.analysis.protocol.common import leaf as _leaf
from verifier.results import CheckResult, Status
from verifier.symbolic.tensor_shapes import paper_dim

KIND = "protocol"
_ALLOCATORS = frozenset({"zeros", "ones", "empty", "randn", "rand", "full", "normal", "uniform", "randint"})
_FRAMEWORKS = ("torch", "np", "numpy", "jnp", "jax", "tf", "onp")
EQ, NEQ, UNKNOWN, PERMUTED, OTHER = "eq", "neq", "unknown", "permuted", "other"


@dataclass(frozen=True)
class Site:
    """One place the code writes a runtime tensor's shape."""

    file: str
    line: int
    end_line: int
    scope: str
    name: str  # the tensor's name as written: "self.cache_k", "u"
    how: str  # "zeros", "view", "assert", ...
    dims: tuple[ast.AST | None, ...]


# ----- where the code writes a shape ---------------------------------------------------------------------------
def _listed(node: ast.AST | None) -> tuple[ast.AST, ...] | None:
    if isinstance(node, (ast.Tuple, ast.List)) and not any(isinstance(e, ast.Starred) for e in node.elts):
        return tuple(node.elts)
    return None


def allocation_dims(call: ast.Call) -> tuple[str, tuple[ast.AST, ...]] | None:
    """(how, dims) of ``torch.zeros(a, b)``, ``np.zeros((a, b))``, ``torch.full((a, b), v)``, ``jax.random.normal(key,
    (a, b))``, ``x.new_zeros(a, b)``; None for any other call."""
    name = dotted(call.func) or ""
    how = _leaf(name)
    keyword = next((k.value for k in call.keywords if k.arg in ("size", "shape")), None)
    root = name.split(".", 1)[0]
    if how.startswith("new_") and how[4:] in _ALLOCATORS and isinstance(call.func, ast.Attribute):
        how = how[4:]
    elif how not in _ALLOCATORS or root not in _FRAMEWORKS + ("jr", "random"):
        return None
    if root in ("jax", "jr", "random") and (root != "jax" or ".random." in name):
        shape = keyword if keyword is not None else (call.args[1] if len(call.args) > 1 else None)
        dims = _listed(shape)  # jax.random.normal(key, (a, b)); the stdlib's random.uniform(0, 1) lists none
        return (how, dims) if dims is not None else None
    if root in ("np", "numpy") and ".random." in name:
        if how in ("randn", "rand"):  # np.random.randn(n, d)
            plain = call.args and not any(isinstance(a, ast.Starred) for a in call.args)
            return (how, tuple(call.args)) if plain else None
        dims = _listed(keyword)  # np.random.normal(0, 1, size=(n, d))
        return (how, dims) if dims is not None else None
    if how in ("normal", "uniform", "randint"):
        return None  # torch.normal(mean, std): its shape is the mean's
    # np.zeros(n, dtype): positional args past the shape are not dims
    positional = not (root in ("np", "numpy", "onp", "jnp") and len(call.args) > 1)
    dims = written_dims(call, _listed, shape_first=how == "full", positional=positional)
    return (how, dims) if dims is not None else None


def _reshape_dims(call: ast.Call) -> tuple[str, tuple[ast.AST, ...]] | None:
    """``x.view(a, b)``, ``x.reshape((a, b))``, ``torch.reshape(x, (a, b))``: the dims of the result."""
    if not isinstance(call.func, ast.Attribute) or call.func.attr not in ("view", "reshape") or call.keywords:
        return None
    receiver = dotted(call.func.value) or ""
    args = call.args
    if receiver in ("torch", "np", "numpy", "jnp", "tf"):
        args = args[1:]
    if len(args) == 1 and _listed(args[0]) is not None:
        return call.func.attr, _listed(args[0])  # type: ignore[return-value]
    if len(args) >= 2 and not any(isinstance(a, ast.Starred) for a in args):
        return call.func.attr, tuple(args)
    return None  # x.view(torch.float16), x.view(shape): no dims written


def _rearranged_dims(call: ast.Call) -> tuple[str, tuple[ast.AST | None, ...]] | None:
    """``rearrange(x, "b (h w) c -> b h w c", h=16)``: the output axes, sized by the keyword arguments (a group by
    the product of its sizes), an axis no keyword sizes unknown."""
    if _leaf(dotted(call.func)) != "rearrange" or len(call.args) != 2:
        return None
    pattern = const_str(call.args[1])
    if not pattern or pattern.count("->") != 1 or "..." in pattern:
        return None
    sizes = {k.arg: k.value for k in call.keywords if k.arg}
    out: list[ast.AST | None] = []
    for group in re.findall(r"\(([^()]*)\)|(\S+)", pattern.split("->")[1]):
        axes = group[0].split() if group[0] else [group[1]]
        if axes == ["1"]:
            out.append(ast.Constant(1))
            continue
        known = [sizes.get(a) for a in axes]
        if any(k is None for k in known) or not known:
            out.append(None)
            continue
        expr = known[0]
        for k in known[1:]:
            expr = ast.BinOp(expr, ast.Mult(), k)
        out.append(expr)
    return "rearrange", tuple(out)


def _made_dims(value: ast.AST) -> tuple[str, tuple[ast.AST, ...]] | None:
    """The dims an assigned expression writes: an allocation or reshape, through ``.to(device)`` / ``* 0.02``."""
    if isinstance(value, ast.BinOp):
        found = [d for d in (_made_dims(value.left), _made_dims(value.right)) if d is not None]
        return found[0] if len(found) == 1 else None
    if not isinstance(value, ast.Call):
        return None
    return (allocation_dims(value) or _reshape_dims(value) or _rearranged_dims(value)
            or (_made_dims(value.func.value) if isinstance(value.func, ast.Attribute)
                and value.func.attr in ("to", "cuda", "float", "half", "double", "detach", "contiguous", "astype",
                                        "normal_", "uniform_", "zero_", "fill_", "requires_grad_") else None))


def _asserted(test: ast.AST) -> tuple[str, tuple[ast.AST, ...]] | None:
    """``x.shape == (a, b)``, ``tuple(x.shape) == (a, b)``, ``x.shape == torch.Size([a, b])``: (name, dims)."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)):
        return None
    for left, right in ((test.left, test.comparators[0]), (test.comparators[0], test.left)):
        if isinstance(left, ast.Call) and _leaf(dotted(left.func)) in ("tuple", "list") and len(left.args) == 1:
            left = left.args[0]
        if isinstance(right, ast.Call) and _leaf(dotted(right.func)) == "Size" and len(right.args) == 1:
            right = right.args[0]
        if isinstance(left, ast.Attribute) and left.attr == "shape" and (name := dotted(left.value)):
            dims = _listed(right)
            if dims is not None:
                return name, dims
    return None


def _target_name(target: ast.AST) -> str | None:
    return dotted(target) if isinstance(target, (ast.Name, ast.Attribute)) else None


def file_sites(ctx, path: str) -> tuple[list[Site], frozenset[str]]:
    """Every shape the file writes for a named tensor, and every name it binds (a tensor whose shape is not written
    still exists: that is unverified, not missing)."""

    def make():
        view = file_view(ctx, path)
        if view is None:
            return [], frozenset()
        sites: list[Site] = []
        bound: set[str] = set()

        def add(node: ast.AST, name: str, made: tuple[str, tuple]):
            end = getattr(node, "end_lineno", None) or node.lineno
            sites.append(Site(path, node.lineno, end, innermost_scope(view, node), name, made[0], tuple(made[1])))

        fed: set[tuple[str, str]] = set()  # (scope, name) of tensors passed to a model's forward
        for call in view.calls:
            node = call.node
            if not node.args:
                continue
            if call.leaf == "register_buffer":
                label = const_str(node.args[0])
                if label and len(node.args) > 1:
                    bound.add(label)
                    made = _made_dims(node.args[1])
                    if made:
                        add(node, label, made)
            elif _is_model_call(call.name):
                first = node.args[0]
                made = _made_dims(first)
                if made:
                    add(node, MODEL_INPUT, ("forward", made[1]))
                elif isinstance(first, ast.Name):
                    fed.add((call.scope, first.id))
        for node in nodes_of(ctx, view, (ast.Assign, ast.AnnAssign, ast.Assert, ast.arg)):
            if isinstance(node, ast.arg):
                bound.add(node.arg)
            elif isinstance(node, ast.Assert):
                found = _asserted(node.test)
                if found:
                    add(node, found[0], ("assert", found[1]))
            else:
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                names = [n for t in targets for n in ([_target_name(t)] if not isinstance(t, ast.Tuple)
                                                      else [_target_name(e) for e in t.elts]) if n]
                bound.update(names)
                made = _made_dims(node.value) if node.value is not None and len(names) == 1 and len(targets) == 1 \
                    and not isinstance(targets[0], ast.Tuple) else None
                if made:
                    add(node, names[0], made)
        sites += [Site(s.file, s.line, s.end_line, s.scope, MODEL_INPUT, "forward", s.dims) for s in list(sites)
                  if (s.scope, s.name) in fed]
        return sites, frozenset(bound)

    return ctx.memo(f"protocol.shape.runtime:{path}", make)


_ARRAY_MODULES = frozenset({"torch", "numpy", "jax", "jaxlib", "flax", "tensorflow", "keras", "mlx", "cupy", "paddle",
                            "lightning", "pytorch_lightning", "diffusers", "transformers", "haiku", "equinox"})
_ARRAY_IMPORT = re.compile(r"^\s*(?:import|from)\s+(?:" + "|".join(sorted(_ARRAY_MODULES)) + r")\b", re.MULTILINE)


def array_paths(ctx, scope: str | None) -> list[str]:
    """Code files that import an array library: a runtime tensor is made nowhere else (read from the imports the
    index already holds; the text only for a file whose imports it could not read)."""

    def uses_arrays(path: str) -> bool:
        facts = ctx.index.files.get(path)
        if facts is not None and facts.parse_error is None and facts.imports is not None:
            return any(imp.module.split(".", 1)[0] in _ARRAY_MODULES for imp in facts.imports
                       if not imp.relative_level and imp.module)
        return bool(_ARRAY_IMPORT.search(text_of(ctx, path)))

    return ctx.memo(f"protocol.shape.runtime.paths:{scope or ''}",
                    lambda: [p for p in python_paths(ctx, scope) if uses_arrays(p)])


MODEL_INPUT = "model_input"  # the name a tensor fed to a model's forward is known by
# Sites that can show the claimed shape but never contradict it: a reshape is a view for one computation
# (`u.reshape(n * nt, nx)`), and a repo feeds several models (a VAE's images, the denoiser's latents).
_CONFIRM_ONLY = frozenset({"view", "reshape", "rearrange", "forward"})
_MODEL_WORDS = frozenset({"model", "net", "unet", "denoiser", "network", "transformer", "dit", "backbone"})


def _is_model_call(name: str) -> bool:
    """``model(x)``, ``self.unet(x, t)``, ``net.forward(x)``: a forward pass (not ``model.to(x)``)."""
    parts = name.split(".")
    if parts[-1] == "forward":
        parts = parts[:-1]
    return bool(parts) and bool(set(tokens(parts[-1])) & _MODEL_WORDS) and parts[-1][:1].islower()


# ----- which tensor ---------------------------------------------------------------------------------------------
class Names:
    """The lexicon's code names of one claimed tensor, as token sets; ``neutral`` tokens may be added to any."""

    def __init__(self, rule: dict, key: str, extra: list[str]):
        runtime = ((rule.get("lexicon") or {}).get("runtime") or {})
        entry = (runtime.get("tensors") or {}).get(key) or {}
        spelled = [str(n) for n in (entry.get("code") or [])] + list(extra) + ([key] if not extra else [])
        self.sets = {frozenset(tokens(n)) for n in spelled if tokens(n)}
        self.neutral = frozenset(str(w).lower() for w in runtime.get("neutral") or [])
        # a repo may lack a KV cache; it never lacks a state or a model input, it may only call them otherwise
        self.absent_is_missing = bool(entry.get("absent_is_missing"))

    def accepts(self, name: str) -> bool:
        own = tokens(_leaf(name))  # self.attn.cache_k: the tensor's own name is the last piece
        words = frozenset(own) - self.neutral
        return bool(own) and words in self.sets


# ----- comparing -----------------------------------------------------------------------------------------------
def _paper_dims(dims: list) -> list[sympy.Expr] | None:
    out = []
    for d in dims:
        expr = paper_dim(str(d))
        if expr is None:
            return None
        if expr != 1:
            out.append(expr)
    return out


def _code_value(ctx, site: Site, node: ast.AST | None):
    """A code dimension as a number when its value is known statically, else None."""
    if node is None:
        return None
    if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return None  # -1: inferred
    from verifier.analysis.protocol.target_modules import _resolver

    text = ast.unparse(node)

    def value():
        cand = _resolver(ctx).value_at(text, site.file, site.scope, site.line)
        v = cand.value if cand is not None and cand.resolved else None
        if isinstance(v, float) and v.is_integer():
            v = int(v)
        return v if isinstance(v, int) and not isinstance(v, bool) else None

    return ctx.memo(f"protocol.shape.runtime.value:{site.file}:{site.scope}:{site.line}:{text}", value)


def _aligned(paper: list, code: list, ctx, site: Site) -> str:
    """eq | neq | unknown for one alignment of equal length."""
    binding: dict[str, str] = {}
    outcome = EQ
    for p, c in zip(paper, code):
        if p.free_symbols:  # a symbol (hw, C, B) binds to whatever it faces, the same everywhere
            key = str(p)
            written = "?" if c is None else ast.unparse(c)
            if _one_factor_of(p, c):
                outcome = NEQ  # "hw" (h·w) claimed, the code's dimension is `h` alone
                continue
            if binding.setdefault(key, written) != written:
                outcome = UNKNOWN if outcome == EQ else outcome
            continue
        value = _code_value(ctx, site, c)
        if value is None:
            outcome = UNKNOWN if outcome == EQ else outcome
        elif value != int(p):
            outcome = NEQ
    return outcome


def _one_factor_of(paper: sympy.Expr, code: ast.AST | None) -> bool:
    """Is the code's dimension a single name that is one factor of the paper's product (``h`` facing ``hw``)?
    Any other name may hold the product (``hw = h * w``), so only a factor's own name contradicts it."""
    if code is None or not isinstance(paper, sympy.Mul) or not isinstance(code, (ast.Name, ast.Attribute)):
        return False
    factors = {f.name.removeprefix("paper_") for f in paper.args if isinstance(f, sympy.Symbol)}
    leaf = code.id if isinstance(code, ast.Name) else code.attr
    return len(factors) >= 2 and leaf in factors


def _literal_one(node: ast.AST | None) -> bool:
    return isinstance(node, ast.Constant) and node.value == 1


_BATCH_WORDS = frozenset({"batch", "bs", "bsz", "b", "nb"})  # batch_size, bsz, B; not num_steps


def _batch_slot(ctx, site: Site, node: ast.AST | None) -> str:
    """The code dimension facing the claim's leading 1 (a batch of one): 1 or a batch size, or a per-step stack."""
    if node is None or _literal_one(node):
        return EQ
    if isinstance(node, (ast.Name, ast.Attribute)) and set(tokens(dotted(node) or "")) & _BATCH_WORDS:
        return EQ
    value = _code_value(ctx, site, node)
    return UNKNOWN if value is None else EQ if value == 1 else NEQ


def judge_site(ctx, paper: list, site: Site, leading_one: bool = False) -> str:
    """eq | neq | unknown | permuted | other (a lower-rank slice) for one code site against the claimed dims."""
    kept = [i for i, d in enumerate(site.dims) if not _literal_one(d)]
    code = [site.dims[i] for i in kept]
    n = len(paper)
    if len(code) < n:
        return OTHER  # a slice of the tensor (one time step), not the tensor the claim sizes
    tail = _aligned(paper, code[len(code) - n:], ctx, site)
    if tail == EQ:
        start = kept[len(code) - n]
        if not leading_one or start == 0:
            return EQ
        # "(1, 25, hw, C)": the dimension before the claimed ones is a batch (of one), not 50 cached timesteps
        return _batch_slot(ctx, site, site.dims[start - 1])
    if len(code) == n + 1:  # one extra dimension: leading samples, or a trailing channel
        head = _aligned(paper, code[:n], ctx, site)
        if head == EQ:
            return EQ
        if tail == NEQ and head == NEQ:
            return _permuted(ctx, paper, code, site)
        return UNKNOWN
    if len(code) == n and tail == NEQ:
        return _permuted(ctx, paper, code, site)
    return UNKNOWN


def _permuted(ctx, paper: list, code: list, site: Site) -> str:
    """The claimed numbers all present in another order (a layout choice, not another size): not a contradiction."""
    numbers = sorted(int(p) for p in paper if not p.free_symbols)
    values = [_code_value(ctx, site, c) for c in code]
    pool = [v for v in values if v is not None]
    for v in numbers:
        if v not in pool:
            return NEQ
        pool.remove(v)
    return PERMUTED


def _site_text(site: Site) -> str:
    dims = ", ".join("?" if d is None else ast.unparse(d) for d in site.dims)
    return f"{site.name} ({dims}) at {site.file}:{site.line}"


def _config_result(ctx, key: str, dims: list) -> tuple[str, str, list] | None:
    """A setting ``<tensor>_shape`` (``state_shape: [81, 120]`` in a config, a default, a launch flag), resolved as a
    value check resolves it: (eq | neq, what it says, evidence); None when no such setting has one value."""
    if not all(isinstance(d, int) for d in dims):
        return None
    from verifier.analysis.protocol.target_modules import _resolver

    def make():
        resolution = _resolver(ctx).resolve([f"{key}_shape"])
        values = {repr(list(c.value)) for c in resolution.top if c.resolved and isinstance(c.value, (list, tuple))}
        if len(values) != 1 or any(not c.resolved or not isinstance(c.value, (list, tuple)) for c in resolution.top):
            return None  # no such setting, one that does not fold, or several that disagree
        best = resolution.top[0]
        value = [int(v) if isinstance(v, float) and v.is_integer() else v for v in best.value]
        span = best.source.span
        where = sorted_evidence([evidence(ctx, span.file, span.line, "rule", end=span.end_line)])
        said = f"{best.source.path} = {value} at {span.file}:{span.line}"
        return (EQ if value == list(dims) else NEQ), said, where

    return ctx.memo(f"protocol.shape.runtime.config:{key}:{dims}", make)


def _composed_result(ctx, rule: dict, key: str, dims: list) -> tuple[str, str, list] | None:
    """Settings whose values make the tensor's shape (``in_channels: 4``, ``num_frames: 8``, ``image_size: 32`` for
    a (1, 4, 8, 32, 32) model input), in one of the lexicon's layouts: evidence for the shape, never against it (an
    ``image_size`` may be the pixels a VAE downsamples, not the latent's size)."""
    composed = (((rule.get("lexicon") or {}).get("runtime") or {}).get("composed") or {})
    if key not in (composed.get("tensors") or []) or not all(isinstance(d, int) for d in dims):
        return None
    core = list(dims[1:]) if len(dims) > 1 and dims[0] == 1 else list(dims)
    from verifier.analysis.protocol.target_modules import _resolver

    def setting(letter: str):
        names = [str(n) for n in (composed.get("settings") or {}).get(letter) or []]
        resolution = _resolver(ctx).resolve(names) if names else None
        values = {repr(c.value) for c in resolution.top if c.resolved} if resolution else set()
        if resolution is None or len(values) != 1 or any(not c.resolved for c in resolution.top):
            return None
        best = resolution.top[0]
        value = best.value
        if isinstance(value, (list, tuple)) and len(value) == 2 and all(isinstance(v, int) for v in value):
            return tuple(value), best
        return ((value, value), best) if isinstance(value, int) and not isinstance(value, bool) else None

    def make():
        for layout in composed.get("layouts") or []:
            letters = str(layout).split()
            if len(letters) != len(core):
                continue
            found = {}
            for letter in {"H" if x == "W" else x for x in letters}:
                got = setting(letter)
                if got is None:
                    break
                found[letter] = got
            else:
                made = [found["H"][0][0] if x == "H" else found["H"][0][1] if x == "W" else found[x][0][0]
                        for x in letters]
                if made == core:
                    spans = [b.source.span for _, b in found.values()]
                    where = sorted_evidence(evidence(ctx, sp.file, sp.line, "rule", end=sp.end_line) for sp in spans)
                    used = sorted((b.source.path, b.value) for _, b in found.values())
                    said = ", ".join(f"{path} = {value}" for path, value in used)
                    return EQ, f"{' '.join(letters)} from settings {said}", where
        return None

    return ctx.memo(f"protocol.shape.runtime.composed:{key}:{dims}", make)


def evaluate(params: dict, ctx, scope: str | None, rule: dict) -> CheckResult:
    expect = params.get("expect") or {}
    words = {str(k): [str(w) for w in v] for k, v in (params.get("names") or {}).items()}
    if len(expect) != 1:
        return CheckResult.unverified(KIND, "a runtime shape check sizes one tensor (`expect: {state: [81, 120]}`)")
    key, dims = next(iter(sorted(expect.items())))
    dims = list(dims) if isinstance(dims, list) else [dims]
    paper = _paper_dims(dims)
    if paper is None:
        return CheckResult.unverified(KIND, f"cannot read the shape of {key}: {dims!r}")
    if not any(not p.free_symbols for p in paper):
        return CheckResult.unverified(KIND, f"no dimension of {key} is a number: the shape says nothing checkable")
    names = Names(rule, str(key), words.get(str(key), []))
    leading_one = bool(dims) and str(dims[0]).strip() == "1" and len(paper) < len(dims)
    claimed = f"{key} ({', '.join(str(d) for d in dims)})"

    outcomes: list[tuple[str, Site]] = []
    others: list[Site] = []  # sizes shown by sites that cannot contradict the claim
    bound_anywhere = False
    for path in array_paths(ctx, scope):
        sites, bound = file_sites(ctx, path)
        bound_anywhere = bound_anywhere or any(names.accepts(b) for b in bound)
        for site in sites:
            if names.accepts(site.name):
                outcome = judge_site(ctx, paper, site, leading_one)
                if outcome == NEQ and site.how in _CONFIRM_ONLY:
                    others.append(site)
                    outcome = OTHER
                outcomes.append((outcome, site))
    config = _config_result(ctx, str(key), dims) or _composed_result(ctx, rule, str(key), dims)
    decided = [(o, s) for o, s in outcomes if o != OTHER]
    agree = [s for o, s in decided if o == EQ]
    contradict = [s for o, s in decided if o == NEQ]
    undecided = [s for o, s in decided if o in (UNKNOWN, PERMUTED)]

    def ev(sites):
        return sorted_evidence(evidence(ctx, s.file, s.line, "rule", end=s.end_line) for s in sites)

    config_ev = list(config[2]) if config else []
    if config and config[0] == EQ:
        agree_ev, agree_text = ev(agree) + config_ev, [config[1]]
    else:
        agree_ev, agree_text = ev(agree), []
    if config and config[0] == NEQ:
        contra_ev, contra_text = ev(contradict) + config_ev, [config[1]]
    else:
        contra_ev, contra_text = ev(contradict), []
    if agree_ev and contra_ev:
        return CheckResult.unverified(
            KIND, f"tensors named like {key} disagree: " + "; ".join([_site_text(s) for s in agree[:2] + contradict[:2]]
                                                                       + agree_text + contra_text),
            evidence=sorted_evidence(agree_ev + contra_ev))
    if agree_ev:
        return CheckResult.passed(KIND, f"{claimed} ~ " + "; ".join([_site_text(s) for s in agree[:3]] + agree_text),
                                  sorted_evidence(agree_ev))
    if contra_ev and not undecided:
        return CheckResult.failed(
            KIND, Status.mismatch, f"{claimed} contradicted: " + "; ".join([_site_text(s) for s in contradict[:3]]
                                                                            + contra_text),
            sorted_evidence(contra_ev))
    if decided or contra_ev:
        shown = [s for o, s in decided][:3]
        return CheckResult.unverified(
            KIND, f"{claimed}: dimensions not decided statically: " + "; ".join(
                f"{_site_text(s)}{' (same sizes in another order)' if o == PERMUTED else ''}"
                for o, s in decided[:3]), evidence=sorted_evidence(ev(shown) + contra_ev))
    if others:
        return CheckResult.unverified(
            KIND, f"{claimed}: only reshapes or inputs of some model show other sizes, which may be another view or "
            "another model: " + "; ".join(_site_text(s) for s in others[:3]), evidence=ev(others[:3]))
    if bound_anywhere or outcomes:
        return CheckResult.unverified(KIND, f"a tensor named like {key} exists, but no shape of it is written "
                                      "statically (an allocation, reshape, assertion or a `_shape` setting)",
                                      evidence=ev([s for _, s in outcomes][:3]))
    if not names.absent_is_missing:
        return CheckResult.unverified(KIND, f"no tensor named like {key} found; every such repo has one, so it goes "
                                      "by a name the lexicon does not list")
    return CheckResult.failed(KIND, Status.missing, f"no tensor named like {key} found", [])

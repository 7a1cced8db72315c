"""Rule ``frozen``: no gradient reaches the named parameters or model (a frozen reference / pretrained base).

Barriers: ``requires_grad_(False)`` / ``.requires_grad = False`` (directly, over ``.parameters()``, or over the
``named_parameters()`` a name test selects), calls of
it under ``torch.no_grad()``/``inference_mode()``, ``.detach()`` of its output, ``jax.lax.stop_gradient``,
PEFT's ``get_peft_model`` (freezes the base), a repo ``freeze*`` helper, or being left out of every optimizer.
Counter-evidence: an optimizer built over the named object's parameters with no barrier.
"""

from __future__ import annotations

import ast
import dataclasses
import re

from verifier.analysis.protocol.common import (
    FileView,
    dotted,
    evidence,
    innermost_scope,
    nodes_of,
    norm,
    parents_of,
    node_in_scope,
    sorted_evidence,
    tokens,
    views_mentioning,
)
from verifier.results import CheckResult, Status

KIND = "protocol"
OPTIMIZERS = {"SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adafactor", "Lion", "LAMB", "Adadelta", "adam", "adamw",
              "sgd", "lion", "Adam8bit", "AdamW8bit", "PagedAdamW"}


def _mentions(node: ast.AST, key: str) -> bool:
    for n in ast.walk(node):
        if isinstance(n, (ast.Name, ast.Attribute)):
            name = n.id if isinstance(n, ast.Name) else n.attr
            if _same(name, key):
                return True
        elif isinstance(n, ast.Constant) and isinstance(n.value, str) and key in norm(n.value) and len(key) > 3:
            return True  # named_parameters() filters: if "base_model" in name
    return False


def _same(name: str, key: str) -> bool:
    n = norm(name)
    return n == key or n.rstrip("s") == key.rstrip("s")


def _barriers(ctx, view: FileView, key: str) -> list[tuple[ast.AST, str]]:
    out: list[tuple[ast.AST, str]] = []
    for node in nodes_of(ctx, view, _BARRIER_NODES):
        if isinstance(node, ast.Call):
            name = dotted(node.func) or ""
            leafname = name.rsplit(".", 1)[-1]
            if leafname == "requires_grad_" and node.args and isinstance(node.args[0], ast.Constant) and node.args[0].value is False or leafname == "requires_grad_" and not node.args and any(
                    isinstance(k.value, ast.Constant) and k.value.value is False for k in node.keywords):
                if _mentions(node.func, key):
                    out.append((node, "requires_grad_(False)"))
            elif leafname in ("stop_gradient",) and any(_mentions(a, key) for a in node.args):
                out.append((node, "stop_gradient"))
            elif leafname == "detach" and _mentions(node.func, key):
                out.append((node, "detach()"))
            elif leafname == "get_peft_model" and node.args and _mentions(node.args[0], key):
                out.append((node, "PEFT freezes the base model"))
            elif "freeze" in tokens(leafname) and any(_mentions(a, key) for a in list(node.args) + [node.func]):
                out.append((node, f"`{name}(...)`"))
            elif leafname == "register_buffer" and node.args and isinstance(node.args[0], ast.Constant) and \
                    isinstance(node.args[0].value, str) and _same(node.args[0].value, key):
                out.append((node, "a registered buffer (no gradient)"))
        elif isinstance(node, ast.Assign):
            if isinstance(node.value, ast.Call) and (dotted(node.value.func) or "").rsplit(".", 1)[-1] == "Parameter" and any(
                    k.arg == "requires_grad" and isinstance(k.value, ast.Constant) and k.value.value is False
                    for k in node.value.keywords) and any(_mentions(t, key) for t in node.targets):
                out.append((node, "nn.Parameter(..., requires_grad=False)"))
            for target in node.targets:
                if isinstance(target, ast.Attribute) and target.attr == "requires_grad" and \
                        isinstance(node.value, ast.Constant) and node.value.value is False:
                    if _mentions(target.value, key):
                        out.append((node, "requires_grad = False"))
        elif isinstance(node, (ast.For, ast.AsyncFor)) and not _mentions(node.iter, key) and _name_filtered_freeze(node, key):
            out.append((node, "requires_grad = False on the parameters whose names it selects"))
        elif isinstance(node, (ast.For, ast.AsyncFor)) and _mentions(node.iter, key):
            for sub in node.body:
                for n in ast.walk(sub):
                    if isinstance(n, ast.Assign) and any(isinstance(t, ast.Attribute) and t.attr == "requires_grad" for t in n.targets) \
                            and isinstance(n.value, ast.Constant) and n.value.value is False:
                        out.append((node, "requires_grad = False over its parameters"))
                    elif isinstance(n, ast.Call) and (dotted(n.func) or "").endswith("requires_grad_") and n.args and \
                            isinstance(n.args[0], ast.Constant) and n.args[0].value is False:
                        out.append((node, "requires_grad_(False) over its parameters"))
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            if any((dotted(i.context_expr.func if isinstance(i.context_expr, ast.Call) else i.context_expr) or "")
                   .rsplit(".", 1)[-1] in ("no_grad", "inference_mode") for i in node.items):
                for sub in node.body:
                    for n in ast.walk(sub):
                        if isinstance(n, ast.Call) and _mentions(n.func, key):
                            out.append((node, "its forward runs under no_grad"))
                            break
    return out


_BARRIER_NODES = (ast.Call, ast.Assign, ast.For, ast.AsyncFor, ast.With, ast.AsyncWith)  # what a barrier is made of


def _name_filtered_freeze(loop: ast.For | ast.AsyncFor, key: str) -> bool:
    """``for n, p in model.named_parameters(): if not n.startswith("head"): p.requires_grad = False``: the
    parameters a name test selects are frozen; does that selection take in ``key``?"""
    call = loop.iter
    if not (isinstance(call, ast.Call) and (dotted(call.func) or "").endswith("named_parameters")):
        return False
    if not (isinstance(loop.target, ast.Tuple) and loop.target.elts and isinstance(loop.target.elts[0], ast.Name)):
        return False
    var = loop.target.elts[0].id

    def selects(test: ast.AST) -> bool | None:
        """Whether the test holds for a parameter of ``key`` (None: not a test on the name we can read)."""
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            inner = selects(test.operand)
            return None if inner is None else not inner
        if isinstance(test, ast.BoolOp):
            parts = [selects(v) for v in test.values]
            if any(x is None for x in parts):
                return None
            return all(parts) if isinstance(test.op, ast.And) else any(parts)
        words, negate = _name_test(test, var)
        if words is None:
            return None
        hit = any(_part_of(w, key) for w in words)
        return not hit if negate else hit

    def freezes(body: list[ast.stmt], holds: bool) -> bool:
        for stmt in body:
            if isinstance(stmt, ast.If):
                verdict = selects(stmt.test)
                if verdict is None:
                    continue
                if freezes(stmt.body, holds and verdict) or freezes(stmt.orelse, holds and not verdict):
                    return True
            elif holds and _sets_no_grad(stmt):
                return True
        return False

    return any(isinstance(stmt, ast.If) for stmt in loop.body) and freezes(loop.body, True)


def _name_test(test: ast.AST, var: str, constants: dict[str, list[str]] | None = None) -> tuple[list[str] | None, bool]:
    """The strings a test on the parameter name ``var`` looks for (``"head" in n``, ``n.startswith(("a", "b"))``)
    and whether it is negated (``not in``); (None, False) when it is no such test or they are not literals."""
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.comparators[0], ast.Name) \
            and test.comparators[0].id == var and isinstance(test.ops[0], (ast.In, ast.NotIn)):
        return _strings(test.left), isinstance(test.ops[0], ast.NotIn)
    if isinstance(test, ast.Call) and isinstance(test.func, ast.Attribute) and isinstance(test.func.value, ast.Name) \
            and test.func.value.id == var and test.func.attr in ("startswith", "endswith") and test.args:
        return _strings(test.args[0]), False
    if (words := any_of_words(test, var, constants)) is not None:
        return words
    return None, False


def any_of_words(test: ast.AST, var: str | None, constants: dict[str, list[str]] | None = None
                 ) -> tuple[list[str] | None, bool] | None:
    """``any(k in n for k in ("bias", "norm"))`` -> (["bias", "norm"], False); ``all(k not in n for k in ...)`` ->
    (the words, True); None for another test. ``var`` None: a test on any name. The words may be a module-level
    tuple of strings (``TUNED = ("bias", "norm")``) when ``constants`` holds the module's."""
    if not (isinstance(test, ast.Call) and isinstance(test.func, ast.Name) and test.func.id in ("any", "all")
            and len(test.args) == 1 and isinstance(test.args[0], ast.GeneratorExp)):
        return None
    gen = test.args[0]
    if len(gen.generators) != 1 or not isinstance(gen.generators[0].target, ast.Name) or gen.generators[0].ifs:
        return None
    item, elt = gen.generators[0].target.id, gen.elt
    source = gen.generators[0].iter
    words = _strings(source)
    if words is None and isinstance(source, ast.Name) and constants:
        words = constants.get(source.id)
    if isinstance(elt, ast.Compare) and len(elt.ops) == 1 and isinstance(elt.left, ast.Name) and elt.left.id == item \
            and isinstance(elt.comparators[0], ast.Name) and (var is None or elt.comparators[0].id == var):
        negated = isinstance(elt.ops[0], ast.NotIn)
        if isinstance(elt.ops[0], ast.In) and test.func.id == "any" or negated and test.func.id == "all":
            return words, negated
    if isinstance(elt, ast.Call) and isinstance(elt.func, ast.Attribute) and elt.func.attr in ("startswith", "endswith") \
            and isinstance(elt.func.value, ast.Name) and (var is None or elt.func.value.id == var) and elt.args \
            and isinstance(elt.args[0], ast.Name) and elt.args[0].id == item and test.func.id == "any":
        return words, False
    return None


def string_constants(tree: ast.Module) -> dict[str, list[str]]:
    """Module-level names bound once to a string or a tuple/list of strings (``TUNED = ("bias", "norm")``)."""
    bound: dict[str, list[list[str] | None]] = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign):
            for target in stmt.targets:
                if isinstance(target, ast.Name):
                    bound.setdefault(target.id, []).append(_strings(stmt.value))
        elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value is not None:
            bound.setdefault(stmt.target.id, []).append(_strings(stmt.value))
    return {name: values[0] for name, values in bound.items() if len(values) == 1 and values[0] is not None}


def _strings(node: ast.AST) -> list[str] | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, (ast.Tuple, ast.List)) and all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts):
        return [e.value for e in node.elts]
    return None


def _part_of(word: str, key: str) -> bool:
    """A parameter-name filter ("backbone.", "blocks.0") selects ``key`` when they name the same part."""
    w = norm(word)
    return bool(w) and (w == key or (len(w) > 3 and (w in key or key in w)))


def _sets_no_grad(stmt: ast.stmt) -> bool:
    if isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Attribute) and t.attr == "requires_grad" for t in stmt.targets):
        return isinstance(stmt.value, ast.Constant) and stmt.value.value is False
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        call = stmt.value
        return (dotted(call.func) or "").endswith("requires_grad_") and bool(call.args) and \
            isinstance(call.args[0], ast.Constant) and call.args[0].value is False
    return False


def _optimizers(view: FileView) -> list[ast.Call]:
    out = []
    for call in view.calls:
        if call.leaf in OPTIMIZERS and (call.qual.startswith(("torch.optim", "optax", "bitsandbytes", "transformers"))
                                        or call.name.startswith(("optim.", "torch.optim.", "optax."))):
            out.append(call.node)
    return out


def evaluate(params: dict, ctx, scope: str | None, rule: dict) -> CheckResult:
    """The name as written; when nothing is called so, the spec's aliases of it, then (for a paper symbol such
    as ``B``) the code names ending in it (``lora_B``): pass if one of them is frozen."""
    raw = str(params["name"])
    alternates = other_spellings(ctx, raw, scope)
    if raw == BASE_WEIGHTS and not alternates:
        return _evaluate_base_weights(ctx, scope)
    if not (_SYMBOL.fullmatch(raw) and alternates):
        # a one-letter symbol is a code name's word piece (lora_B) before it is a variable (B, T, C = x.shape)
        result = _evaluate(raw, ctx, scope, symbol=bool(_SYMBOL.fullmatch(raw)) and raw[0].isupper() and not alternates)
        if result.status is not Status.missing or not alternates:
            return result
    tried = [(alt, _evaluate(alt, ctx, scope)) for alt in alternates]
    found = [t for t in tried if t[1].status is not Status.missing]
    if not found:
        return _evaluate(raw, ctx, scope, symbol=bool(_SYMBOL.fullmatch(raw)) and raw[0].isupper())
    alt, best = next((t for t in found if t[1].status is Status.pass_), found[0])
    return dataclasses.replace(best, message=f"`{raw}` is `{alt}` in the code: {best.message}")


_SYMBOL = re.compile(r"[A-Za-z][0-9]?")


def other_spellings(ctx, raw: str, scope: str | None) -> list[str]:
    """The spec's aliases of ``raw``, then for a one-letter paper symbol the identifiers that end in it as a
    word piece, case kept (``lora_B``, ``W_B`` for ``B``; not ``bias``)."""
    try:
        aliases = dict(ctx.aliases)
    except AttributeError:  # a bare index context (rule examples) has no spec
        aliases = {}
    out = list(aliases.get(raw, []))
    out += [k for k, spellings in aliases.items() if raw in spellings and k != raw]
    out += [s for k, spellings in aliases.items() if raw in spellings for s in spellings if s != raw]
    if _SYMBOL.fullmatch(raw):
        ending = re.compile(rf"^[A-Za-z][A-Za-z0-9]*_{re.escape(raw)}$")
        for view in views_mentioning(ctx, [f"_{raw}"], scope):
            for node in nodes_of(ctx, view, (ast.Name, ast.Attribute)):
                name = node.id if isinstance(node, ast.Name) else node.attr
                if name and ending.match(name):
                    out.append(name)
    return list(dict.fromkeys(n for n in out if n != raw))  # first spelling first


def _evaluate(raw: str, ctx, scope: str | None, symbol: bool = False) -> CheckResult:
    """``symbol``: ``raw`` is a paper symbol no code name ends in; a bare ``B`` in the code may be anything
    (a batch size), so only a barrier or an optimizer over it decides, else it stays unverified."""
    key = norm(raw.rsplit(".", 1)[-1])
    variants = sorted({raw, raw.rsplit(".", 1)[-1], raw.replace("_", ""), raw.rstrip("s")})
    views = views_mentioning(ctx, variants, scope)
    barriers, trained, seen = [], [], []
    for view in views:
        found_name = False
        for node in nodes_of(ctx, view, (ast.Name, ast.Attribute)):
            if _same(node.id if isinstance(node, ast.Name) else node.attr, key):
                found_name = True
                seen.append((view, node))
                break
        if not found_name:
            continue
        barriers += [(view, n, why) for n, why in _barriers(ctx, view, key)]
        for opt in _optimizers(view):
            params_arg = opt.args[0] if opt.args else next((k.value for k in opt.keywords if k.arg in ("params", "parameters")), None)
            if params_arg is not None and _mentions(params_arg, key) and "requires_grad" not in ast.unparse(params_arg):
                trained.append((view, opt))
    barriers = [b for b in barriers if node_in_scope(scope, b[0], b[1])]
    if barriers:
        ev = [evidence(ctx, v.path, n, "rule", note=why) for v, n, why in barriers[:4]]
        return CheckResult.passed(KIND, f"`{raw}` is frozen: {barriers[0][2]} ({barriers[0][0].path}:{barriers[0][1].lineno})",
                                  sorted_evidence(ev))
    if trained:
        v, opt = trained[0]
        return CheckResult.failed(KIND, Status.mismatch, f"the optimizer at {v.path}:{opt.lineno} updates `{raw}`",
                                  [evidence(ctx, v.path, opt, "rule")])
    if symbol:
        return CheckResult.unverified(KIND, f"the paper symbol `{raw}` names no code object (no identifier ends in _{raw}); "
                                            "an alias in the spec says which it is")
    if seen:
        v, node = seen[0]
        return CheckResult.failed(KIND, Status.mismatch, f"`{raw}` is used but nothing stops gradients reaching it",
                                  [evidence(ctx, v.path, node.lineno, "missing-near")])
    return CheckResult.failed(KIND, Status.missing, f"`{raw}` not found in the code", [])


# ----- base_weights: the pretrained model an adaptation method leaves untouched --------------------------------
BASE_WEIGHTS = "base_weights"
# Words of the parameter names an adaptation method adds or trains on top of a frozen base ("lora_A", "adapter",
# "prompt", a classification "head", BitFit's "bias"); a name filter on other words selects base parameters.
ADAPTER_WORDS = frozenset({"lora", "adapter", "adapters", "prompt", "prompts", "prefix", "head", "heads", "classifier",
                           "bias", "biases", "ia3", "ssf", "score", "cls", "vpt"})
# PEFT, loralib: every parameter but the adapter's off (prepare_model_for_kbit_training: every parameter off)
_PEFT_WRAPS = {"get_peft_model", "mark_only_lora_as_trainable", "prepare_model_for_kbit_training"}
_PEFT_TRAINERS = {"SFTTrainer", "DPOTrainer", "ORPOTrainer", "KTOTrainer", "RewardTrainer"}
_HF_TRAINERS = {"Trainer", "Seq2SeqTrainer", *_PEFT_TRAINERS}
_HEAD_MODULES = {"fc", "last_linear"}  # torchvision's and pretrainedmodels' classifier attribute (not fc1 of an MLP)
_CHAIN_METHODS = {"to", "cuda", "cpu", "eval", "train", "half", "float", "bfloat16", "requires_grad_"}


def _adapter_word(word: str) -> bool:
    return bool(ADAPTER_WORDS.intersection(tokens(word)))


def _plain(chain: str) -> str:
    return chain.removeprefix("self.")


def _related(owner: str, other: str) -> bool:
    """The same object or one inside the other (``model`` and ``model.backbone``; ``self.vit`` and ``vit``)."""
    a, b = _plain(owner), _plain(other)
    return bool(a) and bool(b) and (a == b or a.startswith(b + ".") or b.startswith(a + "."))


def _innermost(call: ast.AST) -> ast.AST:
    """``AutoModel.from_pretrained(...).to(device)`` -> the ``from_pretrained`` call."""
    while isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr in _CHAIN_METHODS \
            and isinstance(call.func.value, ast.Call):
        call = call.func.value
    return call


def _kw_true(call: ast.Call, name: str) -> bool:
    value = next((k.value for k in call.keywords if k.arg == name), None)
    return value is not None and not (isinstance(value, ast.Constant) and value.value in (False, None))


def _pretrained_load(value: ast.AST, view: FileView) -> bool:
    """A call that returns a model with pretrained weights: HF/PEFT ``from_pretrained``, timm ``create_model(...,
    pretrained=True)``, torchvision ``resnet50(weights=...)`` / ``pretrained=True``, ``torch.hub.load``, ``clip.load``."""
    call = _innermost(value)
    if not isinstance(call, ast.Call):
        return False
    name = dotted(call.func) or ""
    leaf = name.rsplit(".", 1)[-1]
    qual = view.imports.get(name.split(".", 1)[0], name.split(".", 1)[0]) + ("." + name.split(".", 1)[1] if "." in name else "")
    if leaf == "from_pretrained":
        return True
    if qual.startswith(("torch.hub.load", "clip.load", "open_clip.create_model")):
        return True
    if leaf in ("create_model", "create_model_and_transforms") and qual.startswith(("timm", "open_clip")):
        return _kw_true(call, "pretrained") or qual.startswith("open_clip")
    if qual.startswith("torchvision.models") or name.startswith("models."):
        return _kw_true(call, "weights") or _kw_true(call, "pretrained")
    return False


_CHECKPOINT_LOADS = {"load", "load_file", "load_state_dict_from_url", "load_checkpoint"}


def _pretrained_owners(ctx, view: FileView, optimizer_lines: dict[str, list[int]]) -> dict[str, ast.AST]:
    """Variables and attributes bound to a pretrained model in this file: a pretrained load (also as the argument
    of a wrapper, ``bias_only(AutoModel.from_pretrained(...))``), or a checkpoint file's ``load_state_dict`` before
    an optimizer of the same function (not a best checkpoint restored after training)."""
    out: dict[str, ast.AST] = {}
    for node in nodes_of(ctx, view, (ast.Assign, ast.Call)):
        if isinstance(node, ast.Assign) and _loads_pretrained(node.value, view):
            for target in node.targets:
                for t in (target.elts if isinstance(target, ast.Tuple) else [target]):
                    if (chain := dotted(t)) and "(" not in chain:
                        out.setdefault(chain, node)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "load_state_dict" \
                and node.args and isinstance(node.args[0], ast.Call) \
                and (dotted(node.args[0].func) or "").rsplit(".", 1)[-1] in _CHECKPOINT_LOADS \
                and any(line > node.lineno for line in optimizer_lines.get(innermost_scope(view, node), [])):
            chain = dotted(node.func.value)
            if chain and "(" not in chain:
                out.setdefault(chain, node)
    return out


def _loads_pretrained(value: ast.AST, view: FileView) -> bool:
    if _pretrained_load(value, view):
        return True
    call = _innermost(value)
    return isinstance(call, ast.Call) and any(_pretrained_load(a, view) for a in call.args)


def _derived(ctx, names: set[str], view: FileView) -> set[str]:
    """``model = inject_lora(base_model, r)``: what is built from a named model is that model too."""
    out = set(names)
    assigns = [n for n in nodes_of(ctx, view, (ast.Assign,)) if isinstance(_innermost(n.value), ast.Call)]
    for _ in range(3):
        before = len(out)
        for node in assigns:
            call = _innermost(node.value)
            args = [a for a in [*call.args, *(k.value for k in call.keywords)] if (c := dotted(a)) and "(" not in c]
            if isinstance(call.func, ast.Attribute) and (recv := dotted(call.func.value)) and "(" not in recv:
                args.append(call.func.value)  # model.to(device), base.merge_and_unload() keep the model
            if any(any(_related(dotted(a) or "", n) for n in out) for a in args):
                out.update(c for t in node.targets if (c := dotted(t)) and "(" not in c)
        if len(out) == before:
            break
    return out


def _freezing_helpers(ctx, views: list[FileView]) -> dict[str, tuple[int, str, FileView, ast.AST]]:
    """Repo functions that freeze every base parameter of one of their arguments (``def add_lora(vit): for p in
    vit.parameters(): p.requires_grad = False``): name -> (argument position, parameter, file, freeze)."""
    out: dict[str, tuple[int, str, FileView, ast.AST]] = {}
    for view in views:
        switches = [sw for sw in _grad_switches(ctx, view) if sw.on is False]
        for fn in view.functions.values():
            params = [a.arg for a in fn.node.args.args]
            start, end = fn.node.lineno, fn.node.end_lineno or fn.node.lineno
            for sw in switches:
                root = sw.owner.split(".", 1)[0]
                if sw.owner == root and root in params and start <= sw.node.lineno <= end:
                    out.setdefault(fn.name, (params.index(root) - (1 if params and params[0] == "self" else 0), root, view, sw.node))
    return out


def _base_holds(test: ast.AST, var: str) -> bool | None:
    """Whether a name test holds for a base parameter (a name with no adapter word); None when it may or may not."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = _base_holds(test.operand, var)
        return None if inner is None else not inner
    if isinstance(test, ast.BoolOp):
        parts = [_base_holds(v, var) for v in test.values]
        if isinstance(test.op, ast.And):
            return False if False in parts else None if None in parts else True
        return True if True in parts else None if None in parts else False
    if isinstance(test, ast.Constant) and isinstance(test.value, bool):
        return test.value
    words, negate = _name_test(test, var)
    if not words or not all(_adapter_word(w) for w in words):
        return None
    return negate  # "lora" in n: false for a base parameter


def _base_flags(loop: ast.For | ast.AsyncFor) -> list[tuple[ast.AST, bool | None]]:
    """The requires_grad values a loop over a model's parameters gives its base parameters, in order."""
    var = None
    if isinstance(loop.target, ast.Tuple) and loop.target.elts and isinstance(loop.target.elts[0], ast.Name):
        var = loop.target.elts[0].id
    out: list[tuple[ast.AST, bool | None]] = []

    def value_for_base(node: ast.AST) -> bool | None:
        if isinstance(node, ast.Constant) and isinstance(node.value, bool):
            return node.value
        return _base_holds(node, var) if var else None

    def walk(body: list[ast.stmt], holds: bool | None) -> None:
        for stmt in body:
            if isinstance(stmt, ast.If):
                verdict = _base_holds(stmt.test, var) if var else None
                if verdict is None:
                    walk(stmt.body, None if holds is not False else False)
                    walk(stmt.orelse, None if holds is not False else False)
                else:
                    walk(stmt.body, holds if verdict else False)
                    walk(stmt.orelse, False if verdict else holds)
                continue
            value: ast.AST | None = None
            if isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Attribute) and t.attr == "requires_grad" for t in stmt.targets):
                value = stmt.value
            elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and (dotted(stmt.value.func) or "").endswith("requires_grad_"):
                args = stmt.value.args or [k.value for k in stmt.value.keywords]
                value = args[0] if args else ast.Constant(True)
            if value is None or holds is False:
                continue
            flag = value_for_base(value)
            out.append((stmt, None if holds is None else flag))

    walk(loop.body, True)
    return out


def _parameter_loops(ctx, view: FileView) -> list[tuple[ast.AST, str]]:
    out = []
    for node in nodes_of(ctx, view, (ast.For, ast.AsyncFor)):
        if isinstance(node.iter, ast.Call) and \
                isinstance(node.iter.func, ast.Attribute) and node.iter.func.attr in ("parameters", "named_parameters"):
            owner = dotted(node.iter.func.value)
            if owner and "(" not in owner:
                out.append((node, owner))
    return out


@dataclasses.dataclass(frozen=True)
class _Grad:
    """A requires_grad switch over a whole model (``owner``): ``False`` freezes its base, ``True`` re-enables all of
    it, ``None`` re-enables a part of it that is not an adapter."""

    view: FileView
    node: ast.AST
    owner: str
    on: bool | None
    why: str


def _grad_switches(ctx, view: FileView) -> list[_Grad]:
    out: list[_Grad] = []
    for node in nodes_of(ctx, view, (ast.Call,)):
        if isinstance(node.func, ast.Attribute) and node.func.attr == "requires_grad_":
            owner = dotted(node.func.value)
            args = node.args or [k.value for k in node.keywords]
            value = args[0] if args else ast.Constant(True)
            if not owner or "(" in owner or not (isinstance(value, ast.Constant) and isinstance(value.value, bool)):
                continue
            if value.value is False:
                out.append(_Grad(view, node, owner, False, "requires_grad_(False) over the model"))
            elif not _adapter_word(owner.rsplit(".", 1)[-1]) and owner.rsplit(".", 1)[-1] not in _HEAD_MODULES:
                out.append(_Grad(view, node, owner, True, f"`{owner}.requires_grad_(True)`"))
    for loop, owner in _parameter_loops(ctx, view):
        flags = [f for _, f in _base_flags(loop)]
        if not flags or (True in flags and "." in owner and (_adapter_word(owner.rsplit(".", 1)[-1])
                                                             or owner.rsplit(".", 1)[-1] in _HEAD_MODULES)):
            continue
        if True in flags:
            out.append(_Grad(view, loop, owner, True, f"requires_grad on for every parameter of `{owner}`"))
        elif None in flags:
            out.append(_Grad(view, loop, owner, None, f"requires_grad on for parameters of `{owner}` no adapter word names"))
        else:
            out.append(_Grad(view, loop, owner, False, f"requires_grad off over the parameters of `{owner}`"))
    return out


def _peft_wraps(ctx, view: FileView) -> list[tuple[ast.AST, list[str]]]:
    """PEFT wrapping calls (they freeze every base parameter) and the names of the wrapped and wrapping model."""
    out = []
    for cv in view.calls:
        wrapped = None
        if cv.leaf in _PEFT_WRAPS and cv.node.args:
            wrapped = cv.node.args[0]
        elif cv.leaf == "from_pretrained" and cv.name.rsplit(".", 1)[0].endswith(("PeftModel", "PeftModelForCausalLM")) and cv.node.args:
            wrapped = cv.node.args[0]
        elif cv.leaf in _PEFT_TRAINERS and cv.kwarg("peft_config") is not None:
            wrapped = cv.kwarg("model") or (cv.node.args[0] if cv.node.args else None)
        elif cv.leaf == "train_adapter" and isinstance(cv.node.func, ast.Attribute):
            wrapped = cv.node.func.value  # adapter-transformers / adapters: freezes the base model
        if wrapped is None:
            continue
        names = [dotted(wrapped) or ""]
        parents = parents_of(ctx, view)
        parent = parents.get(id(_outermost(cv.node, parents)))
        if isinstance(parent, ast.Assign):
            names += [dotted(t) or "" for t in parent.targets]
        out.append((cv.node, [n for n in names if n and "(" not in n]))
    return out


def _outermost(node: ast.AST, parents: dict) -> ast.AST:
    """``get_peft_model(m, c).to(device)``: the whole chained expression."""
    while True:
        parent = parents.get(id(node))
        if isinstance(parent, ast.Attribute) and isinstance(parents.get(id(parent)), ast.Call):
            node = parents[id(parent)]
        else:
            return node


def _sources(node: ast.AST, view: FileView, at: ast.AST, depth: int = 0) -> list[tuple[str, str, ast.AST]]:
    """Where an optimizer's parameters come from: ("adapter", "", node) for adapter parameters alone, ("filtered",
    owner, node) for a model's parameters that still require grad, ("whole", owner, node), ("unknown", "", node)."""
    from verifier.analysis.protocol import trainable  # imports this module

    if depth > 4:
        return [("unknown", "", node)]
    if isinstance(node, ast.Call):
        func = node.func
        leaf = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        if leaf in ("parameters", "named_parameters") and isinstance(func, ast.Attribute):
            owner = dotted(func.value) or ""
            if not owner or "(" in owner:
                return [("unknown", "", node)]
            return [("adapter", "", node)] if _adapter_word(owner.rsplit(".", 1)[-1]) else [("whole", owner, node)]
        if leaf == "filter" and len(node.args) == 2:
            inner = _sources(node.args[1], view, at, depth + 1)
            if "requires_grad" in ast.unparse(node.args[0]):
                return [("filtered", o, n) if k == "whole" else (k, o, n) for k, o, n in inner]
            return [("unknown", "", node)]
        if leaf in ("list", "tuple", "chain", "itertools.chain") and node.args:
            return [s for a in node.args for s in _sources(a, view, at, depth + 1)]
        return [("unknown", "", node)]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _sources(node.left, view, at, depth + 1) + _sources(node.right, view, at, depth + 1)
    if isinstance(node, (ast.List, ast.Tuple)):
        return [s for e in node.elts for s in _sources(e.value if isinstance(e, ast.Starred) else e, view, at, depth + 1)]
    if isinstance(node, ast.Dict):
        found = [s for k, v in zip(node.keys, node.values) if isinstance(k, ast.Constant) and k.value == "params"
                 for s in _sources(v, view, at, depth + 1)]
        return found or [("unknown", "", node)]
    if isinstance(node, (ast.ListComp, ast.GeneratorExp)) and len(node.generators) == 1:
        gen = node.generators[0]
        inner = _sources(gen.iter, view, at, depth + 1)
        if not gen.ifs:
            return inner
        if any("requires_grad" in ast.unparse(t) for t in gen.ifs):
            return [("filtered", o, n) if k == "whole" else (k, o, n) for k, o, n in inner]
        var = gen.target.elts[0].id if isinstance(gen.target, ast.Tuple) and gen.target.elts and isinstance(gen.target.elts[0], ast.Name) else None
        test = gen.ifs[0] if len(gen.ifs) == 1 else ast.BoolOp(op=ast.And(), values=list(gen.ifs))
        if var and _base_holds(test, var) is False:
            return [("adapter", "", node)]
        return [("unknown", "", node)]
    if isinstance(node, ast.Name):
        bound = trainable._assigned(node.id, view, at)
        return _sources(bound.value, view, bound, depth + 1) if bound is not None else [("unknown", "", node)]
    return [("unknown", "", node)]


_KNOWN_LIBRARIES = ("torch", "transformers", "timm", "torchvision", "accelerate", "datasets", "copy", "numpy", "math",
                     "os", "logging", "wandb", "tqdm", "deepspeed", "lightning", "pytorch_lightning", "diffusers", "open_clip")


def _opaque_call(view: FileView, owner: str, optimizer: ast.AST, repo_functions: set[str]) -> bool:
    """Before the optimizer, the model goes through a function of a package we neither read nor know (which may
    freeze it): no mismatch can be claimed then."""
    scope = innermost_scope(view, optimizer)
    for cv in view.calls:
        if cv.scope != scope or cv.line >= optimizer.lineno or cv.leaf in repo_functions:
            continue
        if not any(_related(owner, c) for a in cv.node.args if (c := dotted(a)) and "(" not in c):
            continue
        root = cv.name.split(".", 1)[0]
        if root in view.imports and not view.imports[root].split(".", 1)[0] in _KNOWN_LIBRARIES:
            return True
    return False


def _evaluate_base_weights(ctx, scope: str | None) -> CheckResult:
    """Frozen base weights: a PEFT wrap, or a freeze of the pretrained model with only adapter or head parameters
    re-enabled; counter-evidence: everything re-enabled, or an optimizer over a pretrained model nothing froze.
    Models are related by name within one file (``model = inject_lora(base_model)`` is base_model)."""
    views = views_mentioning(ctx, [], scope, ml_only=True)
    admits = lambda view, node: node_in_scope(scope, view, node)  # noqa: E731
    optimizers = []
    for view in views:
        for call in _optimizers(view):
            arg = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg in ("params", "parameters")), None)
            if arg is not None and admits(view, call):
                optimizers.append((view, call, _sources(arg, view, call)))
        for cv in view.calls:
            if cv.leaf in _HF_TRAINERS and cv.kwarg("optimizers") is None and admits(view, cv.node):
                model = cv.kwarg("model") or (cv.node.args[0] if cv.node.args else None)
                chain = dotted(model) if model is not None else None
                # an HF Trainer builds its optimizer over the parameters that require grad
                optimizers.append((view, cv.node, [("filtered", chain, cv.node) if chain and "(" not in chain else ("unknown", "", cv.node)]))
    pretrained: dict[str, dict[str, ast.AST]] = {}
    for view in views:
        lines: dict[str, list[int]] = {}
        for v, call, _ in optimizers:
            if v is view:
                lines.setdefault(innermost_scope(view, call), []).append(call.lineno)
        found = _pretrained_owners(ctx, view, lines)
        pretrained[view.path] = {**{n: found[next(iter(found))] for n in _derived(ctx, set(found), view) if found}, **found}

    def is_pretrained(view: FileView, owner: str) -> ast.AST | None:
        return next((node for chain, node in pretrained[view.path].items() if _related(owner, chain)), None)

    barriers: list[tuple[FileView, ast.AST, set[str], str]] = []
    for view in views:
        for node, names in _peft_wraps(ctx, view):
            if admits(view, node):
                barriers.append((view, node, set(names), "PEFT freezes the base model"))
    switches = [s for view in views for s in _grad_switches(ctx, view) if admits(view, s.node)]
    for sw in switches:
        if sw.on is False and is_pretrained(sw.view, sw.owner) is not None:
            barriers.append((sw.view, sw.node, {sw.owner}, sw.why))
    helpers = _freezing_helpers(ctx, views_mentioning(ctx, ["requires_grad"], scope))  # helper modules need not import torch
    for view in views:
        for cv in view.calls:
            helper = helpers.get(cv.leaf)
            if helper is None and "freeze" in tokens(cv.leaf) and cv.node.args:
                helper = (0, "", view, cv.node)  # freeze_backbone(model): a freeze by its name, as for any part
            if helper is None or not admits(view, cv.node):
                continue
            position, param, hv, hnode = helper
            arg = cv.node.args[position] if 0 <= position < len(cv.node.args) else cv.kwarg(param) if param else None
            if arg is None:
                continue
            chain = dotted(arg) or ""
            if not (_pretrained_load(arg, view) or ("(" not in chain and is_pretrained(view, chain) is not None)):
                continue
            names = {chain} if chain and "(" not in chain else set()
            parents = parents_of(ctx, view)
            parent = parents.get(id(_outermost(cv.node, parents)))
            if isinstance(parent, ast.Assign):
                names |= {c for t in parent.targets if (c := dotted(t)) and "(" not in c}
            where = f" ({hv.path}:{hnode.lineno})" if hnode is not cv.node else ""
            barriers.append((view, cv.node, names, f"`{cv.leaf}(...)` freezes its parameters{where}"))
    barriers = [(v, n, _derived(ctx, names, v), why) for v, n, names, why in barriers]

    def covered(view: FileView, owner: str) -> bool:
        return any(bv is view and any(_related(owner, x) for x in names) for bv, _, names, _ in barriers)

    def own_barriers(s: _Grad) -> list[tuple[FileView, ast.AST, set[str], str]]:
        return [b for b in barriers if b[0] is s.view and any(_related(s.owner, x) for x in b[2])]

    def after_barrier(s: _Grad) -> bool:
        """A re-enable counts unless it precedes, in the same function, every freeze of that model."""
        own = own_barriers(s)
        return bool(own) and not all(innermost_scope(v, n) == innermost_scope(v, s.node) and s.node.lineno < n.lineno for v, n, _, _ in own)

    def whole(s: _Grad) -> bool:
        """The re-enable covers a frozen model, not one part inside it (``model.encoder.requires_grad_(True)``)."""
        return any(_plain(x) == _plain(s.owner) or _plain(x).startswith(_plain(s.owner) + ".") for _, _, names, _ in own_barriers(s) for x in names)

    switches = [dataclasses.replace(s, on=None, why=f"requires_grad on for `{s.owner}`, a part of the frozen model")
                if s.on is True and after_barrier(s) and not whole(s) else s for s in switches]
    reenabled = [s for s in switches if s.on is True and after_barrier(s)]
    if reenabled:
        s = reenabled[0]
        bv, bn, _, bwhy = own_barriers(s)[0]
        return CheckResult.failed(KIND, Status.mismatch, f"the base weights are frozen ({bv.path}:{bn.lineno}) and then "
                                  f"re-enabled: {s.why} ({s.view.path}:{s.node.lineno})",
                                  sorted_evidence([evidence(ctx, s.view.path, s.node, "rule", note=s.why),
                                                   evidence(ctx, bv.path, bn, "rule", note=bwhy)]))
    repo_functions = {fn.name for view in views_mentioning(ctx, [], scope) for fn in view.functions.values()}
    trained = [(v, c, o, p) for v, c, srcs in optimizers for k, o, _ in srcs
               if k in ("whole", "filtered") and not covered(v, o) and (p := is_pretrained(v, o)) is not None
               and not _opaque_call(v, o, c, repo_functions)]
    if trained:
        v, call, owner, pn = trained[0]
        return CheckResult.failed(KIND, Status.mismatch, f"the optimizer at {v.path}:{call.lineno} updates every parameter "
                                  f"of the pretrained `{owner}` ({v.path}:{pn.lineno}), which nothing freezes",
                                  sorted_evidence([evidence(ctx, v.path, call, "rule", note="the optimizer over the base"),
                                                   evidence(ctx, v.path, pn, "rule", note="the pretrained model")]))
    partial = [s for s in switches if s.on is None and after_barrier(s)]
    if partial:
        s = partial[0]
        return CheckResult.unverified(KIND, f"{s.why} ({s.view.path}:{s.node.lineno}): whether they are base weights "
                                            "the code does not say")
    opt_ev = [evidence(ctx, v.path, c, "rule", note="the optimizer") for v, c, _ in optimizers[:1]]
    if barriers:
        v, n, _, why = barriers[0]
        ev = [evidence(ctx, v.path, n, "rule", note=why)] + opt_ev
        return CheckResult.passed(KIND, f"the base weights are frozen: {why} ({v.path}:{n.lineno})", sorted_evidence(ev))
    if optimizers and all(k == "adapter" for _, _, srcs in optimizers for k, _, _ in srcs):
        v, c, _ = optimizers[0]
        return CheckResult.passed(KIND, f"the optimizer at {v.path}:{c.lineno} takes only adapter parameters",
                                  sorted_evidence([evidence(ctx, v.path, c, "rule", note="optimizer over adapter parameters only")]))
    if not optimizers:
        return CheckResult.unverified(KIND, "no PEFT wrap, freeze of a pretrained model or optimizer was found")
    v, c, _ = optimizers[0]
    return CheckResult.unverified(KIND, f"the parameters of the optimizer at {v.path}:{c.lineno} cannot be told apart "
                                        "from the pretrained model's, and no freeze of a pretrained model was found")

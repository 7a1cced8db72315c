"""Rule ``trainable``: the named part receives gradients and reaches the optimizer (``only``: nothing else does).

The evidence is frozen's, inverted: frozen's gradient barriers on the part are counter-evidence unless the part is
re-enabled (``requires_grad_(True)``, ``requires_grad = True``, a ``named_parameters()`` filter that selects it,
PEFT ``modules_to_save``); the optimizer's parameters are resolved (``model.R.parameters()``, a filtered
``named_parameters()`` comprehension, param-group dicts, a variable assigned in the same function, an HF
``Trainer`` over the model). Forward-path ``no_grad``/``detach`` are not read: evaluation code has them too.
"""

from __future__ import annotations

import ast
import dataclasses
import re
from collections.abc import Iterator

from verifier.analysis.protocol import frozen
from verifier.analysis.protocol.common import (
    FileView,
    dotted,
    evidence,
    innermost_scope,
    nodes_of,
    norm,
    node_in_scope,
    sorted_evidence,
    views_mentioning,
)
from verifier.results import CheckResult, Status

KIND = "protocol"
_HARD = {"a registered buffer (no gradient)"}  # requires_grad can be switched back on; a buffer stays one
_FORWARD = {"its forward runs under no_grad", "detach()", "stop_gradient"}  # eval code has them too: not read
_TRAINERS = {"Trainer", "Seq2SeqTrainer", "SFTTrainer"}


@dataclasses.dataclass(frozen=True)
class Group:
    """One source of an optimizer's parameters: ``part`` (the named part; ``exclusive`` when nothing else can pass
    its filter), ``other`` (a different named part), ``all`` (every parameter of ``owner``), ``unknown``."""

    kind: str
    node: ast.AST
    owner: str = ""
    exclusive: bool = True
    holds: bool = False  # ``owner`` is built by a repo class that defines the part


def evaluate(params: dict, ctx, scope: str | None, rule: dict) -> CheckResult:
    """The name as written, else the spec's aliases and the code names ending in a paper symbol (``lora_R`` for
    ``R``), as frozen resolves them; a bare symbol no code name ends in stays unverified."""
    raw = str(params["name"])
    only = bool(params.get("only", False))
    alternates = frozen.other_spellings(ctx, raw, scope)
    symbol = bool(frozen._SYMBOL.fullmatch(raw))
    if symbol and not alternates:
        return CheckResult.unverified(KIND, f"the paper symbol `{raw}` names no code object (no identifier ends in "
                                            f"_{raw}); an alias in the spec says which it is")
    names = alternates if symbol else [raw, *alternates]
    besides = [_spelled(str(b), ctx, scope) for b in params.get("besides") or [] if norm(str(b))]
    if only and besides:  # the part trains, and nothing but it and the parts named beside it
        spelled, alone = _best(raw, names, ctx, scope, False)
        if alone.status is not Status.pass_:
            return alone
        union = _evaluate(spelled, ctx, scope, True, [norm(b) for b in besides])
        beside = ", ".join(f"`{b}`" for b in besides)
        return dataclasses.replace(union, message=f"{union.message} (besides {beside})") if union.status is Status.pass_ else union
    return _best(raw, names, ctx, scope, only)[1]


def _best(raw: str, names: list[str], ctx, scope: str | None, only: bool) -> tuple[str, CheckResult]:
    """(the spelling that decides, its result): the first that passes, else the first found."""
    tried = [(name, _evaluate(name, ctx, scope, only)) for name in names]
    found = [t for t in tried if t[1].status is not Status.missing]
    if not found:
        return raw, tried[0][1] if tried[0][0] == raw else CheckResult.failed(KIND, Status.missing, f"`{raw}` not found in the code", [])
    name, best = next((t for t in found if t[1].status is Status.pass_), found[0])
    if name == raw:
        return name, best
    return name, dataclasses.replace(best, message=f"`{raw}` is `{name}` in the code: {best.message}")


def _spelled(name: str, ctx, scope: str | None) -> str:
    """A part named beside the main one, as the code spells it: a paper symbol (``B``) is the code name ending in
    it (``lora_B``), else the name as written."""
    if frozen._SYMBOL.fullmatch(name):
        alternates = frozen.other_spellings(ctx, name, scope)
        name = alternates[0] if alternates else name
    return name.rsplit(".", 1)[-1]


def _evaluate(raw: str, ctx, scope: str | None, only: bool, besides: list[str] = ()) -> CheckResult:
    key = "|".join([norm(raw.rsplit(".", 1)[-1]), *besides])
    views = views_mentioning(ctx, [], scope, ml_only=True)
    if not any(_occurs(ctx, v, key) for v in views):
        added = _library_adapters(raw, key, ctx, scope, views, only)
        if added is not None:
            return added
        return CheckResult.failed(KIND, Status.missing, f"`{raw}` not found in the code", [])
    enables = [(v, n, why) for v in views for n, why in _enables(ctx, v, key)]
    enables = [e for e in enables if node_in_scope(scope, e[0], e[1])]
    barriers = [(v, n, why) for v in views for n, why in frozen._barriers(ctx, v, key)
                if why not in _FORWARD and node_in_scope(scope, v, n)]
    barriers += [(v, n, why) for v in views for n, why in _filtered_out(ctx, v, key) if node_in_scope(scope, v, n)]
    blocking = [b for b in barriers if b[2] in _HARD or not enables]
    if blocking:
        v, n, why = blocking[0]
        return CheckResult.failed(KIND, Status.mismatch, f"`{raw}` is frozen: {why} ({v.path}:{n.lineno})",
                                  [evidence(ctx, v.path, n, "rule", note=why)])
    freezes_all = [(v, n, owner) for v in views for n, owner in _global_freezes(ctx, v, key)
                   if node_in_scope(scope, v, n)]
    holders = _holder_classes(ctx, views, key)
    optimizers = [(v, call, groups) for v in views for call, groups in _optimizers(v, key, holders)
                  if node_in_scope(scope, v, call)]
    if not optimizers:
        return CheckResult.unverified(KIND, f"`{raw}` occurs but no optimizer (torch.optim, optax, HF Trainer) was found")
    owners = _chains(ctx, views, key)

    def reaches(g: Group) -> bool | None:
        if g.kind == "part":
            return True
        if g.kind == "all":
            if g.holds or _contains(g.owner, owners):
                return True
            parent = g.owner.rpartition(".")[0]  # model.encoder beside model.head: a sibling, not a holder
            return False if parent and _contains(parent, owners) and "[" not in g.owner else None
        return False if g.kind == "other" else None

    training = [(v, c, gs) for v, c, gs in optimizers if any(reaches(g) for g in gs)]
    if not training:
        v, call, groups = optimizers[0]
        if any(reaches(g) is None for _, _, gs in optimizers for g in gs):
            return CheckResult.unverified(KIND, f"the parameters of the optimizer at {v.path}:{call.lineno} cannot be "
                                                f"resolved to `{raw}` or to a model holding it")
        return CheckResult.failed(KIND, Status.mismatch, f"`{raw}` is left out of the optimizer at {v.path}:{call.lineno}",
                                  [evidence(ctx, v.path, call, "rule")])
    v, call, groups = training[0]
    if not enables:
        for fv, fnode, owner in freezes_all:
            # the freeze covers the part (model.backbone frozen, the optimizer over model.adapter + model.backbone:
            # the adapter is not under the freeze; the backbone beside it is the `only` test's business)
            if fv is v and _frozen_before(fnode, owner, call, v) and any(
                    (g.kind == "all" and _prefix(owner, g.owner) and _contains(owner, owners))
                    or (g.kind == "part" and _prefix(owner, dotted(_receiver(g.node)) or ""))
                    for g in groups):
                return CheckResult.failed(KIND, Status.mismatch, f"`{raw}` is frozen with the rest of `{owner}` "
                                          f"({fv.path}:{fnode.lineno}) and never re-enabled",
                                          [evidence(ctx, fv.path, fnode, "rule", note="requires_grad off over the model")])
    ev = [evidence(ctx, v.path, call, "rule", note="the optimizer that updates it")]
    ev += [evidence(ctx, ev_v.path, n, "rule", note=why) for ev_v, n, why in enables[:2]]
    if any(k in _SCALE_KEYS for k in _keys(key)):  # where the learned scales are declared
        ev += [evidence(ctx, dv.path, node, "rule", note="a learned scale it declares")
               for dv in views if (node := _declared_scales(ctx, dv)) is not None][:1]
    if not only:
        return CheckResult.passed(KIND, f"`{raw}` reaches the optimizer at {v.path}:{call.lineno}", sorted_evidence(ev))
    others = [(ov, g) for ov, _, gs in training for g in gs if reaches(g) is False or (g.kind == "part" and not g.exclusive)]
    others += [(ov, g) for ov, oc, gs in optimizers if all(oc is not c for _, c, _ in training)
               for g in gs if reaches(g) is False]  # a second optimizer over a sibling part of the same model
    if others:
        ov, g = others[0]
        return CheckResult.failed(KIND, Status.mismatch, f"other parameters than `{raw}` reach an optimizer "
                                  f"({ov.path}:{g.node.lineno})", [evidence(ctx, ov.path, g.node, "rule")])
    whole = [g for _, _, gs in training for g in gs if g.kind != "part"]
    if not whole:
        return CheckResult.passed(KIND, f"only `{raw}` reaches the optimizer at {v.path}:{call.lineno}", sorted_evidence(ev))
    if not all(g.kind == "all" and reaches(g) for g in whole):
        return CheckResult.unverified(KIND, f"the parameters of the optimizer at {v.path}:{call.lineno} cannot be resolved")
    whole_owners = [g.owner for g in whole]
    other_enables = [(ov, n, why) for ov in views for n, why in _enables_others(ctx, ov, key, whole_owners)]
    if other_enables:
        ov, n, why = other_enables[0]
        return CheckResult.failed(KIND, Status.mismatch, f"another part is trained with `{raw}`: {why} ({ov.path}:{n.lineno})",
                                  [evidence(ctx, ov.path, n, "rule", note=why)])
    rest_frozen = [(fv, n) for fv in views for n in _filters_freezing_others(ctx, fv, key, whole_owners)]
    if enables:
        rest_frozen += [(fv, n) for fv, n, owner in freezes_all if any(_prefix(owner, o) for o in whole_owners)]
    if rest_frozen:
        fv, n = rest_frozen[0]
        ev.append(evidence(ctx, fv.path, n, "rule", note="every other parameter frozen"))
        return CheckResult.passed(KIND, f"only `{raw}` is trained: the rest is frozen ({fv.path}:{n.lineno}) and the "
                                        f"optimizer at {v.path}:{call.lineno} takes the model", sorted_evidence(ev))
    return CheckResult.unverified(KIND, f"the optimizer at {v.path}:{call.lineno} takes every parameter of "
                                        f"`{whole[0].owner}`; nothing shows the parts other than `{raw}` are frozen",
                                  sorted_evidence(ev))


# ----- parameter kinds: every normalisation layer's parameters ----------------------------------------------
# "LayerNorm tuning", "only the LN parameters are trained": the part is a layer type, spelled per library — timm's
# norm/norm1/fc_norm, HF's layernorm_before/LayerNorm/input_layernorm, open_clip's ln_1/ln_pre/ln_final. Names are
# compared in `norm()` form (lower case, no separators). `bias` needs nothing of this: every library calls it bias.
_NORM_KEYS = frozenset({"norm", "norms", "layernorm", "layernorms", "ln", "normlayer", "normlayers", "normalization",
                        "layernormalization"})
_NORM_NAME = re.compile(
    r"(?:fc|pre|post|final|out|in|input|postattention|attn|mlp|ffn|encoder|decoder|q|k)?"
    r"(?:layer|layr|group|batch|rms|ada)?norm(?:\d+|before|after|pre|post|out|f|final|\dd)?"
    r"|ln(?:\d+|pre|post|f|final|out)?")
_NORM_CLASS = re.compile(r"\w*Norm(?:\d[dD])?")  # nn.LayerNorm, nn.GroupNorm, nn.BatchNorm2d, RMSNorm, LlamaRMSNorm


# "feature scaling", "scale factors" (DiffFit's gamma, SSF's ssf_scale, LayerScale's gamma, (IA)^3's rescaling
# vectors): learned per-channel scales. An attention's `self.scale = head_dim ** -0.5` is a float, not one, so
# the kind occurs only where such a name is declared a parameter (nn.Parameter, register_parameter, flax param).
_SCALE_KEYS = frozenset({"featurescale", "featurescales", "featurescaling", "learnedscale", "learnedscales"})
_SCALE_NAME = re.compile(r"(?:ssf|ia3|difffit|diff|layer|ls|feature|feat|learnable|channel)?"
                         r"(?:scale|scales|scaling|gamma)(?:\d+|attn|mlp|ffn|[a-z]?\d*)?|ia3\w*")
_PARAMETER_MAKERS = frozenset({"Parameter", "register_parameter", "param", "get_parameter"})


def _keys(key: str) -> list[str]:
    """The parts a key stands for: ``norm|head`` is the union `only` is over when ``besides`` names the head."""
    return key.split("|")


def _is_norm_kind(key: str) -> bool:
    return key in _NORM_KEYS


def _kind_names(key: str) -> re.Pattern | None:
    """The names of a parameter kind's parameters (norm layers, learned scales); None for a named part."""
    return _NORM_NAME if key in _NORM_KEYS else _SCALE_NAME if key in _SCALE_KEYS else None


def _same(name: str, key: str) -> bool:
    """``frozen._same``, and for a kind any parameter of it (``norm1``, ``ln_2``; ``gamma1``, ``ssf_scale_1``)."""
    return any(bool(names.fullmatch(norm(name))) if (names := _kind_names(k)) else frozen._same(name, k) for k in _keys(key))


def _selects(word: str, key: str) -> bool:
    """``frozen._part_of``; for a kind a filter word naming one of its parameters ("norm", "ln_", ".norm1", "gamma")."""
    for k in _keys(key):
        if names := _kind_names(k):
            if any(names.fullmatch(norm(p)) for piece in word.split(".") for p in (piece, piece.strip("_")) if norm(p)):
                return True
        elif frozen._part_of(word, k):
            return True
    return False


def _declared_scales(ctx, view: FileView) -> ast.AST | None:
    """The file's first declaration of a learned scale: ``self.gamma = nn.Parameter(...)``,
    ``register_parameter("ssf_scale", ...)``, flax ``self.param("scale", ...)``; None when it has none."""
    def declared() -> ast.AST | None:
        found = []
        for node in nodes_of(ctx, view, (ast.Assign, ast.AnnAssign, ast.Call)):
            if isinstance(node, ast.Call):
                leaf = (dotted(node.func) or "").rsplit(".", 1)[-1]
                if leaf in _PARAMETER_MAKERS and node.args and isinstance(node.args[0], ast.Constant) and \
                        isinstance(node.args[0].value, str) and _SCALE_NAME.fullmatch(norm(node.args[0].value)):
                    found.append(node)
                continue
            value = node.value
            if not (isinstance(value, ast.Call) and (dotted(value.func) or "").rsplit(".", 1)[-1] in _PARAMETER_MAKERS):
                continue
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                name = target.attr if isinstance(target, ast.Attribute) else target.id if isinstance(target, ast.Name) else ""
                if name and _SCALE_NAME.fullmatch(norm(name)):
                    found.append(node)
        return min(found, key=lambda n: (n.lineno, n.col_offset)) if found else None

    return ctx.memo(f"protocol.trainable.declared_scales:{view.path}", declared)


def _mentions(node: ast.AST, key: str) -> bool:
    if "|" in key:
        return any(_mentions(node, k) for k in _keys(key))
    if not _kind_names(key):
        return frozen._mentions(node, key)
    for n in ast.walk(node):
        if isinstance(n, (ast.Name, ast.Attribute)) and _same(n.id if isinstance(n, ast.Name) else n.attr, key):
            return True
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and _selects(n.value, key):
            return True
    return False


def _module_classes(test: ast.AST, var: str) -> list[str] | None:
    """The class leaves of ``isinstance(var, nn.LayerNorm)`` / ``isinstance(var, (A, B))``; None for another test."""
    if isinstance(test, ast.Call) and isinstance(test.func, ast.Name) and test.func.id == "isinstance" and \
            len(test.args) == 2 and isinstance(test.args[0], ast.Name) and test.args[0].id == var:
        kinds = test.args[1].elts if isinstance(test.args[1], ast.Tuple) else [test.args[1]]
        leaves = [(dotted(k) or "").rsplit(".", 1)[-1] for k in kinds]
        return leaves if all(leaves) else None
    return None


def _of_kind(classes: list[str], key: str) -> bool | None:
    """Whether modules of these classes are the part: True / False, None when only some are."""
    hits = [any(_is_norm_kind(k) for k in _keys(key)) and bool(_NORM_CLASS.fullmatch(c)) for c in classes]
    return True if all(hits) else False if not any(hits) else None


def _switches_on(body: list[ast.stmt], var: str) -> ast.AST | None:
    """The statement of ``body`` that turns gradients on for module ``var``: ``var.requires_grad_(True)``,
    ``for p in var.parameters(): p.requires_grad = True``, ``var.weight.requires_grad = True``."""
    for stmt in body:
        for node in ast.walk(stmt):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "requires_grad_" \
                    and _true_call(node) and (dotted(node.func.value) or "").split(".")[0] == var:
                return node
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and node.value.value is True and any(
                    isinstance(t, ast.Attribute) and t.attr == "requires_grad" for t in node.targets):
                target = next(t for t in node.targets if isinstance(t, ast.Attribute))
                root = (dotted(target.value) or "").split(".")[0]
                loop = next((f for f in ast.walk(stmt) if isinstance(f, ast.For) and isinstance(f.target, ast.Name)
                             and f.target.id == root and isinstance(f.iter, ast.Call) and
                             (dotted(f.iter.func) or "").startswith(var + ".")), None)
                if root == var or loop is not None:
                    return node
    return None


def _module_type_loops(ctx, view: FileView) -> tuple[tuple[ast.AST, str, list[str], ast.AST], ...]:
    """``for m in model.modules(): if isinstance(m, nn.LayerNorm): m.requires_grad_(True)``: (the switch, the
    model, the classes switched on, the loop)."""
    return ctx.memo(f"protocol.trainable.type_loops:{view.path}", lambda: tuple(_find_module_type_loops(ctx, view)))


def _find_module_type_loops(ctx, view: FileView) -> Iterator[tuple[ast.AST, str, list[str], ast.AST]]:
    for node in nodes_of(ctx, view, (ast.For, ast.AsyncFor)):
        if not (isinstance(node, (ast.For, ast.AsyncFor)) and isinstance(node.iter, ast.Call) and
                isinstance(node.iter.func, ast.Attribute) and node.iter.func.attr in ("modules", "named_modules")):
            continue
        target = node.target
        var = target.id if isinstance(target, ast.Name) else (
            target.elts[1].id if isinstance(target, ast.Tuple) and len(target.elts) == 2 and isinstance(target.elts[1], ast.Name) else None)
        owner = dotted(node.iter.func.value)
        if var is None or not owner:
            continue
        for stmt in node.body:
            if isinstance(stmt, ast.If) and (classes := _module_classes(stmt.test, var)) is not None:
                switch = _switches_on(stmt.body, var)
                if switch is not None:
                    yield switch, owner, classes, node


def _module_type_group(gen: list[ast.comprehension], key: str, node: ast.AST) -> Group | None:
    """``[p for m in model.modules() if isinstance(m, nn.LayerNorm) for p in m.parameters()]``."""
    first, second = gen
    if not (isinstance(first.iter, ast.Call) and isinstance(first.iter.func, ast.Attribute)
            and first.iter.func.attr in ("modules", "named_modules") and len(first.ifs) == 1):
        return None
    var = first.target.id if isinstance(first.target, ast.Name) else (
        first.target.elts[1].id if isinstance(first.target, ast.Tuple) and len(first.target.elts) == 2
        and isinstance(first.target.elts[1], ast.Name) else None)
    classes = _module_classes(first.ifs[0], var) if var else None
    if classes is None or (dotted(second.iter.func) if isinstance(second.iter, ast.Call) else "") != f"{var}.parameters":
        return None
    kind = _of_kind(classes, key)
    return Group("part", node) if kind else Group("other", node) if kind is False else Group("unknown", node)


# ----- where the part is named -----------------------------------------------------------------------------
# Names of the parts a PEFT wrap adds (its LoRA matrices, its adapters): the library creates them, no repo code
# names them, and they are what `get_peft_model` leaves trainable.
_LIBRARY_ADAPTER_KEYS = frozenset({"lora", "loraa", "lorab", "loralayers", "loraadapters", "loraadapter", "adapter",
                                   "adapters", "loramodules", "loraweights", "loraparameters", "loraparams"})


def _library_adapters(raw: str, key: str, ctx, scope: str | None, views: list[FileView], only: bool) -> CheckResult | None:
    """LoRA or adapters that a PEFT wrap adds (``get_peft_model(model, LoraConfig(...))``): trainable by the
    library's construction. With ``only``, everything else must be frozen: the base weights, as the frozen rule's
    ``base_weights`` decides it (a re-enabled base or a trained head is not "only the adapters")."""
    if key not in _LIBRARY_ADAPTER_KEYS:
        return None
    wraps = [(v, node) for v in views for node, _ in frozen._peft_wraps(ctx, v) if node_in_scope(scope, v, node)]
    if not wraps:
        return None
    v, node = wraps[0]
    where = f"{v.path}:{node.lineno}"
    ev = [evidence(ctx, v.path, node, "rule", note="the PEFT wrap that adds the adapters")]
    if not only:
        return CheckResult.passed(KIND, f"`{raw}`: the adapters the PEFT wrap at {where} adds are trainable", ev)
    base = frozen.evaluate({"name": frozen.BASE_WEIGHTS}, ctx, scope, {})
    if base.status is Status.pass_:
        return CheckResult.passed(KIND, f"only `{raw}` is trained: the PEFT wrap at {where} adds it and {base.message}",
                                  sorted_evidence([*ev, *base.evidence]))
    if base.status is Status.mismatch:
        return CheckResult.failed(KIND, Status.mismatch, f"`{raw}` is trained, but not alone: {base.message}",
                                  sorted_evidence([*ev, *base.evidence]))
    return CheckResult.unverified(KIND, f"`{raw}` is trained (PEFT wrap at {where}); whether alone: {base.message}",
                                  sorted_evidence([*ev, *base.evidence]))


def _occurs(ctx, view: FileView, key: str) -> bool:
    """Does the file name the part: a name or attribute spelled like it (``frozen._same``), a named_parameters()
    filter on it (``"bias" in name``, ``name.endswith(".bias")``)? From the file's nodes by type, no walk."""
    if "|" in key:
        return any(_occurs(ctx, view, k) for k in _keys(key))
    if key in _SCALE_KEYS:
        return _declared_scales(ctx, view) is not None  # a float `self.scale` (attention) is no learned scale
    if key.rstrip("s") in _name_forms(ctx, view):  # _same(name, key) for some name or attribute
        return True
    if _is_norm_kind(key) and any(_NORM_NAME.fullmatch(form) or _NORM_NAME.fullmatch(form + "s") for form in _name_forms(ctx, view)):
        return True
    for node in nodes_of(ctx, view, (ast.Compare,)):
        if len(node.ops) == 1 and isinstance(node.ops[0], (ast.In, ast.NotIn)):
            words = frozen._strings(node.left)
            if words and any(_selects(w, key) for w in words):
                return True
    for node in nodes_of(ctx, view, (ast.Call,)):
        if isinstance(node.func, ast.Attribute) and node.func.attr in ("startswith", "endswith") \
                and node.args and any(_selects(w, key) for w in frozen._strings(node.args[0]) or []):
            return True
        found = frozen.any_of_words(node, None, _constants(ctx, view))  # any(k in name for k in ("bias", "norm"))
        if found and any(_selects(w, key) for w in found[0] or []):
            return True
    return False


def _name_forms(ctx, view: FileView) -> frozenset[str]:
    """``norm(name).rstrip("s")`` of every name and attribute of the file: ``_same(name, key)`` holds for
    one of them exactly when ``key.rstrip("s")`` is in this set (equal norms have equal stripped forms)."""
    return ctx.memo(f"protocol.trainable.name_forms:{view.path}", lambda: frozenset(
        norm(n.id if type(n) is ast.Name else n.attr).rstrip("s") for n in nodes_of(ctx, view, (ast.Name, ast.Attribute))))


def _chains(ctx, views: list[FileView], key: str) -> set[str]:
    """Dotted references that reach the part (``model.R``, ``self.model.lora_R``) and named_parameters() owners
    whose name filters select it: what a whole-model optimizer or freeze must be a prefix of."""
    out: set[str] = set()
    for view in views:
        for node in nodes_of(ctx, view, (ast.Attribute, ast.For, ast.comprehension)):
            if isinstance(node, ast.Attribute) and _same(node.attr, key):
                chain = dotted(node.value)
                if chain:
                    out.add(chain)
            elif isinstance(node, (ast.For, ast.comprehension)):
                owner = _named_parameters_owner(node.iter)
                tests = node.ifs if isinstance(node, ast.comprehension) else node.body
                if owner and any(_mentions_key_word(t, key, _constants(ctx, view)) for t in tests):
                    out.add(owner)
        for _switch, owner, classes, _loop in _module_type_loops(ctx, view):
            if _of_kind(classes, key) is not False:
                out.add(owner)
    return out


def _contains(owner: str, chains: set[str]) -> bool:
    return bool(owner) and any(_prefix(owner, c) for c in chains)


def _prefix(owner: str, chain: str) -> bool:
    return chain == owner or chain.startswith(owner + ".")


def _named_parameters_owner(call: ast.AST) -> str | None:
    if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "named_parameters":
        return dotted(call.func.value) or None
    return None


def _mentions_key_word(test: ast.AST, key: str, constants: dict[str, list[str]] | None = None) -> bool:
    """A string in the test selects the part, written there or in a module-level tuple it names (``TUNED``)."""
    for n in ast.walk(test):
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and _selects(n.value, key):
            return True
        if constants and isinstance(n, ast.Name) and any(_selects(w, key) for w in constants.get(n.id, ())):
            return True
    return False


# ----- name tests, three-valued: does the test hold for the part's parameters, for every other one? ----------
def _holds(test: ast.AST, var: str, key: str, for_key: bool, constants: dict[str, list[str]] | None = None) -> bool | None:
    """Whether ``test`` holds for a parameter named like ``key`` (``for_key``) or for any other parameter; None
    when the test is not one on the name or its value for other parameters depends on their names."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = _holds(test.operand, var, key, for_key, constants)
        return None if inner is None else not inner
    if isinstance(test, ast.BoolOp):
        parts = [_holds(v, var, key, for_key, constants) for v in test.values]
        if isinstance(test.op, ast.And):
            return False if False in parts else None if None in parts else True
        return True if True in parts else None if None in parts else False
    words, negate = frozen._name_test(test, var, constants)
    if not words:
        return None
    if for_key:
        hit: bool | None = any(_selects(w, key) for w in words)
    else:  # another parameter may carry any word but one at least as specific as the part's own name
        hit = False if all(any(k in norm(w) or (_kind_names(k) is not None and _selects(w, k)) for k in _keys(key)) for w in words) else None
    return None if hit is None else (not hit if negate else hit)


def _grad_flags(loop: ast.For, var: str, key: str, for_key: bool,
                constants: dict[str, list[str]] | None = None) -> Iterator[tuple[ast.AST, bool | None]]:
    """The requires_grad values a named_parameters() loop sets for the part's (or the other) parameters
    (``constants``: the module's string tuples a filter may name)."""

    def walk(body: list[ast.stmt], holds: bool | None) -> Iterator[tuple[ast.AST, bool | None]]:
        for stmt in body:
            if isinstance(stmt, ast.If):
                verdict = _holds(stmt.test, var, key, for_key, constants)
                if verdict is None:
                    yield from ((n, None) for n, _ in walk(stmt.body, True))
                    yield from ((n, None) for n, _ in walk(stmt.orelse, True))
                    continue
                if verdict:
                    yield from walk(stmt.body, holds)
                else:
                    yield from walk(stmt.orelse, holds)
            elif isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Attribute) and t.attr == "requires_grad" for t in stmt.targets):
                value = stmt.value
                if isinstance(value, ast.Constant) and isinstance(value.value, bool):
                    yield stmt, value.value
                else:
                    yield stmt, _holds(value, var, key, for_key, constants)  # p.requires_grad = "bias" in n
            elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and (dotted(stmt.value.func) or "").endswith("requires_grad_"):
                args = stmt.value.args
                if not args:
                    yield stmt, True
                elif isinstance(args[0], ast.Constant) and isinstance(args[0].value, bool):
                    yield stmt, args[0].value
                else:
                    yield stmt, _holds(args[0], var, key, for_key, constants)

    yield from walk(loop.body, True)


def _constants(ctx, view: FileView) -> dict[str, list[str]]:
    """The file's module-level string tuples (``TUNED = ("bias", "norm")``), for name filters that loop over one."""
    return ctx.memo(f"protocol.trainable.constants:{view.path}", lambda: frozen.string_constants(view.tree))


def _name_loops(ctx, view: FileView) -> tuple[tuple[ast.For, str, str], ...]:
    """``for name, p in model.named_parameters()`` loops: (the loop, the name variable, the model); once per run."""
    return ctx.memo(f"protocol.trainable.name_loops:{view.path}", lambda: tuple(
        (node, node.target.elts[0].id, owner) for node in nodes_of(ctx, view, (ast.For, ast.AsyncFor))
        if (owner := _named_parameters_owner(node.iter))
        and isinstance(node.target, ast.Tuple) and node.target.elts and isinstance(node.target.elts[0], ast.Name)))


def _filtered_out(ctx, view: FileView, key: str) -> Iterator[tuple[ast.AST, str]]:
    """named_parameters() loops whose name filter switches other parameters on and the part's off
    (``p.requires_grad = "bias" in n`` for the norm kind)."""
    constants = _constants(ctx, view)
    for loop, var, _owner in _name_loops(ctx, view):
        mine = [v for _, v in _grad_flags(loop, var, key, for_key=True, constants=constants)]
        if mine and all(v is False for v in mine) and any(
                v is not False for _, v in _grad_flags(loop, var, key, for_key=False, constants=constants)):
            yield loop, "its name filter switches requires_grad on for other parameters, not for it"


def _filters_freezing_others(ctx, view: FileView, key: str, owners: list[str]) -> Iterator[ast.AST]:
    """named_parameters() loops that switch off every parameter but the part's and leave the part on."""
    for loop, var, owner in _name_loops(ctx, view):
        if owners and not any(_prefix(owner, o) for o in owners):
            continue
        constants = _constants(ctx, view)
        other = [v for _, v in _grad_flags(loop, var, key, for_key=False, constants=constants)]
        mine = [v for _, v in _grad_flags(loop, var, key, for_key=True, constants=constants)]
        if other and all(v is False for v in other) and all(v is True for v in mine):
            yield loop


# ----- re-enabled: requires_grad on for the part (or, with only, for something else) --------------------------
def _enables(ctx, view: FileView, key: str) -> Iterator[tuple[ast.AST, str]]:
    for node in nodes_of(ctx, view, (ast.Call, ast.Assign, ast.For, ast.AsyncFor)):
        if isinstance(node, ast.Call):
            name = dotted(node.func) or ""
            leaf = name.rsplit(".", 1)[-1]
            if leaf == "requires_grad_" and _true_call(node) and _mentions(node.func.value if isinstance(node.func, ast.Attribute) else node.func, key):
                yield node, "requires_grad_(True)"
            elif leaf in ("LoraConfig", "LoHaConfig", "IA3Config", "PromptTuningConfig", "PrefixTuningConfig") or leaf.endswith("Config"):
                for kw in node.keywords:
                    if kw.arg == "modules_to_save" and any(_selects(w, key) for w in frozen._strings(kw.value) or []):
                        yield node, "PEFT modules_to_save"
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Attribute) and target.attr == "requires_grad" and \
                        isinstance(node.value, ast.Constant) and node.value.value is True and _mentions(target.value, key):
                    yield node, "requires_grad = True"
        elif isinstance(node, (ast.For, ast.AsyncFor)) and not _named_parameters_owner(node.iter) and _mentions(node.iter, key):
            for sub in ast.walk(node):
                if isinstance(sub, ast.Assign) and any(isinstance(t, ast.Attribute) and t.attr == "requires_grad" for t in sub.targets) \
                        and isinstance(sub.value, ast.Constant) and sub.value.value is True:
                    yield node, "requires_grad = True over its parameters"
                    break
    for loop, var, _owner in _name_loops(ctx, view):
        if any(v is True for _, v in _grad_flags(loop, var, key, for_key=True, constants=_constants(ctx, view))):
            yield loop, "requires_grad on for the parameters whose names it selects"
    for switch, _owner, classes, _loop in _module_type_loops(ctx, view):
        if _of_kind(classes, key) is not False:  # (nn.LayerNorm, nn.Linear): the norms are on, and more (`only`'s business)
            yield switch, f"requires_grad on for every {' / '.join(classes)} module"


def _true_call(call: ast.Call) -> bool:
    if not call.args and not call.keywords:
        return True
    value = call.args[0] if call.args else call.keywords[0].value
    return isinstance(value, ast.Constant) and value.value is True


def _enables_others(ctx, view: FileView, key: str, owners: list[str]) -> Iterator[tuple[ast.AST, str]]:
    """requires_grad switched on, inside the model an optimizer takes whole (``owners``), for a named part that is
    not ``key`` (``model.head.requires_grad_(True)``, a name filter that also selects "bias")."""
    for node in nodes_of(ctx, view, (ast.Call,)):
        if isinstance(node, ast.Call) and (dotted(node.func) or "").endswith(".requires_grad_") and _true_call(node):
            target = node.func.value if isinstance(node.func, ast.Attribute) else None
            chain = dotted(target) or ""
            if isinstance(target, ast.Attribute) and not _mentions(target, key) and any(chain.startswith(o + ".") for o in owners):
                yield node, f"requires_grad_(True) on {chain}"
    for switch, owner, classes, _loop in _module_type_loops(ctx, view):
        if any(_prefix(owner, o) for o in owners) and _of_kind(classes, key) is not True:
            yield switch, f"requires_grad on for every {' / '.join(classes)} module"
    for loop, var, owner in _name_loops(ctx, view):
        if not any(_prefix(owner, o) for o in owners):
            continue
        for stmt, value in _grad_flags(loop, var, key, for_key=False, constants=_constants(ctx, view)):
            if value is True:
                yield stmt, "requires_grad on for other parameters"
                break
        else:
            words = {n.value for n in ast.walk(loop) if isinstance(n, ast.Constant) and isinstance(n.value, str)}
            for word in sorted(w for w in words if norm(w) and not _selects(w, key)):
                hit = next((s for s, v in _grad_flags(loop, var, norm(word), for_key=True, constants=_constants(ctx, view)) if v is True), None)
                if hit is not None:
                    yield hit, f"requires_grad on for the parameters named {word!r}"
                    break


# ----- freeze-all: requires_grad off over a whole model -------------------------------------------------------
def _global_freezes(ctx, view: FileView, key: str) -> Iterator[tuple[ast.AST, str]]:
    for node in nodes_of(ctx, view, (ast.Call, ast.For, ast.AsyncFor)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "requires_grad_" and \
                node.args and isinstance(node.args[0], ast.Constant) and node.args[0].value is False:
            owner = dotted(node.func.value)
            if owner and not _mentions(node.func.value, key):
                yield node, owner
        elif isinstance(node, (ast.For, ast.AsyncFor)) and isinstance(node.iter, ast.Call) and \
                isinstance(node.iter.func, ast.Attribute) and node.iter.func.attr == "parameters" and \
                not _mentions(node.iter, key) and any(frozen._sets_no_grad(s) for s in node.body):
            owner = dotted(node.iter.func.value)
            if owner:
                yield node, owner


def _receiver(node: ast.AST) -> ast.AST:
    """``model.R`` of ``model.R.parameters()``."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        return node.func.value
    return node


def _frozen_before(freeze: ast.AST, owner: str, optimizer: ast.AST, view: FileView) -> bool:
    """The freeze precedes the optimizer in one function and nothing in between may add parameters to
    ``owner`` (an attribute assigned on it, a call it is passed to: adapters injected after a freeze train)."""
    scope = innermost_scope(view, freeze)
    if scope != innermost_scope(view, optimizer) or not freeze.lineno < optimizer.lineno:
        return False
    fn = view.functions.get(scope)
    for node in ast.walk(fn.node if fn is not None else view.tree):
        line = getattr(node, "lineno", 0)
        if not (getattr(freeze, "end_lineno", freeze.lineno) < line < optimizer.lineno):
            continue
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Attribute) and _prefix(owner, dotted(t.value) or "") for t in node.targets):
            return False
        if isinstance(node, ast.Call) and any(dotted(a) == owner for a in node.args):
            return False
    return True


# ----- the optimizer's parameters ---------------------------------------------------------------------------
def _holder_classes(ctx, views: list[FileView], key: str) -> frozenset[str]:
    """Repo classes that define the part: ``self.lora_R = nn.Parameter(...)`` in a method."""
    out = set()
    for view in views:
        for name, attrs in ctx.memo(f"protocol.trainable.self_attrs:{view.path}", lambda: _self_attributes(ctx, view)):
            if any(_same(attr, key) for attr in attrs):
                out.add(name)
    return frozenset(out)


def _self_attributes(ctx, view: FileView) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """(class, the ``self.<attr> = ...`` names assigned anywhere in its body) for every class of the file."""
    out = []
    for cls in nodes_of(ctx, view, (ast.ClassDef,)):
        attrs = {t.attr for node in ast.walk(cls) if isinstance(node, ast.Assign) for t in node.targets
                 if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self"}
        out.append((cls.name, tuple(sorted(attrs))))
    return tuple(out)


def _optimizers(view: FileView, key: str, holders: frozenset[str]) -> Iterator[tuple[ast.Call, list[Group]]]:
    for call in frozen._optimizers(view):
        arg = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg in ("params", "parameters")), None)
        if arg is None:
            continue  # optax: the parameters come at init()
        yield call, [_held(g, view, call, holders) for g in _groups(arg, view, call, key, 0)]
    for cv in view.calls:
        if cv.leaf in _TRAINERS and cv.kwarg("optimizers") is None:
            model = cv.kwarg("model") or (cv.node.args[0] if cv.node.args else None)
            if model is not None:
                yield cv.node, [_held(_object_group(model, key), view, cv.node, holders)]


def _held(group: Group, view: FileView, at: ast.AST, holders: frozenset[str]) -> Group:
    """``layer = CoreAdapterLinear(...)``; ``Adam(layer.parameters())``: the whole-model group holds the part."""
    if group.kind != "all" or "." in group.owner or not holders:
        return group
    bound = _assigned(group.owner, view, at)
    if bound is not None and isinstance(bound.value, ast.Call) and (dotted(bound.value.func) or "").rsplit(".", 1)[-1] in holders:
        return dataclasses.replace(group, holds=True)
    return group


def _object_group(node: ast.AST, key: str) -> Group:
    chain = dotted(node)
    if chain is None:
        return Group("unknown", node)
    if _mentions(node, key):
        return Group("part", node)
    return Group("all", node, owner=chain)


def _groups(node: ast.AST, view: FileView, at: ast.AST, key: str, depth: int) -> Iterator[Group]:
    if depth > 4:
        yield Group("unknown", node)
        return
    if isinstance(node, ast.Call):
        func = node.func
        leaf = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        if leaf in ("parameters", "named_parameters") and isinstance(func, ast.Attribute):
            receiver = func.value
            if _mentions(receiver, key):
                yield Group("part", node)
            elif dotted(receiver):
                yield Group("all", node, owner=dotted(receiver) or "")
            else:
                yield Group("unknown", node)
        elif leaf in ("list", "tuple", "chain", "filter") and node.args:
            for arg in node.args[1:] if leaf == "filter" else node.args:
                yield from _groups(arg, view, at, key, depth + 1)
        elif isinstance(func, ast.Name) and (returned := _returned_parameters(node, view)) is not None:
            value, renames = returned  # Adam(tuned_parameters(model)): what the helper returns, in the caller's names
            for group in _groups(value, view, value, key, depth + 1):
                head, dot, rest = group.owner.partition(".")
                yield dataclasses.replace(group, owner=renames[head] + dot + rest) if group.kind == "all" and head in renames else group
        else:
            yield Group("unknown", node)
    elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        yield from _groups(node.left, view, at, key, depth + 1)
        yield from _groups(node.right, view, at, key, depth + 1)
    elif isinstance(node, (ast.List, ast.Tuple)):
        for elt in node.elts:
            yield from _groups(elt.value if isinstance(elt, ast.Starred) else elt, view, at, key, depth + 1)
    elif isinstance(node, ast.Dict):
        for k, v in zip(node.keys, node.values):
            if isinstance(k, ast.Constant) and k.value == "params":
                yield from _groups(v, view, at, key, depth + 1)
    elif isinstance(node, (ast.ListComp, ast.GeneratorExp)) and len(node.generators) == 2 and \
            (typed := _module_type_group(node.generators, key, node)) is not None:
        yield typed
    elif isinstance(node, (ast.ListComp, ast.GeneratorExp)) and len(node.generators) == 1:
        gen = node.generators[0]
        owner = _named_parameters_owner(gen.iter)
        var = gen.target.elts[0].id if isinstance(gen.target, ast.Tuple) and gen.target.elts and isinstance(gen.target.elts[0], ast.Name) else None
        name_tests = [t for t in gen.ifs if var and "requires_grad" not in ast.unparse(t)]
        if owner and var and name_tests:
            test = name_tests[0] if len(name_tests) == 1 else ast.BoolOp(op=ast.And(), values=name_tests)
            constants = frozen.string_constants(view.tree) if any(isinstance(n, ast.Name) and n.id != var for n in ast.walk(test)) else None
            mine, other = _holds(test, var, key, True, constants), _holds(test, var, key, False, constants)
            if mine is True:
                yield Group("part", node, exclusive=other is False)
            elif mine is False:
                yield Group("other", node)
            else:
                yield Group("unknown", node)
        else:
            yield from _groups(gen.iter, view, at, key, depth + 1)
    elif isinstance(node, ast.Name):
        bound = _assigned(node.id, view, at)
        yield from (_groups(bound.value, view, bound, key, depth + 1) if bound is not None else [Group("unknown", node)])
    elif isinstance(node, ast.Attribute):
        yield Group("part", node) if _same(node.attr, key) else Group("unknown", node)
    else:
        yield Group("unknown", node)


def _returned_parameters(call: ast.Call, view: FileView) -> tuple[ast.AST, dict[str, str]] | None:
    """A module-level function of the file called with positional arguments that returns one expression: (that
    expression, its parameters -> the caller's dotted arguments); None otherwise."""
    fn = view.functions.get(call.func.id) if isinstance(call.func, ast.Name) else None
    if fn is None or call.keywords or not isinstance(fn.node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    returns = [n for n in ast.walk(fn.node) if isinstance(n, ast.Return) and n.value is not None]
    if len(returns) != 1:
        return None
    names = [a.arg for a in fn.node.args.args]
    renames = {name: chain for name, arg in zip(names, call.args) if (chain := dotted(arg))}
    return returns[0].value, renames


def _assigned(name: str, view: FileView, at: ast.AST) -> ast.Assign | None:
    """The value last bound to ``name`` before ``at`` in the same function; None when it is rebound by
    ``+=``/``append`` (a list built piece by piece) or never bound there."""
    line = getattr(at, "lineno", 0)
    scope = innermost_scope(view, at)
    fn = view.functions.get(scope)
    body = fn.node if fn is not None else view.tree
    value = None
    for node in ast.walk(body):
        if getattr(node, "lineno", line) >= line:
            continue
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
            if value is None or node.lineno > value.lineno:
                value = node
        elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name) and node.target.id == name:
            return None
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("append", "extend") \
                and isinstance(node.func.value, ast.Name) and node.func.value.id == name:
            return None
    return value

"""Rule ``model``: the run loads or queries the named pretrained model / checkpoint / API model.

A model is used where a loader or client receives its name: ``from_pretrained("meta-llama/Llama-3.2-3B")``,
``timm.create_model(...)``, ``torchvision.models.resnet50(weights=...)``, ``torch.hub.load(repo, name)``,
``clip.load``, open_clip, ``SentenceTransformer``, and API calls with ``model=`` (OpenAI, Anthropic, Together,
Google, litellm). The name may reach the call through a local, a config key, an argparse default, a launch flag,
a list the code iterates or a parameter of the repo function making the call. A comment or a print is a
mention, never a use.

Names compare on word pieces with the organisation prefix, case and separators ignored and sizes kept
("Llama-3.2 3B" = ``meta-llama/Llama-3.2-3B``, not ``Llama-3.2-1B`` nor ``Llama-3.2-3B-Instruct``; release tags by
their numbers: ``v1.0`` = ``v1``, not ``v1.2``), through the alias table of rules/protocol/model.yaml ("ViT-B/16" =
``vit_base_patch16_224``, "Open-Sora v1.0" = ``OpenSora-v1-HQ-16x512x512``).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from verifier.analysis.protocol.common import (
    dotted,
    evidence,
    file_view,
    looks_like_glob,
    name_mentions,
    norm,
    python_paths,
    scope_admits,
    sorted_evidence,
    tree_nodes,
    views_mentioning,
    walk_list,
)
from verifier.analysis.protocol.values import Resolver, Setting, assigned_before, config_settings
from verifier.index.facts import BindingKind
from verifier.results import CheckResult, Status

KIND = "protocol"

_PIECES = re.compile(r"\d+\.\d+[bmkt](?![a-z])|[a-z]+|\d+(?:[a-z]+\d*)*")  # a decimal size is one piece: 1.4b
_SIZE = re.compile(r"\d+(?:\.\d+)?(?:x\d+)?[bmkt]|\d+e\d*b?")
# ``mini`` is not among them: ``gpt-4o-mini`` is another model, not a size of ``gpt-4o``.
_NAMED_SIZES = frozenset("tiny small base medium large xl xxl huge giant".split())
_DATE = re.compile(r"20\d{6}")
# Spelling suffixes that do not change which model it is (``bert-base-uncased`` for "BERT-base", ``Llama-2-7b-hf``).
_NEUTRAL = frozenset("hf uncased cased".split())
# Text every file that loads or queries a model contains (a C-speed prefilter before any tree is built):
# ``model=``, ``from_pretrained``, ``create_model``, ``GenerativeModel``, ``torchvision.models``, ``clip.load``, ...
_NEEDLES = ("model=", "model =", "_model(", "Model(", "models.", "from_pretrained", "SentenceTransformer", "CrossEncoder",
            "clip.", "hub.load", "applications.", "LLM(", ".load(", "load_checkpoint", "load_pretrained", "load_weights",
            "load_file", "safe_open")
# Leaf names of calls whose ``model=`` argument is the model queried, even when it cannot be resolved.
_API_LEAVES = frozenset("create completion acompletion batch_completion generate_content generate_content_async "
                        "chat stream invoke".split())


@dataclass(frozen=True, eq=False)
class Use:
    name: str  # the model name as written where it reaches the call ("" when it cannot be resolved)
    file: str
    line: int
    end_line: int
    how: str
    via: Setting | None = None  # the setting the name came from, if any
    origin: tuple[str, int] | None = None  # a list element or call site the name came from
    checkpoint: bool = False  # a weights file read by path (``np.load("ViT-B_16.npz")``): evidence for, never against


# ----- names -------------------------------------------------------------------------------------------------
def _strip(name: str, timm: bool = False) -> str:
    """Drop an organisation prefix (``meta-llama/``) but not a patch size (``ViT-B/16``); for timm, its tag."""
    text = name.strip()
    head, sep, tail = text.rpartition("/")
    if sep and tail and not tail[0].isdigit():
        text = tail
    if timm or head.lower().endswith("timm"):
        text = text.split(".", 1)[0]
    return text


def pieces(name: str) -> list[str]:
    """``Llama-3.2 3B`` -> [llama, 3, 2, 3b]; ``gpt-4o-mini`` -> [gpt, 4o, mini]; ``t5-base`` -> [t, 5, base];
    ``pythia-1.4b`` -> [pythia, 1.4b]."""
    return _PIECES.findall(name.lower())


def sized(name: str) -> bool:
    """Does the name carry a model size ("Pythia-1.4B", "Llama-3.2 3B", "BERT-base")?"""
    return any(_is_size(p) for p in pieces(name))


def _is_size(piece: str) -> bool:
    return bool(_SIZE.fullmatch(piece)) or piece in _NAMED_SIZES


def _dated(extra: list[str]) -> bool:
    """A dated snapshot suffix: ``20240620`` or ``2024-05-13``."""
    return (len(extra) == 1 and bool(_DATE.fullmatch(extra[0]))) or (
        len(extra) == 3 and re.fullmatch(r"20\d\d", extra[0]) is not None and all(len(p) == 2 for p in extra[1:]))


def _version(extra: list[str]) -> bool:
    """A release tag the claim leaves out: ``-v0.1`` (``Mistral-7B-v0.1`` for "Mistral-7B")."""
    return len(extra) >= 2 and extra[0] == "v" and all(p.isdigit() for p in extra[1:])


def _same_release(e: list[str], f: list[str]) -> bool | None:
    """Both end in a release tag (``v``, then numbers) after the same name: whether the tags are the same release
    (``v1.0`` is ``v1``); None when they do not."""
    if "v" not in e or "v" not in f:
        return None
    i, j = len(e) - 1 - e[::-1].index("v"), len(f) - 1 - f[::-1].index("v")
    tail_e, tail_f = e[i + 1 :], f[j + 1 :]
    if not (e[:i] == f[:j] and e[:i] and tail_e and tail_f and all(p.isdigit() for p in tail_e + tail_f)):
        return None
    numbers = [[int(p) for p in tail] for tail in (tail_e, tail_f)]
    for tag in numbers:
        while len(tag) > 1 and tag[-1] == 0:
            tag.pop()
    return numbers[0] == numbers[1]


def _undated(ps: list[str]) -> list[str]:
    for cut in (1, 3):
        if len(ps) > cut and _dated(ps[-cut:]):
            return ps[:-cut]
    return ps


class Names:
    """The alias table: normalised alias (a trailing ``*`` = any continuation) -> canonical name."""

    def __init__(self, rule: dict):
        self.exact: dict[str, str] = {}
        self.prefixes: list[tuple[str, str]] = []
        self.entries: list[dict] = rule.get("lexicon", {}).get("models", [])
        for entry in self.entries:
            for alias in [entry["name"], *entry.get("aliases", [])]:
                alias = str(alias)
                if alias.endswith("*"):
                    self.prefixes.append((norm(_strip(alias[:-1])), entry["name"]))
                else:
                    self.exact.setdefault(norm(_strip(alias)), entry["name"])
        self.prefixes.sort(key=lambda p: -len(p[0]))

    def canonical(self, name: str, timm: bool = False) -> str:
        bare = _strip(name, timm)
        key = norm(bare)
        if key in self.exact:
            return self.exact[key]
        for prefix, canon in self.prefixes:
            if key.startswith(prefix):
                return canon
        return bare

    def aliases(self, canon: str) -> list[str]:
        for entry in self.entries:
            if entry["name"] == canon:
                return [str(a).rstrip("*") for a in entry.get("aliases", [])]
        return []


def relation(expect: str, found: str) -> str | None:
    """"same", "variant" (the same family in another size, tuning or snapshot: a mismatch) or None (unrelated).

    Both names are canonical already. A claim naming no size accepts any size of the family; a dated snapshot
    of the named model is the model."""
    e, f = pieces(expect), pieces(found)
    if not e or not f:
        return None
    if "".join(e) == "".join(f):
        return "same"
    f_plain = [p for p in f if p not in _NEUTRAL]
    e_plain = [p for p in e if p not in _NEUTRAL]
    if "".join(e_plain) == "".join(f_plain):
        return "same"
    if f_plain[: len(e_plain)] == e_plain:
        extra = f_plain[len(e_plain):]
        if _dated(extra) or _version(extra):
            return "same"  # a dated snapshot or the first release's version tag of the model named
        if not any(_is_size(p) for p in e_plain) and extra and all(_is_size(p) for p in extra):
            return "same"
    e_core, f_core = _undated(e_plain), _undated(f_plain)
    if (release := _same_release(e_core, f_core)) is not None:  # Open-Sora v1.2 for v1.0: another release
        return "same" if release else "variant"
    if e_core == f_core:
        return "variant"  # another snapshot, or an unpinned alias of a pinned id
    shorter, longer = sorted((e_core, f_core), key=len)
    if shorter and longer[: len(shorter)] == shorter and not _is_size(longer[len(shorter)]):
        return "variant"  # ``-Instruct`` / ``-chat`` / ``-mini`` added or dropped
    if any(_is_size(p) for p in e_core) and len(e_core) == len(f_core) and any(_is_size(p) for p in f_core):
        same_rest = all(a == b for a, b in zip(e_core, f_core) if not (_is_size(a) and _is_size(b)))
        if same_rest and [i for i, p in enumerate(e_core) if _is_size(p)] == [i for i, p in enumerate(f_core) if _is_size(p)]:
            return "variant"  # 1B for 3B
    return None


def _hosted_forms(name: str) -> list[str]:
    """A hub id as an inference host serves it: the vendor repeated after the organisation
    (``meta-llama/Meta-Llama-3.1-8B-Instruct``) and a host's ``-Turbo`` build of the same weights."""
    org, sep, bare = name.strip().rpartition("/")
    if not sep or not org or not bare or bare[0].isdigit():
        return []
    ps = pieces(bare)
    if ps and pieces(org)[:1] == ps[:1] and len(ps) > 1:
        ps = ps[1:]
    if len(ps) > 1 and ps[-1] == "turbo":
        ps = ps[:-1]
    return ["-".join(ps)] if ps != pieces(bare) else []


def _file_names(stem: str, spellings: list[str]) -> bool:
    """A weights file named after the model: its pieces contain one spelling's pieces, whole and in order
    (``imagenet21k_ViT-B_16`` names ViT-B/16; ``ViT-B_32`` does not; ``resnet50`` is not ResNet-5)."""
    have = pieces(stem)
    for spelling in spellings:
        want = pieces(_strip(spelling))
        if len(want) >= 2 and any(have[i : i + len(want)] == want for i in range(len(have) - len(want) + 1)):
            return True
    return False


def _related(canon: str, found: str, names: Names) -> str | None:
    best = relation(canon, names.canonical(found))
    for form in _hosted_forms(found) if best != "same" else []:
        again = relation(canon, names.canonical(form))
        if again == "same" or (again and best is None):
            best = again
    return best


# ----- where a model is used -----------------------------------------------------------------------------------
def _name_args(call, lex: dict) -> tuple[ast.expr | None, str, bool | None] | None:
    """The expression naming the model in a loader/client call (None: the call itself names it, or its name is
    passed in a way we cannot read, ``**kwargs``), a label, and whether the call certainly takes a model name
    (so an unreadable argument is "unverified", not nothing; None for a weights file read by path). None when the
    call uses no model."""
    node, qual, leaf = call.node, call.qual, call.leaf
    kw = {k.arg: k.value for k in node.keywords if k.arg}
    first = node.args[0] if node.args and not isinstance(node.args[0], ast.Starred) else None
    receiver_leaf = call.receiver().rsplit(".", 1)[-1]
    how = f"`{call.name}(...)`"
    if leaf == "from_pretrained":
        if any(word in receiver_leaf for word in lex["not_models"]):
            return None
        return (first if first is not None else kw.get("pretrained_model_name_or_path")), how, True
    if qual in lex["name_first"] or leaf in lex["name_first_leaves"]:
        return (first if first is not None else
                (kw.get("model_name") or kw.get("model_name_or_path") or kw.get("model"))), how, True
    if qual in ("torch.hub.load",):
        return (node.args[1] if len(node.args) >= 2 else kw.get("model")), how, True
    if qual.startswith(tuple(m + "." for m in lex["constructor_modules"])):
        if leaf == "get_model":
            return (first if first is not None else kw.get("name")), how, True
        if any(word in leaf.lower() for word in lex["not_constructors"]):
            return None
        return None, how, False  # torchvision.models.resnet50(...), keras.applications.ResNet50(...)
    if (qual in lex["checkpoint_loaders"] or leaf in lex["checkpoint_loader_leaves"]) and first is not None:
        return first, how, None  # None: a weights file, named by its path
    if "model" in kw and (leaf in _API_LEAVES or leaf in lex["model_keyword_leaves"] or leaf[:1].isupper()
                          or qual.startswith(tuple(lex["api_modules"]))):
        certain = leaf in _API_LEAVES or qual.startswith(tuple(lex["api_modules"]))
        return kw["model"], f"`{call.name}(model=...)`", certain
    return None


def _model_views(ctx, scope: str | None, lex: dict) -> list:
    """Files with a call that may name a model (the cases ``_name_args`` reads), chosen from the index: calls by
    leaf name, ``model=`` keywords (bindings) and constructor modules (a prefix test per call), so files without
    one are never parsed."""
    if not any(f.calls for f in ctx.index.files.values()):
        return views_mentioning(ctx, _NEEDLES, scope)
    index = ctx.index
    leaves = {"from_pretrained", *lex["name_first_leaves"], *lex["checkpoint_loader_leaves"]}
    quals = {"torch.hub.load", *lex["name_first"], *lex["checkpoint_loaders"]}
    hit = {c.span.file for leaf in sorted(leaves) for c in index.calls_with_leaf(leaf)}
    hit |= {c.span.file for leaf in sorted({q.rsplit(".", 1)[-1] for q in quals}) for c in index.calls_with_leaf(leaf)
            if c.qualname in quals or c.callee in quals}
    hit |= {b.span.file for b in index.bindings_named(["model"]) if b.kind is BindingKind.kwarg}
    prefixes = tuple(m + "." for m in lex["constructor_modules"])
    paths = [p for p in python_paths(ctx, scope)
             if p in hit or any(c.qualname.startswith(prefixes) for c in index.files[p].calls)]
    return [v for p in paths if (v := file_view(ctx, p)) is not None]


def find_uses(ctx, scope: str | None, rule: dict) -> list[Use]:
    lex = ctx.memo("protocol.model.lexicon", lambda: _lexicon(rule))
    out: list[Use] = []
    for view in _model_views(ctx, scope, lex):
        path = view.path
        for call in view.calls:
            if not scope_admits(scope, call.scope):
                continue
            found = _name_args(call, lex)
            if found is None:
                continue
            expr, how, certain = found
            if expr is None:
                if not certain:  # the constructor is the model
                    out.append(Use(call.leaf, path, call.line, call.end_line, how))
                else:
                    out.append(Use("", path, call.line, call.end_line, f"{how} without a readable name"))
                continue
            fn = view.function_of(call.scope)
            values = _strings(ctx, view, fn, expr, call.line, depth=2)
            if values is None:
                if certain:  # (a weights file whose path we cannot read says nothing either way)
                    out.append(Use("", path, call.line, call.end_line, f"{how} with `{ast.unparse(expr)}`"))
                continue
            timm = call.qual.startswith("timm.")
            for text, via, origin in values:
                if certain is None:
                    stem = re.sub(r"\.(?:npz|pth?|bin|ckpt|safetensors|h5|pkl|msgpack)$", "", text.replace("\\", "/").rsplit("/", 1)[-1])
                    out.append(Use(stem, path, call.line, call.end_line, how, via, origin, checkpoint=True))
                    continue
                name = _strip(text, timm) if timm else text
                out.append(Use(name, path, call.line, call.end_line, how, via, origin))
    out += _hydra_uses(ctx, scope, lex)
    unique = {(u.file, u.line, u.name, u.how): u for u in out}
    return [unique[k] for k in sorted(unique)]


# The keys a Hydra node of a loader names its model under (the first is from_pretrained's own parameter).
_HYDRA_NAME_KEYS = ("pretrained_model_name_or_path", "model_name_or_path", "model_name", "model", "repo_id")


def _hydra_uses(ctx, scope: str | None, lex: dict) -> list[Use]:
    """A config node ``{_target_: transformers.AutoModel.from_pretrained, pretrained_model_name_or_path: ...}``
    that ``hydra.utils.instantiate`` builds: the model is named in the config, no Python call holds it. Read only
    when the code instantiates Hydra nodes at all, and not for a function scope (a config has none)."""
    if scope and not looks_like_glob(scope):
        return []
    if not any(c.qualname.endswith("instantiate") or c.callee.endswith("instantiate")
               for c in ctx.index.calls_with_leaf("instantiate")):
        return []
    settings = config_settings(ctx)
    by_path = {(s.file, s.path): s for s in settings}
    prefixes = tuple(m + "." for m in lex["constructor_modules"])
    out: list[Use] = []
    for target in settings:
        if target.name != "_target_" or not isinstance(target.value, str) or (scope and not ctx.index.in_scope(target.file, scope)):
            continue
        qual = target.value.strip()
        leaf_name = qual.rsplit(".", 1)[-1]
        loader = leaf_name == "from_pretrained" or qual in lex["name_first"] or leaf_name in lex["name_first_leaves"]
        parent = target.path.rsplit(".", 1)[0] if "." in target.path else ""
        how = f"`{qual}` (a Hydra `_target_`)"
        if qual.startswith(prefixes) and not any(w in leaf_name.lower() for w in lex["not_constructors"]):
            out.append(Use(leaf_name, target.file, target.line, target.line, how))  # torchvision.models.resnet50
            continue
        if not loader:
            continue
        siblings = (by_path.get((target.file, f"{parent}.{k}" if parent else k)) for k in _HYDRA_NAME_KEYS)
        named = next((s for s in siblings if s is not None), None)
        if named is None or not isinstance(named.value, str) or not named.value.strip():
            out.append(Use("", target.file, target.line, target.line, f"{how} without a readable name"))
            continue
        timm = qual.startswith("timm.")
        name = _strip(named.value, timm) if timm else named.value
        out.append(Use(name, target.file, target.line, named.line, how, named))
    return out


def _strings(ctx, view, fn, expr: ast.expr, line: int, depth: int):
    """The model names an argument can hold: [(text, setting it came from, list element/call site)], or None."""
    nodes = walk_list(fn.node) if fn is not None else tree_nodes(ctx, view)
    if isinstance(expr, ast.Subscript) and isinstance(expr.slice, ast.Name):
        table = _string_table(ctx, view, fn, expr.value, line)  # MODELS[name] in `for name in MODELS:`
        keys = _strings(ctx, view, fn, expr.slice, line, depth) if table else None
        if keys and all(k in table[0] for k, _, _ in keys):
            return [(table[0][k], via, origin or (view.path, table[1])) for k, via, origin in keys]
    if isinstance(expr, ast.Name):
        registry = _items_loop(nodes, expr.id, line)  # `for key, hub_id in MODELS.items():`
        table = _string_table(ctx, view, fn, registry, line) if registry is not None else None
        if table:
            return [(v, None, (view.path, table[1])) for v in table[0].values()]
        loop = _loop_over(nodes, expr.id, line)
        if loop is not None:
            return _elements(ctx, view, fn, loop, line)
        if fn is not None and expr.id in fn.params and not _assigned(fn.node, expr.id, line):
            return _from_call_sites(ctx, fn, expr.id, depth) if depth > 0 else None
    resolver = Resolver(ctx, view, fn.node.body if fn else None)
    value = resolver.value(expr, line=line)
    via = resolver.trail[-1] if resolver.trail else None
    if isinstance(value, str) and value.strip():
        return [(value, via, None)]
    return None


def _elements(ctx, view, fn, iterable: ast.expr, line: int):
    if isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Attribute) and iterable.func.attr == "keys" and not iterable.args:
        iterable = iterable.func.value
    table = _string_table(ctx, view, fn, iterable, line)
    if table:  # `for name in MODELS:` over a registry: its keys
        return [(k, None, (view.path, table[1])) for k in table[0]]
    resolver = Resolver(ctx, view, fn.node.body if fn else None)
    value = resolver.value(iterable, line=line)
    via = resolver.trail[-1] if resolver.trail else None
    if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        bound = _bound_value(ctx, view, fn, iterable.id, line) if isinstance(iterable, ast.Name) else None  # ``MODELS = [...]``
        origin = (via.file, via.line) if via else (view.path, (bound or iterable).lineno)
        return [(v, via, origin) for v in value]
    return None


def _bound_value(ctx, view, fn, name: str, line: int) -> ast.expr | None:
    """The expression ``name`` was last bound to before ``line``: in the function, else at module level."""
    return assigned_before(ctx, fn.node.body if fn else [], name, line) or assigned_before(ctx, view.tree.body, name, 10**9)


def _string_table(ctx, view, fn, expr: ast.expr, line: int) -> tuple[dict[str, str], int] | None:
    """A name bound to a dict literal of strings (``MODELS = {"pythia": "EleutherAI/pythia-1.4b"}``): (the dict,
    its line). A registry of baselines a loop runs in turn names every model it holds."""
    if not isinstance(expr, ast.Name):
        return None
    node = _bound_value(ctx, view, fn, expr.id, line)
    if not isinstance(node, ast.Dict) or not node.keys:
        return None
    table = {}
    for key, value in zip(node.keys, node.values):
        if not (isinstance(key, ast.Constant) and isinstance(key.value, str) and isinstance(value, ast.Constant)
                and isinstance(value.value, str)):
            return None
        table[key.value] = value.value
    return table, node.lineno


def _enclosing_loops(nodes, line: int):
    """(target, iterable) of every ``for`` loop and comprehension generator enclosing ``line``, from the nodes of
    the body in ``ast.walk`` order (less those without fields: no loop, no comprehension)."""
    for sub in nodes:
        start = getattr(sub, "lineno", None)
        if start is None or not start <= line <= (getattr(sub, "end_lineno", None) or start):
            continue  # only a loop that encloses the call
        if isinstance(sub, (ast.For, ast.AsyncFor)):
            yield sub.target, sub.iter
        elif isinstance(sub, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
            yield from ((gen.target, gen.iter) for gen in sub.generators)  # [ask(m) for m in MODELS]


def _items_loop(nodes, name: str, line: int) -> ast.expr | None:
    """The dict of a ``for key, <name> in D.items()`` loop (or comprehension) enclosing ``line``."""
    found = None
    for target, iterable in _enclosing_loops(nodes, line):
        if (isinstance(target, ast.Tuple) and len(target.elts) == 2 and isinstance(target.elts[1], ast.Name)
                and target.elts[1].id == name and isinstance(iterable, ast.Call) and not iterable.args
                and isinstance(iterable.func, ast.Attribute) and iterable.func.attr == "items"):
            found = iterable.func.value
    return found


def _loop_over(nodes, name: str, line: int) -> ast.expr | None:
    """The iterable of a ``for <name> in ...`` loop (or comprehension) enclosing ``line``."""
    found = None
    for target, iterable in _enclosing_loops(nodes, line):
        if isinstance(target, ast.Name) and target.id == name:
            found = iterable
    return found


def _assigned(node: ast.AST, name: str, line: int) -> bool:
    for sub in ast.walk(node):
        if isinstance(sub, (ast.Assign, ast.AnnAssign, ast.AugAssign)) and sub.lineno < line:
            targets = sub.targets if isinstance(sub, ast.Assign) else [sub.target]
            if any(isinstance(t, ast.Name) and t.id == name for target in targets for t in ast.walk(target)):
                return True
    return False


def _from_call_sites(ctx, fn, param: str, depth: int):
    """A parameter of a repo function: the names its callers pass (``query(model_name, prompt)`` in a loop)."""
    index = fn.params.index(param)
    method = bool(fn.params) and fn.params[0] in ("self", "cls")
    out = []
    for view, call in _calls_named(ctx, fn.name):
        path = view.path
        expr = next((k.value for k in call.node.keywords if k.arg == param), None)
        position = index - (1 if method and "." in call.name else 0)
        if expr is None and 0 <= position < len(call.node.args):
            expr = call.node.args[position]
        if expr is None:
            continue
        values = _strings(ctx, view, view.function_of(call.scope), expr, call.line, depth - 1)
        if values is None:
            return None  # one caller we cannot read: the parameter is not known
        out += [(t, via, origin or (path, call.line)) for t, via, origin in values]
    return out or None


def _calls_named(ctx, name: str) -> list:
    """(view, call) for every call whose leaf is ``name``, once per run (methods of one name share the scan)."""
    return ctx.memo(f"protocol.model.calls:{name}",
                    lambda: [(v, c) for v in views_mentioning(ctx, (name + "(",)) for c in v.calls if c.leaf == name])


def _lexicon(rule: dict) -> dict:
    lex = rule.get("lexicon", {})
    return {
        "not_models": tuple(lex.get("not_models", [])),
        "name_first": frozenset(lex.get("name_first", [])),
        "name_first_leaves": frozenset(lex.get("name_first_leaves", [])),
        "constructor_modules": tuple(lex.get("constructor_modules", [])),
        "not_constructors": tuple(lex.get("not_constructors", [])),
        "model_keyword_leaves": frozenset(lex.get("model_keyword_leaves", [])),
        "checkpoint_loaders": frozenset(lex.get("checkpoint_loaders", [])),
        "checkpoint_loader_leaves": frozenset(lex.get("checkpoint_loader_leaves", [])),
        "api_modules": tuple(lex.get("api_modules", [])),
    }


# ----- verdict ----------------------------------------------------------------------------------------------
def _evidence(ctx, use: Use) -> list:
    ev = [evidence(ctx, use.file, use.line, "rule", end=use.end_line)]
    if use.via is not None:
        ev.append(evidence(ctx, use.via.file, use.via.line, "effective"))
    elif use.origin is not None and use.origin != (use.file, use.line):
        ev.append(evidence(ctx, use.origin[0], use.origin[1], "effective"))
    return ev


def evaluate(params: dict, ctx, scope: str | None, rule: dict) -> CheckResult:
    names = ctx.memo("protocol.model.names", lambda: Names(rule))
    expect = str(params["expect"])
    canon = names.canonical(expect)
    uses = ctx.memo(f"protocol.model.uses:{scope or ''}", lambda: find_uses(ctx, scope, rule))  # one scan per scope
    spellings = [expect, canon, *names.aliases(canon)]
    known = [(u, _related(canon, u.name, names)) for u in uses if u.name and not u.checkpoint]
    same = [u for u, r in known if r == "same"]
    same += [u for u in uses if u.checkpoint and _file_names(u.name, spellings)]
    if same:
        u = same[0]
        where = f" (from `{u.via.path}` at {u.via.file}:{u.via.line})" if u.via else ""
        ev = [e for s in same[:3] for e in _evidence(ctx, s)]
        return CheckResult.passed(KIND, f"{canon} used via {u.how} with {u.name!r} ({u.file}:{u.line}){where}",
                                  sorted_evidence(ev))
    variants = [u for u, r in known if r == "variant"]
    if variants:
        found = sorted({u.name for u in variants})
        ev = [e for u in variants[:3] for e in _evidence(ctx, u)]
        return CheckResult.failed(KIND, Status.mismatch, f"uses {', '.join(found)}, not {canon} "
                                  f"({variants[0].file}:{variants[0].line})", sorted_evidence(ev), found=found)
    unresolved = [u for u in uses if not u.name]
    if unresolved:
        u = unresolved[0]
        return CheckResult.unverified(KIND, f"the model name of {u.how} ({u.file}:{u.line}) comes from a setting "
                                      "that cannot be resolved", evidence=[evidence(ctx, u.file, u.line, "rule",
                                                                                    end=u.end_line)])
    seen = name_mentions(ctx, spellings)
    others = sorted({u.name for u, _ in known})
    also = f"; it uses {', '.join(others)}" if others else ""
    if seen:
        return CheckResult.failed(KIND, Status.missing, f"{canon} is only mentioned ({seen[0].file}:{seen[0].line}); "
                                  f"nothing loads or queries it{also}", seen, taxonomy="mention")
    return CheckResult.failed(KIND, Status.missing, f"no code loads or queries {canon}{also}", [])

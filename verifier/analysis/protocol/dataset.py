"""Rule ``dataset``: the named dataset is loaded (torchvision / torchtext / tfds / HF ``load_dataset`` / keras /
sklearn / data-file readers / configs), with the aliases of rules/protocol/dataset.yaml ("CIFAR-10" = ``CIFAR10``
= ``cifar10``).

A name outside the alias table (ERA5, a custom "Navier-Stokes 2D" set) is matched by its own spellings on
word-piece boundaries (``era5.nc``, ``ns_2d.npy``, ``ERA5Dataset``), and only where data is loaded: an argument
of a loader, a dataset class or ``load_*`` function that itself reads data, a dispatch branch that loads, or a
setting a loader's argument reads. A comment, a docstring or a print is a mention, never a load.
"""

from __future__ import annotations

import ast
import functools
import re
from dataclasses import dataclass

from verifier.analysis.protocol.common import (
    acronym,
    const_str,
    dotted,
    evidence,
    file_view,
    leaf,
    lower_text,
    name_mentions,
    name_spans,
    nodes_of,
    norm,
    outer_chains,
    python_paths,
    scope_admits,
    sorted_evidence,
    spans_of,
    spelling_pattern,
    text_of,
    tokens,
)
from verifier.analysis.protocol.values import assigned_before, config_settings, option_settings, setting
from verifier.index.names import qualify
from verifier.results import CheckResult, Evidence, Status

KIND = "protocol"

# Keywords of a loader call that carry a dataset's name or path.
_PATH_KEYWORDS = ("path", "name", "dataset", "data_dir", "root", "data_files", "repo_id", "filename", "file",
                  "filepath", "file_path", "fname", "data_path", "paths", "urlpath", "path_or_buf", "dataset_name")
# Word pieces a dataset class or loader function may add to the dataset's name (``ERA5Dataset``, ``load_boolq``).
_DATA_WORDS = frozenset("dataset datasets data set loader dataloader datamodule module reader ds dm split splits "
                        "train val valid test raw full".split())
_LOADER_PREFIXES = ("load", "read", "fetch", "get", "build", "make", "open", "download", "prepare", "create")
# Loader-looking calls that read a model, not data (``load_state_dict``, ``load_checkpoint``).
_NOT_DATA = frozenset("state dict checkpoint ckpt model models weights pretrained config cfg optimizer tokenizer "
                      "args yaml".split())
# Paths that are a run's outputs, weights or configs even when they carry the dataset's name (``cifar10_best.pt``,
# ``configs/era5.yaml``).
_NOT_DATA_DIRS = frozenset("checkpoints checkpoint ckpt ckpts weights results outputs output logs runs wandb "
                           "predictions preds samples configs config conf".split())
_NOT_DATA_SUFFIXES = (".pt", ".pth", ".ckpt", ".safetensors", ".bin", ".onnx", ".pb", ".yaml", ".yml", ".toml",
                      ".cfg", ".ini", ".py", ".sh", ".md", ".log")
# File-name pieces of statistics derived from a dataset (``celeba64_inception.npy``, ``era5_mean_std.npz``).
_DERIVED = frozenset("stats statistics inception mean std normalization normalisation fid vocab tokenizer".split())
_RANDOM = frozenset("rand randn randint rand_like randn_like normal uniform random standard_normal".split())
# Name pieces of a setting that selects a dataset by name; with the path words, of one that may point at its files.
_NAME_SETTING_WORDS = ("data", "task", "name", "corpus", "benchmark", "env")
_SETTING_WORDS = (*_NAME_SETTING_WORDS, "path", "file", "dir", "root")


@dataclass(frozen=True)
class Load:
    dataset: str  # canonical name ("" for a loader whose dataset comes from a setting)
    file: str
    line: int
    end_line: int
    how: str
    dynamic: bool = False  # a loader whose dataset name comes from a setting
    reads: tuple[str, ...] = ()  # the settings (``args.dataset``, ``cfg.data_path``) a dynamic loader's arguments read
    reach_only: bool = False  # a generic file reader: counts only when a matching setting reaches its arguments
    synthetic: bool = False  # a dataset class named after it that reads no data
    by_path: bool = False  # named only by the path a file reader opens (weaker than a loader or class by name)


@dataclass(frozen=True)
class Wanted:
    """The expected dataset: its canonical name and every normalised spelling of it."""

    name: str
    spellings: frozenset[str]
    names: tuple[str, ...]  # raw spellings, for the text prefilter and mentions
    known: bool  # in the alias table


def alias_table(rule: dict) -> dict[str, str]:
    """normalised alias -> canonical name."""
    table: dict[str, str] = {}
    for entry in rule.get("lexicon", {}).get("datasets", []):
        canon = entry["name"]
        for alias in [canon] + list(entry.get("aliases", [])):
            table.setdefault(norm(alias), canon)
    return table


def canonical(name: str, table: dict[str, str]) -> str:
    return table.get(norm(name), name)


def _dimension_moved(name: str) -> list[str]:
    """"1D Navier-Stokes" is also written ``navier_stokes_1d``: a leading or trailing 1D/2D/3D moves freely."""
    match = re.fullmatch(r"\s*([123]D)[\s_\-]+(.+?)\s*|\s*(.+?)[\s_\-]+([123]D)\s*", name, re.IGNORECASE)
    if not match:
        return []
    return [f"{match.group(2)} {match.group(1)}"] if match.group(1) else [f"{match.group(4)} {match.group(3)}"]


def wanted(expect: str, rule: dict) -> Wanted:
    table = alias_table(rule)
    canon = canonical(expect, table)
    names = [expect, canon, *_dimension_moved(expect)]
    for entry in rule.get("lexicon", {}).get("datasets", []):
        if entry["name"] == canon:
            names += [str(a) for a in entry.get("aliases", [])]
    spellings = {norm(n) for n in names} | {a for a in map(acronym, {expect, canon}) if a}
    return Wanted(canon, frozenset(s for s in spellings if s), tuple(dict.fromkeys(names)), norm(expect) in table)


def _not_data_path(text: str) -> bool:
    pieces = [p.lower() for p in text.replace("\\", "/").split("/")]
    return (bool(set(pieces) & _NOT_DATA_DIRS) or pieces[-1].endswith(_NOT_DATA_SUFFIXES)
            or bool(set(tokens(pieces[-1])) & _DERIVED))


def names_dataset(text: str, want: Wanted, table: dict[str, str], table_longest: int) -> bool:
    """Does a loader's string name the expected dataset on word-piece boundaries, and not as part of a longer
    name of another dataset (``fashion_mnist`` is not MNIST)?"""
    return not _not_data_path(text) and _names(text, want, table, table_longest)


def _names(text: str, want: Wanted, table: dict[str, str], table_longest: int) -> bool:
    pieces = tokens(text)
    mine = spans_of(pieces, want.spellings, max(map(len, want.spellings)))
    if not mine:
        return False
    others = [(a, b) for a, b in spans_of(pieces, set(table), table_longest)
              if table["".join(pieces[a:b])] != want.name]
    return any(not any(a <= i and j <= b and b - a > j - i for a, b in others) for i, j in mine)


# ----- what counts as reading data --------------------------------------------------------------------------
def _loader_kind(qual: str, name_leaf: str, lex: dict) -> str | None:
    """"string" (a dataset loader taking a name: ``load_dataset``, ``tfds.load``), "file" (a data-file reader:
    ``np.load``, ``xr.open_dataset``, ``open``), or None."""
    return _kind_of(qual, name_leaf, lex["file_loaders"], lex["string_loaders"])


@functools.lru_cache(maxsize=1 << 16)
def _kind_of(qual: str, name_leaf: str, file_loaders: frozenset[str], string_loaders: frozenset[str]) -> str | None:
    """:func:`_loader_kind`, once per distinct call name (every dataset check of a spec asks of every call)."""
    file_suffixes, string_suffixes = _loader_suffixes(file_loaders, string_loaders)
    if qual in file_loaders or qual.endswith(file_suffixes):
        return "file"
    if name_leaf in string_loaders or qual.endswith(string_suffixes):
        return "string"
    return None


def _file_names(ctx, path: str, facts) -> tuple[set[str], frozenset[str]]:
    """A file's call leaves and normalised read names, once per run (the loader prefilter of every check)."""
    return ctx.memo(f"protocol.dataset.names:{path}",
                    lambda: ({leaf(c.callee) for c in facts.calls}, frozenset(norm(r) for r in facts.reads)))


@functools.lru_cache(maxsize=16)
def _loader_suffixes(file_loaders: frozenset[str], string_loaders: frozenset[str]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``.np.load``-style suffixes of the dotted file loaders and ``.load_dataset`` of the string loaders: built
    once, not per call of the repo (``str.endswith`` of a tuple is one C loop)."""
    return tuple("." + f for f in file_loaders if "." in f), tuple("." + s for s in string_loaders)


def _loads_data(qual: str, name_leaf: str, lex: dict) -> bool:
    """A call that reads data: a loader, a dataset module's class, or a ``load_*``/``read_*`` helper that is not
    about weights or configs."""
    if name_leaf == "load" and not qual.startswith(lex["dataset_modules"]):
        return qual in lex["file_loaders"]
    if _loader_kind(qual, name_leaf, lex) or qual.startswith(lex["dataset_modules"]):
        return True
    pieces = tokens(name_leaf)
    return bool(pieces) and pieces[0] in ("load", "read", "fetch", "open", "download") and len(pieces) > 1 \
        and not (set(pieces) & _NOT_DATA)


def _body_loads(ctx, node: ast.AST, imports: dict[str, str], lex: dict, depth: int = 1) -> bool:
    """Does this code read data, itself or through a function/class of the repo it calls (``depth`` levels)?"""
    for sub in ast.walk(node):
        if not isinstance(sub, ast.Call):
            continue
        name = dotted(sub.func)
        if not name:
            continue
        qual, name_leaf = qualify(name, imports), leaf(name)
        if _loads_data(qual, name_leaf, lex):
            return True
        if depth > 0:
            for found in _definitions(ctx, name_leaf):
                if found[1] is not node and _body_loads(ctx, found[1], found[2], lex, depth - 1):
                    return True
    return False


def _definitions(ctx, name: str) -> list[tuple[str, ast.AST, dict[str, str]]]:
    """The repo's own definitions of a function or class name: (file, node, that file's imports)."""
    def make():
        out = []
        try:
            defs = ctx.index.definitions_named(name)
        except AttributeError:
            return out
        for d in defs:
            if d.name != name:
                continue
            view = file_view(ctx, d.span.file)
            if view is None:
                continue
            for node in nodes_of(ctx, view, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                if node.name == name \
                        and node.lineno == d.span.line:
                    out.append((d.span.file, node, view.imports))
        return out

    return ctx.memo(f"protocol.dataset.defs:{name}", make)


# ----- where loaders are ------------------------------------------------------------------------------------
def _candidate_views(ctx, scope, table: dict[str, str], lex: dict, want: Wanted, reach: bool) -> list:
    """Files that name a known dataset, spell the expected one, or call a loader, decided from the index facts
    when it has them (no parse); a hand-built index without facts falls back to parsing every file."""
    paths = python_paths(ctx, scope)
    if any(f.calls or f.reads for f in ctx.index.files.values()):
        loaders = set(lex["string_loaders"]) - {"make"}
        file_leaves = {leaf(f) for f in lex["file_loaders"]}
        pattern = spelling_pattern(want.names + tuple(s for s in want.spellings if s not in map(norm, want.names)))
        keep = []
        for path in paths:
            facts = ctx.index.files[path]
            reads = facts.reads
            dynamic = ({"getattr"} if "datasets" in reads else set()) | ({"make"} if reads & {"gym", "gymnasium"} else set())
            leaves, normed_reads = _file_names(ctx, path, facts)
            if (leaves & (loaders | dynamic) or any(n.startswith(("load_", "fetch_")) for n in leaves)
                    or any(r in table for r in normed_reads)
                    or (reach and leaves & file_leaves)
                    or (pattern is not None and _spelled_where_loadable(ctx, path, pattern, want.spellings))):
                keep.append(path)
        paths = keep
    return [v for p in paths if (v := file_view(ctx, p)) is not None]


def _spelled_where_loadable(ctx, path: str, pattern, spellings: frozenset[str]) -> bool:
    """The expected name, on word-piece boundaries, inside a string on its line or in an identifier a class or
    loader could carry (``ERA5Dataset``, ``load_era5``): ``import math`` does not make a file a candidate for
    MATH, nor ``"translate"`` for SL."""
    low = lower_text(ctx, path)
    if not pattern.search(low):
        return False
    raw = text_of(ctx, path)
    if len(raw) != len(low):
        return True  # lower-casing changed the length (some Unicode): offsets would not line up, so look
    for m in pattern.regex.finditer(low):
        start, end = m.start(), m.end()
        while start > 0 and (raw[start - 1].isalnum() or raw[start - 1] in "_-./"):
            start -= 1
        while end < len(raw) and (raw[end].isalnum() or raw[end] in "_-./"):
            end += 1
        if not name_spans(raw[start:end], spellings):
            continue
        prefix = raw[low.rfind("\n", 0, m.start()) + 1 : m.start()]
        if prefix.count('"') % 2 or prefix.count("'") % 2:
            return True
        ident = raw[start:end].rsplit(".", 1)[-1]
        if ident[:1].isupper() or ident.lower().startswith(_LOADER_PREFIXES):
            return True
    return False


def _enclosing_body(view, scope: str) -> list[ast.stmt]:
    fn = view.function_of(scope)
    return fn.node.body if fn is not None else []


def _arg_texts(ctx, view, call, exprs: list[ast.expr]) -> tuple[list[str], tuple[str, ...]]:
    """String constants an argument is built from (``os.path.join(root, "era5.nc")``, f-strings, a local
    ``path = "data/ns_2d.npy"``), and the settings it reads (``args.data_path``)."""
    texts: list[str] = []
    reads: list[str] = []
    fn_body, module_body = _enclosing_body(view, call.scope), view.tree.body
    for expr in exprs:
        values = [expr]
        for name in sorted({n.id for n in ast.walk(expr) if isinstance(n, ast.Name)}):
            bound = assigned_before(ctx, fn_body, name, call.line) or assigned_before(ctx, module_body, name, call.line)
            if bound is not None:
                values.append(bound)
        for value in values:
            texts += [n.value for n in ast.walk(value) if isinstance(n, ast.Constant) and isinstance(n.value, str)]
            reads += [c for c in outer_chains(value) if c.split(".")[0] not in view.imports]  # not os.path.join
    return texts, tuple(dict.fromkeys(reads))


def find_loads(ctx, scope: str | None, rule: dict, want: Wanted | None = None, reach: bool = False) -> list[Load]:
    lex = _lexicon(rule)
    table = alias_table(rule)
    table_longest = max(map(len, table), default=0)
    want = want or Wanted("", frozenset(), (), False)
    modules = lex["dataset_modules"]
    out: list[Load] = []
    for view in _candidate_views(ctx, scope, table, lex, want, reach):
        for call in view.calls:
            if not scope_admits(scope, call.scope):
                continue
            key = norm(call.leaf)
            if key in table and (call.qual.startswith(modules) or call.leaf[:1].isupper() or "datasets" in call.qual):
                out.append(Load(table[key], view.path, call.line, call.end_line, f"`{call.name}(...)`"))
                continue
            if call.leaf.startswith(("load_", "fetch_")) and norm(call.leaf[5:] if call.leaf.startswith("load_") else call.leaf[6:]) in table:
                name = table[norm(call.leaf.split("_", 1)[1])]
                out.append(Load(name, view.path, call.line, call.end_line, f"`{call.name}()`"))
                continue
            kind = _loader_kind(call.qual, call.leaf, lex)
            if kind is not None:
                out.extend(_loader_call_loads(ctx, view, call, kind, want, table, table_longest))
            elif call.name == "getattr" and len(call.node.args) >= 2 and "datasets" in (ast.unparse(call.node.args[0])):
                _, reads = _arg_texts(ctx, view, call, [call.node.args[1]])
                out.append(Load("", view.path, call.line, call.end_line, "`getattr(datasets, <setting>)`", dynamic=True,
                                reads=reads))
            elif want.spellings and _named_after(call.leaf, want):
                out.extend(_named_loader(ctx, view, call, want, lex))
        out.extend(_dispatches(ctx, view, want, table, table_longest, lex))
    return sorted(set(out), key=lambda l: (l.file, l.line, l.dataset, l.how))


def _loader_call_loads(ctx, view, call, kind: str, want: Wanted, table, table_longest: int) -> list[Load]:
    node = call.node
    if kind == "file" and call.leaf == "open":
        mode = const_str(node.args[1]) if len(node.args) > 1 else const_str(call.kwarg("mode"))
        if mode and set(mode) & set("wax+"):
            return []  # writes a file
        exprs = node.args[:1]
    else:
        exprs = list(node.args[:2])
    exprs += [kw.value for kw in node.keywords if kw.arg in _PATH_KEYWORDS]
    texts, reads = _arg_texts(ctx, view, call, exprs)
    out: list[Load] = []
    for text in reversed(texts):
        if _not_data_path(text):
            continue
        pieces = [text] + text.replace("\\", "/").split("/")
        known = next((table[norm(p)] for p in pieces if norm(p) in table), None)
        if known:
            out.append(Load(known, view.path, call.line, call.end_line, f"`{call.name}({text!r}...)`",
                            by_path=kind == "file"))
        elif want.spellings and names_dataset(text, want, table, table_longest):
            out.append(Load(want.name, view.path, call.line, call.end_line, f"`{call.name}({text!r}...)`",
                            by_path=kind == "file"))
    if not out and exprs:
        # Keyed by a setting. A file reader, or a loader with a literal argument, only counts when a setting
        # naming the dataset reaches its arguments.
        literal = any(const_str(e) for e in exprs)
        out.append(Load("", view.path, call.line, call.end_line, f"`{call.name}(<setting>)`", dynamic=True,
                        reads=reads, reach_only=kind == "file" or literal))
    return out


def _named_after(name: str, want: Wanted) -> bool:
    """``ERA5Dataset``, ``NavierStokes2DDataset``, ``load_boolq``, ``get_pdebench_data``: the expected name plus
    only data words (and a loader verb in front)."""
    pieces = tokens(name)
    if pieces and pieces[0] in _LOADER_PREFIXES:
        pieces = pieces[1:]
    elif not name[:1].isupper():
        return False
    for i, j in spans_of(pieces, want.spellings, max(map(len, want.spellings))):
        if all(p in _DATA_WORDS for p in pieces[:i] + pieces[j:]):
            return True
    return False


def _named_loader(ctx, view, call, want: Wanted, lex: dict) -> list[Load]:
    """A class or loader named after the dataset is a load when the library provides it or, when the repo
    defines it, when its code reads data; one that reads nothing (random tensors in place of the data) is not."""
    defs = _definitions(ctx, call.leaf)
    if not defs:
        return [Load(want.name, view.path, call.line, call.end_line, f"`{call.name}(...)`")]
    if any(_body_loads(ctx, node, imports, lex) for _, node, imports in defs):
        return [Load(want.name, view.path, call.line, call.end_line, f"`{call.name}(...)`, which reads data")]
    file, node, imports = defs[0]
    if not _draws_random(node, imports):
        return []  # builds its data some other way (a solver, a download we do not know): not evidence either way
    return [Load(want.name, file, node.lineno, node.lineno, f"`{call.leaf}` reads no data", dynamic=True,
                 reach_only=True, synthetic=True)]


def _draws_random(node: ast.AST, imports: dict[str, str]) -> bool:
    """Random tensors (``torch.randn``, ``np.random.rand``): a dataset made up in place of the real one."""
    for sub in ast.walk(node):
        if isinstance(sub, ast.Call) and (name := dotted(sub.func)):
            qual = qualify(name, imports)
            if leaf(name) in _RANDOM and qual.split(".")[0] in ("torch", "numpy", "jax", "random", "tensorflow"):
                return True
    return False


def _dispatches(ctx, view, want: Wanted, table, table_longest: int, lex: dict) -> list[Load]:
    """A registry / dispatch on a dataset-name string: ``{"cifar10": CIFAR10, ...}``, ``if name == "era5":``.
    A known name counts as it is; the expected name outside the table only where the branch loads data."""
    out: list[Load] = []
    for node in nodes_of(ctx, view, (ast.Dict, ast.Compare, ast.If, ast.Match)):  # the nodes a dispatch is made of
        pairs: list[tuple[ast.expr, list[ast.AST] | None]] = []
        if isinstance(node, ast.Dict):
            pairs = [(k, [v] if isinstance(v, (ast.Name, ast.Attribute, ast.Call, ast.Lambda)) else None)
                     for k, v in zip(node.keys, node.values) if k is not None]
        elif isinstance(node, ast.Compare):
            pairs = [(k, None) for k in [node.left] + list(node.comparators)]
        elif isinstance(node, ast.If) and isinstance(node.test, ast.Compare):
            pairs = [(k, node.body) for k in [node.test.left] + list(node.test.comparators)]
        elif isinstance(node, ast.Match):
            pairs = [(c.pattern.value, c.body) for c in node.cases if isinstance(c.pattern, ast.MatchValue)]
        for key, branch in pairs:
            text = const_str(key)
            if not text:
                continue
            if norm(text) in table and not isinstance(node, (ast.If, ast.Match)) and not (
                    isinstance(node, ast.Dict) and branch is None):  # {"adult": "🧑"} is no registry
                out.append(Load(table[norm(text)], view.path, key.lineno, key.lineno, f"dispatch on {text!r}", dynamic=True))
            elif (want.spellings and not want.known and branch is not None and norm(text) not in table
                  and names_dataset(text, want, table, table_longest)
                  and any(_branch_loads(ctx, b, view.imports, lex) for b in branch)):
                out.append(Load(want.name, view.path, key.lineno, key.lineno, f"dispatch on {text!r} to a loader",
                                dynamic=True))
    return out


def _branch_loads(ctx, node: ast.AST, imports: dict[str, str], lex: dict) -> bool:
    """A dispatch branch loads data: its code does, or it names a loader (``{"era5": ERA5Dataset}``)."""
    if isinstance(node, (ast.Name, ast.Attribute)):
        name = dotted(node) or ""
        qual = qualify(name, imports)
        return _loads_data(qual, leaf(name), lex) or any(
            _body_loads(ctx, found, found_imports, lex) for _, found, found_imports in _definitions(ctx, leaf(name)))
    return _body_loads(ctx, node, imports, lex)


def _lexicon(rule: dict) -> dict:
    lex = rule.get("lexicon", {})
    return {
        "string_loaders": frozenset(lex.get("string_loaders", [])),
        "file_loaders": frozenset(lex.get("file_loaders", [])),
        "dataset_modules": tuple(lex.get("dataset_modules", [])),
    }


# ----- settings -------------------------------------------------------------------------------------------
def _named_settings(ctx, want: Wanted, table: dict[str, str], table_longest: int) -> list:
    """Config keys, argparse defaults and launch flags whose value names the dataset (``dataset: era5``,
    ``data_path: /data/pdebench/2D_CFD.h5``, ``--dataset boolq``): evidence only once a loader reads them."""
    return [s for s in config_settings(ctx) + option_settings(ctx)
            if isinstance(s.value, str) and any(t in s.name.lower() for t in _SETTING_WORDS)
            and (canonical(s.value, table) == want.name or names_dataset(s.value, want, table, table_longest))]


def _known_name_settings(ctx, want: Wanted, table: dict[str, str]) -> list:
    """A data setting whose whole value is a known dataset's alias (``dataset: CIFAR10``)."""
    return [s for s in config_settings(ctx) + option_settings(ctx)
            if isinstance(s.value, str) and canonical(s.value, table) == want.name
            and any(t in s.name.lower() for t in _NAME_SETTING_WORDS)]


def _effective(ctx, named, want: Wanted, table: dict[str, str], table_longest: int) -> bool:
    """The setting still names the dataset at run time (a launch flag may override a default)."""
    eff = setting(ctx, named.name)
    if eff is None or eff.value == named.value or not isinstance(eff.value, str):
        return True
    return canonical(eff.value, table) == want.name or names_dataset(eff.value, want, table, table_longest)


def _reads_setting(load: Load, named) -> bool:
    """Does the loader's argument read this setting (``args.dataset``, ``cfg["data_path"]``, ``cfg.data.path``)?"""
    path = named.path.replace("-", "_").split(".")
    for chain in load.reads:
        parts = chain.split(".")
        if len(parts) < 2 or parts[-1] != named.name:
            continue
        if named.name not in ("name", "path", "file", "dir", "root") or len(path) < 2 or parts[-2] == path[-2]:
            return True
    return False


def evaluate(params: dict, ctx, scope: str | None, rule: dict) -> CheckResult:
    table = alias_table(rule)
    expect = str(params["expect"])
    table_longest = max(map(len, table), default=0)
    want = wanted(expect, rule)
    settings = _named_settings(ctx, want, table, table_longest)
    loads = find_loads(ctx, scope, rule, want, reach=bool(settings))
    direct = sorted((l for l in loads if l.dataset == want.name and not l.dynamic),
                    key=lambda l: (l.by_path, l.file, l.line))
    if direct:
        ev = [evidence(ctx, l.file, l.line, "rule", end=l.end_line) for l in direct[:4]]
        return CheckResult.passed(KIND, f"{want.name} loaded via {direct[0].how} ({direct[0].file}:{direct[0].line})",
                                  sorted_evidence(ev))
    # A setting names the dataset and a loader's argument reads that setting.
    priority = {"launch": 0, "config": 1}
    reached = [(s, l) for s in sorted(settings, key=lambda s: (priority.get(s.source, 2), s.file, s.line))
               for l in loads if l.dynamic and not l.dataset and _reads_setting(l, s)
               and _effective(ctx, s, want, table, table_longest)]
    if reached:
        s, l = reached[0]
        ev = [evidence(ctx, s.file, s.line, "effective"), evidence(ctx, l.file, l.line, "rule", end=l.end_line)]
        return CheckResult.passed(KIND, f"{want.name} selected by `{s.name}` ({s.file}:{s.line}), which {l.how} "
                                  f"reads ({l.file}:{l.line})", sorted_evidence(ev))
    dispatch = [l for l in loads if l.dynamic and l.dataset == want.name and not l.reach_only]
    if want.known:
        # A known dataset name as a data setting, and any loader keyed by a setting or a name dispatch.
        loose = _known_name_settings(ctx, want, table)
        dynamic_loaders = [l for l in loads if l.dynamic and not l.dataset and not l.reach_only]
        if (loose or dispatch) and (dynamic_loaders or dispatch):
            ev = [evidence(ctx, s.file, s.line, "effective") for s in loose[:2]]
            ev += [evidence(ctx, l.file, l.line, "rule", end=l.end_line) for l in (dispatch + dynamic_loaders)[:3]]
            where = loose[0] if loose else dispatch[0]
            return CheckResult.passed(KIND, f"{want.name} selected by setting/dispatch ({where.file}:{where.line}) "
                                      "and loaded by name", sorted_evidence(ev))
    elif dispatch:
        ev = [evidence(ctx, l.file, l.line, "rule", end=l.end_line) for l in dispatch[:3]]
        return CheckResult.passed(KIND, f"{want.name} loaded by a {dispatch[0].how} ({dispatch[0].file}:{dispatch[0].line})",
                                  sorted_evidence(ev))
    others = sorted({l.dataset for l in loads if l.dataset and l.dataset != want.name})
    if others:
        wrong = [l for l in loads if l.dataset in others and not l.dynamic] or [l for l in loads if l.dataset in others]
        ev = [evidence(ctx, l.file, l.line, "rule", end=l.end_line) for l in wrong[:4]]
        return CheckResult.failed(KIND, Status.mismatch, f"loads {', '.join(others)}, not {want.name}", sorted_evidence(ev),
                                  found=others)
    synthetic = [l for l in loads if l.synthetic]
    if synthetic:
        l = synthetic[0]
        ev = [Evidence(l.file, l.line, l.end_line, evidence(ctx, l.file, l.line).snippet, "stub",
                       f"named after {want.name} but reads no data")]
        return CheckResult.failed(KIND, Status.stub, f"{l.how} ({l.file}:{l.line}): named after {want.name}, "
                                  "it makes its data up", ev)
    seen = name_mentions(ctx, want.names, accept=lambda line: _names(line, want, table, table_longest))
    if seen:
        return CheckResult.failed(KIND, Status.missing, f"{want.name} is only mentioned ({seen[0].file}:{seen[0].line}); "
                                  "nothing loads it", seen, taxonomy="mention")
    return CheckResult.failed(KIND, Status.missing, f"no code loads {want.name}", [])

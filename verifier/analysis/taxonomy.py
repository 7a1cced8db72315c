"""The stub taxonomy shared by all check kinds: is the code that implements a claim real, and does it run?

SA-Bench's failure analysis needs more than "found / not found": generated repos are full of placeholder bodies,
functions that ignore their inputs, code nothing calls, and code that could never import. A careful reader
scores those below a working implementation, so each class carries a score cap:

    implemented  1.0   a real body, reached from an entry point, runnable
    unwired      0.75  correct-looking code that no entry point reaches
    unrunnable   0.75  imports a repo module that does not exist, reads a name defined nowhere, or sits in a
                       file that does not parse (truncated generation)
    stub         0.0   pass / ... / NotImplementedError / a body that is only a to-do note / constant or random return ignoring inputs /
                       a metric returning a literal / a docstring or comment claiming what the body lacks
    mention      0.0   the name appears (comment, string, config key) but no logic implements it
"""

from __future__ import annotations

import ast
import builtins
import re
from dataclasses import dataclass

from verifier.index import stubs as index_stubs
from verifier.index.facts import Definition
from verifier.results import Evidence
from verifier import pysource

CAPS = {"implemented": 1.0, "unwired": 0.75, "unrunnable": 0.75, "stub": 0.0, "mention": 0.0}
_BUILTINS = frozenset(dir(builtins)) | {"__file__", "__name__", "__doc__", "__spec__", "__builtins__", "__class__",
                                         "__package__", "__loader__", "__path__", "__dict__", "__annotations__",
                                         "display", "get_ipython", "__debug__"}
_CLAIM = re.compile(r"\b(uses?|using|via|computes?|calls?|implements?|implemented with|based on)\b", re.IGNORECASE)
_CODE_REF = re.compile(r"`([A-Za-z_][\w.]*)(?:\(\))?`|\b([A-Za-z_]\w*\.[A-Za-z_][\w.]*)\(")
_METRIC_NAME = re.compile(r"(fid|inception|score|metric|accuracy|acc|bleu|rouge|perplexity|ppl|iou|psnr|ssim|lpips|"
                          r"auc|f1|precision|recall|nll|bpd|error|mse|mae|fvd|wer|distance)", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class TaxonomyResult:
    category: str  # implemented | unwired | unrunnable | stub | mention
    reason: str
    cap: float
    evidence: tuple[Evidence, ...] = ()

    @property
    def ok(self) -> bool:
        return self.category == "implemented"


def _find_node(tree: ast.Module, line: int, name: str):
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == name:
            first = min([node.lineno] + [d.lineno for d in node.decorator_list])
            if first <= line <= (node.end_lineno or node.lineno) and (node.lineno == line or first == line or
                                                                       abs(node.lineno - line) <= len(node.decorator_list)):
                return node
    return None


def _ev(ctx, file: str, line: int, end: int, role: str, note: str = "") -> Evidence:
    try:
        text = ctx.index.lines(file, line, line).strip()
    except (OSError, ValueError):
        text = ""
    return Evidence(file, line, max(line, end), text[:160], role, note)


# ----- stubs -------------------------------------------------------------------------------------------------
def stub_reason(node, lines: list[str], class_name: str | None = None) -> str | None:
    """Why a function body is a placeholder, or None. Builds on the index's classifier and adds two classes."""
    if isinstance(node, ast.ClassDef):
        methods = [n for n in node.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
        real = [m for m in methods if m.name != "__init__"]
        reasons = [stub_reason(m, lines, node.name) for m in real]
        behaviour = [r for m, r in zip(real, reasons) if r and m.name in ("forward", "__call__", "compute", "step")]
        if behaviour:
            return f"behaviour method is a placeholder ({behaviour[0]})"
        if real and all(reasons):
            return f"every method is a placeholder ({reasons[0]})"
        if not methods and all(isinstance(s, (ast.Pass, ast.Expr)) for s in node.body) and not node.bases:
            return "empty class body"
        return None
    reason = index_stubs.classify(node, lines, class_name)
    if reason:
        return reason
    literal = _metric_literal(node)
    if literal:
        return literal
    return _comment_claim(node, lines)


def _metric_literal(fn) -> str | None:
    """A metric whose every return is a number literal (``return 0.0``), whatever it was given."""
    if not _METRIC_NAME.search(fn.name):
        return None
    returns = [n for n in ast.walk(fn) if isinstance(n, ast.Return)]
    if not returns:
        return None
    for ret in returns:
        value = ret.value
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id in ("float", "int") and value.args:
            value = value.args[0]
        if not (isinstance(value, ast.Constant) and isinstance(value.value, (int, float)) and not isinstance(value.value, bool)):
            return None
    return "constant-return (a metric that returns a literal)"


def _comment_claim(fn, lines: list[str]) -> str | None:
    """A short body whose docstring/comments name code (`sqrtm`, ``linalg.eigh(``) that the body never uses."""
    body = [s for s in fn.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
    if len(body) > 4:
        return None
    start, end = fn.lineno, fn.end_lineno or fn.lineno
    doc = ast.get_docstring(fn) or ""
    comments = " ".join(t.split("#", 1)[1] for t in lines[start - 1 : end] if "#" in t)
    text = doc + " " + comments
    if not _CLAIM.search(text):
        return None
    code = ast.unparse(ast.Module(body=body, type_ignores=[])) if body else ""
    for m in _CODE_REF.finditer(text):
        ref = m.group(1) or m.group(2)
        last = ref.rsplit(".", 1)[-1]
        if len(last) >= 3 and last not in code:
            return f"comment-claim (says it uses `{ref}`, the body never does)"
    return None


# ----- unrunnable ---------------------------------------------------------------------------------------------
def _scope_names(fn) -> set[str]:
    names: set[str] = set()
    args = fn.args
    for a in args.posonlyargs + args.args + args.kwonlyargs + [x for x in (args.vararg, args.kwarg) if x]:
        names.add(a.arg)
    for node in ast.walk(fn):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            names.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
            if node is not fn and not isinstance(node, ast.ClassDef):
                a = node.args
                for x in a.posonlyargs + a.args + a.kwonlyargs + [y for y in (a.vararg, a.kwarg) if y]:
                    names.add(x.arg)
        elif isinstance(node, ast.Lambda):
            a = node.args
            for x in a.posonlyargs + a.args + a.kwonlyargs + [y for y in (a.vararg, a.kwarg) if y]:
                names.add(x.arg)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                names.add((alias.asname or alias.name).split(".")[0])
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.add(node.name)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            names.update(node.names)
        elif isinstance(node, ast.MatchAs) and node.name:
            names.add(node.name)
    return names


def _module_names(tree: ast.Module) -> tuple[set[str], bool]:
    names: set[str] = set()
    star = False
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                if alias.name == "*":
                    star = True
                names.add((alias.asname or alias.name).split(".")[0])
    return names, star


def undefined_names(fn, tree: ast.Module) -> list[tuple[str, int]]:
    """Names a function reads that nothing defines (pyflakes' undefined-name, scoped to one function)."""
    module, star = _module_names(tree)
    if star:
        return []
    known = module | _BUILTINS
    enclosing: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node is not fn:
            if node.lineno <= fn.lineno <= (node.end_lineno or node.lineno):
                enclosing |= _scope_names(node)
    local = _scope_names(fn) | enclosing
    out = []
    seen = set()
    for node in ast.walk(fn):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            if node.id not in known and node.id not in local and node.id not in seen:
                seen.add(node.id)
                out.append((node.id, node.lineno))
    return out


def broken_repo_imports(ctx, path: str, tree: ast.Module) -> list[tuple[str, int]]:
    """Imports of the repo's own packages that resolve to no file (a module the generator never wrote)."""
    files = ctx.index.files
    modules = set()
    for p in files:
        if p.endswith(".py"):
            mod = p[:-3].replace("/", ".")
            modules.add(mod.removesuffix(".__init__"))
    dirs = {p.split("/")[0] for p in files if "/" in p}
    tops = {m.split(".")[0] for m in modules} | dirs
    here = path[:-3].replace("/", ".") if path.endswith(".py") else path
    package = here.rsplit(".", 1)[0] if "." in here else ""
    prefix_dirs = sorted({p.rsplit("/", 1)[0].replace("/", ".") for p in files if "/" in p})
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".") if package else []
                base = base[: len(base) - (node.level - 1)] if node.level > 1 else base
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            candidates = [module]
        elif isinstance(node, ast.Import):
            candidates = [a.name for a in node.names]
        else:
            continue
        for module in candidates:
            if not module or module.split(".")[0] not in tops:
                continue
            if _resolves(module, modules, prefix_dirs):
                continue
            if isinstance(node, ast.ImportFrom) and any(
                _resolves(f"{module}.{a.name}", modules, prefix_dirs) for a in node.names
            ):
                continue
            out.append((module, node.lineno))
    return out


def _resolves(module: str, modules: set[str], prefix_dirs: list[str]) -> bool:
    if module in modules or any(m.startswith(module + ".") for m in modules):
        return True
    # Scripts run from a sub-folder (src/, a package root) import relative to it.
    return any(f"{d}.{module}" in modules or any(m.startswith(f"{d}.{module}.") for m in modules) for d in prefix_dirs)


def _file_truncated(ctx, path: str) -> str | None:
    facts = ctx.index.files.get(path)
    if facts is not None and facts.parse_error is not None:
        return facts.parse_error.reason
    try:
        pysource.parse(ctx.index.source(path))
    except SyntaxError as exc:
        return f"syntax error at line {exc.lineno}"
    except (ValueError, RecursionError, MemoryError, OSError):
        return "does not parse"
    return None


def unrunnable_reason(ctx, path: str, node) -> tuple[str, int] | None:
    def file_level():
        truncated = _file_truncated(ctx, path)
        if truncated:
            return (f"its file does not parse ({truncated}): truncated or broken", 1)
        tree = ctx.index.tree(path)
        if tree is None:
            return None
        broken = broken_repo_imports(ctx, path, tree)
        if broken:
            module, line = broken[0]
            return (f"its file imports repo module `{module}`, which does not exist", line)
        return None

    found = ctx.memo(f"taxonomy.file:{path}", file_level)
    if found:
        return found
    tree = ctx.index.tree(path)
    if tree is None or isinstance(node, ast.ClassDef):
        return None
    undefined = undefined_names(node, tree)
    if undefined:
        name, line = undefined[0]
        return (f"reads `{name}`, which is defined nowhere", line)
    return None


# ----- unwired -----------------------------------------------------------------------------------------------
def unreached(ctx, file: str, qualname: str, definition: Definition | None) -> bool:
    """No entry point reaches it: the index call graph (verifier.analysis.entry) when the index has facts,
    else the protocol rules' name-based walk."""
    facts = ctx.index.files.get(file)
    if facts is not None and (facts.definitions or facts.calls):
        try:
            from verifier.analysis.entry import call_graph

            graph = call_graph(ctx)
            if graph.entries:
                return graph.scope_reachable(file, qualname) is None
        except (ImportError, AttributeError, RecursionError, KeyError, ValueError):
            pass
    from verifier.analysis.protocol.reach import reach

    return not reach(ctx).reaches(file, qualname)


# ----- the classifier ----------------------------------------------------------------------------------------
def classify_node(ctx, file: str, node, qualname: str, definition: Definition | None = None) -> TaxonomyResult:
    lines = ctx.index.source(file).splitlines()
    class_name = qualname.rsplit(".", 1)[0] if "." in qualname else None
    end = getattr(node, "end_lineno", node.lineno) or node.lineno
    stub = (definition.stub if definition is not None else None) or stub_reason(node, lines, class_name)
    if stub:
        return TaxonomyResult("stub", stub, 0.0, (_ev(ctx, file, node.lineno, end, "stub", stub),))
    broken = unrunnable_reason(ctx, file, node)
    if broken:
        reason, line = broken
        return TaxonomyResult("unrunnable", reason, CAPS["unrunnable"], (_ev(ctx, file, line, line, "unrunnable", reason),))
    if unreached(ctx, file, qualname, definition):
        return TaxonomyResult("unwired", "no entry point reaches it", CAPS["unwired"],
                              (_ev(ctx, file, node.lineno, node.lineno, "dead", "no entry point reaches it"),))
    return TaxonomyResult("implemented", "", 1.0, ())


def classify(definition: Definition, ctx) -> TaxonomyResult:
    """Classify an index Definition (any check kind may call this for the code implementing its claim)."""
    file = definition.span.file
    tree = ctx.index.tree(file)
    node = _find_node(tree, definition.span.line, definition.name) if tree is not None else None
    if node is None:
        truncated = _file_truncated(ctx, file)
        if truncated:
            return TaxonomyResult("unrunnable", f"its file does not parse ({truncated})", CAPS["unrunnable"],
                                  (_ev(ctx, file, definition.span.line, definition.span.line, "unrunnable"),))
        return TaxonomyResult("implemented", "", 1.0, ())
    return classify_node(ctx, file, node, definition.qualname, definition)


def mentions(ctx, words: list[str], limit: int = 3) -> list[Evidence]:
    """Where a name only appears as text (comments, strings, docs, configs): evidence for "token mention only"."""
    needles = sorted({w.lower() for w in words if w and len(w) >= 2})
    if not needles:
        return []
    out: list[Evidence] = []
    for path in sorted(ctx.index.files):
        try:
            low = ctx.memo(f"protocol.lower:{path}", lambda p=path: ctx.index.source(p).lower())
        except (OSError, ValueError):
            continue
        if not any(n in low for n in needles):
            continue
        for i, line in enumerate(low.splitlines(), 1):
            if any(n in line for n in needles):
                text = ctx.index.lines(path, i, i).strip()
                out.append(Evidence(path, i, i, text[:160], "mention", "the name appears; no logic implements it"))
                if len(out) >= limit:
                    return out
    return out

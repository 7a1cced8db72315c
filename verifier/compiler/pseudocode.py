"""Pseudo-code listings in claim text -> ``call``, ``exists``, ``order`` and ``formula`` checks.

Papers (and SA-Bench claims) write algorithms as Python-like listings: imports, assignments, calls, loops,
comments. A run of such lines is read statement by statement (lines joined while a bracket is open), with
``ast`` where the statement is valid Python and by pattern where it is pseudo-syntax ("For i = 1 to n:",
"Algorithm: name(args)"). What the listing states becomes checks the existing kinds verify: an imported or
module-qualified library API -> ``call`` (with its constant keyword arguments); a function it defines under a
specific name -> ``exists``; calls each consuming the previous one's result -> ``order``; an assignment
computing arithmetic -> ``formula``. Comment lines and data literals (a list of prompts) belong to the listing
once it produced a check. A statement nothing was made of is not covered: it is compiled on its own, or left
for the judge. Never evaluated; deterministic.
"""

from __future__ import annotations

import ast
import re
import textwrap
from dataclasses import dataclass, field
from typing import Any

from verifier.compiler import formulas
from verifier.index.names import attribute_chain
from verifier.spec.model import CallCheck, ExistsCheck, FormulaCheck, OrderCheck
from verifier import pysource

MIN_CODE_STATEMENTS = 3  # fewer is a sentence with an "=" in it, not a listing

# Names too generic to be a code fact: any repo has a `main`, a `sample`, an `append`.
GENERIC_NAMES = frozenset(
    """
    main run train test evaluate eval forward step init setup update fit predict transform load save get set compute
    process call apply sample print len range append extend insert pop list dict set tuple sorted reversed zip
    enumerate str int float bool max min sum abs round isinstance open format join split strip items keys values
    mean std argmax argmin shape reshape view copy clone detach item numpy tolist to cuda cpu backward zero_grad
    query solve build create make generate algorithm procedure function helper loss score
    """.split()
)
# Library calls that only move data around (np.ones, torch.cat): no method fact, any equivalent would do.
PLUMBING = frozenset(
    """
    ones zeros ones_like zeros_like full empty array asarray tensor as_tensor from_numpy arange linspace stack cat
    concatenate concat reshape view squeeze unsqueeze transpose permute expand repeat tile copy clone mean sum prod
    max min abs exp log sqrt argmax argmin argsort sort where clip clamp round floor ceil len list dict print
    """.split()
)
_PSEUDO_HEADER = re.compile(
    r"(?:^|(?<=\|))[ \t]*(?:Algorithm|Procedure|Function)[ \t]*(?:\d+[ \t]*)?:[ \t]*"
    r"(?P<name>[A-Za-z_]\w*)[ \t]*\((?P<args>[^()]*)\)[ \t]*:?[ \t]*$",
    re.IGNORECASE,
)  # "Algorithm: identity_probing_detector(P, model_api)", also after a title: "Detector | Algorithm: ..."
_PSEUDO_CONTROL = re.compile(
    r"^[ \t]*(?:for|while|if|elif|else|return|repeat|until|end)\b[^\n]*$", re.IGNORECASE
)
_COMMENT = re.compile(r"^[ \t]*#")


@dataclass(frozen=True)
class Statement:
    start: int  # character offsets in the claim
    end: int
    text: str
    kind: str  # "comment", "import", "python", "header", "control", "blank"
    tree: ast.Module | None = None


@dataclass
class Listing:
    """A pseudo-code listing: its span, the checks it states, and which statements each check covers."""

    span: tuple[int, int]
    checks: list[Any] = field(default_factory=list)
    covered: list[tuple[tuple[int, int], list[int]]] = field(default_factory=list)  # (char span, check indexes)


# ----- finding the listing --------------------------------------------------------------------------------
def _strip_comment(line: str) -> str:
    """The code of a line without its trailing ``# comment`` (a ``#`` inside a string stays)."""
    quote = ""
    for i, ch in enumerate(line):
        if quote:
            if ch == quote:
                quote = ""
        elif ch in "'\"":
            quote = ch
        elif ch == "#":
            return line[:i].rstrip()
    return line.rstrip()


def _parse(code: str) -> ast.Module | None:
    body = textwrap.dedent(code).strip()
    if not body:
        return None
    candidates = [body]
    if body.endswith(":"):
        candidates.append(body + " pass")
    for candidate in candidates:
        try:
            return pysource.parse(candidate)
        except (SyntaxError, ValueError, RecursionError, MemoryError):  # CPython raises MemoryError on long prose lines
            continue
    return None


def _depth(code: str) -> int:
    depth, quote = 0, ""
    for ch in code:
        if quote:
            if ch == quote:
                quote = ""
        elif ch in "'\"":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
    return depth


def statements(text: str) -> list[Statement]:
    """Every line of the text as a statement (lines joined while a bracket stays open)."""
    out: list[Statement] = []
    offset = 0
    lines = text.splitlines(keepends=True)
    i = 0
    while i < len(lines):
        start = offset
        chunk = lines[i]
        offset += len(lines[i])
        i += 1
        code = _strip_comment(chunk)
        depth = _depth(code)
        while depth > 0 and i < len(lines):
            chunk += lines[i]
            offset += len(lines[i])
            depth += _depth(_strip_comment(lines[i]))
            code = "\n".join(_strip_comment(line) for line in chunk.splitlines())
            i += 1
        stripped = chunk.strip()
        end = start + len(chunk.rstrip())
        if not stripped:
            out.append(Statement(start, end, chunk, "blank"))
        elif _COMMENT.match(chunk):
            out.append(Statement(start, end, chunk, "comment"))
        elif header := _PSEUDO_HEADER.search(chunk.rstrip()):
            out.append(Statement(start + header.start("name"), end, chunk[header.start("name") :], "header"))
        else:
            tree = _parse(code)
            if tree is not None and tree.body and not _prose_like(tree, code):
                kind = "import" if all(isinstance(n, (ast.Import, ast.ImportFrom)) for n in tree.body) else "python"
                out.append(Statement(start, end, chunk, kind, tree))
            elif _PSEUDO_CONTROL.match(code):
                out.append(Statement(start, end, chunk, "control"))
            else:
                out.append(Statement(start, end, chunk, "prose"))
    return out


def _prose_like(tree: ast.Module, code: str) -> bool:
    """``Adam`` or ``a b``: a bare name or expression statement that is not a call reads as prose."""
    node = tree.body[0]
    if isinstance(node, ast.Expr) and not isinstance(node.value, ast.Call):
        return True
    return len(tree.body) > 1 and not code.strip().endswith(":")


def find_listings(text: str) -> list[Statement]:
    """The statements of every run of code-like lines holding at least ``MIN_CODE_STATEMENTS`` statements of
    code, one of them a call or an import (constants alone are a config, read by the value paths)."""
    runs: list[list[Statement]] = []
    current: list[Statement] = []
    for st in statements(text) + [Statement(len(text), len(text), "", "prose")]:
        if st.kind == "prose":
            if current:
                runs.append(current)
            current = []
        else:
            current.append(st)
    out: list[list[Statement]] = []
    for run in runs:
        code = [s for s in run if s.kind in ("python", "import", "header")]
        has_call = any(s.kind == "import" or s.kind == "header" or _calls(s.tree) for s in code)
        if len(code) >= MIN_CODE_STATEMENTS and has_call:
            out.append(run)
    return [s for run in out for s in run] if out else []


def _calls(tree: ast.AST | None) -> list[ast.Call]:
    return [n for n in ast.walk(tree) if isinstance(n, ast.Call)] if tree is not None else []


# ----- what the listing states ------------------------------------------------------------------------------
def _constant_kwargs(call: ast.Call) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for kw in call.keywords:
        if kw.arg is None:
            continue
        try:
            value = ast.literal_eval(kw.value)
        except (ValueError, SyntaxError, TypeError, RecursionError):
            continue
        if isinstance(value, (int, float, str, bool)):
            out[kw.arg] = value
    return out


LIBRARIES = frozenset(
    """
    numpy scipy sklearn torch torchvision torchaudio torchdiffeq pandas statsmodels jax flax optax tensorflow keras
    transformers datasets diffusers peft accelerate pywt ptwt pytorch_wavelets einops networkx math random
    """.split()
)


def library(module: str) -> bool:
    """A well-known library: a listing's ``from utils import helper`` names the paper's code, not an API."""
    return module.split(".")[0] in LIBRARIES


def specific(name: str) -> bool:
    """A function name a repo would share with the paper: ``identity_probing_detector``, not ``main``."""
    leaf = name.rsplit(".", 1)[-1]
    if leaf.lower() in GENERIC_NAMES or leaf.startswith("_"):
        return False
    words = [w for w in re.split(r"_|(?<=[a-z])(?=[A-Z])", leaf) if w]
    return len(words) >= 2 and len(leaf) >= 6


def _is_data_literal(tree: ast.Module | None) -> bool:
    """``prompts = ["Who are you?", ...]``: data the listing works on."""
    if tree is None or len(tree.body) != 1 or not isinstance(tree.body[0], ast.Assign):
        return False
    value = tree.body[0].value
    if not isinstance(value, (ast.List, ast.Tuple, ast.Set, ast.Dict)):
        return False
    try:
        ast.literal_eval(value)
    except (ValueError, SyntaxError, TypeError, RecursionError):
        return False
    elements = value.keys + value.values if isinstance(value, ast.Dict) else value.elts
    return bool(elements) and all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in elements)


def _arithmetic(node: ast.AST) -> bool:
    return isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Pow))


def read_listing(text: str) -> Listing | None:
    """The checks a claim's pseudo-code states, and the statements each covers; None without a listing."""
    found = find_listings(text)
    if not found:
        return None
    listing = Listing(span=(found[0].start, found[-1].end))
    keys: dict[str, int] = {}

    def add(check: Any) -> int:
        key = repr(check.model_dump(by_alias=True, exclude_none=True))
        if key not in keys:
            keys[key] = len(listing.checks)
            listing.checks.append(check)
        return keys[key]

    imported: dict[str, str] = {}  # local name -> qualified name
    for st in found:
        if st.tree is None:
            continue
        for node in ast.walk(st.tree):
            if isinstance(node, ast.ImportFrom) and node.module and not node.level:
                for alias in node.names:
                    if alias.name != "*":
                        imported[alias.asname or alias.name] = f"{node.module}.{alias.name}"
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    imported[alias.asname or alias.name.split(".")[0]] = alias.name if alias.asname else alias.name.split(".")[0]
    defined = {n.name for st in found if st.tree is not None for n in ast.walk(st.tree) if isinstance(n, (ast.FunctionDef, ast.ClassDef))}

    made: dict[int, list[int]] = {}  # statement index -> check indexes
    called: dict[str, list[int]] = {}  # imported name or qualified target -> the call checks made of its calls
    objects: dict[str, int] = {}  # a name bound to a checked library call's result -> that check
    produced: list[tuple[int, str, set[str], set[str]]] = []  # (statement, callee, names read, names bound)
    for i, st in enumerate(found):
        if st.kind == "header":
            match = re.match(r"(?P<name>[A-Za-z_]\w*)", st.text)
            if match and specific(match.group("name")):
                made.setdefault(i, []).append(add(ExistsCheck(symbol=match.group("name"))))
            continue
        if st.tree is None:
            continue
        for node in ast.walk(st.tree):
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and specific(node.name):
                made.setdefault(i, []).append(add(ExistsCheck(symbol=node.name)))
            elif isinstance(node, ast.Call):
                dotted = attribute_chain(node.func)
                if dotted is None:
                    continue
                root, _, rest = dotted.partition(".")
                if root in imported and root not in defined and library(imported[root]):
                    target = imported[root] + (f".{rest}" if rest else "")
                    if target.rsplit(".", 1)[-1] in PLUMBING:
                        continue
                    index = add(CallCheck(target=target, args=_constant_kwargs(node)))
                    made.setdefault(i, []).append(index)
                    called.setdefault(root, []).append(index)
                    called.setdefault(target, []).append(index)
                    for top in st.tree.body:  # clf = LogisticRegression(...): clf is that library object
                        if isinstance(top, ast.Assign) and top.value is node:
                            objects.update({t.id: index for t in top.targets if isinstance(t, ast.Name)})
        for top in st.tree.body:  # clf.fit(X, y), X = vec.fit_transform(docs): using the object made above
            value = top.value if isinstance(top, (ast.Assign, ast.Expr)) else None
            if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute):
                receiver = value.func.value
                if isinstance(receiver, ast.Name) and receiver.id in objects:
                    made.setdefault(i, []).append(objects[receiver.id])
        for node in st.tree.body:
            if isinstance(node, ast.Assign) and _arithmetic(node.value):
                expect, _ = formulas.to_sympy(ast.unparse(node.value), code=True)
                if expect and not formulas.paper_side_problem(expect, None):
                    made.setdefault(i, []).append(add(FormulaCheck(expect=expect)))
            if isinstance(node, (ast.Assign, ast.Expr)) and isinstance(node.value, ast.Call):
                callee = attribute_chain(node.value.func)
                if callee:
                    reads = {n.id for n in ast.walk(node.value) if isinstance(n, ast.Name)} - {callee.split(".")[0]}
                    if "." in callee and callee.split(".")[0] not in imported:
                        continue  # a method of a local object (clf.fit): no name a repo would share
                    binds = {n.id for t in getattr(node, "targets", []) for n in ast.walk(t) if isinstance(n, ast.Name)}
                    produced.append((i, callee, reads, binds))
    for i, st in enumerate(found):  # imports: the checks of their calls, or a call check of what they import
        if st.kind != "import":
            continue
        for node in st.tree.body:
            if isinstance(node, ast.ImportFrom) and node.module and not node.level and library(node.module):
                for alias in node.names:
                    target = f"{node.module}.{alias.name}"
                    if alias.name == "*" or alias.name in PLUMBING:
                        continue
                    # an import in a listing declares its use, even when the call is cut off
                    made.setdefault(i, []).extend(called.get(target) or [add(CallCheck(target=target))])
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    made.setdefault(i, []).extend(called.get(alias.asname or alias.name.split(".")[0], []))
        if not made.get(i):
            made.pop(i, None)
    chain = _dependency_chain(produced)
    steps = [
        (i, callee.rsplit(".", 1)[-1])
        for i, callee in chain
        if specific(callee) or (library(imported.get(callee.split(".")[0], "")) and callee.rsplit(".", 1)[-1] not in PLUMBING)
    ]
    names = [s for _, s in steps]
    if len(steps) >= 2 and len(set(names)) == len(names):
        index = add(OrderCheck(steps=names, relation="before"))
        for i, _ in steps:
            made.setdefault(i, []).append(index)
    if not made:
        return None
    for i, st in enumerate(found):
        if i in made:
            listing.covered.append(((st.start, st.end), sorted(set(made[i]))))
            title = _title_before(text, st) if st.kind == "header" else None
            if title:
                listing.covered.append((title, sorted(set(made[i]))))
        elif st.kind in ("comment", "blank") or (_is_data_literal(st.tree) and _strip_comment(st.text) == st.text.rstrip()):
            listing.covered.append(((st.start, st.end), []))
    return listing


_TITLE = re.compile(r"[ \t]*(?P<title>[A-Z][\w'-]*(?:[ \t]+[\w'-]+){0,5})[ \t]*\|[ \t]*$")


def _title_before(text: str, header: Statement) -> tuple[int, int] | None:
    """The span of "Identity-Probing Detector" in "Identity-Probing Detector | Algorithm: name(args)": the
    name of the algorithm whose header and listing follow, a title with no fact of its own."""
    line_start = text.rfind("\n", 0, header.start) + 1
    head = re.match(r"(?P<before>[^\n]*?)(?:Algorithm|Procedure|Function)[ \t]*(?:\d+[ \t]*)?:[ \t]*$", text[line_start : header.start], re.IGNORECASE)
    if head is None:
        return None
    title = _TITLE.fullmatch(head.group("before"))
    if title is None or re.search(r"\d", title.group("title")):
        return None
    return line_start + title.start("title"), line_start + title.end("title")


def _dependency_chain(produced: list[tuple[int, str, set[str], set[str]]]) -> list[tuple[int, str]]:
    """The longest run of calls each reading a name the previous one bound: ``data = load()``,
    ``bt = fit_bt(data)``, ``ranks = rank(bt)`` is a sequence; calls on unrelated data are not."""
    best: list[tuple[int, str]] = []
    for first in range(len(produced)):
        chain = [produced[first]]
        for later in produced[first + 1 :]:
            if chain[-1][3] and chain[-1][3] & later[2]:
                chain.append(later)
        if len(chain) > len(best):
            best = [(i, callee) for i, callee, _, _ in chain]
    return best

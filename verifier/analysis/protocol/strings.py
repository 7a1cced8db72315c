"""Rule ``strings``: the prompts, templates, captions and label words a paper quotes are text the repo uses.

A quoted string is present where the repo writes it as data: a Python string literal (implicit concatenation,
f-strings, ``.format`` / ``%`` templates and ``"a photo of a " + name`` included), a string in a YAML/JSON/TOML
config, or a line, record or cell of a prompt file (``.txt``, ``.jsonl``, ``.csv``, ``.tsv``). Nothing is run:
Python is read with ``ast``, YAML is composed (never constructed), the rest is tokenised as text.

Strings compare on tokens (words, single punctuation marks, template slots). A placeholder the paper writes
(``{c}``, ``c_k``, ``[CLASS]``, ``<label>``) matches any template slot of the repo (``{}``, ``{name}``, an
f-string field, ``%s``, a concatenated variable). ``match: normalized`` (the default) ignores case, quote style,
whitespace and trailing punctuation; ``exact`` keeps case, quotes and punctuation. A string of three or more
words may also be part of a longer literal (the sentence the paper quotes from a longer system prompt); a shorter
one (a label, a category name) must be the whole literal. A docstring, a comment, a README or a test is a
mention, never a use.
"""

from __future__ import annotations

import ast
import csv
import functools
import io
import json
import re
from collections.abc import Callable
from dataclasses import dataclass

import yaml

from verifier.analysis.protocol.common import (
    SNIPPET_WIDTH,
    built_view,
    file_view,
    python_paths,
    scope_admits,
    sorted_evidence,
    text_of,
    tree_nodes,
)
from verifier.index.facts import FileRole, Language
from verifier.index.repo import looks_like_glob
from verifier.results import CheckResult, Evidence, Status

KIND = "protocol"

SLOT = "\x00"  # the token a template slot becomes
_PLACEHOLDER = {  # placeholders a repo's template may hold (a paper's too)
    "brace": re.compile(r"\{[^{}\n]{0,40}\}"),  # {}, {c}, {class_name}, {0}, {x!r:>8}
    "bracket": re.compile(r"\[[A-Z][A-Z0-9_ ]{0,30}\]"),  # [CLASS], [LABEL], [X]
    "percent": re.compile(r"%(?:\([A-Za-z_]\w*\))?[-+ #0]*\d*(?:\.\d+)?[sdifr]\b"),  # %s, %(name)s, %d
}
# Angle-bracket placeholders only for the words templates use, so ``<image>`` / ``<s>`` tokens stay text.
_ANGLE_SLOT = re.compile(r"<\s*(?:class|classname|class_name|class name|label|category|name|object|concept|"
                         r"x|y|c|word|entity|subject|target|input|query|text)\s*>", re.IGNORECASE)
# A paper's math placeholder: ``c_k``, ``c_{j}``, ``$y_i$`` (a letter with a subscript), standing as a word.
_MATH_SLOT = re.compile(r"(?<![\w$])\$?[A-Za-z]_\{?[A-Za-z0-9]{1,3}\}?\$?(?![\w$])")
_QUOTES = str.maketrans({"‘": "'", "’": "'", "‛": "'", "′": "'", "`": "'", "“": "'", "”": "'", "„": "'", "″": "'",
                         '"': "'"})
_TOKEN = re.compile(r"\x00|\w+|[^\w\s]")
_DATA_SUFFIXES = (".txt", ".jsonl", ".csv", ".tsv")
_JSON_STRING = re.compile(r'"((?:[^"\\\n]|\\.)*)"')
_TOML_STRING = re.compile(r'"""(.*?)"""|\'\'\'(.*?)\'\'\'|"((?:[^"\\\n]|\\.)*)"|\'([^\'\n]*)\'', re.DOTALL)
_QUOTED_SPAN = re.compile(r"'([^'\n]{1,200})'")
_MAX_NEAR_TOKENS = 2_000  # near misses are looked for in literals up to this many tokens
_MAX_DATA_LINES = 20_000  # lines of one prompt file read (the index bounds its size already)
_MAX_TEXT = 20_000  # longer literals (embedded data, base64) are not prompts


@dataclass(frozen=True, slots=True)
class Literal:
    file: str
    line: int
    end_line: int
    text: str  # as written (slots kept as written)
    where: str  # code | config | data | mention


# ----- tokens ----------------------------------------------------------------------------------------------
def _slotted(text: str, paper: bool) -> str:
    """Template slots (and, for the paper's side, math placeholders) replaced by SLOT; ``{{`` stays a brace."""
    text = text.replace("{{", "\x01").replace("}}", "\x02")
    for pattern in _PLACEHOLDER.values():
        text = pattern.sub(SLOT, text)
    text = _ANGLE_SLOT.sub(SLOT, text)
    if paper:
        text = _MATH_SLOT.sub(SLOT, text)
    return text.replace("\x01", "{").replace("\x02", "}")


def tokens(text: str, exact: bool = False, paper: bool = False) -> tuple[str, ...]:
    """``"A photo of a {c}."`` -> (a, photo, of, a, SLOT); exact keeps case, quotes and the final mark."""
    text = _slotted(text, paper)
    if not exact:
        text = text.translate(_QUOTES).lower()
    out = _TOKEN.findall(text)
    if not exact:
        while out and out[-1] != SLOT and not out[-1][0].isalnum() and out[-1][0] != "_":
            out.pop()  # trailing punctuation: "Who made you?" = "who made you"
    return tuple(out)


def _words(toks: tuple[str, ...]) -> list[str]:
    return [t for t in toks if t != SLOT and (t[0].isalnum() or t[0] == "_")]


def _contains(hay: tuple[str, ...], needle: tuple[str, ...]) -> bool:
    n = len(needle)
    first = needle[0]
    return any(hay[i] == first and hay[i : i + n] == needle for i in range(len(hay) - n + 1))


def _distance(a: tuple[str, ...], b: tuple[str, ...], limit: int) -> int:
    """Word-level edit distance, cut off above ``limit``."""
    previous = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        current = [i]
        for j, y in enumerate(b, 1):
            swap = 0 if x == y else (limit + 1 if SLOT in (x, y) else 1)  # a slot is never reworded into text
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + swap))
        if min(current) > limit:
            return limit + 1
        previous = current
    return previous[-1]


def near_limit(words: int) -> int:
    """How many words a reworded string may differ by and still be the same prompt (0: never a near miss)."""
    if words < 4:
        return 0
    if words <= 7:
        return 1
    if words <= 12:
        return 2
    return max(2, round(words * 0.15))


_PLAIN_WORD = re.compile(r"[^\W_]+")  # a word of letters and digits only: a member of the file's word set


def _text_words(ctx, path: str, low: str) -> frozenset[str]:
    return ctx.memo(f"protocol.words:{path}", lambda: frozenset(_PLAIN_WORD.findall(low)))


@functools.lru_cache(maxsize=4096)
def _word_pattern(word: str) -> re.Pattern:
    return re.compile(rf"(?<![^\W_]){re.escape(word)}(?![^\W_])")


@dataclass(frozen=True)
class Wanted:
    written: str
    toks: tuple[str, ...]
    contained: bool  # may be part of a longer literal
    near: int  # the near-miss budget in words
    needles: tuple[str, ...]  # lower-cased words a file must contain (any of them)
    vocabulary: frozenset[str]  # the distinct words of ``toks``
    long_words: tuple[str, ...]  # its distinct lower-cased words of three letters or more

    @classmethod
    def of(cls, written: str, exact: bool) -> "Wanted":
        toks = tokens(written, exact=exact, paper=True)
        words = _words(tokens(written, paper=True))
        longest = sorted(set(words), key=lambda w: (-len(w), w))[:2]
        return cls(written, toks, len(words) >= 3, near_limit(len(words)), tuple(longest), frozenset(_words(toks)),
                   tuple(sorted({w for w in words if len(w) >= 3}, key=lambda w: (-len(w), w))))  # longest (rarest) first

    def in_text(self, low: str, words: Callable[[], frozenset[str]] | None = None) -> bool:
        """Could a file with this (lower-cased) text hold the string, as written or reworded? Its longer words
        must be there, all of them or (for a near miss) all but the budget. ``words()`` gives the file's words
        (computed once per file, only for files that hold the substrings): one set test per word instead of a
        regex search of the whole text."""
        if not self.long_words:
            return any(n in low for n in self.needles)
        needed = max(1, len(self.long_words) - self.near)
        allowed_misses = len(self.long_words) - needed
        inside: list[str] = []
        for word in self.long_words:  # C-speed substring tests first, stopping at the first miss too many
            if word in low:
                inside.append(word)
            else:
                allowed_misses -= 1
                if allowed_misses < 0:
                    return False
        if not self._together(low, inside, needed):  # cheap windows first: most files fail here
            return False
        vocabulary = words() if words is not None else None
        inside = [word for word in inside if (word in vocabulary if vocabulary is not None and _PLAIN_WORD.fullmatch(word)
                                              else bool(_word_pattern(word).search(low)))]
        return len(inside) >= needed and self._together(low, inside, needed)

    def _together(self, low: str, inside: list[str], needed: int) -> bool:
        """Do ``needed`` of the words occur close together somewhere? The string's words are contiguous in a
        literal that holds it (reworded: within its edit budget; split over concatenated lines: a few quotes and
        an indent apart), so a file where they are only scattered cannot hold it. Only a skip, never a match."""
        span = 2 * len(self.written) + 200
        anchor = min(inside, key=lambda w: (low.count(w), w))  # the rarest word: fewest windows to look at
        start = low.find(anchor)
        for _ in range(5000):
            if start < 0:
                return False
            window = low[max(0, start - span) : start + span]
            if sum(1 for word in inside if word in window) >= needed:
                return True
            start = low.find(anchor, start + 1)
        return True  # too many places to look: do not skip the file

    def could_be_near(self, vocabulary: frozenset[str]) -> bool:
        """Each edit takes at most one of the string's words away: fewer shared words cannot be a near miss."""
        return bool(self.near) and len(self.vocabulary & vocabulary) >= len(self.vocabulary) - self.near

    def matches(self, toks: tuple[str, ...]) -> bool:
        if toks == self.toks:
            return True
        return self.contained and len(toks) > len(self.toks) and _contains(toks, self.toks)

    def near_miss(self, toks: tuple[str, ...]) -> int | None:
        """The word distance of a reworded version (within budget), or None."""
        if not self.near or not toks:
            return None
        want = self.toks
        candidates = [toks]
        if self.contained and len(toks) > len(want) + 1:  # a reworded sentence inside a longer literal
            if len(toks) > _MAX_NEAR_TOKENS:
                return None
            anchors = set(want[: self.near + 1])  # with at most `near` edits one of these opens the window
            candidates = [toks[i : i + len(want) + d] for d in range(-self.near, self.near + 1)
                          for i in range(len(toks) - len(want) - d + 1) if toks[i] in anchors]
        best = None
        for cand in candidates:
            if abs(len(cand) - len(want)) > self.near or not cand or cand.count(SLOT) != want.count(SLOT):
                continue
            d = _distance(want, cand, self.near)
            if 0 < d <= self.near and (best is None or d < best):
                best = d
        return best


# ----- literals of the repo -----------------------------------------------------------------------------------
_HELP_KEYWORDS = frozenset({"help", "description", "epilog", "usage"})  # argparse / click texts: they describe an option


def _template(node: ast.AST) -> str | None:
    """The text of a string expression with its holes as ``{}``: f-strings and ``"..." + x + "..."`` chains."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        parts = []
        for value in node.values:
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                parts.append(value.value.replace("{", "{{").replace("}", "}}"))
            else:
                parts.append("{}")
        return "".join(parts)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _template(node.left), _template(node.right)
        if left is None and right is None:
            return None
        return (left if left is not None else "{}") + (right if right is not None else "{}")
    return None


def _python_literals(ctx, path: str, scope: str | None) -> list[Literal]:
    try:
        tree = ctx.index.tree(path)
    except (OSError, ValueError, RecursionError):
        return []
    if tree is None:
        return []
    docs: set[int] = set()  # docstrings and help texts: mentions (a parent is walked before its children)
    inner: set[int] = set()
    out: list[Literal] = []
    view = file_view(ctx, path) if scope else None  # a qualified scope needs the functions' qualnames
    spans = sorted(((f.node.lineno, f.node.end_lineno or f.node.lineno, q) for q, f in view.functions.items()),
                   key=lambda s: (s[0], -s[1])) if view is not None else []

    def scope_of(line: int) -> str:
        qual = "<module>"
        for start, end, q in spans:
            if start <= line <= end:
                qual = q  # the innermost (last opened) function holding the line
        return qual

    # The file's shared node list when its view is built (the walk's order, less field-less nodes, none of which is
    # a literal): no walk of its own.
    built, shared = built_view(ctx, path)
    nodes = tree_nodes(ctx, shared) if built and shared is not None and shared.tree is tree else ast.walk(tree)
    for node in nodes:
        if id(node) in inner:
            continue
        text = None
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                docs.add(id(body[0].value))
            continue
        if isinstance(node, ast.Call):
            docs.update(id(kw.value) for kw in node.keywords if kw.arg in _HELP_KEYWORDS)
            continue
        if isinstance(node, ast.JoinedStr):
            inner.update(id(v) for v in ast.walk(node) if v is not node)
            text = _template(node)
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            text = _template(node)  # "a photo of a " + name; its string parts are literals of their own too
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            text = node.value
        if text is None or not text.strip() or len(text) > _MAX_TEXT:
            continue
        line = node.lineno
        if scope and not scope_admits(scope, scope_of(line)):
            continue
        where = "mention" if id(node) in docs else "code"
        out.append(Literal(path, line, node.end_lineno or line, text, where))
    return out


def _yaml_literals(path: str, text: str) -> list[Literal]:
    out: list[Literal] = []
    try:
        from yaml import CSafeLoader as Loader
    except ImportError:  # pragma: no cover - depends on the PyYAML build
        from yaml import SafeLoader as Loader  # type: ignore[assignment]
    try:
        stack = [doc for doc in yaml.compose_all(text, Loader=Loader) if doc is not None]
    except (yaml.YAMLError, RecursionError, ValueError, TypeError):
        return out
    seen: set[int] = set()
    while stack:
        node = stack.pop()
        if id(node) in seen or len(out) > 50_000:
            continue
        seen.add(id(node))
        if isinstance(node, yaml.ScalarNode):
            if node.value.strip() and len(node.value) <= _MAX_TEXT:
                end = node.end_mark.line + (0 if node.end_mark.column == 0 and node.end_mark.line > node.start_mark.line else 1)
                out.append(Literal(path, node.start_mark.line + 1, max(end, node.start_mark.line + 1), node.value, "config"))
        elif isinstance(node, yaml.SequenceNode):
            stack.extend(node.value)
        elif isinstance(node, yaml.MappingNode):
            for k, v in node.value:
                stack.extend((k, v))
    return out


def _json_strings(path: str, text: str, where: str, first_line: int = 1) -> list[Literal]:
    out = []
    line, last = first_line, 0
    for m in _JSON_STRING.finditer(text):
        line += text.count("\n", last, m.start())
        last = m.start()
        try:
            value = json.loads('"' + m.group(1) + '"') if "\\" in m.group(1) else m.group(1)
        except ValueError:
            value = m.group(1)
        if isinstance(value, str) and value.strip():
            out.append(Literal(path, line, line, value, where))
    return out


def _toml_literals(path: str, text: str) -> list[Literal]:
    out = []
    for m in _TOML_STRING.finditer(text):
        value = next(g for g in m.groups() if g is not None) if any(g is not None for g in m.groups()) else ""
        line = text.count("\n", 0, m.start()) + 1
        if value.strip():
            out.append(Literal(path, line, line + value.count("\n"), value.replace('\\"', '"'), "config"))
    return out


def _data_literals(path: str, text: str) -> list[Literal]:
    """A prompt file: each line (``.txt``), record (``.jsonl``) or cell (``.csv``/``.tsv``), and a short file whole."""
    lower = path.lower()
    lines = text.splitlines()[:_MAX_DATA_LINES]
    out: list[Literal] = []
    if lower.endswith(".jsonl"):
        for i, row in enumerate(lines, 1):
            out += _json_strings(path, row, "data", i)
        return out
    if lower.endswith((".csv", ".tsv")):
        delimiter = "\t" if lower.endswith(".tsv") else ","
        for i, row in enumerate(lines, 1):
            try:
                cells = next(csv.reader(io.StringIO(row), delimiter=delimiter), [])
            except csv.Error:
                cells = [row]
            out += [Literal(path, i, i, cell, "data") for cell in cells if cell.strip()]
        return out
    out = [Literal(path, i, i, row, "data") for i, row in enumerate(lines, 1) if row.strip()]
    if 1 < len(out) <= 200 and len(text) <= _MAX_TEXT:
        out.append(Literal(path, 1, len(lines), text, "data"))  # a multi-line prompt kept in one file
    return out


def _file_literals(ctx, path: str, scope: str | None) -> list[Literal]:
    def make() -> list[Literal]:
        facts = ctx.index.files.get(path)
        if facts is None:
            return []
        if facts.language in (Language.python, Language.notebook):
            return _python_literals(ctx, path, scope)
        text = text_of(ctx, path)
        if facts.language is Language.yaml:
            return _yaml_literals(path, text)
        if facts.language is Language.json:
            return _json_strings(path, text, "config")
        if facts.language is Language.toml:
            return _toml_literals(path, text)
        if path.lower().endswith(_DATA_SUFFIXES):
            return _data_literals(path, text)
        return []

    return ctx.memo(f"protocol.strings.literals:{path}:{scope or ''}", make)


def _file_tokens(ctx, path: str, scope: str | None, exact: bool) -> list[tuple[Literal, tuple[str, ...], frozenset[str]]]:
    """Each literal of a file with its tokens and distinct words, once per run."""
    return ctx.memo(f"protocol.strings.tokens:{path}:{scope or ''}:{exact}", lambda: [
        (lit, toks, frozenset(_words(toks))) for lit in _file_literals(ctx, path, scope)
        for toks in (tokens(lit.text, exact=exact),)])


def _searched_files(ctx, scope: str | None) -> list[str]:
    """Code, configs and prompt files a run uses (tests, docs and examples are not where a run's prompts live)."""
    data = ctx.memo("protocol.strings.data_paths", lambda: sorted(
        p for p, f in ctx.index.files.items()
        if f.role == FileRole.code and f.language not in (Language.python, Language.notebook, Language.shell)
        and (f.language in (Language.yaml, Language.json, Language.toml) or p.lower().endswith(_DATA_SUFFIXES))))
    if scope and looks_like_glob(scope):
        data = [p for p in data if ctx.index.in_scope(p, scope)]
    elif scope:
        data = []  # a function scope: only that function's literals
    return sorted({*python_paths(ctx, scope), *data})


def _mentions(ctx, wanted: list[Wanted]) -> dict[int, Evidence]:
    """Where a string not used anywhere is still written: a docstring, comment, README or test."""
    out: dict[int, Evidence] = {}
    for path in sorted(ctx.index.files):
        low = ctx.memo(f"protocol.lower:{path}", lambda p=path: text_of(ctx, p).lower())
        words = lambda p=path, t=low: _text_words(ctx, p, t)  # noqa: E731
        todo = [i for i, w in enumerate(wanted) if i not in out and w.in_text(low, words)]
        if not todo:
            continue
        for number, row in enumerate(text_of(ctx, path).splitlines(), 1):
            lowered = row.lower()
            if not any(n in lowered for i in todo for n in wanted[i].needles):
                continue
            toks = tokens(row)
            quoted = [tokens(q) for q in _QUOTED_SPAN.findall(row.translate(_QUOTES))]
            for i in todo:
                plain = tokens(wanted[i].written, paper=True)
                # a short string (a label) only where it is quoted; a sentence anywhere in the line
                if i not in out and plain and (_contains(toks, plain) if wanted[i].contained else plain in quoted):
                    text = row.strip()
                    out[i] = Evidence(path, number, number, text if len(text) <= SNIPPET_WIDTH else text[: SNIPPET_WIDTH - 3]
                                      + "...", "mention", "the string is written here, but no code or config uses it")
        if len(out) == len(wanted):
            break
    return out


# ----- verdict ----------------------------------------------------------------------------------------------------
def _snippet(ctx, lit: Literal) -> str:
    try:
        text = ctx.index.lines(lit.file, lit.line, lit.line).strip()
    except (OSError, ValueError):
        text = ""
    return text if len(text) <= SNIPPET_WIDTH else text[: SNIPPET_WIDTH - 3] + "..."


def _level(share: float) -> float:
    """SA-Bench's levels for the share of strings present (a reworded one counts 0.75)."""
    if share >= 0.75:
        return 0.75
    if share >= 0.5:
        return 0.5
    return 0.25


def evaluate(params: dict, ctx, scope: str | None, rule: dict) -> CheckResult:
    expect = params["expect"]
    written = [expect] if isinstance(expect, str) else [str(x) for x in expect]
    exact = params.get("match", "normalized") == "exact"
    need_all = params.get("all", True) is not False
    wanted = [Wanted.of(w, exact) for w in dict.fromkeys(written)]
    if not all(_words(w.toks) for w in wanted):
        empty = next(w.written for w in wanted if not _words(w.toks))
        return CheckResult.unverified(KIND, f"{empty!r} has no words to look for (only placeholders or punctuation)")
    found: dict[int, Literal] = {}
    near: dict[int, tuple[int, Literal]] = {}
    mentioned: dict[int, Literal] = {}
    for path in _searched_files(ctx, scope):
        low = ctx.memo(f"protocol.lower:{path}", lambda p=path: text_of(ctx, p).lower())
        words = lambda p=path, t=low: _text_words(ctx, p, t)  # noqa: E731
        relevant = [(i, w) for i, w in enumerate(wanted) if w.in_text(low, words)]
        if not relevant:
            continue
        for lit, toks, vocabulary in _file_tokens(ctx, path, scope, exact):
            for i, w in relevant:
                if i in found and lit.where != "mention":
                    continue
                if w.matches(toks):
                    if lit.where == "mention":
                        mentioned.setdefault(i, lit)
                    else:
                        found[i] = lit
                elif lit.where != "mention" and i not in found and w.could_be_near(vocabulary):
                    d = w.near_miss(toks)
                    if d is not None and (i not in near or d < near[i][0]):
                        near[i] = (d, lit)
    for i in found:
        near.pop(i, None)

    def ev(lit: Literal, note: str = "") -> Evidence:
        return Evidence(lit.file, lit.line, lit.end_line, _snippet(ctx, lit), "rule", note)

    evidence = [ev(found[i]) for i in sorted(found)]
    evidence += [ev(lit, f"reworded: {d} word(s) differ from {wanted[i].written!r}") for i, (d, lit) in sorted(near.items())]
    where = "; ".join(f"{wanted[i].written!r} at {found[i].file}:{found[i].line}" for i in sorted(found))
    reworded = "; ".join(f"{wanted[i].written!r} reworded at {lit.file}:{lit.line} ({d} word(s) differ)"
                         for i, (d, lit) in sorted(near.items()))
    absent = [w.written for i, w in enumerate(wanted) if i not in found and i not in near]
    details = {"found": [wanted[i].written for i in sorted(found)], "reworded": [wanted[i].written for i in sorted(near)],
               "absent": absent}
    n = len(wanted)
    if (need_all and len(found) == n) or (not need_all and found):
        return CheckResult.passed(KIND, f"all {n} string(s) used: {where}" if need_all else f"used: {where}",
                                  sorted_evidence(evidence), **details)
    if found or near:
        share = (len(found) + 0.75 * len(near)) / n
        if not need_all:
            share = 0.75  # only reworded ones: a minor deviation
        parts = [p for p in (f"used: {where}" if where else "", reworded,
                             f"not found: {', '.join(map(repr, absent))}" if absent else "") if p]
        return CheckResult.partial(KIND, _level(share), f"{len(found)} of {n} string(s) used as written; " + "; ".join(parts),
                                   sorted_evidence(evidence), **details)
    seen = {i: Evidence(lit.file, lit.line, lit.end_line, _snippet(ctx, lit), "mention",
                        "in a docstring: no code or config uses it") for i, lit in mentioned.items()}
    seen.update({i: e for i, e in _mentions(ctx, [w for w in wanted]).items() if i not in seen})
    listing = ", ".join(map(repr, absent))
    if seen:
        first = seen[min(seen)]
        return CheckResult.failed(KIND, Status.missing, f"no code, config or prompt file uses {listing}; only mentioned "
                                  f"({first.file}:{first.line})", sorted_evidence(seen.values()), taxonomy="mention",
                                  **details)
    return CheckResult.failed(KIND, Status.missing, f"no code, config or prompt file uses {listing}", [], **details)

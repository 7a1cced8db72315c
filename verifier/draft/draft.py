"""``sau-verify draft PAPER``: a starter spec from a paper's text (Markdown or LaTeX), with no LLM.

What it reads: hyperparameter tables (Markdown pipes, HTML ``<table>`` as PDF converters emit, LaTeX
``tabular``; an ablation table's first column as a sweep) and "we use X = N" sentences (converter-spaced inline
math, "A and B use N and M as X, respectively", "X (p = N)", "X of size N", number words before a plural the
lexicon knows) -> ``value`` checks under canonical names; display equations ->
``formula`` checks (LaTeX) with the symbols listed for the user to map; algorithm blocks and "first ... then
..." passages -> ``order`` checks; dataset, metric and seed mentions -> ``protocol`` checks. Each SAU names its
source section. Deterministic: the same paper always gives the same YAML.
"""

from __future__ import annotations

import html
import json
import re
from dataclasses import dataclass, field
from typing import Any

from verifier.compiler import numbers, orders, protocol_claims, terms
from verifier.compiler.claims import Interval, Sweep, compile_claim, written_range
from verifier.spec.model import SAU

_DIM_CODE = {"numerical": "D1", "methodological": "D2", "protocol": "D3", "ordering": "D4"}
_WORD_NUMBERS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10}


@dataclass
class Section:
    title: str
    start: int  # line index
    lines: list[str] = field(default_factory=list)


@dataclass
class Draft:
    """SAUs under construction: (dimension, claim, source, check dict, comment lines)."""

    items: list[tuple[str, str, str, dict[str, Any], list[str]]] = field(default_factory=list)
    seen: set[str] = field(default_factory=set)

    def add(self, dimension: str, claim: str, source: str, check: dict[str, Any], comments: list[str] | None = None) -> None:
        field = _EXPECT_FIELDS.get(type(check.get("expect"))) if check.get("kind") == "value" else None
        if field is not None:  # a sweep (one value per run), a range for one setting, another parameter (alpha = r)
            written = check["expect"]
            check = {**{k: v for k, v in check.items() if k != "expect"}, field: str(written) if field == "same_as" else list(written)}
        key = repr((dimension, sorted((k, repr(v)) for k, v in check.items())))
        if key in self.seen:
            return
        self.seen.add(key)
        self.items.append((dimension, claim, source, check, comments or []))


# ----- sections ---------------------------------------------------------------------------------------------
_MD_HEADING = re.compile(r"^#{1,6}\s+(?P<t>.+?)\s*#*\s*$")
_TEX_HEADING = re.compile(r"\\(?:sub)*section\*?\{(?P<t>[^}]*)\}")


def sections(text: str) -> list[Section]:
    out = [Section("(preamble)", 0)]
    for i, line in enumerate(text.splitlines()):
        heading = _MD_HEADING.match(line) or _TEX_HEADING.search(line)
        if heading and len(heading.group("t")) < 150:
            out.append(Section(_clean_title(heading.group("t")), i))
            continue
        out[-1].lines.append(line)
    return [s for s in out if any(line.strip() for line in s.lines) or s.title != "(preamble)"]


def _clean_title(title: str) -> str:
    title = re.sub(r"\$[^$]*\$", "", title)
    return re.sub(r"\s+", " ", title).strip() or "(untitled)"


def _stop_section(title: str) -> bool:
    return bool(re.match(r"^(references|bibliography|acknowledg)", title.strip().lower()))


# ----- tables -----------------------------------------------------------------------------------------------
def _html_rows(block: str) -> list[list[str]]:
    rows = []
    for row in re.findall(r"<tr>(.*?)</tr>", block, flags=re.DOTALL | re.IGNORECASE):
        cells = re.findall(r"<t[dh][^>]*>(.*?)</t[dh]>", row, flags=re.DOTALL | re.IGNORECASE)
        rows.append([html.unescape(re.sub(r"<[^>]+>", " ", c)).strip() for c in cells])
    return rows


def _pipe_rows(lines: list[str]) -> list[list[str]]:
    rows = []
    for line in lines:
        if re.fullmatch(r"\s*\|?[\s:\-|]+\|?\s*", line):
            continue
        rows.append([c.strip() for c in line.strip().strip("|").split("|")])
    return rows


def _tex_rows(block: str) -> list[list[str]]:
    body = re.sub(r"\\(?:hline|toprule|midrule|bottomrule|(?:c|cmid)rule(?:\([^)]*\))?\{[^}]*\}|addlinespace(?:\[[^]]*\])?)", "", block)
    body = re.sub(r"(?<!\\)%[^\n]*", "", body)  # LaTeX comments
    rows = []
    for raw in re.split(r"\\\\(?:\[[^]]*\])?", body):
        cells = [_tex_cell(c) for c in raw.split("&")]
        if any(cells):
            rows.append(cells)
    return rows


_TEX_WRAPPER = re.compile(r"\\(?:multicolumn|multirow)\{[^{}]*\}\{[^{}]*\}\{((?:[^{}]|\{[^{}]*\})*)\}")
_TEX_TEXT = re.compile(r"\\(?:textbf|textit|textrm|texttt|emph|mathrm|text|num|underline)\{((?:[^{}]|\{[^{}]*\})*)\}")


def _tex_cell(cell: str) -> str:
    """A tabular cell as plain text: ``\\multicolumn{2}{c}{\\textbf{Small}}`` -> ``Small``, ``1{,}024`` ->
    ``1024``, ``$3 \\times 10^{-4}$`` -> ``3 × 10^-4``, ``\\si{...}`` units dropped."""
    for _ in range(3):
        cell = _TEX_WRAPPER.sub(r"\1", cell)
        cell = _TEX_TEXT.sub(r"\1", cell)
    cell = re.sub(r"(?<=\d)\{,\}(?=\d{3})", "", cell)
    cell = re.sub(r"\\(?:si|unit)\{[^{}]*\}|\\(?:bf|it|rm|centering|small|footnotesize)\b", "", cell)
    cell = _INLINE_MATH.sub(_inline_math, cell)
    return cell.replace("$", "").replace("\\%", "%").strip()


def tables(text: str) -> list[tuple[int, list[list[str]]]]:
    """(character offset, rows) of every table in the text, in order."""
    out: list[tuple[int, list[list[str]]]] = []
    for m in re.finditer(r"<table>.*?</table>", text, flags=re.DOTALL | re.IGNORECASE):
        out.append((m.start(), _html_rows(m.group(0))))
    # the column spec may nest braces (``{@{}lcc@{}}``); ``tabular*`` and ``tabularx`` take a width first
    spec = r"\{(?:[^{}]|\{[^{}]*\})*\}"
    for m in re.finditer(rf"\\begin\{{(?P<env>tabular\*?|tabularx)\}}(?:{spec}){{1,2}}(.*?)\\end\{{(?P=env)\}}", text, flags=re.DOTALL):
        out.append((m.start(), _tex_rows(m.group(2))))
    lines = text.splitlines(keepends=True)
    offset, block, block_start = 0, [], 0
    for line in [*lines, ""]:
        if line.strip().startswith("|") and line.count("|") >= 2:
            if not block:
                block_start = offset
            block.append(line.rstrip("\n"))
        elif block:
            out.append((block_start, _pipe_rows(block)))
            block = []
        offset += len(line)
    return sorted(out, key=lambda t: t[0])


def _cell_value(cell: str) -> Any:
    cell = cell.replace("−", "-").strip()
    cell = re.sub(r"(\d)\s*×\s*10\s*-\s*(\d)", r"\1×10^-\2", cell)  # "1 × 10−4" as PDF converters print it
    return written_range(cell, numbers.parse_value(cell))  # "500-1000": a range for one setting (`within`)


def _known_name(header: str) -> str | None:
    """Only parameter names the lexicon or phrase table knows: a draft must not invent names."""
    header = header.rsplit(":", 1)[-1]  # "Hyperparameters for ... control: Discount factor": the name after the label
    header = re.sub(r"\([^)]*\)|\bfor [a-z]\b|[#.:*]", " ", header).strip()
    stripped = re.sub(r"^(?:the\s+)?(?:number|num|no|#)\s+of\s+", "", header, flags=re.IGNORECASE).strip()
    counted, header = stripped != header, stripped
    # "Size of replay buffer" -> "replay buffer size": the measure named after what it measures
    header = re.sub(r"^(size|length|dimension|depth|width)\s+of\s+(?:the\s+)?([a-z][a-z\- ]{2,30})$", r"\2 \1", header, flags=re.IGNORECASE)
    if not header:
        return None
    phrase = terms.find_phrase(header)
    ident = terms.identifier(header).lower()
    lex = terms.lexicon_index()
    if ident in lex:
        return lex[ident]
    if phrase and phrase[2] - phrase[1] >= len(re.sub(r"[^a-z ]", "", header.lower()).strip()) - 4:
        return phrase[0]
    # "Learning rate of w updating", "Termination tolerance on ...": a known phrase among the first words,
    # qualified by what follows a preposition
    head = re.split(r"\s+(?:of|on|for|in)\s+", header, maxsplit=1)
    # not "Seed of the universe"; but a counted noun may be qualified: "Number of layers of policy networks"
    if len(head) == 2 and (2 if not counted else 1) <= len(head[0].split()) <= 3 and len(head[1].split()) <= 6:
        first = terms.find_phrase(head[0])
        if first and first[2] >= len(terms.normalise_phrase(terms.ascii_symbol(head[0]))) - 1:
            return first[0]
    return None


def _symbol_header(header: str) -> str | None:
    """A column headed by one of the paper's symbols ("α", "M"): named by the symbol, for the user to map
    (the same as an equation's symbols)."""
    header = header.strip().strip("$").strip()
    if re.fullmatch(r"[A-Za-z]|[α-ωΑ-Ω]|\\(?:alpha|beta|gamma|delta|epsilon|zeta|eta|theta|lambda|mu|nu|omega|sigma|tau)", header):
        return terms.identifier(header.lstrip("\\"))
    return None


def _setting_column(rows: list[list[str]], i: int) -> bool:
    """A symbol's column holds settings (ranges, counts), not results (R² 0.954 per model)."""
    values = [v for v in (_cell_value(r[i]) for r in rows[1:] if i < len(r)) if v is not None]
    return bool(values) and all(isinstance(v, list) or (isinstance(v, int) and not isinstance(v, bool)) for v in values)


def column_values(rows: list[list[str]]) -> list[tuple[str, str, Any, list[str]]]:
    """Tables whose header row names hyperparameters ("Case | Width | Learning Rate"): one value per column."""
    if len(rows) < 2:
        return []
    header = rows[0]
    named = [(i, h, _symbol_header(h) or _known_name(h)) for i, h in enumerate(header) if i > 0 and h]  # a bare symbol names itself
    named = [(i, h, n) for i, h, n in named if n and (not _symbol_header(h) or _setting_column(rows, i))]
    if len(named) < 2:
        return []
    out = []
    for i, head, name in named:
        column = [_cell_value(r[i]) for r in rows[1:] if i < len(r)]
        values = [v for v in column if v is not None]
        if values:
            others = sorted({json.dumps(v) for v in values[1:] if v != values[0]})
            out.append((head, name, values[0], others))
    return out


def cell_values(rows: list[list[str]]) -> list[tuple[str, Any]]:
    """"Prompt Number: [5, 10, 50]" written inside one cell."""
    out = []
    for row in rows:
        for cell in row:
            if re.search(r"[:=]", cell) and re.search(r"\d", cell) and len(cell) < 200:
                out.extend(_sentence_values(re.sub(r":+", ":", _MERGED_LABELS.sub("; ", cell))))
            elif _NAME_VALUE_RUN.fullmatch(cell.strip()) and len(cell) < 200:
                # "Learning rate 1e-4 Training steps 190000": a merged row, each name before its value; only
                # names the lexicon knows are kept (the cell has no explicit assignment)
                parts = "; ".join(m.group(0).strip() for m in _NAME_VALUE.finditer(cell))
                known = {c.lower() for c in terms.lexicon_index().values()}
                out.extend((n, v) for n, v in _sentence_values(parts) if n.lower() in known)
    return out


_NAME_VALUE = re.compile(r"[A-Za-zη][A-Za-z\- ]*?\s[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?(?![\w.])")
_NAME_VALUE_RUN = re.compile(r"(?:[A-Za-zη][A-Za-z\- ]*?\s[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?(?![\w.])\s*)+(?:[A-Za-z][A-Za-z\- ]*)?")


_VALUE_TOKEN = re.compile(r"\[[^\]]*\]|\d+(?:\.\d+)?\s*×\s*10\s*[−-]?\s*\d+|[−-]?\d+(?:\.\d+)?(?:[eE][−-]?\d+)?|[A-Za-z][\w.\-]*")


def merged_cells(rows: list[list[str]]) -> list[tuple[str, str, Any, list[str]]]:
    """PDF converters merge rows: "Initial dimension Downsampling layers Kernel size" | "128 4 3". When the
    header cell names as many known parameters as the value cell holds values, pair them in order."""
    out = []
    regex, lookup = terms._phrase_regex()
    for row in rows:
        if len(row) < 2:
            continue
        header = terms.normalise_phrase(row[0])
        found = [m.group(0) for m in regex.finditer(header)]
        if len(found) < 2 or len(row) < 2:
            out.extend(_capitalised_pairs(row))
            continue
        unnamed = re.sub(r"[^a-z]", "", regex.sub(" ", header))
        if len(unnamed) > 0.3 * len(re.sub(r"[^a-z]", "", header)):
            out.extend(_capitalised_pairs(row))  # the cell also names parameters we do not know: pairing known
            continue  # names by position would shift, pairing every Capitalised phrase may not
        names = [terms.lexicon_index().get(lookup[f].lower(), lookup[f]) for f in found]
        tokens = [_cell_value(t) for t in _VALUE_TOKEN.findall(row[1].replace("−", "-"))]
        values = [v for v in tokens if v is not None and not isinstance(v, bool)]
        if len(values) == len(names) and len(tokens) == len(values):
            out.extend((f, n, v, []) for f, n, v in zip(found, names, values))
        else:
            out.extend(_capitalised_pairs(row))
    return out


# a phrase continues through lower-case words, acronyms, and Capitalised words right after a preposition
# ("Number of Fourier modes", "Number of modes to keep in Fourier Layer Width"): a proper noun inside a name
# does not start the next name
_AFTER_PREPOSITION = r"(?:(?<=\bof)|(?<=\bin)|(?<=\bfor)|(?<=\bon)|(?<=\bto))(?:\s+[A-Z][A-Za-z\-]*)+"
_CAPITALISED_PHRASE = re.compile(
    r"[A-Z][a-z][a-z\-]*(?:/[A-Z]?[a-z][a-z\-]*)?(?:\s+(?![A-Z])[a-z][a-z\-]*|\s+[A-Z]{2,}\b|" + _AFTER_PREPOSITION + r")*"
)


_WORD_VALUED = re.compile(r"\b(?:basis|type|function|optimizer|scheduler|activation|wavelet|mode|norm|normalization|loss)$", re.IGNORECASE)


def _capitalised_pairs(row: list[str]) -> list[tuple[str, str, Any, list[str]]]:
    """The merged header cell read as Capitalised phrases ("Initial dimension Downsampling layers Kernel
    size"), paired in order with the value cell's values — only when the counts agree exactly and every
    phrase is a plausible name (no digits, at most 6 words)."""
    phrases = _CAPITALISED_PHRASE.findall(re.sub(r"^[^:]*:\s*", "", row[0]))
    raw = _VALUE_TOKEN.findall(row[1].replace("−", "-"))
    tokens = [_cell_value(t) for t in raw]
    for i, (token, value) in enumerate(zip(raw, tokens)):
        if value is None and i < len(phrases) and len(raw) == len(phrases) and _WORD_VALUED.search(phrases[i]):
            tokens[i] = token  # "Wavelet basis | legendre": a name whose value is a word
    values = [v for v in tokens if v is not None and not isinstance(v, bool)]
    if len(phrases) < 2 or len(values) != len(phrases) or len(tokens) != len(values):
        return []
    if any(len(p.split()) > 6 for p in phrases):
        return []
    if any(re.search(r"\b(?:of|in|to|the|a|an|and|for|on|with)$", p) for p in phrases):
        return []  # "Number of modes to keep in | Fourier | Layer": a name cut at a capital, the pairing would shift
    return [(p, _known_name(p) or terms.identifier(p).lower(), v, []) for p, v in zip(phrases, values)]


def _lone_number(cell: str) -> Any:
    """"100 Adam": a value cell that spilled the next row's word; its only number is the value."""
    tokens = _VALUE_TOKEN.findall(cell.replace("−", "-"))
    found = [v for v in (_cell_value(t) for t in tokens) if v is not None and not isinstance(v, (bool, str))]
    words = [t for t in tokens if re.fullmatch(r"[A-Za-z][\w.\-]*", t)]
    return found[0] if len(found) == 1 and len(found) + len(words) == len(tokens) and len(words) <= 2 else None


def swept_column(rows: list[list[str]]) -> tuple[str, str, list[Any]] | None:
    """An ablation table: the first column, headed by a parameter the lexicon knows ("# Samples", "Rank"),
    lists the values tried, one row each, the other columns their results -> (header, name, values)."""
    if len(rows) < 4 or len(rows[0]) < 2:
        return None
    name = _known_name(rows[0][0])
    if not name or name in ("optimizer", "lr_scheduler", "activation"):
        return None
    firsts = [_cell_value(r[0]) if r else None for r in rows[1:]]
    start = next((i for i, v in enumerate(firsts) if v is not None), None)  # sub-header rows ("GSM8K | MATH") first
    if start is None or start > 2:
        return None
    values = firsts[start:]
    if any(v is None or isinstance(v, (bool, str, list)) for v in values) or len(values) < 3 or len(set(values)) != len(values):
        return None
    if any(len(r) < 2 for r in rows[1 + start:]):
        return None
    return rows[0][0], name, values


def table_values(rows: list[list[str]]) -> list[tuple[str, str, Any, list[str]]]:
    """(header, name, value, other column values) for rows that name a hyperparameter."""
    out = column_values(rows) + merged_cells(rows)
    for row in rows:
        if len(row) < 2:
            continue
        header = row[0]
        name = _known_name(header)
        if not name:
            continue
        spilled = name not in ("optimizer", "lr_scheduler", "activation")  # "Optimizer | 16 Adam": 16 is not it
        values = [v for v in (_cell_value(c) or (_lone_number(c) if spilled else None) for c in row[1:]) if v is not None]
        strings = [c for c in row[1:] if c and _cell_value(c) is None and re.fullmatch(r"[A-Za-z][\w\- ]{1,30}", c)]
        if values:
            others = sorted({json.dumps(v) for v in values[1:] if v != values[0]})
            out.append((header, name, values[0], others))
        elif strings and name in ("optimizer", "lr_scheduler", "activation"):
            out.append((header, name, strings[0], sorted({json.dumps(s) for s in strings[1:] if s != strings[0]})))
    return out


# ----- equations, algorithms, prose -----------------------------------------------------------------------
_DISPLAY_RE = re.compile(
    r"\$\$(?P<a>.+?)\$\$|\\begin\{(?P<env>equation\*?|align\*?)\}(?P<b>.+?)\\end\{(?P=env)\}|\\\[(?P<c>.+?)\\\]",
    re.DOTALL,
)
_LATEX_SYMBOL = re.compile(r"\\(?:alpha|beta|gamma|delta|epsilon|eta|theta|lambda|mu|sigma|tau|phi|pi|omega|rho|kappa)\b|(?<![\\a-zA-Z])[A-Za-z](?![a-zA-Z])")


def latex_symbols(latex: str) -> list[str]:
    body = re.sub(r"\\(?:mathrm|text|operatorname\*?)\s*\{[^}]*\}", " ", latex)
    body = re.sub(r"_\s*\{[^{}]*\}|_\s*\w", " ", body)  # subscripts index a symbol, they are not one
    found = {m.group(0).lstrip("\\").replace(" ", "") for m in _LATEX_SYMBOL.finditer(body)}
    return sorted(found - {"d", "i"}, key=lambda s: (len(s), s))


def _normalise_latex(latex: str) -> str:
    latex = re.sub(r"\s+", " ", latex).strip().rstrip(",.")
    # converters space every letter out: "L o R A" -> "LoRA", "\mathrm { s i g n }" -> "\mathrm{sign}"
    return re.sub(r"(?<=\b[A-Za-z]) (?=[A-Za-z]\b)", "", latex)


_ALGO_HEADING = re.compile(r"^\s*(?:#+\s*)?algorithm\s*\d*", re.IGNORECASE)
_FIRST_THEN = re.compile(r"[^.]*\bfirst\b[^.]*\bthen\b[^.]*\.", re.IGNORECASE)
_SENTENCE = re.compile(r"(?:[^.!?\n]|\.(?=\d))+(?:[.!?]|$)")
_SEEDS_RE = re.compile(r"\b(?P<n>\d+|one|two|three|four|five|six|seven|eight|nine|ten)\s+(?:random\s+|different\s+|independent\s+)?(?:seeds|runs|trials)\b", re.IGNORECASE)


_INLINE_MATH = re.compile(r"\$([^$\n]{1,200})\$|\\\((.{1,200}?)\\\)")
_GREEK_NAMES = {"alpha", "beta", "gamma", "delta", "epsilon", "eta", "theta", "lambda", "mu", "sigma", "tau", "omega"}
_GREEK_TEX = re.compile(r"\\(" + "|".join(sorted(_GREEK_NAMES)) + r")(?![A-Za-z])")


def _inline_math(match: re.Match) -> str:
    """``$0 . 1 \\%$`` -> ``0.1%``; ``$\\alpha = 16$`` -> ``alpha = 16``: inline math read as prose."""
    body = (match.group(1) or match.group(2) or "").replace("\\{", "⦃").replace("\\}", "⦄")  # set braces survive, grouping braces do not
    body = re.sub(r"\\(?:left|right|big|Big)\b", "", body)
    body = _GREEK_TEX.sub(lambda m: f" {m.group(1)} ", body)
    body = re.sub(r"\\(?:mathbf|mathrm|mathtt|textbf|textrm|text|bf|rm|mathit|boldsymbol)\b", "", body).replace("\\%", "%").replace("\\times", "×")
    body = re.sub(r"_\s*\{[^{}=]*=[^{}]*\}", " ", body)  # "\sum _ { i = 1 } ^ { n }": an index range, not a setting
    body = re.sub(r"(?<![\w\\])[A-Za-z]\s*=\s*[-\d][^=$]*?\\[lc]?dots\s*,?\s*\w*", " ", body)  # "i = 1 , \dots , n"
    body = _flatten_groups(body)
    # "\beta _ { 1 }" -> "beta1" (Adam's beta1); "\lambda _ { V A E }" -> "lambda_VAE"; "k _ 3" -> "k_3"
    body = re.sub(r"\b([A-Za-z]+)\s*_\s*(?:\{([^{}]*)\}|(\w))", _subscript, body)
    body = re.sub(r"[{}]", " ", body).replace("⦃", "{").replace("⦄", "}")
    body = re.sub(r"\s*\^\s*(-?)\s*", r"^\1", body)
    body = re.sub(r"(?<=[\d.])\s+(?=[\d.%])", "", body)
    body = re.sub(r"(?<=\d)\s*e\s*([-+−])\s*(?=\d)", r"e\1", body)  # "1 e - 3" -> "1e-3"
    body = re.sub(r"(?<=\d)\s+([kKM])\b", r"\1", body)  # "1 0 0 k" -> "100k"
    body = re.sub(r"(?<![\w\\])([A-Za-z])\s+(?=[A-Za-z](?!\w))", r"\1", body)  # "d t" -> "dt", "R e" -> "Re"
    body = re.sub(r"(?<![\w\\])([A-Za-z])\s+(?=[A-Za-z](?!\w))", r"\1", body)  # (overlapping runs: "d i m")
    # "P_max = 1 + 3l = 49": the leading number of an expression is not the value, the result is
    body = re.sub(r"=\s*[-+]?\d[\d.]*\s*[-+*/×]\s*[^=;,]{1,40}?=\s*", "= ", body)
    return re.sub(r"\s+", " ", body).strip()


def _flatten_groups(body: str) -> str:
    """Grouping braces that do not open a sub- or superscript dropped, innermost first, so that
    ``P _ { \\mathrm { max } }`` keeps one subscript group."""
    while True:
        changed = re.sub(r"(?<![_^\s])(\s*)\{([^{}]*)\}", r"\1 \2 ", body)
        if changed == body:
            return body
        body = changed


def _subscript(match: re.Match) -> str:
    """A subscripted symbol as code names it: a Greek letter indexed by one digit is joined ("beta1"), any
    other subscript kept after an underscore, its spaced-out letters closed up."""
    base, sub = match.group(1), re.sub(r"\s+", "", match.group(2) if match.group(2) is not None else match.group(3))
    if not sub:
        return base
    if base in _GREEK_NAMES and sub.isdigit() and len(sub) == 1:
        return f"{base}{sub}"
    return f"{base}_{sub}" if re.fullmatch(r"\w+", sub) else f"{base}_{{{sub}}}"


def algorithm_steps(lines: list[str]) -> list[str]:
    steps = []
    for line in lines:
        text = re.sub(r"^\s*(?:\d+[:.)]|\\State|\\STATE|[-*•])\s*", "", line).strip()
        text = re.sub(r"#.*$", "", text).strip()
        if not text or text.lower().startswith(("input", "output", "require", "ensure", "return", "end")):
            continue
        name = orders.step_name(text)
        if name and name not in steps:
            steps.append(name)
    return steps


_MERGED_LABELS = re.compile(r"(?<=[\]\d)}])\s*(?=[A-Z][A-Za-z]*(?:\s+[A-Za-z]+){0,3}\s*:)")
_SEARCHED = re.compile(
    r"(?P<x>[A-Za-z][A-Za-z \-]{2,40}?)\s+(?:is\s+|are\s+|was\s+|were\s+)?(?:tuned\s+|searched\s+|chosen\s+|selected\s+|"
    r"swept\s+|varied\s+|picked\s+)?(?:from|over|among|within|in)\s+(?:the\s+range\s+(?:of\s+)?)?(?P<v>\[[^\]]{1,80}\]|\{[^}]{1,80}\})"
)
_SET_X_TO = re.compile(r"\b(?:set|fix|cap|limit)\s+(?:the\s+)?(?P<x>[A-Za-z][A-Za-z \-]{2,40}?)\s+(?:to|at|as)\s+(?P<v>[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+|\s*[x×]\s*10\s*\^?\s*\{?\s*[-−]?\s*\d+\}?)?%?(?:\s*[-–]\s*\d+(?:\.\d+)?(?![\w.]))?)(?![\w]|\.\d|\s*[-–]\s*\d)")  # "set the AR steps to 6-7": a range
_COUNTED = re.compile(
    r"\b(?:we\s+|they\s+)?(?:use|uses|using|sample|sampled|sampling|gather|gathered|collect|collected|train|trained|generate|"
    r"generated|run|ran|employ|employed|select|selected|draw|drew|drawn|consider|considered|evaluate|evaluated|contain|contains|containing|comprise|comprises|comprising|involve|involves|a total of)\s+"
    r"(?:(?!in\b|on\b|at\b|for\b|from\b|of\b|to\b)[a-z]+\s+)?\d[\d,.]*[kKM]?\s+(?:[a-z]+\s+)?[a-z]+s\b",
    re.IGNORECASE,
)
_AS_VALUE = re.compile(r"(?P<x>[A-Za-z][A-Za-z \-]{2,40}?)\s+(?:as|(?:(?:is|are|was|were)\s+)?(?:set|fixed|capped|limited|equal|chosen)\s+(?:to|at|as))\s+(?P<v>[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+|\s*[x×]\s*10\s*\^?\s*\{?\s*[-−]?\s*\d+\}?)?%?)(?![\w]|\.\d)")


def normalise_sentence(sentence: str) -> str:
    """Prose -> the ``key = value`` form the claim compiler reads: "Scale Factor:[1, 10]Bottleneck: [4, 8]"
    (cells merged by PDF converters) -> two parts; "the learning rate is tuned from [1e-3, 1e-2]" and
    "we set the learning rate as 3e-5" -> "learning rate = ...". Parts are joined with ``;``."""
    text = _MERGED_LABELS.sub("; ", terms.ascii_symbol(sentence))  # "temperature τ" -> "temperature tau"
    text = re.sub(r"\bwarm[\s-]up\b", "warmup", text, flags=re.IGNORECASE)  # one spelling for the lexicon
    text = re.sub(r"(\d%)\s+of\s+(?:the\s+)?((?:linear\s+|cosine\s+)?warmup)", r"\1 \2", text)  # "10% of linear warmup"
    text = re.sub(r":(?=[\[{\d])", ": ", text)
    text = _SYMBOL_IN_PARENS.sub(lambda m: _named_value(m.group("x"), m.group("v"), m.group(0)), text)
    text = _OF_MEASURE.sub(lambda m: _named_value(f"{m.group('x')} {m.group('m')}", m.group("v"), m.group(0)), text)
    text = _SEARCHED.sub(lambda m: f"; {_clause_tail(m.group('x'))} = {m.group('v')};", text)
    text = _SET_X_TO.sub(lambda m: f"; {_clause_tail(m.group('x'))} = {m.group('v')};", text)
    text = _AS_VALUE.sub(lambda m: f"; {_clause_tail(m.group('x'))} = {m.group('v')};", text)
    text = _VALUE_AS.sub(lambda m: f"; {m.group('x')} = {m.group('v')};", text)
    text = _WHILE_OTHER.sub(lambda m: f"{m.group(0)[:m.start('rest') - m.start()]} {m.group('x')} = {m.group('w')};", text)
    text = _RESPECTIVELY_AS.sub(lambda m: _one_each(m.group("x"), m.group("v"), m.group(0)), text)
    text = _RESPECTIVELY_OF.sub(lambda m: _one_each(_clause_tail(m.group("x")), m.group("v"), m.group(0)), text)
    return text


_NUM = r"[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?[kKM]?%?"
_NUM_LIST = rf"{_NUM}(?:\s*,\s*{_NUM})*,?\s+and\s+{_NUM}"
# "A, B, and C have 256, 512, and 768 as the embedding dimensions, respectively": one value per setting
_RESPECTIVELY_AS = re.compile(
    rf"(?P<v>{_NUM_LIST})\s+as\s+(?:the\s+|their\s+|its\s+)?(?P<x>[a-z][a-z\- ]{{2,30}}?)\s*,?\s*respectively\b", re.IGNORECASE
)
# "learning rates of 1e-3 and 1e-4 for the small and the large model, respectively"
_RESPECTIVELY_OF = re.compile(
    rf"(?P<x>[A-Za-z][A-Za-z\- ]{{2,40}}?)\s+(?:of|are|were|is|was|=|set\s+to|to)\s+(?P<v>{_NUM_LIST})"
    r"(?:\s+(?:for|on|in)\s+[^.;=]{1,80}?)?\s*,?\s*respectively\b"
)
# "; base dimensions = 64;, while P2VAE-87M uses 128": the second model's value of the same parameter
_WHILE_OTHER = re.compile(
    rf"; (?P<x>[^;=]{{2,40}}?) = (?P<v>{_NUM});(?P<rest>\s*,?\s*(?:while|whereas)\s+(?:the\s+)?[\w\-]+(?:\s+[\w\-]+)?\s+"
    rf"(?:uses|use|has|have|adopts|takes)\s+(?P<w>{_NUM})(?!\w|\.\d))"
)


# "dropout (p = 0.1)", "discount factor (gamma = 0.99)": the symbol in parentheses is the named parameter's
_SYMBOL_IN_PARENS = re.compile(
    r"(?P<x>[A-Za-z][A-Za-z\- ]{2,40}?)\s*\(\s*[A-Za-z]{1,7}\d?(?:_\w{1,8})?\s*=\s*(?P<v>[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)\s*\)"
)
# "a replay buffer of size 10^6", "a context window of length 2048": the measure after the thing it measures
_OF_MEASURE = re.compile(
    r"(?P<x>[A-Za-z][A-Za-z\- ]{2,40}?)\s+of\s+(?P<m>size|length|capacity|dimension|width|depth)\s+"
    r"(?P<v>\d+(?:\.\d+)?(?:[eE][-+]?\d+|\s*[x×]\s*10\s*\^\s*-?\d+|\^\d+)?[kKM]?)(?!\w|\.\d)"
)


def _named_value(phrase: str, value: str, original: str) -> str:
    """``; name = value;`` when the phrase ends in a parameter the lexicon knows, else the text unchanged."""
    tail = _clause_tail(phrase)
    if re.fullmatch(r"\d+\^\d+", value):  # "10^6"
        base, power = value.split("^")
        value = str(int(base) ** int(power))
    return f"; {tail} = {value};" if _known_name(tail) else original


def _one_each(name: str, values: str, original: str) -> str:
    """``name = v;`` once per listed value, the name singular ("embedding dimensions" -> "embedding dimension");
    only for a parameter the lexicon knows (per-setting accuracies are results, not settings)."""
    name = re.sub(r"(?<=[a-z]{3})(?<!s)s$", "", name.strip())
    if not _known_name(name):
        return original
    return " ".join(f"; {name} = {v};" for v in re.findall(_NUM, values))


# "P2VAE-16M uses 64 as the base dimension": the value first, then what it is
_VALUE_AS = re.compile(
    r"\b(?:use|uses|used|using|adopt|adopts|adopted|choose|chooses|chose|take|takes|set|sets)\s+"
    r"(?P<v>[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)\s+as\s+(?:the\s+|our\s+|its\s+)?(?P<x>[a-z][a-z\- ]{2,30}?)(?=\s*(?:[,.;]|$|\s(?:for|of|in|and|while|which)\b))",
    re.IGNORECASE,
)


# "two layers": a number word right before the plural noun it counts, written as digits
_WORD_COUNT = re.compile(
    r"\b(two|three|four|five|six|seven|eight|nine|ten|Two|Three|Four|Five|Six|Seven|Eight|Nine|Ten)\b(?=\s+[a-z]{2,}s\b)"
)


def _clause_tail(words: str) -> str:
    """The parameter phrase at the end of a clause: "we set a small learning rate" -> "learning rate"."""
    words = re.split(r"\b(?:and|we|then|with|while|set|use|used|using|a|an|the|small|large|fixed|initial)\b", words)[-1]
    return words.strip() or "value"


def _sentence_values(sentence: str) -> list[tuple[str, Any]]:
    """Value checks from a prose sentence, through the claim compiler. Names the lexicon knows are kept
    always; the paper's own words (``scale_factor``) only where the text states an explicit assignment
    (``X = N``, ``X: N``, "X is set to N"), never for a number merely near a word."""
    out = _compiled_values(sentence, lexicon_only=False)
    spelled = _WORD_COUNT.sub(lambda m: str(_WORD_NUMBERS[m.group(1).lower()]), sentence)
    if spelled != sentence:  # "two layers" counts a parameter the lexicon knows; "two key designs" is prose
        out += [pair for pair in _compiled_values(spelled, lexicon_only=True) if pair not in out]
    return out


def _compiled_values(sentence: str, lexicon_only: bool) -> list[tuple[str, Any]]:
    if not re.search(r"\d", sentence) or len(sentence) > 400:
        return []
    normalised = normalise_sentence(sentence)
    compiled = compile_claim(SAU(id="draft", dimension="numerical", claim=normalised))
    out = []
    lex = terms.lexicon_index()
    known = {c.lower() for c in lex.values()} | {lex.get(c.lower(), c).lower() for _, c in terms.phrase_table() if c}
    explicit = bool(re.search(r"[=:]|\bset to\b", normalised)) and not lexicon_only
    counted = bool(_COUNTED.search(sentence)) and not lexicon_only  # "we sample 200 prompts": num_prompts
    singular = _singular_names(normalised, compiled.checks, known)
    for check in compiled.checks:
        if check.kind != "value" or not check.name or isinstance(check.expect, str):
            continue
        check = singular.get(repr((check.name, check.expected())), check)
        # Draft.add writes `sweep:`, `within:` and `same_as:` for these
        value = (Sweep(check.sweep) if check.sweep is not None else Interval(check.within) if check.within is not None
                 else SameAs(check.same_as) if check.same_as is not None else check.expect)
        named_count = counted and check.name.startswith("num_")
        if check.name.lower() in known or named_count or (explicit and len(check.name) <= 40):
            out.append((check.name, value))
    return out


class SameAs(str):
    """The other parameter a drafted value equals ("α = r"): written as ``same_as``."""


# The value-check field a drafted value of that type is written under, instead of `expect`.
_EXPECT_FIELDS: dict[type, str] = {Sweep: "sweep", Interval: "within", SameAs: "same_as"}


def _singular_names(text: str, checks: list[Any], known: set[str]) -> dict[str, Any]:
    """"training with ranks r = {8, 16}": a plural the lexicon does not know, compiled again in the singular
    (the compiler's context rules still decide the name); (name, value) -> the check the singular gives."""
    plurals = {c.name for c in checks if c.kind == "value" and c.name and c.name.lower() not in known
               and re.fullmatch(r"[a-z_]*[a-z]{3}(?<!s)s", c.name)}
    out: dict[str, Any] = {}
    for plural in sorted(plurals):
        words = plural.replace("_", r"[\s_-]+")
        retry = re.sub(rf"\b({words[:-1]})s\b", r"\1", text, flags=re.IGNORECASE)
        if retry == text:
            continue
        again = compile_claim(SAU(id="draft", dimension="numerical", claim=retry))
        for old, new in zip([c for c in checks if c.kind == "value"], [c for c in again.checks if c.kind == "value"]):
            if old.name == plural and new.name and new.name.lower() in known and new.expected() == old.expected():
                out[repr((old.name, old.expected()))] = new
    return out


_RAN_ON = re.compile(
    r"\b(?:train(?:ed|ing)?|ran|run|runs|conducted|performed|experiments?|fine-?tun(?:ed|ing)|implemented|carried out)\b",
    re.IGNORECASE,
)
_NOT_A_RUN = re.compile(r"\b(?:requires?|at least|e\.g\.|such as|memory (?:of|footprint)|faster than|speed-?up|throughput|latency)\b",
                        re.IGNORECASE)


def _run_hardware(sentence: str) -> dict[str, Any] | None:
    """The GPUs of a sentence that says what the experiments ran on ("All models are trained on 8 NVIDIA A100
    GPUs"), as ``hardware`` parameters; None for a requirement, a speed comparison or no run verb."""
    if not _RAN_ON.search(sentence) or _NOT_A_RUN.search(sentence):
        return None
    return protocol_claims.gpu_params(sentence)


def _stated(value: Any) -> str:
    """How a drafted claim states its value: "= 0.0002", "between 500 and 1000", "= lora_rank"."""
    if isinstance(value, Interval):
        return f"between {value[0]} and {value[1]}"
    return f"= {value}"


# ----- the draft ----------------------------------------------------------------------------------------------
def build(paper_text: str) -> Draft:
    d = Draft()
    secs = sections(paper_text)
    for sec in secs:
        if _stop_section(sec.title):
            continue
        body = "\n".join(sec.lines)
        for _, rows in tables(body):
            for header, name, value, others in table_values(rows):
                d.add("numerical", f"{header.strip()} {_stated(value)}", sec.title, {"kind": "value", "name": name, "expect": value})
                for other in others:  # per-setting values: one SAU each, for the reviewer to keep or scope with `in:`
                    d.add("numerical", f"{header.strip()} = {other} (another setting)", sec.title,
                          {"kind": "value", "name": name, "expect": json.loads(other)},
                          ["another setting's value in the same table: scope it with `in:` or delete it"])
            for name, value in cell_values(rows):
                d.add("numerical", f"{name} {_stated(value)}", sec.title, {"kind": "value", "name": name, "expect": value})
            swept = swept_column(rows)
            if swept:
                header, name, values = swept
                d.add("numerical", f"{header.strip()} swept over {values}", sec.title, {"kind": "value", "name": name, "sweep": values},
                      ["the values an ablation table tries: keep it if the repository runs that sweep"])
        prose = re.sub(r"<table>.*?</table>", " ", body, flags=re.DOTALL | re.IGNORECASE)
        prose = _INLINE_MATH.sub(_inline_math, _DISPLAY_RE.sub(" ", prose))
        prose = re.sub(r"(\d)\.\n(\d)", r"\1.\2", prose)  # "25.\n2K": a number broken by the PDF converter
        for m in _SENTENCE.finditer(prose):
            sentence = m.group(0).strip()
            for name, value in _sentence_values(sentence):
                d.add("numerical", sentence[:200], sec.title, {"kind": "value", "name": name, "expect": value})
            hardware = _run_hardware(sentence)
            if hardware:
                d.add("numerical", sentence[:200], sec.title, {"kind": "protocol", "rule": "hardware", **hardware},
                      ["the GPUs the paper ran on: the repo's launch scripts, configs or README must state them"])
        for m in _DISPLAY_RE.finditer(body):
            latex = _normalise_latex(m.group("a") or m.group("b") or m.group("c") or "")
            if len(latex) < 5 or len(latex) > 600 or "=" not in latex:
                continue
            symbols = latex_symbols(latex)
            d.add(
                "methodological",
                f"Equation in {sec.title}",
                sec.title,
                {"kind": "formula", "latex": latex, "symbols": {}},
                [f"map the paper symbols to code names: {', '.join(symbols)}"] if symbols else [],
            )
        if _ALGO_HEADING.match(sec.title) or re.search(r"\\begin\{algorithm", body):
            block = re.sub(r".*?\\begin\{algorithmic\}(?:\[[^]]*\])?|\\end\{algorithmic\}.*", "", body, flags=re.DOTALL)
            steps = algorithm_steps(block.splitlines())
            if len(steps) >= 2:
                d.add("ordering", f"{sec.title}: steps in order", sec.title, {"kind": "order", "steps": steps[:12], "relation": "before"},
                      ["step names are guesses from the algorithm's lines: rename them to the repo's functions"])
        for m in _FIRST_THEN.finditer(prose):
            found = orders.find_first_then(m.group(0))
            if found:
                d.add("ordering", m.group(0).strip()[:200], sec.title, {"kind": "order", "steps": list(found.steps), "relation": "before"})
        for hit in terms.find_protocol_terms(prose):
            d.add("protocol", f"uses {hit.category} {hit.target}", sec.title, {"kind": "protocol", "rule": hit.category, "expect": hit.target})
        for m in _SEEDS_RE.finditer(prose):
            raw = m.group("n").lower()
            count = _WORD_NUMBERS.get(raw) or int(raw)
            d.add("protocol", m.group(0), sec.title, {"kind": "protocol", "rule": "seeds", "expect": count})
    return d


def _slug(source_name: str) -> str:
    stem = re.sub(r"\.(paper\.)?(md|tex|markdown|txt)$", "", source_name, flags=re.IGNORECASE)
    return re.sub(r"[^a-z0-9]+", "-", stem.lower()).strip("-") or "paper"


def _flow(value: Any) -> str:
    """One-line YAML, keys sorted: stable output for review diffs.

    JSON is a YAML subset except for one trap: YAML 1.1 reads ``1e-05`` (no dot) as a string, so floats in
    exponent form are written ``1.0e-05``.
    """
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(str(k), ensure_ascii=False)}: {_flow(v)}" for k, v in sorted(value.items())) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_flow(v) for v in value) + "]"
    if isinstance(value, float) and not isinstance(value, bool):
        text = repr(value)
        mantissa, e, exponent = text.partition("e")
        return f"{mantissa}.0e{exponent}" if e and "." not in mantissa else text
    return json.dumps(value, ensure_ascii=False)


def render(d: Draft, source_name: str) -> str:
    paper_id = _slug(source_name)
    lines = [
        f"# Draft spec from {source_name}, written by `sau-verify draft` (deterministic, no LLM).",
        "# Review every SAU: delete what the paper does not claim, fix names, map formula symbols to code.",
        "version: 1",
        f"paper: {_flow({'id': paper_id})}",
        "saus:",
    ]
    counters = {code: 0 for code in _DIM_CODE.values()}
    order = {"numerical": 0, "methodological": 1, "protocol": 2, "ordering": 3}
    for dimension, claim, source, check, comments in sorted(d.items, key=lambda it: order[it[0]]):
        code = _DIM_CODE[dimension]
        counters[code] += 1
        lines.append(f"  - id: {paper_id}-{code}-{counters[code]:03d}")
        for comment in comments:
            lines.append(f"    # {comment}")
        lines.append(f"    dimension: {dimension}")
        lines.append(f"    claim: {_flow(claim)}")
        lines.append(f"    source: {_flow(source)}")
        lines.append(f"    check: {_flow(check)}")
    if not d.items:
        lines[-1] = "saus: []"
    return "\n".join(lines) + "\n"


def draft(paper_text: str, source_name: str) -> str:
    """A starter YAML spec for the paper (see module doc); always valid spec v1."""
    return render(build(paper_text), source_name)

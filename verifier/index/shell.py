"""Shell launch scripts (tree-sitter-bash): which Python program runs with which flags, and the env values.

Launch.flags hold (name, value text): names lose their leading dashes and have dashes turned into
underscores (``--learning-rate`` -> ``learning_rate``); Hydra overrides keep their dotted key
(``optim.lr``); a bare switch has the value ``"true"``; several values after one flag are joined by spaces.
``$VAR`` is replaced by an earlier ``VAR=`` value of the same script; loop variables stay as written
(``"$seed"``) and get an ``env`` binding whose value is the tuple of loop values.
Every flag is also a ``launch`` binding (owner = target script, path = flag name or Hydra key). A flag whose
value is a loop variable (``for r in 8 16; do python train.py --rank $r``) or a Hydra multirun list
(``python train.py -m rank=8,16``, ``range(1,4)``, ``choice(a,b)``) runs once per value, so it is one
constant binding per value, all at the flag's line (at most ``MAX_SWEEP_VALUES``; more stay unresolved).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from verifier.index.facts import Binding, BindingKind, FileFacts, Launch, Note, Span
from verifier.index.pyfold import is_number_text, number_value

_PYTHON = re.compile(r"(?:.*/)?python(?:\d+(?:\.\d+)?)?(?:w)?$")
_LAUNCHERS = {"accelerate": "accelerate", "torchrun": "torchrun", "deepspeed": "deepspeed"}
_LAUNCHER_MODULES = {
    "torch.distributed.launch": "torchrun",
    "torch.distributed.run": "torchrun",
    "accelerate.commands.launch": "accelerate",
    "deepspeed": "deepspeed",
    "deepspeed.launcher.runner": "deepspeed",
}
_WRAPPERS = frozenset(
    {"nohup", "time", "srun", "exec", "env", "stdbuf", "nice", "taskset", "numactl", "xvfb-run", "uv", "poetry",
     "pipenv", "conda", "mamba", "micromamba", "mpirun", "mpiexec", "timeout", "sudo", "ionice", "pixi", "hatch",
     "pdm", "rye", "singularity", "apptainer", "command"}
)
# Python options that take a value: `python -W ignore train.py`.
_PY_VALUE_OPTS = frozenset({"-W", "-X", "--check-hash-based-pycs"})
_HYDRA = re.compile(r"^(\+{0,2})([A-Za-z_][\w\-]*(?:[./@][\w\-]+)*)=(.*)$", re.DOTALL)
_EXPANSION = re.compile(r"^\$\{#?([A-Za-z_]\w*)(\[[@*]\])?(?::?[-=]([^}]*))?\}$")
_MAX_DEPTH = 200
_MAX_RANGE = 10_000
MAX_SWEEP_VALUES = 64  # runs one launch line stands for, per flag: a longer sweep is left as written
_VAR_REF = re.compile(r"^\$\{?([A-Za-z_]\w*)\}?$")
_HYDRA_RANGE = re.compile(r"^range\(\s*(-?\d+)\s*(?:,\s*(-?\d+)\s*)?(?:,\s*(-?\d+)\s*)?\)$")
_HYDRA_CHOICE = re.compile(r"^choice\((.*)\)$", re.DOTALL)

_parser = None


def _get_parser():
    global _parser
    if _parser is None:
        import tree_sitter_bash
        from tree_sitter import Language, Parser

        _parser = Parser(Language(tree_sitter_bash.language()))
    return _parser


@dataclass
class _Token:
    text: str
    constant: bool
    line: int
    end_line: int


@dataclass
class _State:
    path: str
    line_offset: int = 0
    scalars: dict[str, str] = field(default_factory=dict)
    arrays: dict[str, tuple[str, ...]] = field(default_factory=dict)
    loop_vars: set[str] = field(default_factory=set)
    loop_values: dict[str, tuple[str, ...]] = field(default_factory=dict)  # constant loop lists, by variable
    bindings: list[Binding] = field(default_factory=list)
    launches: list[Launch] = field(default_factory=list)


def extract(path: str, text: str, facts: FileFacts) -> FileFacts:
    state = _State(path)
    error = scan(text, state)
    if error is not None:
        facts.parse_error = error
    facts.bindings = sorted(state.bindings, key=lambda b: (b.span.line, b.kind.value, b.path, b.expr))
    facts.launches = sorted(state.launches, key=lambda l: (l.span.line, l.target, l.flags))
    return facts


def scan(text: str, state: _State) -> Note | None:
    """Parse ``text`` as bash and add its env bindings and launches to ``state``; a Note if it parsed partly."""
    data = text.encode("utf-8", "replace")
    tree = _get_parser().parse(data)
    root = tree.root_node
    _walk(root, state, 0)
    if root.has_error:
        line = _first_error_line(root)
        return Note(state.path, "shell syntax error", line + state.line_offset if line else None)
    return None


def _first_error_line(root) -> int | None:
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type == "ERROR" or node.is_missing:
            return node.start_point[0] + 1
        if node.has_error:
            stack.extend(reversed(node.children))
    return None


def _line(node, state: _State) -> int:
    return node.start_point[0] + 1 + state.line_offset


def _end_line(node, state: _State) -> int:
    row, col = node.end_point
    if col == 0 and row > node.start_point[0]:
        row -= 1
    return row + 1 + state.line_offset


def _walk(node, state: _State, depth: int) -> None:
    if depth > _MAX_DEPTH:
        return
    t = node.type
    if t == "variable_assignment":
        _assignment(node, state, exported=False)
        return
    if t == "declaration_command":
        for child in node.children:
            if child.type == "variable_assignment":
                _assignment(child, state, exported=True)
        return
    if t == "command":
        _command(node, state)
        return
    if t == "for_statement":
        _for(node, state, depth)
        return
    for child in node.children:
        _walk(child, state, depth + 1)


def _assignment(node, state: _State, exported: bool) -> tuple[str, str] | None:
    name_node = node.child_by_field_name("name")
    value_node = node.child_by_field_name("value")
    if name_node is None:
        return None
    name = name_node.text.decode("utf-8", "replace")
    if name_node.type != "variable_name":
        return None
    span = Span(state.path, _line(node, state), _end_line(node, state))
    if value_node is not None and value_node.type == "array":
        items = [_eval(c, state) for c in value_node.children if c.type not in ("(", ")")]
        texts = tuple(t.text for t in items)
        state.arrays[name] = texts
        constant = all(t.constant for t in items)
        value = tuple(number_value(t) for t in texts) if constant else None
        state.bindings.append(
            Binding(name, name, BindingKind.env, " ".join(texts), value, constant, "<module>", span)
        )
        return name, " ".join(texts)
    token = _eval(value_node, state) if value_node is not None else _Token("", True, span.line, span.line)
    if token.constant:
        state.scalars[name] = token.text
    else:
        state.scalars.pop(name, None)
    state.loop_vars.discard(name)
    state.bindings.append(
        Binding(name, name, BindingKind.env, token.text, number_value(token.text) if token.constant else None,
                token.constant, "<module>", span)
    )
    return name, token.text


def _eval(node, state: _State) -> _Token:
    """The word's text after quote removal and expansion of known variables; constant if fully known."""
    line, end = _line(node, state), _end_line(node, state)
    t = node.type
    raw = node.text.decode("utf-8", "replace")
    if t in ("word", "number"):
        return _Token(_unescape(raw), "$" not in raw and "`" not in raw, line, end)
    if t == "raw_string":
        return _Token(raw[1:-1], True, line, end)
    if t == "ansi_c_string":
        return _Token(raw[2:-1], True, line, end)
    if t == "simple_expansion":
        return _expand(raw[1:], state, line, end)
    if t == "expansion":
        m = _EXPANSION.match(raw)
        if m:
            tok = _expand(m.group(1), state, line, end)
            if not tok.constant and m.group(3) is not None and m.group(1) not in state.loop_vars:
                return _Token(m.group(3), True, line, end)
            if m.group(2) and m.group(1) in state.arrays:
                return _Token(" ".join(state.arrays[m.group(1)]), True, line, end)
            return tok
        return _Token(raw, False, line, end)
    if t in ("string", "concatenation"):
        parts = []
        constant = True
        children = node.children
        if t == "string":
            children = [c for c in children if c.type != '"']
            if not children:
                return _Token("", True, line, end)
        for child in children:
            if child.type == "string_content":
                parts.append(child.text.decode("utf-8", "replace"))
                continue
            tok = _eval(child, state)
            parts.append(tok.text)
            constant = constant and tok.constant
        if t == "string" and not parts:
            return _Token(raw.strip('"'), True, line, end)
        return _Token("".join(parts), constant, line, end)
    return _Token(raw, False, line, end)


def _expand(name: str, state: _State, line: int, end: int) -> _Token:
    if name in state.loop_vars:
        return _Token("$" + name, False, line, end)
    if name in state.scalars:
        return _Token(state.scalars[name], True, line, end)
    return _Token("$" + name, False, line, end)


def _unescape(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text.replace("\\\n", "")) if "\\" in text else text


def _for(node, state: _State, depth: int) -> None:
    var_node = node.child_by_field_name("variable")
    values: list[str] = []
    constant = True
    for v in node.children_by_field_name("value"):
        if v.type == "brace_expression":
            expanded = _brace_range(v.text.decode("utf-8", "replace"))
            if expanded is None:
                constant = False
            else:
                values.extend(expanded)
            continue
        if v.type == "command_substitution":
            seq = _seq(v.text.decode("utf-8", "replace"))
            if seq is None:
                constant = False
            else:
                values.extend(seq)
            continue
        tok = _eval(v, state)
        constant = constant and tok.constant
        if v.type in ("simple_expansion", "expansion") or (v.type == "string" and " " in tok.text):
            values.extend(tok.text.split())
        else:
            values.append(tok.text)
    if var_node is not None:
        name = var_node.text.decode("utf-8", "replace")
        span = Span(state.path, _line(node, state), _line(node, state))
        value = tuple(number_value(v) for v in values) if constant else None
        state.bindings.append(
            Binding(name, name, BindingKind.env, " ".join(values), value, constant and bool(values), "<module>",
                    span)
        )
        state.loop_vars.add(name)
        state.scalars.pop(name, None)
        outer = state.loop_values.pop(name, None)
        if constant and values:
            state.loop_values[name] = tuple(values)
    body = node.child_by_field_name("body")
    if body is not None:
        _walk(body, state, depth + 1)
    if var_node is not None:
        state.loop_vars.discard(name)
        state.loop_values.pop(name, None)
        if outer is not None:
            state.loop_values[name] = outer


def _brace_range(text: str) -> list[str] | None:
    m = re.fullmatch(r"\{(-?\d+)\.\.(-?\d+)(?:\.\.(-?\d+))?\}", text)
    if not m:
        return None
    a, b = int(m.group(1)), int(m.group(2))
    step = abs(int(m.group(3))) if m.group(3) else 1
    step = step or 1
    if abs(b - a) // step > _MAX_RANGE:
        return None
    return [str(x) for x in (range(a, b + 1, step) if a <= b else range(a, b - 1, -step))]


def _seq(text: str) -> list[str] | None:
    m = re.fullmatch(r"\$\(\s*seq\s+(-?\d+)(?:\s+(-?\d+))?(?:\s+(-?\d+))?\s*\)", text)
    if not m:
        return None
    nums = [int(g) for g in m.groups() if g is not None]
    first, step, last = (1, 1, nums[0]) if len(nums) == 1 else (
        (nums[0], 1, nums[1]) if len(nums) == 2 else (nums[0], nums[1], nums[2])
    )
    if step == 0 or abs(last - first) // abs(step) > _MAX_RANGE:
        return None
    return [str(x) for x in range(first, last + (1 if step > 0 else -1), step)]


def _command(node, state: _State) -> None:
    env: list[tuple[str, str]] = []
    tokens: list[_Token] = []
    for child in node.children:
        if child.type == "variable_assignment":
            assigned = _assignment(child, state, exported=False)
            if assigned:
                env.append(assigned)
        elif child.type == "command_name":
            tokens.extend(_eval(c, state) for c in child.children)
        elif child.type in ("file_redirect", "herestring_redirect", "heredoc_redirect"):
            continue
        elif tokens:
            tokens.append(_eval(child, state))
    if not tokens:
        return
    launch = parse_launch(tokens)
    if launch is None:
        return
    runner, target, rest = launch
    add_launch(state, runner, target, rest, Span(state.path, _line(node, state), _end_line(node, state)),
               tuple(env))


def parse_launch(tokens: list[_Token]) -> tuple[str, str, list[_Token]] | None:
    """(runner, target, flag tokens) when the command runs a Python program, else None."""
    texts = [t.text for t in tokens]
    start = None
    for i, text in enumerate(texts):
        if _PYTHON.match(text) or text in _LAUNCHERS:
            start = i
            break
        if i == 0 and text not in _WRAPPERS and not text.startswith("-"):
            return None
        if i > 12:
            return None
    if start is None:
        return None
    head = texts[start]
    i = start + 1
    if head in _LAUNCHERS:
        runner = _LAUNCHERS[head]
        if head == "accelerate":
            if i < len(texts) and texts[i] == "launch":
                i += 1
            else:
                return None
        return _after_launcher(runner, tokens, i)
    while i < len(texts):
        text = texts[i]
        if text in ("-m",) and i + 1 < len(texts):
            module = texts[i + 1]
            if module in _LAUNCHER_MODULES:
                return _after_launcher(_LAUNCHER_MODULES[module], tokens, i + 2)
            return "python -m", module, tokens[i + 2 :]
        if text.startswith("-m") and len(text) > 2:
            return "python -m", text[2:], tokens[i + 1 :]
        if text == "-c" or text == "-":
            return None
        if text in _PY_VALUE_OPTS:
            i += 2
            continue
        if text.startswith("-"):
            i += 1
            continue
        if not tokens[i].constant:
            return None
        return "python", _normalise(text), tokens[i + 1 :]
    return None


def _after_launcher(runner: str, tokens: list[_Token], i: int) -> tuple[str, str, list[_Token]] | None:
    texts = [t.text for t in tokens]
    while i < len(texts):
        text = texts[i]
        if text in ("-m", "--module") and i + 1 < len(texts):
            return runner, texts[i + 1], tokens[i + 2 :]
        if text.endswith(".py") and not text.startswith("-"):
            return runner, _normalise(text), tokens[i + 1 :]
        i += 1
    return None


def _normalise(path: str) -> str:
    while path.startswith("./"):
        path = path[2:]
    return path


def add_launch(state: _State, runner: str, target: str, rest: list[_Token], span: Span,
               env: tuple[tuple[str, str], ...] = ()) -> None:
    flags: list[tuple[str, str]] = []
    multirun = any(t.text in ("-m", "--multirun") for t in rest)
    i = 0
    n = len(rest)
    while i < n:
        tok = rest[i]
        text = tok.text
        if _is_flag(text):
            name = text.lstrip("-")
            if "=" in name:
                name, value = name.split("=", 1)
                _flag(state, flags, target, name, [_Token(value, tok.constant, tok.line, tok.end_line)], tok)
                i += 1
                continue
            j = i + 1
            values: list[_Token] = []
            while j < n and not _is_flag(rest[j].text) and not _HYDRA.match(rest[j].text):
                values.append(rest[j])
                j += 1
            _flag(state, flags, target, name, values, tok)
            i = j
            continue
        m = _HYDRA.match(text)
        if m:
            key = m.group(2)
            sweep = _hydra_sweep(m.group(3)) if multirun and tok.constant else None
            _flag(state, flags, target, key, [_Token(m.group(3), tok.constant, tok.line, tok.end_line)], tok,
                  hydra=True, sweep=sweep)
        i += 1
    state.launches.append(Launch(runner, target, tuple(flags), span, env))


def _is_flag(text: str) -> bool:
    return text.startswith("-") and len(text) > 1 and text != "--" and not is_number_text(text)


def _flag(state: _State, flags: list, target: str, name: str, values: list[_Token], at: _Token,
          hydra: bool = False, sweep: list[str] | None = None) -> None:
    if hydra:
        path = name
        leaf = re.split(r"[./@]", name)[-1].replace("-", "_")
    else:
        path = leaf = name.replace("-", "_")
    if not leaf:
        return
    if sweep is None and len(values) == 1 and not values[0].constant:
        ref = _VAR_REF.match(values[0].text)
        if ref and ref.group(1) in state.loop_vars:
            sweep = list(state.loop_values.get(ref.group(1), ())) or None
    if sweep is not None and 1 <= len(sweep) <= MAX_SWEEP_VALUES:
        flags.append((path, " ".join(v.text for v in values)))
        span = Span(state.path, at.line, values[-1].end_line if values else at.end_line)
        for item in sweep:  # one run per value: each is the flag's value in its run
            state.bindings.append(
                Binding(leaf, path, BindingKind.launch, item, number_value(item), True, "<module>", span, owner=target)
            )
        return
    if values:
        text = " ".join(v.text for v in values)
        constant = all(v.constant for v in values)
        if len(values) > 1 and constant:
            value: object = tuple(number_value(v.text) for v in values)
        else:
            value = number_value(text) if constant else None
        end = values[-1].end_line
    else:
        text, constant, value, end = "true", True, True, at.end_line
    flags.append((path, text))
    state.bindings.append(
        Binding(leaf, path, BindingKind.launch, text, value, constant, "<module>", Span(state.path, at.line, end),
                owner=target)
    )


def _hydra_sweep(text: str) -> list[str] | None:
    """The values of a Hydra multirun override (`8,16,32`, `range(1,4)`, `choice(a,b)`); None if it is one value."""
    text = text.strip()
    ranged = _HYDRA_RANGE.match(text)
    if ranged:  # Hydra's range(start, stop[, step]) excludes stop, like Python's
        nums = [int(g) for g in ranged.groups() if g is not None]
        start, stop, step = (0, nums[0], 1) if len(nums) == 1 else (nums[0], nums[1], nums[2] if len(nums) > 2 else 1)
        if step == 0 or abs(stop - start) // abs(step) > MAX_SWEEP_VALUES:
            return None
        return [str(x) for x in range(start, stop, step)] or None
    choice = _HYDRA_CHOICE.match(text)
    body = choice.group(1) if choice else text
    items = _top_level_split(body)
    if items is None or (len(items) < 2 and not choice):
        return None
    return [item.strip().strip("'\"") for item in items if item.strip()] or None


def _top_level_split(text: str) -> list[str] | None:
    """Split at commas outside brackets and quotes (`[1,2],[3,4]` is two values); None if unbalanced."""
    items, depth, quote, start = [], 0, "", 0
    for i, ch in enumerate(text):
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
            if depth < 0:
                return None
        elif ch == "," and depth == 0:
            items.append(text[start:i])
            start = i + 1
    if depth or quote:
        return None
    items.append(text[start:])
    return items


def tokens_from_words(words: list[str], line: int) -> list[_Token]:
    """Tokens for a command already split into words (notebook ``%run`` lines)."""
    return [_Token(w, "$" not in w, line, line) for w in words]


def new_state(path: str, line_offset: int = 0) -> _State:
    return _State(path, line_offset)

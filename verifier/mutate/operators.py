"""Drift operators: the semantic changes LLM agents make, applied with libcst so formatting and comments survive.

Each operator looks at one node and proposes variants; applying a variant replaces exactly that node (matched
by identity in the same immutable tree), so a mutant is one small, reviewable diff.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Iterable, Sequence

import libcst as cst

# (operator name, SA-Bench dimension, one-line description)
OPERATORS: dict[str, tuple[str, str]] = {
    "const-scale": ("D1", "a numeric constant scaled by 0.1 or 3"),
    "const-plus-one": ("D1", "an integer constant plus one"),
    "const-neighbour": ("D1", "a constant replaced by a neighbouring common value (0.99 -> 0.9)"),
    "drop-factor": ("D2", "a factor dropped from a product or quotient"),
    "drop-term": ("D2", "a term dropped from a sum or difference"),
    "sign-flip": ("D2", "a sign flipped"),
    "min-max-swap": ("D2", "min and max swapped"),
    "mean-sum-swap": ("D2", "mean and sum swapped"),
    "variance-bias": ("D2", "unbiased variance for biased (or back)"),
    "drop-sqrt": ("D2", "a square root dropped"),
    "swap-steps": ("D4", "two adjacent steps swapped"),
    "out-of-loop": ("D4", "the last step of a loop body moved after the loop"),
    "remove-eval-mode": ("D3", "model.eval() removed"),
    "remove-no-grad": ("D3", "torch.no_grad()/inference_mode() removed"),
    "swap-split": ("D3", "a train/val/test split name swapped"),
    "remove-seeding": ("D3", "an RNG seeding call removed"),
    "stub-body": ("D2", "a function body replaced by a stub"),
    "text-edit": ("D1", "the last word dropped from a quoted text of three or more words (a prompt, a template)"),
}

NEIGHBOURS = {
    0.99: 0.9, 0.9: 0.99, 0.999: 0.99, 0.95: 0.9, 0.98: 0.95, 0.5: 0.25, 0.25: 0.5, 0.2: 0.1, 0.1: 0.2,
    0.01: 0.001, 0.001: 0.0001, 0.0001: 0.001, 1e-05: 1e-06, 1e-06: 1e-05, 1e-08: 1e-06, 0.02: 0.01,
}
SEED_CALLS = {"manual_seed", "manual_seed_all", "seed", "set_seed", "seed_everything", "set_random_seed"}
SPLIT_SWAPS = {"test": "val", "val": "test", "validation": "test", "valid": "test", "train": "test"}
SQRT_CALLS = {"sqrt", "rsqrt"}


@dataclass(frozen=True)
class Variant:
    operator: str
    description: str
    build: Callable[[cst.CSTNode], cst.CSTNode | cst.RemovalSentinel | cst.FlattenSentinel]
    # The statements whose meaning changes, when narrower than the node (the two swapped steps, the moved one).
    focus: Callable[[cst.CSTNode], list[cst.CSTNode]] | None = None


def _dotted(node: cst.BaseExpression) -> str:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        head = _dotted(node.value)
        return f"{head}.{node.attr.value}" if head else node.attr.value
    if isinstance(node, cst.Call):
        return _dotted(node.func) + "()"
    return ""


def _leaf(node: cst.BaseExpression) -> str:
    return _dotted(node).rsplit(".", 1)[-1]


def _number(node: cst.CSTNode) -> float | int | None:
    if isinstance(node, cst.Integer):
        try:
            return int(node.value.replace("_", ""), 0)
        except ValueError:
            return None
    if isinstance(node, cst.Float):
        try:
            return float(node.value.replace("_", ""))
        except ValueError:
            return None
    return None


def _fmt(value: float | int) -> str:
    if isinstance(value, int):
        return str(value)
    text = repr(float(f"{value:.6g}"))
    return text


def _num_node(value: float | int) -> cst.BaseExpression:
    text = _fmt(value)
    return cst.Integer(text) if isinstance(value, int) else cst.Float(text)


def _is_call_stmt(stmt: cst.BaseStatement) -> bool:
    return (
        isinstance(stmt, cst.SimpleStatementLine)
        and len(stmt.body) == 1
        and isinstance(stmt.body[0], cst.Expr)
        and isinstance(stmt.body[0].value, cst.Call)
    )


def _stmt_call(stmt: cst.BaseStatement) -> cst.Call | None:
    if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1:
        inner = stmt.body[0]
        value = inner.value if isinstance(inner, (cst.Expr, cst.Assign, cst.AugAssign)) else None
        if isinstance(value, cst.Call):
            return value
    return None


def _pass_line() -> cst.SimpleStatementLine:
    return cst.SimpleStatementLine(body=[cst.Pass()])


def variants_for(node: cst.CSTNode) -> Iterable[Variant]:
    """Every drift this node admits, in a fixed order."""
    value = _number(node)
    if value is not None and value not in (0, 1):
        if isinstance(value, float) or abs(value) >= 2:
            scaled_down = value * 0.1 if isinstance(value, float) else max(value // 10, 1)
            if scaled_down != value:
                yield Variant("const-scale", f"{_fmt(value)} -> {_fmt(scaled_down)}", lambda n, v=scaled_down: _num_node(v))
            yield Variant("const-scale", f"{_fmt(value)} -> {_fmt(value * 3)}", lambda n, v=value * 3: _num_node(v))
        if isinstance(value, int):
            yield Variant("const-plus-one", f"{value} -> {value + 1}", lambda n, v=value + 1: _num_node(v))
        neighbour = NEIGHBOURS.get(round(float(value), 12)) if isinstance(value, float) else None
        if neighbour is not None:
            yield Variant("const-neighbour", f"{_fmt(value)} -> {_fmt(neighbour)}", lambda n, v=neighbour: _num_node(v))
    if isinstance(node, cst.BinaryOperation):
        if isinstance(node.operator, (cst.Multiply, cst.Divide)):
            yield Variant("drop-factor", "drop the right factor", lambda n: n.left.with_changes(lpar=n.lpar, rpar=n.rpar) if n.lpar else n.left)
            if isinstance(node.operator, cst.Multiply):
                yield Variant("drop-factor", "drop the left factor", lambda n: n.right.with_changes(lpar=n.lpar, rpar=n.rpar) if n.lpar else n.right)
        if isinstance(node.operator, (cst.Add, cst.Subtract)):
            yield Variant("drop-term", "drop the right term", lambda n: n.left.with_changes(lpar=n.lpar, rpar=n.rpar) if n.lpar else n.left)
            op = cst.Add() if isinstance(node.operator, cst.Subtract) else cst.Subtract()
            yield Variant("sign-flip", "+ <-> -", lambda n, o=op: n.with_changes(operator=o))
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus) and _number(node.expression) is None:
        yield Variant("sign-flip", "drop a unary minus", lambda n: n.expression)
    if isinstance(node, cst.Call):
        leaf = _leaf(node.func)
        swaps = {"min": "max", "max": "min", "minimum": "maximum", "maximum": "minimum", "amin": "amax", "amax": "amin",
                 "mean": "sum", "sum": "mean"}
        if leaf in swaps:
            op = "mean-sum-swap" if leaf in ("mean", "sum") else "min-max-swap"
            yield Variant(op, f"{leaf} -> {swaps[leaf]}", lambda n, new=swaps[leaf]: _rename_call(n, new))
        if leaf == "var" or leaf == "std":
            yield Variant("variance-bias", "flip biased/unbiased", _flip_bias)
        if leaf in SQRT_CALLS and node.args:
            yield Variant("drop-sqrt", f"drop {leaf}()", lambda n: n.args[0].value)
    if isinstance(node, cst.SimpleString):
        text = node.evaluated_value if isinstance(node.evaluated_value, str) else None
        shorter = _without_last_word(node, text)
        if shorter is not None:
            word = list(_TEXT_WORD.finditer(text))[-1].group(0)
            yield Variant("text-edit", f"drop {word!r} from {_short(text)!r}", lambda n, new=shorter: new)
        if text in SPLIT_SWAPS:
            quote = node.quote
            yield Variant("swap-split", f"'{text}' -> '{SPLIT_SWAPS[text]}'", lambda n, q=quote, t=SPLIT_SWAPS[text]: cst.SimpleString(f"{q}{t}{q}"))
    if isinstance(node, cst.FormattedString):
        edited = _template_without_last_word(node)
        if edited is not None:
            new, word, shown = edited
            yield Variant("text-edit", f"drop {word!r} from {_short(shown)!r}", lambda n, new=new: new)
    if isinstance(node, cst.SimpleStatementLine):
        call = _stmt_call(node)
        if call is not None:
            leaf = _leaf(call.func)
            if leaf == "eval" and isinstance(call.func, cst.Attribute) and not call.args:
                yield Variant("remove-eval-mode", "remove .eval()", lambda n: _pass_line())
            if isinstance(node.body[0], cst.Expr) and (leaf in SEED_CALLS or _dotted(call.func).endswith("random.seed")):
                yield Variant("remove-seeding", f"remove {_dotted(call.func)}(...)", lambda n: _pass_line())
            elif (unseeded := _unseeded_call(call)) is not None:
                # An assigned seeding (`g = torch.Generator().manual_seed(s)`, `obs, _ = env.reset(seed=s)`) loses
                # its seed but keeps its value: deleting the line would only leave a NameError behind.
                yield Variant(
                    "remove-seeding",
                    f"{_dotted(call.func)}(...) without its seed",
                    lambda n, new=unseeded: n.with_changes(body=[n.body[0].with_changes(value=new)]),
                )
    if isinstance(node, cst.With) and len(node.items) == 1:
        ctx = node.items[0].item
        if isinstance(ctx, cst.Call) and _leaf(ctx.func) in ("no_grad", "inference_mode"):
            yield Variant("remove-no-grad", f"remove with {_leaf(ctx.func)}()", _unwrap_with)
    if isinstance(node, cst.IndentedBlock):
        body = list(node.body)
        for i in range(len(body) - 1):
            if _is_call_stmt(body[i]) and _is_call_stmt(body[i + 1]) and not body[i].deep_equals(body[i + 1]):
                yield Variant(
                    "swap-steps",
                    f"swap steps {i + 1} and {i + 2} of a block",
                    lambda n, i=i: _swap(n, i),
                    lambda n, i=i: [n.body[i], n.body[i + 1]],
                )
    if isinstance(node, (cst.For, cst.While)) and isinstance(node.body, cst.IndentedBlock):
        body = list(node.body.body)
        if len(body) >= 2 and _stmt_call(body[-1]) is not None:
            yield Variant("out-of-loop", "move the loop's last step after the loop", _hoist, lambda n: [n.body.body[-1]])
    if isinstance(node, cst.FunctionDef) and _has_real_body(node):
        yield Variant("stub-body", "body -> raise NotImplementedError", lambda n: _stub(n, "raise NotImplementedError"))
        yield Variant("stub-body", "body -> pass", lambda n: _stub(n, "pass"))
        yield Variant("stub-body", "body -> return 0.0", lambda n: _stub(n, "return 0.0"))


_TEXT_WORD = re.compile(r"[A-Za-z][A-Za-z'-]*")
MAX_TEXT = 300


def _short(text: str, width: int = 40) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."


def _without_last_word(node: cst.SimpleString, text: str | None) -> cst.SimpleString | None:
    """A one-line plain string of three or more words with its last word dropped (its punctuation kept):
    "Who are you?" -> "Who are?". Prefixed, triple-quoted and multi-line strings are left alone."""
    if text is None or node.prefix or len(node.quote) != 1 or "\n" in text or len(text) > MAX_TEXT:
        return None
    words = list(_TEXT_WORD.finditer(text))
    if len(words) < 3 or len(text.split()) < 3:
        return None
    last = words[-1]
    cut = text[: last.start()].rstrip() + text[last.end() :]
    if cut == text or not cut.strip():
        return None
    body = cut.replace("\\", "\\\\").replace(node.quote, "\\" + node.quote)
    return cst.SimpleString(f"{node.quote}{body}{node.quote}")


def _template_without_last_word(node: cst.FormattedString) -> tuple[cst.FormattedString, str, str] | None:
    """An f-string template (``f"a photo of a {name}."``) of three or more words with the last word of its text
    dropped: ``f"a photo of {name}."``. Only one-line templates without a prefix other than ``f``."""
    if node.start.lower() not in ('f"', "f'") or any("\n" in p.value for p in node.parts if isinstance(p, cst.FormattedStringText)):
        return None
    texts = [(i, p) for i, p in enumerate(node.parts) if isinstance(p, cst.FormattedStringText)]
    shown = "".join(p.value if isinstance(p, cst.FormattedStringText) else "{}" for p in node.parts)
    if len(_TEXT_WORD.findall(" ".join(p.value for _, p in texts))) < 3 or len(shown) > MAX_TEXT:
        return None
    for i, part in reversed(texts):
        words = list(_TEXT_WORD.finditer(part.value))
        if not words:
            continue
        last = words[-1]
        before, after = part.value[: last.start()], part.value[last.end() :]
        followed = i < len(node.parts) - 1 and not after  # "a photo of a {name}": keep the space before {name}
        value = (before.rstrip() + (" " if followed and before[-1:].isspace() else "") + after) if before else after.lstrip()
        parts = list(node.parts)
        parts[i] = part.with_changes(value=value)
        return node.with_changes(parts=parts), last.group(0), shown
    return None


# Strings that are not what a run uses: docstrings, help texts, messages printed, logged or raised.
_MESSAGE_KEYWORDS = {"help", "description", "epilog", "usage", "metavar", "desc"}
_MESSAGE_CALLS = {"print", "info", "debug", "warning", "warn", "error", "exception", "critical", "log", "write", "echo",
                  "set_description", "set_postfix_str", "add_text"}


SEEDED_CONSTRUCTORS = {"default_rng", "RandomState", "Random", "reset"}  # take the seed as an argument


def _unseeded_call(call: cst.Call) -> cst.BaseExpression | None:
    """The same call without its seed: a seeding method dropped from a chain, or the seed argument removed."""
    func = call.func
    if isinstance(func, cst.Attribute) and func.attr.value in ("manual_seed", "seed") and isinstance(func.value, cst.Call):
        return func.value
    leaf = _leaf(func)
    if leaf not in SEEDED_CONSTRUCTORS:
        return None
    args = list(call.args)
    keep = [a for a in args if not (a.keyword is not None and a.keyword.value == "seed")]
    if len(keep) == len(args):
        if leaf == "reset" or not args or args[0].keyword is not None or args[0].star:
            return None
        keep = args[1:]
    if keep:
        keep[-1] = keep[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    return call.with_changes(args=keep)


def _rename_call(node: cst.Call, new: str) -> cst.Call:
    func = node.func
    if isinstance(func, cst.Attribute):
        return node.with_changes(func=func.with_changes(attr=cst.Name(new)))
    if isinstance(func, cst.Name):
        return node.with_changes(func=cst.Name(new))
    return node


def _flip_bias(node: cst.Call) -> cst.Call:
    args = list(node.args)
    for i, arg in enumerate(args):
        if arg.keyword and arg.keyword.value == "unbiased":
            flipped = "True" if isinstance(arg.value, cst.Name) and arg.value.value == "False" else "False"
            args[i] = arg.with_changes(value=cst.Name(flipped))
            return node.with_changes(args=args)
        if arg.keyword and arg.keyword.value in ("ddof", "correction"):
            new = "1" if _number(arg.value) == 0 else "0"
            args[i] = arg.with_changes(value=cst.Integer(new))
            return node.with_changes(args=args)
    is_numpy = _dotted(node.func).split(".")[0] in ("np", "numpy", "jnp")
    kw = cst.Arg(keyword=cst.Name("ddof"), value=cst.Integer("1")) if is_numpy else cst.Arg(
        keyword=cst.Name("unbiased"), value=cst.Name("False")
    )
    if args:
        args[-1] = args[-1].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
    return node.with_changes(args=[*args, kw.with_changes(equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")))])


def _unwrap_with(node: cst.With) -> cst.FlattenSentinel | cst.With:
    if isinstance(node.body, cst.IndentedBlock):
        return cst.FlattenSentinel(list(node.body.body))
    return node


def _swap(block: cst.IndentedBlock, i: int) -> cst.IndentedBlock:
    body = list(block.body)
    body[i], body[i + 1] = body[i + 1], body[i]
    return block.with_changes(body=body)


def _hoist(loop: cst.For | cst.While) -> cst.FlattenSentinel:
    body = list(loop.body.body)
    last = body.pop()
    return cst.FlattenSentinel([loop.with_changes(body=loop.body.with_changes(body=body)), last])


def _has_real_body(fn: cst.FunctionDef) -> bool:
    if not isinstance(fn.body, cst.IndentedBlock):
        return False
    stmts = [s for s in fn.body.body if not (isinstance(s, cst.SimpleStatementLine) and len(s.body) == 1 and isinstance(s.body[0], cst.Expr) and isinstance(s.body[0].value, cst.SimpleString))]
    if not stmts:
        return False
    if len(stmts) == 1 and isinstance(stmts[0], cst.SimpleStatementLine) and isinstance(stmts[0].body[0], (cst.Pass, cst.Raise)):
        return False
    return not any(isinstance(d.decorator, (cst.Name, cst.Attribute)) and _leaf(d.decorator) == "abstractmethod" for d in fn.decorators)


def _stub(fn: cst.FunctionDef, code: str) -> cst.FunctionDef:
    docstring = []
    first = fn.body.body[0] if fn.body.body else None
    if isinstance(first, cst.SimpleStatementLine) and isinstance(first.body[0], cst.Expr) and isinstance(first.body[0].value, cst.SimpleString):
        docstring = [first]
    return fn.with_changes(body=fn.body.with_changes(body=[*docstring, cst.parse_statement(code)]))


class Collector(cst.CSTVisitor):
    """Finds every mutation site of a module, in traversal order."""

    METADATA_DEPENDENCIES = (cst.metadata.PositionProvider,)

    def __init__(self, operators: Sequence[str]) -> None:
        super().__init__()
        self.operators = set(operators)
        # (node, variant, line spans of the changed statements)
        self.sites: list[tuple[cst.CSTNode, Variant, tuple[tuple[int, int], ...]]] = []
        self.messages: set[int] = set()  # id() of strings that are docs or messages, never a run's text

    def _mark_messages(self, node: cst.CSTNode) -> None:
        if isinstance(node, cst.Expr) and isinstance(node.value, (cst.SimpleString, cst.FormattedString)):
            self.messages.add(id(node.value))  # a docstring (or a bare string statement)
        elif isinstance(node, cst.Arg) and node.keyword is not None and node.keyword.value in _MESSAGE_KEYWORDS:
            self.messages.add(id(node.value))
        elif isinstance(node, cst.Call):
            leaf = _leaf(node.func)
            if leaf in _MESSAGE_CALLS or leaf.endswith(("Error", "Exception", "Warning")):
                self.messages.update(id(a.value) for a in node.args)
        elif isinstance(node, cst.Assert) and node.msg is not None:
            self.messages.add(id(node.msg))

    def on_visit(self, node: cst.CSTNode) -> bool:
        self._mark_messages(node)
        for variant in variants_for(node):
            if variant.operator == "text-edit" and id(node) in self.messages:
                continue
            if variant.operator in self.operators:
                focus = variant.focus(node) if variant.focus else [node]
                spans = []
                for part in focus:
                    pos = self.get_metadata(cst.metadata.PositionProvider, part)
                    spans.append((pos.start.line, pos.end.line))
                self.sites.append((node, variant, tuple(spans)))
        return True


class Applier(cst.CSTTransformer):
    """Replaces exactly one node (by identity) with its variant."""

    def __init__(self, target: cst.CSTNode, variant: Variant) -> None:
        super().__init__()
        self.target = target
        self.variant = variant

    def on_leave(self, original_node, updated_node):
        if original_node is self.target:
            return self.variant.build(updated_node)
        return updated_node

"""Per-function control-flow graphs over ``ast`` statements, for ordering claims.

Nodes are statements (compound statements contribute a header node holding the calls of their header
expression); each node keeps its calls in evaluation order, so one statement's calls are ordered too.
Loops are built "rotated" (the body runs at least once), because training loops over data are never empty
and "train, then evaluate" must hold across a ``for`` loop. Back edges are marked (``back=True``) so the
forward DAG of one iteration is the graph without them. Exception edges are modelled from the exits of a
``try`` body (its end and its jumps) and from ``raise``: enough for dominance without turning every
statement into a possible exit. The builder stops at ``max_nodes`` and says so (``truncated``).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

import networkx as nx

ENTRY = "entry"
EXIT = "exit"
RAISE = "raise"


@dataclass(frozen=True, slots=True)
class CallRef:
    """One call in a statement, named the way step matching needs it."""

    name: str  # dotted as written; calls inside the chain render as "()": "scaler.scale().backward"
    receiver: str  # the dotted part before the leaf ("" for a bare function call)
    leaf: str
    line: int
    end_line: int
    col: int
    node: ast.Call = field(compare=False, repr=False)


@dataclass(slots=True)
class Block:
    kind: str  # entry | exit | raise | stmt | head | latch | test
    line: int
    end_line: int
    calls: tuple[CallRef, ...] = ()
    loops: tuple[int, ...] = ()  # ids of enclosing loops' head nodes, outermost first
    text: str = ""


@dataclass
class Loop:
    head: int
    line: int
    end_line: int
    nodes: set[int] = field(default_factory=set)
    over: str = ""  # the iterable's source text ("" for while loops)


@dataclass
class CFG:
    graph: nx.DiGraph
    entry: int
    exit: int
    raise_exit: int
    loops: dict[int, Loop]
    truncated: bool = False
    reason: str = ""

    def block(self, node: int) -> Block:
        return self.graph.nodes[node]["block"]

    def reachable(self) -> set[int]:
        return nx.descendants(self.graph, self.entry) | {self.entry}

    def dominators(self) -> dict[int, int]:
        """Immediate dominators of the reachable nodes (networkx's Cooper-Harvey-Kennedy)."""
        return nx.immediate_dominators(self.graph, self.entry)


class TooLarge(Exception):
    """Raised inside the builder when the node budget is spent."""


# ----- calls in evaluation order ----------------------------------------------------------------------
def dotted(expr: ast.AST) -> str:
    """``a.b.c`` for attribute chains; calls inside render as ``()``, subscripts as ``[]``."""
    parts: list[str] = []
    node = expr
    while True:
        if isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        elif isinstance(node, ast.Name):
            parts.append(node.id)
            break
        elif isinstance(node, ast.Call):
            inner = dotted(node.func)
            parts.append(f"{inner}()" if inner else "()")
            break
        elif isinstance(node, ast.Subscript):
            inner = dotted(node.value)
            parts.append(f"{inner}[]" if inner else "[]")
            break
        else:
            return ".".join(reversed(parts)) if parts else ""
    return ".".join(reversed(parts))


class _CallCollector(ast.NodeVisitor):
    """Post-order over calls: receiver and arguments are evaluated before the call itself."""

    def __init__(self) -> None:
        self.calls: list[CallRef] = []

    def visit_Call(self, node: ast.Call) -> None:
        self.visit(node.func)
        for arg in node.args:
            self.visit(arg)
        for kw in node.keywords:
            self.visit(kw.value)
        name = dotted(node.func)
        if isinstance(node.func, ast.Attribute):
            receiver, leaf = dotted(node.func.value), node.func.attr
        else:
            receiver, leaf = "", name
        self.calls.append(
            CallRef(
                name=name,
                receiver=receiver,
                leaf=leaf,
                line=node.lineno,
                end_line=getattr(node, "end_lineno", None) or node.lineno,
                col=node.col_offset,
                node=node,
            )
        )

    # Bodies defined here run later (or never): their calls are not this statement's.
    def visit_Lambda(self, node: ast.Lambda) -> None:
        for default in node.args.defaults:
            self.visit(default)

    def visit_FunctionDef(self, node) -> None:
        for deco in node.decorator_list:
            self.visit(deco)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        for deco in node.decorator_list:
            self.visit(deco)
        for base in node.bases:
            self.visit(base)


def calls_in(*exprs: ast.AST | None) -> tuple[CallRef, ...]:
    collector = _CallCollector()
    for expr in exprs:
        if expr is not None:
            collector.visit(expr)
    return tuple(collector.calls)


def constant_truth(test: ast.AST) -> bool | None:
    """True/False for tests that never change (``if False:``, ``while True:``, ``if 0:``), else None."""
    if isinstance(test, ast.Constant):
        return bool(test.value)
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = constant_truth(test.operand)
        return None if inner is None else not inner
    return None


# ----- the builder ------------------------------------------------------------------------------------
@dataclass
class _LoopFrame:
    head: int
    latch: int
    breaks: list[int] = field(default_factory=list)


@dataclass
class _HandlerFrame:
    handlers: list[int]


@dataclass
class _FinallyFrame:
    pending: dict[str, list[int]] = field(default_factory=dict)


class _Builder:
    def __init__(self, max_nodes: int) -> None:
        self.graph = nx.DiGraph()
        self.max_nodes = max_nodes
        self.stack: list = []
        self.loop_ids: list[int] = []
        self.loops: dict[int, Loop] = {}
        self.entry = self._node(Block(ENTRY, 0, 0))
        self.exit = self._node(Block(EXIT, 0, 0))
        self.raise_exit = self._node(Block(RAISE, 0, 0))

    def _node(self, block: Block) -> int:
        if self.graph.number_of_nodes() >= self.max_nodes:
            raise TooLarge(f"more than {self.max_nodes} control-flow nodes")
        node = self.graph.number_of_nodes()
        block.loops = tuple(self.loop_ids)
        self.graph.add_node(node, block=block)
        for head in self.loop_ids:
            self.loops[head].nodes.add(node)
        return node

    def _stmt_node(self, stmt: ast.AST, kind: str, calls: tuple[CallRef, ...], end: int | None = None) -> int:
        line = getattr(stmt, "lineno", 0)
        return self._node(Block(kind, line, end or getattr(stmt, "end_lineno", line) or line, calls, text=type(stmt).__name__))

    def _link(self, preds, node: int, **attrs) -> None:
        for p in preds:
            self.graph.add_edge(p, node, **attrs)

    # Jumps walk the frame stack outward: a finally intercepts everything, handlers catch raises (and see
    # every jump out of their try body, since the jumping statement itself may raise), loops take break and
    # continue.
    def _jump(self, kind: str, nodes: list[int], depth: int | None = None) -> None:
        if not nodes:
            return
        depth = len(self.stack) if depth is None else depth
        for i in range(depth - 1, -1, -1):
            frame = self.stack[i]
            if isinstance(frame, _HandlerFrame):
                for n in nodes:
                    for h in frame.handlers:
                        self.graph.add_edge(n, h)
                if kind == RAISE:
                    return
            elif isinstance(frame, _FinallyFrame):
                frame.pending.setdefault(kind, []).extend(nodes)
                return
            elif isinstance(frame, _LoopFrame) and kind in ("break", "continue"):
                if kind == "break":
                    frame.breaks.extend(nodes)
                else:
                    self._link(nodes, frame.latch)
                return
        target = self.raise_exit if kind == RAISE else self.exit
        self._link(nodes, target)

    def body(self, stmts: list[ast.stmt], preds: list[int]) -> list[int]:
        for stmt in stmts:
            if not preds:
                break  # the rest is unreachable (after return/raise/break/continue)
            preds = self.stmt(stmt, preds)
        return preds

    def stmt(self, stmt: ast.stmt, preds: list[int]) -> list[int]:
        if isinstance(stmt, ast.If):
            test = self._stmt_node(stmt, "test", calls_in(stmt.test), end=stmt.test.end_lineno)
            self._link(preds, test)
            truth = constant_truth(stmt.test)
            out: list[int] = []
            if truth is not False:
                out += self.body(stmt.body, [test])
            if truth is not True:
                out += self.body(stmt.orelse, [test]) if stmt.orelse else [test]
            return out
        if isinstance(stmt, (ast.For, ast.AsyncFor, ast.While)):
            return self._loop(stmt, preds)
        if isinstance(stmt, (ast.With, ast.AsyncWith)):
            items = [i.context_expr for i in stmt.items]
            head = self._stmt_node(stmt, "stmt", calls_in(*items), end=stmt.items[-1].context_expr.end_lineno)
            self._link(preds, head)
            return self.body(stmt.body, [head])
        if isinstance(stmt, ast.Try) or type(stmt).__name__ == "TryStar":
            return self._try(stmt, preds)
        if isinstance(stmt, ast.Match):
            return self._match(stmt, preds)
        node = self._stmt_node(stmt, "stmt", calls_in(stmt))
        self._link(preds, node)
        if isinstance(stmt, ast.Return):
            self._jump("return", [node])
            return []
        if isinstance(stmt, ast.Raise):
            self._jump(RAISE, [node])
            return []
        if isinstance(stmt, ast.Break):
            self._jump("break", [node])
            return []
        if isinstance(stmt, ast.Continue):
            self._jump("continue", [node])
            return []
        return [node]

    def _loop(self, stmt, preds: list[int]) -> list[int]:
        if isinstance(stmt, ast.While):
            head_calls, truth = calls_in(stmt.test), constant_truth(stmt.test)
            before = preds
        else:
            iter_node = self._stmt_node(stmt, "stmt", calls_in(stmt.iter), end=stmt.iter.end_lineno)
            self._link(preds, iter_node)
            before, head_calls, truth = [iter_node], (), None
        if truth is False:
            return self.body(stmt.orelse, preds)
        end = getattr(stmt, "end_lineno", stmt.lineno)
        head = self._node(Block("head", stmt.lineno, stmt.lineno, head_calls, text=type(stmt).__name__))
        over = "" if isinstance(stmt, ast.While) else _source(stmt.iter)
        self.loops[head] = Loop(head, stmt.lineno, end, {head}, over)
        self.graph.nodes[head]["block"].loops = (*self.loop_ids, head)
        self._link(before, head)
        self.loop_ids.append(head)
        latch = self._node(Block("latch", end, end))
        frame = _LoopFrame(head, latch)
        self.stack.append(frame)
        tail = self.body(stmt.body, [head])
        self._link(tail, latch)
        self.stack.pop()
        self.loop_ids.pop()
        self.graph.add_edge(latch, head, back=True)
        exits = [] if truth is True else [latch]
        out = self.body(stmt.orelse, exits) if stmt.orelse else exits
        return out + frame.breaks

    def _try(self, stmt, preds: list[int]) -> list[int]:
        fin = _FinallyFrame() if stmt.finalbody else None
        if fin:
            self.stack.append(fin)
        handler_nodes = [
            self._stmt_node(h, "stmt", calls_in(h.type), end=(h.type.end_lineno if h.type else h.lineno))
            for h in stmt.handlers
        ]
        if handler_nodes:
            self.stack.append(_HandlerFrame(handler_nodes))
        tail = self.body(stmt.body, preds)
        if handler_nodes:
            for n in tail:
                for h in handler_nodes:
                    self.graph.add_edge(n, h)
            self.stack.pop()
        out = self.body(stmt.orelse, tail) if stmt.orelse else tail
        for h, node in zip(stmt.handlers, handler_nodes):
            out = out + self.body(h.body, [node])
        if not fin:
            return out
        self.stack.pop()
        for kind in sorted(fin.pending):
            after = self.body(stmt.finalbody, fin.pending[kind])
            self._jump(kind, after)
        return self.body(stmt.finalbody, out) if out else []

    def _match(self, stmt: ast.Match, preds: list[int]) -> list[int]:
        subject = self._stmt_node(stmt, "test", calls_in(stmt.subject), end=stmt.subject.end_lineno)
        self._link(preds, subject)
        out: list[int] = []
        exhaustive = False
        for case in stmt.cases:
            node = self._stmt_node(case.pattern, "test", calls_in(case.guard))
            self.graph.add_edge(subject, node)
            out += self.body(case.body, [node])
            if isinstance(case.pattern, ast.MatchAs) and case.pattern.pattern is None and case.guard is None:
                exhaustive = True
        if not exhaustive:
            out.append(subject)
        return out


def _source(node: ast.AST) -> str:
    try:
        return ast.unparse(node)
    except (ValueError, RecursionError):
        return ""


def build_cfg(body: list[ast.stmt], max_nodes: int = 5000) -> CFG:
    """The CFG of a statement list (a function body, or a module's top level)."""
    builder = _Builder(max_nodes)
    truncated, reason = False, ""
    try:
        tail = builder.body(list(body), [builder.entry])
        builder._link(tail, builder.exit)
    except TooLarge as exc:
        truncated, reason = True, str(exc)
    except RecursionError:
        truncated, reason = True, "statements nested too deeply"
    return CFG(builder.graph, builder.entry, builder.exit, builder.raise_exit, builder.loops, truncated, reason)


def function_cfg(fn: ast.FunctionDef | ast.AsyncFunctionDef | ast.Module, max_nodes: int = 5000) -> CFG:
    return build_cfg(fn.body, max_nodes)

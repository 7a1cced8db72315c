"""One graph of call events from a root function, with repo callees inlined at their call sites.

Each statement's calls become a chain of event nodes; a call to a repo function that (transitively) holds a
step of the claim is replaced in the chain by a copy of that function's CFG, so a step inside a helper counts
at its call site and inside the caller's loops. Inlining stops at recursion, at ``max_depth`` calls and at
``max_nodes`` nodes, and every stop is recorded in ``notes`` (reported with the verdict).
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass, field

import networkx as nx

from verifier.analysis.callgraph import (
    CallGraph,
    FnKey,
    function_nodes,
    local_types,
    unalias,
)
from verifier.analysis.cfg import CFG, CallRef, build_cfg
from verifier.index.facts import Definition

LoopKey = tuple[int, int]  # (inlining instance, head node of that function's CFG)


@dataclass(frozen=True, slots=True)
class Event:
    call: CallRef
    file: str
    scope: str
    name: str  # receiver aliases resolved: "self.optimizer.step" for `opt.step()` after `opt = self.optimizer`
    receiver: str
    qualname: str  # import-qualified: "torch.nn.utils.clip_grad_norm_"
    receiver_type: str  # constructor text of the receiver, when known
    definition: str  # the repo function the call runs ("Trainer.normalize"), if resolved
    line: int
    end_line: int
    synthetic: bool = False  # a call of a framework's implicit loop (Lightning)

    def label(self) -> str:
        return f"{self.name or self.call.name} ({self.file}:{self.line})"


@dataclass
class Root:
    key: FnKey
    node: ast.AST  # FunctionDef / AsyncFunctionDef / Module (top level) / a synthetic driver
    synthetic: bool = False
    label: str = ""


@dataclass
class Flow:
    graph: nx.DiGraph
    entry: int
    exit: int
    events: dict[int, Event] = field(default_factory=dict)
    loops_of: dict[int, tuple[LoopKey, ...]] = field(default_factory=dict)
    loop_heads: dict[LoopKey, int] = field(default_factory=dict)
    loop_lines: dict[LoopKey, tuple[str, int, int]] = field(default_factory=dict)
    loop_over: dict[LoopKey, str] = field(default_factory=dict)  # iterable text of `for` loops
    notes: list[str] = field(default_factory=list)
    truncated: str = ""  # why the root itself could not be fully built
    inlined: list[str] = field(default_factory=list)  # "file:line callee" of every inlined call
    distance: dict[int, int] | None = None  # shortest distance from the entry, computed on first use

    def reachable(self) -> set[int]:
        return nx.descendants(self.graph, self.entry) | {self.entry}

    def dag(self) -> nx.DiGraph:
        """The graph without loop back edges: one pass, no iteration wrap-around."""
        return nx.restricted_view(self.graph, [], [(u, v) for u, v, d in self.graph.edges(data=True) if d.get("back")])


class FlowBuilder:
    def __init__(self, index, graph: CallGraph, *, should_inline: Callable[[FnKey], bool], max_depth: int,
                 max_nodes: int, cache: dict | None = None) -> None:
        self.index = index
        self.cg = graph
        self.should_inline = should_inline
        self.max_depth = max_depth
        self.max_nodes = max_nodes
        # Shared across the checks of a run when given; entries keep their node so a reused id() never hits.
        self._cfgs: dict[int, tuple[ast.AST, CFG]] = {} if cache is None else cache.setdefault("cfgs", {})
        self._types: dict[int, tuple[ast.AST, dict[str, str]]] = {} if cache is None else cache.setdefault("types", {})

    # ----- lookups -----------------------------------------------------------------------------------------
    def node_of(self, definition: Definition) -> ast.AST | None:
        tree = self.index.tree(definition.span.file)
        if tree is None:
            return None
        return function_nodes(tree).get(definition.qualname)

    def _cfg(self, node: ast.AST) -> CFG:
        hit = self._cfgs.get(id(node))
        if hit is None or hit[0] is not node or hit[1].graph.number_of_nodes() > self.max_nodes:
            hit = self._cfgs[id(node)] = (node, build_cfg(node.body, self.max_nodes))
        return hit[1]

    def _local_types(self, node: ast.AST) -> dict[str, str]:
        hit = self._types.get(id(node))
        if hit is None or hit[0] is not node:
            hit = self._types[id(node)] = (node, {} if isinstance(node, ast.Module) else local_types(node))
        return hit[1]

    # ----- building ----------------------------------------------------------------------------------------
    def build(self, root: Root) -> Flow:
        flow = Flow(nx.DiGraph(), 0, 0)
        self._flow = flow
        self._instances = 0
        cfg = self._cfg(root.node)
        if cfg.truncated:
            flow.truncated = f"{root.key.label()}: {cfg.reason}"
        entry, exit_, _ = self._expand(root.key, root.node, cfg, 0, (root.key,), (), root.synthetic)
        flow.entry, flow.exit = entry, exit_
        return flow

    def _new(self, loops: tuple[LoopKey, ...]) -> int:
        node = self._flow.graph.number_of_nodes()
        self._flow.graph.add_node(node)
        self._flow.loops_of[node] = loops
        return node

    def _expand(self, key: FnKey, fn: ast.AST, cfg: CFG, depth: int, stack: tuple[FnKey, ...],
                outer_loops: tuple[LoopKey, ...], synthetic: bool) -> tuple[int, int, int]:
        flow = self._flow
        self._instances += 1
        instance = self._instances
        types = self._local_types(fn)
        first: dict[int, int] = {}
        last: dict[int, int] = {}
        for n in sorted(cfg.graph.nodes):
            block = cfg.block(n)
            loops = outer_loops + tuple((instance, h) for h in block.loops)
            head = self._new(loops)
            first[n] = prev = head
            if block.kind == "head":
                lk = (instance, n)
                flow.loop_heads[lk] = head
                info = cfg.loops.get(n)
                flow.loop_lines[lk] = (key.file, block.line, info.end_line if info else block.line)
                flow.loop_over[lk] = info.over if info else ""
            for call in block.calls:
                node = self._new(loops)
                flow.graph.add_edge(prev, node)
                event, target = self._event(key, call, types, synthetic)
                flow.events[node] = event
                prev = self._inline(target, key, call, node, depth, stack, loops)
            last[n] = prev
        for u, v, data in cfg.graph.edges(data=True):
            flow.graph.add_edge(last[u], first[v], **({"back": True} if data.get("back") else {}))
        return first[cfg.entry], last[cfg.exit], last[cfg.raise_exit]

    def _event(self, key: FnKey, call: CallRef, types: dict[str, str], synthetic: bool
               ) -> tuple[Event, Definition | None]:
        receiver = unalias(call.receiver, types) if call.receiver else ""
        name = f"{receiver}.{call.leaf}" if receiver else call.name
        qualname = self.cg.modules.qualify(key.file, name) if name else ""
        rtype = ""
        if receiver:
            rtype = self.cg.resolver.type_of(key.file, key.qualname, receiver, types) or ""
            if rtype:
                rtype = self.cg.modules.qualify(key.file, rtype)
        target = self.cg.resolver.resolve(key.file, key.qualname, name, types) if name else None
        event = Event(
            call=call,
            file=key.file,
            scope=key.qualname,
            name=name,
            receiver=receiver,
            qualname=qualname,
            receiver_type=rtype,
            definition=target.qualname if target is not None else "",
            line=call.line,
            end_line=call.end_line,
            synthetic=synthetic,
        )
        return event, target

    def _inline(self, target: Definition | None, key: FnKey, call: CallRef, node: int, depth: int,
                stack: tuple[FnKey, ...], loops: tuple[LoopKey, ...]) -> int:
        """Splice the callee's flow after ``node``; returns the node the chain continues from."""
        flow = self._flow
        if target is None or target.kind == "class":
            return node
        callee = FnKey(target.span.file, target.qualname)
        if not self.should_inline(callee):
            return node
        where = f"{key.file}:{call.line}"
        if callee in stack:
            flow.notes.append(f"recursion: {callee.label()} not inlined again at {where}")
            return node
        if depth >= self.max_depth:
            flow.notes.append(f"call depth limit {self.max_depth} reached: {callee.label()} not inlined at {where}")
            return node
        fn = self.node_of(target)
        if fn is None:
            flow.notes.append(f"{callee.label()} could not be parsed: not inlined at {where}")
            return node
        cfg = self._cfg(fn)
        if cfg.truncated:
            flow.notes.append(f"{callee.label()}: {cfg.reason}; not inlined at {where}")
            return node
        if flow.graph.number_of_nodes() + cfg.graph.number_of_nodes() > self.max_nodes:
            flow.notes.append(f"node limit {self.max_nodes} reached: {callee.label()} not inlined at {where}")
            return node
        entry, exit_, _raised = self._expand(callee, fn, cfg, depth + 1, (*stack, callee), loops, False)
        flow.inlined.append(f"{where} {callee.label()}")
        flow.graph.add_edge(node, entry)
        after = self._new(loops)
        flow.graph.add_edge(exit_, after)
        return after

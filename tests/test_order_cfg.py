"""The per-function CFG: which statements dominate which, loops, jumps, limits."""

from __future__ import annotations

import ast
import textwrap

import networkx as nx
import pytest

from verifier.analysis.cfg import build_cfg, calls_in, constant_truth


def cfg_of(src: str, max_nodes: int = 5000):
    fn = ast.parse(textwrap.dedent(src)).body[0]
    return build_cfg(fn.body, max_nodes)


def node_calling(cfg, name: str) -> int:
    found = [n for n in cfg.graph.nodes if any(c.name == name for c in cfg.block(n).calls)]
    assert len(found) == 1, (name, found)
    return found[0]


def dominates(cfg, a: str, b: str) -> bool:
    idom = cfg.dominators()
    x, y = node_calling(cfg, a), node_calling(cfg, b)
    while y in idom and idom[y] != y:
        y = idom[y]
        if y == x:
            return True
    return False


def reachable(cfg, name: str) -> bool:
    return any(node in cfg.reachable() for node in cfg.graph.nodes
               if any(c.name == name for c in cfg.block(node).calls))


def test_straight_line_and_branches():
    cfg = cfg_of("""
        def f(x):
            a()
            if x:
                b()
            else:
                c()
            d()
    """)
    assert dominates(cfg, "a", "b") and dominates(cfg, "a", "d")
    assert not dominates(cfg, "b", "d") and not dominates(cfg, "c", "d")


def test_loop_body_runs_at_least_once_and_back_edge_is_marked():
    cfg = cfg_of("""
        def f(loader):
            for batch in loader:
                step()
            evaluate()
    """)
    assert dominates(cfg, "step", "evaluate")  # loops are rotated: the body runs before the exit
    backs = [(u, v) for u, v, d in cfg.graph.edges(data=True) if d.get("back")]
    assert len(backs) == 1
    head = backs[0][1]
    assert cfg.block(head).kind == "head" and head in cfg.loops
    assert node_calling(cfg, "step") in cfg.loops[head].nodes
    assert node_calling(cfg, "evaluate") not in cfg.loops[head].nodes
    assert cfg.loops[head].over == "loader"


def test_break_continue_and_loop_else():
    cfg = cfg_of("""
        def f(xs):
            while cond():
                a()
                if x():
                    break
                if y():
                    continue
                b()
            else:
                c()
            d()
    """)
    assert not dominates(cfg, "b", "d")  # a break skips b
    assert not dominates(cfg, "c", "d")  # a break skips the else
    assert dominates(cfg, "a", "d")
    assert dominates(cfg, "cond", "a")


def test_while_true_exits_only_by_break():
    cfg = cfg_of("""
        def f():
            while True:
                a()
            b()
    """)
    assert not reachable(cfg, "b")


def test_early_return_raise_and_dead_constant_branches():
    cfg = cfg_of("""
        def f(x):
            a()
            if False:
                dead_if()
            if x:
                return early()
            if 0:
                pass
            else:
                live_else()
            b()
            raise RuntimeError(c())
            after_raise()
    """)
    assert not reachable(cfg, "dead_if") and not reachable(cfg, "after_raise")
    assert dominates(cfg, "live_else", "b")
    assert not dominates(cfg, "early", "b")
    assert cfg.raise_exit in nx.descendants(cfg.graph, node_calling(cfg, "c"))


def test_with_try_except_else_finally():
    cfg = cfg_of("""
        def f():
            with ctx():
                a()
            try:
                b()
            except ValueError:
                handler()
            else:
                c()
            finally:
                fin()
            d()
    """)
    assert dominates(cfg, "ctx", "a") and dominates(cfg, "a", "b")
    assert dominates(cfg, "b", "d")  # handlers are entered from the end of the try body
    assert not dominates(cfg, "c", "d") and not dominates(cfg, "handler", "d")
    fins = [n for n in cfg.graph.nodes if any(c.name == "fin" for c in cfg.block(n).calls)]
    assert fins  # the finally body is copied per way out
    assert dominates(cfg, "b", "d")


def test_return_inside_try_runs_finally_then_exits():
    cfg = cfg_of("""
        def f():
            try:
                return a()
            finally:
                fin()
            never()
    """)
    assert not reachable(cfg, "never")
    fin_nodes = [n for n in cfg.graph.nodes if any(c.name == "fin" for c in cfg.block(n).calls)]
    assert any(nx.has_path(cfg.graph, n, cfg.exit) for n in fin_nodes)


def test_match_cases():
    cfg = cfg_of("""
        def f(cmd):
            match subject():
                case "a":
                    a()
                case _:
                    other()
            done()
    """)
    assert dominates(cfg, "subject", "done")
    assert not dominates(cfg, "a", "done") and not dominates(cfg, "other", "done")


def test_calls_in_evaluation_order():
    expr = ast.parse("scaler.scale(loss(x)).backward(retain())").body[0]
    names = [c.name for c in calls_in(expr)]
    assert names == ["loss", "scaler.scale", "retain", "scaler.scale().backward"]
    last = calls_in(expr)[-1]
    assert (last.receiver, last.leaf) == ("scaler.scale()", "backward")
    lam = ast.parse("f(lambda: g())").body[0]
    assert [c.name for c in calls_in(lam)] == ["f"]  # a lambda body runs later


def test_constant_truth():
    assert constant_truth(ast.parse("False", mode="eval").body) is False
    assert constant_truth(ast.parse("not 0", mode="eval").body) is True
    assert constant_truth(ast.parse("x", mode="eval").body) is None


def test_node_limit_is_reported():
    body = "\n".join(f"    if x{i}:\n        f{i}()" for i in range(200))
    cfg = cfg_of(f"def f():\n{body}\n", max_nodes=50)
    assert cfg.truncated and "50" in cfg.reason
    assert cfg.graph.number_of_nodes() <= 50


@pytest.mark.parametrize("depth", [60])
def test_deep_nesting_is_bounded(depth):
    src = "def f():\n" + "".join("    " * (i + 1) + f"if c{i}:\n" for i in range(depth)) + "    " * (depth + 1) + "g()\n"
    cfg = cfg_of(src)
    assert reachable(cfg, "g")

"""Translation cost: a formula that keeps slices or concatenations translates again only the functions whose
translation met one (inlined helpers from other files included); every other function's model is the one
translated with none kept. Shared or not, a model is what a fresh translation gives, whatever the order."""

from __future__ import annotations

from pathlib import Path
from textwrap import dedent

from verifier.analysis.code_sympy import translate_source
from verifier.checks.base import Context
from verifier.checks.formula import RepoFormulas, _repo
from verifier.index.build import build_index
from verifier.spec.model import Spec

FILES = {
    "layers.py": """
        import torch

        def head(x, r):
            return x[:, :r]

        def rebuild(w):
            new = torch.zeros_like(w)
            return new + w
        """,
    "model.py": """
        import torch
        from layers import head, rebuild

        def plain(a, b):
            return a * b + 1

        def sliced(u, r):
            return 2 * head(u, r)

        def joined(p, q):
            return torch.cat([p, q], dim=1) * 3

        def rebuilt(w, v):
            new = torch.zeros_like(v)
            return rebuild(w) + new
        """,
}


def context(tmp_path: Path) -> Context:
    for name, text in FILES.items():
        (tmp_path / name).write_text(dedent(text))
    return Context(build_index(tmp_path, use_cache=False), Spec())


def described(models) -> dict[str, str]:
    out = {}
    for m in models:
        fields = dict(vars(m))
        fields.pop("structures_met")
        out[m.qualname] = repr(fields)
    return out


def test_structures_met_are_recorded_through_inlined_helpers(tmp_path):
    ctx = context(tmp_path)
    met = {m.qualname: m.structures_met for m in _repo(ctx, {}).models("model.py")}
    assert met == {"plain": frozenset(), "sliced": frozenset({"slice"}), "joined": frozenset({"concat"}),
                   "rebuilt": frozenset()}
    assert {m.qualname: m.structures_met for m in translate_source("def f(x, i):\n    return x[i] + x[1:]\n")} == {
        "f": frozenset({"slice"})
    }


def test_functions_that_met_no_kept_structure_share_the_plain_model(tmp_path):
    ctx = context(tmp_path)
    plain = {m.qualname: m for m in _repo(ctx, {}).models("model.py")}
    kept = {m.qualname: m for m in _repo(ctx, {}, frozenset({"slice"})).models("model.py")}
    assert [q for q in kept if kept[q] is plain[q]] == ["plain", "joined", "rebuilt"]
    assert str(kept["sliced"].candidates[-1].expr) != str(plain["sliced"].candidates[-1].expr)  # the slice is kept
    for structures in (frozenset({"slice"}), frozenset({"concat"}), frozenset({"slice", "concat"})):
        fresh = RepoFormulas(ctx, {}, structures)  # no base: every function translated with the structures kept
        assert described(_repo(ctx, {}, structures).models("model.py")) == described(fresh.models("model.py"))


def test_a_helper_from_another_file_names_its_leaves_among_the_callers(tmp_path):
    # `rebuild`'s leaf `new` does not depend on what layers.py translated last, and is not the caller's `new`
    ctx = context(tmp_path)
    first = RepoFormulas(ctx, {})
    first.models("layers.py")
    late = {m.qualname: m for m in first.models("model.py")}
    early = {m.qualname: m for m in RepoFormulas(ctx, {}).models("model.py")}
    assert described(late.values()) == described(early.values())
    ret = late["rebuilt"].candidates[-1].expr
    assert sorted(s.name for s in ret.free_symbols) == ["new", "new__2", "w"]

"""The analysed repo is untrusted: indexing (and a full run) must never import, execute or evaluate it.

Every file below would leave a marker file if Python imported it, a shell ran it, Jupyter executed it, or
YAML constructed it. The repo is generated at test time (a stored conftest.py would be imported by pytest).
"""

from __future__ import annotations

import json
import os
import string
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from verifier.index.build import build_index


def evil_repo(root: Path, marker_dir: Path) -> Path:
    def touch(name: str) -> str:
        return f"open({str(marker_dir / name)!r}, 'w').write('ran')"

    files = {
        "train.py": f"import os\n{touch('toplevel')}\nlr = 3e-4\n",
        "pkg/__init__.py": touch("package_init"),
        "conftest.py": touch("conftest"),
        "setup.py": f"{touch('setup')}\nfrom setuptools import setup\nsetup(name='x')\n",
        "sitecustomize.py": touch("sitecustomize"),
        "usercustomize.py": touch("usercustomize"),
        "evil.pth": f"import os; {touch('pth')}\n",
        "lib/site-packages/evil.pth": f"import os; {touch('pth2')}\n",
        "config.yaml": f'cmd: !!python/object/apply:os.system ["touch {marker_dir / "yaml"}"]\n'
                       f"lr: !!python/object/new:builtins.eval [\"{touch('yaml_eval')}\"]\n",
        "run.sh": f"touch {marker_dir / 'shell'}\npython train.py --lr $(touch {marker_dir / 'subst'})\n",
        "values.toml": 'lr = 1e-3\n',
        "data.json": '{"__class__": "os.system", "lr": 1}',
        "notebook.ipynb": json.dumps({"cells": [
            {"cell_type": "code", "source": [touch("notebook") + "\n", f"!touch {marker_dir / 'nb_shell'}\n"]},
        ], "nbformat": 4, "nbformat_minor": 5, "metadata": {}}),
        "sau.yaml": "version: 1\npaper: {id: evil}\nsaus:\n"
                    "  - id: evil-D1-001\n    dimension: numerical\n    claim: lr is 3e-4\n"
                    "    check: {kind: value, name: lr, expect: 0.0003}\n",
    }
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    return root


@pytest.fixture
def evil(tmp_path, monkeypatch):
    monkeypatch.setenv("SAU_VERIFY_CACHE_DIR", str(tmp_path / "cache"))
    markers = tmp_path / "markers"
    markers.mkdir()
    return evil_repo(tmp_path / "repo", markers), markers


def test_build_index_executes_nothing(evil):
    repo, markers = evil
    before = sorted(p.relative_to(repo).as_posix() for p in repo.rglob("*"))
    index = build_index(repo)
    build_index(repo)  # and again from the cache
    assert sorted(os.listdir(markers)) == []
    assert sorted(p.relative_to(repo).as_posix() for p in repo.rglob("*")) == before
    assert "train.py" in index.files and "notebook.ipynb" in index.files
    assert "sau.yaml" not in index.files
    assert any(b.name == "lr" and b.value == 3e-4 for b in index.files["train.py"].bindings)


def test_full_run_executes_nothing(evil):
    try:
        from verifier.engine import run_repo
    except ImportError:
        pytest.skip("engine not built yet")
    repo, markers = evil
    report = run_repo(repo, use_cache=False)
    assert report.verdicts
    assert sorted(os.listdir(markers)) == []


# ----- fuzzing: random input never crashes or hangs the index -------------------------------------------------
_SUFFIXES = [".py", ".yaml", ".json", ".toml", ".sh", ".ipynb", ".md"]
_SNIPPETS = ["def f(", "class A:", "    ", "\n", "lr = 3e-4", '"""', "'", "#", "---\n", "{", "}", "[", "]",
             "- a: 1\n", "&a *a", "!!python/object:x", "[[t]]", "=", "$(", "`", "\\\n", "for s in 1 2; do",
             "python train.py --lr ", '{"cells": [', "\x00", "\ufeff", "\r", "((((", "lambda:", "@", "%%bash"]


def _build_one(name: str, content: bytes) -> None:
    with tempfile.TemporaryDirectory() as d:
        root = Path(d) / "repo"
        root.mkdir()
        (root / name).write_bytes(content)
        index = build_index(root, use_cache=False)
        for path in index.files:
            index.source(path)
            index.tree(path)


@settings(max_examples=60, deadline=5000, suppress_health_check=[HealthCheck.too_slow])
@given(suffix=st.sampled_from(_SUFFIXES), content=st.binary(max_size=2000))
def test_random_bytes_never_crash(suffix, content):
    _build_one("f" + suffix, content)


@settings(max_examples=80, deadline=5000, suppress_health_check=[HealthCheck.too_slow])
@given(suffix=st.sampled_from(_SUFFIXES),
       parts=st.lists(st.one_of(st.sampled_from(_SNIPPETS), st.text(string.printable, max_size=20)), max_size=60))
def test_random_structured_text_never_crashes(suffix, parts):
    _build_one("f" + suffix, "".join(parts).encode("utf-8", "replace"))


@pytest.mark.parametrize("suffix, content", [
    (".py", "x = (" * 150 + ")" * 150),
    (".py", "x = " + "1 + " * 20000 + "1\n"),
    (".py", "x = " + "[" * 500 + "]" * 500),
    (".py", "def f():\n" + "".join("    " * i + "if x:\n" for i in range(1, 120)) + "    " * 120 + "pass\n"),
    (".py", "x = 2 ** 2 ** 2 ** 2 ** 2 ** 2\ny = 'a' * 10 ** 9\n"),
    (".json", "[" * 5000 + "]" * 5000),
    (".yaml", "a: " + "[" * 3000 + "]" * 3000),
    (".yaml", "a: &a [x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\n"
              "d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]\ne: [*d, *d, *d, *d, *d, *d, *d, *d, *d]\n"),
    (".sh", "for i in {1..100000000}; do python t.py --i $i; done\n" + "$(" * 2000),
    (".toml", "a = " + "[" * 2000 + "]" * 2000),
])
def test_pathological_inputs_are_bounded(suffix, content):
    _build_one("f" + suffix, content.encode())

"""Discovery: gitignore, spec globs, default skips, roles, and the bad-input notes."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from verifier.index.build import build_index
from verifier.index.facts import FileRole


def write(root: Path, files: dict[str, str | bytes]) -> Path:
    for rel, content in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            p.write_bytes(content)
        else:
            p.write_text(content, encoding="utf-8")
    return root


def reasons(index) -> dict[str, str]:
    return {n.file: n.reason for n in index.notes}


def test_default_skips_and_roles(tmp_path):
    write(tmp_path, {
        "src/pkg/model.py": "x = 1\n", "tests/test_model.py": "x = 1\n", "docs/conf.py": "x = 1\n",
        "examples/demo.py": "x = 1\n", "README.md": "We train with lr = 3e-4.\n",
        ".venv/lib/a.py": "x = 1\n", "env/pyvenv.cfg": "home = /usr\n", "env/lib/b.py": "x = 1\n",
        "node_modules/m/index.json": "{}", "build/lib/c.py": "", "dist/d.py": "", "pkg/__pycache__/e.py": "",
        "vendor/f.py": "", "third_party/g.py": "", "external/h.py": "", "x.egg-info/PKG-INFO.py": "",
        ".git/config.py": "", "notes.txt": "lr = 1\n", "image.png": b"\x89PNG\x00",
    })
    index = build_index(tmp_path, use_cache=False)
    assert list(index.files) == ["README.md", "docs/conf.py", "examples/demo.py", "src/pkg/model.py",
                                 "tests/test_model.py"]
    roles = {p: f.role for p, f in index.files.items()}
    assert roles == {"README.md": FileRole.doc, "docs/conf.py": FileRole.doc, "examples/demo.py": FileRole.example,
                     "src/pkg/model.py": FileRole.code, "tests/test_model.py": FileRole.test}
    r = reasons(index)
    assert r[".venv"] == "skipped: virtual environment" and r["env"] == "skipped: virtual environment"
    assert r["node_modules"].startswith("skipped") and r["build"] == "skipped: build output"
    assert r["vendor"] == r["third_party"] == r["external"] == "skipped: vendored code"
    assert r[".git"] == "skipped: version control" and r["x.egg-info"] == "skipped: build output"
    readme = index.files["README.md"].bindings
    assert [(b.name, b.value, b.span.line) for b in readme] == [("lr", 3e-4, 1)]
    assert index.files["src/pkg/model.py"].definitions == [] and index.files["src/pkg/model.py"].bindings


def test_gitignore_nested_and_negation(tmp_path):
    write(tmp_path, {
        ".gitignore": "*.log.py\nout/\n/top.py\n!keep.log.py\n",
        "a.log.py": "", "keep.log.py": "", "top.py": "", "sub/top.py": "", "out/x.py": "", "sub/out/y.py": "",
        "sub/.gitignore": "local.py\n", "sub/local.py": "", "local.py": "", "main.py": "",
    })
    index = build_index(tmp_path, use_cache=False)
    assert list(index.files) == ["keep.log.py", "local.py", "main.py", "sub/top.py"]
    r = reasons(index)
    assert r["a.log.py"] == r["out"] == r["sub/out"] == r["sub/local.py"] == r["top.py"] == "ignored by .gitignore"


def test_spec_include_exclude_and_escaping_globs(tmp_path):
    write(tmp_path, {"ppo/a.py": "", "ppo/b.yaml": "a: 1\n", "examples/c.py": "", "configs/d.yaml": "a: 1\n",
                     "scripts/run.sh": "python ppo/a.py\n"})
    index = build_index(tmp_path, include=["**/*.py", "configs/**"], exclude=["examples/**", "../etc/*",
                                                                               "/abs/*"], use_cache=False)
    assert list(index.files) == ["configs/d.yaml", "ppo/a.py"]
    r = reasons(index)
    assert r["examples"] == "excluded by the spec"
    assert r["ppo/b.yaml"] == "not matched by the spec's include globs"
    spec_notes = sorted(n.reason for n in index.notes if n.file == "<spec>")
    assert spec_notes == ["exclude glob '../etc/*' points outside the repository: ignored",
                          "exclude glob '/abs/*' points outside the repository: ignored"]


def test_explicit_include_reaches_into_a_default_skipped_dir(tmp_path):
    write(tmp_path, {"third_party/mylib/a.py": "", "main.py": ""})
    index = build_index(tmp_path, include=["third_party/mylib/**", "*.py"], use_cache=False)
    assert list(index.files) == ["main.py", "third_party/mylib/a.py"]


def test_binary_huge_and_non_utf8(tmp_path):
    write(tmp_path, {"bin.py": b"x = 1\x00\x01\x02", "big.py": "x = 1\n" * 300_000,
                     "latin.py": b"name = 'caf\xe9'\nlr = 0.1\n"})
    index = build_index(tmp_path, use_cache=False)
    assert list(index.files) == ["latin.py"]
    r = reasons(index)
    assert r["bin.py"] == "skipped: binary file"
    assert r["big.py"].startswith("skipped: larger than 1000000 bytes")
    assert r["latin.py"] == "not valid UTF-8: decoded with replacement characters"
    assert [b.value for b in index.files["latin.py"].bindings if b.name == "lr"] == [0.1]
    assert index.source("latin.py").startswith("name = 'caf\ufffd'")


def test_max_bytes_parameter(tmp_path):
    write(tmp_path, {"a.py": "x = 1\n" * 100})
    assert build_index(tmp_path, use_cache=False, max_bytes=100).files == {}


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symlinks")
def test_symlink_loops_and_links_out_of_the_repo(tmp_path):
    repo = tmp_path / "repo"
    outside = tmp_path / "outside"
    write(outside, {"secret.py": "token = 'x'\n"})
    write(repo, {"main.py": "x = 1\n", "sub/a.py": ""})
    os.symlink(outside, repo / "linked_dir")
    os.symlink(outside / "secret.py", repo / "secret.py")
    os.symlink(repo, repo / "sub" / "loop")
    os.symlink("self_loop", repo / "self_loop")
    index = build_index(repo, use_cache=False)
    assert list(index.files) == ["main.py", "sub/a.py"]
    r = reasons(index)
    assert r["linked_dir"] == "symlink not followed (target outside the repository)"
    assert r["secret.py"] == "symlink not followed (target outside the repository)"
    assert r["sub/loop"] == "symlink not followed (target inside the repository)"
    assert "self_loop" in r


def test_fifty_thousand_line_generated_file(tmp_path):
    lines = ["# @generated by a tool", "import torch", "TABLE = {"]
    lines += [f"    'k{i}': {i}," for i in range(50_000)]
    lines += ["}", "lr = 3e-4"]
    write(tmp_path, {"gen.py": "\n".join(lines) + "\n"})
    start = time.perf_counter()
    index = build_index(tmp_path, use_cache=False, max_bytes=5_000_000)
    assert time.perf_counter() - start < 30
    facts = index.files["gen.py"]
    assert facts.lines == 50_005
    assert [b.span.line for b in facts.bindings if b.path == "lr"] == [50_005]
    # and with the default size limit the same file is skipped with a note instead
    assert "gen.py" not in build_index(tmp_path, use_cache=False).files


def test_missing_root(tmp_path):
    with pytest.raises(FileNotFoundError, match="does not exist"):
        build_index(tmp_path / "nope")
    (tmp_path / "file.py").write_text("")
    with pytest.raises(NotADirectoryError):
        build_index(tmp_path / "file.py")


def test_a_test_named_helper_that_code_imports_is_code(tmp_path):
    """`test_util.py` beside `main.py` that `main.py` imports holds the project's evaluation, not a unit test; a
    real test file (nothing imports it) and a helper in tests/ stay tests."""
    from verifier.index.build import build_index
    from verifier.index.facts import FileRole

    files = {
        "main.py": "from test_util import evaluate\nfrom pkg.train import fit\n\nevaluate(fit())\n",
        "test_util.py": "def evaluate(model):\n    return model\n",
        "test_main.py": "from main import evaluate\n\n\ndef test_it():\n    assert evaluate(1) == 1\n",
        "pkg/__init__.py": "",
        "pkg/train.py": "from .test_helpers import loss\n\n\ndef fit():\n    return loss()\n",
        "pkg/test_helpers.py": "def loss():\n    return 0.0\n",
        "tests/test_util2.py": "def helper():\n    return 1\n",
    }
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text, encoding="utf-8")
    roles = {p: f.role for p, f in build_index(tmp_path, use_cache=False).files.items()}
    assert roles["test_util.py"] is FileRole.code
    assert roles["pkg/test_helpers.py"] is FileRole.code
    assert roles["test_main.py"] is FileRole.test
    assert roles.get("tests/test_util2.py", FileRole.test) is FileRole.test

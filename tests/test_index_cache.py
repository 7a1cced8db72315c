"""Content-hash cache, --no-cache, corrupt entries, determinism, and the process-pool path."""

from __future__ import annotations

from pathlib import Path

import pytest

from verifier.index import build as build_module
from verifier.index import cache
from verifier.index.build import build_index

FILES = {
    "ppo/train.py": "import torch\nlr = 3e-4\nopt = torch.optim.Adam(p, lr=lr)\n",
    "ppo/model.py": "class M:\n    def forward(self, x):\n        raise NotImplementedError\n",
    "configs/a.yaml": "optim:\n  lr: 1e-4\n",
    "run.sh": "python ppo/train.py --lr 5e-4\n",
    "README.md": "lr = 3e-4\n",
}


@pytest.fixture
def repo(tmp_path):
    root = tmp_path / "repo"
    for rel, text in FILES.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    return root


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    d = tmp_path / "cache"
    monkeypatch.setenv("SAU_VERIFY_CACHE_DIR", str(d))
    return d


def snapshot(index):
    return {p: (f.sha, f.bindings, f.calls, f.definitions, f.imports, f.launches, sorted(f.reads), f.has_main_block,
                f.parse_error, f.lines, f.role, f.language) for p, f in index.files.items()}, index.notes


def test_second_build_reads_the_cache(repo, cache_dir):
    first = build_index(repo)
    assert first.stats == {"files": 5, "cache_hits": 0, "cache_misses": 5, "skipped": 0}
    entries = sorted(cache_dir.rglob("*.facts"))
    assert len(entries) == 5
    second = build_index(repo)
    assert second.stats["cache_hits"] == 5 and second.stats["cache_misses"] == 0
    assert snapshot(first) == snapshot(second)
    # nothing was written into the analysed repo
    assert sorted(p.relative_to(repo).as_posix() for p in repo.rglob("*") if p.is_file()) == sorted(FILES)


def test_changed_file_misses_only_itself(repo, cache_dir):
    build_index(repo)
    (repo / "ppo/train.py").write_text("lr = 1e-3\n")
    index = build_index(repo)
    assert (index.stats["cache_hits"], index.stats["cache_misses"]) == (4, 1)
    assert [b.value for b in index.files["ppo/train.py"].bindings] == [1e-3]


def test_no_cache_bypasses_reading_and_writing(repo, cache_dir):
    index = build_index(repo, use_cache=False)
    assert not cache_dir.exists()
    assert index.stats["cache_hits"] == 0 and index.stats["files"] == 5


def test_corrupt_entries_are_ignored(repo, cache_dir):
    reference = build_index(repo)
    for entry in cache_dir.rglob("*.facts"):
        entry.write_bytes(b"M\x00garbage")
    index = build_index(repo)
    assert index.stats["cache_hits"] == 0
    assert snapshot(index) == snapshot(reference)


def test_unwritable_cache_dir_does_not_fail(repo, tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv("SAU_VERIFY_CACHE_DIR", str(blocker / "sub"))
    assert build_index(repo).stats["files"] == 5


def test_encode_round_trip(repo):
    index = build_index(repo, use_cache=False)
    for facts in index.files.values():
        again, notes = cache.decode(cache.encode(facts, []))
        assert again == facts and notes == []


def test_deterministic_across_builds_and_pool(repo, cache_dir, monkeypatch):
    serial = build_index(repo, use_cache=False, jobs=1)
    again = build_index(repo, use_cache=False, jobs=1)
    assert snapshot(serial) == snapshot(again)
    monkeypatch.setattr(build_module, "POOL_THRESHOLD", 0)
    pooled = build_index(repo, use_cache=False, jobs=2)
    assert snapshot(pooled) == snapshot(serial)
    pooled_cached = build_index(repo, jobs=2)
    pooled_warm = build_index(repo, jobs=2)
    assert pooled_warm.stats["cache_hits"] == 5
    assert snapshot(pooled_cached) == snapshot(pooled_warm) == snapshot(serial)


def test_default_cache_location(monkeypatch, tmp_path):
    monkeypatch.delenv("SAU_VERIFY_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache.cache_dir() == Path(tmp_path / "xdg" / "sau-verify")
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert cache.cache_dir() == Path.home() / ".cache" / "sau-verify"

"""``sau.lock.json``: every judge verdict, keyed so a re-run with the same inputs reuses it.

Key = sha256 of (model, prompt version, claim id, claim text hash, evidence hash): change any of them and
the claim is judged afresh. The file is sorted JSON with no timestamps, so re-runs are byte-identical and
diffs in review show exactly which verdicts changed. Entries no longer used are kept (another run with
``--only`` may need them) unless ``prune`` is called.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from verifier.judge.prompt import PROMPT_VERSION

LOCK_NAME = "sau.lock.json"
LOCK_VERSION = 1


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def cache_key(model: str, claim_id: str, claim_text: str, evidence_hash: str, prompt_version: str = PROMPT_VERSION) -> str:
    parts = json.dumps([model, prompt_version, claim_id, text_hash(claim_text), evidence_hash])
    return hashlib.sha256(parts.encode("utf-8")).hexdigest()


def lock_path_for(spec_path: str | Path) -> Path:
    return Path(spec_path).resolve().parent / LOCK_NAME


class LockFile:
    def __init__(self, path: Path):
        self.path = Path(path)
        self.entries: dict[str, dict[str, Any]] = {}
        self.used: set[str] = set()
        self.problem: str | None = None
        self._dirty = False
        self._load()

    def _load(self) -> None:
        if not self.path.is_file():
            return
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            self.problem = f"{self.path.name} unreadable ({type(exc).__name__}); verdicts will be re-judged"
            return
        entries = data.get("verdicts") if isinstance(data, dict) else None
        if isinstance(entries, dict):
            self.entries = {k: v for k, v in entries.items() if isinstance(v, dict) and isinstance(v.get("score"), (int, float))}

    def get(self, key: str) -> dict[str, Any] | None:
        entry = self.entries.get(key)
        if entry is not None:
            self.used.add(key)
        return entry

    def put(self, key: str, entry: dict[str, Any]) -> None:
        self.used.add(key)
        if self.entries.get(key) != entry:
            self.entries[key] = entry
            self._dirty = True

    def prune(self) -> None:
        stale = set(self.entries) - self.used
        for key in stale:
            del self.entries[key]
        self._dirty = self._dirty or bool(stale)

    def render(self) -> str:
        body = {"version": LOCK_VERSION, "prompt_version": PROMPT_VERSION, "verdicts": self.entries}
        return json.dumps(body, sort_keys=True, indent=2, ensure_ascii=False) + "\n"

    def save(self) -> bool:
        """Write when something changed (atomically); False when nothing needed writing."""
        if not self._dirty:
            return False
        tmp = self.path.with_name(self.path.name + ".tmp")
        tmp.write_text(self.render(), encoding="utf-8")
        os.replace(tmp, self.path)
        self._dirty = False
        return True

"""What a foreign-shape converter hands back: native v1 data plus a map back to the file it came from."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from verifier.spec.parse import PathKey


@dataclass
class Converted:
    """``data`` validates as a native v1 Spec; ``origin`` maps its paths to the source paths they came from
    (longest prefix wins), so validation errors still name the line and field the user wrote;
    ``problems`` are (source path, message) pairs found while converting."""

    data: dict[str, Any]
    origin: dict[PathKey, PathKey] = field(default_factory=dict)
    problems: list[tuple[PathKey, str]] = field(default_factory=list)

    def source_of(self, path: PathKey) -> PathKey:
        for cut in range(len(path), -1, -1):
            mapped = self.origin.get(path[:cut])
            if mapped is not None:
                return mapped + path[cut:]
        return path

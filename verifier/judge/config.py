"""Where the judge's settings come from: flags, then environment, then ``[tool.sau-verify]`` in the
pyproject.toml of the directory the user runs in (never the analysed repo's: that one is untrusted)."""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Mapping

try:  # Python 3.11+
    import tomllib
except ModuleNotFoundError:  # pragma: no cover - 3.10
    import tomli as tomllib  # type: ignore[no-redef]

DEFAULT_BASE_URL = "https://api.openai.com/v1"
DEFAULT_KEY_ENV = "OPENAI_API_KEY"


class JudgeConfigError(ValueError):
    """A judge was asked for but cannot be set up (no model, bad number): exit 2 with this message."""


@dataclass(frozen=True)
class JudgeConfig:
    model: str
    base_url: str = DEFAULT_BASE_URL
    api_key_env: str = DEFAULT_KEY_ENV
    timeout: float = 60.0  # seconds per HTTP request
    max_retries: int = 4  # on 429, 5xx, timeouts and connection errors
    backoff: float = 1.0  # first retry waits this long, then doubles
    max_backoff: float = 30.0
    concurrency: int = 4  # requests in flight at once
    batch_size: int = 4  # claims per request (SA-Bench's judge also used 4)
    cache_only: bool = False  # CI mode: never call out, use sau.lock.json only
    price_input: float | None = None  # USD per 1M prompt tokens, for the cost line of the report
    price_output: float | None = None  # USD per 1M completion tokens
    max_tokens: int = 2000

    def api_key(self) -> str | None:
        return os.environ.get(self.api_key_env) or None

    def with_overrides(self, **changes: Any) -> "JudgeConfig":
        return replace(self, **{k: v for k, v in changes.items() if v is not None})


_FIELDS = {
    "judge_model": "model",
    "judge_base_url": "base_url",
    "judge_api_key_env": "api_key_env",
    "judge_timeout": "timeout",
    "judge_max_retries": "max_retries",
    "judge_concurrency": "concurrency",
    "judge_price_input": "price_input",
    "judge_price_output": "price_output",
}
_ENV = {
    "SAU_VERIFY_JUDGE_MODEL": "model",
    "SAU_VERIFY_JUDGE_BASE_URL": "base_url",
    "SAU_VERIFY_JUDGE_API_KEY_ENV": "api_key_env",
    "SAU_VERIFY_JUDGE_TIMEOUT": "timeout",
    "SAU_VERIFY_JUDGE_CONCURRENCY": "concurrency",
}
_NUMERIC = {"timeout": float, "max_retries": int, "concurrency": int, "price_input": float, "price_output": float}


def pyproject_settings(cwd: Path) -> dict[str, Any]:
    """``[tool.sau-verify]`` of ``cwd/pyproject.toml`` with keys normalised to snake_case; {} if absent."""
    path = Path(cwd) / "pyproject.toml"
    if not path.is_file():
        return {}
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError):
        return {}
    section = data.get("tool", {}).get("sau-verify", {})
    return {str(k).replace("-", "_"): v for k, v in section.items()} if isinstance(section, dict) else {}


def resolve(
    flags: Mapping[str, Any] | None = None,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
) -> JudgeConfig | None:
    """The judge configuration, or None when no judge is wanted.

    A judge is wanted when ``flags["judge"]`` or ``flags["judge_cache_only"]`` is set, or pyproject says
    ``judge = true``. Precedence per field: flag > environment > pyproject > default.
    """
    flags = dict(flags or {})
    env = os.environ if env is None else env
    project = pyproject_settings(cwd or Path.cwd())
    wanted = bool(flags.get("judge") or flags.get("judge_cache_only") or project.get("judge") is True)
    if not wanted:
        return None
    values: dict[str, Any] = {}
    for key, field in _FIELDS.items():
        if project.get(key) is not None:
            values[field] = project[key]
    for key, field in _ENV.items():
        if env.get(key):
            values[field] = env[key]
    for key, field in _FIELDS.items():
        if flags.get(key) is not None:
            values[field] = flags[key]
    for field, kind in _NUMERIC.items():
        if field in values:
            try:
                values[field] = kind(values[field])
            except (TypeError, ValueError):
                raise JudgeConfigError(f"judge setting {field}: not a number: {values[field]!r}") from None
    if not values.get("model"):
        raise JudgeConfigError(
            "--judge needs a model: --judge-model NAME, SAU_VERIFY_JUDGE_MODEL, or judge-model in [tool.sau-verify]"
        )
    values["cache_only"] = bool(flags.get("judge_cache_only"))
    return JudgeConfig(**values)

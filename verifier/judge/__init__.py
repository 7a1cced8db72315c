"""judge layer: the LLM fallback for what static analysis cannot decide, reproducible through a lock file."""

from verifier.judge.client import JudgeClient, Usage
from verifier.judge.config import JudgeConfig, JudgeConfigError, resolve
from verifier.judge.lockfile import LockFile, cache_key, lock_path_for
from verifier.judge.prompt import PROMPT_VERSION, JudgeRequest, parse_answer
from verifier.judge.run import JudgePass, run_judge

__all__ = [
    "JudgeClient",
    "JudgeConfig",
    "JudgeConfigError",
    "JudgePass",
    "JudgeRequest",
    "LockFile",
    "PROMPT_VERSION",
    "Usage",
    "cache_key",
    "lock_path_for",
    "parse_answer",
    "resolve",
    "run_judge",
]

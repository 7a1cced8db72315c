"""An OpenAI-compatible chat-completions client on the standard library only.

Works with hosted APIs, vLLM, llama.cpp and Ollama servers. Batches of at most ``batch_size`` claims per
request, a bounded number of requests in flight, retries with exponential backoff on 429/5xx/timeouts,
and token/cost accounting from each response's ``usage``. A failed request or a malformed answer
becomes an ``error`` outcome for exactly the claims it concerned — never a silent 0.
"""

from __future__ import annotations

import json
import socket
import threading
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Callable

from verifier.judge.config import JudgeConfig
from verifier.judge.prompt import JudgeRequest, ParsedVerdict, parse_answer, request_body

RETRYABLE = {408, 409, 425, 429, 500, 502, 503, 504}


@dataclass
class Usage:
    calls: int = 0
    retries: int = 0
    failures: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add(self, usage: dict[str, Any] | None, config: JudgeConfig) -> None:
        usage = usage or {}
        prompt = int(usage.get("prompt_tokens") or 0)
        completion = int(usage.get("completion_tokens") or 0)
        with self._lock:
            self.calls += 1
            self.prompt_tokens += prompt
            self.completion_tokens += completion
            if config.price_input is not None or config.price_output is not None:
                cost = prompt * (config.price_input or 0) / 1e6 + completion * (config.price_output or 0) / 1e6
                self.cost_usd = round((self.cost_usd or 0.0) + cost, 6)

    def count(self, attr: str) -> None:
        with self._lock:
            setattr(self, attr, getattr(self, attr) + 1)

    def to_json(self) -> dict[str, Any]:
        return {
            "calls": self.calls,
            "retries": self.retries,
            "failures": self.failures,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "cost_usd": self.cost_usd,
        }


class JudgeHTTPError(Exception):
    """The endpoint could not be reached or answered unusably (after retries): an error, never a score."""


Transport = Callable[[str, bytes, dict[str, str], float], tuple[int, dict[str, str], bytes]]


def urllib_transport(url: str, body: bytes, headers: dict[str, str], timeout: float) -> tuple[int, dict[str, str], bytes]:
    request = urllib.request.Request(url, data=body, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310 - URL from user config
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers or {}), exc.read() if exc.fp else b""


class JudgeClient:
    def __init__(self, config: JudgeConfig, transport: Transport | None = None, sleep: Callable[[float], None] = time.sleep):
        self.config = config
        self.transport = transport or urllib_transport
        self.sleep = sleep
        self.usage = Usage()

    # ----- public ------------------------------------------------------------------------------------------
    def judge(self, requests: list[JudgeRequest]) -> dict[str, ParsedVerdict]:
        """Verdicts for all requests (batched, concurrent); every claim id gets an entry."""
        size = max(1, min(self.config.batch_size, 4))
        ordered = sorted(requests, key=lambda r: r.claim_id)
        batches = [ordered[i : i + size] for i in range(0, len(ordered), size)]
        out: dict[str, ParsedVerdict] = {}
        if not batches:
            return out
        with ThreadPoolExecutor(max_workers=max(1, self.config.concurrency)) as pool:
            for result in pool.map(self._judge_batch, batches):
                out.update(result)
        return out

    # ----- one request -------------------------------------------------------------------------------------
    def _judge_batch(self, batch: list[JudgeRequest]) -> dict[str, ParsedVerdict]:
        ids = [r.claim_id for r in batch]
        try:
            content = self.complete(request_body(self.config.model, batch, self.config.max_tokens))
        except JudgeHTTPError as exc:
            self.usage.count("failures")
            return {cid: ParsedVerdict(cid, None, "", (), str(exc)) for cid in ids}
        return parse_answer(content, ids)

    def complete(self, body: dict[str, Any]) -> str:
        """POST one chat-completions request with retries; the assistant message's text."""
        url = self.config.base_url.rstrip("/") + "/chat/completions"
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        key = self.config.api_key()
        if key:
            headers["Authorization"] = f"Bearer {key}"
        payload = json.dumps(body, sort_keys=True).encode("utf-8")
        last = "no attempt"
        for attempt in range(self.config.max_retries + 1):
            if attempt:
                self.usage.count("retries")
            try:
                status, response_headers, raw = self.transport(url, payload, headers, self.config.timeout)
            except (socket.timeout, TimeoutError):
                last = f"judge request timed out after {self.config.timeout:g}s"
                self._backoff(attempt, None)
                continue
            except (urllib.error.URLError, ConnectionError, OSError) as exc:
                last = f"judge endpoint unreachable: {getattr(exc, 'reason', exc)}"
                self._backoff(attempt, None)
                continue
            if status == 200:
                return self._content(raw)
            last = f"judge endpoint answered HTTP {status}"
            if status not in RETRYABLE:
                raise JudgeHTTPError(last + _detail(raw))
            self._backoff(attempt, response_headers)
        raise JudgeHTTPError(f"{last} (after {self.config.max_retries + 1} attempts)")

    def _content(self, raw: bytes) -> str:
        try:
            data = json.loads(raw.decode("utf-8", errors="replace"))
        except json.JSONDecodeError:
            raise JudgeHTTPError("judge endpoint returned a body that is not JSON") from None
        if not isinstance(data, dict):
            raise JudgeHTTPError("judge endpoint returned an unexpected body")
        self.usage.add(data.get("usage") if isinstance(data.get("usage"), dict) else None, self.config)
        try:
            message = data["choices"][0]["message"]
        except (KeyError, IndexError, TypeError):
            raise JudgeHTTPError("judge response has no choices[0].message") from None
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, str):
            parsed = message.get("parsed") if isinstance(message, dict) else None
            return json.dumps(parsed) if parsed is not None else ""
        return content

    def _backoff(self, attempt: int, headers: dict[str, str] | None) -> None:
        if attempt >= self.config.max_retries:
            return
        wait = self.config.backoff * (2**attempt)
        retry_after = next((v for k, v in (headers or {}).items() if k.lower() == "retry-after"), None)
        if retry_after:
            try:
                wait = max(wait, float(retry_after))
            except ValueError:
                pass
        self.sleep(min(wait, self.config.max_backoff))


def _detail(raw: bytes) -> str:
    text = raw.decode("utf-8", errors="replace").strip().replace("\n", " ")
    return f": {text[:200]}" if text else ""

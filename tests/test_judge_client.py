"""The judge client against a real local chat-completions server: success, malformed answers, 429 then
success, timeouts, batching and token accounting."""

from __future__ import annotations

import json

import pytest
from judge_server import JudgeServer

from verifier.judge.client import JudgeClient
from verifier.judge.config import JudgeConfig
from verifier.judge.evidence import Snippet
from verifier.judge.prompt import JudgeRequest, parse_answer


def config(url: str, **kw) -> JudgeConfig:
    base = {"model": "test-model", "base_url": url, "backoff": 0.01, "timeout": 5.0, "max_retries": 3}
    base.update(kw)
    return JudgeConfig(**base)


def request(cid: str, with_evidence: bool = True) -> JudgeRequest:
    snippets = [Snippet("train.py", 3, 3, "binding", "lr", "lr = 3e-4")] if with_evidence else []
    return JudgeRequest(cid, f"claim {cid}: lr is 3e-4", "numerical", snippets, evidence_hash=f"h-{cid}")


def test_success_batches_of_at_most_four_and_usage():
    with JudgeServer() as server:
        client = JudgeClient(config(server.url, concurrency=2))
        out = client.judge([request(f"p-D1-{i:03d}") for i in range(6)])
    assert sorted(out) == [f"p-D1-{i:03d}" for i in range(6)]
    assert all(v.score == 0.5 and v.evidence_refs == ("train.py:3",) for v in out.values())
    assert sorted(len(json.loads(r["messages"][-1]["content"].split("\n", 1)[1].split("\n\nRepository")[0])) for r in server.requests) == [2, 4]
    assert client.usage.calls == 2 and client.usage.prompt_tokens == 200 and client.usage.completion_tokens == 40
    body = server.requests[0]
    assert body["response_format"]["type"] == "json_schema"
    assert body["response_format"]["json_schema"]["schema"]["properties"]["verdicts"]["items"]["properties"]["score"]["enum"] == [0.0, 0.25, 0.5, 0.75, 1.0]
    assert body["temperature"] == 0


def test_fenced_answer_is_parsed():
    with JudgeServer() as server:
        server.script = ["fenced"]
        out = JudgeClient(config(server.url)).judge([request("p-D1-001")])
    assert out["p-D1-001"].score == 0.5


def test_malformed_json_is_an_error_not_a_zero():
    with JudgeServer() as server:
        server.script = ["garbage"]
        out = JudgeClient(config(server.url)).judge([request("p-D1-001"), request("p-D1-002")])
    for verdict in out.values():
        assert verdict.score is None
        assert verdict.error == "judge answer was not valid JSON"


def test_429_then_success_retries_with_backoff():
    waits: list[float] = []
    with JudgeServer() as server:
        server.script = ["429", "503", "ok"]
        client = JudgeClient(config(server.url), sleep=waits.append)
        out = client.judge([request("p-D1-001")])
    assert out["p-D1-001"].score == 0.5
    assert client.usage.retries == 2 and client.usage.calls == 1
    assert waits == [0.01, 0.02]  # exponential: backoff, 2 x backoff (Retry-After: 0 does not shorten it)
    assert len(server.requests) == 3


def test_retries_exhausted_is_an_error_for_each_claim():
    with JudgeServer() as server:
        server.script = ["500"] * 10
        client = JudgeClient(config(server.url, max_retries=2), sleep=lambda s: None)
        out = client.judge([request("p-D1-001")])
    assert out["p-D1-001"].score is None
    assert "HTTP 500" in out["p-D1-001"].error and "after 3 attempts" in out["p-D1-001"].error
    assert client.usage.failures == 1


def test_timeout_is_an_error():
    with JudgeServer() as server:
        server.script = ["slow"]
        server.slow_seconds = 1.0
        client = JudgeClient(config(server.url, timeout=0.2, max_retries=0))
        out = client.judge([request("p-D1-001")])
    assert out["p-D1-001"].score is None
    assert "timed out" in out["p-D1-001"].error


def test_timeout_then_success():
    with JudgeServer() as server:
        server.script = ["slow", "ok"]
        server.slow_seconds = 0.6
        client = JudgeClient(config(server.url, timeout=0.2, max_retries=1), sleep=lambda s: None)
        out = client.judge([request("p-D1-001")])
    assert out["p-D1-001"].score == 0.5


def test_missing_verdict_for_one_claim_is_an_error_for_that_claim_only():
    def answer_first_only(body):
        cid = json.loads(body["messages"][-1]["content"].split("\n", 1)[1].split("\n\nRepository")[0])[0]["claim_id"]
        return {"verdicts": [{"claim_id": cid, "score": 0.75, "reasoning": "ok", "evidence_refs": []}]}

    with JudgeServer(answer_first_only) as server:
        out = JudgeClient(config(server.url)).judge([request("a-D1-001"), request("a-D1-002")])
    assert out["a-D1-001"].score == 0.75
    assert out["a-D1-002"].score is None and out["a-D1-002"].error == "judge answer had no verdict for this claim"


def test_unreachable_endpoint_is_an_error():
    client = JudgeClient(config("http://127.0.0.1:9/v1", max_retries=0, timeout=0.5))
    out = client.judge([request("p-D1-001")])
    assert out["p-D1-001"].score is None and "unreachable" in out["p-D1-001"].error


@pytest.mark.parametrize(
    "content, score, error",
    [
        ('{"verdicts": [{"claim_id": "x", "score": 0.6, "reasoning": "", "evidence_refs": []}]}', None, "invalid score"),
        ('{"verdicts": [{"claim_id": "x", "score": "0.25", "reasoning": "r", "evidence_refs": ["a.py:1"]}]}', 0.25, ""),
        ('{"claim_id": "x", "score": 1, "reasoning": "r", "evidence_refs": []}', 1.0, ""),
        ('{"verdicts": [{"claim_id": "x", "score": true}]}', None, "invalid score"),
        ("", None, "not valid JSON"),
    ],
)
def test_parse_answer_is_strict_about_scores(content, score, error):
    verdict = parse_answer(content, ["x"])["x"]
    assert verdict.score == score
    assert error in verdict.error

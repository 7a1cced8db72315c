"""Judge settings (flags > environment > ./pyproject.toml) and the judge flags of the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from judge_server import JudgeServer

from verifier.cli import main
from verifier.judge.config import JudgeConfigError, resolve

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "claims-lora-torch" / "repo"


def write_pyproject(folder: Path, body: str) -> Path:
    (folder / "pyproject.toml").write_text(body)
    return folder


def test_no_judge_unless_asked(tmp_path):
    assert resolve({}, env={"SAU_VERIFY_JUDGE_MODEL": "m"}, cwd=tmp_path) is None


def test_precedence_flag_over_env_over_pyproject(tmp_path):
    cwd = write_pyproject(
        tmp_path,
        '[tool.sau-verify]\njudge-model = "from-pyproject"\njudge-base-url = "http://pyproject/v1"\njudge-timeout = 7\n',
    )
    only_file = resolve({"judge": True}, env={}, cwd=cwd)
    assert (only_file.model, only_file.base_url, only_file.timeout) == ("from-pyproject", "http://pyproject/v1", 7.0)
    env = {"SAU_VERIFY_JUDGE_MODEL": "from-env", "SAU_VERIFY_JUDGE_API_KEY_ENV": "MY_KEY"}
    with_env = resolve({"judge": True}, env=env, cwd=cwd)
    assert (with_env.model, with_env.api_key_env, with_env.base_url) == ("from-env", "MY_KEY", "http://pyproject/v1")
    with_flag = resolve({"judge": True, "judge_model": "from-flag"}, env=env, cwd=cwd)
    assert with_flag.model == "from-flag" and not with_flag.cache_only


def test_pyproject_can_turn_the_judge_on_and_cache_only_implies_it(tmp_path):
    cwd = write_pyproject(tmp_path, '[tool.sau-verify]\njudge = true\njudge-model = "m"\n')
    assert resolve({}, env={}, cwd=cwd).model == "m"
    ci = resolve({"judge_cache_only": True, "judge_model": "m"}, env={}, cwd=tmp_path / "elsewhere")
    assert ci.cache_only


def test_missing_model_or_bad_number_is_a_clear_error(tmp_path):
    with pytest.raises(JudgeConfigError, match="needs a model"):
        resolve({"judge": True}, env={}, cwd=tmp_path)
    with pytest.raises(JudgeConfigError, match="timeout"):
        resolve({"judge": True, "judge_model": "m"}, env={"SAU_VERIFY_JUDGE_TIMEOUT": "soon"}, cwd=tmp_path)


def test_unreadable_pyproject_is_ignored(tmp_path):
    cwd = write_pyproject(tmp_path, "[tool.sau-verify\nnot toml")
    assert resolve({"judge": True, "judge_model": "m"}, env={}, cwd=cwd).model == "m"


def test_cli_judge_without_model_exits_2(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SAU_VERIFY_JUDGE_MODEL", raising=False)
    result = CliRunner().invoke(main, [str(FIXTURE), "--judge"])
    assert result.exit_code == 2 and "needs a model" in result.output


def test_cli_runs_the_judge_and_reports_usage(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    repo = tmp_path / "repo"
    repo.mkdir()
    for path in FIXTURE.rglob("*"):
        if path.is_file():
            target = repo / path.relative_to(FIXTURE)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(path.read_bytes())
    with JudgeServer() as server:
        args = [str(repo), "--no-cache", "--format", "json", "--judge", "--judge-model", "m", "--judge-base-url", server.url]
        result = CliRunner().invoke(main, args)
    report = json.loads(result.output)
    judged = {s["id"]: s for s in report["saus"] if s["status"] == "judged"}
    assert set(judged) == {"lora-toy-D2-002"}  # the one claim static analysis could not type
    assert report["judge"]["calls"] == 1 and report["judge"]["prompt_tokens"] == 100
    assert (repo / "sau.lock.json").is_file()
    ci = CliRunner().invoke(main, [str(repo), "--no-cache", "--format", "json", "--judge-cache-only", "--judge-model", "m"])
    again = json.loads(ci.output)
    assert [(s["id"], s["status"], s["score"]) for s in again["saus"]] == [(s["id"], s["status"], s["score"]) for s in report["saus"]]
    assert again["judge"]["calls"] == 0 and again["judge"]["cached"] == 1

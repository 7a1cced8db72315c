"""The `value` check: verdict, score, message and evidence for each way a claimed value can be (un)met."""

import json

from values_helpers import bind, call, definition, launch, make_index

from verifier.checks.base import Context
from verifier.checks.value import check_value
from verifier.index.facts import FileRole
from verifier.results import Status
from verifier.spec.model import Spec, ValueCheck


def run(index, aliases=None, **check):
    ctx = Context(index=index, spec=Spec(aliases=aliases or {}))
    return check_value(ValueCheck(kind="value", **check), ctx)


def where(result, role):
    return sorted(f"{e.file}:{e.line}" for e in result.evidence if e.role == role)


def test_dataclass_default_passes_with_the_contract_message():
    index = make_index([bind("field", "clip_range", "0.2", "ppo/config.py:12", path="PPOConfig.clip_range",
                             scope="PPOConfig", owner="PPOConfig")])
    result = run(index, name="clip_range", expect=0.2)
    assert (result.status, result.score) == (Status.pass_, 1.0)
    assert result.message == "clip_range = 0.2 (dataclass default, ppo/config.py:12)"
    assert where(result, "effective") == ["ppo/config.py:12"]
    json.dumps(result.details)


def test_launch_override_message_names_both_places():
    index = make_index(
        [bind("argparse", "lr", "3e-4", "train.py:31", path="args.lr", scope="parse", dest="lr")],
        launches=[launch("train.py", "scripts/train.sh:4", {"lr": "1e-4"})],
    )
    result = run(index, name="learning_rate", expect=3e-4)
    assert (result.status, result.score) == (Status.partial, 0.75)
    assert result.message.startswith(
        "lr = 1e-4 (scripts/train.sh:4 --lr 1e-4 overrides train.py:31 default=3e-4); claimed 3e-4:"
    )
    assert where(result, "effective") == ["scripts/train.sh:4"]
    assert where(result, "overridden") == ["train.py:31"]
    chain = result.details["chain"]
    assert [(c["file"], c["line"], c["kind"]) for c in chain] == [
        ("scripts/train.sh", 4, "launch"), ("train.py", 31, "argparse"),
    ]
    assert chain[-1]["role"] == "overridden" and chain[0]["value"] == 1e-4


def test_levels_follow_the_calibration():
    index = make_index([bind("assign", "lr", "1e-4", "train.py:2")], reads={"train.py": {"lr"}})
    assert run(index, name="lr", expect=1e-4).score == 1.0
    assert run(index, name="lr", expect=2e-4).score == 0.75
    assert run(index, name="lr", expect=5e-4).score == 0.5
    assert run(index, name="lr", expect=1e-3).score == 0.25
    assert run(index, name="lr", expect=1.05e-4, tolerance=0.1).score == 1.0
    assert run(index, name="lr", expect="adam").status is Status.mismatch


def test_nothing_bound_is_missing():
    result = run(make_index([bind("assign", "x", "1", "a.py:1")]), name="label_smoothing", expect=0.1)
    assert (result.status, result.score) == (Status.missing, 0.0)
    assert "no binding of label_smoothing" in result.message


def test_only_a_comment_or_test_is_missing_with_that_evidence():
    index = make_index([
        bind("comment", "gamma", "0.99", "ppo/buffer.py:7", value=0.99),
        bind("assign", "gamma", "0.99", "tests/test_gae.py:5", scope="test_gae"),
    ])
    result = run(index, name="gamma", expect=0.99)
    assert (result.status, result.score) == (Status.missing, 0.0)
    assert "only in a comment or doc and tests" in result.message
    assert where(result, "comment") == ["ppo/buffer.py:7"] and where(result, "test") == ["tests/test_gae.py:5"]


def test_dead_constant_is_missing():
    index = make_index([bind("assign", "CLIP_EPS", "0.2", "ppo/loss.py:3")], reads={"ppo/loss.py": {"torch"}})
    result = run(index, name="clip_range", expect=0.2)
    assert result.status is Status.missing and "dead code" in result.message
    assert where(result, "dead") == ["ppo/loss.py:3"]


def test_stub_binding_is_stub():
    index = make_index(
        [bind("default", "val_fraction", "0.1", "data.py:17", path="split.val_fraction", scope="split", owner="split")],
        definitions=[definition("split", "data.py:17", stub="not-implemented")],
    )
    result = run(index, name="val_size", expect=0.1)
    assert (result.status, result.score) == (Status.stub, 0.0)
    assert where(result, "stub") == ["data.py:17"]


def test_unresolvable_expression_is_unverified():
    index = make_index([bind("assign", "lr", "schedule(step)", "train.py:9", scope="main")],
                       reads={"train.py": {"lr"}})
    result = run(index, name="lr", expect=3e-4)
    assert result.status is Status.unverified and result.score is None
    assert "schedule" in result.message and where(result, "effective") == ["train.py:9"]


def test_left_at_library_default_scores_a_quarter():
    index = make_index(calls=[call("torch.optim.AdamW", "train.py:27", ("params",), {"lr": "1e-3"})])
    result = run(index, name="weight_decay", expect=0.05)
    assert (result.status, result.score) == (Status.partial, 0.25)
    assert where(result, "library-default") == ["train.py:27"]
    assert "torch.optim.AdamW default" in result.message


def test_call_and_arg():
    index = make_index(
        [bind("argparse", "max_grad_norm", "0.5", "train.py:12", path="args.max_grad_norm", scope="parse",
              dest="max_grad_norm")],
        calls=[
            call("nn.utils.clip_grad_norm_", "train.py:80", ("model.parameters()", "args.max_grad_norm"),
                 qualname="torch.nn.utils.clip_grad_norm_", scope="main"),
            call("torch.optim.Adam", "train.py:60", ("params",), {"lr": "3e-4"}, scope="main"),
            call("torch.optim.SGD", "tests/test_opt.py:5", ("params",), {"lr": "0.1"}, scope="test_sgd"),
        ],
    )
    result = run(index, call="torch.nn.utils.clip_grad_norm_", arg="max_norm", expect=0.5)
    assert (result.status, result.score) == (Status.pass_, 1.0)
    assert where(result, "call") == ["train.py:80"] and where(result, "effective") == ["train.py:12"]
    assert "gets max_norm = 0.5 (argparse default, train.py:12)" in result.message

    result = run(index, call="torch.optim.Adam", arg="eps", expect=1e-5)
    assert (result.status, result.score) == (Status.partial, 0.25)
    assert "omits eps: library default 1e-8" in result.message

    assert run(index, call="torch.optim.RMSprop", arg="lr", expect=1e-3).status is Status.missing
    result = run(index, call="torch.optim.SGD", arg="lr", expect=0.1)
    assert result.status is Status.missing and "only from tests" in result.message


def test_call_in_a_stub_function_is_stub():
    index = make_index(
        calls=[call("torch.optim.Adam", "train.py:5", ("params",), {"lr": "3e-4"}, scope="build_optimizer")],
        definitions=[definition("build_optimizer", "train.py:4", stub="todo")],
    )
    assert run(index, call="torch.optim.Adam", arg="lr", expect=3e-4).status is Status.stub


def test_aliases_from_the_spec():
    index = make_index([bind("assign", "eps_ratio", "0.2", "ppo.py:2")], reads={"ppo.py": {"eps_ratio"}})
    assert run(index, name="clip_range", expect=0.2).status is Status.missing
    assert run(index, aliases={"clip_range": ["eps_ratio"]}, name="clip_range", expect=0.2).status is Status.pass_


def test_several_values_at_one_level_pick_the_closest_and_say_so():
    index = make_index([
        bind("config", "lr", "0.1", "configs/cifar.yaml:3", path="optim.lr"),
        bind("config", "lr", "0.4", "configs/imagenet.yaml:3", path="optim.lr"),
    ])
    result = run(index, name="lr", expect=0.4)
    assert result.status is Status.pass_ and where(result, "effective") == ["configs/imagenet.yaml:3"]
    assert "other values at the same precedence: 0.1" in result.message


def test_results_are_deterministic():
    index = make_index([
        bind("config", "lr", "0.1", "b.yaml:3", path="lr"),
        bind("config", "lr", "0.2", "a.yaml:3", path="lr"),
        bind("comment", "lr", "0.3", "c.py:1", value=0.3),
    ], roles={"c.py": FileRole.code})
    first = run(index, name="lr", expect=0.15)
    second = run(make_index([
        bind("comment", "lr", "0.3", "c.py:1", value=0.3),
        bind("config", "lr", "0.2", "a.yaml:3", path="lr"),
        bind("config", "lr", "0.1", "b.yaml:3", path="lr"),
    ]), name="lr", expect=0.15)
    assert first == second


def test_call_arg_reports_the_launch_override():
    index = make_index(
        [bind("argparse", "lr", "3e-4", "train.py:31", path="args.lr", scope="parse", dest="lr")],
        calls=[call("optim.Adam", "train.py:60", ("params",), {"lr": "args.lr"}, qualname="torch.optim.Adam",
                    scope="main")],
        launches=[launch("train.py", "scripts/train.sh:4", {"lr": "1e-4"})],
    )
    result = run(index, call="torch.optim.Adam", arg="lr", expect=3e-4)
    assert (result.status, result.score) == (Status.partial, 0.75)
    assert result.message.startswith(
        "optim.Adam at train.py:60 gets lr = 1e-4 (scripts/train.sh:4 --lr 1e-4 overrides train.py:31 default=3e-4)"
    )
    assert where(result, "call") == ["train.py:60"]
    assert where(result, "effective") == ["scripts/train.sh:4"] and where(result, "overridden") == ["train.py:31"]

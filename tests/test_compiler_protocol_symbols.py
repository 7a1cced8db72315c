"""D3 metric and size phrases the compiler types without guessing: a paper's own symbol metric the claim
defines ("control objective J"), "MSE excluding initial conditions", a bare square size "at 256×256", and the
phrases that must not become checks (a dataset after "accuracy on ... and", "metrics are reported", a derived
count "2K+1=33")."""

from __future__ import annotations

from pathlib import Path

from verifier.compiler import compile_claim
from verifier.compiler.protocol_claims import metric_symbol, skips_initial
from verifier.engine import run_repo
from verifier.spec.model import SAU


def compiled(claim: str, dimension: str = "D3"):
    return compile_claim(SAU(id="s-D3-001", dimension=dimension, claim=claim), {})


def dumps(result) -> list[dict]:
    return [c.model_dump(by_alias=True, exclude_none=True, exclude_defaults=True) for c in result.checks]


def outcomes(result) -> list[tuple[str, str]]:
    return [(f.outcome, f.reason.split(":")[0]) for f in result.fragments]


# ----- a symbol metric the claim defines ----------------------------------------------------------------------
def test_symbol_metric_defined_by_the_claim_is_checked():
    result = compiled("Steer the pendulum with the tracking objective J over 20 test episodes. Metric: J (mean +/- std).")
    assert {"rule": "metric", "expect": "J"} in dumps(result)
    assert result.fragments[-1].outcome == "typed" and result.fragments[-1].text.startswith("Metric: J")


def test_symbol_named_by_its_defining_words_is_the_symbol():
    assert dumps(compiled("Metrics: control objective J.")) == [{"rule": "metric", "expect": "J"}]
    assert metric_symbol("tracking cost J", "") == "J" and metric_symbol("J", "J = 4, K = 2") is None
    assert metric_symbol("J", "objective J = mean squared tracking error") == "J"
    assert metric_symbol("J", "Metric: J") is None  # the claim never says what J is: left to the judge


def test_undefined_symbol_metric_stays_with_the_judge():
    result = compiled("Compare A-Net vs PID and SAC on the cart task. Metric: J.")
    assert not [c for c in dumps(result) if c.get("rule") == "metric"]
    assert outcomes(result)[-1] == ("leftover", "no value, name, formula or sequence the compiler can type")


# ----- excluding the initial condition -------------------------------------------------------------------
def test_metric_excluding_the_initial_condition_is_a_rule_parameter():
    result = compiled("Metric: MSE excluding the initial condition.")
    assert {"rule": "metric", "expect": "MSE", "skip_initial": True} in dumps(result)
    assert result.coverage == "full"
    assert skips_initial("excluding initial conditions") and skips_initial("except the first frame")
    assert not skips_initial("on state sequences excluding initial conditions")  # says more: unchecked


def test_longer_qualifier_stays_unchecked():
    result = compiled("Metric: MSE on velocity fields excluding initial conditions.")
    assert not [c for c in dumps(result) if c.get("skip_initial")]
    assert outcomes(result)[-1][1].startswith("the metric is typed, not its qualifier")


# ----- what must not become a check -------------------------------------------------------------------------
def test_dataset_after_a_metric_qualifier_is_not_a_metric():
    result = compiled("Comparison metric: accuracy on SVHN and CIFAR-10.")
    assert [c for c in dumps(result) if c.get("rule") == "metric"] == [{"rule": "metric", "expect": "accuracy"}]


def test_what_is_said_of_the_metrics_is_not_a_metric():
    result = compiled("Both metrics are computed for every held-out split.")
    assert not [c for c in dumps(result) if c.get("rule") == "metric"]
    result = compiled("Training data and evaluation metrics are identical across all variants.")
    assert not [c for c in dumps(result) if c.get("rule") == "metric"]


def test_derived_count_is_not_a_setting():
    result = compiled("Each zone has its own damping, plus a global offset -- yielding 2K+1=33 total terms.")
    assert dumps(result) == []
    assert result.fragments[-1].outcome == "leftover" and "derived count" in result.fragments[-1].reason


# ----- a bare square size -----------------------------------------------------------------------------------
def test_square_size_after_at_is_the_image_size_of_frames():
    result = compiled("Measure wall-clock time for generating 64 frames at 512×512 on one GPU.")
    assert {"name": "image_size", "expect": [512, 512]} in dumps(result)
    assert result.leftover == []


def test_grid_or_non_square_size_after_at_names_nothing():
    result = compiled("Burgers equation: evaluate at 128x128 after training at 64x64.")
    assert not [c for c in dumps(result) if c.get("name") in ("image_size", "resolution")]
    result = compiled("Generate 16 frames at 320×512.")
    assert not [c for c in dumps(result) if c.get("name") == "image_size"]


# ----- end to end -----------------------------------------------------------------------------------------
SPEC = '''\
version: 1
paper: {id: ctl, title: Control}
saus:
  - id: ctl-D3-001
    dimension: D3
    claim: "Cart control: minimise the control objective J = final tracking error plus control energy. Metric: J."
  - id: ctl-D3-002
    dimension: D3
    claim: "Cart simulation. Metric: MSE excluding the initial condition."
'''

EVAL = '''\
import torch


def objective(u, target, f, wf=0.01):
    err = ((u[:, -1] - target[:, -1]) ** 2).mean(-1)
    energy = (f ** 2).sum((-1, -2))
    total_J = err + wf * energy
    return total_J


def mse_deviation(a, b):
    return ((a - b) ** 2).mean((-1, -2))


def evaluate(u, target, f):
    sim_mse = mse_deviation(u[:, 1:], target[:, 1:])
    return objective(u, target, f), sim_mse


if __name__ == "__main__":
    x = torch.zeros(2, 5, 3)
    print(evaluate(x, x, x))
'''


def _repo(root: Path, code: str) -> Path:
    root.mkdir(parents=True)
    (root / "evaluate.py").write_text(code, encoding="utf-8")
    (root / "sau.yaml").write_text(SPEC, encoding="utf-8")
    return root


def test_end_to_end_faithful_repo_passes_both(tmp_path):
    j, mse = run_repo(_repo(tmp_path / "faithful", EVAL), use_cache=False).verdicts
    assert (j.status.value, j.score) == ("pass", 1.0)
    assert ("evaluate.py", 7) in {(e.file, e.line) for e in j.evidence}  # total_J = err + wf * energy
    assert (mse.status.value, mse.score) == ("pass", 1.0)
    assert ("evaluate.py", 16) in {(e.file, e.line) for e in mse.evidence}  # mse_deviation(u[:, 1:], ...)


def test_end_to_end_drifted_repo_is_flagged(tmp_path):
    drifted = EVAL.replace("    return total_J\n", "    return err\n").replace(
        "mse_deviation(u[:, 1:], target[:, 1:])", "mse_deviation(u, target)"
    )
    j, mse = run_repo(_repo(tmp_path / "drifted", drifted), use_cache=False).verdicts
    (j_check,) = [r for r in j.checks if r.kind == "protocol"]
    assert (j_check.status.value, j_check.score) == ("missing", 0.0)  # J computed but never reported
    assert mse.status.value == "partial" and mse.score < 1.0
    assert "drop the initial step" in " ".join(r.message for r in mse.checks)


def test_last_item_of_a_comma_cut_number_list_is_not_a_count():
    """"at 0, 1, 2, 3 levels": the commas cut the list into fragments; "3 levels" is its last item, not a
    setting of 3 levels."""
    result = compiled("Measure decoding error at 0, 1, 2, 3 levels of refinement on the held-out split.")
    assert not [c for c in dumps(result) if c.get("name") == "num_levels"]
    assert outcomes(result)[-1] == ("leftover", "number(s) 3 with no parameter name")
    assert {"name": "num_levels", "expect": 3} in dumps(compiled("Use 3 levels of refinement."))


def test_one_setting_varied_at_several_values_is_one_sweep():
    """Three single-value checks of one name would each demand a different value; the claim runs all three."""
    result = compiled(
        "Ablation: vary the assumed noise level of the simulator (0.0, 0.1, 0.2). "
        "Settings: noise_level = 0.0 (clean), noise_level = 0.1 (default), noise_level = 0.2 (harsh)."
    )
    values = [c for c in dumps(result) if c.get("name") == "noise_level"]
    assert values == [{"name": "noise_level", "sweep": [0, 0.1, 0.2]}]
    assert all(f.checks == (0,) for f in result.fragments if f.text.startswith("noise_level"))


def test_values_of_one_name_without_a_varying_cue_stay_apart():
    result = compiled("Settings: noise_level = 0.0 for the clean task, noise_level = 0.2 for the harsh task.")
    assert [c for c in dumps(result) if c.get("name") == "noise_level"] == [
        {"name": "noise_level", "expect": 0}, {"name": "noise_level", "expect": 0.2},
    ]


def test_results_label_points_at_the_paper_not_at_a_setting():
    result = compiled("Evaluate the detector on 12 models. Results: Table 3 for 4 representative models.")
    assert dumps(result) == [{"name": "num_models", "expect": 12}]
    assert result.fragments[-1].outcome == "context" and result.fragments[-1].reason.startswith("reported result")


def test_video_shape_is_frames_and_a_square_size():
    result = compiled("Evaluate text-to-video generation on UCF101 at resolution 16×256×256.")
    assert {"name": "num_frames", "expect": 16} in dumps(result)
    assert {"name": "image_size", "expect": [256, 256]} in dumps(result)
    assert not [c for c in dumps(result) if c.get("expect") == [16, 256, 256]]
    assert result.coverage == "full"
    # a volume grid, not a video: the shape stays whole
    assert {"name": "resolution", "expect": [32, 128, 128]} in dumps(compiled("3D turbulence on a grid of resolution 32×128×128."))

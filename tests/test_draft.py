"""`draft`: a starter spec from a paper's Markdown or LaTeX, deterministic and always valid spec v1."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from click.testing import CliRunner
from judge_server import JudgeServer

from verifier.cli import main
from verifier.draft import draft, propose_with_judge
from verifier.judge.config import JudgeConfig
from verifier.spec.model import Spec

PAPER_MD = """# Tiny PPO

# 3 Method

The clipped objective is

$$
L = \\min ( r _ { t } A _ { t } , \\mathrm { clip } ( r _ { t } , 1 - \\epsilon , 1 + \\epsilon ) A _ { t } )
$$

We first collect rollouts with the current policy, then compute advantages with GAE, then update the policy.

# 4 Experiments

We use a discount factor of 0.99 and we set the learning rate to $3 \\times 10 ^ { - 4 }$.
We train on CIFAR-10 and report FID, averaged over five random seeds.

| Hyperparameter | Value |
|---|---|
| Batch size | 64 |
| Clip range | 0.2 |
| Optimizer | Adam |
| Seed of the universe | 42 |

<table><tr><td></td><td>Small</td><td>Large</td></tr><tr><td>Learning Rate</td><td>1 × 10−4</td><td>2 × 10−3</td></tr><tr><td>Epochs</td><td>10</td><td>10</td></tr></table>

# Algorithm 1 Training loop

1: collect_rollouts(policy)
2: compute_advantages(batch)
3: update_policy(batch)

# References

[1] Someone. Batch size 4096 is not a claim of ours. 2020.
"""

PAPER_TEX = r"""
\section{Setup}
We use $\gamma = 0.95$ for all runs.
\begin{tabular}{ll}
\toprule
Parameter & Value \\
\midrule
Weight decay & 0.01 \\
Dropout & 0.1 \\
\bottomrule
\end{tabular}
\begin{equation}
\hat{x} = \frac{x - \mu}{\sigma}
\end{equation}
\begin{algorithm}
\begin{algorithmic}
\State Normalize the inputs
\State Train the network
\end{algorithmic}
\end{algorithm}
"""


def saus(text: str, name: str) -> list[dict]:
    spec = yaml.safe_load(draft(text, name))
    Spec.model_validate(spec)
    return spec["saus"]


def checks(text: str, name: str, kind: str) -> list[dict]:
    return [s["check"] for s in saus(text, name) if s["check"]["kind"] == kind]


def test_markdown_tables_and_sentences_give_value_checks():
    values = {(c["name"], json.dumps(c["expect"])) for c in checks(PAPER_MD, "tiny-ppo.paper.md", "value")}
    assert ("minibatch_size", "64") in values
    assert ("clip_range", "0.2") in values
    assert ("learning_rate", "0.0001") in values  # HTML table, first column; the other is noted
    assert ("epochs", "10") in values
    assert ("gamma", "0.99") in values
    assert ("learning_rate", "0.0003") in values  # inline LaTeX in a sentence
    assert not any(name == "minibatch_size" and v == "4096" for name, v in values)  # references are skipped
    assert not any(v == "42" for _, v in values)  # unknown row names are never invented


def test_equations_algorithms_and_first_then_passages():
    formulas = checks(PAPER_MD, "tiny-ppo.paper.md", "formula")
    assert formulas and formulas[0]["latex"].startswith(r"L = \min") and formulas[0]["symbols"] == {}
    text = draft(PAPER_MD, "tiny-ppo.paper.md")
    assert "# map the paper symbols to code names: A, L, r, epsilon" in text
    orders = checks(PAPER_MD, "tiny-ppo.paper.md", "order")
    steps = [o["steps"] for o in orders]
    # the algorithm block and the "first ... then" sentence name the same steps: one SAU, not two
    assert steps == [["collect_rollouts", "compute_advantages", "update_policy"]]
    sources = [s["source"] for s in saus(PAPER_MD, "tiny-ppo.paper.md") if s["check"]["kind"] == "order"]
    assert sources == ["3 Method"]


def test_protocol_mentions_with_their_source_section():
    items = saus(PAPER_MD, "tiny-ppo.paper.md")
    protocol = {(s["check"]["rule"], json.dumps(s["check"].get("expect"))): s["source"] for s in items if s["check"]["kind"] == "protocol"}
    assert protocol[("dataset", '"CIFAR10"')] == "4 Experiments"
    assert protocol[("metric", '"FID"')] == "4 Experiments"
    assert protocol[("seeds", "5")] == "4 Experiments"


def test_latex_paper():
    values = {(c["name"], c["expect"]) for c in checks(PAPER_TEX, "paper.tex", "value")}
    assert {("weight_decay", 0.01), ("dropout", 0.1), ("gamma", 0.95)} <= values
    assert checks(PAPER_TEX, "paper.tex", "formula")[0]["latex"].startswith(r"\hat{x} = \frac")
    assert checks(PAPER_TEX, "paper.tex", "order")[0]["steps"] == ["normalize_inputs", "train_network"]


def test_ids_are_sequential_and_output_deterministic():
    first = draft(PAPER_MD, "tiny-ppo.paper.md")
    assert first == draft(PAPER_MD, "tiny-ppo.paper.md")
    ids = [s["id"] for s in yaml.safe_load(first)["saus"]]
    assert ids[0] == "tiny-ppo-D1-001" and len(ids) == len(set(ids))


def test_empty_paper_is_a_valid_empty_spec():
    spec = yaml.safe_load(draft("", "empty.md"))
    assert spec["saus"] == [] and Spec.model_validate(spec)


def test_draft_command(tmp_path):
    paper = tmp_path / "paper.md"
    paper.write_text(PAPER_MD)
    result = CliRunner().invoke(main, ["draft", str(paper)])
    assert result.exit_code == 0 and result.output == draft(PAPER_MD, "paper.md")
    missing = CliRunner().invoke(main, ["draft", str(tmp_path / "nope.md")])
    assert missing.exit_code == 2


def test_judge_may_propose_more_claims_marked_as_such():
    def propose(body):
        return {"claims": [{"dimension": "D2", "claim": "Advantages are normalised per batch.", "source": "3 Method"}]}

    with JudgeServer(propose) as server:
        config = JudgeConfig(model="test-model", base_url=server.url, backoff=0.01)
        text = propose_with_judge(draft(PAPER_MD, "tiny-ppo.paper.md"), PAPER_MD, config)
        sent = server.requests[0]["messages"][-1]["content"]
    assert "# proposed_by: judge (test-model)" in text
    spec = yaml.safe_load(text)
    Spec.model_validate(spec)
    assert spec["saus"][-1]["claim"] == "Advantages are normalised per batch."
    assert "BEGIN-PAPER" in sent and "END-PAPER" in sent


SABENCH = Path(__file__).resolve().parents[2] / "shared" / "sabench-dev"


@pytest.mark.parametrize("name", ["lora-sb", "neural-operator-flow-matching-pde"])
def test_real_papers_draft_into_valid_specs(name):
    paper = SABENCH / f"{name}.paper.md"
    if not paper.is_file():
        pytest.skip("SA-Bench dev split not present")
    spec = yaml.safe_load(draft(paper.read_text(), paper.name))
    Spec.model_validate(spec)
    assert any(s["check"]["kind"] == "value" for s in spec["saus"])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(["# 2 Setup\n", "| Batch size | 64 |\n", "$$ x = y $$", "\\begin{tabular}", " & ", "\\\\", "<table><tr><td>lr</td><td>1e-4", "</td></tr></table>", "We first a, then b.", "CIFAR-10", " 3 seeds", "\n"]), max_size=25))
def test_any_paper_text_drafts_a_valid_spec(parts):
    spec = yaml.safe_load(draft("".join(parts), "fuzz.md"))
    Spec.model_validate(spec)


def test_prose_patterns_and_merged_cells_become_values():
    from verifier.draft.draft import _capitalised_pairs, _sentence_values

    assert _sentence_values("The learning rate is tuned from [1e-3, 1e-2] and weight decay from [1e-4, 1e-3].") == [
        ("learning_rate", [0.001, 0.01]),
        ("weight_decay", [0.0001, 0.001]),
    ]
    assert set(_sentence_values("We set a small learning rate as 3e-5 and weight decay as 5e-3.")) == {
        ("learning_rate", 3e-05),
        ("weight_decay", 0.005),
    }
    assert ("max_new_tokens", 512) in _sentence_values("We set the output tokens to 512 for every response.")
    assert ("num_prompts", 200) in _sentence_values("We sample 200 prompts per category.")
    merged = _sentence_values("Adapter Scale Factor:[0.01, 0.1, 1, 10]Adapter Bottleneck: [4, 8, 16, 32]")
    assert ("scale_factor", [0.01, 0.1, 1, 10]) in merged and ("latent_dim", [4, 8, 16, 32]) in merged
    assert _sentence_values("It ran in 2021 on 3 machines.") == []  # a number near a word is not a setting
    pairs = _capitalised_pairs(["Initial dimension Downsampling layers Kernel size", "128 4 3"])
    assert [(name, value) for _, name, value, _ in pairs] == [("initial_dimension", 128), ("downsampling_layers", 4), ("kernel_size", 3)]
    assert _capitalised_pairs(["Initial dimension Downsampling layers", "128 4 3"]) == []  # counts disagree: no guess


def test_merged_pdf_table_rows_give_only_named_values():
    paper = (
        "# Appendix\n\n<table><tr><td>Hyperparameter name</td><td>Value</td></tr>"
        "<tr><td colspan=\"3\">Learning rate 1e-4 Training steps 190000</td></tr>"
        "<tr><td>Optimizer</td><td>16 Adam</td></tr>"
        "<tr><td>Training batch size</td><td>100 Adam</td></tr>"
        "<tr><td>Learning rate of w updating</td><td>0.1</td></tr>"
        "<tr><td>Seed of the universe</td><td>42</td></tr>"
        "<tr><td>Number of modes to keep in Fourier Layer Width of the FNO</td><td>16 64 3</td></tr>"
        "</table>\n"
    )
    values = {(c["name"], json.dumps(c["expect"])) for c in checks(paper, "p.md", "value")}
    assert ("learning_rate", "0.0001") in values and ("num_steps", "190000") in values  # one merged cell
    assert ("minibatch_size", "100") in values  # the next row's word spilled into the value cell
    assert ("learning_rate", "0.1") in values  # a known phrase qualified by "of ..."
    assert not any(name == "optimizer" for name, _ in values)  # "16" is not an optimizer
    assert not any(v in ("42", "64", "3") for _, v in values)  # unknown names, or a pairing that would shift


def test_numbers_broken_across_lines_and_hyphenated_counts():
    paper = "# Setup\n\nA remote sensing dataset with 25.\n2K training samples across 45 classes. We generate a 49-frame video.\n"
    values = {(c["name"], json.dumps(c["expect"])) for c in checks(paper, "p.md", "value")}
    assert ("num_classes", "45") in values and ("num_frames", "49") in values


def test_symbol_columns_of_a_settings_table_but_not_of_a_results_table():
    paper = (
        "# Setup\n\n| Case | α | γ | M |\n|---|---|---|---|\n| ODE 1 | [1, 3] | [0, 1] | 10 |\n| ODE 2 | [0.02, 0.06] | [20, 60] | 5 |\n\n"
        "# Results\n\n| Model | α | γ |\n|---|---|---|\n| FNO | 0.642 | 0.804 |\n| SC-FNO | 0.954 | 0.925 |\n"
    )
    values = {(c["name"], json.dumps(c["expect"])) for c in checks(paper, "p.md", "value")}
    assert {("alpha", "[1, 3]"), ("alpha", "[0.02, 0.06]"), ("gamma", "[20, 60]"), ("M", "10"), ("M", "5")} <= values
    assert not any(v in ("0.642", "0.954", "0.804") for _, v in values)  # per-model results are not settings


def drafted_values(text: str, name: str) -> list[tuple[str, str, object]]:
    """(source section, name, expect or sweep) of every drafted value check, in output order."""
    return [(s["source"], s["check"]["name"], s["check"].get("expect", s["check"].get("sweep")))
            for s in saus(text, name) if s["check"]["kind"] == "value"]


PROSE_MD = r"""# 1 Introduction

Our method has two key designs: a sparse router and a dense head.

# 2 Training

The encoder is optimised with AdamW using $\beta _ { 1 } = 0 . 9$ and $\beta _ { 2 } = 0 . 9 8$ for $2 0 0 \mathrm { k }$ steps, with $1 0 \%$ of linear warm up.
The time step is $d t = 0 . 0 2$ and the entropy bonus is $\beta = 5 \mathrm { e } { - 4 }$ .
The horizon is $H = 2 + 3 k = 1 4$ . The loss sums over $\sum _ { i = 1 } ^ { n }$ samples for $j = 1 , \dots , m$ .
Tiny, Base and Huge have 128, 256, and 512 as the hidden dimensions, respectively.
We use learning rates of 1e-3 and 3e-4 for the small and the large model, respectively.
They reach accuracies of 81.5 and 84.0 on the two benchmarks, respectively.
The student uses 64 as the hidden size, while the teacher uses 96.
The decoder has two layers and four heads.

# 3 Adapters

We insert LoRA adapters into every projection, training with ranks $r = \{ 4 , 8 , 1 6 \}$ .
"""


def test_prose_inline_math_respectively_lists_and_number_words():
    assert drafted_values(PROSE_MD, "p.md") == [
        # converter-spaced inline math: Adam's beta1/beta2, "2 0 0 k" steps, "1 e - 3", "d t", "% of linear warm up"
        ("2 Training", "beta1", 0.9),
        ("2 Training", "beta2", 0.98),
        ("2 Training", "num_steps", 200000),
        ("2 Training", "warmup_ratio", 0.1),
        ("2 Training", "dt", 0.02),
        ("2 Training", "ent_coef", 0.0005),  # "the entropy bonus is β = 5e-4": the phrase names the symbol
        ("2 Training", "rollout_steps", 14),  # "the horizon is H = 2 + 3k = 14": named as "horizon 14" is; the result, not its leading 2
        # one value per model, each a separate SAU
        ("2 Training", "hidden_size", 128),
        ("2 Training", "hidden_size", 256),
        ("2 Training", "hidden_size", 512),
        ("2 Training", "learning_rate", 0.001),
        ("2 Training", "learning_rate", 0.0003),
        ("2 Training", "hidden_size", 64),
        ("2 Training", "hidden_size", 96),  # "..., while the teacher uses 96"
        ("2 Training", "num_layers", 2),  # number words before a plural the lexicon knows
        ("2 Training", "num_heads", 4),
        ("3 Adapters", "lora_rank", [4, 8, 16]),  # "ranks r = {...}" named in the singular, in LoRA context
    ]
    # per-benchmark accuracies are results, "two key designs" is prose: neither is drafted


TABLES_MD = """# B Baseline settings

<table><tr><td>Hyperparameter name</td><td>Value</td></tr><tr><td>Spectral basis Number of Chebyshev modes</td><td>chebyshev 24</td></tr><tr><td>Size of replay buffer</td><td>5 × 105</td></tr><tr><td>Number of layers of critic networks</td><td>3</td></tr><tr><td>Number of modes to keep in Spectral Block Width of the net</td><td>16 32 2</td></tr></table>

# C Ablation

Table 9: Effect of the adapter rank.

<table><tr><td rowspan="2">Rank</td><td colspan="2">Model A</td></tr><tr><td>Task 1</td><td>Task 2</td></tr><tr><td>2</td><td>61.0</td><td>40.2</td></tr><tr><td>4</td><td>63.5</td><td>41.7</td></tr><tr><td>8</td><td>64.1</td><td>42.0</td></tr></table>

| Method | Accuracy |
|---|---|
| Ours | 91.2 |
| Baseline | 88.4 |
| Other | 87.9 |
"""


def test_merged_table_names_measures_and_ablation_sweeps():
    assert drafted_values(TABLES_MD, "p.md") == [
        # a proper noun after "of" stays inside its name, so the two names pair with the two values
        ("B Baseline settings", "spectral_basis", "chebyshev"),
        ("B Baseline settings", "number_of_chebyshev_modes", 24),
        ("B Baseline settings", "replay_buffer_size", 500000),  # "Size of replay buffer"
        ("B Baseline settings", "num_layers", 3),  # a counted noun qualified by "of ..."
        # "Number of modes to keep in Spectral Block Width of the net" is one phrase for three values: no guess
        ("C Ablation", "lora_rank", [2, 4, 8]),  # the ablation's first column; the results table gives nothing
    ]
    text = draft(TABLES_MD, "p.md")
    assert "# the values an ablation table tries: keep it if the repository runs that sweep" in text


LATEX_TABLE = r"""\section{Experimental setup}
\begin{table}[t]
\caption{Training hyperparameters.}
\begin{tabular}{@{}lcc@{}}
\toprule
\textbf{Hyperparameter} & \textbf{Small} & \textbf{Large} \\
\midrule
Learning rate & $3 \times 10^{-4}$ & $1\mathrm{e}{-4}$ \\ % tuned on the dev split
Batch size & 256 & 1{,}024 \\
Warmup steps & \num{2000} & 4k \\
\multicolumn{1}{l}{Dropout} & 0.1 & 0.1 \\
\bottomrule
\end{tabular}
\end{table}
\subsection{Optimiser}
We use AdamW with \(\beta_1 = 0.9\) and \(\beta_2 = 0.95\).
"""


def test_latex_tables_with_nested_column_spec_macros_and_math_cells():
    assert drafted_values(LATEX_TABLE, "paper.tex") == [
        ("Experimental setup", "learning_rate", 0.0003),
        ("Experimental setup", "learning_rate", 0.0001),
        ("Experimental setup", "minibatch_size", 256),
        ("Experimental setup", "minibatch_size", 1024),
        ("Experimental setup", "warmup_steps", 2000),
        ("Experimental setup", "warmup_steps", 4000),
        ("Experimental setup", "dropout", 0.1),
        ("Optimiser", "beta1", 0.9),  # \( ... \) inline math
        ("Optimiser", "beta2", 0.95),
    ]
    claims = [s["claim"] for s in saus(LATEX_TABLE, "paper.tex")]
    assert "Learning rate = 0.0001 (another setting)" in claims


def test_new_mechanisms_are_deterministic_across_processes(tmp_path):
    """Byte-identical YAML under another hash seed (set iteration order must not leak into the output)."""
    import os
    import subprocess
    import sys

    for text, name in ((PROSE_MD, "p.md"), (TABLES_MD, "t.md"), (LATEX_TABLE, "paper.tex")):
        paper = tmp_path / name
        paper.write_text(text)
        env = {**os.environ, "PYTHONHASHSEED": "12345"}
        out = subprocess.run([sys.executable, "-m", "verifier.cli", "draft", str(paper)], capture_output=True, env=env, check=True)
        assert out.stdout.decode() == draft(text, name)


def test_values_in_parentheses_measures_and_unicode_symbols():
    paper = (
        "# 4 Setup\n\nDropout (p = 0.1) follows every block and the discount factor (γ = 0.97) is fixed.\n"
        "Transitions go to a replay buffer of size 10^5. The temperature τ is set to 0.05.\n"
        "A crowd of size 40 watched the demo.\n"
    )
    assert drafted_values(paper, "p.md") == [
        ("4 Setup", "dropout", 0.1),
        ("4 Setup", "gamma", 0.97),
        ("4 Setup", "replay_buffer_size", 100000),
        ("4 Setup", "temperature", 0.05),
    ]  # "crowd of size 40" names no parameter the lexicon knows


def test_ranges_and_equal_parameters_are_drafted_as_within_and_same_as():
    text = (
        "# Method\n\nWe use LoRA with rank r = 16; alpha = r for every task.\n\n"
        "## Sampling\n\nWe set the AR steps to 6-7 and the guidance scale to 7.5.\n\n"
        "| Hyperparameter | Value |\n|---|---|\n| warmup steps | 500-1000 |\n| learning rate | 2e-4 |\n"
    )
    drafted = {s["check"]["name"]: (s["claim"], {k: v for k, v in s["check"].items() if k not in ("kind", "name")})
               for s in saus(text, "ranges.md") if s["check"]["kind"] == "value"}
    assert drafted["warmup_steps"] == ("warmup steps between 500 and 1000", {"within": [500, 1000]})
    assert drafted["num_ar_steps"][1] == {"within": [6, 7]}  # never the first end alone (expect: 6)
    assert drafted["lora_alpha"][1] == {"same_as": "lora_rank"}
    assert drafted["learning_rate"][1] == {"expect": 0.0002}

"""Settings a part owns or a schedule shapes, read under their own names instead of the model's: a described
part's width after its depth, one input's embedding width, a global batch, a μP base width, an ε-greedy
schedule's ends and length, an evaluation ε, a role's η, a fractional T, hard negatives, bootstrap resamples, and
framework spellings of the same layer or optimizer (optax, Flax, JAX) as one call check."""

from __future__ import annotations

import pytest

from verifier.compiler import compile_claim
from verifier.spec.model import SAU


def compiled(claim: str, dimension: str = "D1"):
    return compile_claim(SAU(id="s-D1-001", dimension=dimension, claim=claim))


def values(claim: str, dimension: str = "D1") -> list[tuple]:
    return [(c.name, c.expect) for c in compiled(claim, dimension).checks if c.kind == "value"]


@pytest.mark.parametrize(("claim", "expected"), [
    ("a decoder of depth 8 and width 512", [("num_decoder_layers", 8), ("decoder_hidden_size", 512)]),
    ("the predictor is a narrow ViT of depth 12 and width 384", [("predictor_depth", 12), ("predictor_embed_dim", 384)]),
    ("a 24-layer decoder with hidden size 2048 and 16 heads", [("num_layers", 24), ("hidden_size", 2048), ("num_heads", 16)]),
    ("cosine embedding dim 64", [("cosine_embedding_dim", 64)]),
    ("time embedding dimension 128", [("time_embedding_dim", 128)]),
    ("token embedding dim 768", [("hidden_size", 768)]),
    ("node embedding dimension 64", [("hidden_size", 64)]),
    ("mixing network embedding dim 32", [("mixing_hidden_size", 32)]),
    ("each step uses a global batch of 512 sequences of 1,024 tokens", [("global_batch_size", 512), ("max_seq_length", 1024)]),
    ("batches of 32 sequences of 512 tokens", [("minibatch_size", 32), ("max_seq_length", 512)]),
    ("per-layer learning rates follow μP with a base width of 256", [("base_width", 256)]),
    ("plus 7 hard negatives per query", [("num_hard_negatives", 7)]),
    ("significance by paired bootstrap resampling with 1000 samples", [("num_bootstrap_samples", 1000)]),
    ("MC dropout with 20 samples", [("num_samples", 20)]),
    ("each iteration samples 512 prompts with responses of up to 256 new tokens", [("num_prompts", 512), ("max_new_tokens", 256)]),
    ("target sync every 8k steps, train every 4 steps", [("target_update_interval", 8000), ("train_freq", 4)]),
])
def test_owned_and_scheduled_settings(claim, expected):
    assert values(claim) == expected


@pytest.mark.parametrize(("claim", "expected"), [
    ("ε-greedy 1.0 → 0.01 over 250k steps (eval ε 0.001)",
     [("epsilon_start", 1), ("exploration_epsilon", 0.01), ("epsilon_anneal_steps", 250000), ("eval_epsilon", 0.001)]),
    ("epsilon annealed linearly from 1.0 to 0.1 over the first 1M frames",
     [("epsilon_start", 1), ("exploration_epsilon", 0.1), ("epsilon_anneal_steps", 1000000)]),
    ("epsilon-greedy exploration with epsilon 0.1", [("exploration_epsilon", 0.1)]),
])
def test_exploration_schedules(claim, expected):
    assert values(claim) == expected


def test_a_role_eta_and_a_fractional_temperature():
    assert values(r"actor $\eta = 1\times10^{-6}$, critic $\eta = 5\times10^{-6}$") == [
        ("actor_learning_rate", 1e-06), ("critic_learning_rate", 5e-06)]
    sampled = compiled(r"responses of up to $256$ new tokens at $T = 0.7$").checks
    assert [(c.name, c.names, c.expect) for c in sampled] == [("temperature", ["T", "t"], 0.7), ("max_new_tokens", None, 256)]
    assert values("T = 1000 diffusion steps") != [("temperature", 1000)]  # a whole T is a count


def test_a_title_before_a_bar_is_a_heading():
    claim = "Bradley-Terry Win Probability | Given two models i and j: Pr(i preferred over j) = 1 / (1 + exp(-(Q_i - Q_j) / s))"
    result = compiled(claim, "D2")
    assert result.fragments[0].outcome == "context" and "title before '|'" in result.fragments[0].reason
    assert any(c.kind == "formula" for c in result.checks)


def test_a_layer_per_block_is_no_citation():
    result = compiled("modulates features at positions h2, h3 and h9 per Transformer layer")
    assert not any("citation" in f.reason for f in result.fragments)


@pytest.mark.parametrize(("claim", "api", "spellings"), [
    ("Adam at 1e-3", "torch.optim.Adam", {"optax.adam"}),
    ("AdamW, lr 3e-4", "torch.optim.AdamW", {"optax.adamw"}),
    ("GELU activations", "torch.nn.GELU", {"torch.nn.functional.gelu", "flax.linen.gelu", "jax.nn.gelu"}),
    ("ReLU activations", "torch.nn.ReLU", {"torch.nn.functional.relu", "flax.linen.relu"}),
    ("LayerNorm before attention", "torch.nn.LayerNorm", {"flax.linen.LayerNorm"}),
])
def test_framework_spellings_are_one_call_check(claim, api, spellings):
    targets = [c.target for c in compiled(claim, "D2").checks if c.kind == "call"]
    assert len(targets) == 1
    any_of = set(targets[0].split(" | "))
    assert api == targets[0].split(" | ")[0] and spellings <= any_of


@pytest.mark.parametrize(("claim", "expected"), [
    ("SigLIP B/16: batch 32k, 224px, text len 64, 32k SentencePiece vocab, lr 1e-3, wd 1e-4, β2 0.95",
     [("minibatch_size", 32000), ("image_size", 224), ("max_seq_length", 64), ("vocab_size", 32000), ("learning_rate", 0.001),
      ("weight_decay", 0.0001), ("beta2", 0.95)]),
    ("a 50,257-token vocabulary", [("vocab_size", 50257)]),
    ("a hidden state size of 160 and gradients clipped at a norm of 0.01", [("max_grad_norm", 0.01), ("hidden_size", 160)]),
    ("an L2 penalty of 0.01", [("weight_decay", 0.01)]),
    ("30 epochs of which 5 are warm-up", [("epochs", 30), ("warmup_epochs", 5)]),
    ("DreamerV3: replay 1e6, free nats 1.0, train ratio 1024, entropy scale 3e-4",
     [("replay_buffer_size", 1000000), ("free_nats", 1), ("replay_ratio", 1024), ("ent_coef", 0.0003)]),
    ("prioritized replay α 0.6", [("alpha", 0.6)]),  # a replay's α, not its capacity
    ("replay ratio 20", [("replay_ratio", 20)]),
])
def test_recipe_shorthands(claim, expected):
    assert values(claim) == expected


@pytest.mark.parametrize("claim", ["16 px patches", "at 1600 × 1200 px"])
def test_pixels_of_a_patch_or_a_pair_are_no_square_image_size(claim):
    assert ("image_size", 1200) not in values(claim) and ("image_size", 16) not in values(claim)



@pytest.mark.parametrize(("claim", "expected"), [
    ("PySRRegressor(niterations=100, maxsize=25, binary_operators=['+', '-', '*', '/'], model_selection='best', turbo=True, random_state=0)",
     [("niterations", 100), ("maxsize", 25), ("binary_operators", ["+", "-", "*", "/"]), ("model_selection", "best"), ("turbo", True),
      ("seed", 0)]),
    ("Trainer(max_epochs=10, precision=16, devices=4)", [("epochs", 10), ("precision", 16), ("devices", 4)]),  # precision: no metric
    ("ASHAScheduler(max_t=81, grace_period=1, reduction_factor=3)", [("max_t", 81), ("grace_period", 1), ("reduction_factor", 3)]),
])
def test_keyword_arguments_of_a_written_call_are_settings(claim, expected):
    result = compiled(claim)
    assert values(claim) == expected
    assert not [c for c in result.checks if c.kind == "protocol"] and result.coverage == "full"


def test_a_written_call_keeps_its_call_check_and_math_is_no_call():
    conv = compiled("nn.Conv2d(64, 128, kernel_size=3, stride=2)")
    assert [(c.name, c.expect) for c in conv.checks if c.kind == "value"] == [("kernel_size", 3), ("stride", 2)]
    assert [c.target for c in conv.checks if c.kind == "call"] == ["torch.nn.Conv2d"]
    assert values("Shock-tube initialization: Q(x, t=0) = (Q_L, Q_R) with piecewise constant values", "D2") == []


def test_a_value_for_another_case_is_reported_not_dropped():
    result = compiled("dropout 0.3 (0.1 for the high-resource pairs)")
    assert values("dropout 0.3 (0.1 for the high-resource pairs)") == [("dropout", 0.3)]
    assert result.coverage == "partial" and "0.1" in result.fragments[0].reason
    assert values("a one-cycle peak learning rate of 4e-4") == [("learning_rate", 0.0004)]  # the schedule's, not a part's


def test_a_distribution_s_greek_keyword_is_its_own_parameter():
    result = compiled("100 clients with a Dirichlet(α = 0.5) label partition")
    (alpha,) = [c for c in result.checks if c.kind == "value" and c.expect == 0.5]
    assert (alpha.name, alpha.names) == ("dirichlet_alpha", ["alpha", "α"])


@pytest.mark.parametrize(("claim", "expected"), [
    ("4096 tokens per batch, context 128, L1 coeff 5", [("batch_tokens", 4096), ("max_seq_length", 128), ("l1_coefficient", 5)]),
    ("batches of 4,096 tokens", [("batch_tokens", 4096)]),
    ("one new token with a 768-d embedding", [("hidden_size", 768)]),
])
def test_token_batches_contexts_and_widths(claim, expected):
    assert values(claim) == expected


def test_a_spaced_dot_between_operands_is_no_sentence_end():
    """"E_q_i . E_d_j" is a dot product: cutting there dropped E_d_j and checked a wrong formula."""
    result = compiled("ColBERT late interaction: S(q, d) = sum_i max_j E_q_i . E_d_j over the query and document token embeddings", "D2")
    assert "E_d_j" in result.fragments[0].text
    assert not [c for c in result.checks if c.kind == "formula"]  # untranslated (for the judge), not wrong
    assert [f.text for f in compiled("lr is 0.1. Batch size 64.").fragments] == ["lr is 0.1", "Batch size 64"]


def test_sigma_is_the_activation_the_claim_defines():
    claim = (r"GCNII layer: $H^{(\ell+1)} = \sigma\big(((1 - \alpha) \tilde{P} H^{(\ell)} + \alpha H^{(0)})"
             r"((1 - \beta_\ell) I + \beta_\ell W^{(\ell)})\big)$, $\sigma$ = ReLU")
    result = compiled(claim, "D2")
    formulas = [c for c in result.checks if c.kind == "formula"]
    assert len(formulas) == 1 and "ReLU" in formulas[0].latex and "\\sigma" not in formulas[0].latex
    assert [c.target.split(" | ")[0] for c in result.checks if c.kind == "call"] == ["torch.nn.ReLU"]  # not a formula "σ = ReLU"
    plain = compiled(r"Gate: $g = \sigma(W x)$", "D2")
    assert all("sigma" in c.latex for c in plain.checks if c.kind == "formula")  # undefined: the sigmoid, as before


def test_a_symbol_equal_to_a_symbol_is_no_string_setting():
    result = compiled("and y_a = x_a, y_b = x_b * exp(s(x_a)) + t(x_a)", "D2")
    assert not [c for c in result.checks if c.kind == "value"]
    assert values("wavelet=bior2.4, mode=zero") == [("wavelet", "bior2.4"), ("mode", "zero")]


@pytest.mark.parametrize(("claim", "expected"), [
    (r"with d_{clamp} = 10 Å, Z = 10 Å and \epsilon = 10^{-4} Å^2", ("eps", 0.0001)),  # LaTeX outside $...$: 1e-4, not 10
    (r"with \beta = 1000; the teacher network stays frozen", ("beta", 1000)),  # \beta is β, its own symbol
    ("with β = 6", ("beta", 6)),  # "with" names nothing
    (r"with inverse temperature $\beta = 3$", ("inverse_temperature", 3)),  # 1/T, not a temperature
])
def test_latex_and_joiners_before_a_symbol(claim, expected):
    assert expected in values(claim, "D2")


def test_one_api_named_twice_is_one_call_check():
    result = compiled("100 clients with a Dirichlet(α = 0.5) label partition")
    assert [c.target for c in result.checks if c.kind == "call"] == ["dirichlet | torch.distributions.Dirichlet"]


def test_launch_flags_are_settings_under_their_names():
    claim = ("run_qa.py --model_name_or_path roberta-large --max_seq_length 512 --doc_stride 128 "
             "--per_device_train_batch_size 12 --lr_scheduler_type cosine --fp16 --seed 42 --output_dir out/")
    assert values(claim) == [("max_seq_length", 512), ("doc_stride", 128), ("minibatch_size", 12), ("lr_scheduler", "cosine"),
                             ("fp16", True), ("seed", 42)]  # where outputs go or which model path: no setting


def test_a_flag_is_read_by_its_own_words_and_a_path_or_hub_id_is_no_value():
    claim = ("python train.py --input_json data/cocotalk.json --batch_size 10 --percdamp .01 --language_eval 1 "
             "--pretrained_teacher_model stabilityai/sdxl-base --use_8bit_adam")
    # --batch_size beside --language_eval is the training batch; a path or a hub id is which file or model, not True
    assert values(claim) == [("minibatch_size", 10), ("percdamp", 0.01), ("language_eval", 1), ("use_8bit_adam", True)]


@pytest.mark.parametrize(("claim", "expected"), [
    ("Adam starts at 3.5e-5, rises linearly to 3.5e-4 over 10 epochs", ("warmup_epochs", 10)),
    ("reached by a linear warm-up from 0.1× over 4,800 iterations", ("warmup_steps", 4800)),
    ("10 epochs, 1 warmup epoch", ("warmup_epochs", 1)),
    ("SwiGLU MLP hidden 8192", ("ffn_hidden_size", 8192)),
    ("a 9-layer attention decoder over a 24-layer encoder", ("num_decoder_layers", 9)),
    ("a 24-layer decoder with hidden size 2048", ("num_layers", 24)),  # a decoder-only model's own layers
])
def test_warmups_mlp_widths_and_decoder_layers(claim, expected):
    assert expected in values(claim)


def test_names_next_to_a_known_metric_are_metrics_not_datasets():
    claim = ("Tracking is evaluated on the MOT17 and MOT20 test sets, reporting HOTA, MOTA and IDF1, "
             "and on the DanceTrack test set with HOTA, DetA and AssA")
    datasets = [c.expect for c in compiled(claim, "D3").checks if c.kind == "protocol" and c.rule == "dataset"]
    assert "DetA" not in datasets and "AssA" not in datasets and {"MOT17", "MOT20"} <= set(datasets)


@pytest.mark.parametrize(("claim", "expected"), [
    ("3T tokens of Dolma", [("train_tokens", 3_000_000_000_000)]),
    ("trained on 1.5T tokens", [("train_tokens", 1_500_000_000_000)]),
    ("8B tokens", [("train_tokens", 8_000_000_000)]),
    ("ctx 4096", [("max_seq_length", 4096)]),
    ("4096 tokens per batch", [("batch_tokens", 4096)]),
])
def test_token_budgets_and_contexts(claim, expected):
    assert values(claim) == expected


def test_a_capital_t_is_trillions_only_of_tokens():
    assert values("a 3T MRI scanner") == []


@pytest.mark.parametrize(("claim", "expected"), [
    ("its observations stack the last 32 frames", [("frame_stack", 32)]),
    ("4 frames are stacked", [("frame_stack", 4)]),
])
def test_stacked_frames(claim, expected):
    assert values(claim) == expected


def test_diffusers_launch_flags_are_the_lexicon_s_parameters():
    from verifier.compiler import terms

    index = terms.lexicon_index()
    assert (index["max_train_steps"], index["checkpointing_steps"], index["proportion_empty_prompts"]) == (
        "num_steps", "save_interval", "cond_drop_prob")


def test_an_operation_s_keywords_are_no_settings_and_an_l1_norm_is_a_sum_of_absolutes():
    assert values("coarse matches from softmax(S, dim=1) * softmax(S, dim=0)", "D2") == []
    assert values("Trainer(max_epochs=10)") == [("epochs", 10)]
    (formula,) = [c for c in compiled("loss = ||x - y||_1 + 0.1 ||z||^2", "D2").checks if c.kind == "formula"]
    assert formula.expect == "sum(abs(x - y)) + 0.1 * norm(z)**2"


def test_another_quantity_s_warmup_is_not_the_learning_rate_s():
    claim = r"The DINO teacher temperature $\tau_t$ is warmed up linearly from 0.04 to 0.07 over the first 30 epochs"
    assert ("warmup_epochs", 30) not in values(claim)


def test_a_written_out_mapping_is_its_settings_and_a_call_s_nested_config_too():
    claim = ("ProdLDA: {numTopics: 50, hiddenSizes: [100, 100], dropoutRate: 0.2, learnPriors: true, batchSize: 64, "
             "learningRate: 2e-3}; MambaConfig(d_model=1024, ssm_cfg={'d_state': 16, 'expand': 2})")
    assert values(claim) == [("num_topics", 50), ("hidden_sizes", [100, 100]), ("dropout", 0.2), ("learn_priors", True),
                             ("minibatch_size", 64), ("learning_rate", 0.002), ("hidden_size", 1024), ("d_state", 16),
                             ("expand", 2)]
    # one `key: value` in braces is a set-builder or a glossary, no config
    assert values(r"threshold λ̂ = inf{λ: risk(λ) <= 0.1}", "D2") == []


def test_config_overrides_and_a_hyphenated_warm_up_modifier():
    claim = "MODEL.ONE_FORMER.DEC_LAYERS 10, SOLVER.BASE_LR 0.0001, SOLVER.IMS_PER_BATCH 16, INPUT.MIN_SIZE_TRAIN (640, 672)"
    assert values(claim) == [("dec_layers", 10), ("learning_rate", 0.0001), ("global_batch_size", 16),
                             ("min_size_train", [640, 672])]
    assert values("with 10,000 linear warm-up steps") == [("warmup_steps", 10000)]


@pytest.mark.parametrize(("claim", "expected"), [
    ("crops of 224² px", [("image_size", [224, 224])]),
    (r"images of $256^2$ pixels", [("image_size", [256, 256])]),
    ("crops of 224 × 224 px", [("image_size", [224, 224])]),
    ("16 px patches", [("patch_size", 16)]),  # a patch's size, no count of patches
])
def test_sizes_in_pixels(claim, expected):
    assert values(claim) == expected


def test_a_role_named_crop_has_its_own_size():
    assert ("local_image_size", [98, 98]) in values("8 local crops of 98² px")

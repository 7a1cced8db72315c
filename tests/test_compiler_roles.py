"""A value said of one part ("server learning rate", "local epochs", "an 8-layer mapping network", "10 pruning
steps") is that part's own setting. Compiled under the main parameter's name it would be compared with the
main optimizer's lr, the model's depth, the run's steps: a wrong verdict on a faithful repo. It gets a name of
its own, with the spellings code uses for it, binds only those, and is left undecided when none is there."""

from __future__ import annotations

import pytest

from compiler_helpers import verdict_of
from verifier.compiler import compile_claim
from verifier.spec.model import SAU


def checks(claim: str, dimension: str = "D1") -> list[tuple]:
    result = compile_claim(SAU(id="r-D1-001", dimension=dimension, claim=claim))
    return [(c.name, tuple(c.names or ()), c.expect) for c in result.checks if c.kind == "value"]


@pytest.mark.parametrize(
    ("claim", "expected"),
    [
        ("server learning rate 1.0", [("server_learning_rate", ("server_lr", "lr_server", "server_lr_init"), 1)]),
        ("local epochs E=5", [("local_epochs", (), 5)]),
        ("5 local epochs", [("local_epochs", (), 5)]),
        ("server momentum 0.9", [("server_momentum", (), 0.9)]),
        ("discriminator lr 4e-4", [("discriminator_learning_rate", ("discriminator_lr", "lr_discriminator", "discriminator_lr_init"), 0.0004)]),
        ("meta-batch size 4", [("meta_minibatch_size", ("meta_batch_size",), 4)]),
        ("student temperature 0.1", [("student_temperature", ("student_temp", "temp_student"), 0.1)]),
        ("head learning rate 1e-3", [("head_learning_rate", ("head_lr", "lr_head", "head_lr_init"), 0.001)]),
    ],
)
def test_a_role_word_before_the_parameter_names_that_part_s_setting(claim, expected):
    assert checks(claim) == expected


@pytest.mark.parametrize(
    ("claim", "expected"),
    [
        ("teacher momentum 0.996", [("ema_decay", (), 0.996)]),  # the context rule reads the role: an EMA decay
        ("inner learning rate 0.01", [("inner_lr", (), 0.01)]),  # the lexicon's own name for the role's lr
        ("60K meta-iterations", [("num_steps", (), 60000)]),  # MAML's outer loop is the training run
        ("head dim 64", [("head_dim", (), 64)]),  # a phrase of its own, matched whole
        ("learning rate 3e-4", [("learning_rate", (), 0.0003)]),
        ("100K training steps", [("num_steps", (), 100000)]),
        # a preposition or a search verb before the lr is no part's name ("over_learning_rate" bound nothing)
        ("grid search over lr in {1e-3, 1e-2}", [("learning_rate", (), None)]),
        ("we sweep across learning rate {1e-4, 3e-4}", [("learning_rate", (), None)]),
        # how the values are tried is no part of the name ("learning_rate_searched_over", "lr_swept_over")
        ("learning rate searched over {0.001, 0.01} by grid search", [("learning_rate", (), None)]),
        ("lr swept over {1e-3, 3e-3}", [("lr", (), None)]),  # as written: a lexicon spelling of learning_rate
        ("dropout chosen from [0.0, 0.1, 0.3] on validation", [("dropout", (), None)]),
    ],
)
def test_known_phrases_and_unqualified_parameters_keep_their_names(claim, expected):
    assert checks(claim) == expected


@pytest.mark.parametrize(
    ("claim", "name"),
    [
        ("an 8-layer mapping network", "num_mapping_layers"),
        ("mapping network with 8 layers", "num_mapping_layers"),
        ("a 2-layer MLP projection head", "num_head_layers"),
        ("the discriminator has 4 layers", "num_discriminator_layers"),
    ],
)
def test_the_layers_of_a_named_part_are_not_the_model_s(claim, name):
    ((got, names, _),) = checks(claim)
    assert got == name
    part = name[len("num_"):-len("_layers")]
    assert names == (f"{part}_num_layers", f"{part}_layers", f"{part}_depth")


@pytest.mark.parametrize("claim", ["a 6-layer Transformer encoder", "12 layers, hidden size 768", "12 transformer layers"])
def test_the_model_s_own_layers_stay_num_layers(claim):
    assert checks(claim)[0][:1] == ("num_layers",)


@pytest.mark.parametrize(
    ("claim", "expected"),
    [
        ("cubic schedule over 10 pruning steps", ("num_pruning_steps", 10)),
        ("5 adaptation steps", ("num_adaptation_steps", 5)),
        ("4 accumulation steps", ("gradient_accumulation_steps", 4)),  # a phrase of its own
        ("18 sampling steps", ("sampling_steps", 18)),  # the context rule reads "sampling"
        ("25 steps per episode", ("max_episode_steps", 25)),
        ("episode length 400", ("max_episode_steps", 400)),
        ("250 iterations per epoch", ("steps_per_epoch", 250)),
        ("1 ppo epoch", ("update_epochs", 1)),
    ],
)
def test_a_count_s_modifier_says_which_count_it_is(claim, expected):
    assert [(n, v) for n, _, v in checks(claim)] == [expected]


def test_epochs_of_a_fixed_number_of_iterations():
    assert [(n, v) for n, _, v in checks("1000 epochs of 250 iterations each, deep supervision at 4 scales")][:2] == [
        ("epochs", 1000), ("steps_per_epoch", 250)]


def test_seeds_with_a_modifier_are_still_the_runs():
    result = compile_claim(SAU(id="r-D3-001", dimension="D3", claim="3 sampling seeds at temperature 0.7"))
    assert [(c.kind, getattr(c, "rule", None), c.expect) for c in result.checks][0] == ("protocol", "seeds", 3)


FEDAVG = """import argparse

parser = argparse.ArgumentParser()
parser.add_argument("--lr", type=float, default=0.01)
parser.add_argument("--server_lr", type=float, default=1.0)
parser.add_argument("--epochs", type=int, default=200)
args = parser.parse_args()
"""


def _verdict(tmp_path, claim: str):
    return verdict_of(tmp_path, {"fedavg.py": FEDAVG}, claim)


def test_a_role_value_binds_the_part_s_own_name_not_the_main_one(tmp_path):
    verdict = _verdict(tmp_path, "server learning rate 1.0")
    assert (verdict.status.value, verdict.score) == ("pass", 1.0)
    assert [(e.file, e.line) for e in verdict.evidence][:1] == [("fedavg.py", 5)]
    (tmp_path / "drifted").mkdir()
    drifted = _verdict(tmp_path / "drifted", "server learning rate 0.1")  # not the main lr's 0.01 either
    assert (drifted.status.value, drifted.score) == ("partial", 0.25)  # a tenth of the stated value
    assert [(e.file, e.line) for e in drifted.evidence][:1] == [("fedavg.py", 5)]


def test_a_role_value_the_code_does_not_name_is_undecided_not_compared_with_the_main_one(tmp_path):
    verdict = _verdict(tmp_path, "local epochs E=5")  # the repo has `epochs = 200`, the global rounds' count
    assert (verdict.status.value, verdict.score) == ("unverified", None)
    assert "a name made from the claim's words" in verdict.checks[0].message


@pytest.mark.parametrize(
    ("claim", "expected"),
    [
        ("mixing-network embedding dimension 32", [("mixing_hidden_size", 32)]),
        ("hypernetwork hidden size 64", [("hypernetwork_hidden_size", 64)]),
        ("value network learning rate 1e-3", [("critic_learning_rate", 0.001)]),  # value_lr: the lexicon's critic lr
        ("policy network lr 3e-4", [("actor_learning_rate", 0.0003)]),
        ("the network hidden size 256", [("hidden_size", 256)]),  # the model itself
        ("rollout batch 512 prompts", [("rollout_minibatch_size", 512)]),
        ("the center momentum m = 0.9", [("center_momentum", 0.9)]),
    ],
)
def test_a_named_network_s_setting_is_its_own(claim, expected):
    assert [(n, v) for n, _, v in checks(claim)] == expected


@pytest.mark.parametrize(
    ("claim", "expected"),
    [
        ("batches of 32 episodes", [("minibatch_size", 32)]),
        ("meta-batch of 4 tasks", [("meta_minibatch_size", 4)]),
        ("at most 200 epochs, stopping after 16 epochs without validation improvement", [("epochs", 200), ("patience", 16)]),
        ("early stopping if no validation improvement for 10 epochs", [("patience", 10)]),
        ("XGBoost with early stopping after 50 rounds without improvement", [("early_stopping_rounds", 50)]),
        ("output stride 16", [("output_stride", 16)]),
        ("retrieve the top-5 passages", [("top_k", 5)]),
        ("top-20 and top-100 retrieval accuracy on the dev sets", []),  # metrics, not how many are retrieved
        # the label's "(35 classes)" has its own number: it does not name the next fragment's
        ("Speech Commands v2 (35 classes): 1 s inputs, 40 MFCCs", []),
    ],
)
def test_settings_with_a_shape_of_their_own(claim, expected):
    assert [(n, v) for n, _, v in checks(claim)] == expected


def test_a_list_of_shots_is_every_run_s_shot():
    result = compile_claim(SAU(id="r-D3-001", dimension="D3", claim="5-way 1-shot and 5-shot accuracy over 600 test episodes"))
    shots = [c for c in result.checks if c.kind == "value" and c.name == "num_shots"]
    assert [list(c.sweep) for c in shots] == [[1, 5]]


def test_a_schedule_of_something_else_than_the_lr_is_that_quantity_s_setting(tmp_path):
    claim = "guidance_weight=120000 with cosine scheduler for guidance intensity during control optimization"
    result = compile_claim(SAU(id="r-D1-001", dimension="D1", claim=claim))
    assert result.coverage == "full"
    assert [(c.kind, getattr(c, "name", None), getattr(c, "expect", None)) for c in result.checks] == [
        ("value", "guidance_scale", 120000), ("value", "guidance_schedule", "cosine")]
    assert not [c for c in result.checks if c.kind == "call"]  # no LR scheduler is claimed
    verdict = verdict_of(tmp_path, {"guide.py": 'guidance_scheduler = "linear"\n'}, "cosine scheduler for guidance intensity")
    assert (verdict.status.value, verdict.score) == ("mismatch", 0.0)
    assert [(e.file, e.line) for e in verdict.evidence][:1] == [("guide.py", 1)]


@pytest.mark.parametrize(("code", "status"), [('boundary_condition = "no_slip"\n', "pass"), ('boundary_condition = "periodic"\n', "mismatch")])
def test_a_hyphenated_boundary_condition_is_a_string_setting(tmp_path, code, status):
    assert checks("fluid-solid coupling with no-slip boundary conditions at obstacles") == [("boundary_condition", (), "no-slip")]
    verdict = verdict_of(tmp_path, {"sim.py": code}, "no-slip boundary conditions at obstacles")
    assert verdict.status.value == status
    assert [(e.file, e.line) for e in verdict.evidence][:1] == [("sim.py", 1)]


def test_a_context_word_renames_only_the_value_it_is_said_of():
    # "before learning" is said of the 25K random steps, not of the run's 10^6 environment steps
    claim = "TD3: batch 256, $10^6$ environment steps with $25\\mathrm{K}$ random steps before learning"
    assert [(n, v) for n, _, v in checks(claim)] == [("minibatch_size", 256), ("num_steps", 1000000), ("learning_starts", 25000)]


def test_a_per_device_batch_makes_the_effective_batch_the_global_one():
    claim = ("Instruction tuning with a cosine schedule peaking at 1e-5 and warmup over the first 5% of steps, an "
             "effective batch size of 128 (8 GPUs × 4 per device × 4 accumulation steps), and packed sequences of 4,096 tokens.")
    assert sorted((n, v) for n, _, v in checks(claim)) == sorted([
        ("learning_rate", 1e-05), ("warmup_ratio", 0.05), ("minibatch_size", 4), ("global_batch_size", 128),
        ("gradient_accumulation_steps", 4), ("max_seq_length", 4096)])
    # a global batch is named so; a repo with no global batch setting is read as its batch_size times its
    # accumulation steps (tests/test_compiler_area_lexicon.py)
    assert checks("global batch size 256") == [("global_batch_size", (), 256)]


@pytest.mark.parametrize(
    ("claim", "expected"),
    [
        ("the student temperature is $\\tau_s = 0.1$", ("student_temperature", 0.1)),
        ("teacher temperature $\\tau_t = 0.04$", ("teacher_temperature", 0.04)),
        ("the learning rate is $\\eta = 0.1$", ("learning_rate", 0.1)),
        ("lambda_VAE=1", ("lambda_vae", 1)),  # a code name, not a subscripted Greek letter
    ],
)
def test_a_phrase_names_the_subscripted_symbol_after_it(claim, expected):
    assert [(n, v) for n, _, v in checks(claim)][:1] == [expected]


def test_an_mae_decoder_is_the_masked_autoencoder_not_the_metric():
    result = compile_claim(SAU(id="r-D1-001", dimension="D1", claim="MAE decoder depth 8, decoder embed dim 512"))
    assert not [c for c in result.checks if c.kind == "protocol"]
    assert [(c.name, c.expect) for c in result.checks] == [("num_decoder_layers", 8), ("decoder_hidden_size", 512)]


@pytest.mark.parametrize(
    ("claim", "expected"),
    [
        ("FFT size 1024, hop length 256, window length 1024, 80 mel bins",
         [("n_fft", 1024), ("hop_length", 256), ("win_length", 1024), ("n_mels", 80)]),
        ("4-bit weights with group size 128", [("quantization_bits", 4), ("group_size", 128)]),
        ("minibatch standard deviation group size 4", []),  # not a quantisation group: left to the judge
        ("Video ViT-B: 224×224 crops, tubelet size 2×16×16, layer-wise lr decay 0.75",
         [("image_size", [224, 224]), ("tubelet_size", [2, 16, 16]), ("layer_decay", 0.75)]),
        ("16×16 patches", [("patch_size", [16, 16])]),
        ("content weight 1, style weight 1e4, total-variation weight 1e-6",
         [("content_weight", 1), ("style_weight", 10000), ("total_variation_weight", 1e-06)]),
        ("mel-loss weight 45 and KL-loss weight 1.0", [("mel_loss_weight", 45), ("kl_loss_weight", 1)]),
        ("auxiliary loss coefficient 0.01", [("auxiliary_loss_coef", 0.01)]),
        ("weight decay 0.05", [("weight_decay", 0.05)]),
        ("with initial weight 0.1", []),
    ],
)
def test_audio_quantisation_video_and_loss_weight_settings(claim, expected):
    assert [(n, v) for n, _, v in checks(claim)] == expected


@pytest.mark.parametrize(
    ("claim", "expected"),
    [
        ("5 PPO epochs with 1 minibatch, clipping 0.2, lr 5e-4 for both actor and critic",
         [("update_epochs", 5), ("num_minibatches", 1), ("clip_range", 0.2), ("actor_learning_rate", 0.0005),
          ("critic_learning_rate", 0.0005)]),
        ("actor/critic learning rates 3e-4", [("actor_learning_rate", 0.0003), ("critic_learning_rate", 0.0003)]),
        ("generator and discriminator lr 2e-4", [("generator_learning_rate", 0.0002), ("discriminator_learning_rate", 0.0002)]),
        ("gradient clipping 1.0", [("max_grad_norm", 1)]),
        ("reward clipping [-1, 1]", [("reward_clip", [-1, 1])]),
    ],
)
def test_one_value_for_two_parts_and_ppo_s_clipping(claim, expected):
    assert [(n, v) for n, _, v in checks(claim)] == expected


def test_a_preposition_is_never_a_code_name_of_a_value():
    (check,) = compile_claim(SAU(id="r-D1-001", dimension="D1", claim="Atari: rewards clipped to [-1, 1]")).checks[:1]
    assert "to" not in check.all_names() and "atari" not in check.all_names()


@pytest.mark.parametrize(
    ("claim", "expected"),
    [
        ("position lr 1.6e-4 → 1.6e-6, opacity lr 0.05",
         [("position_learning_rate", 0.00016), ("position_min_learning_rate", 1.6e-06), ("opacity_learning_rate", 0.05)]),
        ("world-model lr 1e-4, actor lr 3e-5", [("model_learning_rate", 0.0001), ("actor_learning_rate", 3e-05)]),
        ("AdamW lr 1e-3", [("learning_rate", 0.001)]),
        ("peak lr 2.0e-4 -> 2.0e-5", [("learning_rate", 0.0002), ("min_learning_rate", 2e-05)]),
        ("Per-environment learning rates: HalfCheetah 3e-4", [("learning_rate", 0.0003)]),
        ("TiDE Traffic: lookback 720, horizon 96", [("lookback_window", 720), ("prediction_length", 96)]),
        ("PPO: horizon 128", [("rollout_steps", 128)]),
        ("RWSE with 20 random-walk steps", [("num_random_walk_steps", 20)]),
        ("16 kHz audio with a 400-sample Hann window, a 100-sample hop and a 512-point FFT",
         [("win_length", 400), ("sample_rate", 16000), ("hop_length", 100), ("n_fft", 512)]),
        ("three shared hidden layers of 200 ELU units and two outcome heads of two 100-unit layers each",
         [("hidden_size", 200), ("head_hidden_size", 100), ("num_hidden_layers", 3), ("num_outcome_heads", 2)]),
        ("4 EnCodec codebooks at a 50 Hz frame rate (32 kHz audio)",
         [("frame_rate", 50), ("num_codebooks", 4), ("sample_rate", 32000)]),
        ("lr 1e-3 halved when the validation loss plateaus for 3 epochs", [("patience", 3), ("lr_decay_rate", 0.5), ("learning_rate", 0.001)]),
        ("kernel (5, 2) and stride (2, 1)", [("kernel_size", [5, 2]), ("stride", [2, 1])]),
        ("minibatch 32", [("minibatch_size", 32)]),
    ],
)
def test_held_out_4_shapes(claim, expected):
    assert [(n, v) for n, _, v in checks(claim)] == expected


@pytest.mark.parametrize(("name", "claim", "code"), [
    ("s_0", "with $s_0 = 2$", False),  # a paper symbol with a subscript
    ("c_m", "c_m 256 / c_z 128", False),
    ("max_train_steps", "max_train_steps=800", True),  # the repo's own flag
])
def test_a_subscripted_symbol_is_not_a_code_name(name, claim, code):
    from verifier.compiler import terms

    assert terms.written_as_code([name], claim) is code


def test_camel_case_config_keys_are_their_snake_case_names():
    claim = "TiDE Traffic: hiddenSize=256, decoderOutputDim=16, layerNorm=True, minibatches of 64"
    assert [(n, v) for n, _, v in checks(claim)] == [
        ("hidden_size", 256), ("decoder_output_dim", 16), ("layer_norm", True), ("minibatch_size", 64)]


@pytest.mark.parametrize(
    ("claim", "names"),
    [
        ("TD3: policy delay $d = 2$", ("policy_delay", ())),  # the label is a method's name, not a code name
        ("SimPO: β = 2.0", ("beta", ("β",))),
        ("LoRA-XS baseline config: α = 16", ("lora_alpha", ("α",))),
        ("Adam β = 0.9", ("beta1", ("beta", "β"))),  # Adam's first-moment decay, not a KL weight
    ],
)
def test_a_method_or_section_label_is_never_a_code_name(claim, names):
    assert checks(claim)[0][:2] == names


def test_a_latex_claim_s_earlier_words_still_rename_a_symbol():
    # the fragment is read as plain text ("γ = 2"), the claim writes LaTeX: "focal" before it still names it
    claim = "RetinaNet anchors: scales $\\{2^0, 2^{1/3}\\}$; focal loss with $\\alpha = 0.25$, $\\gamma = 2$; anchors"
    assert ("focal_gamma", ("γ",), 2) in checks(claim)


@pytest.mark.parametrize("claim", ["ODE1 discretization: M = 10", "MC dropout: prior length-scale l = 1e-2",
                                   "DDIM inference: eta = 1"])
def test_a_titled_label_adds_no_name(claim):
    ((name, names, _),) = checks(claim)[:1]
    assert not [n for n in (name, *names) if n.startswith(("ode1", "dropout", "ddim_inference"))]


@pytest.mark.parametrize(
    ("claim", "expected"),
    [
        ("DiT-XL/2 @ ImageNet 256: patch 2", [("image_size", 256), ("patch_size", 2)]),
        ("class-conditional generation on ImageNet 64x64", [("image_size", 64)]),
        ("Per-dataset batch sizes: Adult 256, Higgs 1024", [("minibatch_size", 256), ("minibatch_size", 1024)]),  # no image claim
    ],
)
def test_an_image_benchmark_s_resolution(claim, expected):
    assert [(n, v) for n, _, v in checks(claim)] == expected


@pytest.mark.parametrize(
    ("claim", "expected"),
    [
        ("micro-bs 2 × grad-accum 16 (eff. 32), max_len 4096, bf16, wd 0.0",
         [("global_batch_size", 32), ("minibatch_size", 2), ("gradient_accumulation_steps", 16), ("max_seq_length", 4096),
          ("dtype", "bf16"), ("weight_decay", 0)]),
        ("300 ep (20 warmup), grad clip 5.0", [("epochs", 300), ("warmup_epochs", 20), ("max_grad_norm", 5)]),
        ("100k steps (2k warmup)", [("num_steps", 100000), ("warmup_steps", 2000)]),
        ("discount of 0.99, an entropy cost of 0.01 and a baseline cost of 0.5",
         [("gamma", 0.99), ("ent_coef", 0.01), ("vf_coef", 0.5)]),  # IMPALA's loss weights, not money
        ("commitment cost 0.25", [("commitment_cost", 0.25)]),
        ("the API cost 440", []),  # money: context
        ("replay capacity 1e6", [("replay_buffer_size", 1000000)]),
    ],
)
def test_terse_recipe_items(claim, expected):
    assert [(n, v) for n, _, v in checks(claim)] == expected

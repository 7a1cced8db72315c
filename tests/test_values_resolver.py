"""ValueResolver on hand-built indexes: precedence, reference following, exclusions, calls and defaults."""

from values_helpers import bind, call, definition, launch, make_index

from verifier.analysis.values import Lexicon, ValueResolver
from verifier.index.facts import FileRole


def top(res):
    return [(c.value, f"{c.source.span.file}:{c.source.span.line}") for c in res.top]


def test_precedence_launch_over_config_over_argparse_over_field_over_constant():
    layers = [
        bind("assign", "lr", "1e-2", "train.py:3"),
        bind("field", "lr", "1e-3", "cfg.py:5", path="Config.lr", scope="Config", owner="Config"),
        bind("argparse", "lr", "3e-4", "train.py:10", path="args.lr", scope="parse", owner="p", dest="lr"),
        bind("config", "lr", "2e-4", "conf/optim.yaml:2", path="optim.lr"),
        bind("launch", "lr", "1e-4", "run.sh:4", owner="train.py"),
    ]
    for n in range(len(layers), 0, -1):
        res = ValueResolver(make_index(layers[:n])).resolve(["learning_rate"])
        expected = layers[n - 1]
        assert top(res) == [(expected.value if expected.value is not None else 1e-4,
                             f"{expected.span.file}:{expected.span.line}")]
        assert len(res.overridden) == n - 1


def test_yaml_numbers_written_as_strings_are_numbers():
    res = ValueResolver(make_index([bind("config", "lr", "3e-4", "c.yaml:1", value="3e-4")])).resolve(["lr"])
    assert top(res) == [(3e-4, "c.yaml:1")]


def test_launch_flag_spelled_like_the_option_overrides_args_dest():
    index = make_index(
        [
            bind("argparse", "learning_rate", "3e-4", "train.py:8", path="args.lr", scope="parse", dest="lr"),
            bind("kwarg", "lr", "args.lr", "train.py:20", path="torch.optim.Adam.lr", scope="main",
                 owner="torch.optim.Adam"),
        ],
        calls=[call("optim.Adam", "train.py:20", ("model.parameters()",), {"lr": "args.lr"},
                    qualname="torch.optim.Adam", scope="main")],
        launches=[launch("train.py", "run.sh:2", {"learning_rate": "1e-4"})],
    )
    resolver = ValueResolver(index)
    (site,) = resolver.resolve_call_arg("torch.optim.Adam", "lr")
    assert site.status == "passed" and site.value == 1e-4
    assert [(link.file, link.line) for link in site.candidate.chain][-1] == ("run.sh", 2)
    assert top(resolver.resolve(["lr"])) == [(1e-4, "run.sh:2")]


def test_self_attribute_follows_constructor_default_and_caller_keyword():
    base = [
        bind("default", "lr", "1e-3", "agent.py:3", path="Agent.__init__.lr", scope="Agent.__init__",
             owner="Agent.__init__"),
        bind("assign", "lr", "lr", "agent.py:4", path="self.lr", scope="Agent.__init__"),
        bind("kwarg", "lr", "self.lr", "agent.py:8", path="torch.optim.Adam.lr", scope="Agent.opt",
             owner="torch.optim.Adam"),
    ]
    site = call("torch.optim.Adam", "agent.py:8", ("p",), {"lr": "self.lr"}, scope="Agent.opt")
    resolver = ValueResolver(make_index(base, calls=[site]))
    assert resolver.resolve_call_arg("torch.optim.Adam", "lr")[0].value == 1e-3

    caller = bind("kwarg", "lr", "5e-4", "main.py:12", path="agent.Agent.lr", scope="main", owner="agent.Agent")
    resolver = ValueResolver(make_index([*base, caller], calls=[site]))
    assert resolver.resolve_call_arg("torch.optim.Adam", "lr")[0].value == 5e-4
    # A keyword passed to the function overrides that function's default in name queries too.
    assert top(resolver.resolve(["lr"])) == [(5e-4, "main.py:12")]


def test_arithmetic_over_resolved_constants():
    index = make_index(
        [
            bind("argparse", "num_envs", "8", "train.py:5", path="args.num_envs", scope="parse", dest="num_envs"),
            bind("argparse", "num_steps", "128", "train.py:6", path="args.num_steps", scope="parse", dest="num_steps"),
            bind("argparse", "num_minibatches", "4", "train.py:7", path="args.num_minibatches", scope="parse",
                 dest="num_minibatches"),
            bind("assign", "minibatch_size", "args.num_envs * args.num_steps // args.num_minibatches",
                 "train.py:20", scope="main"),
            bind("assign", "hidden", "256", "model.py:1"),
            bind("assign", "ffn_dim", "4 * hidden", "model.py:2"),
        ],
        launches=[launch("train.py", "run.sh:1", {"num_envs": "16"})],
    )
    resolver = ValueResolver(index)
    assert top(resolver.resolve(["minibatch_size"])) == [(512, "train.py:20")]
    assert top(resolver.resolve(["ffn_hidden_size"])) == [(1024, "model.py:2")]


def test_dotted_config_reads_pick_the_matching_key_path():
    index = make_index(
        [
            bind("config", "lr", "3e-4", "conf.yaml:2", path="optim.lr"),
            bind("config", "lr", "1e-5", "conf.yaml:9", path="probe.lr"),
            bind("kwarg", "lr", "cfg.optim.lr", "train.py:30", path="torch.optim.AdamW.lr", scope="main",
                 owner="torch.optim.AdamW"),
            bind("kwarg", "lr", "config['probe']['lr']", "probe.py:10", path="torch.optim.SGD.lr", scope="probe",
                 owner="torch.optim.SGD"),
        ],
        calls=[
            call("torch.optim.AdamW", "train.py:30", ("params",), {"lr": "cfg.optim.lr"}, scope="main"),
            call("torch.optim.SGD", "probe.py:10", ("params",), {"lr": "config['probe']['lr']"}, scope="probe"),
        ],
    )
    resolver = ValueResolver(index)
    assert resolver.resolve_call_arg("torch.optim.AdamW", "lr")[0].value == 3e-4
    assert resolver.resolve_call_arg("torch.optim.SGD", "lr")[0].value == 1e-5


def test_hydra_interpolation_and_shell_variables():
    index = make_index(
        [
            bind("config", "hidden_size", "512", "conf.yaml:1", path="model.hidden_size"),
            bind("config", "d_model", "${model.hidden_size}", "conf.yaml:5", path="decoder.d_model",
                 value="${model.hidden_size}"),
            bind("env", "LR", "2e-4", "run.sh:1"),
            bind("launch", "lr", "$LR", "run.sh:2", owner="train.py", value=None),
        ]
    )
    resolver = ValueResolver(index)
    assert {c.value for c in resolver.resolve(["d_model"]).top} == {512}
    assert top(resolver.resolve(["lr"])) == [(2e-4, "run.sh:2")]  # the flag sets it; $LR feeds the flag


def test_comments_tests_docs_and_dead_constants_never_win():
    index = make_index(
        [
            bind("comment", "clip_range", "0.2", "ppo.py:1", value=0.2),
            bind("assign", "clip_coef", "0.2", "tests/test_ppo.py:4", scope="test_clip"),
            bind("assign", "clip_param", "0.2", "docs/conf.py:3"),
            bind("assign", "CLIP_EPS", "0.2", "ppo.py:3"),
        ],
        reads={"ppo.py": {"torch"}, "tests/test_ppo.py": {"clip_coef"}, "docs/conf.py": {"x"}},
        roles={"docs/conf.py": FileRole.doc},
    )
    res = ValueResolver(index).resolve(["clip_range"])
    assert not res.top and not res.found
    assert sorted((link.role, link.file) for link in res.excluded) == [
        ("comment", "docs/conf.py"), ("comment", "ppo.py"), ("dead", "ppo.py"), ("test", "tests/test_ppo.py"),
    ]


def test_a_constant_read_elsewhere_is_live():
    index = make_index(
        [bind("assign", "CLIP_EPS", "0.2", "ppo/consts.py:3")],
        reads={"ppo/consts.py": set(), "ppo/loss.py": {"CLIP_EPS"}},
    )
    index.files["ppo/loss.py"] = index.files["ppo/consts.py"].__class__(
        "ppo/loss.py", "0", index.files["ppo/consts.py"].language, FileRole.code, 10, reads=frozenset({"CLIP_EPS"})
    )
    assert top(ValueResolver(index).resolve(["clip_range"])) == [(0.2, "ppo/consts.py:3")]


def test_binding_inside_a_stub_function_is_a_stub():
    index = make_index(
        [bind("default", "val_fraction", "0.1", "data.py:5", path="split.val_fraction", scope="split",
              owner="split")],
        definitions=[definition("split", "data.py:5", stub="not-implemented")],
    )
    res = ValueResolver(index).resolve(["val_size"])
    assert not res.top
    assert [(s.file, s.line, s.note) for s in res.stubs] == [("data.py", 5, "not-implemented")]


def test_weak_synonyms_only_when_no_strong_name_binds():
    index = make_index([bind("field", "alpha", "16", "lora.py:2", scope="Cfg", owner="Cfg"), bind("assign", "lora_alpha", "32", "lora.py:3")])
    assert top(ValueResolver(index).resolve(["lora_alpha"])) == [(32, "lora.py:3")]
    index = make_index([bind("field", "alpha", "16", "lora.py:2", scope="Cfg", owner="Cfg")])
    assert not ValueResolver(make_index([bind("assign", "alpha", "16", "lora.py:2")])).resolve(["lora_alpha"]).top
    assert top(ValueResolver(index).resolve(["lora_alpha"])) == [(16, "lora.py:2")]


def test_spec_aliases_extend_the_lexicon():
    index = make_index([bind("assign", "eps_ratio", "0.2", "ppo.py:2")])
    assert not ValueResolver(index).resolve(["clip_range"]).top
    res = ValueResolver(index, aliases={"clip_range": ["eps_ratio"]}).resolve(["clip_range"])
    assert top(res) == [(0.2, "ppo.py:2")]


def test_lexicon_expands_any_member_to_its_entry():
    lex = Lexicon({"learning_rate": {"synonyms": ["lr", "step_size"], "weak": ["eta"]}}, {})
    assert lex.expand(["lr"]) == (["lr", "learning_rate", "step_size"], ["eta"])
    assert lex.expand(["unknown_thing"]) == (["unknown_thing"], [])


def test_exact_name_wins_within_a_precedence_level():
    index = make_index([
        bind("assign", "batch_size", "2048", "train.py:5", path="args.batch_size", scope="main"),
        bind("assign", "minibatch_size", "64", "train.py:6", path="args.minibatch_size", scope="main"),
    ])
    assert top(ValueResolver(index).resolve(["minibatch_size"])) == [(64, "train.py:6")]


def test_call_arguments_by_keyword_position_and_library_default():
    calls = [
        call("nn.utils.clip_grad_norm_", "train.py:40", ("model.parameters()", "0.5"),
             qualname="torch.nn.utils.clip_grad_norm_"),
        call("optim.Adam", "train.py:20", ("params", "1e-3"), qualname="torch.optim.Adam"),
        call("nn.Dropout", "model.py:7", ("p",), {"**": "kw"}, qualname="torch.nn.Dropout"),
    ]
    resolver = ValueResolver(make_index(calls=calls))
    assert resolver.resolve_call_arg("torch.nn.utils.clip_grad_norm_", "max_norm")[0].value == 0.5
    assert resolver.resolve_call_arg("torch.nn.utils.clip_grad_norm_", 1)[0].value == 0.5
    assert resolver.resolve_call_arg("torch.optim.Adam", "lr")[0].value == 1e-3
    (betas,) = resolver.resolve_call_arg("torch.optim.Adam", "betas")
    assert betas.status == "default" and betas.value == [0.9, 0.999] and betas.library == "torch.optim.Adam"
    (dropout,) = resolver.resolve_call_arg("torch.nn.Dropout", "inplace")
    assert dropout.status == "unknown" and "**kwargs" in dropout.reason
    assert resolver.resolve_call_arg("torch.optim.SGD", "lr") == []


def test_name_query_falls_back_to_an_omitted_library_argument():
    index = make_index(calls=[call("torch.optim.AdamW", "train.py:9", ("params",), {"lr": "1e-3"})])
    res = ValueResolver(index).resolve(["weight_decay"])
    assert res.library_default is not None
    assert (res.library_default.value, res.library_default.file, res.library_default.line) == (0.01, "train.py", 9)


def test_reference_cycles_and_unknown_calls_do_not_resolve_or_hang():
    index = make_index([
        bind("assign", "lr", "base_lr", "a.py:1"),
        bind("assign", "base_lr", "lr", "a.py:2"),
        bind("assign", "gamma", "compute_gamma()", "a.py:3"),
    ])
    resolver = ValueResolver(index)
    res = resolver.resolve(["lr"])
    assert not res.top and res.unresolved
    res = resolver.resolve(["gamma"])
    assert not res.top and "compute_gamma" in res.unresolved[0].reason


def test_file_glob_and_qualified_scopes_narrow_the_bindings():
    index = make_index([
        bind("assign", "dropout", "0.1", "model/vit.py:3"),
        bind("assign", "dropout", "0.5", "baselines/cnn.py:3"),
        bind("assign", "dropout", "0.3", "model/vit.py:30", scope="Head.__init__", path="self.dropout"),
    ], reads={"model/vit.py": {"dropout"}, "baselines/cnn.py": {"dropout"}})
    resolver = ValueResolver(index)
    assert {c.value for c in resolver.resolve(["dropout"], "baselines/*.py").top} == {0.5}
    assert {c.value for c in resolver.resolve(["dropout"], "Head").top} == {0.3}


def test_a_launch_flag_overrides_only_its_own_program():
    index = make_index(
        [
            bind("argparse", "batch_size", "64", "train.py:9", path="args.batch_size", scope="parse",
                 dest="batch_size"),
            bind("argparse", "batch_size", "128", "eval.py:7", path="args.batch_size", scope="parse",
                 dest="batch_size"),
        ],
        launches=[launch("eval.py", "scripts/eval.sh:3", {"batch_size": "256"})],
    )
    for path in ("train.py", "eval.py"):
        index.files[path].has_main_block = True
    res = ValueResolver(index).resolve(["batch_size"])
    assert sorted(top(res)) == [(64, "train.py:9"), (256, "scripts/eval.sh:3")]
    assert [(c.value, c.source.span.file) for c in res.overridden] == [(128, "eval.py")]


def test_dense_reference_graph_stays_bounded():
    import time

    names = [f"v{i}" for i in range(60)]
    bindings = [bind("assign", "v0", "1", "a.py:1"), bind("assign", "v1", "2", "a.py:2")]
    for i in range(2, 60):
        # every binding reads its two predecessors, twice over, and one successor: cycles everywhere
        expr = f"v{i - 1} + v{i - 2} + v{(i + 1) % 60} * 0"
        bindings.append(bind("assign", names[i], expr, f"a.py:{i + 1}"))
        bindings.append(bind("assign", names[i], f"v{i - 1}", f"b.py:{i + 1}"))
    resolver = ValueResolver(make_index(bindings))
    start = time.perf_counter()
    for name in names:
        resolver.resolve([name])
    assert time.perf_counter() - start < 20


from hypothesis import given, settings
from hypothesis import strategies as st

_NAMES = ["lr", "args.lr", "self.lr", "cfg.optim.lr", "hidden", "n", "batch_size"]
_EXPRS = st.one_of(
    st.sampled_from(["3e-4", "lr", "args.lr", "self.lr", "4 * hidden", "n // 0", "cfg.optim.lr", "'adam'", "f(x)",
                     "${optim.lr}", "$LR", "[1, 2]", "hidden ** 999999", "cfg['optim']['lr']"]),
    st.text(max_size=20),
)
_KINDS = st.sampled_from(["assign", "default", "field", "argparse", "kwarg", "dict", "config", "launch", "env",
                          "comment"])


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(_KINDS, st.sampled_from(_NAMES), _EXPRS, st.integers(1, 30)), max_size=12))
def test_any_index_resolves_without_crashing(rows):
    bindings = []
    for kind, path, expr, line in rows:
        leaf = path.rsplit(".", 1)[-1]
        bindings.append(bind(kind, leaf, expr, f"m.py:{line}", path=path, scope="C.__init__" if "self" in path else
                             "<module>", owner="torch.optim.Adam" if kind == "kwarg" else "", dest=leaf))
    index = make_index(bindings, calls=[call("torch.optim.Adam", "m.py:9", ("p", "lr"), {"eps": "args.lr"})])
    resolver = ValueResolver(index)
    for query in (["learning_rate"], ["hidden_size"], ["batch_size"], ["n"]):
        resolver.resolve(query)
    for arg in ("lr", "eps", "betas", 1, 7):
        resolver.resolve_call_arg("torch.optim.Adam", arg)


def test_generic_names_count_as_keywords_of_the_lexicon_apis():
    lora = call("LoraConfig", "train.py:20", (), {"r": "16", "lora_alpha": "32"}, qualname="peft.LoraConfig")
    index = make_index(
        [bind("kwarg", "r", "16", "train.py:20", path="peft.LoraConfig.r", owner="peft.LoraConfig"),
         bind("kwarg", "r", "0.5", "color.py:3", path="colorsys.hls.r", owner="colorsys.hls")],
        calls=[lora],
    )
    assert top(ValueResolver(index).resolve(["lora_rank"])) == [(16, "train.py:20")]
    bare = make_index(calls=[call("LoraConfig", "train.py:20", (), {"lora_alpha": "32"}, qualname="peft.LoraConfig")])
    res = ValueResolver(bare).resolve(["lora_rank"])
    assert res.library_default is not None and res.library_default.value == 8


def test_call_to_a_repo_class_uses_its_own_signature_and_defaults():
    from verifier.index.facts import Definition, Span

    index = make_index(
        [bind("default", "clip_range", "0.2", "ppo/algo.py:5", path="PPO.__init__.clip_range",
              scope="PPO.__init__", owner="PPO.__init__")],
        calls=[
            call("PPO", "train.py:30", ("policy", "env"), qualname="ppo.algo.PPO", scope="main"),
            call("PPO", "sweep.py:9", ("policy", "env", "3e-4", "0.1"), qualname="ppo.algo.PPO", scope="main"),
        ],
        definitions=[
            Definition("class", "PPO", "PPO", "ppo.algo", Span("ppo/algo.py", 3, 40)),
            Definition("method", "__init__", "PPO.__init__", "ppo.algo", Span("ppo/algo.py", 4, 12),
                       params=("self", "policy", "env", "lr", "clip_range")),
        ],
    )
    results = {a.site.span.file: a for a in ValueResolver(index).resolve_call_arg("PPO", "clip_range")}
    assert (results["train.py"].status, results["train.py"].value) == ("passed", 0.2)
    assert (results["sweep.py"].status, results["sweep.py"].value) == ("passed", 0.1)

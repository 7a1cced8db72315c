"""Whether any run uses a value: a setting that only unreachable code reads is no setting of the run.

A stubbed ``main`` leaves ``MAX_TOKENS = 512`` behind, read only by a ``collect`` nothing calls any more; an
``Adam(lr=1e-3)`` in a ``build_optimizer`` no entry point reaches sets nothing a run sees. Both are written,
and a value check that passes them rewards code that never runs. Decided on the shared call graph
(verifier/analysis/entry.py), and erring towards "runs" as pyflakes errs towards silence: a repo with no entry
point, a graph cut at its size bound, a read this module cannot place, a read at module level, a decorated
function (a registry may call it), a framework hook of a class the run builds, a function or class whose name is
read where a run may be (``getattr(m, "build")``, ``REGISTRY["adam"] = build_adam``) or written in a config or
launch script (Hydra ``_target_``) all count as live. Two reads do not: an ``isinstance`` test (it builds
nothing), and a bare name in a file that does not import the definition (the run's own ``Policy`` is no reader
of a copy's). An argparse option or a dataclass field is used when something a run may execute reads it by
attribute or string, or hands its namespace or config on whole; a click or typer option when its command reads
the parameter; a key of a config file the repo's own code loads when its name is read, interpolated or the
config handed on whole (``config_key_unread``).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from dataclasses import dataclass, replace

from verifier.analysis.entry import IMPLICIT_METHODS, MODULE, call_graph
from verifier.index.configs import is_config_name
from verifier.index.facts import Binding, BindingKind, FileRole, Language
from verifier.results import Evidence

# Kinds whose place in the code says when they apply; configs, launch flags and env vars are read by code
# elsewhere. A field applies wherever its class is built: it is used when something reads it (_field_unread).
_CODE_KINDS = frozenset({BindingKind.assign, BindingKind.kwarg, BindingKind.default, BindingKind.argparse,
                         BindingKind.click, BindingKind.dict})
_CALLING_LANGUAGES = frozenset({Language.notebook, Language.yaml, Language.json, Language.toml, Language.shell})
# Methods a framework calls on an instance by name (Lightning, Keras, HF Trainer callbacks, gym, Flax); other methods
# run only where the repo calls them, which the call graph and the read sites see.
_HOOK = re.compile(
    r"^(?:on_\w+|\w+_step(?:_end)?|\w+_epoch_(?:start|end)|configure_\w+|\w+_dataloader|setup|teardown|prepare_data|"
    r"reset|step|render|close|__\w+__)$"
)
_IDENTIFIER = re.compile(r"[A-Za-z_]\w*")
_CALLED = re.compile(r"([A-Za-z_]\w*)\s*\(")
MAX_READER_FILES = 50  # a name read in more files than this is a common word (``lr``), not one constant's uses
MAX_DEPTH = 4  # callers of callers followed to decide that a function may run; deeper counts as live
UNUSED_CAP = 0.75  # a right value, call or formula no run uses: written as the paper says, a minor deviation in effect


@dataclass(frozen=True)
class Unused:
    """Why no run uses a binding, the code that would (the unreached reader or scope), and where the runs
    start instead (the entry function nearest the binding: where a user looks for the cut)."""

    reason: str
    file: str
    line: int
    start: tuple[str, int, str] | None = None  # (file, line, name) of that entry function

    def cited(self, snippet: Callable[[str, int], str]) -> tuple[str, list[Evidence]]:
        """The message's "but no run uses it" clause, and the evidence at the unused code (role ``dead``) and at
        the function runs start in (role ``entry``); ``snippet(file, line)`` is the check's own snippet reader."""
        message = f"; but no run uses it: {self.reason}"
        evidence = [Evidence(self.file, self.line, self.line, snippet(self.file, self.line), "dead",
                             "no entry point reaches it")]
        if self.start is not None:
            file, line, name = self.start
            message += f" (runs start in `{name}`, {file}:{line})"
            evidence.append(Evidence(file, line, line, snippet(file, line), "entry", f"runs start in `{name}`"))
        return message, evidence


def unused_by_runs(ctx, binding: Binding) -> Unused | None:
    """Why no run of the repo uses ``binding``, or None when some run may (or this cannot be told)."""
    if binding.kind is BindingKind.config:
        return config_key_unread(ctx, binding)
    facts = ctx.index.files.get(binding.span.file)
    kinds = _CODE_KINDS | {BindingKind.field}
    if binding.kind not in kinds or facts is None or facts.language is not Language.python:
        return None
    graph = call_graph(ctx)
    if not graph.entries or not graph.complete():
        return None
    return _started(graph, _unused_binding(ctx, graph, binding))


def config_key_unread(ctx, binding: Binding) -> Unused | None:
    """``_config_key_unread`` of ``binding``, once per run (the value check asks while ranking and again for the
    winner it reports)."""
    span = binding.span
    return ctx.memo(f"analysis.liveness.config-key-unread:{span.file}:{span.line}:{binding.path}",
                    lambda: _config_key_unread(ctx, binding))


def _config_key_unread(ctx, binding: Binding) -> Unused | None:
    """Why no run reads the config key ``binding`` (``optim.lr: 3e-4`` in a YAML the code loads, ``lr`` read
    nowhere), or None when some run may. Erring towards "read", as the rest of this module does: the key counts
    as read when any code that may run reads its name by attribute or string (``cfg.optim.lr``, ``cfg["lr"]``,
    ``.get("lr")``), when another config interpolates it (``${optim.lr}``), when the file is not one the repo's
    own code loads (a DeepSpeed, accelerate or CI file, or one no loader call and no path string points to: a
    library reads it), and when configs are handed on whole (``**cfg["optim"]``, ``instantiate``,
    ``OmegaConf.to_container``, ``cfg.items()``, a computed ``cfg[key]``, ``setattr`` or ``getattr``, the config
    or the key's section passed to a library call such as ``deepspeed.initialize(config=cfg["ds"])``)."""
    facts = ctx.index.files.get(binding.span.file)
    if binding.kind is not BindingKind.config or facts is None or facts.language not in _CONFIG_LANGUAGES:
        return None
    graph = call_graph(ctx)
    if not graph.entries or not graph.complete() or not binding.name.isidentifier():
        return None
    path = binding.span.file
    if binding.path.startswith("hydra.") or _LIBRARY_CONFIG.search(path) or _checkpoint_config(ctx, path):
        return None
    if not _loaded_by_repo(ctx, path):
        return None
    unused = _attribute_unread(ctx, graph, binding, binding.name,
                               f"the key is set in {path}, but no code reads `{binding.name}`")
    if unused is None or _interpolated(ctx, binding):
        return None  # the name is read (most keys are): the whole-config reads below need not be looked for
    if _configs_consumed(ctx, graph) or _section_passed_on(ctx, graph, binding.path):
        return None
    loading = _files_naming(ctx, path.rpartition("/")[2])  # runs start where the config is loaded
    return replace(unused, start=_run_start(graph, loading[0] if loading else unused.file))


def setting_reader(ctx, binding: Binding) -> tuple[str, int] | None:
    """Where a run reads the setting ``binding``: for a config key or an argparse option, the first read of its
    name by attribute or string that may run (``cfg["optim"]["lr"]``, ``args.lr``); for a click or typer option,
    the first read of the parameter in its command. None when there is none to cite. A verdict on the setting
    cites it, so a change to the code that reads the setting is a change to the claim's evidence."""
    if binding.kind is BindingKind.click:
        return _command_read(ctx, binding)
    name = (binding.dest or binding.name) if binding.kind is BindingKind.argparse else binding.name
    if binding.kind not in (BindingKind.config, BindingKind.argparse) or not name.isidentifier():
        return None
    sites = _reads_of(ctx, name)
    if not sites:
        return None
    graph = call_graph(ctx)
    usable = bool(graph.entries) and graph.complete()
    for file, scope, line, bare in sites:
        if not bare and (not usable or _may_run(ctx, graph, file, scope, MAX_DEPTH)):
            return file, line
    return None


def _command_read(ctx, binding: Binding) -> tuple[str, int] | None:
    dest, command = binding.dest or binding.name, binding.owner
    reads = _reads_in(ctx, binding.span.file)
    if reads is None or not command:
        return None
    lines = sorted(line for scope, line, _bare in reads.sites.get(dest, ())
                   if scope == command or scope.startswith(command + "."))
    return (binding.span.file, lines[0]) if lines else None


_CONFIG_LANGUAGES = frozenset({Language.yaml, Language.json, Language.toml})
# Config files a tool or library reads, not the repo's code: DeepSpeed, accelerate, FSDP, sweeps, CI, packaging.
_LIBRARY_CONFIG = re.compile(
    r"(?:^|/)(?:\.github|\.circleci|\.gitlab|\.vscode|\.devcontainer)/|ds_config|deepspeed|accelerate|fsdp|(?:^|[/_-])zero\d|"
    r"sweep|wandb|docker|compose|(?:^|/)(?:environment|conda|meta|mkdocs|\.pre-commit-config|codecov|\.readthedocs|"
    r"CITATION|pyproject|setup|tox|\.?flake8|mypy|ruff|launch|settings|tasks|tsconfig|\.travis|appveyor|"
    r"azure-pipelines|bitbucket-pipelines|\.?dvc|dvc|params|mlc_config|\.markdownlint|\.prettierrc)[^/]*$",
    re.IGNORECASE,
)
# Files a checkpoint carries for the library that loads it (Hugging Face's ``from_pretrained`` reads them).
_CHECKPOINT_FILES = frozenset({"generation_config.json", "tokenizer_config.json", "preprocessor_config.json",
                               "adapter_config.json", "special_tokens_map.json", "trainer_state.json",
                               "training_args.json", "scheduler_config.json", "model_index.json"})
_WEIGHTS = re.compile(r"\.(?:safetensors|bin|pt|pth|ckpt|h5|msgpack|onnx)$")


def _checkpoint_config(ctx, path: str) -> bool:
    """Whether ``path`` is a checkpoint's own config, which the library loading the checkpoint reads: a Hugging Face
    file name, or a ``config.json`` beside weights or in a repo that calls ``from_pretrained``."""
    folder, _, name = path.rpartition("/")
    if name in _CHECKPOINT_FILES:
        return True
    if name != "config.json":
        return False
    if ctx.memo(f"analysis.liveness.weights-in:{folder}", lambda: _holds_weights(ctx, folder)):
        return True
    return ctx.memo("analysis.liveness.loads-pretrained", lambda: any(
        call.callee.endswith(("from_pretrained", "from_json_file")) for p in ctx.index.python_files()
        for call in ctx.index.files[p].calls))


def _holds_weights(ctx, folder: str) -> bool:
    """Whether the repo folder holds a weights file (listed, never opened)."""
    try:
        return bool(folder) and any(_WEIGHTS.search(child.name) for child in (ctx.index.root / folder).iterdir())
    except OSError:
        return False


# Calls that read a config file into a mapping the code then indexes (``yaml.safe_load``, ``OmegaConf.load``, a
# Hydra entry point).
_LOADER = re.compile(
    r"(?:^|\.)(?:safe_load|full_load|unsafe_load|safe_load_all|load_all|merge_from_file)$|"
    r"(?:^|\.)(?:yaml|json|toml|tomllib|tomli|OmegaConf|omegaconf|commentjson|json5|ruamel\.yaml\.YAML)\.loads?$|"
    r"(?:^|\.)hydra\.|(?:^|\.)(?:initialize_config_dir|initialize_config_module)$"  # @hydra.main, hydra.compose
)


def _loaded_by_repo(ctx, path: str) -> bool:
    """Whether the repo's own code may load the config at ``path``: a loader call exists, and the file's name is
    written where a run picks its config (a Python string, a launch script or notebook, another config), or
    Hydra composes the config directory."""
    def loaders() -> tuple[bool, bool]:
        loader = hydra = False
        for file in ctx.index.python_files():
            for call in ctx.index.files[file].calls:
                if _LOADER.search(call.callee) or _LOADER.search(call.qualname):
                    loader = True
                    hydra = hydra or "hydra" in call.qualname or call.qualname.endswith("initialize_config_dir")
        return loader, hydra

    loader, hydra = ctx.memo("analysis.liveness.config-loaders", loaders)
    if not loader:
        return False
    if hydra and path.endswith((".yaml", ".yml")):
        return True
    name = path.rpartition("/")[2]
    return name in ctx.memo("analysis.liveness.config-names-written", lambda: _config_names_written(ctx))


def _config_names_written(ctx) -> frozenset[str]:
    """Every config file name written in the repo's code, launch scripts, notebooks and configs."""
    names = {p.rpartition("/")[2] for p in ctx.index.files if ctx.index.files[p].language in _CONFIG_LANGUAGES}
    found: set[str] = set()
    for path in sorted(ctx.index.files):
        facts = ctx.index.files[path]
        if facts.role is not FileRole.code or not is_config_name(path.rpartition("/")[2]):
            continue
        if facts.language is Language.python or facts.language in _CALLING_LANGUAGES:
            written = set(_CONFIG_FILE_NAME.findall(ctx.index.source(path) or "")) & names
            found.update(written - {path.rpartition("/")[2]})
    return frozenset(found)


_CONFIG_FILE_NAME = re.compile(r"[\w.+\-]+\.(?:ya?ml|json|toml)\b")


def _files_naming(ctx, name: str) -> list[str]:
    """The Python files that write the config file name ``name``, once per run."""
    return ctx.memo(f"analysis.liveness.files-naming:{name}",
                    lambda: [p for p in ctx.index.python_files() if name in (ctx.index.source(p) or "")])


def _interpolated(ctx, binding: Binding) -> bool:
    """Whether a config interpolates the key (``lr: ${optim.lr}``): it is read where that key is."""
    def names() -> frozenset[str]:
        found: set[str] = set()
        for path in sorted(ctx.index.files):
            if ctx.index.files[path].language in _CONFIG_LANGUAGES:
                for inside in re.findall(r"\$\{([^}]*)\}", ctx.index.source(path) or ""):
                    found.update(_IDENTIFIER.findall(inside))
        return frozenset(found)

    return binding.name in ctx.memo("analysis.liveness.config-interpolations", names)


# Names that hold a loaded config, and what a run reads a mapping whole with (its keys are then read where this
# cannot see). A splatted batch or tokenizer output (``model(**batch)``) is data, not a config.
# (``args`` is left out: an argparse namespace or ``TrainingArguments`` handed to a library holds no config keys
# unless they were copied in, which a splat, ``setattr`` or ``__dict__`` shows.)
_CONFIG_HOLDERS = frozenset({"cfg", "config", "conf", "cfgs", "configs", "params", "hparams", "hyperparams", "hp",
                             "hps", "settings", "cfg_dict", "config_dict", "yaml_cfg", "yaml_config", "config_yaml",
                             "raw_cfg"})
_CONFIG_WHOLE_READS = ("to_container", "to_object", "structured", "instantiate", "from_dict", "model_validate",
                       "parse_obj", "parse_yaml_file", "parse_json_file", "parse_dict", "LightningCLI", "fromfile",
                       "build_from_cfg", "CLI", "__dict__")
_LOADED = re.compile(r"(?:safe_load|full_load|yaml\.load|json\.loads?|toml\.load|tomllib\.load|OmegaConf\.(?:load|create|merge)|"
                     r"load_(?:config|cfg|yaml|json|conf)\w*|read_(?:config|yaml|cfg)\w*|get_(?:config|cfg)|parse_config)\s*\(")
_DATA_SPLAT = re.compile(r"^(?:batch|inputs?|model_inputs|data|sample|samples|features|enc|encoded|encodings?|tokens?|"
                         r"tokenized|x|example|examples|item|record|row|obs)(?:_\w+)?$")


def _configs_consumed(ctx, graph) -> bool:
    """Whether some code reads a loaded config whole (see ``config_key_unread``)."""
    def decide() -> bool:
        index = ctx.index
        if any(index.files_reading(name) for name in _CONFIG_WHOLE_READS) or _computed_getattr(ctx):
            return True
        holders = _config_holders(ctx)
        for path in index.python_files():
            facts = index.files[path]
            own_kwargs = {p[2:] for d in facts.definitions for p in d.params if p.startswith("**")}
            # ``kwargs = dict(batch_size=cfg["batch_size"])`` then ``DataLoader(ds, **kwargs)``: its keys are written
            own_kwargs |= {b.path for b in facts.bindings if b.kind is BindingKind.assign and "**" not in b.expr
                           and re.match(r"\s*(?:dict\(|\{)", b.expr)}
            for call in facts.calls:
                leaf = call.callee.rsplit(".", 1)[-1]
                if leaf == "setattr" and len(call.args) > 1 and call.args[1].strip()[:1] not in ("'", '"'):
                    return True  # for k, v in cfg.items(): setattr(args, k, v)
                receiver = call.callee.rpartition(".")[0].split(".")[0].split("[")[0]
                if leaf in ("items", "keys", "values", "update") and receiver in holders:
                    return True
                if leaf in ("get", "pop", "setdefault") and receiver in holders and call.args and \
                        call.args[0].strip()[:1] not in ("'", '"'):
                    return True  # cfg.get(f"{prefix}_lr"): any key may be read
                for keyword, text in call.kwargs:
                    root = re.split(r"[.\[(\s]", text.strip(), maxsplit=1)[0]
                    if keyword == "**" and root not in own_kwargs and not _DATA_SPLAT.match(root):
                        return True  # AdamW(params, **cfg["optim"]), Model(**vars(args))
            if any(path in index.files_reading(name) for name in holders) and _computed_subscript(ctx, path, holders):
                return True
        held = re.compile(r"^(?:self\.)?(?P<name>\w+)$")
        return _passed_to_a_library(ctx, graph, lambda text: bool((m := held.match(text))) and m.group("name") in holders)

    return ctx.memo("analysis.liveness.configs-consumed", decide)


def _config_holders(ctx) -> set[str]:
    """The usual names of a loaded config, and every name assigned from a loader call (``cfg = yaml.safe_load(f)``)."""
    names = set(_CONFIG_HOLDERS)
    for path in ctx.index.python_files():
        for b in ctx.index.files[path].bindings:
            if b.kind is BindingKind.assign and _LOADED.search(b.expr):
                names.add(b.path.split(".", 1)[0] if not b.path.startswith("self.") else b.path.split(".")[1])
    return names


def _computed_subscript(ctx, path: str, holders: set[str]) -> bool:
    """``cfg[key]`` (a name, not a string) or ``for key in cfg`` on a config holder in ``path``: any key may be read."""
    tree = ctx.index.tree(path)
    if tree is None:
        return False
    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load) and not isinstance(node.slice, ast.Constant):
            if isinstance(node.slice, ast.Name | ast.Attribute | ast.JoinedStr | ast.BinOp | ast.Call) and _root(node.value) in holders:
                return True
        if isinstance(node, ast.For | ast.comprehension) and _root(node.iter) in holders and not isinstance(node.iter, ast.Call):
            if not _a_config_list(ctx, node.iter):
                return True  # for key in cfg["optim"]: the mapping's keys; a list of layers reads no key
    return False


def _a_config_list(ctx, node: ast.AST) -> bool:
    """Whether ``cfg["layers"]`` / ``cfg.layers`` names a list in some config (``layers.0...`` or a tuple leaf)."""
    keys: list[str] = []
    while isinstance(node, ast.Attribute | ast.Subscript):
        if isinstance(node, ast.Attribute):
            keys.append(node.attr)
        elif isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str):
            keys.append(node.slice.value)
        else:
            return False
        node = node.value
    if not keys:
        return False
    dotted = ".".join(reversed(keys))
    lists = ctx.memo("analysis.liveness.config-lists", lambda: _config_lists(ctx))
    return any(path == dotted or path.endswith("." + dotted) for path in lists)


def _config_lists(ctx) -> frozenset[str]:
    """The dotted paths of every list in the repo's configs (``layers`` of ``layers.0.dim``, a tuple leaf)."""
    out: set[str] = set()
    for path in ctx.index.files:
        if ctx.index.files[path].language in _CONFIG_LANGUAGES:
            for b in ctx.index.files[path].bindings:
                item = re.search(r"\.\d+(?:\.|$)", b.path)  # layers.0.dim: an item of the list layers
                if item or isinstance(b.value, tuple):
                    out.add(b.path[: item.start()] if item else b.path)
    return frozenset(out)


def _root(node: ast.AST) -> str:
    while isinstance(node, ast.Attribute | ast.Subscript):
        node = node.value
    return node.id if isinstance(node, ast.Name) else ""


def _section_passed_on(ctx, graph, dotted: str) -> bool:
    """Whether a section holding the key (``ds`` of ``ds.zero.stage``) goes to a library call whole."""
    sections = [p for p in dotted.split(".")[:-1] if p.isidentifier()]
    if not sections:
        return False
    tail = re.compile(r"(?:\[\s*['\"](?:" + "|".join(map(re.escape, sections)) + r")['\"]\s*\]|\.(?:"
                      + "|".join(map(re.escape, sections)) + r"))\s*$")
    return _passed_to_a_library(ctx, graph, lambda text: bool(tail.search(text)))


def _started(graph, unused: Unused | None) -> Unused | None:
    """``unused`` with the function runs start in, nearest its file."""
    return None if unused is None else replace(unused, start=_run_start(graph, unused.file))


def _unused_binding(ctx, graph, binding: Binding) -> Unused | None:
    if binding.kind is BindingKind.field:
        return _field_unread(ctx, graph, binding)
    where = binding.owner if binding.kind is BindingKind.default and binding.owner else binding.scope
    if where and where != MODULE and not _may_run(ctx, graph, binding.span.file, where, MAX_DEPTH):
        return Unused(f"it applies in `{where}`, which no entry point reaches", binding.span.file, binding.span.line)
    if binding.kind is BindingKind.argparse:
        return _option_unread(ctx, graph, binding)
    if binding.kind is BindingKind.click:
        return _command_option_unread(ctx, graph, binding)
    if where and where != MODULE:
        return None
    head = binding.path.rpartition(".")[0]
    if binding.kind is not BindingKind.assign or head:
        return None  # ``cfg.lr = ...`` at module level: read through an object the reads below cannot follow
    return _readers_unreached(ctx, graph, binding)


def _option_unread(ctx, graph, binding: Binding) -> Unused | None:
    """An argparse option a run parses and never reads: ``--gamma 2.0`` declared, ``args.gamma`` read nowhere a run
    may be. Any read by attribute or string (of any object: ``self.gamma``, ``cfg["gamma"]``) counts, and the
    whole namespace handed on (``vars(args)``, ``args.__dict__``, a computed ``getattr``, the namespace passed to a
    library call such as ``wandb.init(config=args)``) counts as reading every option."""
    dest = binding.dest or binding.name
    if not dest or _namespace_consumed(ctx, graph):
        return None
    return _attribute_unread(ctx, graph, binding, dest, f"the option is parsed, but nothing reads `args.{dest}`")


def _command_option_unread(ctx, graph, binding: Binding) -> Unused | None:
    """A click or typer option its command never reads: ``@click.option("--lr", default=3e-4)`` on ``train(lr,
    epochs)`` whose body reads no ``lr``. The option reaches the command as a parameter, so only that function (and
    the functions nested in it) can read it; a ``**kwargs`` parameter, ``locals()`` or ``vars()`` hands them on
    whole."""
    dest, command = binding.dest or binding.name, binding.owner
    definition = graph.modules.local_definition(binding.span.file, command) if command else None
    if definition is None or dest not in definition.params or any(p.startswith("**") for p in definition.params):
        return None
    reads = _reads_in(ctx, binding.span.file)
    if reads is None:
        return None
    if _command_read(ctx, binding) is not None or any(
        scope == command or scope.startswith(command + ".")
        for name in ("locals", "vars") for scope, _line, _bare in reads.sites.get(name, ())
    ):
        return None
    return Unused(f"the option is parsed, but `{command}` never reads `{dest}`", binding.span.file, binding.span.line)


def _field_unread(ctx, graph, binding: Binding) -> Unused | None:
    """A dataclass (attrs) field a run never reads: ``warmup_steps: int = 500`` in a config class, ``.warmup_steps``
    read nowhere a run may be. Classes with a library base (``TrainingArguments``, pydantic's ``BaseModel``: the
    library reads the fields) and configs handed on whole (``asdict``, ``vars``, ``OmegaConf.structured``, the
    class or an instance passed to a library call such as ``tyro.cli(Config)``) count as read."""
    cls = graph.modules.local_definition(binding.span.file, binding.owner) if binding.owner else None
    if cls is None or cls.kind != "class":
        return None
    if any(graph.modules.resolve_in_file(binding.span.file, base) is None for base in cls.bases):
        return None
    if _objects_consumed(ctx, graph, cls.name):
        return None
    return _attribute_unread(ctx, graph, binding, binding.name, f"the field is set, but nothing reads `.{binding.name}`")


def _attribute_unread(ctx, graph, binding: Binding, name: str, never: str) -> Unused | None:
    """Unused when no read of ``name`` by attribute or string (``x.name``, ``cfg["name"]``) sits where a run may be."""
    sites = _reads_of(ctx, name)
    if sites is None:
        return None
    reads = [(f, s, line) for f, s, line, bare in sites if not bare]
    if _any_may_run(ctx, graph, reads):
        return None
    if reads:
        file, scope, line = reads[0]
        return Unused(f"only `{scope}` reads `.{name}` ({file}:{line}), which no entry point reaches", file, line)
    return Unused(never, binding.span.file, binding.span.line)


# What hands a parsed namespace, or a config object, on whole: its options or fields are then read where this
# cannot see.
_NAMESPACE_WHOLE_READS = ("vars", "__dict__", "_get_kwargs")
_WHOLE_OBJECT_READS = (*_NAMESPACE_WHOLE_READS, "asdict", "astuple", "fields", "_asdict", "__dataclass_fields__",
                       "to_container", "to_yaml", "to_object", "structured", "model_dump", "to_dict")


def _objects_consumed(ctx, graph, class_name: str) -> bool:
    """Whether a config class, or an instance of it, is handed on whole (see ``_field_unread``)."""
    def decide() -> bool:
        index = ctx.index
        if any(index.files_reading(name) for name in _WHOLE_OBJECT_READS):
            return True
        if _computed_getattr(ctx):
            return True
        built = re.compile(rf"\s*(?:[\w.]+\.)?{re.escape(class_name)}\s*\(")
        names = _holders(ctx, lambda expr: bool(built.match(expr)))
        mentioned = re.compile(rf"(?<![\w.]){re.escape(class_name)}(?!\w)")  # tyro.cli(Config), HfArgumentParser((A, B))
        return _passed_to_a_library(ctx, graph, lambda text: text in names or bool(mentioned.search(text)))

    return ctx.memo(f"analysis.liveness.objects-consumed:{class_name}", decide)


def _holders(ctx, built_by) -> set[str]:
    """The usual names of a namespace or config, and every name assigned a value ``built_by`` accepts."""
    names = set(_NAMESPACE_NAMES)
    for path in ctx.index.python_files():
        for b in ctx.index.files[path].bindings:
            if b.kind is BindingKind.assign and built_by(b.expr):
                names.add(b.path.split(".", 1)[0])
    return names


def _computed_getattr(ctx) -> bool:
    """Whether some code reads an attribute by a computed name (``getattr(cfg, f"{k}_lr")``): any may be read."""
    def decide() -> bool:
        for path in ctx.index.python_files():
            for call in ctx.index.files[path].calls:
                if call.callee == "getattr" and len(call.args) > 1 and call.args[1].strip()[:1] not in ("'", '"'):
                    return True
        return False

    return ctx.memo("analysis.liveness.computed-getattr", decide)


def _passed_to_a_library(ctx, graph, passes) -> bool:
    """Whether a call that is not the repo's own (a library, or one this cannot resolve) gets an argument text
    ``passes`` accepts; printing and logging calls read nothing for the run."""
    index = ctx.index
    for path in index.python_files():
        for call in index.files[path].calls:
            if call.callee.rsplit(".", 1)[-1] in _SINKS:
                continue
            texts = [t.strip() for t in (*call.args, *(v for _, v in call.kwargs))]
            if any(passes(t) for t in texts) and graph.modules.resolve_in_file(path, call.callee) is None:
                return True
    return False


# Namespaces under their usual names, and what only prints or logs one (reads none of its options for the run).
_NAMESPACE_NAMES = frozenset({"args", "opt", "opts", "options", "cfg", "config", "hparams", "hps", "flags", "FLAGS",
                              "namespace", "arguments", "parsed"})
_SINKS = frozenset({"print", "pprint", "info", "debug", "warning", "warn", "log", "write", "format", "str", "repr"})


def _namespace_consumed(ctx, graph) -> bool:
    """Whether some code hands a parsed namespace on whole, so any option may be read where this cannot see."""
    def decide() -> bool:
        index = ctx.index
        if any(index.files_reading(name) for name in _NAMESPACE_WHOLE_READS):
            return True
        if _computed_getattr(ctx):
            return True
        names = _holders(ctx, lambda expr: "parse_args(" in expr or "parse_known_args(" in expr)
        return _passed_to_a_library(
            ctx, graph, lambda text: text in names or "parse_args(" in text or "parse_known_args(" in text)

    return ctx.memo("analysis.liveness.namespace-consumed", decide)


def _run_start(graph, file: str) -> tuple[str, int, str] | None:
    """The function a run starts in (an ``if __name__`` block's callee, a console script's target), preferring
    entry points in ``file``: a stubbed ``main`` is where such a run stops short. Of the functions a ``__main__``
    block calls, the outer call (``train`` of ``train(parse_args())``), then the one that calls most."""
    entries = sorted(graph.entries, key=lambda e: (e.node.file != file, e.node.file, e.node.scope, e.kind))
    for entry in entries:
        facts = graph.index.files.get(entry.node.file)
        inner = {leaf for call in (facts.calls if facts is not None else ()) if call.scope == MODULE
                 for text in (*call.args, *(v for _, v in call.kwargs)) for leaf in _CALLED.findall(text)}
        nodes = [entry.node] if entry.node.scope != MODULE else sorted(
            graph.edges.get(entry.node, ()),
            key=lambda n: (n.file != file, n.scope.rsplit(".", 1)[-1] in inner, -len(graph.edges.get(n, ())), n.file,
                           n.scope))
        for node in nodes:
            definition = graph.modules.local_definition(node.file, node.scope)
            if definition is not None and definition.kind != "class":
                return node.file, definition.span.line, node.scope
    return None


def _readers_unreached(ctx, graph, binding: Binding) -> Unused | None:
    """A module constant: unused when every place that reads it sits in a function no entry point reaches."""
    sites = _sites_seeing(ctx, graph, binding.span.file, binding.name)
    if not sites or _any_may_run(ctx, graph, sites):
        return None  # unknown reads, none at all (never read: the resolver's own "dead"), or a read that may run
    file, scope, line = sites[0]
    return Unused(f"only `{scope}` reads it ({file}:{line}), and no entry point reaches that", file, line)


def scope_may_run(ctx, file: str, scope: str) -> bool:
    """Whether code at ``scope`` in ``file`` may run in some run of the repo (False only when sure it cannot)."""
    graph = call_graph(ctx)
    if not graph.entries or not graph.complete():
        return True
    return _may_run(ctx, graph, file, scope, MAX_DEPTH)


def scope_unused(ctx, file: str, scope: str) -> Unused | None:
    """Why no run reaches the function ``scope`` of ``file`` (cited at its definition), or None when one may."""
    if scope_may_run(ctx, file, scope):
        return None
    graph = call_graph(ctx)
    definition = graph.modules.local_definition(file, scope)
    line = definition.span.line if definition is not None else 1
    return _started(graph, Unused(f"`{scope}` is reached from no entry point", file, line))


def _may_run(ctx, graph, file: str, scope: str, depth: int) -> bool:
    """Whether code at ``scope`` in ``file`` may run: reached from an entry point, or called in a way the graph
    does not follow (decorators, by-name reads, configs), or too far from a decision to tell. Remembered per
    scope and depth: every value check of a run asks about the same few functions."""
    return ctx.memo(f"analysis.liveness.may_run:{depth}:{file}:{scope}",
                    lambda: _decide_may_run(ctx, graph, file, scope, depth))


def _decide_may_run(ctx, graph, file: str, scope: str, depth: int) -> bool:
    if depth <= 0 or graph.scope_reachable(file, scope) is not None:
        return True
    if scope == MODULE:  # the top level of a file nothing reached imports, and no entry point runs
        return False
    parts = scope.split(".")
    for cut in range(1, len(parts) + 1):
        definition = graph.modules.local_definition(file, ".".join(parts[:cut]))
        if definition is None or _may_register(definition):
            return True  # a scope this cannot place, or one a decorator may register
        if definition.kind == "class" and _HOOK.match(parts[-1]) and graph.reachable(definition) is not None:
            return True  # a hook of an instantiated class: the framework calls it (not merely defined on import)
        if _named_outside_python(ctx, definition.name):
            return True
    # A constructor or hook runs wherever its class is used (``cls = Adapter; cls(8)``); any other method, or a
    # nested function, only where its own name is read (``self.zero_init()``).
    owner = graph.modules.local_definition(file, parts[0])
    method_of_class = len(parts) > 1 and owner.kind == "class"
    if method_of_class and (parts[-1] in IMPLICIT_METHODS or _HOOK.match(parts[-1])):
        return _used_outside(ctx, graph, file, parts[0], depth)
    method = graph.modules.local_definition(file, ".".join(parts[:2])) if method_of_class else None
    if method is not None and not {"staticmethod", "classmethod"} & {d.split("(")[0] for d in method.decorators}:
        if not _class_may_be_built(ctx, graph, owner, depth - 1):
            return False  # a method of a class no run builds (``module.merge()`` reaches only built modules)
    return _used_outside(ctx, graph, file, scope, depth)


def _used_outside(ctx, graph, file: str, qualname: str, depth: int) -> bool:
    """Whether the name of definition ``qualname`` is read where a run may be, outside the definition itself (a
    recursive call, ``super(Net, self)`` in Net's own methods use nothing)."""
    sites = _sites_seeing(ctx, graph, file, qualname.rsplit(".", 1)[-1])
    if sites is None:
        return True
    inside = (qualname, qualname + ".")
    return any(_may_run(ctx, graph, f, s, depth - 1) for f, s, _ in sites
               if not (f == file and (s == inside[0] or s.startswith(inside[1]))))


def definition_may_run(ctx, definition) -> bool:
    """Whether a function may run, or a class may be built, in some run (False only when sure neither can)."""
    graph = call_graph(ctx)
    if not graph.entries or not graph.complete():
        return True
    if definition.kind != "class":
        return _may_run(ctx, graph, definition.span.file, definition.qualname, MAX_DEPTH)
    return _class_may_be_built(ctx, graph, definition, MAX_DEPTH)


def _class_may_be_built(ctx, graph, definition, depth: int) -> bool:
    if depth <= 0 or graph.reachable(definition) is not None or _may_register(definition):
        return True
    if _named_outside_python(ctx, definition.name):
        return True
    return _used_outside(ctx, graph, definition.span.file, definition.qualname, depth)


def _may_register(definition) -> bool:
    """Whether a decorator may hand the definition to code that calls it (``@register("adam")``,
    ``@MODELS.register_module()``, ``@app.route``): any decorator but the wrappers that only change how the
    definition runs once called (``@jax.jit``, ``@torch.no_grad()``, ``@staticmethod``, ``@dataclass``)."""
    for text in definition.decorators:
        head = text.split("(", 1)[0].strip()
        leaf = head.rsplit(".", 1)[-1]
        if leaf == "partial":  # functools.partial(jax.jit, static_argnums=0)
            inner = text.split("(", 1)[1] if "(" in text else ""
            leaf = inner.split(",", 1)[0].split("(", 1)[0].strip().rsplit(".", 1)[-1]
        if leaf not in _WRAPPERS:
            return True
    return False


_WRAPPERS = frozenset({
    "jit", "pjit", "vmap", "pmap", "grad", "remat", "checkpoint", "compile", "script", "no_grad", "enable_grad",
    "inference_mode", "autocast", "custom_vjp", "custom_jvp", "staticmethod", "classmethod", "property",
    "cached_property", "abstractmethod", "wraps", "lru_cache", "cache", "dataclass", "total_ordering", "overload",
    "override", "final", "njit", "numba", "contextmanager", "unique",
})


def _named_outside_python(ctx, name: str) -> bool:
    """Whether a config, launch script or notebook names ``name`` (``_target_: train.build_adam``); the sau spec
    and prose (a README) name functions without calling them."""
    return name in ctx.memo("analysis.liveness.words-outside-python", lambda: _words_outside_python(ctx))


def _words_outside_python(ctx) -> frozenset[str]:
    """Every identifier written in the repo's configs, launch scripts and notebooks: one pass for all names asked."""
    words: set[str] = set()
    for path in sorted(ctx.index.files):
        facts = ctx.index.files[path]
        if facts.language in _CALLING_LANGUAGES and is_config_name(path.rpartition("/")[2]):
            words.update(_IDENTIFIER.findall(ctx.index.source(path) or ""))
    return frozenset(words)


def _sites_seeing(ctx, graph, file: str, name: str) -> list[tuple[str, str, int]] | None:
    """The read sites of ``name`` that can mean the one defined in ``file``: in that file, through an attribute or a
    string (``models.Policy``, ``getattr(m, "Policy")``: any module may), or as a bare name in a file that imports
    it (directly or through a package). A second ``Policy`` in a copy no one imports is no reader of the first."""
    sites = _reads_of(ctx, name)
    if sites is None:
        return None
    return [(f, s, line) for f, s, line, bare in sites if f == file or not bare or file in _imports(ctx, graph, f)]


def _any_may_run(ctx, graph, sites: list[tuple[str, str, int]]) -> bool:
    return any(_may_run(ctx, graph, file, scope, MAX_DEPTH) for file, scope, _line in sites)


def _reads_of(ctx, name: str) -> list[tuple[str, str, int, bool]] | None:
    """``_read_sites`` of ``name``, once per run."""
    return ctx.memo(f"analysis.liveness.readers:{name}", lambda: _read_sites(ctx, name))


def _imports(ctx, graph, path: str) -> frozenset[str]:
    """The repo files ``path`` imports, directly or through the files it imports."""
    def closure() -> frozenset[str]:
        seen, todo = {path}, [path]
        while todo:
            for target in graph.modules.imported_paths(todo.pop()):
                if target not in seen:
                    seen.add(target)
                    todo.append(target)
        return frozenset(seen - {path})

    return ctx.memo(f"analysis.liveness.imports:{path}", closure)


def _read_sites(ctx, name: str) -> list[tuple[str, str, int, bool]] | None:
    """Every (file, enclosing scope, line, bare name?) reading ``name``; None when some file reads it in a way not found
    here (a read the index saw that this walk cannot place keeps the constant live)."""
    files = sorted(ctx.index.files_reading(name))
    if len(files) > MAX_READER_FILES:
        return None
    out: list[tuple[str, str, int, bool]] = []
    for path in files:
        facts = ctx.index.files[path]
        if facts.language is not Language.python:
            return None  # a notebook cell or another language: every cell runs
        reads = _reads_in(ctx, path)
        if reads is None:
            return None
        found = reads.sites.get(name, ())
        if not found and not reads.type_tests.get(name) and name not in reads.optimizer_state:
            return None
        out.extend((path, scope, line, bare) for scope, line, bare in found)
    return sorted(set(out))


def _reads_in(ctx, path: str) -> "_Reads | None":
    """``_file_reads`` of ``path``, once per run."""
    return ctx.memo(f"analysis.liveness.file_reads:{path}", lambda: _file_reads(ctx, path))


def _file_reads(ctx, path: str) -> "_Reads | None":
    """Every read of every name in one file, from one walk (a run asks about many names of the same files)."""
    tree = ctx.index.tree(path)
    if tree is None:
        return None
    reads = _Reads()
    reads.visit(tree)
    return reads


class _Reads(ast.NodeVisitor):
    """Loads of names (``N``, ``obj.N``, ``obj["N"]``, ``getattr(obj, "N")``) with their enclosing scope, named as
    the index names scopes (``Trainer.train``, ``outer.inner``), the names only tested (``isinstance(m, N)``:
    a read that neither calls nor builds N), and the keys only read off an optimizer's param groups."""

    def __init__(self) -> None:
        self.stack: list[str] = []
        self.functions = 0  # how many of the enclosing scopes are functions (a class body runs on import)
        self.sites: dict[str, list[tuple[str, int, bool]]] = {}
        self.type_tests: dict[str, int] = {}
        self.optimizer_state: set[str] = set()  # keys read off an optimizer's param groups, not off a setting

    def _scoped(self, node) -> None:
        for deco in node.decorator_list:
            self.visit(deco)  # a decorator runs where the definition is, not inside it
        function = not isinstance(node, ast.ClassDef)
        self.stack.append(node.name)
        self.functions += function
        for child in node.body:
            self.visit(child)
        self.functions -= function
        self.stack.pop()
        if not isinstance(node, ast.ClassDef):
            for default in [*node.args.defaults, *node.args.kw_defaults]:
                if default is not None:
                    self.visit(default)

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = _scoped

    def _hit(self, name: str, node: ast.AST, bare: bool = False) -> None:
        scope = ".".join(self.stack) if self.functions else MODULE
        self.sites.setdefault(name, []).append((scope, node.lineno, bare))

    def visit_Name(self, node: ast.Name) -> None:
        if not isinstance(node.ctx, ast.Store):
            self._hit(node.id, node, bare=True)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        if isinstance(node.target, ast.Name):
            self._hit(node.target.id, node, bare=True)
        self.generic_visit(node)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if not isinstance(node.ctx, ast.Store):
            self._hit(node.attr, node)
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        if isinstance(func, ast.Name) and func.id in ("isinstance", "issubclass") and len(node.args) == 2:
            self.visit(func)
            self.visit(node.args[0])
            for kind in node.args[1].elts if isinstance(node.args[1], ast.Tuple) else [node.args[1]]:
                if isinstance(kind, ast.Name | ast.Attribute):
                    tested = _last_name(kind)
                    self.type_tests[tested] = self.type_tests.get(tested, 0) + 1
                    if isinstance(kind, ast.Attribute):
                        self.visit(kind.value)  # ``nn`` of ``nn.Linear`` is read
                else:
                    self.visit(kind)
            for keyword in node.keywords:
                self.visit(keyword)
            return
        self.generic_visit(node)

    def visit_Subscript(self, node: ast.Subscript) -> None:
        key = node.slice
        if isinstance(key, ast.Constant) and isinstance(key.value, str) and _param_group(node.value):
            self.optimizer_state.add(key.value)  # ``opt.param_groups[0]["lr"]``: the optimizer's state, no setting
            self.visit(node.value)
            return
        self.generic_visit(node)

    def visit_Constant(self, node: ast.Constant) -> None:
        if isinstance(node.value, str) and node.value.isidentifier():  # obj["N"], getattr(obj, "N"), a name as text
            self._hit(node.value, node)


_GROUP_NAMES = frozenset({"group", "g", "param_group", "pg", "grp"})


def _param_group(node: ast.AST) -> bool:
    """``opt.param_groups[0]`` or a loop's ``group`` over it: what ``["lr"]`` reads there is optimizer state."""
    if isinstance(node, ast.Subscript):
        node = node.value
    return (isinstance(node, ast.Attribute) and node.attr == "param_groups") or (
        isinstance(node, ast.Name) and node.id in _GROUP_NAMES)


def _last_name(node: ast.AST) -> str:
    return node.id if isinstance(node, ast.Name) else node.attr

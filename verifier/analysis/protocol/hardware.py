"""Rule ``hardware``: the GPU count (and type) a paper trained on is what the repository configures or states.

A repository sets its device count where it launches (``torchrun --nproc_per_node``, ``accelerate launch
--num_processes``, ``deepspeed --num_gpus``, ``CUDA_VISIBLE_DEVICES``, ``#SBATCH --gres=gpu:a100:8``), in a
config (``trainer.devices: 8``, an accelerate config's ``num_processes``) or in code (Lightning
``Trainer(devices=8)``, ``mp.spawn(nprocs=4)``); it states its GPU type in docs and sbatch resources. The index's
``Launch`` records keep only the flags after the script, so launcher flags and ``#SBATCH`` directives are read
here from the text of shell files and of the README's command lines. Nothing is run.
"""

from __future__ import annotations

import ast
import re
import shlex
from dataclasses import dataclass

import yaml

from verifier.analysis.protocol.common import evidence, sorted_evidence, text_of
from verifier.compiler.protocol_claims import family_of, gpu_statements, hardware_lexicon  # one reading of GPUs
from verifier.index.facts import BindingKind, FileRole, Language
from verifier.results import CheckResult, Status
from verifier import pysource

KIND = "protocol"
DYNAMIC = -1  # a count no file fixes


# ----- what the repository configures ----------------------------------------------------------------------
@dataclass(frozen=True)
class Source:
    """One place that fixes (or leaves open) a count or names a family."""

    tier: int  # 0 launch, 1 config, 2 code, 3 argparse default; 4 a doc statement
    count: int | None  # DYNAMIC when it comes from a value no file fixes
    family: str | None
    memory_gb: int | None
    file: str
    line: int
    what: str  # a short description for the message
    evaluation: bool = False  # an evaluation launch (target or script named eval/test/infer/sample/...)
    target: str = ""  # the script a launch runs


_LAUNCH, _CONFIG, _CODE, _DEFAULT, _DOC = range(5)
_VAR = re.compile(r"\$\{([A-Za-z_]\w*)(?::?[-=]([^}]*))?\}|\$([A-Za-z_]\w*)")
_LOOP_VAR = re.compile(r"^\s*for\s+([A-Za-z_]\w*)\s+in\b")
_SBATCH = re.compile(r"^\s*#\s*SBATCH\s+(.*)$")
_LAUNCHERS = frozenset({"torchrun", "deepspeed", "accelerate", "srun", "sbatch"})
_LAUNCHER_MODULES = frozenset({"torch.distributed.launch", "torch.distributed.run", "deepspeed.launcher.runner"})
_COMMAND_CUE = re.compile(r"\b(?:torchrun|accelerate\s+launch|deepspeed|torch\.distributed\.(?:launch|run)|CUDA_VISIBLE_DEVICES|"
                          r"srun|sbatch|python3?\s+\S+\.py)\b")


def _int(text: str) -> int | None:
    text = text.strip().strip("'\"")
    return int(text) if re.fullmatch(r"\d{1,4}", text) else None


def _id_count(text: str) -> int | None:
    """``0,1,2,3`` -> 4, ``3`` -> 1; None for anything else (``all``, ``$GPUS``)."""
    text = text.strip().strip("'\"").strip("[]()")
    items = [i.strip() for i in re.split(r"[,\s]+", text) if i.strip()]
    return len(items) if items and all(re.fullmatch(r"\d{1,3}", i) for i in items) else None


def _count_or_dynamic(text: str | None) -> int | None:
    """A count flag's value: a number, DYNAMIC for a variable / ``auto`` / ``-1``, None when absent."""
    if text is None:
        return None
    value = _int(text)
    if value is not None:
        return value
    return DYNAMIC


class _Shell:
    """Variables of one shell file in line order: ``N=8`` then ``--nproc_per_node=$N`` is 8; loop variables and
    values that are not constants stay unresolved."""

    def __init__(self) -> None:
        self.values: dict[str, str | None] = {}

    def note(self, line: str) -> None:
        loop = _LOOP_VAR.match(line)
        if loop:
            self.values[loop.group(1)] = None
        for m in re.finditer(r"(?:^|[;&|]\s*|\bexport\s+)([A-Za-z_]\w*)=(\"[^\"]*\"|'[^']*'|[^\s;]*)", line):
            value = self.expand(m.group(2).strip("'\""))  # N=${N:-8}: the default, unless N is known
            self.values[m.group(1)] = None if "$" in value or "`" in value else value

    def expand(self, text: str) -> str:
        def sub(m: re.Match) -> str:
            name = m.group(1) or m.group(3)
            if name in self.values:
                known = self.values[name]
                return known if known is not None else m.group(0)
            return m.group(2) if m.group(2) is not None and m.group(1) else m.group(0)

        return _VAR.sub(sub, text)


def _logical_lines(text: str) -> list[tuple[int, str]]:
    """(first line number, text) with backslash continuations joined."""
    out, buf, first = [], [], 0
    for number, raw in enumerate(text.splitlines(), 1):
        if not buf:
            first = number
        if raw.rstrip().endswith("\\"):
            buf.append(raw.rstrip()[:-1])
            continue
        buf.append(raw)
        out.append((first, " ".join(buf)))
        buf = []
    if buf:
        out.append((first, " ".join(buf)))
    return out


def _words(line: str) -> list[str]:
    try:
        return shlex.split(line, comments=True, posix=True)
    except ValueError:
        return line.split("#", 1)[0].split()


def _options(words: list[str]) -> dict[str, str]:
    """``--nproc_per_node=8`` / ``--nproc-per-node 8`` / ``-N 2`` -> {nproc_per_node: 8, N: 2} (dashes as ``_``)."""
    out: dict[str, str] = {}
    i = 0
    while i < len(words):
        word = words[i]
        if word.startswith("-") and len(word) > 1 and not re.fullmatch(r"-\d+(?:\.\d+)?", word):
            name = word.lstrip("-")
            if "=" in name:
                name, value = name.split("=", 1)
                out.setdefault(name.replace("-", "_"), value)
            elif i + 1 < len(words) and not words[i + 1].startswith("-"):
                out.setdefault(name.replace("-", "_"), words[i + 1])
                i += 1
            else:
                out.setdefault(name.replace("-", "_"), "true")
        i += 1
    return out


def _slurm_resources(opts: dict[str, str]) -> tuple[int | None, int | None, list[str], int | None]:
    """(GPUs per node, nodes, families, memory) of sbatch / srun options; a total ``--gpus`` is per node / nodes."""
    per_node = total = None
    families: list[str] = []
    memory = None
    for key in ("gres", "gpus_per_node", "gpus", "G"):
        value = opts.get(key)
        if value is None:
            continue
        spec = value
        if key == "gres":
            gpu = next((part for part in value.split(",") if part.strip().startswith("gpu")), None)
            if gpu is None:
                continue
            spec = gpu.strip()[3:].lstrip(":")
            if not spec:
                per_node = per_node or 1  # --gres=gpu: one per node
                continue
        pieces = spec.split(":")
        number = pieces[-1] if re.fullmatch(r"\d+|\$\S+", pieces[-1]) else None
        kind = ":".join(pieces[:-1] if number is not None else pieces)
        for family, _, _ in family_of(kind):
            families.append(family)
        mem = re.search(r"(\d{2,3})\s*g(?:i)?b", kind, re.IGNORECASE)
        memory = int(mem.group(1)) if mem else memory
        count = _count_or_dynamic(number) if number is not None else 1
        if key in ("gpus", "G"):
            total = count
        else:
            per_node = count
    for key in ("constraint", "C", "partition", "p"):
        if key in opts:
            families.extend(f for f, _, _ in family_of(opts[key]))
    nodes = _count_or_dynamic(opts.get("nodes") or opts.get("N"))
    if total is not None:
        return total, None, families, memory
    return per_node, nodes, families, memory


def _times(per_node: int | None, nodes: int | None) -> int | None:
    if per_node is None:
        return None
    if per_node == DYNAMIC or nodes == DYNAMIC:
        return DYNAMIC
    return per_node * (nodes or 1)


def _launch_count(words: list[str], visible: int | None, lex: dict) -> tuple[int | None, str, str]:
    """(count, what, target) of one command line; count None when the line configures none."""
    lead = 0
    env: dict[str, str] = {}
    while lead < len(words) and re.fullmatch(r"[A-Za-z_]\w*=.*", words[lead]):
        key, value = words[lead].split("=", 1)
        env[key] = value
        lead += 1
    texts = words[lead:]
    if "CUDA_VISIBLE_DEVICES" in env:
        ids = _id_count(env["CUDA_VISIBLE_DEVICES"])
        visible = ids if ids is not None else DYNAMIC
    head = next((i for i, w in enumerate(texts) if w.rsplit("/", 1)[-1] in _LAUNCHERS or w in _LAUNCHER_MODULES), None)
    start = head + 1 if head is not None else 0
    script_at = next((i for i in range(start, len(texts)) if texts[i].endswith(".py")
                      or (i and texts[i - 1] == "-m" and texts[i] not in _LAUNCHER_MODULES)), len(texts))
    target = texts[script_at] if script_at < len(texts) else ""
    launcher_opts = _options(texts[start:script_at]) if head is not None else {}
    rest = texts[script_at + 1 :]
    script_opts = _options(rest)
    hydra = {w.split("=", 1)[0].lstrip("+"): w.split("=", 1)[1] for w in rest if re.fullmatch(r"\+{0,2}[A-Za-z_][\w.]*=.*", w)}
    name = texts[head].rsplit("/", 1)[-1] if head is not None else ""
    name = {"torch.distributed.launch": "torchrun", "torch.distributed.run": "torchrun",
            "deepspeed.launcher.runner": "deepspeed"}.get(name, name)
    count: int | None = None
    what = ""
    if name == "torchrun":
        per = launcher_opts.get("nproc_per_node")  # torchrun's default is one process
        count = _times(_count_or_dynamic(per) if per is not None else 1, _count_or_dynamic(launcher_opts.get("nnodes")))
        what = "torchrun --nproc_per_node"
    elif name == "accelerate":
        n = launcher_opts.get("num_processes")
        ids = _id_count(launcher_opts.get("gpu_ids") or "")
        if n is not None:
            count = _count_or_dynamic(n)
        elif ids is not None:
            count = ids
        elif "config_file" not in launcher_opts:
            count = DYNAMIC  # the machine's default accelerate config decides
        what = "accelerate launch --num_processes"
    elif name == "deepspeed":
        n = launcher_opts.get("num_gpus")
        include = launcher_opts.get("include") or ""
        if n is not None:
            count = _times(_count_or_dynamic(n), _count_or_dynamic(launcher_opts.get("num_nodes")))
        elif re.fullmatch(r"[\w.-]+:[\d,]+", include):
            count = _id_count(include.split(":", 1)[1])
        else:
            count = DYNAMIC  # every GPU the machine has
        what = "deepspeed --include" if include and n is None else "deepspeed --num_gpus"
    elif name in ("srun", "sbatch"):
        per, nodes, _, _ = _slurm_resources(launcher_opts)
        count = _times(per, nodes)
        what = f"{name} GPUs"
    if count is None and target:
        flags = set(lex.get("count_flags") or [])
        ids_flags = set(lex.get("id_flags") or [])
        for key, value in sorted(script_opts.items()):
            if key in flags:
                count, what = _count_or_dynamic(value), f"--{key}"
                break
            if key in ids_flags:
                found = _id_count(value)
                count, what = (found if found is not None else DYNAMIC), f"--{key}"
                break
        for key, value in sorted(hydra.items()):
            if count is None and "trainer" in key and key.rsplit(".", 1)[-1] in ("devices", "gpus"):
                found = _id_count(value) if value.startswith("[") else _int(value)
                count, what = (found if found is not None else DYNAMIC), key
    if count is None and visible is not None and target:
        count, what = visible, "CUDA_VISIBLE_DEVICES"
    return count, what, target


def _evaluation(path: str, target: str, lex: dict) -> bool:
    words = tuple(str(w) for w in lex.get("evaluation_words") or [])
    name = f"{path} {target}".lower()
    return any(re.search(rf"(?<![a-z]){re.escape(w)}", name) for w in words)


def _shell_sources(path: str, text: str, lex: dict, doc: bool) -> list[Source]:
    out: list[Source] = []
    shell = _Shell()
    visible: int | None = None
    sbatch: dict[str, str] = {}
    sbatch_line = 0
    for number, line in _logical_lines(text):
        directive = _SBATCH.match(line)
        if directive:
            opts = _options(_words(directive.group(1)))
            sbatch.update(opts)
            if not sbatch_line and opts.keys() & {"gres", "gpus", "gpus_per_node", "G"}:
                sbatch_line = number  # the directive that asks for the GPUs
            _, _, families, memory = _slurm_resources(opts)
            for family in families:
                out.append(Source(_LAUNCH, None, family, memory, path, number, "sbatch resources"))
            continue
        if doc and not _COMMAND_CUE.search(line):
            continue
        stripped = line.split("#", 1)[0] if not line.lstrip().startswith("#") else ""
        if not stripped.strip():
            continue
        shell.note(stripped)
        expanded = shell.expand(stripped)
        exported = re.match(r"^\s*export\s+CUDA_VISIBLE_DEVICES=(\S+)", expanded)
        if exported:
            ids = _id_count(exported.group(1))
            visible = ids if ids is not None else DYNAMIC
            continue
        for part in re.split(r"\s*(?:&&|\|\||;|\|)\s*", expanded.strip().lstrip("$ ").strip()):
            words = _words(part)
            if not words:
                continue
            count, what, target = _launch_count(words, visible, lex)
            if count is not None:
                out.append(Source(_LAUNCH, count, None, None, path, number, what, _evaluation(path, target, lex), target))
            elif target.endswith(".py") and re.match(r"(?:\S*/)?python[\d.]*$", words[0]):
                out.append(Source(_LAUNCH, None, None, None, path, number, "a single-process launch", False, target))
    if sbatch:
        per, nodes, _, _ = _slurm_resources(sbatch)
        count = _times(per, nodes)
        if count is not None:
            out.append(Source(_LAUNCH, count, None, None, path, sbatch_line, "sbatch GPUs", _evaluation(path, "", lex)))
    return out


def _doc_sources(path: str, text: str, lex: dict) -> list[Source]:
    out = _shell_sources(path, text.replace("`", " "), lex, doc=True)  # the README's command lines: the launch it gives
    for number, line in enumerate(text.splitlines(), 1):
        if _COMMAND_CUE.search(line) or "--" in line or "SBATCH" in line:
            continue
        if _REQUIREMENT.search(line):
            continue  # "requires a GPU such as an RTX 3090": what it needs, not what it ran on
        for s in gpu_statements(line):
            out.append(Source(_DOC, s.count, s.family, s.memory_gb, path, number, "stated"))
    return out


_REQUIREMENT = re.compile(r"\b(?:requires?|required|requirements?|needs?|recommend\w*|at least|minimum|e\.g\.|such as|"
                          r"compatible|supports?|should (?:also )?work|any)\b", re.IGNORECASE)
_PAPER_COPY = re.compile(r"paper", re.IGNORECASE)  # paper.md: a copy of the paper says what the paper ran
_CONFIG_COUNT_KEYS = ("gpus", "num_gpus", "n_gpus", "ngpus", "num_gpu", "gpu_num", "n_gpu", "gpus_per_node")


def _config_value_count(node) -> int | None:
    if isinstance(node, yaml.ScalarNode):
        value = node.value.strip()
        if value in ("-1", "auto", "all"):
            return DYNAMIC
        if _int(value) is not None:
            return _int(value)
        ids = _id_count(value) if "," in value else None
        return ids if ids is not None else (DYNAMIC if value.startswith("$") else None)
    if isinstance(node, yaml.SequenceNode):
        return len(node.value) if node.value and all(isinstance(v, yaml.ScalarNode) and _int(v.value) is not None for v in node.value) else None
    return None


def _yaml_sources(path: str, text: str) -> list[Source]:
    """Count keys of a config: ``gpus`` / ``num_gpus`` anywhere, ``devices`` of a trainer (a
    ``trainer:`` block or a Hydra ``trainer/`` config group file), an accelerate config's ``num_processes``."""
    trainer_file = "trainer" in path.lower()
    try:
        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        docs = [d for d in yaml.compose_all(text, Loader=loader) if d is not None]
    except (yaml.YAMLError, RecursionError, ValueError, TypeError):
        return []
    out: list[Source] = []
    for doc in docs:
        if not isinstance(doc, yaml.MappingNode):
            continue
        top = {k.value for k, _ in doc.value if isinstance(k, yaml.ScalarNode)}
        accelerate = bool(top & {"distributed_type", "compute_environment"})
        stack: list[tuple[str, object]] = [("", doc)]
        seen = 0
        while stack and seen < 20_000:
            prefix, node = stack.pop()
            seen += 1
            if not isinstance(node, yaml.MappingNode):
                continue
            for key, value in node.value:
                if not isinstance(key, yaml.ScalarNode):
                    continue
                name = key.value.replace("-", "_")
                dotted = f"{prefix}.{name}" if prefix else name
                if isinstance(value, yaml.MappingNode):
                    stack.append((dotted, value))
                    continue
                counted = (name in _CONFIG_COUNT_KEYS) or (
                    name == "devices" and ("trainer" in prefix.lower() or (trainer_file and not prefix))) or (
                    accelerate and name == "num_processes")  # the total over all machines
                if not counted:
                    continue
                count = _config_value_count(value)
                if count is not None:
                    out.append(Source(_CONFIG, count, None, None, path, key.start_mark.line + 1, dotted))
    return out


_JSON_KEY = re.compile(r'"(gpus|num_gpus|n_gpus|ngpus|num_gpu|n_gpu|gpus_per_node)"\s*:\s*(-?\d+)')


def _json_sources(path: str, text: str) -> list[Source]:
    out = []
    for m in _JSON_KEY.finditer(text):
        value = int(m.group(2))
        out.append(Source(_CONFIG, DYNAMIC if value < 0 else value, None, None, path, text.count("\n", 0, m.start()) + 1, m.group(1)))
    return out


_TRAINER_QUALS = ("lightning", "pytorch_lightning", "lightning.pytorch", "lightning.fabric")
_DYNAMIC_CALLS = ("device_count", "local_device_count", "devices", "local_devices", "pmap")
_DISTRIBUTED_CALLS = ("init_process_group", "DistributedDataParallel", "Accelerator", "pmap", "initialize", "DataParallel",
                      "Fabric", "spawn", "launch")


def _literal_count(expr: str) -> int | None:
    """A keyword argument's source text as a count: ``8``, ``[0, 1]``, ``"0,1"``; DYNAMIC for ``-1`` / ``"auto"`` /
    a name; None when it is not about devices (``"cpu"``)."""
    try:
        node = pysource.parse(expr.strip(), mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return DYNAMIC
    if isinstance(node, ast.Constant):
        if isinstance(node.value, bool):
            return None
        if isinstance(node.value, int):
            return DYNAMIC if node.value < 0 else node.value
        if isinstance(node.value, str):
            ids = _id_count(node.value)
            return ids if ids is not None else DYNAMIC
        return None
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return DYNAMIC
    if isinstance(node, (ast.List, ast.Tuple)):
        return len(node.elts) if node.elts and all(isinstance(e, ast.Constant) and isinstance(e.value, int) for e in node.elts) else DYNAMIC
    return DYNAMIC


def _resolve_name(ctx, expr: str) -> list[Source]:
    """``Trainer(devices=args.gpus)``: the argparse / config / launch settings of ``gpus`` stand for it."""
    leaf = expr.strip().rsplit(".", 1)[-1]
    if not re.fullmatch(r"[A-Za-z_]\w*", leaf):
        return []
    out = []
    for b in ctx.index.bindings_named([leaf]):
        if b.kind in (BindingKind.argparse, BindingKind.click, BindingKind.field, BindingKind.default) and b.constant and isinstance(b.value, int) and not isinstance(b.value, bool):
            out.append(Source(_DEFAULT, b.value if b.value >= 0 else DYNAMIC, None, None, b.span.file, b.span.line, f"default of {leaf}"))
    return out


def _code_sources(ctx, lex: dict) -> tuple[list[Source], list[Source], list[Source]]:
    """(counts, dynamic uses, distributed markers) of the Python code, from the index's call sites."""
    index = ctx.index
    counts: list[Source] = []
    dynamic: list[Source] = []
    markers: list[Source] = []
    code_files = {p for p, f in index.files.items() if f.role == FileRole.code}
    for call in index.calls_with_leaf("Trainer"):
        if call.span.file not in code_files:
            continue
        kwargs = dict(call.kwargs)
        lightning = call.qualname.startswith(_TRAINER_QUALS) or any(k in kwargs for k in ("devices", "gpus", "accelerator", "num_nodes", "tpu_cores"))
        if not lightning:
            continue
        value = kwargs.get("devices") or kwargs.get("gpus") or kwargs.get("tpu_cores")
        if value is None:
            if "**" in kwargs:
                continue  # Trainer(**cfg.trainer): the config says
            dynamic.append(Source(_CODE, DYNAMIC, None, None, call.span.file, call.span.line, "Trainer() without devices (auto)"))
            continue
        count = _literal_count(value)
        if count == DYNAMIC and re.fullmatch(r"[\w.]+", value.strip()):
            resolved = _resolve_name(ctx, value)
            counts.extend(resolved)
            if not resolved:
                dynamic.append(Source(_CODE, DYNAMIC, None, None, call.span.file, call.span.line, f"Trainer(devices={value})"))
            continue
        if count is not None:
            total = _times(count, _literal_count(kwargs["num_nodes"]) if "num_nodes" in kwargs else 1)
            (dynamic if total == DYNAMIC else counts).append(
                Source(_CODE, total, None, None, call.span.file, call.span.line, "Trainer devices"))
    for call in index.calls_with_leaf("spawn"):
        kwargs = dict(call.kwargs)
        if call.span.file in code_files and "nprocs" in kwargs:
            count = _literal_count(kwargs["nprocs"])
            (dynamic if count == DYNAMIC else counts).append(Source(_CODE, count, None, None, call.span.file, call.span.line, "spawn nprocs"))
    for call in index.calls_with_leaf("DataParallel"):
        if call.span.file not in code_files or call.callee.rsplit(".", 1)[-1] != "DataParallel":
            continue
        ids = dict(call.kwargs).get("device_ids") or (call.args[1] if len(call.args) > 1 else None)
        count = _literal_count(ids) if ids else DYNAMIC
        (dynamic if count == DYNAMIC else counts).append(Source(_CODE, count, None, None, call.span.file, call.span.line, "DataParallel"))
    for leaf in _DYNAMIC_CALLS:
        for call in index.calls_with_leaf(leaf):
            if call.span.file in code_files and (call.qualname.startswith(("torch.cuda.", "jax.")) or
                                                 call.callee in ("jax.devices", "jax.device_count", "jax.local_device_count")):
                dynamic.append(Source(_CODE, DYNAMIC, None, None, call.span.file, call.span.line, call.callee + "()"))
    for leaf in _DISTRIBUTED_CALLS:
        for call in index.calls_with_leaf(leaf):
            if call.span.file in code_files and call.callee.rsplit(".", 1)[-1] == leaf and (
                    leaf not in ("initialize", "spawn", "launch") or "deepspeed" in call.qualname or "multiprocessing" in call.qualname):
                markers.append(Source(_CODE, DYNAMIC, None, None, call.span.file, call.span.line, call.callee + "()"))
    flags = set(lex.get("count_flags") or [])
    for b in index.bindings_named(sorted(flags)):
        if b.kind is BindingKind.argparse and b.span.file in code_files and b.constant and isinstance(b.value, int) \
                and not isinstance(b.value, bool):
            counts.append(Source(_DEFAULT, b.value if b.value >= 0 else DYNAMIC, None, None, b.span.file, b.span.line, f"--{b.name} default"))
    return counts, dynamic, markers


_ENV_ASSIGN = re.compile(r"""environ(?:\[\s*["']CUDA_VISIBLE_DEVICES["']\s*\]\s*=\s*|\.setdefault\(\s*["']CUDA_VISIBLE_DEVICES["']\s*,\s*)["']([^"']*)["']""")
_CUDA_USE = re.compile(r"""["']cuda(?::\d+)?["']|\.cuda\(\)""")


def _python_text_sources(ctx) -> tuple[list[Source], list[Source]]:
    """(``os.environ["CUDA_VISIBLE_DEVICES"] = "0"`` counts, the first "cuda" use of each file)."""
    counts, uses = [], []
    for path in sorted(ctx.index.python_files(FileRole.code)):
        text = text_of(ctx, path)
        if "cuda" not in text:
            continue
        for m in _ENV_ASSIGN.finditer(text):
            ids = _id_count(m.group(1))
            counts.append(Source(_CODE, ids if ids is not None else DYNAMIC, None, None, path, text.count("\n", 0, m.start()) + 1,
                                 "CUDA_VISIBLE_DEVICES"))
        use = _CUDA_USE.search(text)
        if use:
            uses.append(Source(_CODE, 1, None, None, path, text.count("\n", 0, use.start()) + 1, "a cuda device"))
    return counts, uses


@dataclass
class Found:
    counts: list[Source]
    dynamic: list[Source]
    markers: list[Source]
    cuda: list[Source]
    stated: list[Source]  # doc statements and sbatch families
    plain: list[Source]  # launches of a script on one process with no count (`python train.py`)


def _gather(ctx, lex: dict) -> Found:
    launch: list[Source] = []
    stated: list[Source] = []
    configs: list[Source] = []
    for path, facts in sorted(ctx.index.files.items()):
        if facts.role == FileRole.test:
            continue
        if facts.language is Language.shell:
            for s in _shell_sources(path, text_of(ctx, path), lex, doc=False):
                (stated if s.family else launch).append(s)
        elif facts.language is Language.other and not _PAPER_COPY.search(path.rsplit("/", 1)[-1]):
            for s in _doc_sources(path, text_of(ctx, path), lex):
                (stated if s.tier == _DOC or s.family else launch).append(s)
        elif facts.role == FileRole.code and facts.language is Language.yaml:
            text = text_of(ctx, path)
            if re.search(r"\b(?:devices|gpus|num_gpus|n_gpus|ngpus|num_processes|gpu_num|num_gpu|n_gpu|gpus_per_node)\s*:", text):
                configs += _yaml_sources(path, text)
        elif facts.role == FileRole.code and facts.language is Language.json:
            text = text_of(ctx, path)
            if "gpu" in text:
                configs += _json_sources(path, text)
    code, dynamic, markers = _code_sources(ctx, lex)
    env_counts, cuda = _python_text_sources(ctx)
    plain = [s for s in launch if s.count is None]
    if markers:  # distributed code: its launcher sets the count, not an argparse default (`--world_size 1`)
        dynamic += [s for s in code if s.tier == _DEFAULT]
        code = [s for s in code if s.tier != _DEFAULT]
    counts = launch + configs + code + env_counts
    dynamic += [s for s in counts if s.count == DYNAMIC]
    counts = [s for s in counts if s.count is not None and s.count != DYNAMIC]
    return Found(counts, dynamic, markers, cuda, stated, plain)


# ----- verdict ---------------------------------------------------------------------------------------------
def _at(sources: list[Source]) -> str:
    return ", ".join(f"{s.file}:{s.line}" for s in sources[:3]) + (" ..." if len(sources) > 3 else "")


@dataclass
class Reading:
    status: str  # agree | implied | mismatch | conflict | dynamic | missing
    message: str
    evidence: list[Source]


def _count_reading(found: Found, claim: int, any_run: bool) -> Reading:
    """What the repo says about the count. A configured count outranks a doc (a README may repeat the paper; the
    launch is what runs); a doc only breaks a tie between launches or speaks when nothing is configured."""
    docs = [s for s in found.stated if s.count is not None]
    tiers = sorted({s.tier for s in found.counts})
    configured = [s for s in found.counts if s.tier == tiers[0]] if tiers else []
    values = {s.count for s in configured}
    if len(values) > 1 and not any_run:  # a 1-GPU eval script beside the 8-GPU training: the training decides
        training = [s for s in configured if not s.evaluation]
        if training and len({s.count for s in training}) == 1:
            configured, values = training, {training[0].count}
    doc_agree = [s for s in docs if s.count == claim]
    doc_other = [s for s in docs if s.count != claim]
    cfg_agree = [s for s in configured if s.count == claim]
    cfg_other = [s for s in configured if s.count != claim]
    if configured:
        if cfg_agree and (not cfg_other or any_run):
            return Reading("agree", f"{claim} GPU(s) configured ({cfg_agree[0].what} at {_at(cfg_agree)})", cfg_agree)
        if cfg_agree and doc_agree:  # several launch counts: the docs say which one the paper's runs use
            return Reading("agree", f"{claim} GPU(s) stated ({_at(doc_agree)}) and configured ({_at(cfg_agree)}); other "
                           f"launches use {sorted(values - {claim})}", doc_agree + cfg_agree)
        if cfg_agree:
            return Reading("conflict", f"the launches use different counts {sorted(values)} ({_at(configured)})", configured)
        plain = [s for s in found.plain if s.target in {c.target for c in cfg_other if c.target}]
        if claim == 1 and plain:  # `python train.py` beside `torchrun --nproc_per_node=8 train.py`: both offered
            return Reading("conflict", f"{plain[0].target} is launched on one process ({_at(plain)}) and with "
                           f"{sorted(values)} ({_at(cfg_other)})", plain + cfg_other)
        shown = sorted(values)[0] if len(values) == 1 else sorted(values)
        said = f" (the docs state {claim}, {_at(doc_agree)})" if doc_agree else ""
        return Reading("mismatch", f"{cfg_other[0].what} configures {shown} GPU(s), not {claim} ({_at(cfg_other)}){said}",
                       cfg_other)
    if doc_agree:
        return Reading("agree", f"{claim} GPU(s) stated ({_at(doc_agree)})", doc_agree)
    if doc_other:
        return Reading("mismatch", f"the docs state {sorted({s.count for s in doc_other})} GPU(s), not {claim} ({_at(doc_other)})",
                       doc_other)
    if found.dynamic:
        return Reading("dynamic", f"the count comes from a value no file fixes ({found.dynamic[0].what} at {_at(found.dynamic)})",
                       found.dynamic)
    if found.markers:
        return Reading("dynamic", f"distributed code ({found.markers[0].what} at {_at(found.markers)}) with no launch that sets "
                       "its device count", found.markers)
    if found.cuda:
        if claim == 1:
            return Reading("implied", f"a single-process script on one cuda device ({_at(found.cuda)}), nothing configures more",
                           found.cuda[:1])
        return Reading("missing", f"nothing configures {claim} GPUs: the code is single-process on one cuda device "
                       f"({_at(found.cuda)})", found.cuda[:1])
    return Reading("missing", "no launch, config or doc states a GPU count", [])


def _type_reading(found: Found, family: str, memory: int | None) -> tuple[Reading, bool]:
    """The type reading, and whether a stated memory size differs from the claimed one. A job file's resources
    (``--gres=gpu:h100:4``) outrank the docs, as launches do for the count."""
    named = [s for s in found.stated if s.family]
    jobs = [s for s in named if s.tier == _LAUNCH]
    named = jobs or named
    same = [s for s in named if s.family == family]
    if same:
        sizes = {s.memory_gb for s in same if s.memory_gb}
        other_memory = bool(memory and sizes and memory not in sizes)
        return Reading("agree", f"{family} stated ({_at(same)})", same), other_memory
    if named:
        where = "the job requests" if jobs else "the repo names"
        return Reading("mismatch", f"{where} {', '.join(sorted({s.family for s in named}))}, not {family} ({_at(named)})",
                       named), False
    return Reading("missing", f"no doc or job file names the {family}", []), False


def evaluate(params: dict, ctx, scope: str | None, rule: dict) -> CheckResult:
    claim_count = params.get("gpus")
    family = params.get("gpu")
    memory = params.get("gpu_memory_gb")
    any_run = bool(params.get("any_run"))
    if claim_count is None and family is None:
        return CheckResult.unverified(KIND, "the claim names neither a GPU count (`gpus`) nor a type (`gpu`)")
    lex = rule.get("lexicon") or hardware_lexicon()
    found = ctx.memo("protocol.hardware.found", lambda: _gather(ctx, lex))
    count = _count_reading(found, int(claim_count), any_run) if claim_count is not None else None
    kind, other_memory = _type_reading(found, str(family), memory) if family is not None else (None, False)
    details = {"count": count.status if count else None, "type": kind.status if kind else None}

    def result(status: str, message: str, *readings: Reading | None, score: float | None = None) -> CheckResult:
        sources = [s for r in readings if r for s in r.evidence]
        cited = sorted_evidence(evidence(ctx, s.file, s.line) for s in sources)
        if status == "pass":
            return CheckResult.passed(KIND, message, cited, **details)
        if status == "partial":
            return CheckResult.partial(KIND, score or 0.5, message, cited, **details)
        if status == "unverified":
            return CheckResult.unverified(KIND, message, cited, **details)
        return CheckResult.failed(KIND, Status(status), message, cited, **details)

    memory_note = f"; but the {family} stated is not the {memory}GB one" if other_memory else ""
    if count is None:  # a type claim alone
        assert kind is not None
        if kind.status == "agree":
            return result("partial", kind.message + memory_note, kind, score=0.75) if other_memory else result("pass", kind.message, kind)
        return result(kind.status, kind.message, kind)
    if kind is None:  # a count claim alone
        status = {"agree": "pass", "implied": "pass", "mismatch": "mismatch", "conflict": "unverified", "dynamic": "unverified",
                  "missing": "missing"}[count.status]
        return result(status, count.message, count)
    if count.status == "mismatch" or kind.status == "mismatch":
        bad = [r for r in (count, kind) if r.status == "mismatch"]
        return result("mismatch", "; ".join(r.message for r in bad), *bad)
    message = f"{count.message}; {kind.message}"
    if count.status in ("agree", "implied") and kind.status == "agree":
        if other_memory:
            return result("partial", message + memory_note, count, kind, score=0.75)
        return result("pass", message, count, kind)
    if count.status in ("conflict", "dynamic"):
        return result("unverified", message, count, kind)
    if count.status == "agree" and kind.status == "missing":
        return result("partial", f"{count.message}; the {family} is stated nowhere", count, score=0.5)
    if count.status == "missing" and kind.status == "agree":
        return result("partial", f"{kind.message}; {count.message}", kind, count, score=0.5)
    return result("missing", f"{count.message}; {kind.message}" if count.status != "implied"
                  else f"no doc or job file names the {family} or a GPU count (the code runs on one cuda device)", count)

"""Rules ``seeded`` (RNGs are seeded on the path the experiment runs) and ``seeds`` (how many seeds/runs)."""

from __future__ import annotations

import ast
import functools
import json
import re
from dataclasses import dataclass

from verifier.analysis.protocol.common import (
    CallView,
    FileView,
    dotted,
    evidence,
    file_view,
    names_in,
    outer_chains,
    own_statements,
    python_paths,
    scope_admits,
    sorted_evidence,
    text_of,
    tokens,
    views_mentioning,
)
from verifier.analysis.protocol.reach import reach
from verifier.analysis.protocol.values import (
    Resolver,
    config_settings,
    option_settings,
    setting,
)
from verifier.index.facts import Language
from verifier.results import CheckResult, Status

KIND = "protocol"
_ENV_TOKENS = {"env", "envs", "space", "action", "observation"}
SEED_WORDS = ("seed", "PRNGKey", "default_rng", "RandomState", "prng")


@dataclass(frozen=True)
class SeedCall:
    call: CallView
    uses_flag: bool | None  # True: the argument comes from a setting; False: a literal; None: no argument


def _is_seeding(call: CallView, lex: dict) -> bool:
    qual, name = call.qual, call.name
    constructor = _constructor_kind(call, lex)
    if constructor is not None:
        # `np.random.default_rng()` with no seed draws its state from the OS: an RNG, not a seeding.
        return constructor == "argument" and _arg(call) is not None
    exact, suffixes = _api_forms(tuple(lex.get("seeding_calls", [])))
    if qual in exact or qual.endswith(suffixes) or name in exact:  # qual == api or qual.endswith("." + api) or name == api
        return True
    if call.leaf in lex.get("seeding_leaves", []):
        return True
    if call.leaf == "seed":
        recv = set(tokens(call.receiver()))
        return bool(recv & {"random", "env", "space", "action", "observation", "rng", "np", "envs"})
    if call.leaf == "reset" and call.kwarg("seed") is not None:
        return True
    return False


@functools.lru_cache(maxsize=64)
def _api_forms(apis: tuple[str, ...]) -> tuple[frozenset[str], tuple[str, ...]]:
    """The APIs as a set and as ``.api`` suffixes: one set look-up and one ``str.endswith`` per call."""
    return frozenset(apis), tuple("." + api for api in apis)


def _arg(call: CallView) -> ast.expr | None:
    if call.leaf == "reset":
        return call.kwarg("seed")
    if call.node.args:
        return call.node.args[0]
    for kw in call.node.keywords:
        if kw.arg in ("seed", "key"):
            return kw.value
    return None


def _from_setting(node: ast.expr | None, view: FileView, scope: str, all_views: list[FileView], depth: int = 0) -> bool | None:
    """Does a seed argument come from a run setting (flag/config), rather than a literal baked into code?"""
    if node is None:
        return None
    if depth > 4:
        return True
    if isinstance(node, ast.Constant):
        return False
    fn = view.functions.get(scope)
    chains = [c for c in outer_chains(node) if c.split(".")[0] not in view.imports]
    if not chains:
        return False
    return any(_chain_from_setting(c, view, scope, fn, all_views, depth) for c in chains)


def _chain_from_setting(chain: str, view: FileView, scope: str, fn, all_views, depth: int) -> bool:
    if "." in chain:
        return True  # args.seed, cfg.seed, self.seed, config.train.seed
    if fn is not None and chain in fn.params:
        callers = _argument_at_callers(fn.name, fn.params, chain, all_views)
        if not callers:
            return True
        return any(_from_setting(arg, v, s, all_views, depth + 1) for arg, v, s in callers)
    if fn is not None:
        for stmt in ast.walk(fn.node):
            if isinstance(stmt, ast.Assign) and any(dotted(t) == chain for t in stmt.targets):
                return bool(_from_setting(stmt.value, view, scope, all_views, depth + 1))
            if isinstance(stmt, (ast.For, ast.AsyncFor)) and chain in names_in(stmt.target):
                return True  # a loop over seeds
    for stmt in view.tree.body:
        if isinstance(stmt, ast.Assign) and any(dotted(t) == chain for t in stmt.targets):
            return bool(_from_setting(stmt.value, view, "<module>", all_views, depth + 1))
    return False


class _ViewList(list):
    """The run's seeding views, which nothing changes once made, with their calls grouped by leaf (in file and call
    order) the first time a setting is traced to its callers: each such trace looks up one name instead of scanning
    every call of every file."""

    _by_leaf: dict[str, list] | None = None

    def calls_by_leaf(self) -> dict[str, list]:
        if self._by_leaf is None:
            self._by_leaf = _group_by_leaf(self)
        return self._by_leaf


def _group_by_leaf(views: list[FileView]) -> dict[str, list]:
    table: dict[str, list] = {}
    for view in views:
        for call in view.calls:
            table.setdefault(call.leaf, []).append((view, call))
    return table


def _argument_at_callers(fname: str, params: tuple[str, ...], param: str, views: list[FileView]):
    positional = [p for p in params if p not in ("self", "cls")]
    idx = positional.index(param) if param in positional else None
    out = []
    by_leaf = views.calls_by_leaf() if isinstance(views, _ViewList) else _group_by_leaf(views)
    for view, call in by_leaf.get(fname, ()):
        node = call.kwarg(param)
        if node is None and idx is not None and idx < len(call.node.args):
            node = call.node.args[idx]
        if node is not None:
            out.append((node, view, call.scope))
    return out


def _seed_flags(ctx, lex: dict) -> list:
    names = set(lex.get("seed_settings", ["seed"]))
    found = [s for s in option_settings(ctx) if s.name in names and s.source == "argparse"]
    found += [s for s in config_settings(ctx) if s.name in names and not isinstance(s.value, (list, dict))]
    return sorted(found, key=lambda s: (s.file, s.line))


_SEED_LEAVES = {"seed", "manual_seed", "manual_seed_all", "seed_everything", "set_seed", "set_random_seed", "PRNGKey",
                "default_rng", "RandomState"}


def _may_seed(call) -> bool:
    """A cheap look at an index CallSite: could this call seed an RNG?"""
    leafname = call.callee.rsplit(".", 1)[-1]
    if leafname in _SEED_LEAVES:
        return True
    if leafname == "key":
        return "random" in call.callee
    if leafname in ("Generator", "Random", "make", "make_vec"):
        return True  # RNG objects and environments, which must be seeded themselves
    if leafname == "reset":
        return any(k == "seed" for k, _ in call.kwargs)
    return False


def _seed_views(ctx, scope: str | None, lex: dict) -> list[FileView]:
    """Files with seeding calls, and files calling the repo's seeding helpers (to follow the seed argument);
    chosen from the index's call sites when it has them, so other files are never parsed."""
    paths = python_paths(ctx, scope)
    if not any(f.calls for f in ctx.index.files.values()):
        return views_mentioning(ctx, SEED_WORDS, scope)
    extra = set(lex.get("seeding_leaves", []))

    def calling(names: set[str]) -> list[str]:
        files = {c.span.file for n in sorted(names) for c in ctx.index.calls_with_leaf(n) if c.callee.rsplit(".", 1)[-1] == n}
        return [p for p in paths if p in files]

    leaves = set(_SEED_LEAVES) | {"key", "Generator", "Random", "make", "make_vec", "reset"} | extra
    seeding = {c.span.file for leaf in sorted(leaves) for c in ctx.index.calls_with_leaf(leaf)
               if _may_seed(c) or c.callee.rsplit(".", 1)[-1] in extra}  # the index's calls by leaf: no full scan
    first = [p for p in paths if p in seeding]
    views = [v for p in first if (v := file_view(ctx, p)) is not None]
    helpers = {fn.name for v in views for fn in v.functions.values() if any(_is_seeding(c, lex) for c in fn.calls)}
    seen = set(first)
    for path in calling(helpers) if helpers else []:
        if path not in seen and (view := file_view(ctx, path)) is not None:
            views.append(view)
    return views


def seed_calls(ctx, scope: str | None, lex: dict) -> tuple[list[SeedCall], list[FileView]]:
    """Once per scope and lexicon (``seeded`` and ``seeds`` both ask); callers must not mutate the lists."""
    key = json.dumps({k: lex.get(k) for k in _SEED_CALL_LEXICON}, sort_keys=True, default=repr)
    return ctx.memo(f"protocol.seed_calls:{scope or ''}:{key}", lambda: _seed_calls(ctx, scope, lex))


_SEED_CALL_LEXICON = ("seeding_calls", "seeding_leaves", "rng_constructors")  # all that seed calls depend on


def _seed_calls(ctx, scope: str | None, lex: dict) -> tuple[list[SeedCall], list[FileView]]:
    views = _ViewList(_seed_views(ctx, scope, lex))
    out = []
    for view in views:
        for call in view.calls:
            if _is_seeding(call, lex) and scope_admits(scope, call.scope):
                out.append(SeedCall(call, _from_setting(_arg(call), view, call.scope, views)))
    out.sort(key=lambda s: (s.call.file, s.call.line))
    return out, views


def _constructor_kind(call: CallView, lex: dict) -> str | None:
    """How an RNG object built by this call is seeded (`argument` or `method`), None when it builds none."""
    constructors = lex.get("rng_constructors") or {}
    exact, suffixes = _api_forms(tuple(constructors))
    if not (call.qual in exact or call.qual.endswith(suffixes)):
        return None  # no constructor matches: the loop below would find none (a C-speed test per call first)
    for api, how in constructors.items():
        if call.qual == api or call.qual.endswith("." + api):
            return how
    return None


@dataclass(frozen=True)
class Seedable:
    """Something with its own RNG state (an RNG object, an environment) and the seeding calls that seed it."""

    what: str
    call: CallView
    seeded_by: frozenset[int]  # id() of the seeding call nodes


def _assigned_names(view: FileView) -> dict[int, str]:
    """id(value node) -> the dotted name it is assigned to (`g = torch.Generator()`, `self.rng = ...`)."""
    out: dict[int, str] = {}
    for node in ast.walk(view.tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            name = dotted(node.targets[0])
            if name:
                out[id(node.value)] = name
    return out


def _returned_names(fn) -> set[str]:
    return {dotted(n.value) or "" for n in own_statements(fn.node.body) if isinstance(n, ast.Return) and n.value is not None}


def _seedables(views: list[FileView], lex: dict, scope: str | None) -> list[Seedable]:
    """RNG objects (`torch.Generator()`, `np.random.default_rng(...)`) and environments reset where they are made:
    each needs a seeding of its own, which the global seeds do not give it."""
    envs = set(lex.get("env_constructors") or [])
    methods = set(lex.get("object_seeding_methods") or ["manual_seed", "seed"])
    out = []
    for view in views:
        calls = [c for c in view.calls if scope_admits(scope, c.scope)]
        made = [(call, _constructor_kind(call, lex), _matches(call.qual, envs)) for call in calls]
        made = [(call, kind, is_env) for call, kind, is_env in made if kind is not None or is_env]
        names = _assigned_names(view) if made else {}  # a walk of the tree only where an RNG object is made
        for call, kind, is_env in made:
            target = names.get(id(call.node))
            seeded: set[int] = set()
            if kind == "argument" and _arg(call) is not None:
                seeded.add(id(call.node))
            for other in calls:
                func = other.node.func
                if not (isinstance(func, ast.Attribute) and (other.node.args or other.node.keywords)):
                    continue
                chained = func.value is call.node
                named = target is not None and dotted(func.value) == target and (
                    other.scope == call.scope or target.startswith("self.")
                )
                if not (chained or named):
                    continue
                if (kind is not None and func.attr in methods) or (
                    is_env and (func.attr == "seed" or (func.attr == "reset" and other.kwarg("seed") is not None))
                ):
                    seeded.add(id(other.node))
            if is_env:
                fn = view.functions.get(call.scope)
                resets = [c for c in calls if target and c.name == f"{target}.reset" and c.scope == call.scope]
                if target is None or fn is None or not resets or target in _returned_names(fn):
                    continue  # made here but reset (and so seeded) elsewhere, or not ours to judge
            out.append(Seedable("environment" if is_env else call.name, call, frozenset(seeded)))
    return out


def _wiring_calls(seeding: CallView, views: list[FileView], lex: dict) -> list[CallView]:
    """The calls of the repo helper a seeding call sits in (`set_seed(args.seed)`): what connects it to the run."""
    if seeding.scope == "<module>":
        return []
    name = seeding.scope.rsplit(".", 1)[-1]
    return [c for v in views for c in v.calls
            if c.leaf == name and c.scope != seeding.scope and not _is_seeding(c, lex)]


def _family_draws(ctx, scope: str | None, lex: dict) -> dict:
    """The first draw from each RNG family the code uses (exact API names, and name suffixes such as
    `action_space.sample` for objects a family owns)."""
    out: dict = {}
    families: dict = lex.get("families", {})
    for name in sorted(families):
        apis = families[name].get("draws", [])
        draw = min(
            (
                c
                for api in apis
                for c in ctx.index.calls_to(api)
                if c.qualname == api  # exact: `random.random` must not match `numpy.random.random`
                and ctx.index.files[c.span.file].role.value == "code"
                and scope_admits(scope, c.scope)
            ),
            key=_call_site,
            default=None,
        )
        suffixes = tuple("." + s for s in families[name].get("draw_suffixes", []))
        if suffixes and draw is None:
            draw = min(
                (
                    c
                    for p in python_paths(ctx, scope)
                    for c in ctx.index.files[p].calls
                    if c.callee.endswith(suffixes) and scope_admits(scope, c.scope)
                ),
                key=_call_site,
                default=None,
            )
        if draw is not None:
            out[name] = draw
    return out


def _call_site(call) -> tuple[str, int]:
    return call.span.file, call.span.line


def _seeds_family(call: SeedCall, family: dict) -> bool:
    qual = call.call.qual or call.call.name
    return _matches(qual, family.get("seeders", [])) or any(
        call.call.name.endswith("." + s) for s in family.get("seeder_suffixes", [])
    )


def _problem(calls: list[SeedCall], flags: list, params: dict, lex: dict, draws: dict, seedables: list[Seedable]):
    """What is wrong with the seeding these reached calls give: (score, message, the call or draw to cite),
    or None when it is sound. Pure, so the verdict can be re-asked without any one call."""
    if not calls:
        return 0.0, "no RNG seeding call (random/numpy/torch/jax/tf) found", None
    # The flag must reach the global RNGs; an evaluation env seeded from it does not seed training.
    global_calls = [s for s in calls if s.call.leaf != "reset" and not set(tokens(s.call.receiver())) & _ENV_TOKENS]
    judged = global_calls or calls
    if flags and params.get("flag", True) and not any(s.uses_flag for s in judged):
        flag = flags[0]
        return 0.5, (f"the seed setting `{flag.name}` ({flag.file}:{flag.line}) never reaches a seeding call; "
                     f"seeds are fixed literals"), None
    families: dict = lex.get("families", {})
    quals = [s.call.qual or s.call.name for s in calls]
    universal = any(_matches(q, lex.get("universal_seeders", [])) for q in quals)
    for name in sorted(draws):
        family = families[name]
        if family.get("universal", True) and universal:
            continue
        if not any(_seeds_family(s, family) for s in calls):
            draw = draws[name]
            return 0.75, f"the {name} RNG is drawn from ({draw.span.file}:{draw.span.line} {draw.qualname}) but never seeded", draw
    present = {id(s.call.node) for s in calls}
    for obj in seedables:
        if not obj.seeded_by & present:
            return 0.75, f"the {obj.what} made at {obj.call.file}:{obj.call.line} is never seeded", obj.call
    return None


def evaluate_seeded(params: dict, ctx, scope: str | None, rule: dict) -> CheckResult:
    lex = rule.get("lexicon", {})
    calls, views = seed_calls(ctx, scope, lex)
    flags = _seed_flags(ctx, lex)
    flag_ev = [evidence(ctx, s.file, s.line, "setting") for s in flags]
    if not calls:
        return CheckResult.failed(KIND, Status.missing, "no RNG seeding call (random/numpy/torch/jax/tf) found",
                                  [evidence(ctx, s.file, s.line, "missing-near") for s in flags])
    graph = reach(ctx)
    reached = [s for s in calls if graph.reaches(s.call.file, s.call.scope)]
    call_ev = [evidence(ctx, s.call.file, s.call.node, "rule") for s in (reached or calls)]
    if not reached:
        where = ", ".join(f"{s.call.file}:{s.call.line}" for s in calls[:3])
        return CheckResult.partial(KIND, 0.75, f"RNGs are seeded ({where}) but no entry point reaches the seeding",
                                   sorted_evidence(call_ev), taxonomy="unwired")
    draws = _family_draws(ctx, scope, lex)
    seedables = [o for o in _seedables(views, lex, scope) if graph.reaches(o.call.file, o.call.scope)]
    problem = _problem(reached, flags, params, lex, draws, seedables)
    if problem is not None:
        score, message, cite = problem
        extra = []
        if cite is not None and hasattr(cite, "span"):
            extra = [evidence(ctx, cite.span.file, cite.span.line, "rule")]
        elif cite is not None:
            extra = [evidence(ctx, cite.file, cite.node, "rule")]
        return CheckResult.partial(KIND, score, message, sorted_evidence(call_ev + flag_ev + extra))
    # What the pass rests on: a call is `rule` evidence when the verdict would fail without it, `presence`
    # when only its being there counts (its seed value is never judged), `redundant` when it changes nothing
    # (torch.cuda.manual_seed_all after torch.manual_seed; numpy seeded where nothing draws from numpy).
    cited = []
    for s in reached:
        others = [r for r in reached if r is not s]
        if _problem(others, flags, params, lex, draws, seedables) is None:
            role, note = "redundant", "the verdict holds without this call"
        elif not s.uses_flag or _problem(others + [SeedCall(s.call, False)], flags, params, lex, draws, seedables) is None:
            role, note = "presence", "needed, whatever seed value it passes"
        else:
            role, note = "rule", "the only call the seed setting reaches"
        cited.append(evidence(ctx, s.call.file, s.call.node, role, note=note))
        if role != "redundant":
            cited += [evidence(ctx, c.file, c.node, "presence", note=f"calls the seeding in {s.call.scope}")
                      for c in _wiring_calls(s.call, views, lex)]
    apis = sorted({s.call.name for s in reached})
    return CheckResult.passed(KIND, f"RNGs seeded via {', '.join(apis)} on the entry path", sorted_evidence(cited + flag_ev))


def _matches(qual: str, apis: list[str]) -> bool:
    return any(qual == api or qual.endswith("." + api) for api in apis)


# ----- seeds: how many seeds / runs ----------------------------------------------------------------------
_SHELL_FOR = re.compile(r"^\s*for\s+(\w+)\s+in\s+(.+?)\s*(?:;\s*do\b.*)?$")
_SEQ = re.compile(r"\$\(\s*seq\s+([-\d\s]+)\)|`\s*seq\s+([-\d\s]+)`")
_BRACE = re.compile(r"\{(-?\d+)\.\.(-?\d+)\}")
_ARRAY = re.compile(r"^\s*(\w+)=\(([^)]*)\)")
_HYDRA = re.compile(r"\b(\w*seed\w*)=((?:[-\w.]+,)+[-\w.]+)")
_PY_RUN_LOOP = re.compile(
    r"for\s+[\w, ]*\b(\w*seed\w*|runs?|run_id|run_idx|trials?|trial_\w+|repeats?|repetitions?|reps?_\w+)\s+in\b|"
    r"for\s+[\w, ]+\s+in\s+[^\n:]*seed",
    re.IGNORECASE,
)
_RUN_TOKENS = {"seed", "seeds", "run", "runs", "trial", "trials", "rep", "reps", "repeat", "repeats", "repetition",
               "replicate", "s"}


@dataclass(frozen=True)
class SeedCount:
    count: int
    file: str
    line: int
    end_line: int
    how: str


def _count_shell_items(text: str, arrays: dict[str, int]) -> int | None:
    seq = _SEQ.search(text)
    if seq:
        nums = [int(x) for x in (seq.group(1) or seq.group(2)).split()]
        if len(nums) == 1:
            return max(nums[0], 0)
        if len(nums) == 2:
            return max(nums[1] - nums[0] + 1, 0)
        if len(nums) == 3 and nums[1]:
            return max(len(range(nums[0], nums[2] + (1 if nums[1] > 0 else -1), nums[1])), 0)
        return None
    brace = _BRACE.search(text)
    if brace:
        return abs(int(brace.group(2)) - int(brace.group(1))) + 1
    array = re.search(r"\$\{(\w+)\[@\]\}", text)
    if array:
        return arrays.get(array.group(1))
    words = [w for w in text.replace('"', " ").split() if w]
    if words and not any(w.startswith("$") for w in words):
        return len(words)
    return None


def shell_counts(ctx) -> list[SeedCount]:
    out = []
    for path, facts in sorted(ctx.index.files.items()):
        if facts.language != Language.shell:
            continue
        lines = text_of(ctx, path).splitlines()
        arrays = {}
        for line in lines:
            m = _ARRAY.match(line)
            if m:
                arrays[m.group(1)] = len(m.group(2).split())
        for i, line in enumerate(lines, 1):
            for hydra in _HYDRA.finditer(line):
                out.append(SeedCount(len(hydra.group(2).split(",")), path, i, i, f"Hydra multirun {hydra.group(0)}"))
            m = _SHELL_FOR.match(line)
            if not m:
                continue
            var, items = m.group(1), m.group(2)
            body = "\n".join(lines[i : i + 30])
            body = body.split("done", 1)[0]
            uses = re.search(rf"seed\w*[ =]+\"?\$\{{?{var}\b", body, re.IGNORECASE)
            if not uses and not (set(tokens(var)) & _RUN_TOKENS):
                continue
            count = _count_shell_items(items, arrays)
            if count is not None:
                out.append(SeedCount(count, path, i, i, f"shell loop `for {var} in {items.strip()}`"))
    return out


def python_counts(ctx, scope: str | None) -> list[SeedCount]:
    out = []
    for view in views_mentioning(ctx, ("seed", "run", "trial", "rep"), scope, pattern=_PY_RUN_LOOP):
        bodies: list[tuple[str, list[ast.stmt]]] = [("<module>", view.tree.body)]
        bodies += [(q, f.node.body) for q, f in view.functions.items()]
        for qual, body in bodies:
            if not scope_admits(scope, qual):
                continue
            for stmt in own_statements(body):
                if not isinstance(stmt, (ast.For, ast.AsyncFor)):
                    continue
                var_names = [dotted(n) or "" for n in ast.walk(stmt.target) if isinstance(n, ast.Name)]
                iter_text = dotted(stmt.iter) or ""
                if not any(set(tokens(v)) & _RUN_TOKENS - {"s"} for v in var_names) and not (
                    set(tokens(iter_text)) & {"seed", "seeds"}
                ):
                    continue
                resolver = Resolver(ctx, view, body)
                value = resolver.value(stmt.iter)
                if isinstance(stmt.iter, ast.Call) and dotted(stmt.iter.func) == "enumerate" and stmt.iter.args:
                    value = resolver.value(stmt.iter.args[0])
                if isinstance(value, list) and value:
                    how = f"loop `for {', '.join(var_names)} in {ast.unparse(stmt.iter)[:60]}`"
                    if resolver.trail:
                        how += f" ({resolver.trail[-1].name} from {resolver.trail[-1].file}:{resolver.trail[-1].line})"
                    out.append(SeedCount(len(value), view.path, stmt.lineno, stmt.lineno, how))
    return out



def setting_counts(ctx, lex: dict) -> list[SeedCount]:
    out = []
    list_keys = set(lex.get("seed_lists", ["seeds"]))
    count_keys = set(lex.get("seed_counts", ["num_seeds", "n_seeds", "num_runs", "n_runs"]))
    for s in config_settings(ctx) + option_settings(ctx):
        if s.name in list_keys and isinstance(s.value, list):
            out.append(SeedCount(len(s.value), s.file, s.line, s.line, f"setting `{s.path}` lists {len(s.value)} seeds"))
        elif s.name in count_keys:
            eff = setting(ctx, s.name)
            if eff is not None and isinstance(eff.value, int) and not isinstance(eff.value, bool):
                out.append(SeedCount(eff.value, eff.file, eff.line, eff.line, f"setting `{s.path}` = {eff.value}"))
    return out


def launch_counts(ctx) -> list[SeedCount]:
    """Several launch lines of one script that differ only in --seed."""
    per_target: dict[str, dict[str, tuple[str, int]]] = {}
    for s in option_settings(ctx):
        if s.source == "launch" and s.name in ("seed", "random_seed"):
            per_target.setdefault(s.file, {})[str(s.value)] = (s.file, s.line)
    out = []
    for file, values in sorted(per_target.items()):
        if len(values) > 1 and not any(v.startswith("$") for v in values):
            lines = sorted(line for _, line in values.values())
            out.append(SeedCount(len(values), file, lines[0], lines[-1], f"{len(values)} launches with distinct --seed"))
    return out


def evaluate_seeds(params: dict, ctx, scope: str | None, rule: dict) -> CheckResult:
    from verifier.analysis.protocol import load_rule

    lex = {**((load_rule("seeded") or {}).get("lexicon") or {}), **(rule.get("lexicon") or {})}
    expect = int(params["expect"])
    counts = shell_counts(ctx) + python_counts(ctx, scope) + launch_counts(ctx)
    if not counts:
        counts = setting_counts(ctx, lex)
    if counts:
        best = max(counts, key=lambda c: (c.count == expect, c.count, -ord(c.file[0]) if c.file else 0))
        ev = [evidence(ctx, best.file, best.line, "rule", end=best.end_line)]
        if best.count == expect:
            return CheckResult.passed(KIND, f"{best.count} seeds/runs: {best.how}", ev, count=best.count)
        if best.count > expect:
            return CheckResult.partial(KIND, 0.75, f"{best.count} seeds/runs instead of {expect}: {best.how}", ev,
                                       count=best.count)
        return CheckResult.partial(KIND, 0.5, f"{best.count} seeds/runs instead of {expect}: {best.how}", ev,
                                   count=best.count)
    calls, _ = seed_calls(ctx, scope, lex)
    flags = _seed_flags(ctx, lex)
    if calls or flags:
        ev = [evidence(ctx, s.call.file, s.call.node, "rule") for s in calls[:3]]
        ev += [evidence(ctx, f.file, f.line, "setting") for f in flags[:2]]
        if expect == 1:
            return CheckResult.passed(KIND, "a single seeded run", sorted_evidence(ev), count=1)
        return CheckResult.partial(KIND, 0.5, f"one seed per run and nothing runs {expect} seeds", sorted_evidence(ev),
                                   count=1)
    return CheckResult.failed(KIND, Status.missing, f"no seeds and no loop over {expect} runs found", [])


def evaluate(params: dict, ctx, scope: str | None, rule: dict) -> CheckResult:
    if rule.get("id") == "seeds":
        return evaluate_seeds(params, ctx, scope, rule)
    return evaluate_seeded(params, ctx, scope, rule)


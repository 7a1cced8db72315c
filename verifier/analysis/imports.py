"""Which repo definition a name in a file refers to, through imports and package re-exports.

Built once per run from the index's Import and Definition records (no file is parsed here); the call graph,
the ``call`` check's target matching and ``exists`` lookups all resolve names through it.
"""

from __future__ import annotations

from collections import defaultdict

from verifier.index.facts import Definition, Import
from verifier.index.python_facts import module_name
from verifier.index.repo import RepoIndex

MAX_REEXPORT_HOPS = 4


class ModuleMap:
    """Module names <-> repo files, and dotted-name -> Definition resolution."""

    def __init__(self, index: RepoIndex) -> None:
        self.index = index
        self._module_to_path: dict[str, str] = {}
        self._path_to_module: dict[str, str] = {}
        self._defs: dict[str, dict[str, Definition]] = defaultdict(dict)
        self._imports: dict[str, dict[str, Import]] = {}
        suffix_owners: dict[str, set[str]] = defaultdict(set)
        for path in index.python_files(role=None):
            facts = index.files[path]
            module = module_name(path)
            for d in facts.definitions:
                self._defs[path].setdefault(d.qualname, d)
                if d.module:
                    module = d.module
            self._path_to_module[path] = module
            self._module_to_path.setdefault(module, path)
            parts = module.split(".")
            # `src/pkg/mod.py` is imported as `pkg.mod`; scripts run from a sub-folder import siblings bare.
            for i in range(1, len(parts)):
                suffix_owners[".".join(parts[i:])].add(path)
            self._imports[path] = {imp.alias: imp for imp in facts.imports}
        for suffix, owners in suffix_owners.items():
            if len(owners) == 1 and suffix not in self._module_to_path:
                self._module_to_path[suffix] = next(iter(owners))

    # ----- modules -------------------------------------------------------------------------------------
    def module_of(self, path: str) -> str:
        return self._path_to_module.get(path) or module_name(path)

    def path_of(self, module: str) -> str | None:
        return self._module_to_path.get(module)

    def is_package(self, path: str) -> bool:
        return path.endswith("__init__.py")

    def absolute(self, path: str, imp: Import) -> str:
        """The absolute dotted name an import binds; ``import torch.nn`` binds ``torch`` itself."""
        if imp.name is None and imp.alias == imp.module.split(".", 1)[0]:
            return imp.alias
        if not imp.relative_level:
            return imp.qualified
        package = self.module_of(path).split(".")
        if not self.is_package(path):
            package = package[:-1]
        if imp.relative_level > 1:
            package = package[: max(len(package) - (imp.relative_level - 1), 0)]
        base = ".".join(p for p in package if p)
        module = imp.module.lstrip(".")
        # The index may have resolved the relative module already; resolve it here only when it has not.
        if base and not (module == base or module.startswith(base + ".")):
            module = f"{base}.{module}" if module else base
        return ".".join(p for p in (module, imp.name or "") if p)

    def import_named(self, path: str, alias: str) -> Import | None:
        return self._imports.get(path, {}).get(alias)

    def imported_paths(self, path: str) -> list[str]:
        """Repo files that ``path`` imports (module-level code there runs on import)."""
        out: set[str] = set()
        for imp in self._imports.get(path, {}).values():
            full = self.absolute(path, imp)
            for candidate in (full, full.rpartition(".")[0]):
                target = self.path_of(candidate) if candidate else None
                if target and target != path:
                    out.add(target)
                    break
        return sorted(out)

    # ----- names ---------------------------------------------------------------------------------------
    def qualify(self, path: str, dotted: str) -> str:
        """Rewrite a dotted name as written in ``path`` through that file's imports: ``nn.Conv2d`` ->
        ``torch.nn.Conv2d``; unchanged when its head is not imported."""
        head, _, rest = dotted.partition(".")
        imp = self.import_named(path, head)
        if imp is None:
            return dotted
        base = self.absolute(path, imp)
        return f"{base}.{rest}" if rest else base

    def local_definition(self, path: str, qualname: str) -> Definition | None:
        return self._defs.get(path, {}).get(qualname)

    def definitions_in(self, path: str) -> dict[str, Definition]:
        return self._defs.get(path, {})

    def resolve_in_file(self, path: str, dotted: str) -> Definition | None:
        """The repo definition ``dotted`` (as written in ``path``, at module level) refers to, if any."""
        local = self.local_definition(path, dotted)
        if local is not None:
            return local
        head = dotted.split(".", 1)[0]
        if self.import_named(path, head) is None:
            return None
        return self.resolve_qualified(self.qualify(path, dotted))

    def resolve_qualified(self, qualified: str, _hops: int = 0) -> Definition | None:
        """A fully qualified dotted name -> repo Definition, following ``__init__`` re-exports."""
        if _hops > MAX_REEXPORT_HOPS or not qualified:
            return None
        parts = qualified.split(".")
        for cut in range(len(parts) - 1, 0, -1):
            path = self.path_of(".".join(parts[:cut]))
            if path is None:
                continue
            rest = parts[cut:]
            found = self.local_definition(path, ".".join(rest))
            if found is not None:
                return found
            imp = self.import_named(path, rest[0])
            if imp is not None:
                target = ".".join([self.absolute(path, imp), *rest[1:]])
                if target != qualified:
                    return self.resolve_qualified(target, _hops + 1)
            return None
        return None


def module_map(ctx) -> ModuleMap:
    """The run's shared ModuleMap (memoised on the check Context)."""
    return ctx.memo("analysis.imports.module_map", lambda: ModuleMap(ctx.index))

"""Repository index: discovery, per-file facts, configs, launch scripts, notebooks, content-hash cache."""

from verifier.index.facts import (  # noqa: F401
    Binding,
    BindingKind,
    CallSite,
    Definition,
    FileFacts,
    FileRole,
    Import,
    Language,
    Launch,
    Note,
    Span,
)
from verifier.index.repo import RepoIndex  # noqa: F401

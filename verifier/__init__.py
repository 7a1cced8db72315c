"""sau-verify: deterministic checks that a repository implements what its paper claims."""

__version__ = "0.1.0"

"""The package version: ``[project] version`` in pyproject.toml (a test holds them equal),
readable without ``importlib.metadata``'s start-up cost."""

__version__ = "0.1.0"

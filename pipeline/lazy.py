"""The one ``__getattr__`` (PEP 562) of the packages that import their names on first use.

A package lists each name it offers by the module that defines it and sets
``__getattr__ = lazy_attributes(__name__, globals(), TABLE)``: the first access imports the
module and keeps the value in the package's namespace, so later ones are plain lookups.
"""

from __future__ import annotations

TYPE_CHECKING = False  # not imported from typing: the root package imports this module at the CLI's start
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any, Callable, Mapping, MutableMapping


def lazy_attributes(package: str, namespace: MutableMapping[str, Any],
                    modules: Mapping[str, str]) -> Callable[[str], Any]:
    """The ``__getattr__`` of ``package``: ``modules`` maps a name to its module's path (a
    name without a dot is a module of ``package``); any other name is an AttributeError."""

    def __getattr__(name: str) -> Any:
        from importlib import import_module

        module = modules.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(import_module(module if "." in module else f"{package}.{module}"), name)
        namespace[name] = value
        return value

    return __getattr__

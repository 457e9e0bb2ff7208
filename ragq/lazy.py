"""Package attributes that import their module on first access.

Adapter packages export every adapter, but importing the package must not pull in every vendor
library: a process that only uses one adapter never imports the others' dependencies.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping


def lazy_exports(package: str, modules: Mapping[str, str]) -> Callable[[str], object]:
    """A module-level ``__getattr__`` for ``package`` resolving ``name`` from ``modules[name]``;
    other names raise AttributeError as usual."""

    def __getattr__(name: str) -> object:
        module = modules.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(module), name)

    return __getattr__

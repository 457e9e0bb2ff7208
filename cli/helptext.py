"""How `ragq … --help` names things: the way docs/cli.md and most Unix tools do.

Typer's help shows a type beside every parameter (``--wait <bool>``, ``--collection <str>``) and
braces around required arguments (``ragq submit {tickets}``). People read ``--wait``,
``--collection NAME`` and ``ragq submit TICKETS``. :class:`App` is a ``typer.Typer`` whose
commands and groups apply one rule to every parameter when help is drawn:

- a flag shows no value at all;
- an option that takes a value shows its ``metavar`` (set per option where a word says more than
  the name, e.g. ``FILE``, ``N``, ``LABELS``), else its name in upper case;
- an argument shows its name in upper case, without a type, and without braces in the usage line.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import typer
from typer.core import TyperArgument, TyperCommand, TyperGroup, TyperOption

# Typer (0.29 on) ships its own copy of click; its Context and Parameter are typed as Any here
# rather than imported from the private ``typer._click``.
Params = list[Any]


class _Argument(TyperArgument):
    """A positional argument shown by its upper-case name only."""

    def display_type_rich(self, ctx: Any) -> str | None:
        return None

    def _usage_display_name(self) -> str:
        name = self.display_name_raw
        name = name if self.required else f"[{name}]"
        return name + ("..." if self.nargs != 1 else "")


def tidy(params: Params) -> Params:
    """Give ``params`` the help names described in the module docstring (in place)."""
    for param in params:
        if isinstance(param, TyperArgument):
            param.metavar = param.metavar or (param.name or "ARG").upper()
            param.__class__ = _Argument  # same state, help drawn as above
        elif isinstance(param, TyperOption):
            if param.is_flag:
                param.metavar = ""
            elif param.metavar is None:
                param.metavar = (param.name or "VALUE").upper()
    return params


class Command(TyperCommand):
    """A command whose parameters are :func:`tidy` in its help."""

    def get_params(self, ctx: Any) -> Params:
        return tidy(super().get_params(ctx))


class Group(TyperGroup):
    """A group whose own options (``--help``) are :func:`tidy` in its help."""

    def get_params(self, ctx: Any) -> Params:
        return tidy(super().get_params(ctx))


class App(typer.Typer):
    """``typer.Typer`` whose groups and commands are :class:`Group` and :class:`Command`."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(cls=Group, **kwargs)

    def command(self, *args: Any, **kwargs: Any) -> Callable[[Any], Any]:
        kwargs.setdefault("cls", Command)
        return super().command(*args, **kwargs)

"""What cli/helptext.py relies on in Typer, pinned so an upgrade that moves it fails here, by
name, rather than as help text that quietly changes shape.

The patch swaps the class of each ``TyperArgument`` for one overriding two hooks of Typer's
(``display_type_rich``, ``_usage_display_name``), sets ``metavar`` on options, and hooks
``get_params`` of Typer's command and group classes, passed as ``cls``. The first test pins
the help a plain Typer app draws: the look the patch exists to replace.
"""

from __future__ import annotations

import inspect
from typing import Any

import typer
import typer.main
from typer.core import TyperArgument, TyperCommand, TyperGroup, TyperOption


def _plain_command() -> tuple[Any, Any]:
    app = typer.Typer()

    @app.command()
    def run(tickets: str, collection: str = typer.Option("x", "--collection"),
            wait: bool = typer.Option(False, "--wait")) -> None:
        """Run."""

    @app.command()
    def other() -> None:
        """Other."""

    group = typer.main.get_command(app)
    assert isinstance(group, TyperGroup)
    command = group.commands["run"]
    assert isinstance(command, TyperCommand)
    return command, command.make_context("run", ["t"])


def _params(command: Any, ctx: Any) -> dict[str, Any]:
    return {p.name: p for p in command.get_params(ctx)}


def test_typers_own_help_shows_types_and_braces() -> None:
    command, ctx = _plain_command()
    params = _params(command, ctx)
    assert isinstance(params["tickets"], TyperArgument)
    assert isinstance(params["collection"], TyperOption)
    assert params["tickets"].get_help_record(ctx)[0] == "tickets <str>"
    assert params["tickets"].get_usage_pieces(ctx) == ["{tickets}"]
    assert params["collection"].get_help_record(ctx)[0] == "--collection <str>"
    assert params["wait"].is_flag and params["wait"].get_help_record(ctx)[0] == "--wait"


def test_an_arguments_help_goes_through_the_two_hooks_the_patch_overrides() -> None:
    command, ctx = _plain_command()
    argument = _params(command, ctx)["tickets"]

    class Hooked(TyperArgument):
        def display_type_rich(self, ctx: Any) -> str | None:
            return None

        def _usage_display_name(self) -> str:
            return "USAGE"

    argument.metavar = "TICKETS"
    assert argument.display_name_raw == "TICKETS"  # the metavar, when set
    assert argument.required and argument.nargs == 1
    argument.__class__ = Hooked  # as helptext.tidy does
    assert argument.get_help_record(ctx)[0] == "TICKETS"
    assert argument.get_usage_pieces(ctx) == ["USAGE"]


def test_an_options_metavar_replaces_its_type_in_help() -> None:
    command, ctx = _plain_command()
    option = _params(command, ctx)["collection"]
    option.metavar = "NAME"
    assert option.get_help_record(ctx)[0] == "--collection NAME"


def test_the_hooked_signatures() -> None:
    def names(function: Any) -> list[str]:
        return list(inspect.signature(function).parameters)

    assert names(TyperArgument.display_type_rich) == ["self", "ctx"]
    assert names(TyperArgument._usage_display_name) == ["self"]
    assert isinstance(TyperArgument.display_name_raw, property)
    assert names(TyperCommand.get_params) == ["self", "ctx"]
    assert names(TyperGroup.get_params) == ["self", "ctx"]
    assert "cls" in names(typer.Typer.__init__)
    assert "cls" in names(typer.Typer.command)

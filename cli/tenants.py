"""`ragq tenants list|set`: tenants' shares of the waiting line (issue 36)."""

from __future__ import annotations

from typing import Annotated, Any

import typer
from pydantic import ValidationError

from ragq.cli.helptext import App
from ragq.cli.output import console, emit_json, fail
from ragq.errors import InputError
from ragq.settings import Settings, build_settings

tenants_app = App(help="Tenants' shares of the waiting line: weight and max open jobs.",
                  no_args_is_help=True)
JsonFlag = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON.")]


def _settings() -> Settings:
    try:
        return build_settings()
    except ValidationError as exc:
        fail(f"invalid RAGQ_ settings: {exc}")


def print_tenants(views: list[dict[str, Any]]) -> None:
    """One line per tenant: share, open and waiting jobs."""
    for v in views:
        limit = "none" if v["max_open_jobs"] is None else v["max_open_jobs"]
        console.print(f"{v['tenant']}  weight={v['weight']}  max_open_jobs={limit}  "
                      f"open={v['open_jobs']}  waiting={v['waiting_jobs']}", highlight=False)


def list_tenants(settings: Settings, *, as_json: bool) -> None:
    from ragq.submission.tenants import tenant_views

    views = tenant_views(settings)
    if as_json:
        emit_json(views)
    else:
        print_tenants(views)


def set_tenant(settings: Settings, tenant: str, *, weight: int | None,
               max_open_jobs: str | None, as_json: bool) -> None:
    from ragq.submission.tenants import set_share

    given: dict[str, Any] = {}
    if weight is not None:
        given["weight"] = weight
    if max_open_jobs is not None:
        given["max_open_jobs"] = _limit(max_open_jobs)
    if not given:
        fail("nothing to set: give --weight and/or --max-open-jobs", code=2)
    try:
        view = set_share(settings, tenant, **given)
    except InputError as exc:
        fail(str(exc))
    if as_json:
        emit_json(view)
    else:
        print_tenants([view])


def _limit(text: str) -> int | None:
    """``--max-open-jobs``: a whole number, or ``none`` for no limit of the tenant's own."""
    if text.strip().lower() == "none":
        return None
    try:
        return int(text)
    except ValueError:
        fail(f"--max-open-jobs takes a whole number or none, got {text!r}", code=2)


@tenants_app.command("list")
def tenants_list(as_json: JsonFlag = False) -> None:
    """Tenants with a share set or jobs in the line: weight, max open jobs, open and waiting
    jobs."""
    list_tenants(_settings(), as_json=as_json)


@tenants_app.command("set")
def tenants_set(
    tenant: Annotated[str, typer.Argument(metavar="TENANT", help="The tenant's name.")],
    weight: Annotated[int | None, typer.Option(
        min=1, help="Its share of the window against the others' weights (default 1).")]
    = None,
    max_open_jobs: Annotated[str | None, typer.Option(
        "--max-open-jobs", metavar="N|none",
        help="Most jobs it may have open at once; none: only the window limits it.")] = None,
    as_json: JsonFlag = False,
) -> None:
    """Set a tenant's share of the waiting line; what is not given keeps its value."""
    set_tenant(_settings(), tenant, weight=weight, max_open_jobs=max_open_jobs,
               as_json=as_json)

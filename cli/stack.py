"""`ragq up`, `ragq down`, `ragq status` (of the stack) and `ragq db`."""

from __future__ import annotations

from contextlib import nullcontext
from datetime import UTC, datetime
from typing import Annotated, Any

import typer
from rich.table import Table

from ragq.cli.output import console, emit_json
from ragq.cli.tenants import print_tenants
from ragq.settings import Settings
from ragq.workers import supervisor
from ragq.workers.client import ping_workers
from ragq.workers.stack_state import effective_broker_url, load_state

JsonFlag = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON.")]


def up(settings: Settings, *, flower: bool, as_json: bool, api: bool = False) -> None:
    with nullcontext() if as_json else console.status("starting the stack…"):
        state = supervisor.up(settings, flower=flower, api=api)
    if as_json:
        emit_json(state.model_dump())
        return
    console.print(f"[green]ragq is up[/] (home {settings.home.resolve()})")
    _print_processes(settings)
    if flower:
        from ragq.workers.flower import FLOWER_USER, flower_auth_file, flower_password

        console.print(f"Flower: http://{settings.embedded_host}:{settings.flower_port} "
                      f"(user {FLOWER_USER}, password {flower_password(settings)}; kept in "
                      f"{flower_auth_file(settings)})", highlight=False, soft_wrap=True)
    if api:
        console.print(f"API: http://{settings.api_host}:{settings.api_port} (OpenAPI at /docs)")


def down(settings: Settings, *, as_json: bool) -> None:
    stopped = supervisor.down(settings)
    if as_json:
        emit_json({"stopped": stopped})
    else:
        console.print(f"stopped: {', '.join(stopped) or 'nothing was running'}")


def stack_status(settings: Settings, *, as_json: bool) -> None:
    state = load_state(settings)
    broker = effective_broker_url(settings)
    workers = ping_workers(settings, timeout_s=1.0) if broker else []
    report: dict[str, Any] = {
        "home": str(settings.home.resolve()),
        "broker_url": broker,
        "ledger_url": settings.ledger_url,
        "vector_store": settings.qdrant_url or str(settings.vectors_dir.resolve()),
        "processes": [
            {"name": p.name, "pid": p.pid, "running": p.is_running(), "restarts": p.restarts,
             "last_restart_at": p.last_restart_at, "last_outage_s": p.last_outage_s,
             "log": p.log}
            for p in (state.processes if state else [])
        ],
        "workers": workers,
        "tenants": _tenants(settings),
    }
    if as_json:
        emit_json(report)
        return
    console.print(f"broker: {broker or 'not running (ragq up)'}")
    console.print(f"ledger: {report['ledger_url']}")
    console.print(f"vectors: {report['vector_store']}")
    _print_processes(settings)
    console.print(f"workers answering: {', '.join(workers) or 'none'}")
    if report["tenants"]:
        console.print("tenants (waiting line):")
        print_tenants(report["tenants"])


def _tenants(settings: Settings) -> list[dict[str, Any]]:
    """Each tenant's share and open and waiting jobs; none when the ledger cannot be read
    (not created yet, or its server down): the stack's status still shows."""
    from ragq.ledger import ledger_exists
    from ragq.submission.tenants import tenant_views

    if not ledger_exists(settings.ledger_url):
        return []  # no ledger yet: reading would create an empty one
    try:
        return tenant_views(settings)
    except Exception:  # the status of a stack that is down must not fail on the ledger
        return []


def _print_processes(settings: Settings) -> None:
    state = load_state(settings)
    table = Table("process", "pid", "running", "restarts", "last restart", "log")
    for p in state.processes if state else []:
        table.add_row(p.name, str(p.pid), "yes" if p.is_running() else "[red]no[/]",
                      str(p.restarts), _restart_text(p.last_restart_at, p.last_outage_s), p.log)
    console.print(table)


def _restart_text(at: float | None, outage_s: float | None) -> str:
    """When the latest replacement was ready, and how long the process was out."""
    if at is None:
        return "–"
    when = datetime.fromtimestamp(at, tz=UTC).strftime("%H:%M:%S UTC")
    return f"{when} (out {outage_s or 0:.1f}s)"

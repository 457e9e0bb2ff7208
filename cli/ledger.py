"""`ragq ledger job ID` and `ragq ledger batch ID`: cost reports read from the ledger alone."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Annotated, TypeVar

import typer
from pydantic import BaseModel, ValidationError
from rich.table import Table

from ragq.cli.helptext import App
from ragq.cli.output import console, emit_json, fail
from ragq.errors import LedgerError
from ragq.schemas.reports import BatchReport, CostTotals, JobLedger
from ragq.settings import Settings, build_settings

ledger_app = App(help="Cost reports from the ledger: one job, one batch.",
                         no_args_is_help=True)
JsonFlag = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON.")]
Report = TypeVar("Report", bound=BaseModel)


def _settings() -> Settings:
    try:
        return build_settings()
    except ValidationError as exc:
        fail(f"invalid RAGQ_ settings: {exc}")


def _read(query: Callable[..., Report], target_id: str) -> Report:
    """Run one report query in a read-only session; an unknown id or a ledger that cannot be
    read ends the command with the reason and exit code 1."""
    from ragq.ledger import LedgerNotMigratedError, session_scope
    from ragq.workers.resources import resources_for

    try:
        with session_scope(resources_for(_settings()).engine, readonly=True) as session:
            return query(session, target_id)
    except LedgerNotMigratedError as exc:
        fail(f"{exc}; from the shell: ragq db upgrade")
    except LedgerError as exc:
        fail(str(exc))


def _usd(value: float | None) -> str:
    """Dollars to the cent's hundredth, or to 1e-6 for the tiny per-call amounts."""
    if value is None:
        return "—"
    return f"${value:,.4f}" if value == 0 or abs(value) >= 0.01 else f"${value:.6f}"


def _rate(value: float | None) -> str:
    return "—" if value is None else f"{value:.1%}"


def _time(at: datetime) -> str:
    return at.strftime("%H:%M:%S.%f")[:-3]


def _amount(dimension: str, value: float | None) -> str:
    if value is None:
        return "unlimited"
    return _usd(value) if dimension == "cost_usd" else f"{value:,.0f}"


@ledger_app.command("job")
def job(job_id: Annotated[str, typer.Argument(help="Job id.")], as_json: JsonFlag = False
        ) -> None:
    """Every budget charge of a job in order, its model calls, and its budget."""
    from ragq.ledger.reports import job_ledger

    report = _read(job_ledger, job_id)
    if as_json:
        emit_json(report.model_dump(mode="json"))
        return
    _print_job(report)


@ledger_app.command("batch")
def batch(batch_id: Annotated[str, typer.Argument(help="Batch id.")], as_json: JsonFlag = False
          ) -> None:
    """A batch's cost, tokens and calls, budget exhaustion, share sent to review, per route
    and overall."""
    from ragq.ledger.reports import batch_report

    report = _read(batch_report, batch_id)
    if as_json:
        emit_json(report.model_dump(mode="json"))
        return
    _print_batch(report)


def _columns(table: Table, names: list[str], *, text: frozenset[str] = frozenset(),
             wrap: str | frozenset[str] = "") -> Table:
    """Text columns (the first, and ``text``) left-aligned, numbers right-aligned; only the
    ``wrap`` column(s) may fold, every other cell is shown whole."""
    folds = {wrap} if isinstance(wrap, str) else set(wrap)
    left = {names[0], *folds, *text}
    for name in names:
        table.add_column(name, justify="left" if name in left else "right",
                         no_wrap=name not in folds, overflow="fold")
    return table


def _print_job(report: JobLedger) -> None:
    stop = f", stopped: {report.stop_reason}" if report.stop_reason else ""
    console.print(f"job [bold]{report.job_id}[/] {report.status}, route {report.route or '—'}"
                  f", budget profile {report.profile or '—'}{stop}; created "
                  f"{report.created_at:%Y-%m-%d %H:%M:%S} UTC", highlight=False)
    charges = _columns(Table(title="budget charges, in order"), [
        "time", "step", "dimension", "amount", "outcome", "idempotency key"],
        text=frozenset({"step", "dimension", "outcome"}), wrap="idempotency key")
    for c in report.charges:
        charges.add_row(_time(c.at), c.step or "—", c.dimension, _amount(c.dimension, c.amount),
                        c.outcome, c.idempotency_key,
                        style=None if c.outcome == "granted" else "red")
    console.print(charges)
    console.print(_model_calls_table(report))
    console.print(_dimensions_table(report))
    console.print(f"retrieval calls {report.retrieval_calls} "
                  f"({report.retrieval_cache_hits} cache hits)", highlight=False)
    if report.source_routes:
        console.print(_source_routes_table(report))
    if report.verifications:
        console.print(_verifications_table(report))
    if report.metadata_filters:
        console.print(_filters_table(report))


def _filters_table(report: JobLedger) -> Table:
    """Each search's metadata filters: what was proposed, kept or dropped, and why; and the
    fallback to the unfiltered search when the filtered one was weak."""
    out = _columns(Table(title="metadata filters"), ["sub-query", "query", "filter", "kept",
                                                     "why"],
                   text=frozenset({"query", "filter", "kept", "why"}),
                   wrap=frozenset({"query", "filter", "why"}))  # long texts, side by side
    for e in report.metadata_filters:
        where = "—" if e.round is None else f"{e.round}.{e.index}"
        for d in e.decisions:
            p = d.get("proposed") or {}
            shown = f"{p.get('field', '?')} {p.get('op', 'eq')} {p.get('value', '?')}"
            out.add_row(f"{where}#{e.attempt}", e.query[:60], shown,
                        "kept" if d.get("kept") else "dropped",
                        f"{d.get('reason', '')} (by {d.get('by', '?')})",
                        style=None if d.get("kept") else "yellow")
        if e.fallback:
            out.add_row(f"{where}#{e.attempt}", e.query[:60], "—", "fallback", e.fallback,
                        style="red")
    return out


def _source_routes_table(report: JobLedger) -> Table:
    """Where each sub-query of a job over several sources was sent, with every score."""
    out = _columns(Table(title="source routing"), ["sub-query", "text", "sources", "scores",
                                                   "by", "why"],
                   text=frozenset({"text", "sources", "scores", "by", "why"}), wrap="why")
    for r in report.source_routes:
        scores = ", ".join(f"{name} {score:.2f}" for name, score in r.scores.items())
        out.add_row(f"{r.round}.{r.index}", r.text, ", ".join(r.sources), scores, r.by,
                    r.reason)
    return out


def _verifications_table(report: JobLedger) -> Table:
    """Each round's verdict: the verifier's, or the evidence contract's check with the
    contract it checked."""
    out = _columns(Table(title="verification"), ["round", "sufficient", "confidence",
                                                 "follow-ups", "why"],
                   text=frozenset({"sufficient", "follow-ups", "why"}), wrap="why")
    for v in report.verifications:
        out.add_row(str(v.round), "yes" if v.sufficient else "no", f"{v.confidence:.2f}",
                    "; ".join(v.follow_up_queries), v.reason)
    return out


def _model_calls_table(report: JobLedger) -> Table:
    out = _columns(Table(title="model calls"), [
        "time", "role", "model", "prompt", "compl.", "cost", "ms", "status"],
        text=frozenset({"role", "status"}), wrap="model")
    for m in report.model_calls:
        out.add_row(_time(m.at), m.role, f"{m.provider}/{m.model}",
                    str(m.prompt_tokens), str(m.completion_tokens), _usd(m.cost_usd),
                    "—" if m.latency_ms is None else str(m.latency_ms), m.status)
    return out


def _dimensions_table(report: JobLedger) -> Table:
    out = _columns(Table(title="budget (granted charges only)"),
                   ["dimension", "limit", "granted", "refused charges"])
    for d in report.dimensions:
        out.add_row(d.dimension, _amount(d.dimension, d.limit), _amount(d.dimension, d.granted),
                    str(d.refused_charges))
    return out


Cells = list[tuple[str, Callable[[CostTotals], str]]]
_OUTCOME_CELLS: Cells = [
    ("jobs", lambda t: f"{t.jobs:,}"),
    ("completed", lambda t: f"{t.jobs_by_status.get('completed', 0):,}"),
    ("finished", lambda t: f"{t.finished_jobs:,}"),
    ("exhausted", lambda t: f"{t.budget_exhausted_jobs:,}"),
    ("rate", lambda t: _rate(t.budget_exhaustion_rate)),
    ("ran out of", lambda t: ", ".join(f"{d} {n}" for d, n in t.exhausted_dimensions.items())
     or "—"),
]
_COST_CELLS: Cells = [
    ("cost", lambda t: _usd(t.cost_usd)),
    ("/ completed", lambda t: _usd(t.cost_per_completed_job)),
    ("/ job", lambda t: _usd(t.cost_per_job_mean)),
    ("tokens", lambda t: f"{t.tokens:,}"),
    ("LLM calls", lambda t: f"{t.model_calls:,}"),
    ("retrievals", lambda t: f"{t.retrieval_calls:,}"),
]


def _route_table(report: BatchReport, title: str, cells: Cells) -> Table:
    out = _columns(Table(title=title), ["route", *[name for name, _ in cells]],
                   text=frozenset({"ran out of"}), wrap="ran out of")
    for route, totals in report.routes.items():
        out.add_row(route, *[cell(totals) for _, cell in cells])
    out.add_row("all", *[cell(report.totals) for _, cell in cells], style="bold")
    return out


def _print_batch(report: BatchReport) -> None:
    statuses = ", ".join(f"{s} {n}" for s, n in report.totals.jobs_by_status.items())
    console.print(f"batch [bold]{report.batch_id}[/] {report.status}: {statuses or 'no jobs'}",
                  highlight=False)
    console.print(_route_table(report, "outcomes per route", _OUTCOME_CELLS))
    console.print(_route_table(report, "cost per route (granted budget charges, USD)",
                               _COST_CELLS))
    totals = report.totals
    routes = ", ".join(f"{r} {t.escalated_jobs}" for r, t in report.routes.items()
                       if t.escalated_jobs)
    console.print(f"sent to review: {totals.escalated_jobs:,} of {totals.finished_jobs:,} "
                  f"finished jobs ({_rate(totals.escalation_rate)})"
                  + (f"; by route: {routes}" if routes else ""), highlight=False)

"""`ragq review list` and `ragq review resolve JOB (--answer FILE | --reject)`: the review
queue at the command line. The CLI reads every tenant's queue, as its other readers
do, and records its resolutions as ``cli``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from pydantic import ValidationError
from rich.table import Table

from ragq.cli.helptext import App
from ragq.cli.output import console, emit_json, fail
from ragq.errors import InputError
from ragq.settings import Settings, build_settings

review_app = App(help="The review queue: jobs escalated to a human.", no_args_is_help=True)
JsonFlag = Annotated[bool, typer.Option("--json", help="Print one JSON document on stdout.")]


def _settings() -> Settings:
    try:
        return build_settings()
    except ValidationError as exc:
        fail(f"invalid RAGQ_ settings: {exc}")


@review_app.command("list")
def list_(
    resolved: Annotated[bool, typer.Option(
        "--all", help="Also list resolved reviews, with their resolution.")] = False,
    limit: Annotated[int, typer.Option(metavar="N", min=1, max=10_000,
                                       help="At most N jobs.")] = 100,
    as_json: JsonFlag = False,
) -> None:
    """Jobs waiting for a reviewer, oldest first: question, draft answer, why."""
    from ragq import submission

    items = submission.review_queue(_settings(), pending=not resolved, limit=limit)
    if as_json:
        emit_json(items)
        return
    if not items:
        console.print("no job is waiting for review")
        return
    console.print(_table(items))


def _table(items: list[dict[str, Any]]) -> Table:
    table = Table(title="review queue")
    table.add_column("job", no_wrap=True)  # an id to copy: never folded
    for name in ("custom id", "status", "reasons", "question", "draft answer"):
        table.add_column(name, overflow="fold")
    for item in items:
        draft = item["draft_answer"] or "—"
        table.add_row(item["job_id"], item["custom_id"] or "—", item["status"],
                      ", ".join(item["reasons"]), item["question"],
                      draft if len(draft) <= 200 else draft[:199] + "…")
    return table


@review_app.command("resolve")
def resolve(
    job_id: Annotated[str, typer.Argument(metavar="JOB", help="The job id (job_…).")],
    answer: Annotated[Path | None, typer.Option(
        "--answer", metavar="FILE", help="A UTF-8 text file with the answer to send.")] = None,
    reject: Annotated[bool, typer.Option("--reject", help="Reject the draft answer.")] = False,
    note: Annotated[str | None, typer.Option(
        metavar="TEXT", help="Why: kept with the resolution in the ledger and the result.")]
    = None,
    as_json: JsonFlag = False,
) -> None:
    """Resolve a job waiting for review: send your answer (--answer FILE) or reject it."""
    from ragq import submission

    text = _read_answer(answer) if answer is not None else None
    resolution = submission.resolution_of(answer=text, reject=reject, note=note,
                                          reviewer=submission.CLI_REVIEWER)
    view = submission.resolve(_settings(), job_id, resolution)
    if as_json:
        emit_json(view)
        return
    console.print(f"job [bold]{job_id}[/] {view['status']} by {submission.CLI_REVIEWER}",
                  highlight=False)


def _read_answer(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise InputError("no such answer file", source=str(path)) from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read the answer: {exc}", source=str(path)) from exc

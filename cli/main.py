"""The `ragq` command. Each command parses its options, calls one core function, shapes output."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Annotated

import typer
from pydantic import ValidationError

from cli import documents, stack
from cli.output import emit_json, fail
from ragq.errors import RagqError
from ragq.settings import Settings, build_settings

app = typer.Typer(
    name="ragq", no_args_is_help=True, add_completion=False, pretty_exceptions_enable=False,
    help="Agentic retrieval-augmented answering as a distributed job system.",
)
db_app = typer.Typer(help="The ledger database.", no_args_is_help=True)
app.add_typer(db_app, name="db")

JsonFlag = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON.")]
CollectionOpt = Annotated[
    str | None, typer.Option("--collection", "-c", help="Collection (default: RAGQ_COLLECTION).")
]


def _settings() -> Settings:
    try:
        return build_settings()
    except ValidationError as exc:
        fail(f"invalid RAGQ_ settings: {exc}")


@app.command()
def up(
    flower: Annotated[bool, typer.Option("--flower", help="Also start Flower.")] = False,
    as_json: JsonFlag = False,
) -> None:
    """Start the stack: embedded broker (unless RAGQ_BROKER_URL is set) and Celery workers."""
    stack.up(_settings(), flower=flower, as_json=as_json)


@app.command()
def down(as_json: JsonFlag = False) -> None:
    """Stop exactly the processes `ragq up` started."""
    stack.down(_settings(), as_json=as_json)


@app.command()
def status(
    target: Annotated[str | None, typer.Argument(help="A batch or job id (default: the stack).")]
    = None,
    as_json: JsonFlag = False,
) -> None:
    """Show what runs (or, given an id, the status of a batch or job)."""
    if target is not None:
        fail(f"unknown id {target!r}: batches and jobs are not available yet")
    stack.stack_status(_settings(), as_json=as_json)


@app.command()
def ingest(
    path: Annotated[Path, typer.Argument(help="A JSONL file, a .md/.txt file or a folder.")],
    collection: CollectionOpt = None,
    as_json: JsonFlag = False,
) -> None:
    """Chunk, embed and upsert documents; bad lines are reported and skipped."""
    settings = _settings()
    documents.ingest(settings, path, collection=collection or settings.collection, as_json=as_json)


@app.command()
def search(
    query: Annotated[str, typer.Argument(help="What to look for.")],
    collection: CollectionOpt = None,
    top_k: Annotated[int, typer.Option("--top-k", "-k", min=1, max=200)] = 5,
    acl: Annotated[str | None, typer.Option(help="Comma-separated ACL labels of the reader.")]
    = "public",
    as_json: JsonFlag = False,
) -> None:
    """Dense search of a collection, filtered by ACL (a check that retrieval works)."""
    settings = _settings()
    labels = [a.strip() for a in acl.split(",") if a.strip()] if acl else None
    documents.search(settings, query, collection=collection or settings.collection, top_k=top_k,
                     acl=labels, as_json=as_json)


@db_app.command("upgrade")
def db_upgrade(as_json: JsonFlag = False) -> None:
    """Apply the ledger migrations (`ragq up` does this too)."""
    from ledger import current_revision, upgrade

    settings = _settings()
    upgrade(settings.ledger_url)
    revision = current_revision(settings.ledger_url)
    if as_json:
        emit_json({"database": settings.ledger_url, "revision": revision})
    else:
        typer.echo(f"{settings.ledger_url} is at revision {revision}")


def main() -> None:
    """Entry point: domain errors become one clear line on stderr and exit code 1."""
    logging.basicConfig(level=logging.WARNING)
    try:
        app()
    except RagqError as exc:
        fail(str(exc))

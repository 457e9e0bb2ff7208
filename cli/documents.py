"""`ragq ingest` and `ragq search`."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from rich.table import Table

from ragq.cli.output import console, emit_json, err_console, fail
from ragq.cli.progress import StageProgress

if TYPE_CHECKING:
    from ragq.ingestion.submit import IngestReport
from ragq.schemas.tasks import Task
from ragq.settings import Settings

SEARCH = Task.SEARCH


def ingest(settings: Settings, path: Path, *, collection: str, as_json: bool,
           description: str | None = None, schema_file: Path | None = None) -> None:
    """Ingest ``path``; progress (on stderr) starts with the first finished batch, so a bad
    path or a stopped stack prints its error alone."""
    from ragq.ingestion.submit import ingest_path

    with StageProgress(err_console, disable=as_json) as progress:
        report = ingest_path(settings, path, collection=collection,
                             on_progress=progress.stage("ingesting"), description=description,
                             schema_file=schema_file)
    summarize(report, settings, collection=collection, as_json=as_json)
    if report.error:
        fail(f"nothing ingested: {report.error} (run {report.run_id} ended as failed)")


def summarize(report: IngestReport, settings: Settings, *, collection: str,
              as_json: bool) -> None:
    """Print what an ingest did: counts, skipped lines, and what its embeddings cost."""
    for bad in report.bad_lines:
        err_console.print(f"[yellow]skipped[/] {bad}", highlight=False)
    c = report.counts
    tokens = c.get("embedding_tokens", 0)
    cost_usd = settings.prices.embedding_cost(tokens)  # RAGQ_PRICES, as the workers price it
    if as_json:
        emit_json({
            "run_id": report.run_id, "collection": collection, "documents": report.documents,
            "counts": report.counts, "embedding_tokens": tokens, "cost_usd": cost_usd,
            "error": report.error,
            "bad_lines": [{"source": b.source, "line": b.line, "reason": b.reason}
                          for b in report.bad_lines],
        })
        return
    console.print(
        f"collection [bold]{collection}[/]: {report.documents} documents "
        f"({c.get('new', 0)} new, {c.get('replace', 0)} replaced, {c.get('skip', 0)} unchanged, "
        f"{c.get('repair', 0)} repaired), {c.get('chunks', 0)} chunks written, "
        f"{len(report.bad_lines)} bad lines skipped; embeddings billed {tokens} tokens, "
        f"${cost_usd:.6f}"
    )


def search(settings: Settings, query: str, *, collection: str, top_k: int,
           acl: list[str] | None, as_json: bool, mode: str | None = None,
           fusion: str | None = None) -> None:
    """Search through the workers; ``mode``/``fusion`` None keep the settings' defaults."""
    from ragq.schemas.text import input_problem
    from ragq.submission import check_collection
    from ragq.workers.client import call

    check_collection(collection, source="--collection")
    if not query.strip() or input_problem(query):
        fail("the query must be non-blank, valid Unicode text")

    hits = cast(list[dict[str, Any]],  # the search task's JSON
                call(settings, SEARCH, collection, query, top_k, acl, mode, fusion))
    if as_json:
        emit_json(hits)
        return
    table = Table("#", "score", "doc", "title", "text")
    for rank, hit in enumerate(hits, start=1):
        text = str(hit.get("text", ""))
        table.add_row(str(rank), f"{hit['score']:.3f}", str(hit["doc_id"]), str(hit.get("title")),
                      text[:120] + ("…" if len(text) > 120 else ""))
    console.print(table)


def sources(settings: Settings, *, as_json: bool) -> None:
    """The tenant's sources: name, description, documents, past hits."""
    from ragq import submission

    listed = submission.source_list(settings, caller=submission.caller_of(settings))
    if as_json:
        emit_json({"object": "list", "data": listed})
        return
    table = Table("source", "documents", "hits", "description")
    for s in listed:
        table.add_row(s["name"], str(s["documents"]), str(s["hits"]), s["description"] or "–")
    console.print(table)


def source_show(settings: Settings, name: str, *, as_json: bool) -> None:
    """One source and its metadata schema, one row per field."""
    from ragq import submission
    from ragq.errors import NotFoundError

    try:
        detail = submission.source_detail(settings, caller=submission.caller_of(settings),
                                          name=name)
    except NotFoundError as exc:
        fail(str(exc))
    _show_source(detail, as_json=as_json)


def source_confirm(settings: Settings, name: str, fields: list[str], *, as_json: bool) -> None:
    """Confirm a source's inferred fields, then show it."""
    from ragq import submission
    from ragq.errors import InputError, NotFoundError
    from ragq.submission.source_schemas import confirm_source_fields

    try:
        detail = confirm_source_fields(settings, caller=submission.caller_of(settings),
                                       name=name, fields=fields)
    except (NotFoundError, InputError) as exc:
        fail(str(exc))
    _show_source(detail, as_json=as_json)


def _show_source(detail: dict[str, Any], *, as_json: bool) -> None:
    if as_json:
        emit_json(detail)
        return
    console.print(f"source [bold]{detail['name']}[/]: {detail['documents']} documents, "
                  f"{detail['hits']} hits; {detail['description'] or 'no description'}")
    fields = detail["metadata_schema"]["fields"]
    if not fields:
        console.print("no metadata schema: searches of this source are not filtered on metadata")
        return
    table = Table("field", "type", "filtered on", "description", "values")
    for f in fields:
        values = ", ".join(f.get("values") or [])
        table.add_row(f["name"], f["type"],
                      "no: inferred, `ragq sources confirm`" if f.get("inferred") else "yes",
                      f.get("description") or "–",
                      (values[:100] + "…") if len(values) > 100 else values or "–")
    console.print(table)

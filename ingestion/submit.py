"""Front-door side of ingest: validate input, open a run in the ledger, send the batches as a
chord to the workers, and follow its progress."""

from __future__ import annotations

import json
import math
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from celery import chord
from celery.result import AsyncResult

from ragq.errors import InputError, StackError
from ragq.ingestion.sources import BadLine, read_documents
from ragq.ledger import (
    add_ingest_counts,
    close_stale_ingest_runs,
    create_ingest_run,
    finish_ingest_run,
    get_ingest_run,
    register_source,
    session_scope,
    source_schema,
)
from ragq.orchestration.metadata_schema import (
    SchemaFileError,
    apply_override,
    infer_schema,
    merge_schemas,
)
from ragq.schemas.document import Document
from ragq.schemas.metadata import MetadataSchema
from ragq.schemas.statuses import IngestStatus
from ragq.schemas.tasks import Task
from ragq.schemas.text import collection_name_problem
from ragq.settings import Settings
from ragq.workers.client import client_app
from ragq.workers.resources import resources_for

Progress = Callable[[int, int], None]
FOLLOW_TIMEOUT_S = 3600.0


@dataclass
class IngestReport:
    """What an ingest did: per-action counts from the workers, and the lines it skipped;
    ``error`` says why the run failed (no valid document), None when it completed."""

    run_id: str
    collection: str
    documents: int
    bad_lines: list[BadLine] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    error: str | None = None


def load(path: Path) -> tuple[list[Document], list[BadLine]]:
    """Split the input into valid documents and bad lines. Raises InputError for a bad path."""
    try:
        items = list(read_documents(path))
    except (FileNotFoundError, ValueError) as exc:
        raise InputError(str(exc)) from exc
    docs = [i for i in items if isinstance(i, Document)]
    return docs, [i for i in items if isinstance(i, BadLine)]


def estimated_chunks(doc: Document, *, size_words: int, overlap_words: int) -> int:
    """About how many chunks ``doc`` makes (its words over the chunk stride; at least one)."""
    words = len(doc.text.split())
    stride = size_words - overlap_words
    return 1 + max(0, math.ceil((words - size_words) / stride))


def batches(docs: Sequence[Document], settings: Settings) -> list[list[Document]]:
    """``docs`` cut into ingest tasks of at most ``RAGQ_INGEST_BATCH_DOCS`` documents and about
    ``RAGQ_INGEST_BATCH_CHUNKS`` chunks (a longer document travels alone), so that one task's
    embedding work ends well inside the task bound on a loaded machine."""
    out: list[list[Document]] = []
    current: list[Document] = []
    chunks = 0
    for doc in docs:
        n = estimated_chunks(doc, size_words=settings.chunk_words,
                             overlap_words=settings.chunk_overlap_words)
        if current and (len(current) >= settings.ingest_batch_docs
                        or chunks + n > settings.ingest_batch_chunks):
            out.append(current)
            current, chunks = [], 0
        current.append(doc)
        chunks += n
    if current:
        out.append(current)
    return out


def _open_run(settings: Settings, path: Path, collection: str, docs: int, bad: int,
              timeout_s: float) -> str:
    """Open the run in the ledger, closing first the runs nobody follows any more (started
    longer ago than a front door waits: the process that followed them died)."""
    cutoff = datetime.now(UTC) - timedelta(seconds=max(timeout_s, FOLLOW_TIMEOUT_S))
    with session_scope(resources_for(settings).engine) as session:
        close_stale_ingest_runs(session, started_before=cutoff,
                                reason="abandoned: no process followed the run to its end")
        run_id = create_ingest_run(session, collection=collection, source_path=str(path),
                                   documents_total=docs).id
        add_ingest_counts(session, run_id=run_id, bad_lines=bad)
    return run_id


def _fail_run(settings: Settings, run_id: str, reason: str) -> None:
    with session_scope(resources_for(settings).engine) as session:
        finish_ingest_run(session, run_id=run_id, status=IngestStatus.FAILED, error=reason)


def source_schema_for(docs: Sequence[Document], stored: dict[str, Any] | None,
                      override: Mapping[str, Any] | None) -> MetadataSchema | None:
    """The source's metadata schema after ingesting ``docs``: the stored one, plus the fields
    the documents imply that it does not name, then the user's ``override`` file applied.
    None when nothing declares a field (the source filters on nothing, as before).
    Raises InputError naming what is wrong with ``override``."""
    schema = merge_schemas(MetadataSchema.model_validate(stored) if stored else None,
                           infer_schema(d.metadata for d in docs))
    if override is not None:
        try:
            schema = apply_override(schema, override)
        except SchemaFileError as exc:
            raise InputError(str(exc), source="--metadata-schema") from exc
    return schema if schema.fields or stored or override is not None else None


def read_schema_file(path: Path) -> dict[str, Any]:
    """The JSON object of a ``--metadata-schema`` file. Raises InputError when it is missing
    or not a JSON object."""
    try:
        loaded = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(f"cannot read metadata schema {path}: {exc}",
                         source="--metadata-schema") from exc
    if not isinstance(loaded, dict):
        raise InputError(f"metadata schema {path} must be a JSON object with 'fields'",
                         source="--metadata-schema")
    return loaded


def ingest_path(
    settings: Settings, path: Path, *, collection: str, on_progress: Progress | None = None,
    timeout_s: float = FOLLOW_TIMEOUT_S, description: str | None = None,
    schema_file: Path | None = None,
) -> IngestReport:
    """Ingest ``path`` into ``collection`` through the workers and wait for the end. The
    collection is registered as a source of the settings' tenant; ``description`` (when given)
    sets what the source router reads about it. Its metadata schema is inferred from the
    documents (kept over by a stored one) and overridden by ``schema_file`` (issue 37).

    A path without one valid document ends its run as failed (``report.error`` says why).
    Raises InputError for a bad path or collection name (no run is opened), and StackError when
    no worker finishes the run within ``timeout_s`` (the run is closed as failed).
    """
    problem = collection_name_problem(collection)
    if problem:
        raise InputError(problem, source="--collection")
    docs, bad = load(path)
    override = read_schema_file(schema_file) if schema_file is not None else None
    # The path first, then the stack, then the ledger: with the stack down the fix to name is
    # `ragq up` (which also migrates the ledger), not the ledger's missing tables.
    app = client_app(settings)
    run_id = _open_run(settings, path, collection, len(docs), len(bad), timeout_s)
    with session_scope(resources_for(settings).engine) as session:
        stored = source_schema(session, tenant=settings.tenant, name=collection)
        schema = source_schema_for(docs, stored, override)
        schema_json = schema.model_dump(mode="json") if schema is not None else None
        register_source(session, tenant=settings.tenant, name=collection,
                        description=description, metadata_schema=schema_json)
    report = IngestReport(run_id, collection, len(docs), bad)
    if not docs:
        report.error = (f"no valid document in {path}: {len(bad)} bad lines" if bad
                        else f"no document in {path}: it is empty")
        _fail_run(settings, run_id, report.error)
        return report
    parts = batches(docs, settings)
    header = [
        app.signature(
            Task.INGEST_DOCUMENTS,
            args=(run_id, collection, [d.model_dump(mode="json") for d in b]),
            kwargs={"metadata_schema": schema_json} if schema_json else {},
            argsrepr=f"({run_id!r}, {collection!r}, <{len(b)} documents>)",
        )
        for b in parts
    ]
    try:
        result = chord(header)(app.signature(Task.FINISH_INGEST, kwargs={"run_id": run_id}))
        report.counts = _follow(result, parts, on_progress, timeout_s,
                                ended=lambda: _run_ended(settings, run_id))
    except BaseException as exc:  # a timeout, a failed worker, Ctrl-C: the run ends here too
        _fail_run(settings, run_id, f"{type(exc).__name__}: {exc}"[:500])
        raise
    return report


#: How long the front door waits for a run's result once the ledger says its workers ended it.
RESULT_GRACE_S = 10.0


def _run_ended(settings: Settings, run_id: str) -> str | None:
    """The run's final status in the ledger (None while it runs)."""
    with session_scope(resources_for(settings).engine, readonly=True) as session:
        row = get_ingest_run(session, run_id=run_id)
    status = None if row is None else IngestStatus(row.status)
    return None if status in (None, IngestStatus.RUNNING) else str(status)


def _follow(result: AsyncResult, batches: list[list[Document]], on_progress: Progress | None,
            timeout_s: float, *, ended: Callable[[], str | None] = lambda: None,
            grace_s: float = RESULT_GRACE_S) -> dict[str, int]:
    """Poll the chord's header for progress, then return the body's totals.

    ``ended`` reads the run's status in the ledger, where the workers close it. A run they
    ended whose result still has not reached this process's result backend after
    :data:`RESULT_GRACE_S` never will: the front door and the workers use different result
    backends (a misconfiguration that otherwise waits out the whole timeout, silently)."""
    total = sum(len(b) for b in batches)
    group = result.parent
    deadline = time.monotonic() + timeout_s
    ended_at, final = None, ""
    while not result.ready():
        now = time.monotonic()
        if now > deadline:
            raise StackError(f"ingest did not finish within {timeout_s:.0f}s; are workers up?")
        if ended_at is None and (status := ended()) is not None:
            ended_at, final = now, status
        if ended_at is not None and now - ended_at > grace_s:
            raise StackError(
                f"the workers ended this ingest run ({final} in the ledger), but its result "
                "never reached this process's result backend "
                f"({without_password(_backend_url(result))}): the workers store results "
                "elsewhere. Give this process the workers' RAGQ_RESULT_BACKEND_URL (and "
                "RAGQ_BROKER_URL).")
        if on_progress is not None and group is not None:
            done = sum(len(b) for b, r in zip(batches, group.results, strict=True) if r.ready())
            on_progress(done, total)
        time.sleep(0.25)
    if result.failed():
        raise StackError(f"ingest failed: {result.result!r}")
    counts: dict[str, int] = result.result
    if on_progress is not None:
        on_progress(total, total)
    return counts


def _backend_url(result: AsyncResult) -> str:
    backend = result.backend
    return str(getattr(backend, "url", "") or type(backend).__name__)


def without_password(url: str) -> str:
    """``url`` with its password hidden, for an error message a user may paste anywhere."""
    return re.sub(r"//([^:/@]*):[^@]*@", r"//\1:***@", url)

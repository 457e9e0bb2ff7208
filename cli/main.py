"""The `ragq` command. Each command parses its options, calls one core function, shapes output.

Command modules import the core they call inside the command (the submission, ingestion and
evaluation packages pull in the ledger, Celery and more), so `ragq --help` starts in half a second.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer
from pydantic import ValidationError

from ragq.cli import documents, evaluate, jobs, service, stack
from ragq.cli.helptext import App
from ragq.cli.ledger import ledger_app
from ragq.cli.output import emit_json, fail
from ragq.cli.review import review_app
from ragq.cli.tenants import tenants_app
from ragq.errors import RagqError
from ragq.schemas.search import parse_fusion, parse_mode
from ragq.settings import Settings, build_settings
from ragq.workers.client import close_clients

app = App(
    name="ragq", no_args_is_help=True, add_completion=False, pretty_exceptions_enable=False,
    help="Agentic retrieval-augmented answering as a distributed job system.",
)
db_app = App(help="The ledger database.", no_args_is_help=True)
app.add_typer(db_app, name="db")
app.add_typer(service.keys_app, name="keys")
app.add_typer(service.webhooks_app, name="webhooks")
app.add_typer(ledger_app, name="ledger")
app.add_typer(review_app, name="review")
app.add_typer(tenants_app, name="tenants")
sources_app = App(help="Sources: collections with a description, for jobs searching several.",
                  no_args_is_help=True)
app.add_typer(sources_app, name="sources")

JsonFlag = Annotated[bool, typer.Option(
    "--json", help="Print one JSON document on stdout instead of text.")]
CollectionOpt = Annotated[str | None, typer.Option(
    "--collection", "-c", metavar="NAME", help="Collection (default: RAGQ_COLLECTION).")]
AclOpt = Annotated[str, typer.Option(
    metavar="LABELS", help="Comma-separated ACL labels of the reader, e.g. public,staff.")]


def _settings() -> Settings:
    try:
        return build_settings()
    except ValidationError as exc:
        fail(f"invalid RAGQ_ settings: {exc}")


def _option(parse: Callable[..., object], value: str | None, where: str) -> str | None:
    """``value`` checked by ``parse`` before anything is sent (a bad one fails here, naming the
    valid values); None stays None (the settings' default applies)."""
    if value is None:
        return None
    try:
        return str(parse(value, where=where))
    except ValueError as exc:
        fail(str(exc), code=2)


@app.command()
def up(
    flower: Annotated[bool, typer.Option("--flower", help="Also start Flower.")] = False,
    api: Annotated[bool, typer.Option("--api", help="Also serve the HTTP API.")] = False,
    as_json: JsonFlag = False,
) -> None:
    """Start the stack: embedded broker (unless RAGQ_BROKER_URL is set) and Celery workers."""
    stack.up(_settings(), flower=flower, api=api, as_json=as_json)


@app.command()
def down(as_json: JsonFlag = False) -> None:
    """Stop exactly the processes `ragq up` started."""
    stack.down(_settings(), as_json=as_json)


@app.command()
def status(
    target: Annotated[str | None, typer.Argument(
        metavar="ID", help="A batch or job id (default: the stack).")] = None,
    as_json: JsonFlag = False,
) -> None:
    """Show what runs (or, given an id, the status of a batch or job)."""
    if target is not None:
        jobs.status(_settings(), target, as_json=as_json)
        return
    stack.stack_status(_settings(), as_json=as_json)


@app.command()
def ingest(
    path: Annotated[Path, typer.Argument(help=(
        "A JSONL file of documents, a .md/.txt file, a folder of them, or a dataset folder "
        "(its corpus.jsonl)."))],
    collection: CollectionOpt = None,
    source_description: Annotated[str | None, typer.Option(
        "--source-description", metavar="TEXT",
        help="What the collection holds, in words: the source router reads it to send "
             "sub-queries here (sets or replaces it).")] = None,
    metadata_schema: Annotated[Path | None, typer.Option(
        "--metadata-schema", metavar="FILE",
        help="A JSON file declaring the source's filterable metadata fields "
             '({"fields": [{"name", "type", "description", "values"}], "drop": [...]}); '
             "overrides what ingest infers from the documents (see docs/metadata.md).")] = None,
    as_json: JsonFlag = False,
) -> None:
    """Chunk, embed and upsert documents; bad lines are reported and skipped. The collection
    is registered as a source, with the metadata fields its documents imply."""
    settings = _settings()
    documents.ingest(settings, path, collection=collection or settings.collection, as_json=as_json,
                     description=source_description, schema_file=metadata_schema)


@sources_app.command("show")
def sources_show(
    name: Annotated[str, typer.Argument(help="The source (collection) name.")],
    as_json: JsonFlag = False,
) -> None:
    """One source: its description, documents, past hits and metadata schema (the fields a
    sub-query's constraints may filter on)."""
    documents.source_show(_settings(), name, as_json=as_json)


@sources_app.command("confirm")
def sources_confirm(
    name: Annotated[str, typer.Argument(help="The source (collection) name.")],
    fields: Annotated[list[str] | None, typer.Argument(
        help="The inferred fields to confirm (default: every field).")] = None,
    as_json: JsonFlag = False,
) -> None:
    """Confirm metadata fields inferred at ingest: from the next search on, a sub-query's
    constraints may filter on them (an inferred field is never filtered on)."""
    documents.source_confirm(_settings(), name, fields or [], as_json=as_json)


@sources_app.command("list")
def sources_list(as_json: JsonFlag = False) -> None:
    """The tenant's sources: name, documents, past hits (chunks that reached an answer) and
    description."""
    documents.sources(_settings(), as_json=as_json)


SourcesOpt = Annotated[str | None, typer.Option(
    "--sources", metavar="NAMES",
    help='Comma-separated sources the jobs may search, or "all" (default: the collection).')]


def _sources(text: str | None) -> str | tuple[str, ...] | None:
    """``--sources`` as a selection: "all", or the names; one that names nothing (``","``)
    is refused, as every path refuses it."""
    from ragq.submission import parse_sources

    return None if text is None else parse_sources(text, source="--sources")


@app.command()
def search(
    query: Annotated[str, typer.Argument(help="What to look for.")],
    collection: CollectionOpt = None,
    top_k: Annotated[int, typer.Option("--top-k", "-k", min=1, max=200, metavar="N",
                                       help="How many hits.")] = 5,
    acl: AclOpt = "public",
    mode: Annotated[str | None, typer.Option(
        "--mode", metavar="MODE",
        help="dense, sparse or hybrid (default: RAGQ_SEARCH_MODE).")] = None,
    fusion: Annotated[str | None, typer.Option(
        "--fusion", metavar="FUSION",
        help="How hybrid fuses: rrf or dbsf (default: RAGQ_SEARCH_FUSION).")] = None,
    as_json: JsonFlag = False,
) -> None:
    """Search a collection, filtered by ACL (a check that retrieval works)."""
    from ragq.submission import parse_acl

    settings = _settings()
    labels = list(parse_acl(acl))
    documents.search(settings, query, collection=collection or settings.collection, top_k=top_k,
                     acl=labels, as_json=as_json, mode=_option(parse_mode, mode, "--mode"),
                     fusion=_option(parse_fusion, fusion, "--fusion"))


@app.command()
def submit(
    tickets: Annotated[Path, typer.Argument(help=(
        'A JSONL file of tickets, one {"custom_id": …, "question": …} per line.'))],
    collection: CollectionOpt = None,
    wait: Annotated[bool, typer.Option("--wait", help="Wait for the batch to finish.")] = False,
    output: Annotated[Path | None, typer.Option(
        "--output", "-o", metavar="FILE", help="With --wait: write the results JSONL here.")]
    = None,
    show: Annotated[bool, typer.Option("--show", help="With --wait: print the answers.")] = False,
    budget: Annotated[str | None, typer.Option(
        "--budget", metavar="JSON",
        help='Budget of the batch, e.g. {"max_steps": 20}; a ticket\'s own keys win.')] = None,
    sources: SourcesOpt = None,
    priority: Annotated[str | None, typer.Option(
        "--priority", metavar="PRIORITY",
        help="interactive or bulk (the default): the priority of tickets that name none.")]
    = None,
    as_json: JsonFlag = False,
) -> None:
    """Create a batch, one job per ticket; bad lines go to the batch's errors file."""
    settings = _settings()
    if (output or show) and not wait:
        fail("--output and --show need --wait (or use `ragq results BATCH` later)")
    jobs.submit(settings, tickets, collection=collection, wait=wait,
                as_json=as_json, output=output, show=show, budget=budget,
                sources=_sources(sources), priority=priority)


@app.command()
def ask(
    question: Annotated[str, typer.Argument(help="The question, quoted.")],
    collection: CollectionOpt = None,
    acl: Annotated[str | None, typer.Option(
        metavar="LABELS", help="Comma-separated ACL labels of the reader, e.g. public,staff "
                               '(default: ["public"], as for a ticket without "acl").')] = None,
    custom_id: Annotated[str | None, typer.Option(
        "--custom-id", metavar="ID",
        help="Your own id for the question, kept in its result (default: ask-<time>).")]
    = None,
    sources: SourcesOpt = None,
    budget: Annotated[str | None, typer.Option(
        "--budget", metavar="JSON", help='The job\'s budget, e.g. {"max_steps": 20}.')] = None,
    route: Annotated[str | None, typer.Option(
        "--route", metavar="ROUTE", help="simple, bounded, full or escalate.")] = None,
    metadata: Annotated[str | None, typer.Option(
        "--metadata", metavar="JSON", help="A JSON object kept with the job.")] = None,
    webhook_url: Annotated[str | None, typer.Option(
        "--webhook-url", metavar="URL", help="Where to POST the job's events.")] = None,
    priority: Annotated[str | None, typer.Option(
        "--priority", metavar="PRIORITY",
        help="interactive (the default for one question) or bulk.")] = None,
    as_json: JsonFlag = False,
) -> None:
    """Answer one question and print the answer with its citations. The options are a
    ticket's fields, read as a ticket line is (the same checks and error codes)."""
    fields = jobs.ask_fields(question, acl=acl, custom_id=custom_id, sources=sources,
                             budget=budget, route=route, metadata=metadata,
                             webhook_url=webhook_url, priority=priority)
    jobs.ask(_settings(), fields, collection=collection, as_json=as_json)


OutOpt = Annotated[Path | None, typer.Option(
    "--output", "-o", metavar="FILE", help="Write the JSONL here (default: stdout).")]
BatchArg = Annotated[str, typer.Argument(metavar="BATCH", help="Batch id (bat_…).")]


@app.command()
def results(
    batch: BatchArg,
    output: OutOpt = None,
    show: Annotated[bool, typer.Option("--show", help="Also print answers for people.")] = False,
) -> None:
    """Write the batch's results JSONL (one line per ticket, matched by custom_id)."""
    jobs.results(_settings(), batch, output, show=show)


@app.command()
def errors(batch: BatchArg, output: OutOpt = None) -> None:
    """Write the batch's errors JSONL (rejected lines with line number and reason, failed jobs)."""
    jobs.errors(_settings(), batch, output)


@app.command()
def cancel(
    target: Annotated[str, typer.Argument(metavar="ID", help="A batch or job id.")],
    as_json: JsonFlag = False,
) -> None:
    """Cancel a batch or a job: open jobs stop at their next step; finished results stay."""
    jobs.cancel(_settings(), target, as_json=as_json)


@app.command("eval")
def eval_(
    dataset: Annotated[Path, typer.Argument(
        metavar="DATASET_DIR", help="A folder with corpus.jsonl and questions.jsonl.")],
    json_file: Annotated[str | None, typer.Option(
        "--json", metavar="FILE",
        help="Also write the report as JSON to FILE; `--json -` prints it on stdout instead "
             "of the tables.")] = None,
    limit: Annotated[int | None, typer.Option(
        metavar="N", help="Only the first N questions.", min=1)] = None,
    every: Annotated[int | None, typer.Option(
        "--progress-every", metavar="N", min=1,
        help="Off a terminal: a progress line every N questions (default: about 20 lines per "
             "run).")] = None,
    html_file: Annotated[Path | None, typer.Option(
        "--html", metavar="FILE",
        help="Also write the report as one self-contained HTML page (tables and charts, no "
             "script, nothing fetched) to FILE.")] = None,
    print_json: Annotated[bool, typer.Option("--print-json", hidden=True)] = False,
) -> None:
    """Run a dataset through the real queue beside a single-shot baseline; print the tables.

    On a terminal it shows progress bars; elsewhere (a pipe, a file, CI) a progress line with
    rate and ETA on stderr every few questions.
    """
    stdout = print_json or json_file == "-"
    json_out = Path(json_file) if json_file not in (None, "-") else None
    evaluate.evaluate(_settings(), dataset, limit=limit, json_out=json_out, as_json=stdout,
                      every=every, html_out=html_file)


@app.command()
def serve(
    host: Annotated[str | None, typer.Option(
        metavar="HOST", help="Address to listen on (default: RAGQ_API_HOST, 127.0.0.1).")]
    = None,
    port: Annotated[int | None, typer.Option(
        metavar="PORT", help="Port (default: RAGQ_API_PORT, 8000).")] = None,
) -> None:
    """Serve the HTTP API (OpenAPI at /docs) in the foreground."""
    service.serve(_settings(), host=host, port=port)


@app.command()
def sweeper() -> None:
    """Resume jobs whose next message was lost, on any broker, from the ledger alone; start
    waiting jobs. Run one or more beside workers that `ragq up` did not start (several
    replicas take turns through a lease in the ledger)."""
    service.sweeper(_settings())


@service.keys_app.command("create")
def keys_create(
    tenant: Annotated[str, typer.Option(metavar="TENANT", help="The tenant the key acts for.")],
    acl: Annotated[str, typer.Option(
        metavar="LABELS", help="Comma-separated ACL labels its jobs may read.")] = "public",
    as_json: JsonFlag = False,
) -> None:
    """Create an API key (printed once; only its hash is stored)."""
    labels = [a.strip() for a in acl.split(",") if a.strip()]
    if not labels:
        fail("--acl needs at least one label, e.g. --acl public")
    service.create_key(_settings(), tenant=tenant, acl=labels, as_json=as_json)


@service.keys_app.command("list")
def keys_list(
    tenant: Annotated[str | None, typer.Option(metavar="TENANT", help="Only this tenant's keys.")]
    = None,
    as_json: JsonFlag = False,
) -> None:
    """List keys: id, tenant, ACL, live or revoked (the keys themselves are not stored)."""
    service.list_keys(_settings(), tenant=tenant, as_json=as_json)


@service.keys_app.command("revoke")
def keys_revoke(
    key_id: Annotated[str, typer.Argument(
        metavar="KEY_ID", help="The key's id (from `ragq keys list`).")],
    as_json: JsonFlag = False,
) -> None:
    """Revoke a key: requests with it get 401 from then on."""
    service.revoke_key(_settings(), key_id=key_id, as_json=as_json)


@service.webhooks_app.command("verify")
def webhooks_verify(
    body_file: Annotated[Path, typer.Argument(help="The raw request body as received.")],
    secret: Annotated[str, typer.Option(
        metavar="WHSEC", help="The whsec_… secret of the endpoint.")],
    msg_id: Annotated[str, typer.Option("--id", metavar="ID", help="The webhook-id header.")],
    timestamp: Annotated[str, typer.Option(
        metavar="SECONDS", help="The webhook-timestamp header.")],
    signature: Annotated[str, typer.Option(
        metavar="SIG", help="The webhook-signature header.")],
    tolerance_s: Annotated[int | None, typer.Option(
        metavar="SECONDS",
        help="Accepted clock skew (default: RAGQ_WEBHOOK_TIMESTAMP_TOLERANCE_S).")] = None,
    as_json: JsonFlag = False,
) -> None:
    """Verify a received webhook's signature (exit 1 when it does not verify)."""
    tolerance = tolerance_s or _settings().webhook_timestamp_tolerance_s
    service.verify(secret, msg_id=msg_id, timestamp=timestamp, signature=signature,
                   body_file=body_file, tolerance_s=tolerance, as_json=as_json)


@db_app.command("upgrade")
def db_upgrade(as_json: JsonFlag = False) -> None:
    """Apply the ledger migrations (`ragq up` does this too)."""
    from ragq.ledger import current_revision, upgrade

    settings = _settings()
    upgrade(settings.ledger_url)
    revision = current_revision(settings.ledger_url)
    if as_json:
        emit_json({"database": settings.ledger_url, "revision": revision})
    else:
        typer.echo(f"{settings.ledger_url} is at revision {revision}")


def main() -> None:
    """Entry point: domain errors become one clear line on stderr and exit code 1; anything
    else one line naming it and exit code 2 (a person reads a message, not a traceback)."""
    logging.basicConfig(level=logging.WARNING)
    try:
        app()
    except RagqError as exc:  # a refused ticket also names its code, as HTTP and errors files do
        code = getattr(exc, "code", None)
        fail(f"{exc} [{code}]" if code else str(exc))
    except Exception as exc:  # a bug of ours: say what, without the traceback
        logging.getLogger("ragq.cli").debug("unexpected error", exc_info=True)
        fail(f"unexpected {type(exc).__name__}: {exc}", code=2)
    finally:
        close_clients()

"""`ragq submit`, `ask`, `status ID`, `results`, `errors`, `cancel`."""

from __future__ import annotations

import json
from contextlib import nullcontext
from dataclasses import replace
from pathlib import Path
from typing import Any

from rich.panel import Panel
from rich.text import Text

from ragq.cli.output import console, emit_json, err_console, fail
from ragq.cli.progress import StageProgress
from ragq.errors import InputError
from ragq.settings import Settings


def submit(settings: Settings, path: Path, *, collection: str | None, wait: bool, as_json: bool,
           output: Path | None = None, show: bool = False, budget: str | None = None,
           sources: Any = None, priority: str | None = None) -> None:
    from ragq import submission

    options = submission.BatchOptions(budget=_budget(budget) if budget else None,
                                      sources=sources)
    if priority is not None:
        try:
            options = replace(options, priority=submission.parse_priority(priority))
        except InputError as exc:
            fail(str(exc))
    sent = submission.submit_file(settings, path, collection=collection, options=options)
    if not as_json:
        console.print(f"batch [bold]{sent.batch_id}[/]: {len(sent.job_ids)} jobs queued, "
                      f"{sent.errors} bad lines (see `ragq errors {sent.batch_id}`)")
    if not sent.job_ids:
        if as_json:
            emit_json({"batch_id": sent.batch_id, "jobs": 0, "errors": sent.errors})
        fail(f"nothing submitted: all {sent.errors} lines of {path} are bad "
             f"(`ragq errors {sent.batch_id}` lists them)")
    if wait:
        with StageProgress(err_console, disable=as_json) as progress:
            view = submission.wait(settings, sent.batch_id,
                                   on_progress=progress.stage("answering"))
        if not as_json:
            _print_batch(view)
        if output or show:
            results(settings, sent.batch_id, output, show=show, to_stdout=False)
    if as_json:
        emit_json({"batch_id": sent.batch_id, "jobs": len(sent.job_ids), "errors": sent.errors})


def ask_fields(question: str, *, acl: str | None = None, custom_id: str | None = None,
               sources: str | None = None, budget: str | None = None, route: str | None = None,
               metadata: str | None = None, webhook_url: str | None = None,
               priority: str | None = None) -> dict[str, Any]:
    """``ragq ask``'s options as ticket fields, left for the ticket parser to judge: labels
    and names split at commas as written (``--acl ","`` is two blank labels, refused, never
    "public"), JSON options decoded; an option not given is no field (its default applies)."""
    fields: dict[str, Any] = {
        "question": question, "custom_id": custom_id, "route": route, "webhook_url": webhook_url,
        "priority": priority,
        "acl": None if acl is None else acl.split(","),
        "sources": None if sources is None else (
            "all" if sources.strip() == "all" else sources.split(",")),
        "budget": _json_option(budget, "--budget"),
        "metadata": _json_option(metadata, "--metadata")}
    return {k: v for k, v in fields.items() if v is not None}


def _json_option(text: str | None, where: str) -> Any:
    """A JSON option's value (the ticket parser checks its shape), None when not given."""
    if text is None:
        return None
    try:
        return json.loads(text)
    except ValueError as exc:
        fail(f"{where}: invalid JSON ({exc})", code=2)


def ask(settings: Settings, fields: dict[str, Any], *, collection: str | None,
        as_json: bool) -> None:
    from ragq import submission

    job_id = submission.ask(settings, fields, collection=collection)
    with nullcontext() if as_json else console.status("answering…"):
        view = submission.wait(settings, job_id, timeout_s=600)
    if as_json:
        emit_json(view["result"] or view)
    else:
        print_result(view["result"] or {"status": view["status"], "job_id": job_id})


def status(settings: Settings, target: str, *, as_json: bool) -> None:
    from ragq import submission

    view = submission.describe(settings, target)
    if as_json:
        emit_json(view)
    elif view["object"] == "batch":
        _print_batch(view)
    else:
        console.print(f"job {view['id']}: [bold]{view['status']}[/] (route {view['route']})")
        if view["result"]:
            print_result(view["result"])


def _print_batch(view: dict[str, Any]) -> None:
    counts = ", ".join(f"{k} {v}" for k, v in view["counts"].items() if v or k == "total")
    console.print(f"batch {view['id']}: [bold]{view['status']}[/] — {counts}")


def write_jsonl(records: list[dict[str, Any]], out: Path | None, *, what: str,
                to_stdout: bool = True) -> None:
    lines = "".join(json.dumps(r, default=str, ensure_ascii=False) + "\n" for r in records)
    if out is None:
        if to_stdout:
            console.file.write(lines)
        return
    out.write_text(lines)
    err_console.print(f"wrote {len(records)} {what} to {out}")


def results(settings: Settings, batch_id: str, out: Path | None, *, show: bool,
            to_stdout: bool = True) -> None:
    from ragq import submission

    records = submission.results(settings, batch_id)
    write_jsonl(records, out, what="results", to_stdout=to_stdout and not show)
    if show:
        for record in records:
            print_result(record)


def errors(settings: Settings, batch_id: str, out: Path | None) -> None:
    from ragq import submission

    write_jsonl(submission.errors(settings, batch_id), out, what="errors")


def cancel(settings: Settings, target: str, *, as_json: bool) -> None:
    from ragq import submission

    count = submission.cancel(settings, target)
    if as_json:
        emit_json({"id": target, "cancelled_jobs": count})
    else:
        console.print(f"{target}: {count} job(s) cancelled; finished results are kept")


QUOTE_CHARS = 160


def _short(quote: str) -> str:
    """A quote on one line (quotes keep the document's line breaks), cut at a word."""
    flat = " ".join(quote.split())
    if len(flat) <= QUOTE_CHARS:
        return flat
    return flat[:QUOTE_CHARS].rsplit(" ", 1)[0] + " …"


def print_result(result: dict[str, Any]) -> None:
    """An answer with its citations, for people."""
    title = f"{result.get('custom_id') or result.get('job_id')} — {result.get('status')}"
    if result.get("route"):
        title += f" (route {result['route']})"
    body = result.get("answer") or "(no answer)"
    if result.get("extractive"):
        body = "[extractive] " + body
    cites = result.get("citations") or []
    if cites:
        body += "\n\nSources:\n" + "\n".join(
            f"  [{i}] {c['doc_id']}" + (f" — “{_short(c['quote'])}”" if c.get("quote") else "")
            for i, c in enumerate(cites, start=1))
    for conflict in result.get("contradictions") or []:
        body += f"\n⚠ conflicting sources on {conflict.get('topic')}: " + " | ".join(
            conflict.get("statements", []))
    review = result.get("review")
    if review and result.get("status") == "needs_review":
        body += (f"\n⏸ draft, waiting for a reviewer ({', '.join(review.get('reasons', []))}):"
                 f" ragq review resolve {result.get('job_id')} --answer FILE | --reject")
    console.print(Panel(Text(body), title=Text(title), title_align="left", highlight=False))


def _budget(text: str) -> dict[str, object]:
    """The batch budget of ``--budget``, validated as every ticket's would be."""
    from ragq import submission

    try:
        return submission.parse_budget(text, source="--budget")
    except InputError as exc:
        fail(str(exc))

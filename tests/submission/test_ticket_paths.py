"""One ticket, one meaning (issue 35): the same ticket sent through every front door is stored as
the same job, or refused with the same error code.

The table crosses every ticket field (each set, missing, and in its malformed forms) with every
path a ticket can take: ``ragq submit``, a JSON batch, a JSONL upload, ``POST /v1/jobs``,
``ragq ask`` (its options build the ticket) and ``ragq eval``'s reading and submission. A field
of :class:`Ticket` or a front door that the table does not list fails the test, so a new one
cannot arrive without saying what it means on every path.

No stack runs: a migrated SQLite ledger and an in-process broker, so a submission is recorded
and its tasks sent to a queue nobody reads. The HTTP paths carry a key capped to
``public,staff``; the CLI paths have no key.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from ragq import submission
from ragq.api import create_api
from ragq.cli.jobs import ask_fields
from ragq.cli.main import app as cli_app
from ragq.errors import TicketRefusedError
from ragq.evaluation import load_questions, submit_questions
from ragq.ledger import batch_jobs, create_api_key, get_job, register_source, session_scope
from ragq.ledger.models import JobRow
from ragq.schemas.document import DEFAULT_ACL
from ragq.schemas.ticket import Ticket
from ragq.settings import Settings
from ragq.workers.resources import resources_for
from tests.fakes.broker import hold_documents, memory_settings
from tests.malformed.cli_harness import cli_env, run_cli

KEY_ACL = ["public", "staff"]
HOOK = "https://93.184.215.14/hooks/ragq"  # a global address: no name to resolve
BASE: dict[str, Any] = {
    "custom_id": "c-1", "question": "How long is the refund window?", "acl": ["public"],
    "budget": {"max_steps": 7}, "route": "bounded", "sources": ["kb2"],
    "metadata": {"team": "billing"}, "webhook_url": HOOK, "priority": "interactive"}
"""Every field set; each case changes one."""
MISSING = object()
EVAL_ONLY = {"gold_doc_ids", "answer", "answer_aliases"}  # scored by ragq eval, never a job's


class AskId:
    """The custom_id ``ragq ask`` makes when none is given."""

    def __eq__(self, other: object) -> bool:
        return isinstance(other, str) and re.fullmatch(r"ask-\d{8}T\d{6}Z", other) is not None

    def __repr__(self) -> str:
        return "ask-<time>"


def stored(**changes: Any) -> dict[str, Any]:
    """The job BASE is stored as, with ``changes``."""
    job = {"custom_id": "c-1", "question": BASE["question"], "acl": ["public"],
           "collection": "kb2", "sources": ["kb2"], "route": "bounded",
           "budget": {"max_steps": 7}, "metadata": {"team": "billing"}, "webhook_url": HOOK,
           "priority": "interactive"}
    return job | changes


Expect = dict[str, Any] | str  # the stored job, or the error code of the refusal


@dataclass(frozen=True)
class Case:
    """One value of one field: what every path stores (or refuses), ``per_path`` where the
    meaning rightly depends on the path, ``ask`` the option text a person types when it is not
    the value itself, and ``not_on`` the paths whose input cannot carry this form at all."""

    field: str
    name: str
    value: Any
    expect: Expect
    per_path: dict[str, Expect] = field(default_factory=dict)
    ask: str | None = None
    not_on: frozenset[str] = frozenset()


CLI_ONLY_TEXT = frozenset({"cli_ask"})  # an option is text: a number or a bare string is no list
BATCH_PATHS = ("cli_submit", "http_json", "http_jsonl", "eval")
KEYED = ("http_json", "http_jsonl", "http_job")
SINGLE = ("http_job", "cli_ask")  # one job outside any batch

CASES = [
    Case("all", "every-field-set", MISSING, stored()),
    # custom_id: batches match results by it; one-off jobs may go without
    Case("custom_id", "missing", MISSING, "invalid_ticket",
         per_path={"http_job": stored(custom_id=None), "cli_ask": stored(custom_id=AskId())}),
    Case("custom_id", "empty", "", "invalid_ticket"),
    Case("custom_id", "number", 7, "invalid_ticket", not_on=CLI_ONLY_TEXT),
    # question
    Case("question", "missing", MISSING, "invalid_ticket", not_on=CLI_ONLY_TEXT),
    Case("question", "blank", "   ", "invalid_ticket"),
    Case("question", "padded", "  How long is the refund window?  ", stored()),
    Case("question", "over-the-limit", "x" * 20_001, "question_too_long"),
    # acl: labels stripped, each once; empty or blank refused; the default is the submitter's
    Case("acl", "missing", MISSING, stored(acl=list(DEFAULT_ACL)),  # the documented rule:
         per_path={p: stored(acl=KEY_ACL) for p in KEYED}),  # DEFAULT_ACL_RULE
    Case("acl", "staff", ["staff"], stored(acl=["staff"])),
    Case("acl", "padded-label", [" staff"], stored(acl=["staff"]), ask=" staff"),
    Case("acl", "repeated-label", ["staff", "staff"], stored(acl=["staff"])),
    Case("acl", "empty-list", [], "invalid_ticket", ask=""),
    Case("acl", "only-commas", ["", ""], "invalid_ticket", ask=","),
    Case("acl", "blank-label", [" "], "invalid_ticket", ask=" "),
    Case("acl", "string", "public", "invalid_ticket", not_on=CLI_ONLY_TEXT),
    # budget
    Case("budget", "missing", MISSING, stored(budget=None)),
    Case("budget", "bool-steps", {"max_steps": True}, "invalid_ticket"),
    Case("budget", "unknown-key", {"max_stepz": 3}, "invalid_ticket"),
    Case("budget", "string", "cheap", "invalid_ticket"),
    # route
    Case("route", "missing", MISSING, stored(route=None)),
    Case("route", "unknown", "teleport", "invalid_ticket"),
    Case("route", "number", 3, "invalid_ticket", not_on=CLI_ONLY_TEXT),
    # sources
    Case("sources", "missing", MISSING, stored(collection="kb", sources=None)),
    Case("sources", "all", "all", stored(collection="kb", sources=["kb", "kb2"])),
    Case("sources", "padded-name", [" kb2 "], stored(), ask=" kb2 "),
    Case("sources", "empty-list", [], "invalid_ticket", ask=","),
    Case("sources", "unknown", ["nope"], "invalid_sources"),
    Case("sources", "repeated", ["kb2", "kb2"], "invalid_ticket"),
    # metadata
    Case("metadata", "missing", MISSING, stored(metadata={})),
    Case("metadata", "list", [1], "invalid_ticket"),
    # webhook_url
    Case("webhook_url", "missing", MISSING, stored(webhook_url=None)),
    Case("webhook_url", "private-host", "http://10.0.0.8/x", "invalid_webhook_url"),
    Case("webhook_url", "number", 5, "invalid_ticket", not_on=CLI_ONLY_TEXT),
    # priority (issue 36): a batch's ticket is bulk unless it says so, a single job interactive
    Case("priority", "missing", MISSING, stored(priority="bulk"),
         per_path={p: stored(priority="interactive") for p in SINGLE}),
    Case("priority", "bulk", "bulk", stored(priority="bulk")),
    Case("priority", "interactive", "interactive", stored(priority="interactive")),
    Case("priority", "padded", " bulk", "invalid_ticket"),
    Case("priority", "unknown", "urgent", "invalid_ticket"),
    Case("priority", "number", 1, "invalid_ticket", not_on=CLI_ONLY_TEXT),
]
PATHS = ("cli_submit", "http_json", "http_jsonl", "http_job", "cli_ask", "eval")


def ticket_of(case: Case) -> dict[str, Any]:
    ticket = dict(BASE)
    if case.field != "all":
        ticket.pop(case.field)
        if case.value is not MISSING:
            ticket[case.field] = case.value
    return ticket


# --- the world: one ledger, two collections holding documents, a key ----------------------


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("paths") / "home"


@pytest.fixture(scope="module")
def settings(home: Path) -> Settings:
    settings = memory_settings(home)
    hold_documents(settings, "kb")
    hold_documents(settings, "kb2")
    return settings


@pytest.fixture(scope="module")
def client(settings: Settings) -> Iterator[TestClient]:
    with TestClient(create_api(settings), raise_server_exceptions=False) as test_client:
        yield test_client


@pytest.fixture(scope="module")
def key(settings: Settings) -> str:
    with session_scope(resources_for(settings).engine) as session:
        return create_api_key(session, tenant=settings.tenant, acl=KEY_ACL)[1]


def job_view(row: JobRow) -> dict[str, Any]:
    meta = row.meta or {}
    return {"custom_id": row.custom_id, "question": row.question, "acl": list(row.acl),
            "collection": row.collection, "sources": meta.get("sources"),
            "route": meta.get("route"), "budget": meta.get("budget"),
            "metadata": meta.get("ticket_metadata"), "webhook_url": meta.get("webhook_url"),
            "priority": row.priority}


def _job(settings: Settings, job_id: str) -> dict[str, Any]:
    with session_scope(resources_for(settings).engine, readonly=True) as session:
        return job_view(get_job(session, job_id=job_id))


def _batch_outcome(world: World, batch_id: str) -> Expect:
    """The one line's job, or its error code."""
    errors = submission.errors(world.settings, batch_id)
    if errors:
        (error,) = errors
        world.refusals.append(error["error"]["message"])
        return str(error["error"]["code"])
    settings = world.settings
    with session_scope(resources_for(settings).engine, readonly=True) as session:
        (row,) = batch_jobs(session, batch_id=batch_id)
        return job_view(row)


@dataclass
class World:
    settings: Settings
    client: TestClient
    key: str
    home: Path
    tmp: Path
    monkeypatch: pytest.MonkeyPatch
    capsys: pytest.CaptureFixture[str]
    collection: str = "kb"  # the collection every path names
    refusals: list[str] = field(default_factory=list)  # the messages of refusals seen

    @property
    def auth(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.key}"}


# --- the paths ----------------------------------------------------------------------------


def via_cli_submit(world: World, ticket: dict[str, Any], case: Case) -> Expect:
    path = world.tmp / "tickets.jsonl"
    path.write_text(json.dumps(ticket) + "\n")
    run = run_cli(["submit", str(path), "--collection", world.collection, "--json"],
                  cli_env(world.home), world.monkeypatch, world.capsys)
    assert "Traceback" not in run.err, run.err
    return _batch_outcome(world, json.loads(run.out)["batch_id"])


def via_http_json(world: World, ticket: dict[str, Any], case: Case) -> Expect:
    response = world.client.post("/v1/batches", headers=world.auth,
                                 json={"tickets": [ticket], "collection": world.collection})
    assert response.status_code == 201, response.text
    return _batch_outcome(world, response.json()["id"])


def via_http_jsonl(world: World, ticket: dict[str, Any], case: Case) -> Expect:
    response = world.client.post(f"/v1/batches?collection={world.collection}",
                                 content=json.dumps(ticket).encode() + b"\n",
                                 headers={**world.auth, "content-type": "application/jsonl"})
    assert response.status_code == 201, response.text
    return _batch_outcome(world, response.json()["id"])


def via_http_job(world: World, ticket: dict[str, Any], case: Case) -> Expect:
    response = world.client.post("/v1/jobs", json={**ticket, "collection": world.collection},
                                 headers=world.auth)
    if response.status_code != 201:
        assert response.status_code == 422, response.text
        world.refusals.append(response.json()["error"]["message"])
        return str(response.json()["error"]["code"])
    return _job(world.settings, response.json()["id"])


def _option(ticket: dict[str, Any], name: str, case: Case) -> str | None:
    """What a person types for the field ``name`` of ``ticket`` as a ``ragq ask`` option."""
    if name not in ticket:
        return None
    if case.field == name and case.ask is not None:
        return case.ask
    value = ticket[name]
    if name in ("acl", "sources") and isinstance(value, list):
        return ",".join(value)
    return json.dumps(value) if name in ("budget", "metadata") else value


def via_cli_ask(world: World, ticket: dict[str, Any], case: Case) -> Expect:
    fields = ask_fields(ticket["question"], **{
        name: _option(ticket, name, case) for name in
        ("acl", "custom_id", "sources", "budget", "route", "metadata", "webhook_url",
         "priority")})
    try:
        job_id = submission.ask(world.settings, fields, collection=world.collection)
    except TicketRefusedError as exc:
        world.refusals.append(str(exc))
        return exc.code
    return _job(world.settings, job_id)


def via_eval(world: World, ticket: dict[str, Any], case: Case) -> Expect:
    dataset = world.tmp / "dataset"
    dataset.mkdir(exist_ok=True)
    (dataset / "corpus.jsonl").write_text("")
    (dataset / "questions.jsonl").write_text(json.dumps({**ticket, "gold_doc_ids": ["d"]}) + "\n")
    try:
        questions = load_questions(dataset, settings=world.settings)
        sent = submit_questions(world.settings, questions, collection=world.collection,
                                source="questions")
    except TicketRefusedError as exc:
        assert exc.line == 1, exc
        world.refusals.append(str(exc))
        return exc.code
    (job_id,) = sent.job_ids
    return _job(world.settings, job_id)


RUNNERS: dict[str, Callable[[World, dict[str, Any], Case], Expect]] = {
    "cli_submit": via_cli_submit, "http_json": via_http_json, "http_jsonl": via_http_jsonl,
    "http_job": via_http_job, "cli_ask": via_cli_ask, "eval": via_eval}


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c.field}:{c.name}")
def test_a_ticket_means_the_same_on_every_path(settings, client, key, home, tmp_path,
                                               monkeypatch, capsys, case: Case, path: str):
    if path in case.not_on:
        pytest.skip(f"{path} cannot carry this form")  # said in the table, not hidden
    world = World(settings, client, key, home, tmp_path, monkeypatch, capsys)
    expected = case.per_path.get(path, case.expect)
    assert RUNNERS[path](world, ticket_of(case), case) == expected


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("named", ["registered_but_empty", "never_ingested"])
def test_a_named_collection_that_holds_nothing_is_refused_on_every_path(
        tmp_path, monkeypatch, capsys, path: str, named: str):
    """Issue 31: refused at submission with one code, never a job that fails in a worker; the
    message lists the collections that hold documents and names no server path. A world of
    its own, so the sources it registers change no other test's "all"."""
    home = tmp_path / "home"
    settings = memory_settings(home)
    for name in ("kb", "kb2"):
        hold_documents(settings, name)
    with session_scope(resources_for(settings).engine) as session:
        register_source(session, tenant=settings.tenant, name="registered_but_empty")
        key = create_api_key(session, tenant=settings.tenant, acl=KEY_ACL)[1]
    ticket = {k: v for k, v in BASE.items() if k != "sources"}
    with TestClient(create_api(settings), raise_server_exceptions=False) as client:
        world = World(settings, client, key, home, tmp_path, monkeypatch, capsys,
                      collection=named)
        assert RUNNERS[path](world, ticket, CASES[0]) == "unknown_collection"
    (message,) = world.refusals
    assert named in message and "kb, kb2" in message
    assert str(home) not in message and "/" not in message


def test_the_table_covers_every_ticket_field_and_every_path(client):
    """A new ticket field, or a new front door taking tickets, fails here until the table says
    what it means on every path."""
    assert {c.field for c in CASES} - {"all"} == set(Ticket.model_fields) - EVAL_ONLY
    for name in set(Ticket.model_fields) - EVAL_ONLY:
        assert {c.name for c in CASES if c.field == name} >= {"missing"}, name
    assert set(RUNNERS) == set(PATHS) and len(PATHS) == 6
    paths = client.get("/openapi.json").json()["paths"]
    posts = {path for path, operations in paths.items() if "post" in operations}
    assert posts - NOT_TICKET_ROUTES == {"/v1/batches", "/v1/jobs"}
    commands = {c.name or c.callback.__name__ for c in cli_app.registered_commands}
    assert commands - NOT_TICKET_COMMANDS == {"submit", "ask", "eval"}


NOT_TICKET_ROUTES = {"/v1/batches/{batch_id}/cancel", "/v1/review/{job_id}",
                     "/v1/sources/{name}/confirm"}
NOT_TICKET_COMMANDS = {"up", "down", "status", "ingest", "search", "results", "errors", "cancel",
                       "serve", "sweeper"}



@pytest.mark.parametrize("own", [None, "bulk"])
def test_a_batchs_priority_is_the_default_of_its_tickets_on_every_batch_path(
        settings, client, key, home, tmp_path, monkeypatch, capsys, own: str | None):
    """Issue 36: ``--priority`` / ``"priority"`` / ``?priority=`` of a batch applies to the
    tickets that name none; a ticket's own priority wins."""
    world = World(settings, client, key, home, tmp_path, monkeypatch, capsys)
    ticket = {k: v for k, v in BASE.items() if k != "priority"}
    if own:
        ticket["priority"] = own
    want = own or "interactive"
    path = tmp_path / "tickets.jsonl"
    path.write_text(json.dumps(ticket) + "\n")
    run = run_cli(["submit", str(path), "--collection", "kb", "--priority", "interactive",
                   "--json"], cli_env(home), monkeypatch, capsys)
    outcomes = [_batch_outcome(world, json.loads(run.out)["batch_id"])]
    response = client.post("/v1/batches", headers=world.auth, json={
        "tickets": [ticket], "collection": "kb", "priority": "interactive"})
    outcomes.append(_batch_outcome(world, response.json()["id"]))
    response = client.post("/v1/batches?collection=kb&priority=interactive",
                           content=json.dumps(ticket).encode() + b"\n",
                           headers={**world.auth, "content-type": "application/jsonl"})
    outcomes.append(_batch_outcome(world, response.json()["id"]))
    assert [o["priority"] for o in outcomes] == [want] * 3  # type: ignore[index]


def test_a_batch_priority_that_is_none_of_the_two_is_refused(client, key, settings, home,
                                                            monkeypatch, capsys, tmp_path):
    path = tmp_path / "tickets.jsonl"
    path.write_text(json.dumps(BASE) + "\n")
    run = run_cli(["submit", str(path), "--priority", "urgent"], cli_env(home), monkeypatch,
                  capsys)
    assert run.code != 0 and "interactive, bulk" in run.err
    auth = {"Authorization": f"Bearer {key}"}
    response = client.post("/v1/batches", headers=auth, json={"tickets": [BASE],
                                                              "priority": "urgent"})
    assert response.status_code == 422 and "priority" in response.text
    response = client.post("/v1/batches?priority=urgent", content=json.dumps(BASE).encode(),
                           headers={**auth, "content-type": "application/jsonl"})
    assert response.status_code == 422, response.text
    assert response.json()["error"]["code"] == "invalid_input"

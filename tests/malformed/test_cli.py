"""The malformed-input corpus through the CLI (`ragq submit`, `ingest`, `search`, `ask`), run
in-process as the console script runs: a bad line fails alone in the batch's errors file with
its number; anything else bad is a one-line message and a non-zero exit, never a traceback;
nothing ingested or submitted is a non-zero exit too. A few cases run as real subprocesses."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ragq import submission
from ragq.ingestion.submit import load
from ragq.ledger import get_ingest_run, session_scope
from ragq.settings import Settings
from ragq.workers.resources import resources_for
from tests.fakes.broker import memory_settings
from tests.malformed.cli_harness import Run, assert_clean_failure, cli_env, run_cli
from tests.malformed.corpus import (
    BAD_COLLECTIONS,
    ENCODING_CASES,
    GOOD_FIRST,
    LINE_CASES,
    EncodingCase,
    LineCase,
    framed,
    jl,
)


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("cli-corpus") / "home"
    memory_settings(home)  # migrates the ledger
    return home


@pytest.fixture(scope="module")
def settings(home: Path) -> Settings:
    return memory_settings(home)


@pytest.fixture
def ragq(home, monkeypatch, capsys):
    env = cli_env(home)

    def run(*args: str, **more_env: str) -> Run:
        return run_cli(list(args), env | more_env, monkeypatch, capsys)

    return run


def write(tmp_path: Path, body: bytes, name: str = "in.jsonl") -> str:
    path = tmp_path / name
    path.write_bytes(body)
    return str(path)


# --- ragq submit: one bad line fails alone ------------------------------------------------


@pytest.mark.parametrize("case", LINE_CASES, ids=lambda c: f"{c.family}:{c.name}")
def test_submit_fails_a_bad_line_alone(ragq, settings, tmp_path, case: LineCase):
    run = ragq("submit", write(tmp_path, framed(case)), "--json")
    assert run.code == 0, run.err
    sent = json.loads(run.out)
    assert (sent["jobs"], sent["errors"]) == (2, 1)
    (error,) = submission.errors(settings, sent["batch_id"])
    assert (error["line"], error["error"]["code"]) == (2, case.code)
    kept = [r["custom_id"] for r in submission.results(settings, sent["batch_id"])]
    assert kept == ["good-1", "good-2"]


@pytest.mark.parametrize("case", ENCODING_CASES, ids=lambda c: c.name)
def test_submit_accepts_good_tickets_in_any_layout(ragq, settings, tmp_path, case: EncodingCase):
    run = ragq("submit", write(tmp_path, case.body), "--json")
    assert run.code == 0, run.err
    sent = json.loads(run.out)
    assert (sent["jobs"], sent["errors"]) == (len(case.custom_ids), 0)


# --- ragq submit: whole-file problems -----------------------------------------------------

ALL_BAD = b"{oops\n" + b'{"custom_id": "x"}\n'
SUBMIT_FILE_CASES = [
    ("empty-file", b"", "no ticket"), ("blank-lines", b"\n  \n", "no ticket"),
    ("bom-only", b"\xef\xbb\xbf", "no ticket"), ("all-lines-bad", ALL_BAD, "nothing submitted"),
    ("all-invalid-utf8", b"\xff\xfe\n\xc0\xaf\n", "nothing submitted"),
    ("all-deep", b"[" * 50_000 + b"]" * 50_000 + b"\n", "nothing submitted"),
    ("too-many-lines", b"".join(jl({"custom_id": f"n{i}", "question": "q?"}) + b"\n"
                                for i in range(6)), "RAGQ_MAX_BATCH_LINES"),
]


@pytest.mark.parametrize(("body", "needle"), [c[1:] for c in SUBMIT_FILE_CASES],
                         ids=[c[0] for c in SUBMIT_FILE_CASES])
def test_submit_refuses_a_file_with_nothing_to_submit(ragq, tmp_path, body, needle):
    assert_clean_failure(ragq("submit", write(tmp_path, body), RAGQ_MAX_BATCH_LINES="5"),
                         needle)


@pytest.mark.parametrize(("args", "needle"), [
    (["submit", "/nonexistent/tickets.jsonl"], "no such file"),
    (["submit", "."], "no such file"),
    (["submit", "X", "--output", "o.jsonl"], "need --wait"),
    *[(["submit", "X", "--budget", b], "budget") for b in
      ['{"max_steps": true}', '{"max_cost_usd": NaN}', "cheap", '{"max_stepz": 1}',
       '{"max_steps": "3"}', "[1]", '{"max_steps": 0}']],
], ids=lambda v: repr(v)[:40])
def test_submit_refuses_bad_options(ragq, tmp_path, args, needle):
    args = [write(tmp_path, GOOD_FIRST + b"\n") if a == "X" else a for a in args]
    assert_clean_failure(ragq(*args), needle)


# --- collection names, wherever a collection is named --------------------------------------

ARGV_COLLECTIONS = [c for c in BAD_COLLECTIONS if "\x00" not in c]  # argv cannot hold NUL


@pytest.mark.parametrize("name", ARGV_COLLECTIONS, ids=lambda n: repr(n)[:24])
@pytest.mark.parametrize("command", ["submit", "ingest", "search", "ask"])
def test_a_bad_collection_name_is_refused_before_anything_runs(ragq, tmp_path, command, name):
    target = {"submit": write(tmp_path, GOOD_FIRST + b"\n"),
              "ingest": write(tmp_path, jl({"id": "d1", "text": "Some text."}) + b"\n",
                              "docs.jsonl"),
              "search": "refund policy", "ask": "What is the refund policy?"}[command]
    assert_clean_failure(ragq(command, target, "--collection", name), "invalid collection name")


def test_a_bad_default_collection_is_refused_as_a_setting(ragq):
    assert_clean_failure(ragq("search", "q", RAGQ_COLLECTION="../x"), "RAGQ_", "collection")


# --- ragq ask and ragq search: bad questions and queries -----------------------------------


@pytest.mark.parametrize(("args", "needle"), [
    (["ask", ""], "question"), (["ask", "   "], "question"), (["ask", "\t\n"], "question"),
    (["ask", "hi \udfff"], "surrogate"), (["ask", "x" * 20_001], "RAGQ_MAX_QUESTION_CHARS"),
    (["ask", "q?", "--custom-id", "c" * 600], "custom_id"),
    (["ask", "q?", "--acl", "public,\udfff"], "surrogate"),
    (["search", ""], "query"), (["search", "   "], "query"), (["search", "a \udfff"], "query"),
], ids=lambda v: repr(v)[:40])
def test_ask_and_search_refuse_bad_text(ragq, args, needle):
    assert_clean_failure(ragq(*args), needle)


@pytest.mark.parametrize("args", [["search", "q", "--top-k", "0"], ["search", "q", "-k", "x"],
                                  ["ask"], ["submit"], ["ingest"], ["nosuchcommand"]])
def test_usage_errors_exit_non_zero_without_a_traceback(ragq, args):
    run = ragq(*args)
    assert run.code == 2 and "Traceback" not in run.err + run.out, run.err


# --- ragq ingest -----------------------------------------------------------------------------

DOC_FIRST = jl({"id": "d1", "title": "One", "text": "The first document."})
DOC_LAST = jl({"id": "d2", "title": "Two", "text": "The second document."})
DOC_LINE_CASES = [
    *[(c.family, c.name, c.line) for c in LINE_CASES
      if c.family in {"json-syntax", "json-extensions-and-depth", "encoding", "not-an-object"}],
    ("doc-fields", "no-text", jl({"id": "x"})), ("doc-fields", "blank-text", jl({"id": "x",
                                                                                 "text": " "})),
    ("doc-fields", "no-id", jl({"text": "t"})), ("doc-fields", "id-number", jl({"id": 3,
                                                                                "text": "t"})),
    ("doc-fields", "tier-true", jl({"id": "x", "text": "t", "authority_tier": True})),
    ("doc-fields", "tier-zero", jl({"id": "x", "text": "t", "authority_tier": 0})),
    ("doc-fields", "acl-empty", jl({"id": "x", "text": "t", "acl": []})),
    ("doc-fields", "unknown-field", jl({"id": "x", "text": "t", "body": "b"})),
    ("doc-fields", "duplicate-id", jl({"id": "d1", "text": "again"})),
    ("lone-surrogate", "doc-text", b'{"id": "x", "text": "\\udfff"}'),
    ("lone-surrogate", "doc-id", b'{"id": "\\ud800", "text": "t"}'),
    ("lone-surrogate", "doc-metadata", b'{"id": "x", "text": "t", "metadata": {"\\udfff": 1}}'),
    ("json-extensions-and-depth", "doc-nan", b'{"id": "x", "text": "t", "metadata": {"n": NaN}}'),
]


@pytest.mark.parametrize(("line",), [(c[2],) for c in DOC_LINE_CASES],
                         ids=[f"{c[0]}:{c[1]}" for c in DOC_LINE_CASES])
def test_ingest_reads_a_bad_line_as_a_bad_line_and_keeps_the_rest(tmp_path, line):
    docs, bad = load(Path(write(tmp_path, DOC_FIRST + b"\n" + line + b"\n" + DOC_LAST + b"\n")))
    assert [d.id for d in docs] == ["d1", "d2"]
    assert [b.line for b in bad] == [2] and bad[0].reason


def test_ingest_reads_a_bom_file_whole(tmp_path):
    docs, bad = load(Path(write(tmp_path, b"\xef\xbb\xbf" + DOC_FIRST + b"\r\n" + DOC_LAST)))
    assert [d.id for d in docs] == ["d1", "d2"] and bad == []
    md = tmp_path / "note.md"
    md.write_bytes(b"\xef\xbb\xbf# Title\n\nBody text.\n")
    (doc,), _ = load(md)
    assert doc.title == "Title" and not doc.text.startswith("\ufeff")


INGEST_NOTHING = [
    ("empty-jsonl", b"", "empty"), ("blank-jsonl", b"\n \n", "empty"),
    ("all-bad-jsonl", b"{oops\n" + jl({"id": "x"}) + b"\n", "2 bad lines"),
    ("all-deep-jsonl", b"[" * 50_000 + b"]" * 50_000 + b"\n", "1 bad lines"),
    ("all-invalid-utf8", b"\xff\xfe\n", "1 bad lines"),
]


@pytest.mark.parametrize(("body", "needle"), [c[1:] for c in INGEST_NOTHING],
                         ids=[c[0] for c in INGEST_NOTHING])
def test_ingesting_nothing_fails_and_ends_its_run_as_failed(ragq, settings, tmp_path, body,
                                                            needle):
    run = ragq("ingest", write(tmp_path, body, "docs.jsonl"), "--json")
    assert_clean_failure(run, "nothing ingested", needle)
    report = json.loads(run.out)
    with session_scope(resources_for(settings).engine, readonly=True) as session:
        row = get_ingest_run(session, run_id=report["run_id"])
        assert (str(row.status), row.error) == ("failed", report["error"])


@pytest.mark.parametrize(("make", "needle"), [
    (lambda p: p / "missing.jsonl", "no such file"),
    (lambda p: (p / "x.csv").write_text("a,b") and p / "x.csv", "unsupported file type"),
    (lambda p: (p / "empty").mkdir() or p / "empty", "nothing ingested"),
    (lambda p: (p / "bad.md").write_bytes(b"caf\xe9") and p / "bad.md", "nothing ingested"),
    (lambda p: (p / "blank.md").write_text("  \n") and p / "blank.md", "nothing ingested"),
], ids=["missing", "csv", "empty-folder", "latin1-markdown", "blank-markdown"])
def test_ingest_refuses_paths_with_nothing_to_ingest(ragq, tmp_path, make, needle):
    assert_clean_failure(ragq("ingest", str(make(tmp_path))), needle)


# --- real processes -------------------------------------------------------------------------


@pytest.mark.parametrize("args", [
    ["search", "--collection", "../x", "refund"], ["ask", ""],
    ["submit", "DEEP"], ["ingest", "DEEP"],
], ids=["search-dotdot", "ask-empty", "submit-deep", "ingest-deep"])
def test_a_real_process_ends_with_one_error_line_and_no_traceback(home, tmp_path, args):
    deep = write(tmp_path, b'{"question": ' + b"[" * 100_000 + b"]" * 100_000 + b"}\n",
                 "deep.jsonl")
    argv = [deep if a == "DEEP" else a for a in args]
    proc = subprocess.run([sys.executable, "-m", "ragq.cli", *argv], env=cli_env(home),
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1, proc.stderr
    last = proc.stderr.strip().splitlines()[-1]
    assert "Traceback" not in proc.stderr and last.startswith("error: "), proc.stderr

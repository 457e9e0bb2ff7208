"""ACL labels given as options (issue 35): ``ragq search`` and ``ragq ask`` read ``--acl`` as a
ticket's ``acl`` is read, so an empty or blank list is refused before anything is searched or
submitted, never turned into "no filter" or into ``public``."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fakes.broker import memory_settings
from tests.malformed.cli_harness import Run, assert_clean_failure, cli_env, run_cli


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("acl-options") / "home"
    memory_settings(home)  # migrates the ledger
    return home


@pytest.fixture
def ragq(home, monkeypatch, capsys):
    def run(*args: str) -> Run:
        return run_cli(list(args), cli_env(home), monkeypatch, capsys)

    return run


@pytest.mark.parametrize("labels", ["", ",", " ", " , ", "public,,"])
def test_search_refuses_an_empty_or_blank_acl(ragq, labels):
    assert_clean_failure(ragq("search", "refund window", "--acl", labels), "acl",
                         "non-blank labels")


@pytest.mark.parametrize("labels", ["", ",", " ", "public, "])
def test_ask_refuses_an_empty_or_blank_acl_with_the_ticket_code(ragq, labels):
    assert_clean_failure(ragq("ask", "How long is the refund window?", "--acl", labels),
                         "acl", "[invalid_ticket]")


@pytest.mark.parametrize("sources", [",", " , "])
def test_submit_refuses_sources_that_name_nothing(ragq, tmp_path, sources):
    tickets = tmp_path / "t.jsonl"
    tickets.write_text('{"custom_id": "a", "question": "q?"}\n')
    assert_clean_failure(ragq("submit", str(tickets), "--sources", sources), "sources")

"""The README and docs/ stand alone and stay true: a reader with only the clone can follow every
link and run every command they name; the pages that mirror the code (settings, CLI, HTTP
routes) are generated from it or checked against it, so they fail here instead of drifting."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import typer.main

from ragq import settings_doc
from ragq.cli.main import app
from ragq.settings import Settings

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
PAGES = [ROOT / "README.md", ROOT / "CHANGELOG.md", *sorted(DOCS.glob("*.md"))]
LINK = re.compile(r"\[[^\]]+\]\(([^)\s]+)\)")
TEST_COMMAND = (
    "python3 -m venv .venv && .venv/bin/pip install -q -e '.[test]' && .venv/bin/python -m pytest"
)
RUN_COMMAND = (
    "python3 -m venv .venv && .venv/bin/pip install -q -e . && .venv/bin/ragq up && "
    ".venv/bin/ragq ingest examples/docs && .venv/bin/ragq submit examples/tickets.jsonl --wait "
    "--show -o results.jsonl; .venv/bin/ragq down"
)


def _slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[`*_]", "", heading.strip().lower())
    return re.sub(r"\s", "-", re.sub(r"[^\w\- ]", "", text))


def _anchors(page: Path) -> set[str]:
    text = re.sub(r"```.*?```", "", page.read_text(), flags=re.DOTALL)
    return {_slug(m) for m in re.findall(r"^#+ (.+)$", text, flags=re.MULTILINE)}


def _table(section: str) -> list[str]:
    """The first column of every body row of the Markdown tables in ``section``."""
    rows = re.findall(r"^\| (.+?) \|", section, flags=re.MULTILINE)
    return [r for r in rows if not set(r) <= {"-", "|", " "} and r not in ("command", "route")]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_links_stay_in_the_repository_and_reach_what_they_name(page: Path) -> None:
    text = page.read_text()
    assert "../shared" not in text and "/work/shared" not in text and "SPEC" not in text
    for target in LINK.findall(text):
        if target.startswith(("http://", "https://")):
            continue
        path, _, anchor = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        assert file.is_relative_to(ROOT) and file.exists(), (page.name, target)
        if anchor:
            assert anchor in _anchors(file), (page.name, target, sorted(_anchors(file)))


def test_the_readme_is_short_and_holds_both_commands_verbatim() -> None:
    text = (ROOT / "README.md").read_text()
    assert len(text.splitlines()) <= 250
    assert f"```sh\n{TEST_COMMAND}\n```" in text
    assert f"```sh\n{RUN_COMMAND}\n```" in text
    assert TEST_COMMAND in (ROOT / ".ci" / "run").read_text()
    for page in ("guide", "formats", "cli", "http", "configuration", "operations",
                 "architecture", "development", "benchmarks"):
        assert f"(docs/{page}.md)" in text, page


def test_the_files_the_commands_use_are_in_the_repository() -> None:
    text = "\n".join(page.read_text() for page in PAGES)
    for path in ("examples/docs", "examples/tickets.jsonl", "examples/eval",
                 "docker/compose.yaml", "docker/Dockerfile", ".ci/run"):
        assert path in text and (ROOT / path).exists(), path
    assert (ROOT / "examples" / "eval" / "corpus.jsonl").is_file()
    assert (ROOT / "examples" / "eval" / "questions.jsonl").is_file()


def test_the_configuration_page_is_the_settings_class_rendered() -> None:
    page = (DOCS / "configuration.md").read_text()
    assert page == settings_doc.render(), (
        "docs/configuration.md is stale: run "
        "`.venv/bin/python -m ragq.settings_doc docs/configuration.md`"
    )
    listed = re.findall(r"^\| `RAGQ_([A-Z0-9_]+)` \|", page, flags=re.MULTILINE)
    assert listed == [name.upper() for name in Settings.model_fields]


def test_a_setting_changed_in_the_class_shows_on_the_rendered_page(monkeypatch) -> None:
    field = Settings.model_fields["chunk_words"]
    monkeypatch.setattr(field, "description", "Words per chunk, re-described.")
    assert "| Words per chunk, re-described. |" in settings_doc.render()
    assert settings_doc.render() != (DOCS / "configuration.md").read_text()


def _leaf_commands() -> dict[tuple[str, ...], Any]:
    """Every command of the CLI that runs something, by its words after ``ragq``."""
    found: dict[tuple[str, ...], Any] = {}

    def walk(command: Any, path: tuple[str, ...]) -> None:
        if hasattr(command, "commands"):  # typer's own click: a group has subcommands
            for name, sub in command.commands.items():
                walk(sub, (*path, name))
        else:
            found[path] = command

    walk(typer.main.get_command(app), ())
    return found


def _cli_rows() -> list[tuple[tuple[str, ...], set[str]]]:
    """(command words, options named) of every ``ragq …`` span in cli.md's Commands table."""
    section = (DOCS / "cli.md").read_text().split("## Commands", 1)[1].split("\n## ", 1)[0]
    groups = {path[0] for path in _leaf_commands() if len(path) == 2}  # ragq keys …
    rows = []
    for cell in _table(section):
        for span in re.findall(r"`(ragq [^`]+)`", cell):
            words = span.split()[1:]
            path = tuple(w for w in words[:2] if re.fullmatch(r"[a-z]+", w))
            if len(path) == 2 and path[0] not in groups:
                path = path[:1]
            rows.append((path, set(re.findall(r"--[a-z][a-z-]*", span))))
    return rows


def test_every_command_of_the_cli_is_in_the_table_with_options_it_has() -> None:
    leaves = _leaf_commands()
    rows = _cli_rows()
    assert len(rows) >= 20
    for path, options in rows:
        assert path in leaves, path
        known = {o for p in leaves[path].params for o in (*p.opts, *p.secondary_opts)}
        assert options <= known, (path, options - known)
    assert set(leaves) <= {path for path, _ in rows}, set(leaves) - {p for p, _ in rows}


def _http_rows() -> set[tuple[str, str]]:
    """(METHOD, path with its parameters unnamed) of every route in http.md's Routes table."""
    section = (DOCS / "http.md").read_text().split("## Routes", 1)[1].split("\n## ", 1)[0]
    routes = set()
    for cell in _table(section):
        spans = re.findall(r"`([^`]+)`", cell)
        if not spans or not re.match(r"(GET|POST|PUT|PATCH|DELETE) /", spans[0]):
            continue
        method, base = spans[0].split()
        base = base.split("?", 1)[0]
        routes.add((method, base))
        for span in spans[1:]:  # `GET /v1/jobs/{id}`, `/evidence`: the same method, below it
            if span.startswith("/"):
                routes.add((method, base + span))
            elif re.match(rf"{method} /", span):
                routes.add((method, span.split()[1].split("?", 1)[0]))
    return {(m, re.sub(r"\{[^}]+\}", "{}", p)) for m, p in routes}


def test_the_route_table_is_the_openapi_document(tmp_path: Path) -> None:
    from ragq.api import create_api
    from tests.fakes.broker import memory_settings

    schema = create_api(memory_settings(tmp_path / "home")).openapi()
    served = {(method.upper(), re.sub(r"\{[^}]+\}", "{}", path))
              for path, operations in schema["paths"].items() for method in operations}
    assert len(served) >= 15
    assert _http_rows() == served

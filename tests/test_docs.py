"""The README stands alone: a reader with only the clone can follow every link and run every
command it names. Links stay inside the repository and reach a file (and, with ``#``, a heading)
that exists; every ``ragq`` command of the Commands table is a command of the CLI."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import typer.main

from ragq.cli.main import app

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"\[[^\]]+\]\(([^)\s]+)\)")


def _slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[`*_]", "", heading.strip().lower())
    return re.sub(r"\s", "-", re.sub(r"[^\w\- ]", "", text))


def _anchors(page: Path) -> set[str]:
    text = re.sub(r"```.*?```", "", page.read_text(), flags=re.DOTALL)
    return {_slug(m) for m in re.findall(r"^#+ (.+)$", text, flags=re.MULTILINE)}


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_links_stay_in_the_repository_and_reach_what_they_name(page: Path) -> None:
    text = page.read_text()
    assert "../shared" not in text and "SPEC" not in text
    for target in LINK.findall(text):
        if target.startswith(("http://", "https://")):
            continue
        path, _, anchor = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        assert file.is_relative_to(ROOT) and file.exists(), (page.name, target)
        if anchor:
            assert anchor in _anchors(file), (page.name, target, sorted(_anchors(file)))


def test_every_command_in_the_table_is_a_command_of_the_cli() -> None:
    group = typer.main.get_command(app)
    section = (ROOT / "README.md").read_text().split("## Commands", 1)[1].split("\n## ", 1)[0]
    named = re.findall(r"^\| `ragq ([a-z]+)(?: ([a-z]+))?", section, flags=re.MULTILINE)
    assert len(named) >= 15
    for command, sub in named:
        assert command in group.commands, command
        inner = group.commands[command]
        if hasattr(inner, "commands") and sub:
            assert sub in inner.commands, (command, sub)


def test_the_files_the_readme_commands_use_are_in_the_repository() -> None:
    text = (ROOT / "README.md").read_text()
    for path in ("examples/docs", "examples/tickets.jsonl", "examples/eval",
                 "docker/compose.yaml", "docker/Dockerfile", ".ci/run"):
        assert path in text and (ROOT / path).exists(), path
    assert (ROOT / "examples" / "eval" / "corpus.jsonl").is_file()
    assert (ROOT / "examples" / "eval" / "questions.jsonl").is_file()

"""Progress off a terminal: a line per N items with rate and ETA, nothing before work starts.

The clock is injected, so the rates and times below are exact and nothing waits.
"""

from __future__ import annotations

import io

from rich.console import Console

from ragq.cli.progress import StageProgress, progress_line


def _console() -> tuple[Console, io.StringIO]:
    out = io.StringIO()
    return Console(file=out, force_terminal=False, width=100, color_system=None), out


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_line_carries_count_share_rate_and_time_left() -> None:
    assert progress_line("answer", 40, 100, 20.0) == (
        "answer: 40/100 (40%), 2.0/s, ETA 0:00:30, elapsed 0:00:20")
    assert progress_line("answer", 3, 100, 60.0).startswith("answer: 3/100 (3%), 3.0/min")
    assert progress_line("answer", 0, 100, 5.0) == (
        "answer: 0/100 (0%), ?/s, ETA ?, elapsed 0:00:05")


def test_off_a_terminal_one_line_per_every_items_plus_start_and_end() -> None:
    console, out = _console()
    clock = Clock()
    progress = StageProgress(console, every=10, clock=clock)
    assert not progress.bars
    for done in (0, 3, 9, 10, 14, 25, 25, 31):
        clock.now += 1
        progress.update("answer", done, 31)
    progress.update("answer", 31, 31)  # after the end: nothing more
    lines = out.getvalue().splitlines()
    assert [line.split(",")[0] for line in lines] == [
        "answer: 0/31 (0%)", "answer: 10/31 (32%)", "answer: 25/31 (81%)",
        "answer: 31/31 (100%)"]
    # 10 items 3 s after the first update: 3.3/s, 21 left, about 6 s
    assert lines[1] == "answer: 10/31 (32%), 3.3/s, ETA 0:00:06, elapsed 0:00:03"


def test_by_default_about_twenty_lines_per_stage_and_stages_apart() -> None:
    console, out = _console()
    progress = StageProgress(console, clock=Clock())
    for done in range(0, 1001):
        progress.update("ingest", done, 1000)
    for done in range(0, 11):
        progress.update("answer", done, 10)
    lines = out.getvalue().splitlines()
    assert len([line for line in lines if line.startswith("ingest:")]) == 21
    assert len([line for line in lines if line.startswith("answer:")]) == 11


def test_nothing_is_shown_before_the_first_update_or_when_disabled() -> None:
    console, out = _console()
    with StageProgress(console):
        pass
    with StageProgress(console, disable=True) as progress:
        progress.update("answer", 5, 10)
    assert out.getvalue() == ""


def test_on_a_terminal_it_draws_bars_instead_of_lines() -> None:
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=80)
    with StageProgress(console) as progress:
        assert progress.bars
        progress.update("answer", 5, 10)
    assert "answer" in out.getvalue() and "5/10" in out.getvalue()

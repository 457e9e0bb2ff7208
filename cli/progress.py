"""Progress of long commands: bars on a terminal, plain lines everywhere else.

Rich's progress bars draw nothing until the end when their stream is not a terminal, so a
`ragq eval` run under CI, ``nohup`` or ``> out.txt`` looked dead for as long as it ran. Off a
terminal, :class:`StageProgress` writes one line per ``every`` items of a stage instead (and one
when the stage starts and ends), with the rate and the time left, flushed at once::

    answer: 40/100 (40%), 1.9/s, ETA 0:00:31, elapsed 0:00:21

Bars, and the first line, appear only once the work reports progress, so a command that fails
on its input first (a missing path, a stack that is down) prints the error alone.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from types import TracebackType

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)

LINES_PER_STAGE = 20
"""Off a terminal, about this many lines per stage unless ``every`` is given."""


def _clock_text(seconds: float) -> str:
    return str(timedelta(seconds=round(max(0.0, seconds))))


def progress_line(stage: str, done: int, total: int, elapsed_s: float) -> str:
    """One progress line: count, share, rate and time left (``?`` before any item is done)."""
    share = f" ({done / total:.0%})" if total else ""
    if done and elapsed_s > 0:
        rate = done / elapsed_s
        eta = _clock_text((total - done) / rate) if total >= done else "?"
        speed = f"{rate:.1f}/s" if rate >= 0.1 else f"{rate * 60:.1f}/min"
    else:
        speed, eta = "?/s", "?"
    return (f"{stage}: {done}/{total}{share}, {speed}, ETA {eta}, "
            f"elapsed {_clock_text(elapsed_s)}")


@dataclass
class _Stage:
    started: float
    bucket: int = -1
    finished: bool = False


class StageProgress:
    """Follow named stages (``ingest``, ``answer``…) fed as ``update(stage, done, total)``.

    ``console`` is where progress goes: bars when it is a terminal, lines otherwise (every
    ``every`` items; default about :data:`LINES_PER_STAGE` lines per stage). ``disable`` shows
    nothing. ``clock`` is injectable so the lines can be checked without waiting.
    """

    def __init__(self, console: Console, *, every: int | None = None, disable: bool = False,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.console, self.every, self.disable, self.clock = console, every, disable, clock
        self.bars = console.is_terminal and not disable
        self._stages: dict[str, _Stage] = {}
        self._progress: Progress | None = None
        self._tasks: dict[str, TaskID] = {}

    def update(self, stage: str, done: int, total: int) -> None:
        if self.disable:
            return
        if self.bars:
            self._update_bar(stage, done, total)
            return
        state = self._stages.setdefault(stage, _Stage(self.clock()))
        if state.finished:
            return
        every = self.every or max(1, total // LINES_PER_STAGE)
        bucket = done // every
        state.finished = total > 0 and done >= total
        if bucket > state.bucket or state.finished:
            state.bucket = bucket
            self.console.print(progress_line(stage, done, total, self.clock() - state.started),
                               highlight=False, markup=False, soft_wrap=True)
            self.console.file.flush()

    def _update_bar(self, stage: str, done: int, total: int) -> None:
        if self._progress is None:
            self._progress = Progress(TextColumn("{task.description}"), BarColumn(),
                                      MofNCompleteColumn(), TimeElapsedColumn(),
                                      console=self.console)
            self._progress.start()
        if stage not in self._tasks:
            self._tasks[stage] = self._progress.add_task(stage, total=total)
        self._progress.update(self._tasks[stage], completed=done, total=total)

    def __enter__(self) -> StageProgress:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self._progress is not None:
            self._progress.stop()

    def stage(self, name: str) -> Callable[[int, int], None]:
        """An ``on_progress(done, total)`` callback for one stage."""
        return lambda done, total: self.update(name, done, total)

"""CPU and memory of a running stack's processes, for benches: what `ragq up` recorded (broker,
workers, resident supervisor, API or Flower when started) and their children, by psutil."""

from __future__ import annotations

import threading
import time
from collections import defaultdict

import psutil

from ragq.settings import Settings
from ragq.workers.stack_state import load_state


def stack_processes(settings: Settings) -> dict[str, list[psutil.Process]]:
    """Every live process of the stack, by its recorded name: the process and its children."""
    state = load_state(settings)
    found: dict[str, list[psutil.Process]] = {}
    for record in state.running() if state else []:
        try:
            proc = psutil.Process(record.pid)
            found[record.name] = [proc, *proc.children(recursive=True)]
        except psutil.Error:
            continue
    return found


def _cpu_s(proc: psutil.Process) -> float:
    """User + system CPU seconds of ``proc`` and of its children it has waited for."""
    times = proc.cpu_times()
    return times.user + times.system + times.children_user + times.children_system


class StackCpu:
    """CPU seconds the given processes spend inside the ``with`` block: ``total_s`` and
    ``by_name``. A process that ends inside the block loses what it spent there."""

    def __init__(self, processes: dict[str, list[psutil.Process]]):
        self.processes = processes
        self.total_s = 0.0
        self.by_name: dict[str, float] = {}
        self._before: dict[int, float] = {}

    def __enter__(self) -> StackCpu:
        for procs in self.processes.values():
            for proc in procs:
                self._before[proc.pid] = _safe(proc)
        return self

    def __exit__(self, *exc: object) -> None:
        for name, procs in self.processes.items():
            spent = 0.0
            for proc in procs:
                after = _safe(proc)
                spent += max(0.0, after - self._before[proc.pid]) if after else 0.0
            self.by_name[name] = round(spent, 3)
        self.total_s = sum(self.by_name.values())


def _safe(proc: psutil.Process) -> float:
    try:
        return _cpu_s(proc)
    except psutil.Error:
        return 0.0


class StackRss:
    """Samples the RSS of the given processes in a thread; ``peak`` in bytes, by name (a name's
    process and children summed at each sample)."""

    def __init__(self, processes: dict[str, list[psutil.Process]], *, interval_s: float = 0.05):
        self.processes, self.interval_s = processes, interval_s
        self.peak: dict[str, int] = defaultdict(int)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            for name, procs in self.processes.items():
                total = 0
                for proc in procs:
                    try:
                        total += proc.memory_info().rss
                    except psutil.Error:
                        continue
                self.peak[name] = max(self.peak[name], total)
            time.sleep(self.interval_s)

    def __enter__(self) -> StackRss:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

"""`ragq eval DATASET_DIR`: the report table, agentic beside the single-shot baseline."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from cli.output import console, emit_json, err_console
from evaluation import run_eval, write_report
from ragq.settings import Settings

COLUMNS = [
    ("questions", "n", "{:.0f}"), ("evidence_recall", "evid. recall", "{:.3f}"),
    ("context_recall", "ctx recall", "{:.3f}"), ("all_gold_rate", "all-gold", "{:.3f}"),
    ("retrieval_calls_mean", "retr. mean", "{:.2f}"),
    ("retrieval_calls_p95", "retr. p95", "{:.0f}"),
    ("model_calls_mean", "model mean", "{:.2f}"), ("model_calls_p95", "model p95", "{:.0f}"),
    ("latency_ms_p50", "lat. p50 ms", "{:.0f}"), ("latency_ms_p95", "lat. p95 ms", "{:.0f}"),
    ("answer_f1", "ans. F1", "{:.3f}"), ("answer_in_text", "ans. in text", "{:.3f}"),
]


def table(report: dict[str, Any]) -> Table:
    out = Table(title=f"{report['dataset']} (mean context {report['context_chunks_mean']:.1f} "
                      "chunks; the baseline gets the same number per question)")
    out.add_column("flow")
    out.add_column("route")
    for _, label, _ in COLUMNS:
        out.add_column(label, justify="right")
    for flow in ("agentic", "baseline"):
        for route, figures in report[flow].items():
            out.add_row(flow, route, *[
                fmt.format(figures[key]) if key in figures else "—" for key, _, fmt in COLUMNS])
    return out


def evaluate(settings: Settings, dataset: Path, *, limit: int | None, json_out: Path | None,
             as_json: bool) -> None:
    progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                        TimeElapsedColumn(), console=err_console, disable=as_json)
    bars: dict[str, Any] = {}

    def update(stage: str, done: int, total: int) -> None:
        if stage not in bars:
            bars[stage] = progress.add_task(stage, total=total)
        progress.update(bars[stage], completed=done, total=total)

    with progress:
        report = run_eval(settings, dataset, limit=limit, on_progress=update)
    if json_out:
        write_report(report, json_out)
    if as_json:
        emit_json(report)
    else:
        console.print(table(report), width=max(console.width, 180))

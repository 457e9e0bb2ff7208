"""Measure each search mode, with the rerank on and off, on the evaluation sets (issue 14).

For every dataset, mode (dense, sparse, hybrid-rrf, hybrid-dbsf) and rerank (on: the built-in
budget profiles; off: the same profiles with ``max_rerank_calls=0``, so the flow skips the
reranker and keeps the evidence in retrieval order), runs the offline agentic flow of
bench/offline_flow.py in process and prints one row: all-gold-in-evidence (every gold document
among the hits the job retrieved), all-gold-in-context (every gold document in the final
context), the same for the single-shot baseline (one search of the question, as many chunks
as the agentic context), and retrieval calls per question.

Usage:
    python bench/search_modes.py /work/shared/data/hotpotqa_train [more dataset dirs]
        [--limit N] [--modes dense,sparse,hybrid-rrf,hybrid-dbsf] [--rerank on,off] [--json]

Each row is printed as soon as it is measured (flushed), so a long run can be followed with
``tail -f``. The stores are cached under /tmp/ragq_offline_flow (see bench/offline_flow.py).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench.offline_flow

from bench.offline_flow import run
from ragq.orchestration.budgets import DEFAULT_PROFILES
from ragq.schemas.search import SearchFusion, SearchMode
from ragq.schemas.ticket import BudgetProfiles

MODES: dict[str, dict[str, Any]] = {
    "dense": {"search_mode": SearchMode.DENSE},
    "sparse": {"search_mode": SearchMode.SPARSE},
    "hybrid-rrf": {"search_mode": SearchMode.HYBRID, "search_fusion": SearchFusion.RRF},
    "hybrid-dbsf": {"search_mode": SearchMode.HYBRID, "search_fusion": SearchFusion.DBSF},
}
NO_RERANK = BudgetProfiles(**{route.value: budget.model_copy(update={"max_rerank_calls": 0})
                              for route, budget in DEFAULT_PROFILES.items()})
HEADER = (f"{'dataset':18} {'n':>4} {'mode':12} {'rerank':6} {'gold in evidence':>17} "
          f"{'gold in context':>16} {'baseline ctx':>13} {'calls/q':>8} {'secs':>6}")


def measure(dataset: Path, mode: str, rerank: bool, limit: int | None) -> dict[str, Any]:
    """The overall figures of one dataset under one mode, rerank on or off."""
    overrides = dict(MODES[mode])
    if not rerank:
        overrides["budget_profiles"] = NO_RERANK
    started = time.perf_counter()
    figures = run(dataset, limit, False, **overrides)["overall"]
    return {"dataset": dataset.name, "mode": mode, "rerank": rerank,
            "seconds": round(time.perf_counter() - started, 1), **figures}


def row(f: dict[str, Any]) -> str:
    """One measured configuration as a table line."""
    return (f"{f['dataset']:18} {f['n']:>4} {f['mode']:12} {'on' if f['rerank'] else 'off':6} "
            f"{f['all_gold_in_evidence']:>17.2f} {f['all_gold']:>16.2f} "
            f"{f['baseline_all_gold']:>13.2f} {f['retrieval_calls']:>8.2f} {f['seconds']:>6.0f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("datasets", nargs="+", type=Path)
    parser.add_argument("--limit", type=int, default=None, help="first N questions only")
    parser.add_argument("--modes", default=",".join(MODES),
                        help=f"comma-separated, of: {', '.join(MODES)}")
    parser.add_argument("--rerank", default="on,off", help="on, off or on,off")
    parser.add_argument("--json", action="store_true", help="one JSON line per row")
    args = parser.parse_args()
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    unknown = [m for m in modes if m not in MODES]
    if unknown:
        parser.error(f"unknown mode(s) {unknown}; valid: {', '.join(MODES)}")
    reranks = [r.strip() == "on" for r in args.rerank.split(",") if r.strip()]
    if not args.json:
        print(HEADER, flush=True)
    for dataset in args.datasets:
        for mode in modes:
            for rerank in reranks:
                figures = measure(dataset, mode, rerank, args.limit)
                print(json.dumps(figures) if args.json else row(figures), flush=True)


if __name__ == "__main__":
    main()

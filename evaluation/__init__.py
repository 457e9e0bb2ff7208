"""`ragq eval`: measuring the flow against a single-shot baseline on a dataset (SPEC C18)."""

from ragq.evaluation.metrics import percentile, question_row, recall, summarize
from ragq.evaluation.run import collection_for, run_eval, write_report

__all__ = [
    # running
    "collection_for",
    "run_eval",
    "write_report",
    # arithmetic
    "percentile",
    "question_row",
    "recall",
    "summarize",
]

"""`ragq eval`: measuring the flow against a single-shot baseline on a dataset."""

from ragq.evaluation.metrics import percentile, question_row, recall, summarize
from ragq.evaluation.questions import EvalQuestion, load_questions
from ragq.evaluation.run import collection_for, run_eval, submit_questions, write_report

__all__ = [
    # reading a dataset's questions
    "EvalQuestion",
    "load_questions",
    # running
    "collection_for",
    "run_eval",
    "submit_questions",
    "write_report",
    # arithmetic
    "percentile",
    "question_row",
    "recall",
    "summarize",
]

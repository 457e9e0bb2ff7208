"""An evaluation dataset's questions, read as the tickets ``ragq submit`` would read (issue 31).

A questions.jsonl line is a ticket plus what the evaluation scores it by (``gold_doc_ids``,
``answer``, ``answer_aliases``); keys that are no ticket field (question type, hops, asks)
travel as the ticket's metadata. Every line goes through the one ticket parser, so a duplicate
``custom_id``, an over-long question or a bad field refuses the run naming its line and code,
and every ticket field (``acl``, ``route``, ``budget``, ``sources``, ``webhook_url``,
``metadata``) reaches the job as it would through ``ragq submit``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ragq.errors import InputError
from ragq.schemas.ticket import Ticket
from ragq.settings import Settings, build_settings
from ragq.submission.access import Caller
from ragq.submission.tickets import TicketError, read_ticket_file, refusal


@dataclass(frozen=True)
class EvalQuestion:
    """One question of a dataset: the ticket as submitted, and its gold."""

    ticket: Ticket

    @property
    def custom_id(self) -> str:
        return self.ticket.custom_id

    @property
    def question(self) -> str:
        return self.ticket.question

    @property
    def gold_doc_ids(self) -> list[str]:
        return list(self.ticket.gold_doc_ids or [])

    @property
    def answers(self) -> list[str]:
        """The reference answer and its aliases, where the dataset has them."""
        return [a for a in [self.ticket.answer, *(self.ticket.answer_aliases or [])] if a]

    def acl(self, caller: Caller) -> tuple[str, ...]:
        """The ACL its job runs with when ``caller`` submits it (the one default-ACL rule),
        which its baseline search must use too."""
        return self.ticket.acl if self.ticket.acl is not None else caller.default_acl


def load_questions(dataset: Path, limit: int | None = None, *,
                   settings: Settings | None = None) -> list[EvalQuestion]:
    """The dataset's first ``limit`` questions (all when None), under the settings' submission
    limits. Raises InputError naming the file (and TicketRefusedError or LimitExceededError
    naming the line) when the folder or a line is bad: an evaluation runs all its questions
    or none."""
    path = dataset / "questions.jsonl"
    if not path.is_file() or not (dataset / "corpus.jsonl").is_file():
        raise InputError("a dataset folder needs corpus.jsonl and questions.jsonl",
                         source=str(dataset))
    settings = settings or build_settings()
    parsed = read_ticket_file(path, max_lines=settings.max_batch_lines,
                              max_bytes=settings.max_batch_bytes,
                              max_question_chars=settings.max_question_chars, annotations=True)
    questions = []
    for line, item in parsed:
        if isinstance(item, TicketError):
            raise refusal(item, source=str(path), line=line)
        questions.append(EvalQuestion(item))
    return questions[:limit] if limit else questions

"""The offline ticket reader on tickets of many shapes (written for these tests): asks found by
their form, lead-ins dropped, noise set aside, the rest kept as context."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ragq.providers.offline.reader import read_ticket

PROSE = """Hi there,

We run a bakery chain and moved our ordering to your platform last spring. Our setup is two
stores and one warehouse.

First, how long are invoices kept in the billing portal? Second, can a store manager export
them as CSV?

Thanks a lot,
Rosa Martins
Head of Finance"""

LISTED = """Hello support,

Three things came up this week:

1. Which regions host the EU data?
2) Please explain how quota resets work for monthly plans.
c. What happens to queued jobs when a plan is downgraded?

Cheers,
Tom"""

LOGS = """Dear team,

Our nightly sync fails with a timeout. Here is what the worker printed:

```
2026-03-02T01:00:07Z ERROR sync job=42 status=504
Traceback (most recent call last):
  File "sync.py", line 10, in run
```

    retry_limit: 5
    timeout_s: 30

Why does the sync stop after five retries?

Please let us know if you need more logs, we are available all week.

Best regards,
-- Ana"""


def _texts(text: str) -> list[str]:
    return [a.text for a in read_ticket(text).asks]


def test_questions_in_prose_become_asks_without_their_lead_ins():
    reading = read_ticket(PROSE)
    assert [a.text for a in reading.asks] == [
        "How long are invoices kept in the billing portal?",
        "Can a store manager export them as CSV?"]
    assert "bakery chain" in reading.context
    assert {"Hi there,", "Thanks a lot,", "Rosa Martins", "Head of Finance"} <= set(reading.noise)


def test_numbered_and_lettered_items_are_asks_each_and_so_are_requests():
    assert _texts(LISTED) == [
        "Which regions host the EU data?",
        "Please explain how quota resets work for monthly plans.",
        "What happens to queued jobs when a plan is downgraded?"]


def test_logs_configuration_and_questions_about_the_exchange_are_not_asks():
    reading = read_ticket(LOGS)
    # The failure the customer states is what the question is about: one ask, in order.
    assert [a.text for a in reading.asks] == [
        "Our nightly sync fails with a timeout. Why does the sync stop after five retries?"]
    noise = "\n".join(reading.noise)
    assert "status=504" in noise and "retry_limit: 5" in noise and "Traceback" in noise
    assert "let us know" not in " ".join(a.text for a in reading.asks)


def test_a_question_leaning_on_the_sentence_before_carries_it_along():
    ticket = "Hello,\n\nOur exports to the archive bucket fail every night. Why does it happen?"
    (ask,) = read_ticket(ticket).asks
    assert ask.text == ("Our exports to the archive bucket fail every night. "
                        "Why does it happen?")


def test_a_text_without_a_question_is_one_ask_of_its_own_prose():
    ticket = "Hi,\n\nThe dashboard shows the wrong currency for our Swiss account.\n\nBest,\nLi"
    (ask,) = read_ticket(ticket).asks
    assert ask.text == "The dashboard shows the wrong currency for our Swiss account."


def test_an_ask_repeated_in_the_ticket_is_read_once():
    ticket = "How do refunds work?\n\nAgain: how do refunds work?"
    assert _texts(ticket) == ["How do refunds work?"]


questions = st.lists(st.sampled_from([
    "How are seats billed for contractors?", "What is the retention period for logs?",
    "Can I move a workspace to another region?", "Why did the webhook stop firing?",
    "Which plan includes single sign-on?"]), min_size=1, max_size=4, unique=True)


@settings(max_examples=60, deadline=None)
@given(asks=questions, greeting=st.sampled_from(["Hi,", "Hello team,", "Dear support,", ""]),
       signoff=st.sampled_from(["Thanks,\nJo", "Best regards,\nSam Lee", "Cheers", ""]),
       listed=st.booleans(), background=st.booleans())
def test_every_question_of_a_generated_ticket_is_found_once(asks, greeting, signoff, listed,
                                                             background):
    body = [f"{i + 1}. {q}" for i, q in enumerate(asks)] if listed else [" ".join(asks)]
    parts = [greeting, "We are a team of nine using the API since May." if background else "",
             "\n".join(body), signoff]
    reading = read_ticket("\n\n".join(p for p in parts if p))
    assert [a.text for a in reading.asks] == asks
    assert all(line not in " ".join(a.text for a in reading.asks)
               for line in signoff.splitlines() if line)

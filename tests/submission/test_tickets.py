import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ragq.errors import InputError
from ragq.schemas.ticket import Ticket
from ragq.submission.tickets import TicketError, parse_lines, read_ticket_file


def lines(*records):
    return iter([r if isinstance(r, str) else json.dumps(r) for r in records])


def test_each_bad_line_is_an_error_with_its_number_and_reason():
    parsed = dict(parse_lines(lines(
        {"custom_id": "a", "question": "What?"},
        "{oops",
        {"custom_id": "b"},
        {"custom_id": "c", "question": "Why?", "budget": {"max_steps": -1}},
        {"custom_id": "d", "question": "How?", "budget": {"max_stepz": 3}},
        {"custom_id": "a", "question": "Again?"},
        {"custom_id": "e", "question": "Where?", "route": "teleport"},
        {"custom_id": "f", "question": "ok", "acl": ["staff"]},
    ), source="t.jsonl"))
    assert isinstance(parsed[1], Ticket) and isinstance(parsed[8], Ticket)
    errors = {n: e for n, e in parsed.items() if isinstance(e, TicketError)}
    assert set(errors) == {2, 3, 4, 5, 6, 7}
    assert errors[2].code == "invalid_json"
    assert "question" in errors[3].message and errors[3].custom_id == "b"
    assert "budget.max_steps" in errors[4].message
    assert "max_stepz" in errors[5].message
    assert errors[6].code == "duplicate_custom_id" and "line 1" in errors[6].message
    assert "simple, bounded, full, escalate" in errors[7].message


@given(st.lists(st.one_of(
    st.text(max_size=30),
    st.dictionaries(st.sampled_from(["custom_id", "question", "acl", "route", "x"]),
                    st.one_of(st.text(max_size=10), st.integers(), st.none()), max_size=4)
    .map(json.dumps),
), max_size=30))
def test_any_input_yields_one_outcome_per_non_blank_line(raw_lines):
    raw_lines = [line.replace("\n", " ").replace("\r", " ") for line in raw_lines]
    parsed = list(parse_lines(iter(raw_lines), source="x"))
    assert [n for n, _ in parsed] == [i for i, line in enumerate(raw_lines, 1) if line.strip()]
    assert all(isinstance(item, Ticket | TicketError) for _, item in parsed)


def test_limits_are_enforced_with_the_setting_to_change(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps({"custom_id": str(i), "question": "q"}) + "\n"
                            for i in range(5)))
    assert len(read_ticket_file(path, max_lines=5, max_bytes=10_000)) == 5
    with pytest.raises(InputError, match="RAGQ_MAX_BATCH_LINES"):
        read_ticket_file(path, max_lines=4, max_bytes=10_000)
    with pytest.raises(InputError, match="RAGQ_MAX_BATCH_BYTES"):
        read_ticket_file(path, max_lines=5, max_bytes=10)
    with pytest.raises(InputError, match="no such file"):
        read_ticket_file(tmp_path / "missing.jsonl", max_lines=5, max_bytes=10)


def test_overlong_questions_fail_alone_and_long_tickets_pass_by_default():
    tickets = [{"custom_id": "x", "question": "q" * 25_000},
               {"custom_id": "y", "question": "log line\n" * 900}]  # 9,000 characters
    (_, too_long), (_, long_ok) = parse_lines(lines(*tickets), source="x")
    assert isinstance(too_long, TicketError) and too_long.code == "question_too_long"
    assert "20000" in too_long.message and too_long.custom_id == "x"
    assert isinstance(long_ok, Ticket) and len(long_ok.question) > 8000

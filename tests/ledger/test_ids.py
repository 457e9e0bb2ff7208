"""Row ids: readable prefix, unique, ordered by creation time."""

from __future__ import annotations

import re
import time

import pytest

from ragq.ledger.ids import new_id

BODY = re.compile(r"[0-9A-HJKMNP-TV-Z]{26}")


def test_ids_have_the_prefix_and_a_fixed_body() -> None:
    value = new_id("job")
    prefix, body = value.split("_")
    assert prefix == "job"
    assert BODY.fullmatch(body)


def test_ids_do_not_repeat() -> None:
    values = [new_id("ev") for _ in range(20_000)]
    assert len(set(values)) == len(values)


def test_ids_sort_by_creation_time() -> None:
    earlier = new_id("bat")
    time.sleep(0.002)
    later = new_id("bat")
    assert earlier < later


@pytest.mark.parametrize("prefix", ["job_", "Job", "j", "toolongprefix", "sq1", ""])
def test_bad_prefixes_fail_with_an_example(prefix: str) -> None:
    with pytest.raises(ValueError, match=r"e\.g\. 'job'"):
        new_id(prefix)

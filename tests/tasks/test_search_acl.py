"""No search runs without an ACL filter (issue 35): the search tasks refuse a missing, empty or
blank ACL instead of reading it as "everything"."""

from __future__ import annotations

import pytest

from ragq.tasks.search import acl_filter


@pytest.mark.parametrize("acl", [None, [], [""], [" "], ["public", "  "]])
def test_a_search_without_labels_is_refused(acl):
    with pytest.raises(ValueError, match="acl"):
        acl_filter(acl)


def test_labels_are_read_as_every_acl_is():
    assert acl_filter([" staff", "public", "staff"]).acl == ("staff", "public")

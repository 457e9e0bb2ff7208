"""Search mode and fusion values (issue 14): where they are given, a bad one is refused with
the valid ones named."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from ragq.schemas.search import (
    SearchFusion,
    SearchMode,
    SearchRequest,
    SparseTerms,
    parse_fusion,
    parse_mode,
)
from ragq.settings import build_settings


def test_settings_read_the_mode_and_fusion_from_the_environment(monkeypatch):
    monkeypatch.setenv("RAGQ_SEARCH_MODE", "hybrid")
    monkeypatch.setenv("RAGQ_SEARCH_FUSION", "dbsf")
    settings = build_settings()
    assert (settings.search_mode, settings.search_fusion) == (SearchMode.HYBRID,
                                                              SearchFusion.DBSF)


def test_a_bad_mode_in_the_environment_names_the_setting_and_the_valid_modes(monkeypatch):
    monkeypatch.setenv("RAGQ_SEARCH_MODE", "semantic")
    with pytest.raises(ValidationError) as raised:
        build_settings()
    message = str(raised.value)
    assert "search_mode" in message
    assert all(mode.value in message for mode in SearchMode)


def test_a_bad_fusion_names_the_valid_ones():
    with pytest.raises(ValidationError) as raised:
        build_settings(search_fusion="sum")
    assert "rrf" in str(raised.value) and "dbsf" in str(raised.value)


def test_parsing_a_request_option_names_where_and_what_is_valid():
    assert parse_mode(" Sparse ", where="--mode") is SearchMode.SPARSE
    with pytest.raises(ValueError, match=r"--mode: unknown search mode 'bm25'; valid: dense, "
                                         r"sparse, hybrid"):
        parse_mode("bm25", where="--mode")
    with pytest.raises(ValueError, match="valid: rrf, dbsf"):
        parse_fusion("max", where="--fusion")


def test_a_request_is_labelled_with_its_fusion_only_when_hybrid():
    assert SearchRequest().label == "dense"
    assert SearchRequest(SearchMode.SPARSE, SearchFusion.DBSF).label == "sparse"
    assert SearchRequest(SearchMode.HYBRID, SearchFusion.DBSF).label == "hybrid-dbsf"


def test_sparse_terms_need_one_value_per_index():
    with pytest.raises(ValueError, match="2 indices but 1 values"):
        SparseTerms((1, 2), (1.0,))

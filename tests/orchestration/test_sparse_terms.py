"""Sparse term vectors (issue 14): the tokenizer, stable ids, BM25 document weights."""

from __future__ import annotations

import subprocess
import sys

from hypothesis import given
from hypothesis import strategies as st

from ragq.orchestration.sparse_terms import (
    document_terms,
    query_terms,
    term_id,
    terms,
)


def test_terms_are_lowercased_content_words_lightly_stemmed():
    assert terms("The Directors of the Rohingya and a director") == [
        "director", "rohingya", "director"]


def test_a_term_id_is_the_same_in_another_process():
    """``hash()`` is salted per process; the ids a collection stores must not be."""
    code = "from ragq.orchestration.sparse_terms import term_id; print(term_id('refund'))"
    other = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           check=True, env={"PYTHONHASHSEED": "123"})
    assert int(other.stdout) == term_id("refund")


@given(st.text(max_size=200))
def test_vectors_are_well_formed_whatever_the_text(text):
    for vector in (document_terms(text), query_terms(text)):
        assert list(vector.indices) == sorted(set(vector.indices))
        assert all(0 <= i < 2**32 for i in vector.indices)
        assert all(v > 0 for v in vector.values)


def test_a_query_weighs_every_distinct_term_once():
    vector = query_terms("refund refund window")
    assert sorted(vector.values) == [1.0, 1.0]
    assert set(vector.indices) == {term_id("refund"), term_id("window")}


def test_document_weights_saturate_with_frequency_and_fall_with_length():
    once = dict(zip(*[document_terms("refund policy").indices,
                      document_terms("refund policy").values], strict=True))
    thrice = document_terms("refund refund refund policy")
    weights = dict(zip(thrice.indices, thrice.values, strict=True))
    assert weights[term_id("refund")] > once[term_id("refund")]
    assert weights[term_id("refund")] < 3 * once[term_id("refund")]  # saturates (BM25 k1)
    longer = document_terms("refund policy " + " ".join(f"word{i}" for i in range(300)))
    assert dict(zip(longer.indices, longer.values, strict=True))[term_id("refund")] < \
        once[term_id("refund")]


def test_stopwords_only_give_an_empty_vector():
    assert not query_terms("what is the of")

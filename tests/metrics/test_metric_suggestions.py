"""An unknown metric name: the canonical spelling suggested, never a dump of every name.

The grammar stays strict (``NDCG@10`` is not read as ``ndcg@10``); the error names the
canonical form for a different case, ``_at_`` / ``_cut_`` / ``.`` / ``_`` cutoffs (other
tools' spellings) and common peers' names, and points to ``list_metrics()``.
"""

from __future__ import annotations

import pytest

import polars_rankeval as prk

SUGGESTIONS = [
    ("NDCG@10", "ndcg@10"),
    ("ndcg_at_10", "ndcg@10"),
    ("ndcg_cut_10", "ndcg@10"),
    ("ndcg_cut.10", "ndcg@10"),
    ("NDCG_cut_10", "ndcg@10"),
    ("P_10", "precision@10"),
    ("P.5", "precision@5"),
    ("recall_5", "recall@5"),
    ("Recall@10", "recall@10"),
    ("MAP", "map"),
    ("map_cut_100", "map@100"),
    ("MRR@5", "mrr@5"),
    ("mrr_at_5", "mrr@5"),
    ("HR@10", "hit_rate@10"),
    ("hit@10", "hit_rate@10"),
    ("precision_at_5", "precision@5"),
    ("Precision(rel=2)@5", "precision(rel=2)@5"),
    ("ndgc@10", "ndcg@10"),  # a typo: the closest name
]


@pytest.mark.parametrize(("text", "canonical"), SUGGESTIONS)
def test_unknown_spelling_suggests_the_canonical_name(text: str, canonical: str) -> None:
    with pytest.raises(ValueError, match=r"^unknown metric ") as raised:
        prk.parse_metric(text)
    message = str(raised.value)
    assert message.startswith(f"unknown metric {text!r}; did you mean {canonical!r}?")
    assert "list_metrics()" in message
    assert "accuracy, aclt" not in message  # no dump of every name
    assert prk.parse_metric(canonical).name == canonical


@pytest.mark.parametrize("text", ["foo", "foo@10", "zzz_at_3"])
def test_no_suggestion_points_to_the_listing(text: str) -> None:
    with pytest.raises(
        ValueError, match=r"^unknown metric .*; see polars_rankeval\.list_metrics\(\)"
    ):
        prk.parse_metric(text)


def test_the_grammar_stays_strict_and_other_errors_are_unchanged() -> None:
    for text in ("NDCG@10", "ndcg_at_10"):
        with pytest.raises(ValueError, match=r"^unknown metric "):
            prk.parse_metric(text)
    # Errors of a known name keep their own message (no suggestion).
    with pytest.raises(ValueError, match=r"cutoff k of metric 'ndcg' must be a positive integer"):
        prk.parse_metric("ndcg@0")
    with pytest.raises(ValueError, match=r"unknown parameter 'gian' for metric 'ndcg'"):
        prk.parse_metric("ndcg(gian=exp)@10")

"""Every metric by hand, once without ties and once with tied scores.

One user, six candidates. Scores 0.9, 0.8, 0.7 (tied twice), 0.5, and one judged item
that was not recommended. Relevance in parentheses:

    untied:  A 0.9 (1) | B 0.8 (0) | C 0.7 (2) | D 0.6 (0) | E 0.5 (1) | F - (3)
    tied:    A 0.9 (1) | B 0.7 (0) | C 0.7 (2) | D 0.7 (0) | E 0.5 (1) | F - (3)

R = 4 relevant items (A, C, E, F); the tied group B, C, D spans ranks 2..4 and holds
one relevant item (C), so C sits at rank 2, 3 or 4 with probability 1/3 each.
"""

from __future__ import annotations

from math import log2

import polars as pl
import pytest

import polars_rankeval as prk

REL = [1, 0, 2, 0, 1, 3]
UNTIED = pl.DataFrame(
    {
        "user": [1] * 6,
        "item": list("ABCDEF"),
        "score": [0.9, 0.8, 0.7, 0.6, 0.5, None],
        "relevance": REL,
    }
)
TIED = UNTIED.with_columns(pl.Series("score", [0.9, 0.7, 0.7, 0.7, 0.5, None]))

D = {p: 1 / log2(p + 1) for p in range(1, 7)}  # the log2 discount of rank p
IDCG3 = 3 * D[1] + 2 * D[2] + 1 * D[3]  # ideal order F(3), C(2), A(1), E(1)

CASES = [
    # metric, untied value, tied value (expected over the 3 equally likely ranks of C)
    ("precision@3", 2 / 3, (1 + 2 / 3) / 3),  # C is in the top 3 with probability 2/3
    ("precision(denominator=retrieved)@10", 3 / 5, 3 / 5),
    ("precision@10", 3 / 10, 3 / 10),
    ("precision(rel=2)@3", 1 / 3, (2 / 3) / 3),
    ("recall@3", 2 / 4, (1 + 2 / 3) / 4),
    ("recall", 3 / 4, 3 / 4),
    ("f1@3", 2 * 2 / (3 + 4), 2 * (1 + 2 / 3) / (3 + 4)),
    ("hit_rate@1", 1.0, 1.0),
    ("hit_rate(rel=2)@2", 0.0, 1 / 3),
    ("r_precision", 2 / 4, 2 / 4),  # precision at R = 4: the tied group is inside
    ("mrr", 1.0, 1.0),
    ("mrr(rel=2)", 1 / 3, (1 / 2 + 1 / 3 + 1 / 4) / 3),
    ("mrr(rel=2)@2", 0.0, (1 / 2) / 3),
    ("map", (1 / 1 + 2 / 3 + 3 / 5) / 4, (1 + (2 / 2 + 2 / 3 + 2 / 4) / 3 + 3 / 5) / 4),
    ("map@3", (1 / 1 + 2 / 3) / 4, (1 + (2 / 2 + 2 / 3) / 3) / 4),
    ("map(denominator=min_k_relevant)@3", (1 + 2 / 3) / 3, (1 + (2 / 2 + 2 / 3) / 3) / 3),
    # auc@5 over the list A..E: relevant A, C, E x non-relevant B, D. Untied, the right
    # pairs are A>B, A>D, C>D. Tied: A>B, A>D, C~B and C~D count 1/2 each, E none.
    ("auc@5", 3 / 6, (2 + 2 * 0.5 + 0) / 6),
    # auc over all candidates adds F (relevant, unrecommended, at the bottom).
    ("auc", 3 / 8, 3 / 8),
    # Tied: C gets the mean discount of ranks 2..4 cut at 3, (D2 + D3 + 0) / 3.
    ("dcg@3", 1 * D[1] + 2 * D[3], 1 * D[1] + 2 * (D[2] + D[3]) / 3),
    ("ndcg@3", (1 * D[1] + 2 * D[3]) / IDCG3, (1 * D[1] + 2 * (D[2] + D[3]) / 3) / IDCG3),
    (
        "ndcg(gain=exp)@3",
        (1 * D[1] + 3 * D[3]) / (7 * D[1] + 3 * D[2] + 1 * D[3]),
        (1 * D[1] + 3 * (D[2] + D[3]) / 3) / (7 * D[1] + 3 * D[2] + 1 * D[3]),
    ),
    (
        "ndcg(idcg=all)@3",
        (1 * D[1] + 2 * D[3]) / (IDCG3 + 1 * D[4]),
        (1 * D[1] + 2 * (D[2] + D[3]) / 3) / (IDCG3 + 1 * D[4]),
    ),
    ("num_ret@3", 3.0, 3.0),
    ("num_rel", 4.0, 4.0),
    ("num_rel_ret@3", 2.0, 1 + 2 / 3),
]


@pytest.mark.parametrize(("metric", "untied", "tied"), CASES, ids=[c[0] for c in CASES])
def test_hand_computed(metric: str, untied: float, tied: float) -> None:
    assert prk.evaluate(UNTIED, [metric])[metric].item() == pytest.approx(untied, abs=1e-15)
    assert prk.evaluate(TIED, [metric])[metric].item() == pytest.approx(tied, abs=1e-15)


def test_tie_policies_on_the_tied_group() -> None:
    # B, C, D tied: item_desc puts D, C, B (C at 3); item_asc B, C, D (C at 3);
    # optimistic C first (rank 2); pessimistic C last (rank 4).
    got = {
        ties: prk.evaluate(TIED, ["mrr(rel=2)"], ties=ties)["mrr(rel=2)"].item()  # type: ignore[arg-type]
        for ties in prk.TIE_POLICIES
    }
    assert got == pytest.approx(
        {
            "expected": (1 / 2 + 1 / 3 + 1 / 4) / 3,
            "item_desc": 1 / 3,
            "item_asc": 1 / 3,
            "optimistic": 1 / 2,
            "pessimistic": 1 / 4,
        }
    )

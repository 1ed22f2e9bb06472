"""Full-catalog classification metrics, lauc, boolean Kendall's tau and global AUC.

Checked by hand (with and without tied scores), against a brute force over every tie
ordering, against scikit-learn / scipy on the 0/1 indicator vectors over the catalog,
and against the properties Schröder et al. (2011) list for the limited AUC.

Tests the private units Features and GlobalPlan on purpose (the partial / finalize steps).
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

import polars_rankeval as prk
from polars_rankeval._utils.types import make_columns
from polars_rankeval.metrics.features import Features
from polars_rankeval.metrics.grammar import parse_metric
from polars_rankeval.metrics.registry import registered
from polars_rankeval.metrics.spec import GlobalPlan
from tests._engines import engine_of
from tests._reference import Row, orderings, random_frame, rows_by_user

sklearn_metrics = pytest.importorskip("sklearn.metrics")
scipy_stats = pytest.importorskip("scipy.stats")

N = 10  # catalog size of the hand-computed cases

# One user, six candidates (as in test_hand_computed), relevance in parentheses:
#   untied:  A 0.9 (1) | B 0.8 (0) | C 0.7 (2) | D 0.6 (0) | E 0.5 (1) | F - (3)
#   tied:    A 0.9 (1) | B 0.7 (0) | C 0.7 (2) | D 0.7 (0) | E 0.5 (1) | F - (3)
# R = 4 (A, C, E, F), N = 10: four catalog items have no row (true negatives).
# At k = 3, untied: the top 3 is A, B, C: L = 3, tp = 2, fp = 1, fn = 2, tn = 10-3-4+2 = 5.
# Tied: C is in the top 3 with probability 2/3, so E[tp] = 5/3, E[fp] = 4/3,
# E[fn] = 7/3, E[tn] = 10 - 3 - 4 + 5/3 = 14/3.
UNTIED = pl.DataFrame(
    {
        "user": [1] * 6,
        "item": list("ABCDEF"),
        "score": [0.9, 0.8, 0.7, 0.6, 0.5, None],
        "relevance": [1, 0, 2, 0, 1, 3],
    }
)
TIED = UNTIED.with_columns(pl.Series("score", [0.9, 0.7, 0.7, 0.7, 0.5, None]))

# lauc@3 (R = 4, N - R = 6): each irrelevant item of the top k steps right by 1/6 at the
# current recall; the end point (fp/6, tp/4) is joined to (1, 1) by a trapezoid.
LAUC3_UNTIED = 1 / 4 * 1 / 6 + (1 - 1 / 6) * (2 / 4 + 1) / 2  # A, B, C
LAUC3_TIED = (
    (2 / 4 * 1 / 6 + (1 - 1 / 6) * (2 / 4 + 1) / 2)  # C at rank 2: A, C, x
    + (1 / 4 * 1 / 6 + (1 - 1 / 6) * (2 / 4 + 1) / 2)  # C at rank 3: A, x, C
    + (2 * 1 / 4 * 1 / 6 + (1 - 2 / 6) * (1 / 4 + 1) / 2)  # C at rank 4: A, x, y
) / 3
# Without a cutoff the whole list A..E: B steps at recall 1/4, D at 2/4, end (2/6, 3/4).
# Tied, C precedes one of B and D on average: the same area.
LAUC_ALL = (1 / 4 + 2 / 4) / 6 + (1 - 2 / 6) * (3 / 4 + 1) / 2

CASES = [
    # metric, untied value, tied value (the expectation over the orders of B, C, D)
    ("fallout@3", 1 / 6, (4 / 3) / 6),
    ("miss_rate@3", 2 / 4, (7 / 3) / 4),
    ("inverse_precision@3", 5 / 7, (14 / 3) / 7),
    ("inverse_recall@3", 5 / 6, (14 / 3) / 6),
    ("fbeta@3", 2 * 2 / (4 + 3), 2 * (5 / 3) / (4 + 3)),
    ("fbeta(beta=0.5)@3", 1.25 * 2 / (0.25 * 4 + 3), 1.25 * (5 / 3) / (0.25 * 4 + 3)),
    ("fbeta(beta=2)@3", 5 * 2 / (4 * 4 + 3), 5 * (5 / 3) / (4 * 4 + 3)),
    ("markedness@3", 2 / 3 + 5 / 7 - 1, (5 / 3) / 3 + (14 / 3) / 7 - 1),
    ("informedness@3", 2 / 4 + 5 / 6 - 1, (5 / 3) / 4 + (14 / 3) / 6 - 1),
    (
        "mcc@3",
        (2 * 5 - 1 * 2) / math.sqrt(3 * 7 * 4 * 6),
        (10 * 5 / 3 - 3 * 4) / math.sqrt(3 * 7 * 4 * 6),
    ),
    (
        "boolean_kendall_tau@3",
        (2 * 5 - 1 * 2) / math.sqrt(3 * 7 * 4 * 6),
        (10 * 5 / 3 - 3 * 4) / math.sqrt(3 * 7 * 4 * 6),
    ),
    ("accuracy@3", (2 + 5) / 10, (5 / 3 + 14 / 3) / 10),
    ("lauc@3", LAUC3_UNTIED, LAUC3_TIED),
    ("lauc", LAUC_ALL, LAUC_ALL),
    # Without @k, the whole list of 5: tp = 3, fp = 2, fn = 1, tn = 10 - 5 - 4 + 3 = 4.
    ("fallout", 2 / 6, 2 / 6),
    ("inverse_precision", 4 / 5, 4 / 5),
    ("mcc", (3 * 4 - 2 * 1) / math.sqrt(5 * 5 * 4 * 6), (3 * 4 - 2 * 1) / math.sqrt(600)),
]


@pytest.mark.parametrize(("metric", "untied", "tied"), CASES, ids=[c[0] for c in CASES])
def test_hand_computed(metric: str, untied: float, tied: float) -> None:
    for frame, want in ((UNTIED, untied), (TIED, tied)):
        got = prk.evaluate(frame, [metric], n_items=N)[metric].item()
        assert got == pytest.approx(want, abs=1e-15)


def test_tie_policies_on_the_tied_group() -> None:
    # B, C, D tied at ranks 2..4; C (relevant) lands at rank 3 (item_desc: D, C, B;
    # item_asc: B, C, D), 2 (optimistic) or 4 (pessimistic): in the top 3 or not.
    got = {
        ties: prk.evaluate(TIED, ["fallout@3"], ties=ties, n_items=N)["fallout@3"].item()  # type: ignore[arg-type]
        for ties in prk.TIE_POLICIES
    }
    assert got == pytest.approx(
        {
            "expected": (4 / 3) / 6,
            "item_desc": 1 / 6,
            "item_asc": 1 / 6,
            "optimistic": 1 / 6,
            "pessimistic": 2 / 6,
        }
    )


def test_expressions_and_catalog_frame() -> None:
    # The stand-alone expressions give evaluate's values; a catalog frame counts its items.
    exprs = [
        prk.fallout(3, n_items=N),
        prk.miss_rate(3, n_items=N),
        prk.inverse_precision(3, n_items=N),
        prk.inverse_recall(3, n_items=N),
        prk.fbeta(3, n_items=N, beta=2.0),
        prk.markedness(3, n_items=N),
        prk.informedness(3, n_items=N),
        prk.mcc(3, n_items=N),
        prk.boolean_kendall_tau(3, n_items=N),
        prk.accuracy(3, n_items=N),
        prk.lauc(3, n_items=N),
    ]
    inline = TIED.group_by("user").agg(exprs)
    catalog = pl.DataFrame({"item": list("ABCDEFGHIJ")})
    names = [name for name in inline.columns if name != "user"]
    via_evaluate = prk.evaluate(TIED, names, per_user=True, n_items=catalog)
    assert_frame_equal(inline, via_evaluate, abs_tol=1e-15)


def test_default_catalog_is_the_distinct_items_of_the_input() -> None:
    # User 2 adds item G: 7 distinct items over the whole input, the N of every user.
    other = pl.DataFrame({"user": [2], "item": ["G"], "score": [1.0], "relevance": [1]})
    df = pl.concat([UNTIED, other])
    default = prk.evaluate(df, ["fallout@3"], per_user=True)
    explicit = prk.evaluate(df, ["fallout@3"], per_user=True, n_items=7)
    assert_frame_equal(default, explicit)
    assert default["fallout@3"].to_list() == pytest.approx([1 / (7 - 4), 0 / (7 - 1)])


# --------------------------------------------------------------------------- brute force
def table(ranked: list[Row], unret: list[Row], k: int | None, n: int, t: float) -> dict[str, int]:
    top = ranked if k is None else ranked[:k]
    size, tp = len(top), sum(r.rel >= t for r in top)
    relevant = sum(r.rel >= t for r in ranked + unret)
    return {
        "tp": tp,
        "fp": size - tp,
        "fn": relevant - tp,
        "tn": n - size - relevant + tp,
        "top": [r.rel >= t for r in top],  # type: ignore[dict-item]
    }


def div(num: float, den: float) -> float | None:
    return None if den == 0 else num / den


def limited_auc(top: list[bool], relevant: int, negatives: int) -> float | None:
    """The ROC curve of the list walked step by step, then the line to (1, 1)."""
    if relevant == 0 or negatives == 0:
        return None
    x = y = area = 0.0
    for is_rel in top:
        if is_rel:
            y += 1 / relevant
        else:
            area += y / negatives
            x += 1 / negatives
    return area + (1 - x) * (y + 1) / 2


def on_order(name: str, opts: dict[str, Any], c: dict[str, Any]) -> float | None:
    tp, fp, fn, tn = c["tp"], c["fp"], c["fn"], c["tn"]
    if name == "fallout":
        return div(fp, fp + tn)
    if name == "miss_rate":
        return div(fn, tp + fn)
    if name == "inverse_precision":
        return div(tn, fn + tn)
    if name == "inverse_recall":
        return div(tn, fp + tn)
    if name == "fbeta":
        b2 = opts["beta"] ** 2
        return None if tp + fn == 0 else (1 + b2) * tp / ((1 + b2) * tp + b2 * fn + fp)
    if name == "markedness":
        p, ip = div(tp, tp + fp), div(tn, fn + tn)
        return None if p is None or ip is None else p + ip - 1
    if name == "informedness":
        r, ir = div(tp, tp + fn), div(tn, fp + tn)
        return None if r is None or ir is None else r + ir - 1
    if name in ("mcc", "boolean_kendall_tau"):
        den = (tp + fp) * (fn + tn) * (tp + fn) * (fp + tn)
        return div(tp * tn - fp * fn, math.sqrt(den))
    if name == "accuracy":
        return (tp + tn) / (tp + fp + fn + tn)
    if name == "lauc":
        return limited_auc(c["top"], tp + fn, fp + tn)
    raise KeyError(name)


def reference(df: pl.DataFrame, metrics: list[str], ties: str, n: int) -> pl.DataFrame:
    users = rows_by_user(df)
    data: dict[str, list[Any]] = {"user": sorted(users)}
    for metric in metrics:
        bound = parse_metric(metric)
        opts = dict(bound.options)
        column = []
        for user in data["user"]:
            values = [
                on_order(bound.spec.name, opts, table(ranked, unret, bound.k, n, opts["rel"]))
                for ranked, unret in orderings(users[user], ties, distinct=True)  # no items
            ]
            column.append(None if None in values else sum(values) / len(values))  # type: ignore[arg-type]
        data[bound.name] = column
    return pl.DataFrame(data, schema_overrides={m: pl.Float64 for m in data if m != "user"})


BRUTE = [
    "fallout@3",
    "fallout",
    "miss_rate@2",
    "inverse_precision@3",
    "inverse_precision",
    "inverse_recall@1",
    "fbeta@3",
    "fbeta(beta=0.5)@2",
    "fbeta(beta=3,rel=2)@4",
    "markedness@3",
    "markedness",
    "informedness@2",
    "informedness(rel=2)@3",
    "mcc@3",
    "mcc",
    "boolean_kendall_tau@2",
    "accuracy@3",
    "lauc@1",
    "lauc@2",
    "lauc@3",
    "lauc(rel=2)@4",
    "lauc",
]


@pytest.mark.parametrize("ties", prk.TIE_POLICIES)
@pytest.mark.parametrize("seed", range(4))
def test_engine_matches_brute_force(ties: str, seed: int) -> None:
    df = random_frame(seed)
    n = 55  # items are drawn from 0..49
    want = reference(df, BRUTE, ties, n)
    got = prk.evaluate(df, BRUTE, ties=ties, per_user=True, users="all", n_items=n)  # type: ignore[arg-type]
    assert_frame_equal(got, want, abs_tol=1e-12, check_dtypes=False)


@pytest.mark.slow
def test_large_tie_group_straddling_the_cutoff() -> None:
    # A 9-way tie holding 3 relevant items straddles every cutoff: 9! orderings.
    df = pl.DataFrame(
        {
            "user": [1] * 10,
            "item": list(range(10)),
            "score": [2.0] + [1.0] * 9,
            "relevance": [0, 1, 0, 2, 0, 0, 1, 0, 0, 0],
        }
    )
    metrics = ["lauc@4", "mcc@3", "markedness@5", "fbeta(beta=2)@6", "accuracy@2", "lauc"]
    want = reference(df, metrics, "expected", 14)
    got = prk.evaluate(df, metrics, per_user=True, n_items=14)
    assert_frame_equal(got, want, abs_tol=1e-12, check_dtypes=False)


def test_catalog_smaller_than_the_users_rows_is_undefined() -> None:
    # A stand-alone expression cannot refuse: it gives null (evaluate refuses, below).
    assert UNTIED.select(prk.accuracy(3, n_items=5)).item() is None
    with pytest.raises(ValueError, match="n_items=5 is smaller than the 6 distinct items"):
        prk.evaluate(UNTIED, ["accuracy@3"], n_items=5)


# --------------------------------------------------------------------------- scikit-learn
def catalog_frame(seed: int, n_users: int = 30, n: int = 40) -> pl.DataFrame:
    """Users with tied integer scores, graded relevance, unjudged and unranked items."""
    rng = np.random.default_rng(seed)
    rows = []
    for user in range(n_users):
        size = int(rng.integers(1, 25))
        for item in rng.choice(n, size=size, replace=False):
            score = None if rng.random() < 0.25 else float(rng.integers(0, 4))
            rel = None if rng.random() < 0.3 else int(rng.choice([0, 0, 1, 2]))
            rows.append((user, int(item), score, rel))
    return pl.DataFrame(
        rows,
        schema={"user": pl.Int64, "item": pl.Int64, "score": pl.Float64, "relevance": pl.Int64},
        orient="row",
    )


def indicators(df: pl.DataFrame, user: int, k: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    """y_true (relevant) and y_pred (in the top k, ties by item id descending) per item."""
    rows = df.filter(pl.col("user") == user)
    ranked = rows.filter(pl.col("score").is_not_null()).sort(
        ["score", "item"], descending=[True, True]
    )
    top = set(ranked["item"].head(k).to_list())
    relevant = set(rows.filter(pl.col("relevance") >= 1)["item"].to_list())
    y_true = np.array([i in relevant for i in range(n)], dtype=int)
    y_pred = np.array([i in top for i in range(n)], dtype=int)
    return y_true, y_pred


@pytest.mark.parametrize("k", [1, 3, 10])
@pytest.mark.parametrize("seed", range(3))
def test_agreement_with_scikit_learn(seed: int, k: int) -> None:
    n = 40
    df = catalog_frame(seed, n=n)
    names = [
        f"{m}@{k}"
        for m in (
            "fallout",
            "miss_rate",
            "inverse_precision",
            "inverse_recall",
            "fbeta",
            "markedness",
            "informedness",
            "mcc",
            "boolean_kendall_tau",
            "accuracy",
        )
    ] + [f"fbeta(beta=2)@{k}", f"fbeta(beta=0.5)@{k}"]
    got = prk.evaluate(df, names, ties="item_desc", per_user=True, users="all", n_items=n)
    m = sklearn_metrics
    for row in got.iter_rows(named=True):
        y_true, y_pred = indicators(df, row["user"], k, n)
        tn, fp, fn, tp = m.confusion_matrix(y_true, y_pred, labels=[0, 1]).ravel()

        def check(name: str, want: float | None, *, row: dict[str, Any] = row) -> None:
            value = row[name]
            if want is None:
                assert value is None, name
            else:
                assert value == pytest.approx(want, abs=1e-12), name

        has_rel, has_irr = tp + fn > 0, fp + tn > 0
        has_pred, has_rest = tp + fp > 0, fn + tn > 0
        check(f"fallout@{k}", float(fp / (fp + tn)) if has_irr else None)
        check(f"miss_rate@{k}", float(fn / (tp + fn)) if has_rel else None)
        check(
            f"inverse_recall@{k}", m.recall_score(y_true, y_pred, pos_label=0) if has_irr else None
        )
        check(
            f"inverse_precision@{k}",
            m.precision_score(y_true, y_pred, pos_label=0) if has_rest else None,
        )
        for beta, name in (
            (1.0, f"fbeta@{k}"),
            (2.0, f"fbeta(beta=2)@{k}"),
            (0.5, f"fbeta(beta=0.5)@{k}"),
        ):
            check(name, m.fbeta_score(y_true, y_pred, beta=beta) if has_rel else None)
        check(
            f"markedness@{k}",
            m.precision_score(y_true, y_pred) + m.precision_score(y_true, y_pred, pos_label=0) - 1
            if has_pred and has_rest
            else None,
        )
        check(
            f"informedness@{k}",
            m.balanced_accuracy_score(y_true, y_pred, adjusted=True)
            if has_rel and has_irr
            else None,
        )
        defined = has_rel and has_irr and has_pred and has_rest
        check(f"mcc@{k}", m.matthews_corrcoef(y_true, y_pred) if defined else None)
        tau = scipy_stats.kendalltau(y_pred, y_true).statistic
        check(f"boolean_kendall_tau@{k}", float(tau) if defined else None)
        check(f"accuracy@{k}", m.accuracy_score(y_true, y_pred))
        if has_rel and has_irr:
            # Informedness is 2 AUC - 1 of the list as a 0/1 score (Powers), and tau-b is
            # that times sqrt(R (N - R) / (L (N - L))).
            auc01 = m.roc_auc_score(y_true, y_pred)
            assert row[f"informedness@{k}"] == pytest.approx(2 * auc01 - 1, abs=1e-12)
            if defined:
                scale = math.sqrt((tp + fn) * (fp + tn) / ((tp + fp) * (fn + tn)))
                assert tau == pytest.approx((2 * auc01 - 1) * scale, abs=1e-12)


# --------------------------------------------------------------------------- lauc (5.2)
def ranking(relevant: set[int], n: int = 10) -> pl.DataFrame:
    """One user ranking the n catalog items, positions 1..n; relevant at the given ones."""
    return pl.DataFrame(
        {
            "user": [1] * n,
            "item": list(range(1, n + 1)),
            "score": [float(n - p) for p in range(n)],
            "relevance": [int(p in relevant) for p in range(1, n + 1)],
        }
    )


def values(relevant: set[int], metrics: list[str], n: int = 10) -> list[float]:
    return list(prk.evaluate(ranking(relevant, n), metrics, n_items=n).select(metrics).row(0))


def lauc_at(relevant: set[int], k: int = 4, n: int = 10) -> float:
    return values(relevant, [f"lauc@{k}"], n)[0]


def test_lauc_is_one_when_the_relevant_items_lead_the_top_k() -> None:
    # "The measure returns one if all relevant items are retrieved within the top-k
    # list" -- and ranked first: an irrelevant item before a relevant one inside the
    # list costs 1 / (R (N - R)) per such pair, here 2 / (3 * 7).
    for relevant in ({1}, {1, 2}, {1, 2, 3}, {1, 2, 3, 4}):
        assert lauc_at(relevant) == pytest.approx(1.0, abs=1e-15)
    assert lauc_at({1, 2, 4}) == pytest.approx(1 - 1 / (3 * 7), abs=1e-15)
    assert lauc_at({2, 3, 4}) == pytest.approx(1 - 3 / (3 * 7), abs=1e-15)


def test_lauc_is_minimal_without_relevant_items_in_the_top_k() -> None:
    # Zero when the top k holds only irrelevant items and all of them (k = N - R = 6).
    assert lauc_at({7, 8, 9, 10}, k=6) == pytest.approx(0.0, abs=1e-15)
    # With no relevant item in the top k the curve runs along the x axis to the fallout
    # k / (N - R), then straight to (1, 1): (1 - fallout) / 2, below any list of the same
    # length holding a relevant item.
    assert lauc_at({5, 6}) == pytest.approx((1 - 4 / 8) / 2, abs=1e-15)
    others = [lauc_at(set(p)) for p in itertools.combinations(range(1, 11), 2) if min(p) <= 4]
    assert min(others) > lauc_at({5, 6})


def pattern_values(n: int, relevant: int, k: int) -> dict[int, list[float]]:
    """lauc@k of every relevant / irrelevant pattern of the top k, by its number of hits."""
    out: dict[int, list[float]] = {}
    for pattern in itertools.product([0, 1], repeat=k):
        hits = sum(pattern)
        if hits > relevant or k - hits > n - relevant:
            continue
        positions = {p + 1 for p, is_rel in enumerate(pattern) if is_rel}
        # The other relevant items go to the bottom of the ranking.
        positions |= set(range(n - (relevant - hits) + 1, n + 1))
        out.setdefault(hits, []).append(lauc_at(positions, k=k, n=n))
    return out


def test_lauc_more_relevant_items_score_higher_unless_the_list_nears_the_catalog() -> None:
    # Four of ten (the paper's figures): every list with h + 1 hits beats every list
    # with h hits, whatever their order.
    by_hits = pattern_values(10, 4, 4)
    for h in range(4):
        assert min(by_hits[h + 1]) > max(by_hits[h])
    # Five of six: the order inside the list outweighs the number of hits.
    by_hits = pattern_values(6, 3, 5)
    assert min(by_hits[3]) < max(by_hits[2])


def test_lauc_grows_as_a_relevant_item_moves_up() -> None:
    # One relevant item among two, moved from just below the top 4 to rank 2.
    path = [lauc_at({1, p}) for p in (5, 4, 3, 2)]
    assert all(a < b for a, b in itertools.pairwise(path))


def test_lauc_swaps_at_the_top_and_the_bottom_of_the_list_weigh_the_same() -> None:
    # Swapping ranks 1-2 or ranks 3-4 (the bottom of a top 4) moves lauc by 1 / (R (N-R)).
    base = lauc_at({1, 3})
    top_swap, bottom_swap = lauc_at({2, 3}), lauc_at({1, 4})
    assert base - top_swap == pytest.approx(base - bottom_swap, abs=1e-15)
    assert base - top_swap == pytest.approx(1 / (2 * 8), abs=1e-15)


def test_lauc_ignores_changes_beyond_the_top_k() -> None:
    df = ranking({2, 6, 9})
    shuffled = df.with_columns(
        score=pl.when(pl.col("score") < 6).then(5.0 - pl.col("score")).otherwise(pl.col("score"))
    )
    got = [prk.evaluate(d, ["lauc@4", "auc"], n_items=10).row(0)[:2] for d in (df, shuffled)]
    assert got[0][0] == pytest.approx(got[1][0], abs=1e-15)
    assert got[0][1] != pytest.approx(got[1][1])  # the full AUC sees the change


def test_lauc_figure_2_one_relevant_item_in_a_top_4_of_10() -> None:
    # Figure 2: the single relevant item at ranks 1..10. lauc falls while the item is in
    # the list, then stays at (1 - 4/9) / 2; AUC keeps falling linearly; the boolean
    # tau only sees whether the item is in the list.
    metrics = ["lauc@4", "auc", "boolean_kendall_tau@4"]
    rows = [values({p}, metrics) for p in range(1, 11)]
    lauc_, auc_, tau_ = (list(c) for c in zip(*rows, strict=True))
    assert lauc_[:4] == pytest.approx([1 - (p - 1) / 9 for p in range(1, 5)], abs=1e-15)
    assert lauc_[4:] == pytest.approx([(1 - 4 / 9) / 2] * 6, abs=1e-15)
    assert auc_ == pytest.approx([1 - (p - 1) / 9 for p in range(1, 11)], abs=1e-15)
    assert tau_[:4] == pytest.approx([(10 - 4) / math.sqrt(4 * 6 * 9)] * 4, abs=1e-15)
    assert tau_[4:] == pytest.approx([(0 - 4) / math.sqrt(4 * 6 * 9)] * 6, abs=1e-15)


def test_lauc_figure_4_three_relevant_items_in_a_top_4_of_10() -> None:
    # Figure 4: three relevant items moved down a ranking of 10, top 4 shown. lauc is 1
    # while they lead the list, drops as they sink inside it, drops further for each one
    # leaving it, and ignores where the leavers end up; AUC keeps counting.
    sequence = [{1, 2, 3}, {1, 2, 4}, {1, 3, 4}, {2, 3, 4}, {1, 2, 5}, {1, 5, 6}, {5, 6, 7}]
    got = [lauc_at(s) for s in sequence]
    assert got[0] == pytest.approx(1.0)
    assert all(a > b for a, b in itertools.pairwise(got))
    assert lauc_at({1, 2, 5}) == pytest.approx(lauc_at({1, 2, 10}), abs=1e-15)
    auc_5, auc_10 = values({1, 2, 5}, ["auc"])[0], values({1, 2, 10}, ["auc"])[0]
    assert auc_5 > auc_10


# --------------------------------------------------------------------------- global AUC
def pooled(df: pl.DataFrame, metric: str = "global_auc", **options: Any) -> float | None:
    """A global metric's value in the summary."""
    return prk.evaluate(df, [metric], **options)[metric].item()


def test_global_auc_by_hand() -> None:
    # Rows with a score and a relevance only: user 1 (0.9, rel), (0.5, irr), (0.5, rel);
    # user 2 (0.5, irr), (0.1, rel). Item 9 has no relevance, item 8 no score: ignored.
    # Positives 0.9, 0.5, 0.1; negatives 0.5, 0.5. Pairs: 0.9 beats both (2), 0.5 ties
    # both (1/2 each: 1), 0.1 beats none: (2 + 1 + 0) / (3 * 2).
    df = pl.DataFrame(
        {
            "user": [1, 1, 1, 1, 2, 2, 2],
            "item": [1, 2, 3, 9, 1, 4, 8],
            "score": [0.9, 0.5, 0.5, 0.7, 0.5, 0.1, None],
            "relevance": [1, 0, 2, None, 0, 1, 1],
        }
    )
    got = {ties: pooled(df, ties=ties) for ties in ("expected", "optimistic", "pessimistic")}
    assert got == pytest.approx(
        {"expected": (2 + 1 + 0) / 6, "optimistic": (2 + 2 + 0) / 6, "pessimistic": 2 / 6}
    )
    # Pooled over users, not a mean of per-user AUCs (cAUC, the alias of auc).
    assert parse_metric("cauc").name == "auc"
    summary = prk.evaluate(df, ["global_auc", "cauc"])
    assert summary["global_auc"].item() != pytest.approx(summary["auc"].item())
    # Ranks order the same way as scores (1 = best).
    ranks = df.with_columns(rank=pl.col("score").rank("dense", descending=True)).drop("score")
    assert pooled(ranks, score=None, rank="rank") == pytest.approx(got["expected"])


@pytest.mark.parametrize("seed", range(4))
def test_global_auc_matches_roc_auc_score(seed: int) -> None:
    df = catalog_frame(seed, n_users=25).with_columns(system=pl.col("user") % 3)
    got = prk.evaluate(df, ["global_auc", "global_auc(rel=2)"], by="system", users="all")
    for row in got.iter_rows(named=True):
        rated = df.filter(
            (pl.col("system") == row["system"])
            & pl.col("score").is_not_null()
            & pl.col("relevance").is_not_null()
        )
        for name, t in (("global_auc", 1), ("global_auc(rel=2)", 2)):
            want = sklearn_metrics.roc_auc_score(rated["relevance"] >= t, rated["score"])
            assert row[name] == pytest.approx(want, abs=1e-12)


def test_global_auc_follows_the_user_universe_and_is_undefined_without_both_labels() -> None:
    df = pl.DataFrame(
        {
            "user": [1, 1, 2, 2],
            "item": [1, 2, 1, 2],
            "score": [0.2, 0.8, 0.9, 0.1],
            "relevance": [1, 0, 1, 0],
        }
    )
    # Positives 0.2 and 0.9, negatives 0.8 and 0.1: 0.2 beats 0.1, 0.9 beats both.
    assert pooled(df) == pytest.approx((1 + 2) / 4)
    assert pooled(df, users=[2]) == 1.0
    positives = df.filter(pl.col("relevance") == 1)
    assert pooled(positives) is None
    assert pooled(positives, empty="zero") == 0.0


def test_global_auc_plan_parts_merge_across_buckets() -> None:
    # partial on two disjoint sets of users, merged by the combine rules, equals one pass.
    df = catalog_frame(7, n_users=20)
    metric = parse_metric("global_auc")
    f = Features(make_columns(), "expected", ["user"])
    plan = metric.plan(f)
    assert isinstance(plan, GlobalPlan)
    assert plan.combine == {"pos": "sum", "neg": "sum"}
    halves = [df.lazy().filter(pl.col("user") % 2 == i) for i in (0, 1)]
    parts = pl.concat([plan.partial(h) for h in halves])
    merged = parts.group_by(list(plan.group)).agg(pl.col("pos").sum(), pl.col("neg").sum())
    split = plan.finalize(merged, []).collect().item()
    assert split == pytest.approx(pooled(df, users="all"))


# --------------------------------------------------------------------------- errors
ERRORS = [
    (lambda: prk.fallout(3, n_items=0), ValueError, "n_items must be a positive integer"),
    (lambda: prk.fallout(3, n_items="10"), TypeError, "n_items must be a positive integer"),  # type: ignore[arg-type]
    (lambda: prk.fallout(3, n_items=True), TypeError, "n_items must be a positive integer"),
    (
        lambda: prk.fallout(3, n_items=None),  # type: ignore[arg-type]
        ValueError,
        "metric 'fallout@3' needs the catalog size: pass n_items=",
    ),
    (
        lambda: prk.fbeta(3, n_items=10, beta=0.0),
        ValueError,
        "'beta' of metric 'fbeta' must be > 0",
    ),
    (
        lambda: prk.evaluate(UNTIED, ["fbeta(beta=-1)@3"]),
        ValueError,
        "'beta' of metric 'fbeta' must be > 0",
    ),
    (
        lambda: prk.evaluate(UNTIED, ["global_auc"], per_user=True),
        ValueError,
        "global_auc have one value per by group",
    ),
    (
        lambda: prk.evaluate(UNTIED, ["global_auc"], ties="item_desc"),
        ValueError,
        "does not support ties='item_desc'",
    ),
    (lambda: prk.evaluate(UNTIED, ["global_auc@3"]), ValueError, "takes no cutoff"),
    (
        lambda: parse_metric("lauc@3").expr(Features(make_columns(), "expected", None)),
        ValueError,
        "needs its size: pass n_items=",
    ),
    (
        lambda: parse_metric("global_auc").expr(Features(make_columns(), "expected", None)),
        ValueError,
        "use polars_rankeval.evaluate",
    ),
]


@pytest.mark.parametrize(("call", "exc", "match"), ERRORS)
def test_errors(call: Any, exc: type[Exception], match: str) -> None:
    with pytest.raises(exc, match=match):
        call()


def test_family_is_registered_with_its_needs_and_bounds() -> None:
    specs = registered()
    names = [
        "fallout",
        "miss_rate",
        "inverse_precision",
        "inverse_recall",
        "fbeta",
        "markedness",
        "informedness",
        "mcc",
        "boolean_kendall_tau",
        "accuracy",
        "lauc",
    ]
    for name in names:
        assert specs[name].needs == ("n_items",), name
        assert specs[name].family == "classification", name
    normalized = {n for n in names if specs[n].normalized}
    assert normalized == {"inverse_precision", "inverse_recall", "fbeta", "accuracy", "lauc"}
    assert specs["global_auc"].scope == "global"
    assert parse_metric("specificity@5").name == "inverse_recall@5"


def test_bucketed_runs_agree_with_one_pass() -> None:
    # Buckets of users: per-user values are local, global partials merge by sums, and the
    # catalog size is computed once over all the data.
    df = catalog_frame(3).with_columns(system=pl.col("user") % 2)
    metrics = ["lauc@5", "mcc@3", "fallout", "global_auc", "global_auc(rel=2)"]
    one = prk.evaluate(df, metrics, by="system", users="all")
    for strategy in ("buckets", "partition"):
        split = prk.evaluate(
            df, metrics, by="system", users="all", engine=engine_of(strategy, n_buckets=3)
        )  # type: ignore[arg-type]
        assert_frame_equal(split, one, abs_tol=1e-12)

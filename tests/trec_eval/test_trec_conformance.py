"""trec_eval's own test suite: the measures the core engine shares with trec_eval.

``tests/data`` holds trec_eval's test run, its qrels and trec_eval's printed output
(``out.test.aq``: ``-m all_trec -q``). Every per-query and ``all`` value of the measures
that are core metrics must match to the printed 4 decimals, with trec_eval's tie rule.
"""

from __future__ import annotations

import re
from pathlib import Path

import polars as pl
import pytest

import polars_rankeval as prk
from polars_rankeval.io.trec.read import scan_qrels, scan_run

DATA = Path(__file__).parents[1] / "data"
CUTS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)

TREC_TO_CORE: dict[str, str] = {
    "num_ret": "num_ret",
    "num_rel": "num_rel",
    "num_rel_ret": "num_rel_ret",
    "map": "map",
    "Rprec": "r_precision",
    "recip_rank": "mrr",
    "ndcg": "ndcg",
    **{f"P_{k}": f"precision@{k}" for k in CUTS},
    **{f"recall_{k}": f"recall@{k}" for k in CUTS},
    **{f"ndcg_cut_{k}": f"ndcg@{k}" for k in CUTS},
    **{f"map_cut_{k}": f"map@{k}" for k in CUTS},
    **{f"success_{k}": f"hit_rate@{k}" for k in (1, 5, 10)},
}


def trec_output(name: str) -> dict[tuple[str, str], str]:
    out = {}
    for line in (DATA / name).read_text().splitlines():
        measure, query, value = re.split(r"\s+", line.strip(), maxsplit=2)
        out[(measure, query)] = value
    return out


@pytest.fixture(scope="module")
def per_query() -> pl.DataFrame:
    long = prk.join(
        scan_run(DATA / "results.test").select("user", "item", "score"),
        scan_qrels(DATA / "qrels.test"),
    )
    assert isinstance(long, pl.LazyFrame)
    result = prk.evaluate(
        long, list(TREC_TO_CORE.values()), ties="item_desc", per_user=True, users="both"
    )
    assert isinstance(result, pl.LazyFrame)
    return result.collect()


def test_per_query_values_match_trec_eval(per_query: pl.DataFrame) -> None:
    expected = trec_output("out.test.aq")
    checked = 0
    for row in per_query.iter_rows(named=True):
        for trec_name, core in TREC_TO_CORE.items():
            printed = expected.get((trec_name, row["user"]))
            if printed is None:
                continue
            value = row[core]
            assert f"{value:.4f}" == printed or f"{value:.0f}" == printed, (
                trec_name,
                row["user"],
                value,
                printed,
            )
            checked += 1
    assert checked == 3 * 46  # every shared measure of every query


def test_all_rows_match_trec_eval(per_query: pl.DataFrame) -> None:
    # trec_eval's "all" line: the mean over queries, the counts summed.
    expected = trec_output("out.test.a")
    for trec_name, core in TREC_TO_CORE.items():
        printed = expected.get((trec_name, "all"))
        if printed is None:
            continue
        column = per_query[core]
        value = column.sum() if trec_name.startswith("num_") else column.mean()
        assert f"{value:.4f}" == printed or f"{value:.0f}" == printed, (trec_name, value, printed)

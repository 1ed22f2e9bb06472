"""infAP with trec_eval's pool: qrels relevance < 0 is "pooled but not judged".

``inf_ap(pool=<column>)`` and :func:`polars_rankeval.trec.pool_unjudged`; the presets'
``infAP(pool=pooled)``. Checked by hand, against ir_measures' own test vectors and
against pytrec_eval (trec_eval's code) on random qrels with negative judgments and
tied scores.
"""

from __future__ import annotations

import random
from pathlib import Path

import polars as pl
import pytest

import polars_rankeval as prk
from polars_rankeval.io.trec.read import pool_unjudged
from polars_rankeval.metrics.judged import INFAP_EPSILON

EPS = INFAP_EPSILON


def long_frame(qrels: dict[str, dict[str, int]], run: dict[str, dict[str, float]]) -> pl.DataFrame:
    """join(run, qrels) with negative judgments kept, then pool_unjudged."""
    recs = pl.DataFrame(
        [(q, d, s) for q, docs in run.items() for d, s in docs.items()],
        schema={"user": pl.String, "item": pl.String, "score": pl.Float64},
        orient="row",
    )
    truth = pl.DataFrame(
        [(q, d, r) for q, docs in qrels.items() for d, r in docs.items()],
        schema={"user": pl.String, "item": pl.String, "relevance": pl.Int64},
        orient="row",
    )
    joined = prk.join(recs, truth, relevance="relevance", check_overlap=False)
    out = pool_unjudged(joined)
    assert isinstance(out, pl.DataFrame)
    return out


def test_hand_computed() -> None:
    # Ranked: A relevant, N judged non-relevant, U pooled-unjudged, X outside the pool,
    # C relevant (rank 5); R = 2. For C: 4 above, pooled P = 3 (A, N, U), judged J = 2,
    # relevant Q = 1: (1 + P (Q + e) / (J + 2e)) / 5 = (1 + 3 (1 + e) / (2 + 2e)) / 5.
    qrels = {"q": {"A": 1, "N": 0, "U": -1, "C": 1}}
    run = {"q": {"A": 5.0, "N": 4.0, "U": 3.0, "X": 2.0, "C": 1.0}}
    data = long_frame(qrels, run)
    assert data.filter(pl.col("item") == "U").row(0, named=True)["relevance"] is None
    got = prk.evaluate(data, ["inf_ap(pool=pooled)", "inf_ap"], ties="item_desc").row(0)
    c_pooled = (1 + 3 * (1 + EPS) / (2 + 2 * EPS)) / 5
    c_plain = (1 + 2 * (1 + EPS) / (2 + 2 * EPS)) / 5  # U outside the pool: P = J = 2
    assert got[:2] == pytest.approx([(1 + c_pooled) / 2, (1 + c_plain) / 2], rel=1e-12)
    # The pool column may also come from items= or be false/null for judged rows:
    # judged rows are in the pool whatever it says.
    marked = data.with_columns(pooled=pl.col("item") == "U")
    again = prk.evaluate(marked, "inf_ap(pool=pooled)", ties="item_desc").row(0)[0]
    assert again == pytest.approx(got[0], rel=1e-12)


def test_ir_measures_test_infap_vectors() -> None:
    # terrierteam/ir_measures test/test_pytrec_eval.py::test_infAP: AP [0.8333, 0.125]
    # (mean 0.47916666666666663), infAP [0.8333, 0.1875] (mean 0.510416); rel=2: AP
    # [0.33333, 0.25], infAP [0.33333, 0.375].
    qrels = {
        "0": {"D0": 1, "D1": -1, "D2": 0, "D3": 2, "D4": 0},
        "1": {"D0": 1, "D3": 2, "D4": -1, "D5": 0},
    }
    run = {
        "0": {"D0": 0.8, "D2": 0.7, "D1": 0.3, "D3": 0.4, "D4": 0.1},
        "1": {"D1": 0.8, "D4": 0.7, "D3": 0.3, "D2": 0.4},
    }
    data = long_frame(qrels, run)
    names = ["AP", "infAP(pool=pooled)"]
    got = prk.evaluate(data, names, conventions="ir_measures", per_user=True).sort("user")
    assert got["AP[ir_measures]"].to_list() == pytest.approx([0.8333, 0.125], abs=1e-4)
    # q1: relevant D3 at rank 4 under D1 (no qrels), D4 (-1: pooled), D2 (no qrels):
    # (1 + 1 * (0 + e) / (0 + 2e)) / 4 = 0.375, over R = 2 -> 0.1875.
    assert got["infAP(pool=pooled)[ir_measures]"].to_list() == pytest.approx(
        [0.8333, 0.1875], abs=1e-4
    )
    mean = prk.evaluate(data, names, conventions="ir_measures")
    assert mean["AP[ir_measures]"].item() == pytest.approx(0.47916666666666663)
    assert mean["infAP(pool=pooled)[ir_measures]"].item() == pytest.approx(0.510416, abs=1e-6)
    rel2 = prk.evaluate(
        data, ["map(rel=2)", "inf_ap(pool=pooled,rel=2)"], ties="item_desc", per_user=True
    ).sort("user")
    assert rel2["map(rel=2)"].to_list() == pytest.approx([0.33333, 0.25], abs=1e-5)
    assert rel2["inf_ap(pool=pooled,rel=2)"].to_list() == pytest.approx([0.33333, 0.375], abs=1e-5)
    # The same through trec_eval's preset; plain infAP reads D1/D4 as outside the pool.
    plain = prk.evaluate(data, ["infAP"], conventions="trec_eval", per_user=True).sort("user")
    assert plain["infAP[trec_eval]"].to_list()[1] == pytest.approx(0.125, abs=1e-6)
    ir_measures = pytest.importorskip("ir_measures")
    theirs = {
        (str(m.measure), m.query_id): m.value
        for m in ir_measures.iter_calc([ir_measures.parse_measure("infAP")], qrels, run)
    }
    assert got["infAP(pool=pooled)[ir_measures]"].to_list() == pytest.approx(
        [theirs[("infAP", "0")], theirs[("infAP", "1")]], rel=1e-12
    )


def random_pooled(seed: int) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    """Qrels with -1 (pooled, unjudged), 0, 1, 2; runs with many tied scores and
    documents outside the qrels."""
    rng = random.Random(seed)
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for q in range(30):
        docs = [f"d{i}" for i in rng.sample(range(80), 30)]
        judged = docs[: rng.randint(2, 22)]
        qrels[str(q)] = {d: rng.choice([-1, -1, 0, 0, 1, 2]) for d in judged}
        retrieved = rng.sample(docs, rng.randint(1, 25))
        run[str(q)] = {d: float(rng.randint(0, 4)) for d in retrieved}
    return qrels, run


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_matches_pytrec_eval_with_ties(seed: int) -> None:
    pytrec_eval = pytest.importorskip("pytrec_eval")
    qrels, run = random_pooled(seed)
    theirs = pytrec_eval.RelevanceEvaluator(qrels, {"infAP", "map"}).evaluate(run)
    data = long_frame(qrels, run)
    ours = prk.evaluate(
        data, ["infAP(pool=pooled)", "map"], conventions="trec_eval", per_user=True
    ).sort("user")
    users = ours["user"].to_list()
    # Queries in both qrels and run; one whose judgments are all negative has no judged
    # row here (so it is not a "truth" user) and scores 0 in trec_eval (no relevant doc).
    only_pooled = {q for q, docs in qrels.items() if q in run and max(docs.values()) < 0}
    assert set(users) == set(theirs) - only_pooled
    assert all(theirs[q]["infAP"] == theirs[q]["map"] == 0.0 for q in only_pooled)
    for name, key in (("infAP(pool=pooled)[trec_eval]", "infAP"), ("map[trec_eval]", "map")):
        expected = [theirs[u][key] for u in users]
        assert ours[name].fill_null(0.0).to_list() == pytest.approx(expected, rel=1e-9), name
    # Without the pool, pytrec_eval on the same qrels with the -1 judgments removed.
    judged = {q: {d: r for d, r in docs.items() if r >= 0} for q, docs in qrels.items()}
    plain = pytrec_eval.RelevanceEvaluator(judged, {"infAP"}).evaluate(run)
    ours = prk.evaluate(data, "infAP", conventions="trec_eval", per_user=True).sort("user")
    expected = [plain[u]["infAP"] if u in plain else 0.0 for u in ours["user"].to_list()]
    assert ours["infAP[trec_eval]"].fill_null(0.0).to_list() == pytest.approx(expected, rel=1e-9)


def test_pool_unjudged_errors_and_lazy() -> None:
    frame = pl.DataFrame({"user": [1], "item": [1], "score": [1.0], "relevance": [-1]})
    lazy = pool_unjudged(frame.lazy())
    assert isinstance(lazy, pl.LazyFrame)
    assert lazy.collect().row(0) == (1, 1, 1.0, None, True)
    with pytest.raises(ValueError, match="relevance column 'rel' not found"):
        pool_unjudged(frame, relevance="rel")
    with pytest.raises(ValueError, match="pool column 'score' is already a column"):
        pool_unjudged(frame, pool="score")
    with pytest.raises(TypeError, match="'data' of pool_unjudged must be a polars DataFrame"):
        pool_unjudged(frame.to_dicts())  # type: ignore[arg-type]
    # evaluate without the conversion refuses the negative judgment, as before.
    with pytest.raises(ValueError, match=r"negative value.*trec\.pool_unjudged"):
        prk.evaluate(frame, "inf_ap", ties="item_desc")
    # A pool column that does not exist is named.
    with pytest.raises(
        ValueError, match=r"column 'pool' \(read by inf_ap\(pool=pool\)\) not found in the data"
    ):
        prk.evaluate(frame.with_columns(relevance=pl.lit(1)), "inf_ap(pool=pool)", ties="item_desc")


def test_command_line_pool_unjudged(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--pool-unjudged: TREC files with qrels -1 through evaluate and compare, as
    trec_eval's infAP (the trec-eval command reads -1 so already) and pytrec_eval."""
    from polars_rankeval.cli.app import main

    qrels, run = random_pooled(5)
    qrels_path, run_path, other_path = (tmp_path / n for n in ("q.qrels", "a.run", "b.run"))
    qrels_path.write_text(
        "".join(f"{q} 0 {d} {r}\n" for q, docs in qrels.items() for d, r in docs.items())
    )
    for path, shift in ((run_path, 0.0), (other_path, 0.5)):
        lines = [
            f"{q} Q0 {d} 0 {s + shift * (i % 2)} t\n"
            for q, docs in run.items()
            for i, (d, s) in enumerate(docs.items())
        ]
        path.write_text("".join(lines))
    # Without the flag the negative judgments are refused, naming the way out.
    args = ["--recs", str(run_path), "--truth", str(qrels_path), "-m", "inf_ap(pool=pooled)"]
    assert main([*args, "--ties", "item_desc"]) == 2
    assert "--pool-unjudged [COL] reads relevance < 0" in capsys.readouterr().err
    assert main([*args[:4], "-m", "inf_ap", "--ties", "item_desc"]) == 2
    err = capsys.readouterr().err
    assert "negative value(s)" in err
    assert "--pool-unjudged [COL] reads relevance < 0" in err
    assert (
        main(
            [
                *args,
                "--ties",
                "item_desc",
                "--empty",
                "zero",
                "--pool-unjudged",
                "--per-user",
                "-",
                "--format",
                "csv",
            ]
        )
        == 0
    )
    ours = pl.read_csv(capsys.readouterr().out.encode(), schema_overrides={"user": pl.String})
    assert main(["trec-eval", "-q", "-m", "infAP", str(qrels_path), str(run_path)]) == 0
    lines = [line.split() for line in capsys.readouterr().out.splitlines()]
    theirs = {q: float(v) for _, q, v in lines if q != "all"}
    got = dict(zip(ours["user"], ours["inf_ap(pool=pooled)"], strict=True))
    assert set(got) <= set(theirs)
    assert all(theirs[q] == 0.0 for q in set(theirs) - set(got))  # all-negative queries
    assert [got[q] for q in sorted(got)] == pytest.approx(
        [theirs[q] for q in sorted(got)], abs=1e-4
    )
    pytrec_eval = pytest.importorskip("pytrec_eval")
    exact = pytrec_eval.RelevanceEvaluator(qrels, {"infAP"}).evaluate(run)
    assert [got[q] for q in sorted(got)] == pytest.approx(
        [exact[q]["infAP"] for q in sorted(got)], rel=1e-9
    )
    # The preset's name, a pool column of another name, and compare.
    conv = [*args[:4], "-m", "infAP(pool=pooled)", "--conventions", "trec_eval"]
    assert main([*conv, "--pool-unjudged", "--format", "csv"]) == 0
    value = float(capsys.readouterr().out.splitlines()[1].split(",")[0])
    assert value == pytest.approx(sum(got.values()) / len(got), rel=1e-12)
    named = [*args[:4], "-m", "inf_ap(pool=judged_pool)", "--ties", "item_desc", "--empty", "zero"]
    assert main([*named, "--pool-unjudged", "judged_pool", "--format", "csv"]) == 0
    assert float(capsys.readouterr().out.splitlines()[1].split(",")[0]) == pytest.approx(value)
    compared = [
        "compare",
        "--qrels",
        str(qrels_path),
        "--run",
        str(run_path),
        "--run",
        str(other_path),
        "-m",
        "inf_ap(pool=pooled)",
        "--ties",
        "item_desc",
        "--empty",
        "zero",
        "--pool-unjudged",
        "--format",
        "csv",
    ]
    assert main(compared) == 0
    out = pl.read_csv(capsys.readouterr().out.encode())
    assert out["baseline_mean"][0] == pytest.approx(value, rel=1e-12)

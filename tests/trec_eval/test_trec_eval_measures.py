"""trec_eval's measures, parameters, labels and printing: hand-computed values.

Every expected number is written as the arithmetic trec_eval's C code does; the
differential test (tests/trec_eval/test_trec_differential.py) checks the same behaviours against
the real binary on random cases.
"""

from __future__ import annotations

import io
import math
import sys
from pathlib import Path

import polars as pl
import pytest

from polars_rankeval.cli.app import main
from polars_rankeval.io.trec.bytewise import read_trec_eval_qrels, read_trec_eval_run
from polars_rankeval.trec_eval.output import format_trec
from polars_rankeval.trec_eval.program import trec_eval

# One query: ranking by score desc, then docno desc (byte order: "d3" > "d2" > "D9").
QRELS = b"q 0 d1 2\nq 0 d2 0\nq 0 d3 1\nq 0 d4 3\n"
RUN = b"q Q0 d1 1 0.9 t\nq Q0 d2 2 0.5 t\nq Q0 d3 3 0.5 t\nq Q0 D9 4 0.1 t\n"
# ranked: d1 (2), d3 (1), d2 (0), D9 (not judged)


def values(measures: list[str], **kwargs: object) -> dict[str, float]:
    result = trec_eval(QRELS, RUN, measures, **kwargs)  # type: ignore[arg-type]
    return {
        m: v for m, q, v in result.select("measure", "query", "value").iter_rows() if q == "all"
    }


def texts(
    qrels: bytes, run: bytes, measures: list[str], **kwargs: object
) -> dict[tuple[str, str], str]:
    result = trec_eval(qrels, run, measures, **kwargs)  # type: ignore[arg-type]
    return {(m, q): t for m, q, t in result.select("measure", "query", "text").iter_rows()}


def test_dcg_ideal_dcg_ndcg() -> None:
    got = values(["dcg", "ideal_dcg", "ndcg"])
    dcg = 2 / math.log2(2) + 1 / math.log2(3)  # d1 gain 2 at rank 1, d3 gain 1 at rank 2
    ideal = 3 / math.log2(2) + 2 / math.log2(3) + 1 / math.log2(4)  # d4, d1, d3
    assert got["dcg"] == pytest.approx(dcg, abs=1e-15)
    assert got["ideal_dcg"] == pytest.approx(ideal, abs=1e-15)
    assert got["ndcg"] == pytest.approx(dcg / ideal, abs=1e-15)


def test_gain_map_label_and_values() -> None:
    result = trec_eval(QRELS, RUN, ["ndcg.1=3,2=9"])
    assert result["measure"].to_list() == ["ndcg_1=3,2=9"]  # trec_eval's label
    dcg = 9 / math.log2(2) + 3 / math.log2(3)  # level 2 -> 9, level 1 -> 3
    ideal = 9 / math.log2(2) + 3 / math.log2(3) + 3 / math.log2(4)  # gains 9, 3 (level 3), 3
    assert result["value"].item() == pytest.approx(dcg / ideal, abs=1e-15)


def test_yaap() -> None:
    # relevant (>= 1) at ranks 1 and 2: sum of precisions 1/1 + 2/2 = 2; num_rel = 3
    assert values(["yaap"])["yaap"] == pytest.approx(math.log((1 + 2) / (1 + 3 - 2)), abs=1e-15)


def test_set_f_parameter_is_beta_squared() -> None:
    p, r = 2 / 4, 2 / 3  # 2 relevant of 4 retrieved, of 3 relevant
    x = 0.5
    got = values(["set_F.0.5"])
    assert got["set_F_0.5"] == pytest.approx((x + 1) * p * r / (x * p + r), abs=1e-15)
    assert values(["set_F"])["set_F"] == pytest.approx(2 * p * r / (p + r), abs=1e-15)


def test_utility_parameters_and_collection_size() -> None:
    got = values(["utility.2,-1,0.5,0.1"], num_docs=100)
    # 2 * rel_ret - 1 * nonrel_ret + 0.5 * rel_missed + 0.1 * (N + rel_ret - ret - rel)
    assert got["utility_2,-1,0.5,0.1"] == pytest.approx(
        2 * 2 - 2 + 0.5 * 1 + 0.1 * (100 + 2 - 4 - 3)
    )


def test_relstring_length_parameter() -> None:
    got = texts(QRELS, RUN, ["relstring.3"], per_query=True)
    assert got[("relstring_3", "q")] == "'210'"
    assert texts(QRELS, RUN, ["relstring"], per_query=True)[("relstring", "q")] == "'210-'"


def test_11pt_avg_levels_and_cutoff_labels() -> None:
    # interpolated precision: recall 0.2 -> lround(0.6) = 1 relevant: max prec at ranks >= 1 = 1.0;
    # recall 0.5 -> lround(1.5) = 2 relevant: max prec at ranks >= 2 = 2/2 = 1.0
    got = values(["11pt_avg.0.2,0.5", "P.10,2.9", "iprec_at_recall.0.25"])
    assert got["11pt_avg_0.2,0.5"] == (1.0 + 1.0) / 2
    assert [m for m in got if m.startswith("P_")] == ["P_2", "P_10"]  # sorted, truncated
    assert got["P_2"] == 2 / 2
    assert got["P_10"] == 2 / 10
    assert "iprec_at_recall_0.25" in got


def test_measure_named_twice_keeps_first_parameters() -> None:
    assert list(values(["P.5", "P.10", "map.5"])) == ["map", "P_5"]


def test_runid_or_num_q_alone() -> None:
    out = texts(QRELS, RUN, ["runid"])
    assert out == {("runid", "all"): "t"}
    assert texts(QRELS, RUN, ["num_q"]) == {("num_q", "all"): "1"}


def test_printf_rounding_on_boundaries() -> None:
    # 0.00275 is 0.0027499999999999998... in binary: printf prints 0.0027, not 0.0028
    qrels = b"a 0 x 1\nb 0 x 1\nc 0 x 1\nd 0 x 0\n" + b"".join(b"c 0 y%d 1\n" % i for i in range(8))
    run = (
        b"a Q0 x 1 1 t\nb Q0 x 1 1 t\nc Q0 x 1 1 t\n"
        + b"".join(b"c Q0 y%d 1 1 t\n" % i for i in range(8))
        + b"d Q0 x 1 1 t\n"
    )
    got = texts(qrels, run, ["P.1000"])
    assert (1 / 1000 + 1 / 1000 + 9 / 1000 + 0) / 4 == 0.00275
    assert got[("P_1000", "all")] == "0.0027"
    assert f"{0.00275:.4f}" == "0.0027"


def test_nan_printed_as_minus_nan() -> None:
    # -M 0: nothing retrieved; iprec at recall 0 is 0/0 in trec_eval
    got = texts(QRELS, RUN, ["iprec_at_recall.0"], max_docs=0)
    assert got[("iprec_at_recall_0.00", "all")] == "  -nan"


def test_rndcg_without_positive_gain_under_l0_is_nan() -> None:
    qrels = b"q 0 a 0\nq 0 b 0\n"
    run = b"q Q0 a 1 1 t\nq Q0 c 2 0.5 t\n"
    got = texts(qrels, run, ["Rndcg"], rel_level=0)
    assert got[("Rndcg", "all")] == "  -nan"  # num_rel = 2 at -l 0, no positive gain: 0/0


def test_complete_adds_the_placeholder_ranking() -> None:
    qrels = QRELS + b"z 0 d1 1\nz 0 d2 1\n"
    got = texts(qrels, RUN, ["num_ret", "num_rel", "P.1", "map"], per_query=True, complete=True)
    assert got[("num_ret", "z")] == "0"  # zeroed after the placeholder's evaluation
    assert got[("num_rel", "z")] == "2"
    assert got[("num_rel", "all")] == str(3 + 2)  # -c: every judgment > 0 in the qrels
    assert got[("map", "all")] == f"{(1 / 1 + 2 / 2) / 3 / 2:.4f}"


def test_max_docs_applies_before_judged_only() -> None:
    # -M 2 keeps d1, d3; -J then drops nothing; the reverse order would keep d1, d3 too,
    # so use a run whose second document is unjudged.
    run = b"q Q0 d1 1 0.9 t\nq Q0 zz 2 0.8 t\nq Q0 d3 3 0.7 t\n"
    got = texts(QRELS, run, ["num_ret", "P.2"], max_docs=2, judged_only=True)
    assert got[("num_ret", "all")] == "1"  # top 2 = d1, zz; zz unjudged -> 1 left
    assert got[("P_2", "all")] == f"{1 / 2:.4f}"


def test_judged_only_keeps_a_query_with_nothing_judged() -> None:
    run = RUN + b"w Q0 u1 1 1 t\n"
    qrels = QRELS + b"w 0 j1 1\n"
    got = texts(qrels, run, ["num_q", "num_ret"], judged_only=True, per_query=True)
    assert got[("num_ret", "w")] == "0"
    assert got[("num_q", "all")] == "2"


def test_reading_as_trec_eval_reads() -> None:
    run, runid = read_trec_eval_run(
        b"# comment\n\n  q Q0 d1 x 1e-3 tagA extra fields\n"
        b"q\t Q0 d2 1 +1 tagB\nq Q0 d3 2 inf tagC\r\n"
    )
    assert run.rows() == [("q", "d1", 0.001), ("q", "d2", 1.0), ("q", "d3", math.inf)]
    assert runid == "tagC"  # the last line's tag
    qrels = read_trec_eval_qrels(b"q 0 d1 1.0\nq 0 d2 +2\nq 0 d3 -1\nq 0 d4 1e3\n")
    assert qrels["rel"].to_list() == [1, 2, -1, 1]  # atol
    with pytest.raises(ValueError, match=r"malformed qrels line"):
        read_trec_eval_qrels(b"q 0 d1 1 extra\n")


def test_negative_relevance_is_judged_not_relevant_and_pooled_for_infap() -> None:
    qrels = b"q 0 a 1\nq 0 b -1\nq 0 c 0\n"
    run = b"q Q0 b 1 0.9 t\nq Q0 a 2 0.8 t\nq Q0 c 3 0.7 t\n"
    got = texts(qrels, run, ["relstring", "num_rel", "num_nonrel_judged_ret"], per_query=True)
    assert got[("relstring", "q")] == "'.10'"
    assert got[("num_rel", "q")] == "1"
    assert got[("num_nonrel_judged_ret", "q")] == "1"


def test_command_line_options(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    qrels, run = tmp_path / "qrels", tmp_path / "run"
    qrels.write_bytes(QRELS)
    run.write_bytes(RUN)
    assert main(["trec-eval", "--query_eval_wanted", "-n", "-mP.2", str(qrels), str(run)]) == 0
    assert capsys.readouterr().out == "P_2                   \tq\t1.0000\n"
    assert main(["trec-eval", "-v", str(qrels), str(run)]) == 0
    assert "trec_eval version 10.0-rc3" in capsys.readouterr().err
    assert main(["trec-eval", "-m", "P.0", str(qrels), str(run)]) == 2
    assert main(["trec-eval", "-x", str(qrels), str(run)]) == 1
    # -R prefs: the official measures need plain qrels (trec_eval exits 4)
    assert main(["trec-eval", "-R", "prefs", str(qrels), str(run)]) == 4
    assert main(["trec-eval", "-R", "nope", str(qrels), str(run)]) == 2


@pytest.mark.parametrize("stream", ["bytes", "text"])
def test_command_line_prints_format_trec(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, stream: str
) -> None:
    # The CLI writes its lines through Polars' CSV writer into stdout's byte stream,
    # or, on a stream without one, format_trec's text: the same bytes either way.
    qrels, run = tmp_path / "qrels", tmp_path / "run"
    qrels.write_bytes(QRELS)
    run.write_bytes(RUN)
    raw = io.BytesIO()
    out = io.TextIOWrapper(raw, encoding="utf-8") if stream == "bytes" else io.StringIO()
    monkeypatch.setattr(sys, "stdout", out)
    out.write("before\n")  # text written earlier comes first
    assert main(["trec-eval", "-q", "-m", "all_trec", str(qrels), str(run)]) == 0
    out.flush()
    text = raw.getvalue().decode() if stream == "bytes" else out.getvalue()
    want = format_trec(trec_eval(QRELS, RUN, ["all_trec"], per_query=True))
    assert text == "before\n" + want
    assert want.count("\n") > 100


def test_zscores(tmp_path: Path) -> None:
    zfile = tmp_path / "z"
    zfile.write_text("q map 0.5 0.25\n")
    result = trec_eval(QRELS, RUN, ["map", "P.5"], zscores=zfile, per_query=True)
    ap = (1 / 1 + 2 / 2) / 3
    got = {(m, q): v for m, q, v in result.select("measure", "query", "value").iter_rows()}
    assert got[("map", "q")] == pytest.approx((ap - 0.5) / 0.25)
    assert got[("P_5", "q")] == -1000000.0  # no mean for P_5
    assert format_trec(result).startswith("Z" + "map".ljust(22) + "\tq\t")  # Z%-22s


def test_frames_in() -> None:
    qrels = pl.DataFrame({"user": ["q"], "item": ["d1"], "relevance": [1]})
    run = pl.DataFrame({"user": ["q", "q"], "item": ["d1", "d2"], "score": [1.0, 2.0]})
    got = trec_eval(qrels, run, ["recip_rank"])
    assert got["value"].item() == 1 / 2

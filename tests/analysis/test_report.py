"""prk.report (Markdown, LaTeX that compiles, HTML via DataFrame.style) and the compare CLI."""

from __future__ import annotations

import pickle
import re
import shutil
import subprocess
from pathlib import Path

import polars as pl
import pytest

import polars_rankeval as prk
from polars_rankeval.analysis.metric_direction import metric_direction
from polars_rankeval.analysis.report import ReportText
from polars_rankeval.api.datasets import load_systems
from polars_rankeval.cli.app import main


def result_frame(
    rows: list[tuple[str, str, str, float, float, bool]],
    lower_is_better: tuple[str, ...] = (),
    **extra: object,
) -> pl.DataFrame:
    """A comparison by hand: (metric, system, baseline, mean, baseline_mean, significant).

    The direction is the registry's (``mae``: lower is better), else higher is better
    unless the metric is in ``lower_is_better``.
    """
    frame = pl.DataFrame(
        rows,
        schema=["metric", "system", "baseline", "mean", "baseline_mean", "significant"],
        orient="row",
    ).with_columns(diff=pl.col("mean") - pl.col("baseline_mean"), n_users=pl.lit(10))
    direction = {
        m: m not in lower_is_better and metric_direction(m) is not False
        for m in frame["metric"].unique()
    }
    frame = frame.with_columns(higher_is_better=pl.col("metric").replace_strict(direction))
    return frame.with_columns(**{k: pl.lit(v) for k, v in extra.items()})


@pytest.fixture(scope="module")
def baseline_result() -> pl.DataFrame:
    return prk.compare(
        load_systems(), ["ndcg@10", "recall@20", "mrr"], baseline="bm25", n_resamples=500
    )


@pytest.fixture(scope="module")
def all_pairs_result() -> pl.DataFrame:
    return prk.compare(load_systems(), ["ndcg@10", "P@10"], test="t")


def test_markdown_baseline_marks_and_bold() -> None:
    result = result_frame(
        [
            ("ndcg@10", "b", "a", 0.5, 0.4, True),
            ("ndcg@10", "c", "a", 0.3, 0.4, True),
            ("ndcg@10", "d", "a", 0.45, 0.4, False),
            ("mae", "b", "a", 0.9, 1.0, True),  # lower is better: b is better
            ("mae", "c", "a", 0.8, 1.0, False),
            ("mae", "d", "a", 1.2, 1.0, True),
        ],
        test="t",
        correction="holm",
        family="all",
        alpha=0.05,
    )
    text = prk.report(result)
    lines = text.splitlines()
    assert lines[0] == "| System | ndcg@10 | mae |"
    assert lines[1] == "| :--- | ---: | ---: |"
    assert lines[2] == "| a | 0.4000 | 1.0000 |"
    assert lines[3] == "| b | **0.5000**▲ | 0.9000▲ |"
    assert lines[4] == "| c | 0.3000▼ | **0.8000** |"
    assert lines[5] == "| d | 0.4500 | 1.2000▼ |"
    note = lines[-1]
    assert "Paired Student t test, two-sided" in note
    assert "Holm correction over all 6 comparison(s)" in note
    assert "adjusted p ≤ 0.05" in note
    assert "Baseline: a. ▲/▼: significantly better/worse than the baseline." in note
    assert "Lower is better for mae." in note


def test_letters_for_all_pairs() -> None:
    result = result_frame(
        [
            ("m", "y", "x", 0.5, 0.4, True),  # y beats x
            ("m", "z", "x", 0.3, 0.4, True),  # x beats z
            ("m", "z", "y", 0.3, 0.5, True),  # y beats z
        ]
    )
    text = prk.report(result)
    assert "| (a) x | 0.4000<sup>c</sup> |" in text
    assert "| (b) y | **0.5000**<sup>ac</sup> |" in text
    assert "| (c) z | 0.3000 |" in text
    assert "Superscript letters: the systems this one is significantly better than." in text
    latex = prk.report(result, "latex")
    assert r"(b) y & \textbf{0.5000}$^{\mathrm{ac}}$ \\" in latex


def test_ties_in_display_are_all_bold_and_lower_is_better_from_the_result() -> None:
    rows = [("m", "b", "a", 0.40001, 0.40004, False)]
    result = result_frame(rows)
    assert prk.report(result).splitlines()[2:4] == ["| a | **0.4000** |", "| b | **0.4000** |"]
    flipped = prk.report(result_frame(rows, lower_is_better=("m",)), digits=5)
    assert "| b | **0.40001** |" in flipped


def test_real_result_reports(baseline_result: pl.DataFrame, all_pairs_result: pl.DataFrame) -> None:
    text = prk.report(baseline_result)
    assert text.splitlines()[2].startswith("| bm25 | 0.4870 |")
    assert "Paired randomization test (500 resamples, seed 0)" in text
    assert "Conventions: ties=expected, empty=skip, users=truth." in text
    assert "Means over the 500 paired users." in text
    letters = prk.report(all_pairs_result)
    assert "(d) random" in letters


def test_latex_structure(baseline_result: pl.DataFrame) -> None:
    tex = prk.report(baseline_result, "latex", caption="Runs_1 & 2")
    assert tex.startswith("\\begin{table}[t]\n\\centering\n\\caption{Runs\\_1 \\& 2}\n")
    assert "\\begin{tabular}{lrrr}" in tex
    assert tex.count("\\toprule") == tex.count("\\midrule") == tex.count("\\bottomrule") == 1
    body = tex.split("\\midrule\n")[1].split("\\bottomrule")[0].strip().splitlines()
    assert len(body) == 4
    assert all(line.count("&") == 3 and line.endswith("\\\\") for line in body)
    assert "$\\leq$" in tex
    assert "▲" not in tex


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="pdflatex not installed")
def test_latex_compiles(
    baseline_result: pl.DataFrame, all_pairs_result: pl.DataFrame, tmp_path: Path
) -> None:
    tables = prk.report(baseline_result, "latex", caption="Against bm25") + prk.report(
        all_pairs_result, "latex"
    )
    doc = "\\documentclass{article}\n\\usepackage{booktabs}\n\\begin{document}\n" + tables
    (tmp_path / "t.tex").write_text(doc + "\\end{document}\n", encoding="utf-8")
    done = subprocess.run(
        ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "t.tex"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-2000:]
    assert (tmp_path / "t.pdf").stat().st_size > 1000


def test_html_uses_great_tables(baseline_result: pl.DataFrame) -> None:
    pytest.importorskip("great_tables")
    html = prk.report(baseline_result, "html", caption="Against bm25")
    assert isinstance(html, str)
    assert html.startswith("<div")
    assert "<strong>0.6349</strong>▲" in html
    assert "Against bm25" in html
    assert "Baseline: bm25. ▲/▼: significantly better/worse than the baseline." in html
    assert len(re.findall(r"<tr>", html)) >= 4


def test_report_errors(baseline_result: pl.DataFrame) -> None:
    with pytest.raises(ValueError, match=r"'format' of report must be one of"):
        prk.report(baseline_result, "pdf")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"missing the column\(s\) significant"):
        prk.report(baseline_result.drop("significant"))
    with pytest.raises(
        TypeError, match=r"'result' of report must be the DataFrame returned by compare"
    ):
        prk.report(baseline_result.to_dicts())  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"marks='baseline' needs one baseline"):
        prk.report(prk.compare(load_systems(), ["mrr"], test="t"), marks="baseline")
    with pytest.raises(ValueError, match=r"'digits' of report must be an integer >= 0, got -1"):
        prk.report(baseline_result, digits=-1)


# ----------------------------------------------------------------- CLI
def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_compare_data_latex(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "runs.parquet"
    load_systems().write_parquet(path)
    code, out, err = run(
        capsys,
        "compare",
        "--data",
        str(path),
        "--by",
        "system",
        "-m",
        "ndcg@10",
        "-m",
        "recall@20",
        "--baseline",
        "bm25",
        "--test",
        "randomization",
        "--correction",
        "holm",
        "--n-resamples",
        "300",
        "--format",
        "latex",
    )
    assert code == 0, err
    assert out.startswith("\\begin{table}")
    assert "System & ndcg@10 & recall@20 \\\\" in out
    assert "Holm correction" in out


def test_cli_compare_trec_runs(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    data = load_systems().filter(pl.col("score").is_not_null())
    qrels = tmp_path / "qrels.txt"
    with qrels.open("w") as handle:
        for user, item, rel in (
            load_systems()
            .filter(pl.col("system") == "bm25", pl.col("relevance").is_not_null())
            .select("user", "item", "relevance")
            .iter_rows()
        ):
            handle.write(f"{user} 0 {item} {rel}\n")
    paths = []
    for name in ("bm25", "dense", "random"):
        path = tmp_path / f"{name}.run"
        ranked = data.filter(pl.col("system") == name).sort(
            ["user", "score"], descending=[False, True]
        )
        with path.open("w") as handle:
            for rank, (user, item, score) in enumerate(
                ranked.select("user", "item", "score").iter_rows()
            ):
                handle.write(f"{user} Q0 {item} {rank + 1} {score} {name}\n")
        paths.append(path)
    code, out, err = run(
        capsys,
        "compare",
        "--qrels",
        str(qrels),
        "--run",
        str(paths[0]),
        "--run",
        f"neural={paths[1]}",
        "--run",
        str(paths[2]),
        "--baseline",
        "bm25",
        "--test",
        "t",
        "--format",
        "csv",
    )
    assert code == 0, err
    frame = pl.read_csv(out.encode())
    assert frame["system"].to_list() == ["neural", "random"]
    expected = prk.compare(
        load_systems().filter(pl.col("system").is_in(["bm25", "dense", "random"])),
        ["ndcg@10"],
        baseline="bm25",
        test="t",
    )
    assert frame["p_value"].to_list() == pytest.approx(expected["p_value"].to_list(), rel=1e-9)


def test_cli_compare_bundled_markdown_and_errors(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "compare", "--test", "t", "--baseline", "bm25")
    assert code == 0
    assert out.startswith("| System | ndcg@10 |")
    assert "bundled example" in err
    code, _, err = run(capsys, "compare", "--baseline", "nope", "--test", "t")
    assert code == 2
    assert "baseline 'nope' not found" in err
    code, _, err = run(capsys, "compare", "--run", "x.run")
    assert code == 2
    assert "--run needs --qrels" in err
    code, _, err = run(capsys, "compare", "-m", "global_auc", "--test", "t")
    assert code == 2
    assert "have one value per system" in err


def test_readme_report_is_current() -> None:
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    shown = readme.split("<!-- compare-report:start -->\n")[1].split("<!-- compare-report:end -->")[
        0
    ]
    result = prk.compare(load_systems(), ["ndcg@10", "recall@20", "mrr"], baseline="bm25")
    assert shown.strip() == prk.report(result).strip()


# ----------------------------------------------------------------- direction
# Every registered metric's direction, written out so that a new metric cannot be added
# without someone deciding it (the registry's default is higher-is-better).
LOWER_IS_BETTER = {
    "fallout",  # false positive rate
    "miss_rate",  # false negative rate
    "mae",
    "mse",
    "rmse",
    "nmae",  # rating errors
    "gini",  # inequality of exposure
    "popularity_bias",  # average recommendation popularity: lower = less popularity bias
    "miscalibration",  # KL divergence from the history's mix: 0 = calibrated
    "reo",
    "rsp",  # disparity between item groups (std / mean)
    "num_nonrel_judged_ret",  # judged non-relevant items retrieved
    "unjudged",  # share of the top k without a judgment
    "rbp_resid",  # the part of RBP the judgments leave open
}
NO_DIRECTION = {"num_ret", "num_rel", "group_exposure", "exposure_ratio"}


def test_every_registered_metric_declares_the_direction_listed_here() -> None:
    from polars_rankeval.metrics.registry import registered

    specs = registered()
    assert set(specs) >= LOWER_IS_BETTER | NO_DIRECTION
    for name, spec in specs.items():
        want = None if name in NO_DIRECTION else name not in LOWER_IS_BETTER
        assert spec.higher_is_better is want, name
        assert prk.list_metrics().filter(name=name)["higher_is_better"].item() is want


def two_systems(column: str, a: list[float], b: list[float]) -> pl.DataFrame:
    return pl.DataFrame(
        {"system": ["a"] * len(a) + ["b"] * len(b), "user": [*range(len(a))] * 2, column: a + b}
    )


def test_report_direction_agrees_with_every_registered_metric() -> None:
    from polars_rankeval.metrics.grammar import parse_metric
    from polars_rankeval.metrics.registry import registered

    # b is 0.15 or 0.1 higher for every user: significant (p < 0.05),
    # and better unless lower is better.
    low, high = [0.1, 0.2, 0.3, 0.4], [0.25, 0.3, 0.45, 0.5]
    for name, spec in registered().items():
        column = parse_metric(f"{name}@5" if spec.takes_k else name).name
        result = prk.compare_per_user(two_systems(column, low, high), baseline="a", test="t")
        assert result["higher_is_better"].to_list() == [spec.higher_is_better], name
        rows = prk.report(result).splitlines()[2:4]
        if spec.higher_is_better is None:
            assert rows == ["| a | 0.2500 |", "| b | 0.3750▲ |"], name
        elif spec.higher_is_better:
            assert rows == ["| a | 0.2500 |", "| b | **0.3750**▲ |"], name
        else:
            assert rows == ["| a | **0.2500** |", "| b | 0.3750▼ |"], name


def test_preset_names_take_the_direction_of_their_metric() -> None:
    # torchmetrics' RetrievalFallOut is fallout: the lower fall-out is the better system.
    data = load_systems()
    plain = prk.compare(data, ["fallout@3"], baseline="bm25", test="t")
    preset = prk.compare(
        data, ["RetrievalFallOut@3"], baseline="bm25", test="t", conventions="torchmetrics"
    )
    assert plain["higher_is_better"].to_list() == [False] * 3
    assert preset["higher_is_better"].to_list() == [False] * 3
    for result in (plain, preset):
        rows = dict(line.split(" | ", 1) for line in prk.report(result).splitlines()[2:6])
        lowest = result.sort("mean")["system"][0]
        assert lowest == "hybrid"
        assert rows["| hybrid"].startswith("**")
        assert rows["| hybrid"].endswith("▲ |")
        assert rows["| random"].endswith("▼ |")
    # A per-user frame with the preset's column names: the same direction.
    per_user = prk.evaluate(
        data, ["RetrievalFallOut@3"], by="system", per_user=True, conventions="torchmetrics"
    )
    again = prk.compare_per_user(per_user, baseline="bm25", test="t")
    assert again["higher_is_better"].to_list() == [False] * 3


def test_every_preset_name_resolves_to_its_metric_direction() -> None:
    from polars_rankeval.analysis.metric_direction import metric_direction
    from polars_rankeval.conventions.resolve import get_convention
    from polars_rankeval.metrics.grammar import parse_metric

    checked = 0
    for preset in prk.conventions()["preset"].unique().to_list():
        for mapped in get_convention(preset).metrics:
            if mapped.metric is None:
                continue
            k = "" if mapped.cutoff == "none" else "@5"
            want = parse_metric(mapped.metric + k).spec.higher_is_better
            assert metric_direction(f"{mapped.name}{k}[{preset}]") is want, (preset, mapped.name)
            checked += 1
    assert checked > 50
    assert metric_direction("ndcg@10") is True
    assert metric_direction("not a metric") is None


def test_direction_of_other_columns_is_given_or_null() -> None:
    frame = two_systems("latency", [0.3, 0.4, 0.5, 0.6], [0.15, 0.3, 0.35, 0.5])
    unknown = prk.compare_per_user(frame, baseline="a", test="t")
    assert unknown["higher_is_better"].to_list() == [None]
    note = prk.report(unknown).splitlines()[-1]
    assert "No direction for latency: ▲/▼ mark a significantly higher/lower value, no bold." in note
    letters = prk.report(unknown, marks="letters").splitlines()[-1]
    assert (
        "No direction for latency: the letters are of the systems with a significantly " in letters
    )
    assert "No direction for latency: no bold." in prk.report(unknown, marks="none")
    told = prk.compare_per_user(frame, baseline="a", test="t", higher_is_better={"latency": False})
    assert told["higher_is_better"].to_list() == [False]
    assert prk.report(told).splitlines()[2:4] == ["| a | 0.4500 |", "| b | **0.3250**▲ |"]
    with pytest.raises(ValueError, match=r"higher_is_better names column\(s\) 'nope'"):
        prk.compare_per_user(frame, baseline="a", higher_is_better={"nope": True})
    with pytest.raises(TypeError, match=r"higher_is_better\['latency'\] must be"):
        prk.compare_per_user(frame, baseline="a", higher_is_better={"latency": "low"})


# ----------------------------------------------------------------- labels and escaping (#18)
def test_beyond_26_systems_the_labels_are_numbers() -> None:
    # 28 systems s01..s28; s28 beats s01, s02 and s27, s27 beats s01. With letters,
    # s28's marks would read "aaab" (a, aa, b? or a, a, ab?); numbers are unambiguous.
    names = [f"s{i:02d}" for i in range(1, 29)]
    value = {s: 0.5 for s in names} | {"s27": 0.7, "s28": 0.9}
    wins = {("s28", "s01"), ("s28", "s02"), ("s28", "s27"), ("s27", "s01")}
    rows = [
        ("m", later, earlier, value[later], value[earlier], (later, earlier) in wins)
        for j, later in enumerate(names)
        for earlier in names[:j]
    ]
    text = prk.report(result_frame(rows))
    lines = text.splitlines()
    assert lines[2] == "| (1) s01 | 0.5000 |"
    assert lines[28] == "| (27) s27 | 0.7000<sup>1</sup> |"
    assert lines[29] == "| (28) s28 | **0.9000**<sup>1,2,27</sup> |"
    assert "Superscript numbers: the systems this one is significantly better than." in text
    latex = prk.report(result_frame(rows), "latex")
    assert r"(28) s28 & \textbf{0.9000}$^{\mathrm{1,2,27}}$ \\" in latex
    # Up to 26 systems: letters, a to z.
    v = {s: 0.6 if s == "s02" else 0.5 for s in names}
    few = [("m", s, b, v[s], v[b], (s, b) == ("s02", "s01")) for _, s, b, *_ in rows if s <= "s26"]
    assert "| (b) s02 | **0.6000**<sup>a</sup> |" in prk.report(result_frame(few))
    assert "| (z) s26 | 0.5000 |" in prk.report(result_frame(few))


def test_markdown_escapes_names() -> None:
    rows = [
        ("m|1", "b|c*d_e _f", "a<x>[y]", 0.5, 0.4, True),
        ("m|1", "plain", "a<x>[y]", 0.3, 0.4, False),
    ]
    text = prk.report(result_frame(rows), caption="Runs *1* | 2")
    lines = text.splitlines()
    assert lines[0] == r"**Runs \*1\* \| 2**"
    assert lines[2] == r"| System | m\|1 |"
    assert lines[4] == r"| a\<x\>\[y\] | 0.4000 |"
    assert lines[5] == r"| b\|c\*d_e \_f | **0.5000**▲ |"  # d_e: intraword, no emphasis
    # Every row has its two cells: an unescaped | would make three.
    assert all(line.replace(r"\|", "").count("|") == 3 for line in lines[2:7])
    assert r"Baseline: a\<x\>\[y\]. ▲/▼" in lines[-1]
    newline = result_frame([("m", "b\nc", "a", 0.5, 0.4, False)])
    assert prk.report(newline).splitlines()[3] == "| b c | **0.5000** |"


def test_latex_and_html_escape_names() -> None:
    rows = [("m_1&", "b&c_d%#", "a$~^{x}\\", 0.5, 0.4, True)]
    tex = prk.report(result_frame(rows), "latex")
    assert r"System & m\_1\& \\" in tex
    assert r"b\&c\_d\%\# & \textbf{0.5000}$^{\uparrow}$ \\" in tex
    base = r"a\$\textasciitilde{}\textasciicircum{}\{x\}\textbackslash{}"
    assert base + " & 0.4000 \\\\" in tex
    assert f"Baseline: {base}." in tex
    pytest.importorskip("great_tables")
    rows = [("<i>m</i>", "<b>x</b>", "a", 0.5, 0.4, True)]
    html = str(prk.report(result_frame(rows), "html", caption="<u>c</u>"))
    assert "<b>" not in html
    assert "<i>" not in html
    assert "<u>" not in html
    assert "&lt;b&gt;x&lt;/b&gt;" in html


# ----------------------------------------------------------------- one result type (#21)
@pytest.mark.parametrize("fmt", ["markdown", "latex", "html"])
def test_every_format_is_text_shown_rendered_in_notebooks(
    baseline_result: pl.DataFrame, fmt: str
) -> None:
    if fmt == "html":
        pytest.importorskip("great_tables")
    text = prk.report(baseline_result, fmt)  # type: ignore[arg-type]
    assert isinstance(text, str)
    assert isinstance(text, ReportText)
    assert text.syntax == fmt
    assert str(text) == text
    assert text._repr_html_() == (str(text) if fmt == "html" else None)
    assert text._repr_markdown_() == (str(text) if fmt == "markdown" else None)
    again = pickle.loads(pickle.dumps(text))
    assert again == text
    assert again.syntax == fmt


def test_cli_compare_html(capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("great_tables")
    code, out, err = run(capsys, "compare", "--baseline", "bm25", "--test", "t", "--format", "html")
    assert code == 0, err
    assert out.startswith("<div")
    assert "<strong>0.6349</strong>▲" in out


# ----------------------------------------------------------------- baseline and progress (#23)
def test_cli_runs_in_the_order_given_and_the_baseline_is_said(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    data = load_systems().filter(pl.col("user") <= 60)
    qrels = tmp_path / "qrels.txt"
    judged = data.filter(pl.col("system") == "bm25", pl.col("relevance").is_not_null())
    qrels.write_text(
        "".join(f"{u} 0 {i} {r}\n" for u, i, r in judged.select("user", "item", "relevance").rows())
    )
    paths = {}
    for name in ("bm25", "dense"):
        ranked = data.filter(pl.col("system") == name, pl.col("score").is_not_null())
        paths[name] = tmp_path / f"{name}.run"
        paths[name].write_text(
            "".join(
                f"{u} Q0 {i} 1 {s} {name}\n"
                for u, i, s in ranked.select("user", "item", "score").rows()
            )
        )
    # dense given first: dense is the baseline (bm25 would be first alphabetically).
    code, out, err = run(
        capsys,
        "compare",
        "--qrels",
        str(qrels),
        "--run",
        str(paths["dense"]),
        "--run",
        str(paths["bm25"]),
        "--test",
        "t",
    )
    assert code == 0, err
    assert "baseline: dense (the first system given; choose one with --baseline)" in err
    assert "Baseline: dense." in out
    assert out.splitlines()[2].startswith("| dense |")
    code, out, err = run(
        capsys,
        "compare",
        "--qrels",
        str(qrels),
        "--run",
        str(paths["dense"]),
        "--run",
        str(paths["bm25"]),
        "--test",
        "t",
        "--format",
        "csv",
    )
    assert pl.read_csv(out.encode())["baseline"].to_list() == ["dense"]
    # --recs: the order of appearance in the file.
    recs = tmp_path / "recs.parquet"
    truth = tmp_path / "truth.parquet"
    rows = data.filter(pl.col("score").is_not_null(), pl.col("system").is_in(["bm25", "dense"]))
    rows.sort("system", descending=True).select("system", "user", "item", "score").write_parquet(
        recs
    )
    judged.select("user", "item", "relevance").write_parquet(truth)
    code, out, err = run(
        capsys,
        "compare",
        "--recs",
        str(recs),
        "--truth",
        str(truth),
        "--test",
        "t",
        "--format",
        "csv",
    )
    assert code == 0, err
    assert pl.read_csv(out.encode())["baseline"].to_list() == ["dense"]
    # More than two systems without --baseline: every pair, and said so.
    code, out, err = run(capsys, "compare", "--test", "t", "--format", "csv")
    assert "every pair of the 4 systems, in the order given: bm25, dense, hybrid, random" in err


def test_cli_progress_on_off_and_default() -> None:
    from polars_rankeval.cli.app import build_parser

    parser = build_parser()
    assert parser.parse_args(["compare"]).progress is None
    assert parser.parse_args(["compare", "--progress"]).progress is True
    assert parser.parse_args(["compare", "--no-progress"]).progress is False


def test_cli_compare_table_writes_an_underflowed_p_value_as_a_bound(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # 2,000 users: b ranks the relevant item first (rr 1), a at position 2, 3 or 4 (rr 1/2,
    # 1/3, 1/4): differences around 0.69 with a spread near 0.1, t near 300; the t test's
    # p underflows to 0.0, which the table writes as the bound '< 1e-300', never '0.0000'.
    n = 2000
    rows = []
    for u in range(n):
        a_pos = 2 + u % 3
        for pos in range(1, 5):
            rows.append(("a", u, pos, 10.0 - pos, int(pos == a_pos)))
            rows.append(("b", u, pos, 10.0 - pos, int(pos == 1)))
    long = pl.DataFrame(rows, schema=["system", "user", "item", "score", "relevance"], orient="row")
    path = tmp_path / "long.parquet"
    long.write_parquet(path)
    code, out, err = run(
        capsys, "compare", "--data", str(path), "--by", "system", "-m", "mrr@10",
        "--baseline", "a", "--test", "t", "--format", "table",
    )  # fmt: skip
    assert code == 0, err
    assert "< 1e-300" in out
    assert " 0.0000 " not in out

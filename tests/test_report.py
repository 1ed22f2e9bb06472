"""prk.report (Markdown, LaTeX that compiles, HTML via DataFrame.style) and the compare CLI."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import polars as pl
import pytest

import polars_rankeval as prk
from polars_rankeval.cli import main
from polars_rankeval.datasets import load_systems


def result_frame(
    rows: list[tuple[str, str, str, float, float, bool]], **extra: object
) -> pl.DataFrame:
    """A comparison by hand: (metric, system, baseline, mean, baseline_mean, significant)."""
    frame = pl.DataFrame(
        rows,
        schema=["metric", "system", "baseline", "mean", "baseline_mean", "significant"],
        orient="row",
    ).with_columns(diff=pl.col("mean") - pl.col("baseline_mean"), n_users=pl.lit(10))
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
    assert "▲/▼: significantly better/worse than a." in note
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


def test_ties_in_display_are_all_bold_and_lower_is_better_option() -> None:
    result = result_frame([("m", "b", "a", 0.40001, 0.40004, False)])
    assert prk.report(result).splitlines()[2:4] == ["| a | **0.4000** |", "| b | **0.4000** |"]
    flipped = prk.report(result, digits=5, lower_is_better=["m"])
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
    gt = pytest.importorskip("great_tables")
    table = prk.report(baseline_result, "html", caption="Against bm25")
    assert isinstance(table, gt.GT)
    html = table.as_raw_html()
    assert "<strong>0.6349</strong>▲" in html
    assert "Against bm25" in html
    assert "significantly better/worse than bm25" in html
    assert len(re.findall(r"<tr>", html)) >= 4


def test_report_errors(baseline_result: pl.DataFrame) -> None:
    with pytest.raises(ValueError, match=r"format must be one of"):
        prk.report(baseline_result, "pdf")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"missing the column\(s\) significant"):
        prk.report(baseline_result.drop("significant"))
    with pytest.raises(TypeError, match=r"result must be the DataFrame returned by compare"):
        prk.report(baseline_result.to_dicts())  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"marks='baseline' needs one baseline"):
        prk.report(prk.compare(load_systems(), ["mrr"], test="t"), marks="baseline")
    with pytest.raises(ValueError, match=r"digits must be an int >= 0, got -1"):
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
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    shown = readme.split("<!-- compare-report:start -->\n")[1].split("<!-- compare-report:end -->")[
        0
    ]
    result = prk.compare(load_systems(), ["ndcg@10", "recall@20", "mrr"], baseline="bm25")
    assert shown.strip() == prk.report(result).strip()

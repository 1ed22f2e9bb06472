"""What the trec_eval clone prints: C's ``printf`` formats, the summary rows, ``-Z``.

:func:`format_doubles` prints numbers as C's ``printf("%6.4f")`` does (correctly
rounded, ``-nan``, ``inf``), the digits trec_eval prints; ``assemble`` builds the table
trec_eval prints (per-query rows with ``-q``, then the summary: the sum over queries in qrels order
divided by the number of queries, ``gm_`` measures as geometric means with trec_eval's
floor ``MIN_GEO_MEAN``); :func:`read_zscores` and ``apply_zscores`` read a ``-Z`` file
and turn values into z-scores; :func:`format_trec` gives the text, label padded to 22
characters, tab, query, tab, value.
"""

from __future__ import annotations

import functools
import math
import sys
from pathlib import Path
from typing import Any

import polars as pl

from polars_rankeval.trec_eval.compute import MIN_GEO_MEAN
from polars_rankeval.trec_eval.measures import Column

MISSING_ZSCORE = -1000000.0


def _rounded(f: pl.Expr, d: pl.Expr) -> pl.Expr:
    """``|v| * 10000`` rounded half to even (Int64; null beyond it).

    ``f`` is its floor, ``d`` the exact ``|v| * 10000 - f - 0.5``.
    """
    half = pl.when((f % 2) == 0).then(f).otherwise(f + 1)
    return (
        pl.when(d > 0).then(f + 1).when(d < 0).then(f).otherwise(half).cast(pl.Int64, strict=False)
    )


def _four_places_text(v: pl.Expr, n: pl.Expr) -> pl.Expr:
    """``%6.4f`` of ``v`` put together from ``n`` (:func:`_rounded`) and its sign."""
    negative = (v < 0) | ((v == 0) & ((1.0 / v) < 0))
    digits = pl.concat_str(
        [
            pl.when(negative).then(pl.lit("-")).otherwise(pl.lit("")),
            (n // 10000).cast(pl.String),
            pl.lit("."),
            (n % 10000).cast(pl.String).str.zfill(4),
        ]
    )
    text = (
        pl.when(v.is_nan())
        .then(pl.lit("-nan"))
        .when(v == float("inf"))
        .then(pl.lit("inf"))
        .when(v == float("-inf"))
        .then(pl.lit("-inf"))
        .otherwise(digits)
    )
    return text.str.pad_start(6)


@functools.cache
def _four_places() -> pl.Series:
    """``"0.0000"`` ... ``"1.0000"``: ``%6.4f`` of ``i / 10000`` at index ``i``."""
    return pl.Series([f"{i // 10000}.{i % 10000:04d}" for i in range(10001)], dtype=pl.String)


def format_doubles(values: pl.Series) -> pl.Series:
    """C's ``printf("%6.4f")`` of each value (correctly rounded, width 6; null stays null).

    Most values trec_eval prints lie in [0, 1]: their text is read from a table of the
    10,001 possible ones by the correctly rounded ``value * 10000``; only the others
    (negative, above 1, not finite) are put together from their digits, and values
    beyond 64-bit integers by Python's formatting (the same rounding as C's).
    """
    frame = pl.DataFrame({"v": values.cast(pl.Float64)})
    frame = frame.with_columns(a=pl.col("v").abs())
    # Dekker's exact product: a * 10000 == p + err exactly (10000 needs no split).
    frame = frame.with_columns(p=pl.col("a") * 10000.0, c=pl.col("a") * 134217729.0)
    frame = frame.with_columns(
        a_hi=pl.col("c") - (pl.col("c") - pl.col("a")), f=pl.col("p").floor()
    )
    frame = frame.with_columns(
        err=(pl.col("a_hi") * 10000.0 - pl.col("p")) + (pl.col("a") - pl.col("a_hi")) * 10000.0
    )
    frame = frame.with_columns(d=((pl.col("p") - pl.col("f")) - 0.5) + pl.col("err"))
    v = pl.col("v")
    negative = (v < 0) | ((v == 0) & ((1.0 / v) < 0))
    frame = frame.select("v", n=_rounded(pl.col("f"), pl.col("d")), other=negative | ~v.is_finite())
    n = pl.col("n")
    frame = frame.with_columns(pl.col("other") | (n > 10000) | n.is_null())
    text = _four_places().gather(
        frame.select(pl.when(pl.col("other")).then(0).otherwise(n)).to_series()
    )
    other = frame.filter(pl.col("other"))
    if other.height:
        other_text = other.select(_four_places_text(v, n)).to_series()
        huge = other.select(v.is_finite() & n.is_null()).to_series()
        if huge.any():  # beyond 64-bit integers: Python's %-formatting is C's
            rows = zip(other["v"], huge, other_text, strict=True)
            texts = [f"{x:6.4f}" if h else t for x, h, t in rows]
            other_text = pl.Series(texts, dtype=pl.String)
        where = frame.select(pl.arg_where(pl.col("other"))).to_series()
        text = text.scatter(where, other_text)
    return text.alias(values.name)


def fmt_long(values: pl.Expr) -> pl.Expr:
    """Values printed as C's ``%ld`` of a ``long`` cast (out of range: ``LONG_MIN``)."""
    return values.cast(pl.Int64, strict=False).fill_null(-(2**63)).cast(pl.String)


def read_zscores(source: str | Path | bytes) -> pl.DataFrame:
    """Read a ``-Z`` file: ``qid measure mean stddev`` lines (``atof`` numbers)."""
    from polars_rankeval.io.cnumbers import c_atof
    from polars_rankeval.io.trec.bytewise import _FIELD, _lines, _malformed, _read_bytes

    lines = _lines(_read_bytes(source, "zscores"))
    fields = lines.with_columns(pl.col("line").str.extract_all(_FIELD).alias("f"))
    _malformed(
        fields.filter(pl.col("f").list.len() != 4).select("lineno", "line"),
        source,
        "zscores",
        "4 white-space separated fields (qid measure mean stddev)",
    )
    f = pl.col("f")
    return fields.select(
        f.list.get(0).alias("qid"),
        f.list.get(1).alias("measure"),
        c_atof(f.list.get(2)).alias("mean"),
        c_atof(f.list.get(3)).alias("sd"),
    ).unique(["qid", "measure"], keep="first", maintain_order=True)


def apply_zscores(wide: pl.DataFrame, columns: list[Column], zscores: Any) -> pl.DataFrame:
    """``-Z``: each numeric value as ``(value - mean) / stddev`` from the z-score table."""
    table = zscores if isinstance(zscores, pl.DataFrame) else read_zscores(zscores)
    numeric = [c.label for c in columns if c.measure.kind != "relstring"]
    known = table.select(pl.col("qid").unique())
    long = wide.select("qid", *numeric).unpivot(
        index="qid", variable_name="measure", value_name="v"
    )
    long = long.join(table, on=["qid", "measure"], how="left", maintain_order="left")
    z = (
        pl.when(~pl.col("qid").is_in(known["qid"].implode()) | pl.col("mean").is_null())
        .then(MISSING_ZSCORE)
        .when(pl.col("sd") != 0)
        .then((pl.col("v") - pl.col("mean")) / pl.col("sd"))
        .when(pl.col("v") == pl.col("mean"))
        .then(0.0)
        .otherwise(MISSING_ZSCORE)
    )
    back = long.with_columns(z.alias("v")).pivot("measure", index="qid", values="v")
    return wide.drop(numeric).join(back, on="qid", how="left", maintain_order="left")


def assemble(
    wide: pl.DataFrame,
    columns: list[Column],
    qrels: pl.DataFrame,
    runid: str,
    per_query: bool,
    summary: bool,
    complete: bool,
    n_qrels_queries: int,
    z: bool,
) -> pl.DataFrame:
    """The printed table (see :func:`~.program.trec_eval`) from the per-query values."""
    schema = {
        "measure": pl.String,
        "query": pl.String,
        "value": pl.Float64,
        "text": pl.String,
        "zscore": pl.Boolean,
    }
    parts: list[pl.DataFrame] = []
    wide = wide.sort("qid")
    n_eval = wide.height
    if per_query:
        printed = [c for c in columns if c.measure.kind not in ("runid", "num_q", "gm")]
        if printed:
            # The columns one after another (measure-major), then gathered into
            # query-major order: cell (query q, measure m) is at m * n_q + q.
            n_q, n_m = wide.height, len(printed)
            cell = pl.int_range(n_m * n_q, dtype=pl.Int64, eager=True)
            m_index, q_index = cell % n_m, cell // n_m
            order = m_index * n_q + q_index
            # Values and texts measure by measure, each as trec_eval prints it (the
            # doubles formatted in one call), then gathered into query-major order.
            kinds = [
                "str" if c.measure.kind == "relstring" else
                "long" if c.measure.integer and not z else "double"
                for c in printed
            ]  # fmt: skip
            none_f = pl.Series([None] * n_q, dtype=pl.Float64)
            columns_mm = [
                none_f if kind == "str" else wide[c.label].cast(pl.Float64)
                for c, kind in zip(printed, kinds, strict=True)
            ]
            doubles = [v for v, kind in zip(columns_mm, kinds, strict=True) if kind == "double"]
            formatted = (
                format_doubles(pl.concat(doubles, rechunk=True))
                if doubles
                else pl.Series(dtype=pl.String)
            )
            texts: list[pl.Series] = []
            offset = 0  # of the next double measure's texts in ``formatted``
            for c, value, kind in zip(printed, columns_mm, kinds, strict=True):
                if kind == "str":
                    quoted = pl.concat_str([pl.lit("'"), pl.col("v"), pl.lit("'")])
                    frame = pl.DataFrame({"v": wide[c.label].cast(pl.String)})
                    texts.append(frame.select(quoted).to_series())
                elif kind == "long":
                    texts.append(pl.select(fmt_long(pl.lit(value))).to_series())
                else:
                    texts.append(formatted.slice(offset, n_q))
                    offset += n_q
            pq = pl.DataFrame(
                {
                    "measure": pl.Series([c.label for c in printed], dtype=pl.String).gather(
                        m_index
                    ),
                    "query": wide["qid"].gather(q_index),
                    "value": pl.concat(columns_mm, rechunk=True).gather(order),
                    "text": pl.concat(texts, rechunk=True).gather(order),
                    # z-scored: every value but a relstring's (printed as it is)
                    "zscore": pl.concat(
                        [
                            wide[c.label].is_null() & z
                            if kind == "str"
                            else pl.repeat(z, n_q, eager=True)
                            for c, kind in zip(printed, kinds, strict=True)
                        ]
                    ).gather(order),
                }
            )
            parts.append(pq)
    if summary:
        denominator = n_qrels_queries if complete else n_eval
        labels: list[str] = []
        values: list[float | None] = []
        texts_long: list[bool] = []
        for column in columns:
            kind = column.measure.kind
            label = column.label
            if kind in ("runid", "relstring"):
                labels.append(label)
                values.append(None)
                texts_long.append(kind == "runid")
                continue
            # trec_eval's accumulation: a left-to-right sum over queries in qrels order,
            # then one division (done on Python floats: IEEE doubles, as in C).
            total = float(
                wide.select(pl.col(label).cast(pl.Float64).cum_sum().last()).item() or 0.0
            )
            if kind == "num_q":
                value = float(denominator)
            elif column.measure.name == "num_rel" and complete:
                value = float(qrels.filter(pl.col("rel") > 0).height)
            elif column.measure.summary == "sum":
                value = total
            elif column.measure.summary == "gm":
                value = math.exp(
                    (total + (denominator - n_eval) * math.log(MIN_GEO_MEAN)) / denominator
                )
            else:
                value = total / denominator
            labels.append(label)
            values.append(value)
            texts_long.append(column.measure.integer and not z)
        frame = pl.DataFrame(
            {"measure": labels, "value": values, "long": texts_long},
            schema={"measure": pl.String, "value": pl.Float64, "long": pl.Boolean},
        )
        kinds = [c.measure.kind for c in columns]
        frame = frame.with_columns(pl.Series("kind", kinds))
        frame = frame.filter(pl.col("kind") != "relstring")
        frame = frame.select(
            "measure",
            pl.lit("all").alias("query"),
            "value",
            pl.when(pl.col("kind") == "runid")
            .then(pl.lit(runid))
            .when(pl.col("long"))
            .then(fmt_long(pl.col("value")))
            .otherwise(pl.lit(format_doubles(frame["value"])))
            .alias("text"),
            (pl.lit(z) & (pl.col("kind") != "runid")).alias("zscore"),
        )
        parts.append(frame)
    if not parts:
        return pl.DataFrame(schema=schema)
    return pl.concat([p.cast(schema) for p in parts])  # type: ignore[arg-type]


def format_trec(result: pl.DataFrame) -> str:
    r"""The lines trec_eval prints: ``%-22s\t%s\t%s`` (a ``Z`` before z-scored names)."""
    if result.height == 0:
        return ""
    return str(_trec_lines(result).select(pl.col("line").str.join("\n")).item()) + "\n"


def _trec_lines(result: pl.DataFrame) -> pl.DataFrame:
    """:func:`format_trec`'s lines, a row each (column ``line``, no null)."""
    z = "zscore" in result.columns and bool(result["zscore"].any())
    prefix = pl.when(pl.col("zscore")).then(pl.lit("Z")).otherwise(pl.lit("")) if z else pl.lit("")
    line = pl.concat_str(
        [
            prefix,
            pl.col("measure").str.pad_end(22),
            pl.lit("\t"),
            pl.col("query"),
            pl.lit("\t"),
            pl.col("text"),
        ]
    )
    return result.select(line.alias("line")).drop_nulls()


def print_trec(result: pl.DataFrame) -> None:
    """Print :func:`format_trec`'s text; to a byte stream written by Polars (no str copy)."""
    out = getattr(sys.stdout, "buffer", None)
    if out is None:  # a text-only stream (a test's capture, ...)
        sys.stdout.write(format_trec(result))
        return
    sys.stdout.flush()
    _trec_lines(result).write_csv(out, include_header=False, quote_style="never")
    out.flush()

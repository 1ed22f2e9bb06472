"""Spark helpers of :mod:`polars_rankeval.api.spark`: names, types, scalars, the grouped map.

Nothing here knows the plan: a :class:`polars_rankeval.plan.interface.Scalar` compiled to a
Spark aggregate, a Polars function mapped over groups of rows with ``applyInArrow``,
and the conversions between Spark, Arrow and Polars types.
"""

from __future__ import annotations

import contextlib
import functools
import operator
import re
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import polars as pl
import pyarrow as pa

from polars_rankeval.plan.interface import Scalar

if TYPE_CHECKING:
    from pyspark.sql import Column, GroupedData
    from pyspark.sql import DataFrame as SparkDataFrame
    from pyspark.sql.types import StructType

INSTALL_HINT = "pip install 'polars-rankeval[spark]' (pyspark>=4.0, pandas>=2.2,<3)"


def map_groups(
    rows: SparkDataFrame,
    fn: Callable[[pl.DataFrame], pl.DataFrame],
    schema: pl.Schema,
    *,
    group: list[str] | None = None,
    user: str = "",
    partitions: int = 1,
    clock: dict[str, float] | None = None,
) -> SparkDataFrame:
    """``fn`` over ``partitions`` buckets of whole users, or by groups (``group``).

    Buckets hash the ``user`` column; ``group=[]`` is one call for all the rows. Input
    columns keep their Spark types in the result; the others get the type of their
    Polars dtype in ``schema``. ``clock["convert"]``: the seconds each call
    spends turning its Arrow table into a Polars frame.
    """
    from pyspark.sql import functions as sf
    from pyspark.sql.types import StructField, StructType

    columns = rows.columns
    inputs = rows.select(*[col(c).alias(f"__prk_c{i}") for i, c in enumerate(columns)])
    fields = [
        StructField(n, rows.schema[n].dataType if n in columns else _spark_type(t), True)
        for n, t in schema.items()
    ]

    def kernel(table: pa.Table) -> pa.Table:
        start = time.perf_counter()
        names = [*columns, *table.column_names[len(columns) :]]
        frame = _frame(pl.from_arrow(table.rename_columns(names)))
        if clock is not None:
            clock["convert"] = time.perf_counter() - start
        out = fn(frame.select(columns))
        missing = [pl.lit(None, t).alias(n) for n, t in schema.items() if n not in out.columns]
        out = out.with_columns(missing).select(schema.names()).cast(schema)
        given = dict(zip(columns, table.schema.types, strict=False))
        types = [given[n] if n in given else _arrow(t) for n, t in schema.items()]
        return out.to_arrow().cast(pa.schema(list(zip(schema.names(), types, strict=True))))

    if group is None:
        grouped = by_bucket(inputs, f"__prk_c{columns.index(user)}", partitions)
    elif group:
        grouped = inputs.groupBy(*[f"__prk_c{columns.index(b)}" for b in group])
    else:
        grouped = inputs.withColumn("__prk_group", sf.lit(0)).groupBy("__prk_group")
    return grouped.applyInArrow(kernel, StructType(fields))


def slots(i: int, columns: Sequence[str]) -> list[str]:
    """Positional names of metric ``i``'s partial columns in the shared output."""
    return [f"__prk_g{i}_{j}" for j in range(len(columns))]


def by_bucket(inputs: SparkDataFrame, user: str, n: int) -> GroupedData:
    """The rows grouped by ``pmod(xxhash64(user), n)``, one bucket per Polars call.

    The explicit ``repartition(n, bucket)`` (which the ``groupBy`` reuses: one shuffle)
    keeps adaptive query execution from coalescing the shuffle partitions: it merges
    them by bytes, and this stage is compute-heavy, so a few large tasks would leave
    most cores idle.
    """
    from pyspark.sql import functions as sf

    bucket = sf.pmod(sf.xxhash64(sf.col(user)), sf.lit(n)).alias("__prk_bucket")
    return inputs.select("*", bucket).repartition(n, "__prk_bucket").groupBy("__prk_bucket")


def spark_scalar(scalar: Scalar, *, predicate: bool = False) -> Column:
    """A :class:`Scalar` as a Spark aggregate (or, ``predicate=True``, its row condition)."""
    from pyspark.sql import functions as sf

    if scalar.op == "len":
        return sf.count(sf.lit(1))
    if isinstance(scalar.column, tuple):
        x = sf.struct(*[col(c) for c in scalar.column])
    else:
        x = col(str(scalar.column))
        x = x.cast("double") if scalar.as_float else x
    if scalar.op == "n_unique":  # Spark leaves nulls out of a distinct count; Polars not
        nulls = sf.coalesce(sf.max(x.isNull().cast("long")), sf.lit(0))
        return sf.count_distinct(x) + (0 if isinstance(scalar.column, tuple) else nulls)
    if scalar.op in ("min", "max"):
        return sf.min(x) if scalar.op == "min" else sf.max(x)
    inf = (x == float("inf")) | (x == float("-inf"))
    condition = {
        "null": x.isNull(),
        "nan": sf.isnan(x),
        "inf": inf,
        "nan_or_inf": sf.isnan(x) | inf,
        "below": x < scalar.bound,
    }[str(scalar.where)]
    return condition if predicate else sf.count_if(condition)


def spark_scalars(frame: SparkDataFrame, wanted: Mapping[str, Scalar]) -> dict[str, Any]:
    """The aggregates of ``wanted`` over ``frame`` in one Spark job."""
    aggs = [spark_scalar(s).alias(f"__prk_s{i}") for i, s in enumerate(wanted.values())]
    found = frame.agg(*aggs).collect()[0]
    return {name: found[i] for i, name in enumerate(wanted)}


def spark_rows(
    frame: SparkDataFrame, where: Scalar | Mapping[str, Any], n: int
) -> list[dict[str, Any]]:
    """Up to ``n`` rows where a check holds, or whose columns equal the given values."""
    from pyspark.sql import functions as sf

    if isinstance(where, Scalar):
        condition = spark_scalar(where, predicate=True)
    else:
        parts = [col(c) == sf.lit(v) for c, v in where.items()]
        condition = functools.reduce(operator.and_, parts)
    return [row.asDict() for row in frame.filter(condition).limit(n).collect()]


def merge(frame: SparkDataFrame, keys: list[str], how: Mapping[str, str | None]) -> pl.DataFrame:
    """``frame`` grouped by ``keys``, its columns combined as ``how`` says, on the driver.

    ``how`` maps a column to ``sum``, ``min`` or ``max``, or to ``None`` (a key too).
    """
    from pyspark.sql import functions as sf

    combine = {"sum": sf.sum, "min": sf.min, "max": sf.max}
    keys = keys + [c for c, h in how.items() if h is None]
    aggs = [combine[h](col(c)).alias(c) for c, h in how.items() if h is not None]
    return to_polars(frame.groupBy(*[col(k) for k in keys]).agg(*aggs))


def create_frame(like: SparkDataFrame, frame: pl.DataFrame) -> SparkDataFrame:
    """A small Polars frame of columns of ``like`` as a Spark DataFrame of their types."""
    from pyspark.sql.types import StructType

    fields = [like.schema[c] for c in frame.columns]
    return like.sparkSession.createDataFrame(frame.to_arrow(), StructType(fields))


@contextlib.contextmanager
def worker_errors() -> Iterator[None]:
    """Re-raise a ``ValueError`` / ``TypeError`` of a Polars call as itself.

    Spark wraps an exception of a Python worker into a ``PythonException`` whose text
    ends with the worker's traceback; the last ``ValueError: ...`` or ``TypeError: ...``
    line is the Polars message. Its counts cover the users of that one call, which the
    message says.
    """
    from pyspark.errors import PythonException

    try:
        yield
    except PythonException as error:
        found = re.findall(r"^(ValueError|TypeError): (.+)$", str(error), flags=re.MULTILINE)
        if not found:
            raise
        kind, message = found[-1]
        message = f"{message.strip()} (in one Polars call on Spark: counts cover its users)"
        raise (ValueError if kind == "ValueError" else TypeError)(message) from error


def require_pyspark() -> None:
    try:
        import pyspark
    except ImportError:
        msg = f"polars_rankeval.api.spark needs pyspark: {INSTALL_HINT}"
        raise ImportError(msg) from None
    if int(pyspark.__version__.split(".")[0]) < 4:
        msg = (
            f"polars_rankeval.api.spark needs pyspark>=4.0, found {pyspark.__version__}: "
            f"{INSTALL_HINT}"
        )
        raise ImportError(msg)


def col(name: str) -> Column:
    """A column by its exact name (dots, parentheses and backticks quoted)."""
    from pyspark.sql import functions as sf

    return sf.col("`" + name.replace("`", "``") + "`")


def _frame(out: pl.DataFrame | pl.Series) -> pl.DataFrame:
    return out.to_frame() if isinstance(out, pl.Series) else out


def to_polars(frame: SparkDataFrame) -> pl.DataFrame:
    """A (small) Spark DataFrame collected to the driver as a Polars frame."""
    return _frame(pl.from_arrow(frame.toArrow()))


def polars_schema(schema: StructType) -> pl.Schema:
    """The Polars schema that Arrow conversion gives a Spark schema (Object if none)."""
    from pyspark.sql.pandas.types import to_arrow_type

    out = {}
    for f in schema.fields:
        try:
            arrow = to_arrow_type(f.dataType, timezone="UTC")
            out[f.name] = _frame(pl.from_arrow(pa.table({f.name: pa.array([], arrow)}))).dtypes[0]
        except (TypeError, ValueError, pa.ArrowException, NotImplementedError):
            out[f.name] = pl.Object()
    return pl.Schema(out)


def _arrow(dtype: pl.DataType) -> pa.DataType:
    """The Arrow type Spark takes for a result column of ``dtype`` (signed, small strings)."""
    arrow = pl.Series([], dtype=dtype).to_arrow().type
    if pa.types.is_large_string(arrow):
        return pa.string()
    widen = {pa.uint8(): pa.int16(), pa.uint16(): pa.int32(), pa.uint32(): pa.int64()}
    return widen.get(arrow, arrow)


def _spark_type(dtype: pl.DataType) -> Any:
    from pyspark.sql.pandas.types import from_arrow_type

    return from_arrow_type(_arrow(dtype))

"""TREC run and qrels files as Polars frames.

A run line is ``qid Q0 docno rank score tag`` and a qrels line ``qid iter docno rel``,
fields separated by any white space. Reading is a lazy scan (one text column split by
a regular expression inside Polars, no Python loop over lines), so large files stream.
The rank column of a run is kept but not used for ordering: trec_eval orders by score
descending, then docno descending (``ties="item_desc"`` on the String docno column).
These readers read text: a UTF-8 byte order mark at the start of a file is dropped.
trec_eval reads bytes and keeps the mark as the start of the first query id;
:func:`read_trec_eval_run` and :func:`read_trec_eval_qrels` (the ``trec-eval`` command)
read it as trec_eval does.

Examples
--------
>>> import polars_rankeval as prk
>>> from polars_rankeval.io import trec
>>> qrels, run = prk.datasets.example_paths()
>>> trec.scan_run(run).head(2).collect()
shape: (2, 6)
┌──────┬─────┬──────────────────┬──────┬──────────┬──────────┐
│ user ┆ q0  ┆ item             ┆ rank ┆ score    ┆ tag      │
│ ---  ┆ --- ┆ ---              ┆ ---  ┆ ---      ┆ ---      │
│ str  ┆ str ┆ str              ┆ i64  ┆ f64      ┆ str      │
╞══════╪═════╪══════════════════╪══════╪══════════╪══════════╡
│ 301  ┆ Q0  ┆ FR940202-2-00150 ┆ 104  ┆ 2.129133 ┆ STANDARD │
│ 301  ┆ Q0  ┆ FR940202-2-00151 ┆ 414  ┆ 1.72476  ┆ STANDARD │
└──────┴─────┴──────────────────┴──────┴──────────┴──────────┘
"""

from polars_rankeval.io.trec.bytewise import read_trec_eval_qrels, read_trec_eval_run
from polars_rankeval.io.trec.read import (
    DIVERSITY_QRELS_FIELDS,
    QRELS_FIELDS,
    RUN_FIELDS,
    pool_unjudged,
    read_diversity_qrels,
    read_qrels,
    read_run,
    scan_diversity_qrels,
    scan_qrels,
    scan_run,
)
from polars_rankeval.io.trec.write import write_qrels, write_run

__all__ = [
    "DIVERSITY_QRELS_FIELDS",
    "QRELS_FIELDS",
    "RUN_FIELDS",
    "pool_unjudged",
    "read_diversity_qrels",
    "read_qrels",
    "read_run",
    "read_trec_eval_qrels",
    "read_trec_eval_run",
    "scan_diversity_qrels",
    "scan_qrels",
    "scan_run",
    "write_qrels",
    "write_run",
]

"""Charts of evaluation results (Altair; install with ``pip install "polars-rankeval[plot]"``).

Every function takes a frame (the long frame, or the result of ``evaluate``,
``compare``, :func:`~polars_rankeval.curve` or :func:`~polars_rankeval.pr_curve`) and
returns an Altair chart: it displays in a notebook and saves with ``chart.save("x.png")``
(or ``.svg``, ``.html``, ``.json``; PNG and SVG through vl-convert-python, no browser).
The data behind each chart is a tidy Polars frame computed here (the ``*_data``
functions), so it can be checked or plotted with another library.

* :func:`curves`: metric@k over k per system, one panel per metric;
* :func:`pr_curves`: interpolated precision-recall curves per system;
* :func:`distribution`: the per-user values per system (histogram or ECDF, and a box
  summary), stating how many users have an undefined value (left out by empty="skip");
* :func:`topic_differences`: the per-user differences against a baseline, sorted, with
  the result of ``compare``;
* :func:`lorenz`: the Lorenz curve of item exposure, the Gini in the legend;
* :func:`long_tail`: the popularity of the recommended items against the catalog;
* :func:`largest_differences`: the users where two systems differ most, named, both ways;
* :func:`judgement_gaps`: each system's metric with unjudged items removed and as
  non-relevant, side by side;
* :func:`asl_curves`: the ASL curves of ``discriminative_power``, one line per metric.
* :func:`power_curve`: the power of the paired t test against the number of users, per
  row of ``prk.sample_size``.

This package is ``prk.plot``; one module per kind of chart
(:mod:`~polars_rankeval.plot.metric_curves`, :mod:`~polars_rankeval.plot.per_user`,
:mod:`~polars_rankeval.plot.differences`, :mod:`~polars_rankeval.plot.exposure`,
:mod:`~polars_rankeval.plot.judgements`, :mod:`~polars_rankeval.plot.meta_evaluation`,
:mod:`~polars_rankeval.plot.power`). May
import: ``fusion`` and the layers below it.
"""

from __future__ import annotations

from polars_rankeval.plot._lines import curve_gaps
from polars_rankeval.plot.differences import (
    largest_differences,
    topic_differences,
    topic_differences_data,
)
from polars_rankeval.plot.exposure import long_tail, long_tail_data, lorenz, lorenz_data
from polars_rankeval.plot.judgements import judgement_gaps
from polars_rankeval.plot.meta_evaluation import asl_curves
from polars_rankeval.plot.metric_curves import curves, pr_curves
from polars_rankeval.plot.per_user import distribution, distribution_data
from polars_rankeval.plot.power import power_curve, power_curve_data

__all__ = [
    "asl_curves",
    "curve_gaps",
    "curves",
    "distribution",
    "distribution_data",
    "judgement_gaps",
    "largest_differences",
    "long_tail",
    "long_tail_data",
    "lorenz",
    "lorenz_data",
    "power_curve",
    "power_curve_data",
    "pr_curves",
    "topic_differences",
    "topic_differences_data",
]

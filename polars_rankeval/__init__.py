"""polars_rankeval: evaluation of rankings and recommendations as Polars expressions.

Every metric is a function returning a ``pl.Expr`` that aggregates one user's rows
(``lf.group_by("user").agg(prk.ndcg(k=10))``); :func:`evaluate` compiles many metrics
into one lazy plan; ``df.rankeval`` / ``lf.rankeval`` are the dataframe namespaces.
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import TYPE_CHECKING, Any

from polars_rankeval import namespace as _namespace  # registers df.rankeval / lf.rankeval

if TYPE_CHECKING:
    from polars_rankeval import datasets, plot, trec
    from polars_rankeval._evaluate import evaluate, join
    from polars_rankeval._overlap import OverlapWarning, overlap
    from polars_rankeval._types import (
        EMPTY_POLICIES,
        TIE_POLICIES,
        USER_UNIVERSES,
        Columns,
        EmptyPolicy,
        TiePolicy,
        UserUniverse,
    )
    from polars_rankeval.compare import compare, compare_per_user
    from polars_rankeval.curves import curve, pr_curve
    from polars_rankeval.datasets import load_example, load_systems
    from polars_rankeval.metrics import (
        accuracy,
        auc,
        bin_g,
        boolean_kendall_tau,
        bpref,
        dcg,
        f1,
        fallout,
        fbeta,
        g,
        hit_rate,
        inf_ap,
        informedness,
        inter_list_diversity_sampled,
        inverse_precision,
        inverse_recall,
        iprec_11pt,
        iprec_at_recall,
        lauc,
        mae,
        map,
        markedness,
        mcc,
        miss_rate,
        mrr,
        mse,
        ndcg,
        ndcg_rel,
        nmae,
        num_nonrel_judged_ret,
        num_rel,
        num_rel_ret,
        num_ret,
        precision,
        r_precision,
        rbp,
        rbp_resid,
        recall,
        relative_precision,
        rmse,
        rndcg,
        set_map,
        spearman,
        unjudged,
        utility,
    )
    from polars_rankeval.popularity import item_popularity
    from polars_rankeval.registry import Metric, bind, expand_metric, list_metrics, parse_metric
    from polars_rankeval.report import report

# The public names are imported on first use (``prk.ndcg`` imports the metrics then):
# ``import polars_rankeval`` stays cheap, which the ``trec-eval`` command line (a drop-in
# for a C program, started once per evaluation) needs. Name -> (module, attribute or
# None for the module itself).
_LAZY: dict[str, tuple[str, str | None]] = {
    "OverlapWarning": ("polars_rankeval._overlap", "OverlapWarning"),
    "overlap": ("polars_rankeval._overlap", "overlap"),
    "datasets": ("polars_rankeval.datasets", None),
    "plot": ("polars_rankeval.plot", None),
    "trec": ("polars_rankeval.trec", None),
    "EMPTY_POLICIES": ("polars_rankeval._types", "EMPTY_POLICIES"),
    "TIE_POLICIES": ("polars_rankeval._types", "TIE_POLICIES"),
    "USER_UNIVERSES": ("polars_rankeval._types", "USER_UNIVERSES"),
    "Columns": ("polars_rankeval._types", "Columns"),
    "EmptyPolicy": ("polars_rankeval._types", "EmptyPolicy"),
    "TiePolicy": ("polars_rankeval._types", "TiePolicy"),
    "UserUniverse": ("polars_rankeval._types", "UserUniverse"),
    "compare": ("polars_rankeval.compare", "compare"),
    "compare_per_user": ("polars_rankeval.compare", "compare_per_user"),
    "curve": ("polars_rankeval.curves", "curve"),
    "pr_curve": ("polars_rankeval.curves", "pr_curve"),
    "load_example": ("polars_rankeval.datasets", "load_example"),
    "load_systems": ("polars_rankeval.datasets", "load_systems"),
    "evaluate": ("polars_rankeval._evaluate", "evaluate"),
    "join": ("polars_rankeval._evaluate", "join"),
    "accuracy": ("polars_rankeval.metrics", "accuracy"),
    "auc": ("polars_rankeval.metrics", "auc"),
    "bin_g": ("polars_rankeval.metrics", "bin_g"),
    "boolean_kendall_tau": ("polars_rankeval.metrics", "boolean_kendall_tau"),
    "bpref": ("polars_rankeval.metrics", "bpref"),
    "dcg": ("polars_rankeval.metrics", "dcg"),
    "f1": ("polars_rankeval.metrics", "f1"),
    "fallout": ("polars_rankeval.metrics", "fallout"),
    "fbeta": ("polars_rankeval.metrics", "fbeta"),
    "g": ("polars_rankeval.metrics", "g"),
    "hit_rate": ("polars_rankeval.metrics", "hit_rate"),
    "inf_ap": ("polars_rankeval.metrics", "inf_ap"),
    "informedness": ("polars_rankeval.metrics", "informedness"),
    "inter_list_diversity_sampled": ("polars_rankeval.metrics", "inter_list_diversity_sampled"),
    "inverse_precision": ("polars_rankeval.metrics", "inverse_precision"),
    "inverse_recall": ("polars_rankeval.metrics", "inverse_recall"),
    "iprec_11pt": ("polars_rankeval.metrics", "iprec_11pt"),
    "iprec_at_recall": ("polars_rankeval.metrics", "iprec_at_recall"),
    "lauc": ("polars_rankeval.metrics", "lauc"),
    "mae": ("polars_rankeval.metrics", "mae"),
    "map": ("polars_rankeval.metrics", "map"),
    "markedness": ("polars_rankeval.metrics", "markedness"),
    "mcc": ("polars_rankeval.metrics", "mcc"),
    "miss_rate": ("polars_rankeval.metrics", "miss_rate"),
    "mrr": ("polars_rankeval.metrics", "mrr"),
    "mse": ("polars_rankeval.metrics", "mse"),
    "ndcg": ("polars_rankeval.metrics", "ndcg"),
    "ndcg_rel": ("polars_rankeval.metrics", "ndcg_rel"),
    "nmae": ("polars_rankeval.metrics", "nmae"),
    "num_nonrel_judged_ret": ("polars_rankeval.metrics", "num_nonrel_judged_ret"),
    "num_rel": ("polars_rankeval.metrics", "num_rel"),
    "num_rel_ret": ("polars_rankeval.metrics", "num_rel_ret"),
    "num_ret": ("polars_rankeval.metrics", "num_ret"),
    "precision": ("polars_rankeval.metrics", "precision"),
    "r_precision": ("polars_rankeval.metrics", "r_precision"),
    "rbp": ("polars_rankeval.metrics", "rbp"),
    "rbp_resid": ("polars_rankeval.metrics", "rbp_resid"),
    "recall": ("polars_rankeval.metrics", "recall"),
    "relative_precision": ("polars_rankeval.metrics", "relative_precision"),
    "rmse": ("polars_rankeval.metrics", "rmse"),
    "rndcg": ("polars_rankeval.metrics", "rndcg"),
    "set_map": ("polars_rankeval.metrics", "set_map"),
    "spearman": ("polars_rankeval.metrics", "spearman"),
    "unjudged": ("polars_rankeval.metrics", "unjudged"),
    "utility": ("polars_rankeval.metrics", "utility"),
    "item_popularity": ("polars_rankeval.popularity", "item_popularity"),
    "Metric": ("polars_rankeval.registry", "Metric"),
    "bind": ("polars_rankeval.registry", "bind"),
    "expand_metric": ("polars_rankeval.registry", "expand_metric"),
    "list_metrics": ("polars_rankeval.registry", "list_metrics"),
    "parse_metric": ("polars_rankeval.registry", "parse_metric"),
    "report": ("polars_rankeval.report", "report"),
}


class _Lazy:
    """A package attribute imported on first access.

    A data descriptor on the package's module class, so that it also wins over the
    submodule of the same name (``polars_rankeval.evaluate`` the module) which the import
    system stores on the package when that submodule is imported.
    """

    def __init__(self, name: str) -> None:
        self.name = name
        self.value: Any = None
        self.loaded = False

    def __get__(self, obj: object, owner: type | None = None) -> Any:
        if not self.loaded:
            module, attribute = _LAZY[self.name]
            loaded = importlib.import_module(module)
            self.value = loaded if attribute is None else getattr(loaded, attribute)
            self.loaded = True
        return self.value

    def __set__(self, obj: object, value: Any) -> None:
        if _LAZY[self.name][1] is not None and isinstance(value, types.ModuleType):
            return  # the import system recording a submodule: the function stays
        self.value, self.loaded = value, True


class _Package(types.ModuleType):
    def __dir__(self) -> list[str]:
        return sorted({*super().__dir__(), *_LAZY})


for _name in _LAZY:
    setattr(_Package, _name, _Lazy(_name))
sys.modules[__name__].__class__ = _Package
del _name

__version__ = "0.1.0"

__all__ = [
    "EMPTY_POLICIES",
    "TIE_POLICIES",
    "USER_UNIVERSES",
    "Columns",
    "EmptyPolicy",
    "Metric",
    "OverlapWarning",
    "TiePolicy",
    "UserUniverse",
    "accuracy",
    "auc",
    "bin_g",
    "bind",
    "boolean_kendall_tau",
    "bpref",
    "compare",
    "compare_per_user",
    "curve",
    "datasets",
    "dcg",
    "evaluate",
    "expand_metric",
    "f1",
    "fallout",
    "fbeta",
    "g",
    "hit_rate",
    "inf_ap",
    "informedness",
    "inter_list_diversity_sampled",
    "inverse_precision",
    "inverse_recall",
    "iprec_11pt",
    "iprec_at_recall",
    "item_popularity",
    "join",
    "lauc",
    "list_metrics",
    "load_example",
    "load_systems",
    "mae",
    "map",
    "markedness",
    "mcc",
    "miss_rate",
    "mrr",
    "mse",
    "ndcg",
    "ndcg_rel",
    "nmae",
    "num_nonrel_judged_ret",
    "num_rel",
    "num_rel_ret",
    "num_ret",
    "overlap",
    "parse_metric",
    "plot",
    "pr_curve",
    "precision",
    "r_precision",
    "rbp",
    "rbp_resid",
    "recall",
    "relative_precision",
    "report",
    "rmse",
    "rndcg",
    "set_map",
    "spearman",
    "trec",
    "unjudged",
    "utility",
]

del _namespace

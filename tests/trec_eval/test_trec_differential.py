"""``polars-rankeval trec-eval`` against the real trec_eval, line for line.

A bounded, seeded subset of the random cases of :mod:`tests.trec_eval.trec_diff` (the module
runs thousands: ``python -m tests.trec_eval.trec_diff --cases 5000 --seed 1``), trec_eval's own
test command lines, and the shrinker. Skipped with the reason when trec_eval cannot be
built (no C compiler or make, or no ``shared/tools`` folder).
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from tests.trec_eval import trec_diff
from tests.trec_eval.trec_diff import Case, compare, deviation, generate, reference_binary, shrink

N_CASES = 150
SEED = 20261123
DATA = Path(__file__).parents[1] / "data"


@pytest.fixture(scope="module")
def binary() -> str:
    path, reason = reference_binary()
    if path is None:
        pytest.skip(reason)
    return path


def test_random_cases_agree(binary: str) -> None:
    differing = []
    compared = 0
    for i in range(N_CASES):
        case = generate(random.Random(SEED + i))
        outcome = compare(case, binary)
        if outcome.status == "skip":
            continue
        compared += 1
        if outcome.status == "differ":
            differing.append((i, case, outcome))
    assert compared >= N_CASES * 0.7  # the documented deviations stay a minority
    if differing:
        i, case, outcome = differing[0]
        small = shrink(case, trec_diff.differs(binary), max_steps=150)
        pytest.fail(
            f"{len(differing)} of {compared} cases differ; case {i} shrunk:\n{small.describe()}\n"
            + trec_diff.show_diff(compare(small, binary))
        )


@pytest.mark.parametrize("fmt", ["qrels_jg", "prefs", "qrels_prefs"])
def test_relation_formats_agree(binary: str, fmt: str) -> None:
    for i in range(12):
        case = trec_diff.relation_case(SEED + i, fmt)
        outcome = compare(case, binary)
        assert outcome.status != "differ", f"{case.describe()}\n{trec_diff.show_diff(outcome)}"


_QRELS = tuple((DATA / "qrels.test").read_text().splitlines())
_RUN = tuple((DATA / "results.test").read_text().splitlines())


@pytest.mark.parametrize(
    "args",
    [
        (),
        ("-q",),
        ("-m", "all_trec"),
        ("-m", "all_trec", "-q"),
        ("-q", "-c", "-m", "all_trec", "-l", "2"),
        ("-J", "-M", "50", "-m", "all_trec"),
        ("-m", "ndcg_rel.1=3,2=9", "-m", "dcg", "-m", "yaap", "-m", "set", "-m", "G.2=5"),
        ("--measure=Rndcg", "--level_for_rel", "0", "-n", "-q"),
    ],
)
def test_trec_eval_test_files(binary: str, args: tuple[str, ...]) -> None:
    outcome = compare(Case(_QRELS, _RUN, args), binary)
    assert outcome.status == "same", trec_diff.show_diff(outcome)


def test_shrinker_reduces_to_the_failing_lines() -> None:
    # A property that "fails" while the run keeps a line for query q2 and the args keep -q.
    case = Case(
        qrels=("q1 0 d1 1", "q2 0 d2 1", "q3 0 d3 0"),
        run=("q1 Q0 d1 1 1 t", "q2 Q0 d2 1 1 t", "q2 Q0 d9 2 0.5 t", "q3 Q0 d3 1 1 t"),
        args=("-q", "-c", "-m", "map"),
    )

    def fails(c: Case) -> bool:
        return any(line.startswith("q2") for line in c.run) and "-q" in c.args

    small = shrink(case, fails)
    assert len(small.run) == 1
    assert small.run[0].startswith("q2")
    assert len(small.qrels) == 1
    assert small.args == ("-q",)


def test_deviation_names_a_missing_query_without_c() -> None:
    case = Case(qrels=("q1 0 d1 1", "q2 0 d1 1"), run=("q1 Q0 d1 1 1 t",))
    assert "-c" in (deviation(case) or "")
    assert deviation(Case(case.qrels, case.run, ("-c",))) is None

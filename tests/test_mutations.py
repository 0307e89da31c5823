"""Property: a single malformed field of our own exports never improves a VM's verdict.

Mutations come from :mod:`bench.mutations` (every family in ``FAMILIES``: field values of
the wrong type, shape, case or format, and since fz27 wrong apiVersions, a missing namespace,
Velero status fields of the wrong type, Cyrillic look-alikes in names, quantities written
otherwise, a BOM, CRLF or tab in the file, Lists nested or typed, objects written twice) over
``examples/small-cluster`` and the check fixtures.
Readiness is ranked READY, AT_RISK, then UNKNOWN and NOT_READY together
(``docs/readiness.md``). The default run samples a few hundred mutations; the
``slow`` one tries 5,000 when ``AUDITOR_SLOW=1`` (``python -m bench.mutations`` prints the
same figures per family).
"""

from __future__ import annotations

import os
from collections import Counter

import pytest

from bench.mutations import FAMILIES, mutations, run, targets


def _check(stats: dict[str, Counter[str]], count: int) -> None:
    tried = {f: stats[f]["tried"] for f in FAMILIES}
    print(f"mutations tried per family: {tried}")  # shown with pytest -s
    assert sum(tried.values()) == count
    assert all(tried[f] > 0 for f in FAMILIES), tried
    assert list(stats["!"]) == []  # improved verdicts or tracebacks, described
    assert sum(stats[f]["changed"] for f in FAMILIES) > count // 10  # the mutations bite
    # A mutation that changed a finding names the object (or its file) in a problem.
    unnamed = sum(stats[f]["unnamed"] for f in FAMILIES)
    assert unnamed <= count // 50, list(stats["?"])[:20]


def test_every_family_has_sites_in_our_exports() -> None:
    found = Counter(m.family for t in targets()[:3] for m in mutations(t))
    assert set(found) == set(FAMILIES)


def test_a_few_hundred_mutations_never_improve_a_verdict() -> None:
    _check(run(300, seed=17), 300)


@pytest.mark.slow
@pytest.mark.skipif(
    not os.environ.get("AUDITOR_SLOW"),
    reason="5,000 mutations take minutes: set AUDITOR_SLOW=1 (or run python -m bench.mutations)",
)
def test_five_thousand_mutations_never_improve_a_verdict() -> None:
    _check(run(5000, seed=17), 5000)


def test_a_verdict_improves_only_past_the_worst_it_may_truly_be() -> None:
    """An UNKNOWN of medium ERRORs alone is READY or AT_RISK (readiness_of): AT_RISK after it
    is no improvement (mutations seed 205), READY is; an UNKNOWN of a high ERROR may hide a
    NOT_READY, so AT_RISK after it is one."""
    from bench.mutations import worst_rank

    medium = {"RR-A": "ERROR medium", "RR-B": "PASS high"}
    grave = {"RR-A": "ERROR high", "RR-B": "FAIL medium"}
    assert worst_rank("UNKNOWN", medium) == worst_rank("AT_RISK", {"RR-B": "FAIL medium"}) == 1
    assert worst_rank("READY", {}) == 0 < worst_rank("UNKNOWN", medium)
    assert worst_rank("UNKNOWN", grave) == worst_rank("NOT_READY", {}) == 2
    assert worst_rank("AT_RISK", {}) < worst_rank("UNKNOWN", grave)

"""Faults on the loopback API server: each becomes a state and a collection problem, never data."""

from __future__ import annotations

import math
from pathlib import Path

from auditor.kinds import KINDS
from auditor.sources.base import KindState
from tests.answer_support import answers
from tests.kubeapi_server import Faults
from tests.live_support import fast_options, serve, synthetic_estate

VELERO = {k.kind for k in KINDS if k.group == "velero.io"}


def test_forbidden_backups_are_unavailable_with_a_problem(tmp_path: Path) -> None:
    with serve(tmp_path, faults=Faults(forbidden={"Backup"})) as live:
        data = live.collect()
    assert data.state("Backup") is KindState.UNAVAILABLE
    assert not data.known("Backup")
    assert data.of("Backup") == []
    [problem] = [p for p in data.problems if p.kinds == ("Backup",)]
    assert problem.kind == "Backup"
    assert "Backup (velero.io/v1)" in problem.reason
    assert "HTTP 403" in problem.reason
    assert "/apis/velero.io/v1/backups" in problem.reason
    assert data.state("Schedule") is KindState.COMPLETE and len(data.of("Schedule")) == 3


def test_missing_velero_group_is_not_installed_without_problems(tmp_path: Path) -> None:
    with serve(tmp_path, faults=Faults(missing_groups={"velero.io"})) as live:
        data = live.collect()
        paths = [p for _, p in live.api.log]
    assert {k: data.state(k) for k in VELERO} == {k: KindState.NOT_INSTALLED for k in VELERO}
    assert all(data.known(k) for k in VELERO)
    assert not [p for p in data.problems if set(p.kinds) & VELERO]
    assert not [p for p in paths if p.startswith("/apis/velero.io")]


def test_expired_continue_token_restarts_the_list(tmp_path: Path) -> None:
    with serve(tmp_path, faults=Faults(expire={"VolumeSnapshotContent": 1})) as live:
        data = live.collect(options=fast_options(page_size=30))
        lists = [p for p in live.api.list_requests() if "volumesnapshotcontents" in p]
    assert data.state("VolumeSnapshotContent") is KindState.COMPLETE
    assert len(data.of("VolumeSnapshotContent")) == 82
    names = [o["metadata"]["name"] for o in data.of("VolumeSnapshotContent")]
    assert len(set(names)) == 82  # the restart discarded the first page, no duplicates
    # page 1, page 2 (410), then pages 1..3 again
    assert len(lists) == 5
    assert sum("continue=" not in p for p in lists) == 2


def test_token_that_keeps_expiring_gives_up(tmp_path: Path) -> None:
    with serve(tmp_path, faults=Faults(expire={"VolumeSnapshotContent": 99})) as live:
        data = live.collect(options=fast_options(page_size=30, max_restarts=2))
    assert data.state("VolumeSnapshotContent") is KindState.UNAVAILABLE
    [problem] = [p for p in data.problems if p.kind == "VolumeSnapshotContent"]
    assert "HTTP 410" in problem.reason and "Expired" in problem.reason


def test_server_error_is_retried_then_succeeds(tmp_path: Path) -> None:
    with serve(tmp_path, faults=Faults(errors={"VirtualMachine": 2})) as live:
        data = live.collect()
        vm_lists = [p for p in live.api.list_requests() if "/virtualmachines?" in p]
    assert data.state("VirtualMachine") is KindState.COMPLETE
    assert len(data.of("VirtualMachine")) == answers("cluster-export").vm_count
    assert len(vm_lists) == 3
    assert not [p for p in data.problems if p.kind == "VirtualMachine"]


def test_server_error_after_retries_is_a_problem(tmp_path: Path) -> None:
    with serve(tmp_path, faults=Faults(errors={"VirtualMachine": 10})) as live:
        data = live.collect()
        vm_lists = [p for p in live.api.list_requests() if "/virtualmachines?" in p]
    assert len(vm_lists) == 3  # one try and two retries
    assert data.state("VirtualMachine") is KindState.UNAVAILABLE
    [problem] = [p for p in data.problems if p.kind == "VirtualMachine"]
    assert "VirtualMachine (kubevirt.io/v1)" in problem.reason and "HTTP 500" in problem.reason


def test_slow_list_times_out_into_a_problem(tmp_path: Path) -> None:
    with serve(tmp_path, faults=Faults(delay={"Restore": 0.6})) as live:
        data = live.collect(options=fast_options(request_timeout=0.2, retry_delays=(0.01,)))
    assert data.state("Restore") is KindState.UNAVAILABLE
    [problem] = [p for p in data.problems if p.kind == "Restore"]
    assert "no response" in problem.reason and "Timeout" in problem.reason
    assert data.state("Backup") is KindState.COMPLETE


def test_list_not_found_is_unavailable(tmp_path: Path) -> None:
    with serve(tmp_path, faults=Faults(not_found={"DataVolume"})) as live:
        data = live.collect()
    assert data.state("DataVolume") is KindState.UNAVAILABLE
    assert any("HTTP 404" in p.reason for p in data.problems if p.kind == "DataVolume")


def test_only_get_is_used(tmp_path: Path) -> None:
    faults = Faults(forbidden={"Backup"}, errors={"Service": 1}, expire={"PersistentVolume": 1})
    with serve(tmp_path, faults=faults) as live:
        live.collect(options=fast_options(page_size=7))
        assert live.api.methods() == {"GET"}
        assert len(live.api.log) > 40


def test_request_count_for_2000_vms_is_kinds_times_pages_plus_discovery(tmp_path: Path) -> None:
    estate = synthetic_estate(2000)
    with serve(tmp_path, objects=estate) as live:
        data = live.collect()
        log = list(live.api.log)
        lists = live.api.list_requests()
    assert len(data.of("VirtualMachine")) == 2000
    assert data.state("VirtualMachine") is KindState.COMPLETE
    pages = sum(max(1, math.ceil(len(estate.get(k.kind, [])) / 500)) for k in KINDS)
    group_versions = len({(k.group, k.versions[0]) for k in KINDS})
    discovery = 2 + group_versions  # /version, /apis, one per group version
    assert pages == 4 * 4 + (len(KINDS) - 4)
    # distinct requests: on a loaded machine the client may retry a timed-out request, which
    # repeats the same path (a retry, not another page)
    assert len(set(lists)) == pages
    assert len(set(log)) == pages + discovery
    assert len(log) - len(set(log)) <= 2, [r for r in log if log.count(r) > 1]
    assert not [p for p in lists if "/virtualmachines/" in p.split("?")[0]]  # nothing per VM

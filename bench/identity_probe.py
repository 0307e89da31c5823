"""Probe the identity checks' fields, comparing findings (round h48b).

Like :mod:`bench.field_probe` (the same ``bench.mutations`` workspace), but over the fields
RR-FW-*, RR-DSK-003, RR-NIC-001 and RR-NET-* read (:data:`IDF`, ``*`` for every list entry),
each set to ``Bogus``, the value in another case, ``42``, ``true``, ``"true"``, ``["x"]``,
``{x: y}``, null, ``""``, a list's first entry or the value wrapped in a list (an absent one
added with those values), and it compares the findings, not the readiness rank:

- BETTER: a finding of any VM whose status and severity are lower than before (a FAIL that
  turned PASS, a high FAIL that turned medium), whatever the readiness;
- UNNAMED: a finding changed and no new collection problem names the mutated object at the
  field mutated (or a field above or below it), with the first changed findings;
- TRACEBACK: the audit raised, logged one, or a check raised.

Usage: ``PYTHONPATH=. python -m bench.identity_probe [--only REGEX] SEED COUNT EXPORT...``
(an export is a directory or a fixture file; ``--only`` keeps the mutations whose path
matches). Prints a progress line every 50 and the totals.
"""

from __future__ import annotations

import logging
import random
import re
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from bench import field_probe
from bench import mutations as bm

VM = "spec.template.spec."
IDF = {
    "VirtualMachine": [
        VM + p
        for p in (
            "domain.firmware",
            "domain.firmware.uuid",
            "domain.firmware.serial",
            "domain.firmware.bootloader",
            "domain.firmware.bootloader.efi",
            "domain.firmware.bootloader.efi.secureBoot",
            "domain.firmware.bootloader.efi.persistent",
            "domain.firmware.bootloader.bios",
            "domain.firmware.x",
            "domain.firmware.bootloader.x",
            "domain.firmware.bootloader.efi.x",
            "domain.devices.tpm",
            "domain.devices.tpm.persistent",
            "domain.devices.tpm.enabled",
            "domain.devices.tpm.x",
            "domain.features.smm",
            "domain.features.smm.enabled",
            "domain.devices.disks",
            "domain.devices.disks.*.bootOrder",
            "domain.devices.disks.*.disk",
            "domain.devices.disks.*.disk.bus",
            "domain.devices.disks.*.cdrom.bus",
            "domain.devices.disks.*.name",
            "domain.devices.interfaces",
            "domain.devices.interfaces.*.macAddress",
            "domain.devices.interfaces.*.model",
            "domain.devices.interfaces.*.bridge",
            "domain.devices.interfaces.*.masquerade",
            "domain.devices.interfaces.*.binding",
            "domain.devices.interfaces.*.binding.name",
            "domain.devices.interfaces.*.sriov",
            "domain.devices.interfaces.*.name",
            "domain.devices.interfaces.*.x",
            "networks",
            "networks.*.multus",
            "networks.*.multus.networkName",
            "networks.*.pod",
            "networks.*.name",
            "networks.*.multus.default",
            "networks.*.x",
        )
    ]
    + [
        "spec.instancetype",
        "spec.instancetype.name",
        "spec.instancetype.kind",
        "spec.instancetype.revisionName",
        "spec.preference",
        "spec.preference.name",
        "spec.preference.kind",
        "spec.preference.revisionName",
        "status.instancetypeRef",
        "status.preferenceRef",
    ],
    "VirtualMachineInstance": [
        "spec.domain.firmware",
        "spec.domain.firmware.uuid",
        "spec.domain.firmware.serial",
        "spec.domain.firmware.bootloader",
        "spec.domain.firmware.bootloader.efi.persistent",
        "spec.domain.firmware.bootloader.efi.secureBoot",
        "spec.domain.firmware.x",
        "spec.domain.devices.tpm",
        "spec.domain.devices.tpm.persistent",
        "spec.domain.devices.interfaces",
        "spec.domain.devices.interfaces.*.macAddress",
        "spec.domain.devices.interfaces.*.model",
        "spec.domain.devices.interfaces.*.binding",
        "spec.domain.devices.disks.*.bootOrder",
        "spec.domain.devices.disks.*.disk.bus",
        "spec.networks",
        "spec.networks.*.multus.networkName",
        "status.interfaces",
        "status.interfaces.*.mac",
        "status.interfaces.*.name",
        "status.interfaces.*.interfaceName",
        "status.interfaces.*.ipAddresses",
        "status.interfaces.*.ipAddress",
        "status.interfaces.*.infoSource",
        "status.guestOSInfo",
        "status.guestOSInfo.id",
        "status.machine",
        "status.machine.type",
        "status.phase",
        "status.conditions",
    ],
}
VALUES = ("Bogus", "<case>", 42, True, "true", ["x"], {"x": "y"}, None, "", "<first>", "<list>")
ORDER = {"info": 1, "low": 2, "medium": 3, "high": 4, "critical": 5}


def vals(present: bool, cur: Any) -> list[Any]:
    """The values a field is set to (:data:`VALUES`; ``<case>``, ``<first>``, ``<list>`` where
    they apply: :func:`bench.field_probe._values`)."""
    return field_probe._values(present, cur, VALUES)


def expand(obj: Any, steps: list[str], pre: tuple[Any, ...] = ()) -> Any:
    """concrete paths (tuple) for steps with '*' over list entries; yields (path, present, cur)"""
    at = obj
    for i, s in enumerate(steps):
        if s == "*":
            if not isinstance(at, list):
                return
            for j in range(len(at)):
                yield from expand(at[j], steps[i + 1 :], (*pre, j))
            return
        if not isinstance(at, dict):
            return
        if s not in at:
            # absent: add it, if the holder is a dict, with the rest nested
            yield (*pre, s), False, steps[i + 1 :]
            return
        at = at[s]
        pre = (*pre, s)
    yield pre, True, at


def muts(target: bm.Target) -> list[bm.Mutation]:
    """Every value of :func:`vals` at every path of :data:`IDF` in ``target``."""
    out = []
    for f in target.files:
        for di, doc in enumerate(bm._docs(f)):
            for prefix, obj in bm._objects(doc):
                kind = obj.get("kind")
                if kind not in IDF:
                    continue
                name = str((obj.get("metadata") or {}).get("name"))
                for dotted in IDF[kind]:
                    for path, present, cur in expand(obj, dotted.split(".")):
                        if present:
                            for v in vals(True, cur):
                                out.append(
                                    bm.Mutation(
                                        "id", target, f, di, (*prefix, *path), v, kind, name
                                    )
                                )
                        else:
                            rest = cur
                            if "*" in rest:
                                continue
                            for v in vals(False, None):
                                new = v
                                for k in reversed(rest):
                                    new = {k: new}
                                out.append(
                                    bm.Mutation(
                                        "id", target, f, di, (*prefix, *path), new, kind, name
                                    )
                                )
    return out


def bad(s: str) -> int:
    """0 for a PASS or N/A, else the severity's rank (a FAIL and an ERROR alike)."""
    st, sev = s.split()
    return 0 if st in ("PASS", "NOT_APPLICABLE", "SKIPPED") else ORDER.get(sev, 3)


def norm(p: str | None) -> str:
    return re.sub(r"\[[^\]]*\]", "", p or "")


def run(seed: int, count: int, exports: list[str], only: str | None = None) -> None:
    """Sample ``count`` mutations of ``exports`` with ``seed`` and print what they did."""
    rng = random.Random(seed)
    pool = [m for e in exports for m in muts(bm.Target(Path(e)))]
    if only:
        pool = [m for m in pool if re.search(only, ".".join(map(str, m.path)))]
    chosen = rng.sample(pool, min(count, len(pool)))
    chosen.sort(key=lambda m: (str(m.target.path), str(m.file), m.doc))
    print(f"pool {len(pool)} chosen {len(chosen)}", flush=True)
    h = bm._Tracebacks()
    logging.getLogger().addHandler(h)
    logging.getLogger().setLevel(logging.INFO)
    seen = Counter()
    t0 = time.time()
    with tempfile.TemporaryDirectory() as tmp:
        ws = None
        for i, m in enumerate(chosen):
            if ws is None or ws.target != m.target:
                ws = bm._Workspace(m.target, Path(tmp) / str(i))
                base_probs = {
                    str(p.model_dump()) for p in bm._audit(ws.target, ws.root).collection_problems
                }
            dest = ws.root / m.file.name
            orig = dest.read_bytes()
            dest.write_bytes(bm._render(ws.docs[m.file], m))
            h.seen.clear()
            try:
                rep = bm._audit(ws.target, ws.root)
            except Exception as exc:
                seen["traceback"] += 1
                print("TRACEBACK", m.describe(), exc, flush=True)
                continue
            finally:
                dest.write_bytes(orig)
            seen["tried"] += 1
            crashed = [f.check_id for v in rep.vms for f in v.findings if "exception" in f.evidence]
            if h.seen or crashed:
                seen["traceback"] += 1
                print("TRACEBACK", m.describe(), (h.seen or crashed)[0][:200], flush=True)
            after = bm._verdicts(rep)
            new = [p for p in rep.collection_problems if str(p.model_dump()) not in base_probs]
            field = ".".join(str(x) for x in m.path if not isinstance(x, int))
            field = field[6:] if field.startswith("items.") else field
            objp = [p for p in new if p.name == m.name]
            named = any(
                p.field
                and (
                    norm(p.field).startswith(field.split(".x")[0])
                    or field.startswith(norm(p.field))
                )
                for p in objp
            )
            better = []
            changed = False
            diffs = []
            for key, (_r, fs) in after.items():
                b = ws.baseline.get(key)
                if not b:
                    continue
                for c, s in fs.items():
                    if c in b[1] and s != b[1][c]:
                        changed = True
                        diffs.append(f"{key[1]} {c} {b[1][c]}->{s}")
                        if bad(s) < bad(b[1][c]):
                            better.append(f"{key[1]} {c} {b[1][c]}->{s}")
            if changed:
                seen["changed"] += 1
            if better:
                seen["better"] += 1
                print("BETTER", m.describe(), better, [(p.field) for p in objp], flush=True)
            if changed and not named:
                seen["unnamed"] += 1
                print(
                    "UNNAMED",
                    m.describe(),
                    [(p.field, p.reason[:80]) for p in objp],
                    diffs[:4],
                    flush=True,
                )
            elif objp and not named:
                seen["elsewhere"] += 1
                print("ELSEWHERE", m.describe(), [p.field for p in objp], flush=True)
            if i % 50 == 0:
                print("progress", i, dict(seen), round(time.time() - t0), flush=True)
    print("TOTAL", dict(seen), flush=True)


def main() -> None:
    """Parse ``[--only REGEX] SEED COUNT EXPORT...`` and run."""
    a = sys.argv[1:]
    only = None
    if a[0] == "--only":
        only = a[1]
        a = a[2:]
    run(int(a[0]), int(a[1]), a[2:], only)


if __name__ == "__main__":
    main()

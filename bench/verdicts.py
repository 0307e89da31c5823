"""Readiness per VM of every corpus export, to compare two versions of the auditor.

``python -m bench.verdicts OUT.json [CORPUS]`` audits ``cluster-export``, each
``bugcases/*/export``, each ``fuzzcases/*/export``, ``public`` and
``examples/small-cluster`` at the corpus audit time and writes
``{export: {namespace/vm: readiness}}``. Run it once with the old code on
``PYTHONPATH`` and once with the new, then ``python -m bench.verdicts --diff A B``
prints every VM whose readiness changed (none means identical verdicts).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

AT = "2026-11-30T06:00:00Z"


def verdicts(corpus: Path, repo: Path) -> dict[str, dict[str, str]]:
    """Audit every export under ``corpus`` (and the repo's example); readiness per VM."""
    from auditor.config import AuditSettings
    from auditor.envelope import report_document
    from auditor.kubevalues import parse_time
    from auditor.pipeline import audit_data
    from auditor.sources.directory import DirectorySource

    at = parse_time(AT)
    assert at is not None
    roots = [corpus / "cluster-export", corpus / "public", repo / "examples" / "small-cluster"]
    roots += sorted(corpus.glob("bugcases/*/export")) + sorted(corpus.glob("fuzzcases/*/export"))
    out: dict[str, dict[str, str]] = {}
    for root in roots:
        if not root.is_dir():
            continue
        report = report_document(
            audit_data(DirectorySource(root).collect(), AuditSettings(), at=at)
        )
        key = str(root.relative_to(corpus)) if root.is_relative_to(corpus) else root.name
        out[key] = {f"{vm['namespace']}/{vm['name']}": vm["readiness"] for vm in report["vms"]}
    return out


def main(argv: list[str]) -> int:
    if argv[:1] == ["--diff"]:
        a, b = (json.loads(Path(p).read_text()) for p in argv[1:3])
        changed = [
            f"{export} {vm}: {a[export].get(vm)} -> {b.get(export, {}).get(vm)}"
            for export in sorted(set(a) | set(b))
            for vm in sorted(set(a.get(export, {})) | set(b.get(export, {})))
            if a.get(export, {}).get(vm) != b.get(export, {}).get(vm)
        ]
        print("\n".join(changed) or "identical verdicts")
        print(f"{sum(len(v) for v in a.values())} VMs in {len(a)} exports compared")
        return 1 if changed else 0
    repo = Path(__file__).resolve().parents[1]
    corpus = Path(argv[1]) if len(argv) > 1 else repo.parent / "shared" / "corpus"
    Path(argv[0]).write_text(json.dumps(verdicts(corpus, repo), indent=1, sort_keys=True))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

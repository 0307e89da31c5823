"""The process exit codes of every ``auditor`` command, in one table.

======  =====================================================================
code    meaning
======  =====================================================================
0       done: the audit (or publish, verify) completed and nothing below applies
1       ``run --fail-on``: a VM is at or below the gate's readiness (UNKNOWN
        always counts); ``verify``: an object is missing, extra or changed,
        or the signature or retention is wrong; ``preflight``: a permission is denied
2       could not start: bad option or config file, missing input path, unwritable
        ``--out``, cluster credentials unusable or the API server unreachable;
        ``verify``: the run or manifest could not be read; ``fleet``: the archive
        cannot be read or holds no cluster folder; ``history``: the archive cannot be
        read or holds no run of the cluster (the clusters it holds are named)
3       the report was written but not published (the run waits in the spool)
4       nothing trustworthy was audited: no VirtualMachine objects found (empty
        folder, a file, junk), the VirtualMachine list unreadable or incomplete,
        or the API server lost during the run; ``fleet``: written, but no cluster
        had a readable run
======  =====================================================================

Each non-zero exit prints a one-line reason on stderr. 4 is never the ``--fail-on``
gate's code, so a pipeline can tell "VMs are not ready" from "nothing was audited".
"""

from __future__ import annotations

__all__ = [
    "EXIT_OK",
    "EXIT_GATE",
    "EXIT_USAGE",
    "EXIT_NOT_PUBLISHED",
    "EXIT_NOTHING_AUDITED",
    "EXIT_MISMATCH",
    "EXIT_UNREADABLE",
]

EXIT_OK = 0
EXIT_GATE = 1
EXIT_USAGE = 2
EXIT_NOT_PUBLISHED = 3
EXIT_NOTHING_AUDITED = 4
#: ``verify``: something differs from the manifest (same code as the gate: "a check failed")
EXIT_MISMATCH = 1
#: ``verify``: the run or its manifest could not be read
EXIT_UNREADABLE = 2

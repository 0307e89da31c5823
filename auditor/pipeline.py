"""The one orchestration path: source data -> inventory -> checks -> report envelope.

The CLI's ``run``, the scheduler's jobs and the tests all call :func:`run_audit`
and :func:`write_artifacts`; nothing else wires the layers together.
"""

from __future__ import annotations

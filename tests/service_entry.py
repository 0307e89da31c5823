"""Run ``auditor serve`` in a subprocess with a slowed-down runner (tests only).

Usage: ``python tests/service_entry.py CONFIG DELAY_SECONDS``. The runner is the
production pipeline runner followed by a sleep, injected through
``serve(runner=...)``, so a test can kill or stop the process during a run.
"""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from auditor.cli.service import load_checked_settings
from auditor.config import AuditSettings
from auditor.service import serve
from auditor.service.jobs import pipeline_runner


def main() -> int:
    config, delay = Path(sys.argv[1]), float(sys.argv[2])

    def slow_runner(
        settings: AuditSettings, *, at: datetime, out_dir: Path, formats: Sequence[str]
    ) -> dict[str, Any]:
        report = pipeline_runner(settings, at=at, out_dir=out_dir, formats=formats)
        time.sleep(delay)
        return report

    logging.basicConfig(
        level=logging.INFO,
        stream=sys.stderr,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    return serve(load_checked_settings(config), runner=slow_runner)


if __name__ == "__main__":
    sys.exit(main())

"""The fleet roll-up: every cluster's latest (or one month's) report under an archive prefix.

Each cluster runs its own auditor and publishes to ``PREFIX/<cluster>/`` of a shared
bucket (``docs/fleet.md``). :func:`read_fleet` reads the run standing for each cluster
through the publish store and verifies it (:mod:`auditor.fleet.collect`),
:func:`build_fleet` rolls them up into the typed :class:`FleetReport`
(:mod:`auditor.fleet.compute`), :func:`write_fleet` writes fleet.json, CSV, HTML and PDF
(:mod:`auditor.fleet.render`).
"""

from __future__ import annotations

from auditor.fleet.collect import ClusterRun, FleetInput, read_fleet
from auditor.fleet.compute import build_fleet
from auditor.fleet.model import FleetReport, fleet_schema
from auditor.fleet.render import FORMATS, dump_fleet_json, dump_fleet_schema, write_fleet

__all__ = [
    "ClusterRun",
    "FleetInput",
    "FleetReport",
    "FORMATS",
    "read_fleet",
    "build_fleet",
    "write_fleet",
    "dump_fleet_json",
    "dump_fleet_schema",
    "fleet_schema",
]

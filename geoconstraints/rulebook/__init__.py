"""The rulebook: rules as data (YAML), the check registry, findings and their rendering.

Thresholds, citations and message templates live only in the YAML rulebooks beside this
file (``vestal.yaml``, ``lockport.yaml``); checks read them from the :class:`Rule` given.
"""

from __future__ import annotations

from geoconstraints.rulebook.findings import FINDING_COLUMNS, STATUSES, worst_status, worst_status_by
from geoconstraints.rulebook.loader import available_rulebooks, load_rulebook
from geoconstraints.rulebook.model import Rule, Rulebook
from geoconstraints.rulebook.registry import CHECKS, check, run_group

__all__ = ["CHECKS", "FINDING_COLUMNS", "STATUSES", "Rule", "Rulebook", "available_rulebooks",
           "check", "load_rulebook", "run_group", "worst_status", "worst_status_by"]

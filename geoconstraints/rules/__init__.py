"""The checks: one ``@check("ID")`` function per rule id, grouped by chapter of the law.

Importing this package registers every check (:data:`geoconstraints.rulebook.CHECKS`).
"""

from __future__ import annotations

from geoconstraints.rules import flood, harvest, seqr, stormwater

__all__ = ["flood", "harvest", "seqr", "stormwater"]

"""The HTML compliance report (Jinja2, autoescaped): summary, findings by rule, provenance."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import jinja2

from .findings import FINDING_COLUMNS

if TYPE_CHECKING:
    from .result import Result


def _env() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.PackageLoader("geoconstraints", "templates"),
        autoescape=jinja2.select_autoescape(["html", "j2"], default=True),
        undefined=jinja2.StrictUndefined,
    )


def render_report(result: Result, *, parcel: str | None = None) -> str:
    """Render ``report.html`` for ``result``; all attribute text is HTML-escaped."""
    findings = result.findings
    if parcel is not None:
        findings = findings[(findings["subject_id"] == str(parcel)) | (findings["subject_id"] == "")]
    rows: list[dict[str, Any]] = findings[FINDING_COLUMNS].to_dict("records")
    for r in rows:
        for k in ("measured", "threshold"):
            v = r[k]
            r[k] = "" if v is None or v != v else f"{v:,.2f}"
    return _env().get_template("report.html.j2").render(
        prov=result.provenance(), counts=result.counts(), findings=rows, parcel=parcel,
    )

"""The interactive web map (folium): inputs, derived layers and findings as toggled layers."""

from __future__ import annotations

import html
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .result import Result

STATUS_COLORS = {"violation": "#d7191c", "review": "#fdae61", "not_evaluated": "#7f7f7f",
                 "info": "#2c7bb6", "pass": "#1a9641"}


def _require_folium() -> Any:
    try:
        import folium
    except ImportError:  # pragma: no cover - folium is a dependency
        raise ImportError("the web map needs folium: pip install folium") from None
    return folium


def build_map(result: Result, **kwargs: Any) -> Any:
    """A folium Map of ``result`` with no base tiles (works offline)."""
    folium = _require_folium()
    m = folium.Map(tiles=None, control_scale=True, **kwargs)
    f = result.findings
    geo = f[f.geometry.notna() & ~f.geometry.is_empty] if len(f) else f
    if len(geo):
        g = geo.to_crs(4326)
        for status, color in STATUS_COLORS.items():
            sub = g[g["status"] == status]
            if not len(sub):
                continue
            sub = sub.copy()
            for c in sub.columns:
                if c != "geometry" and sub[c].dtype == object:
                    sub[c] = sub[c].map(lambda v: html.escape(str(v)) if v is not None else "")
            folium.GeoJson(
                sub[["rule_id", "status", "subject_id", "citation", "message", "geometry"]].to_json(),
                name=f"findings: {status}",
                style_function=lambda _f, c=color: {"color": c, "fillColor": c, "weight": 3, "fillOpacity": 0.4},
                marker=folium.CircleMarker(radius=6, fill=True, color=color),
                popup=folium.GeoJsonPopup(["rule_id", "status", "subject_id", "citation", "message"]),
            ).add_to(m)
        b = g.total_bounds
        m.fit_bounds([[b[1], b[0]], [b[3], b[2]]])
    folium.LayerControl().add_to(m)
    return m


def write_map(result: Result, target: Path, *, offline: bool = True) -> Path:
    """Write ``map.html`` atomically."""
    from .writers import write_text

    m = build_map(result)
    return write_text(target, m.get_root().render())

"""The input roles (what a layer *is* to the law) and where each role's layer comes from.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from geoconstraints.text import redact

log = logging.getLogger(__name__)

NFHL_SENTINEL = -9999.0


@dataclass(frozen=True)
class RoleSpec:
    """What a role expects: geometry kinds, id field candidates, required and optional fields."""

    geometry: tuple[str, ...]
    id_fields: tuple[str, ...] = ("id",)
    required: tuple[str, ...] = ()
    optional: tuple[str, ...] = ()
    description: str = ""
    sentinel_fields: tuple[str, ...] = ()


_NFHL_FLD = ("FLD_ZONE",)
_NFHL_OPT = ("ZONE_SUBTY", "SFHA_TF", "STATIC_BFE", "DEPTH", "V_DATUM", "DFIRM_ID", "EFF_DATE",
             "LEN_UNIT", "FLD_AR_ID", "VELOCITY", "BFE_REVERT", "DEP_REVERT", "STUDY_TYP")
_NFHL_SENT = ("STATIC_BFE", "DEPTH", "VELOCITY", "BFE_REVERT", "DEP_REVERT")

ROLES: dict[str, RoleSpec] = {
    "parcels": RoleSpec(("polygon",), ("parcel_id", "SWIS_SBL_ID", "SBL", "PRINTKEY"), (),
                        ("zoning", "land_use", "owner"), "tax parcels"),  # NYS RPS ids after parcel_id
    "flood_zones": RoleSpec(("polygon",), ("FLD_AR_ID", "id"), _NFHL_FLD, _NFHL_OPT,
                            "FEMA NFHL S_FLD_HAZ_AR flood zones", _NFHL_SENT),
    "flood_zones_preliminary": RoleSpec(("polygon",), ("FLD_AR_ID", "id"), _NFHL_FLD, _NFHL_OPT,
                                        "preliminary FIRM flood zones for comparison", _NFHL_SENT),
    "bfe_lines": RoleSpec(("line",), ("BFE_LN_ID", "id"), ("ELEV",),
                          ("V_DATUM", "LEN_UNIT", "DFIRM_ID"), "FEMA NFHL S_BFE lines", ("ELEV",)),
    "streams": RoleSpec(("line", "polygon"), ("id",), (), ("kind", "FCODE", "name"),
                        "streams (perennial / intermittent)"),
    "stream_corridor": RoleSpec(("polygon",), ("id",), (), (), "adopted stream corridor map"),
    "critical_slopes": RoleSpec(("polygon",), ("id",), (), (), "adopted critical slopes"),
    "zoning": RoleSpec(("polygon",), ("id",), ("district",), (), "zoning districts"),
    "roads": RoleSpec(("line",), ("id",), (), ("row_width_ft", "name"), "public road centre lines"),
    "row": RoleSpec(("polygon",), ("id",), (), (), "public rights-of-way"),
    "dwellings": RoleSpec(("point", "polygon"), ("id",), (), ("use",), "residential dwellings"),
    "harvest_area": RoleSpec(("polygon",), ("id",), (),
                             ("cords", "cubic_feet", "board_feet", "parcel_id", "owner"),
                             "timber harvest areas"),
    "landings": RoleSpec(("point", "polygon"), ("id",), (), (), "log landings"),
    "haul_roads": RoleSpec(("line",), ("id",), (), (), "log haul roads"),
    "skid_trails": RoleSpec(("line",), ("id",), (), ("constructed",), "skid trails"),
    "disturbance": RoleSpec(("polygon",), ("id",), (), ("phase", "start", "stabilized", "use"),
                            "areas of soil disturbance / phasing plan"),
    "impaired_waters": RoleSpec(("line", "polygon"), ("id",), (), ("name",),
                                "303(d) impaired waters / TMDL"),
    "footprints": RoleSpec(("polygon",), ("id",), (), ("use",), "proposed structure footprints"),
    "wetlands": RoleSpec(("polygon",), ("id",), (), ("name",), "wetlands and swamps (site plan element h)"),
    "ponds": RoleSpec(("polygon",), ("id",), (), ("name",), "ponds (site plan element h)"),
    "easements": RoleSpec(("polygon", "line"), ("id",), (), ("name", "utility"),
                          "utility easements and rights-of-way: pipelines, water, sewer, electric, "
                          "communication lines (site plan element f)"),
}

PLAN_ROLES: tuple[str, ...] = ("harvest_area", "landings", "haul_roads", "skid_trails")
"""The roles of a timber-harvest plan (the harvest command's subject)."""

SITE_ROLES: tuple[str, ...] = ("disturbance", "footprints")
"""The roles of a site plan: soil disturbance (stormwater, SEQR) and proposed footprints (flood-site)."""

def role_option(role: str) -> str:
    """The CLI option of a role (``haul_roads`` -> ``--haul-roads``)."""
    return "--" + role.replace("_", "-")


@dataclass
class LayerSource:
    """Where a role's layer comes from and how its fields map to canonical names."""

    role: str
    path: Path
    layer: str | None = None
    fields: dict[str, str] = field(default_factory=dict)  # canonical -> source field name
    id_field: str | None = None
    db: Any = None
    """The PostGIS table when the layer comes from a database (``path`` is then unused)."""
    uri: str | None = None
    """A GDAL virtual path or URL (``/vsizip/...``, ``/vsicurl/https://...``) given to GDAL as it is
    (``path`` is then only its text, for messages)."""
    frame: Any = None
    """A GeoDataFrame given in Python (``load_layers(parcels=gdf)``): read from memory, never modified."""

    @property
    def label(self) -> str:
        """``file.gpkg:layer`` (or ``HOST:PORT/DB table SCHEMA.TABLE``, no password) for messages."""
        if self.db is not None:
            return self.db.label
        if self.frame is not None:
            return "GeoDataFrame"
        name = redact(self.uri) if self.uri is not None else self.path.name
        return f"{name}:{self.layer}" if self.layer else name

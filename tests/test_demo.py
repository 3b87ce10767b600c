"""`geoconstraints demo` (the README's first command) runs every capability on the sample town."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from click.testing import CliRunner

from geoconstraints.cli import main


def test_demo_runs_every_capability(tmp_path) -> None:
    out = tmp_path / "demo"
    r = CliRunner().invoke(main, ["demo", "--out", str(out)])
    assert r.exit_code == 0, r.output
    for name in ("harvest", "screen", "flood-site", "stormwater", "seqr"):
        folder = out / name
        assert (folder / "findings.geojson").is_file(), name
        assert (folder / "report.html").is_file(), name
        assert f"{name} " in r.output or f"{name}\t" in r.output or name in r.output
    assert (out / "harvest" / "siteplan.pdf").read_bytes()[:5] == b"%PDF-"
    provenance = json.loads((out / "harvest" / "provenance.json").read_text())
    assert "siteplan.pdf" in {o["path"] for o in provenance["outputs"]}
    # the deliberate harvest violations of data/sample/README.md are found
    feats = json.loads((out / "harvest" / "findings.geojson").read_text())["features"]
    violations = {(f["properties"]["rule_id"], f["properties"]["subject_id"]) for f in feats
                  if f["properties"]["status"] == "violation"}
    assert {("HRV-010", "H-1"), ("HRV-024", "L-2"), ("HRV-025", "L-3"), ("HRV-012", "S-1")} <= violations
    # one row per sample parcel; the missed inspections and the disturbance peak of data/sample/README.md
    parcels = pd.read_csv(out / "screen" / "parcels.csv")
    assert len(parcels) == 2819 and parcels["parcel_id"].is_unique
    insp = pd.read_csv(out / "stormwater" / "inspections.csv")
    missed = insp[insp["status"] == "missed"]
    assert list(zip(missed["due"], missed["reason"])) == [("2025-06-23", "weekly"), ("2025-08-13", "storm"),
                                                          ("2025-09-08", "weekly")]
    timeline = pd.read_csv(out / "stormwater" / "disturbance_timeline.csv")
    assert timeline.loc[timeline["peak"], "disturbed_acres"].tolist() == pytest.approx([6.189], abs=5e-4)

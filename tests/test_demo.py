"""`geoconstraints demo` (the README's first command) runs every capability on the sample town."""

from __future__ import annotations

import json

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
    # the deliberate harvest violations of data/sample/README.md are found
    feats = json.loads((out / "harvest" / "findings.geojson").read_text())["features"]
    violations = {(f["properties"]["rule_id"], f["properties"]["subject_id"]) for f in feats
                  if f["properties"]["status"] == "violation"}
    assert {("HRV-010", "H-1"), ("HRV-024", "L-2"), ("HRV-025", "L-3"), ("HRV-012", "S-1")} <= violations
    assert (out / "screen" / "parcels.csv").is_file()
    assert (out / "stormwater" / "inspections.csv").is_file()
    assert (out / "stormwater" / "disturbance_timeline.csv").is_file()

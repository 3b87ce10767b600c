"""What a finding about a repaired geometry says (geoconstraints.rulebook.repairs).

A pass about a feature whose repair (make_valid) left out part of its drawing is not_evaluated: its
message is that reason and the fix, never the rule's own not-evaluated words ("floodway not
determined" said what had not happened). The repair's sentence of any other finding sits before a
waiver's ``[waived: ...]`` note, the last words of a waived rule's messages.
"""

from __future__ import annotations

import numpy as np
import pytest

from geoconstraints.errors import RulebookError
from geoconstraints.rulebook.loader import load_rulebook, run_messages
from geoconstraints.rulebook.repairs import RUN_MESSAGES, Marks, mark_repaired, repaired_subjects, with_marks

REASON = ("parcels P8: not evaluated: its geometry was invalid, and its repair (make_valid) left out land or lines "
          "the drawing covers (land the outline winds around twice, or a spike). The repaired shape passes, but the "
          "outcome could turn on the part left out, so a pass is not evaluated: fix the geometry in a GIS and run "
          "again.")
"""The vestal rulebook's ``messages.geometry_repair_not_evaluated`` about parcel P8."""

LOST = ("P8's geometry was invalid, and its repair (make_valid) left out land or lines the drawing covers (land the "
        "outline winds around twice, or a spike): the outcome rests on the repaired shape, so a pass is not "
        "evaluated; fix the geometry in a GIS and run again.")
REPAIRED = ("P7's geometry was invalid and was repaired (make_valid) before the check, keeping the area its outline "
            "encloses: the outcome rests on the repaired shape; check it in a GIS.")


def test_mark_repaired_gives_a_pass_made_not_evaluated_its_reason_as_its_message() -> None:
    rb = load_rulebook("vestal")
    ids = np.array(["P8", "P8", "P7", "P7", "P1"], dtype=object)
    given = np.array(["pass", "review", "pass", "violation", "pass"])
    with repaired_subjects({"parcels": {"P8": True, "P7": False}}, run_messages(rb)):
        status, marks = mark_repaired(given, "parcels", ids)
    assert list(status) == ["not_evaluated", "review", "pass", "violation", "pass"]  # the caller's array unchanged
    assert list(given) == ["pass", "review", "pass", "violation", "pass"]
    assert isinstance(marks, Marks)
    assert marks.whole.tolist() == [REASON, None, None, None, None]  # only the pass made not_evaluated
    assert marks.note.tolist() == [LOST, LOST, REPAIRED, REPAIRED, None]
    # nothing repaired, or outside the block: nothing said
    assert mark_repaired(given, "parcels", ids) == (given, None)


def test_with_marks_puts_the_sentence_before_the_waiver_and_the_reason_in_place_of_the_message() -> None:
    waived = " [waived: decided by the town board]"
    marks = Marks(np.array([LOST, REPAIRED, None, LOST, LOST], dtype=object),
                  np.array([REASON, None, None, None, REASON], dtype=object))
    msgs = np.array(["parcels P8: floodway not determined, not evaluated (no floodway mapped on it)." + waived,
                     "parcels P7: 0.23 acres in the SFHA (zones AE)." + waived,
                     "parcels P1: outside the SFHA." + waived,
                     "parcels P8: in the floodway (zones AE)." + waived,
                     ""], dtype=object)  # a message not composed (a status left out of the findings kept)
    out = with_marks(msgs, marks, waived)
    assert out.tolist() == [REASON + waived,
                            f"parcels P7: 0.23 acres in the SFHA (zones AE). {REPAIRED}{waived}",
                            "parcels P1: outside the SFHA." + waived,
                            f"parcels P8: in the floodway (zones AE). {LOST}{waived}",
                            ""]
    assert msgs[0].startswith("parcels P8: floodway")  # the caller's messages unchanged
    # a rule not waived ("" suffix): the same without the note
    plain = np.array([m.removesuffix(waived) for m in msgs], dtype=object)
    assert with_marks(plain, marks, "").tolist() == [m.removesuffix(waived) for m in out]
    # suffix not said: appended after the whole message, none replaced (the waiver would go with it)
    assert with_marks(msgs, marks).tolist()[:2] == [f"{msgs[0]} {LOST}", f"{msgs[1]} {REPAIRED}"]
    assert with_marks(msgs, None, waived) is msgs


def test_every_shipped_rulebook_gives_the_reason_and_a_file_may_change_it(tmp_path) -> None:
    assert RUN_MESSAGES == ("geometry_repaired", "geometry_repair_lost", "geometry_repair_not_evaluated")
    for name in ("vestal", "lockport"):
        said = run_messages(load_rulebook(name))["geometry_repair_not_evaluated"]
        assert said.startswith("{subject_layer} {subject_id}: not evaluated: its geometry was invalid, and its repair")
        assert said.endswith("fix the geometry in a GIS and run again.")
    own = tmp_path / "own.yaml"
    own.write_text('extends: vestal\nmessages:\n  geometry_repair_not_evaluated: "{subject_id}: not evaluated, '
                   'the repair lost part of it."\n')
    assert run_messages(load_rulebook(own))["geometry_repair_not_evaluated"] == ("{subject_id}: not evaluated, the "
                                                                                  "repair lost part of it.")
    bad = tmp_path / "bad.yaml"
    bad.write_text('extends: vestal\nmessages:\n  geometry_repair_not_evaluated: "{subject_id} {detail}"\n')
    with pytest.raises(RulebookError, match="detail"):  # the fields of a run-wide message: subject_layer, subject_id
        load_rulebook(bad)


# ------------------------------------------------------------------------------------------
# Through a screening (Rule.findings): every findings scope says the same

def _screened(tmp_path, rulebook, findings):
    import geopandas as gpd
    from common import NY_FT, X0, Y0
    from shapely.geometry import Polygon, box

    from geoconstraints import load_layers
    from geoconstraints.commands import screen_parcels

    def sq(u0, v0, u1, v1):
        return box(X0 + u0, Y0 + v0, X0 + u1, Y0 + v1)

    # P8's ring winds twice around its middle square [100,200]^2: make_valid makes it a hole, and the AE in
    # it ([120,180]^2) falls out: every pass about P8 is not evaluated. P7 (a bow-tie, two triangles) is in
    # the AE: its review stays, saying it was repaired. P1, valid, passes.
    pts = [(0, 0), (300, 0), (300, 300), (0, 300), (0, 0), (100, 100), (200, 100), (200, 200), (100, 200), (100, 100)]
    twice = Polygon([(X0 + 500 + u, Y0 + v) for u, v in pts])
    bow = Polygon([(X0 + 1000, Y0), (X0 + 1200, Y0 + 200), (X0 + 1200, Y0), (X0 + 1000, Y0 + 200)])
    ae = [sq(620, 120, 680, 180), sq(950, -50, 1250, 100)]
    path = tmp_path / "in.gpkg"
    gpd.GeoDataFrame({"parcel_id": ["P1", "P8", "P7"]}, geometry=[sq(0, 0, 200, 200), twice, bow], crs=NY_FT).to_file(
        path, layer="parcels", driver="GPKG")
    rest = sq(-100, -100, 1400, 400).difference(ae[0]).difference(ae[1])
    gpd.GeoDataFrame({"FLD_ZONE": ["AE", "AE", "X"], "ZONE_SUBTY": [None, None, None], "STATIC_BFE": -9999.0,
                      "V_DATUM": "NAVD88"}, geometry=[*ae, rest], crs=NY_FT).to_file(path, layer="flood_zones",
                                                                                      driver="GPKG")
    return screen_parcels(load_layers(path), rulebook, findings=findings)


def _message(res, rule_id, subject_id):
    f = res.findings
    hit = f[(f["rule_id"] == rule_id) & (f["subject_id"] == subject_id)]
    assert len(hit) == 1, (rule_id, subject_id, len(hit))
    return hit.iloc[0]["status"], hit.iloc[0]["message"]


@pytest.mark.parametrize("findings", ["person", "all"])
def test_a_pass_the_repair_made_not_evaluated_says_why_first(tmp_path, findings) -> None:
    res = _screened(tmp_path, load_rulebook("vestal"), findings)
    for rule in ("FLD-001", "FLD-002", "FLD-005"):  # each a pass on the repaired shape
        assert _message(res, rule, "P8") == ("not_evaluated", REASON), rule  # not "floodway not determined"
    status, said = _message(res, "FLD-001", "P7")
    assert status == "review" and said.endswith(f" {REPAIRED}")
    assert not res.findings.loc[res.findings["subject_id"] == "P1", "message"].str.contains("make_valid").any()
    row = res.tables["parcels"].set_index("parcel_id").loc["P8"]
    assert row["status_FLD_002"] == "not_evaluated" and row["geometry_repaired"]


@pytest.mark.parametrize("findings", ["person", "all"])
def test_the_repair_sentence_comes_before_the_waiver(tmp_path, findings) -> None:
    book = tmp_path / "waived.yaml"
    book.write_text("extends: vestal\nwaive:\n  FLD-001: decided by the town board\n  FLD-002: decided by the town "
                    "board\n")
    res = _screened(tmp_path, load_rulebook(book), findings)
    waived = " [waived: decided by the town board]"
    assert _message(res, "FLD-002", "P8") == ("not_evaluated", REASON + waived)
    status, said = _message(res, "FLD-001", "P7")
    assert status == "review" and said.endswith(f"). {REPAIRED}{waived}"), said
    assert said.count("[waived:") == 1

"""Tests for geoconstraints.rulebook.schema (pydantic v2) and its use by the loader: every shipped
rulebook passes, the rule-level ``inputs`` key and new thresholds/params/switches/tables are
accepted generically, and every kind of bad value or key is refused with one line naming the
file, the rule and the key; the YAML itself is bounded (aliases, size, depth)."""

from __future__ import annotations

import copy
import dataclasses
import time
from pathlib import Path

import jsonschema
import pytest
import yaml

from geoconstraints.errors import RulebookError
from geoconstraints.rulebook import loader, schema
from geoconstraints.rulebook.loader import available_rulebooks, load_rulebook
from geoconstraints.rulebook.model import UNIT_SUFFIXES

SHIPPED = Path(loader.__file__).parent


def shipped(name: str) -> dict:
    return yaml.safe_load((SHIPPED / f"{name}.yaml").read_text("utf-8"))


@pytest.mark.parametrize("name", available_rulebooks())
def test_shipped_rulebooks_pass_the_schema(name):
    data = shipped(name)
    schema.check_file(data, name)
    for rule in data["rules"]:
        schema.check_rule(rule, name)
    # and the exported JSON Schema (for editors) agrees with the shipped file
    jsonschema.validate(data, schema.json_schema())


def test_inputs_key_and_new_names_are_accepted(tmp_path):
    # what the other helpers are adding: a rule-level inputs key on every rule, new params,
    # switches, tables and thresholds with any name (thresholds need a unit suffix)
    data = shipped("vestal")
    for rule in data["rules"]:
        rule["inputs"] = {"roles": ["parcels", "flood_zones"], "fields": {"flood_zones": ["FLD_ZONE"]},
                          "dem": False, "options": ["lowest_floor_ft"]}
    rule = data["rules"][0]
    rule["thresholds"]["brand_new_limit_sqft"] = 0
    rule["params"]["anything"] = {"nested": [1, "two", {"three_ft": 3.5}], "none": None}
    rule["switches"] = {"new_reading": {"value": "a", "choices": ["a", "b"], "doc": "why"}}
    rule["tables"] = {"bands": [{"min_grade_pct": 0, "max_grade_pct": None, "spacing_ft": 250}]}
    path = tmp_path / "full.yaml"
    path.write_text(yaml.safe_dump(data, allow_unicode=True), "utf-8")
    rb = load_rulebook(path)
    assert rb[rule["id"]].t("brand_new_limit_sqft") == 0.0 and rb[rule["id"]].s("new_reading") == "a"
    # inputs only: the role list may be just roles
    (tmp_path / "u.yaml").write_text("extends: vestal\nrules:\n  - id: HRV-010\n    inputs: {roles: [haul_roads], "
                                     "dem: true}\n")
    assert "HRV-010" in load_rulebook(tmp_path / "u.yaml")


@pytest.mark.parametrize("suffix", UNIT_SUFFIXES)
def test_every_unit_suffix_refuses_negative_nan_and_inf(suffix, tmp_path):
    name = f"limit{suffix}"
    for value, words in (("-1", "is negative"), (".nan", "is not a finite number"), ("-.inf", "is not a finite number")):
        p = tmp_path / "r.yaml"
        p.write_text(f"extends: vestal\nrules:\n  - id: HRV-010\n    thresholds:\n      {name}: {value}\n")
        with pytest.raises(RulebookError, match=f"rule HRV-010 threshold {name} = .* {words}"):
            load_rulebook(p)
    p.write_text(f"extends: vestal\nrules:\n  - id: HRV-010\n    thresholds:\n      {name}: 0\n")
    assert load_rulebook(p)["HRV-010"].t(name) == 0.0  # zero is a value (FLD-003 min_freeboard_ft: 0)


@pytest.mark.parametrize(("rule", "name"), [
    ("HRV-002", "contour_interval_ft"), ("HRV-001", "standard_cord_cuft"), ("HRV-002", "min_scale_ft_per_in"),
    ("FLD-003", "elevation_precision_ft"), ("SWP-006", "haul_road_width_ft"), ("SWP-006", "default_landing_area_sqft"),
    ("HRV-001", "period_months"),
])
def test_steps_divisors_and_sizes_are_more_than_zero(rule, name, tmp_path):
    # 0 divided by zero (stormwater), said "57 cords = 0 cu ft" (cords) or was refused late, unnamed
    p = tmp_path / "mine.yaml"
    for value in ("0", "0.0", "-0.0"):
        p.write_text(f"extends: vestal\nrules:\n  - id: {rule}\n    thresholds: {{{name}: {value}}}\n")
        with pytest.raises(RulebookError, match=f"^rulebook {p}: rule {rule} threshold {name} = -?0 is not more "
                                                f"than 0: .* must be more than 0 .*Fix the rulebook$"):
            load_rulebook(p)
    p.write_text(f"extends: vestal\nrules:\n  - id: {rule}\n    thresholds: {{{name}: 0.001}}\n")
    assert load_rulebook(p)[rule].t(name) == 0.001  # just over 0


@pytest.mark.parametrize(("value", "ok"), [("0", False), ("0.99999", False), ("1", True), ("1.00001", False),
                                           ("7", True), ("7.5", False), ("0.00001", False)])
def test_an_interval_in_days_is_whole_days_from_1(value, ok, tmp_path):
    p = tmp_path / "insp.yaml"
    p.write_text(f"extends: vestal\nrules:\n  - id: SWP-007\n    thresholds: {{inspection_interval_days: {value}}}\n")
    if ok:
        assert load_rulebook(p)["SWP-007"].t("inspection_interval_days") == float(value)
    else:
        with pytest.raises(RulebookError, match=f"^rulebook {p}: rule SWP-007 threshold inspection_interval_days = "
                                                r".* is not a whole number of days \(1 or more\)"):
            load_rulebook(p)


@pytest.mark.parametrize(("text", "match"), [
    ("extends: vestal\nrules:\n  - id: HRV-010\n    threshold: {max_grade_pct: 30}\n",
     r"rule HRV-010: unknown key 'threshold' \(did you mean 'thresholds'\?\)"),
    ("extends: vestal\nrulse: []\n", r"unknown key 'rulse' \(did you mean 'rules'\?\)"),
    ("extends: vestal\nrules:\n  - id: HRV-010\n    thresholds: 5\n", "rule HRV-010 thresholds = 5 is not a mapping"),
    ("extends: vestal\nrules: 5\n", "rules = 5 is not a list"),
    ("extends: 5\n", "extends = 5 is not text"),
    ("extends: vestal\nrules:\n  - id: HRV-010\n    title: [a, b]\n", r"rule HRV-010 title = \['a', 'b'\] is not text"),
    ("extends: vestal\nrules:\n  - id: HRV-010\n    switches:\n      run_length: [slope]\n",
     r"switches.run_length = \['slope'\] is not a switch"),
    ("extends: vestal\nrules:\n  - id: HRV-010\n    switches:\n      run_length: {value: slope, choise: [a]}\n",
     r"unknown key 'choise' \(did you mean 'choices'\?\)"),
    ("extends: vestal\nrules:\n  - id: HRV-010\n    inputs: {roles: [haul_roads], dem: maybe}\n",
     "inputs.dem = 'maybe' is not true or false"),
    ("extends: vestal\nrules:\n  - id: HRV-010\n    inputs: {roles: [haul_roads], fields: {stream: [kind]}}\n",
     r"inputs.fields: 'stream' is not an input role \(did you mean 'streams'\?\)"),
    ("extends: vestal\nrules:\n  - id: HRV-010\n    inputs: {role: [haul_roads]}\n",
     r"unknown key 'role' \(did you mean 'roles'\?\)"),
    ("extends: vestal\nrules:\n  - id: HRV-010\n    inputs: {roles: [haul_roads], options: [lowest floor]}\n",
     "is not a plain name"),
    ("extends: vestal\nrules:\n  - id: HRV-030\n    tables:\n      water_bar_spacing: [{min_grade_pct: -2}]\n",
     r"tables.water_bar_spacing\[0\].min_grade_pct = -2 is negative"),
    ("extends: vestal\nrules:\n  - id: HRV-010\n    messages: {passed: x}\n", "messages.passed: not a status"),
    ("extends: vestal\nversion: .nan\n", "is not a version"),
    # YAML's true under a unit key had been read as 1 (a 1-ft length, a 1-row spacing table's 1 %)
    ("extends: vestal\nrules:\n  - id: HRV-030\n    tables:\n      water_bar_spacing: [{min_grade_pct: true}]\n",
     r"tables.water_bar_spacing\[0\].min_grade_pct = True is a yes/no value, not a percentage"),
    ("extends: vestal\nrules:\n  - id: FLD-002\n    params: {search_ft: false}\n",
     r"params.search_ft = False is a yes/no value, not a length in feet"),
    ("extends: vestal\nrules:\n  HRV-010: 5\n", "rule HRV-010 must be a mapping"),
])
def test_bad_values_and_keys_are_named(tmp_path, text, match):
    p = tmp_path / "mine.yaml"
    p.write_text(text)
    with pytest.raises(RulebookError, match=match) as info:
        load_rulebook(p)
    msg = str(info.value)
    assert msg.startswith(f"rulebook {p}: ") and "\n" not in msg and msg.endswith("Fix the rulebook")


def test_checked_before_and_after_extends(tmp_path):
    # before merging: a user file's own values (here a NaN) are refused even for a rule it only changes
    (tmp_path / "a.yaml").write_text("extends: vestal\nrules:\n  - id: HRV-025\n    thresholds: {min_distance_ft: .nan}\n")
    with pytest.raises(RulebookError, match="a.yaml: rule HRV-025 threshold min_distance_ft = nan"):
        load_rulebook(tmp_path / "a.yaml")
    # after merging: a switch value is checked against the choices the base rulebook gives
    (tmp_path / "b.yaml").write_text("extends: vestal\nrules:\n  - id: HRV-010\n    switches: {run_length: diagonal}\n")
    with pytest.raises(RulebookError, match="switch run_length = 'diagonal' is not one of horizontal, slope"):
        load_rulebook(tmp_path / "b.yaml")
    # after merging: a new rule must be complete
    (tmp_path / "c.yaml").write_text("extends: vestal\nrules:\n  - id: LOC-001\n    title: t\n    group: harvest\n")
    with pytest.raises(RulebookError, match="rule LOC-001 needs a 'citation'"):
        load_rulebook(tmp_path / "c.yaml")
    # a chain: the middle file is checked too
    (tmp_path / "mid.yaml").write_text("extends: vestal\nrules:\n  - id: HRV-020\n    thresholds: {buffer_width_ft: -50}\n")
    (tmp_path / "top.yaml").write_text("extends: mid.yaml\n")
    with pytest.raises(RulebookError, match="mid.yaml: rule HRV-020 threshold buffer_width_ft = -50 is negative"):
        load_rulebook(tmp_path / "top.yaml")


def test_errors_count_further_problems():
    data = {"extends": "vestal", "rules": [{"id": "HRV-010", "thresholdz": {}, "titel": "x"}]}
    with pytest.raises(RulebookError, match=r"\(and 1 more problem\)"):
        schema.check_file(data, "x.yaml")


def test_original_data_is_not_changed_by_validation():
    data = shipped("lockport")
    before = copy.deepcopy(data)
    schema.check_file(data, "lockport")
    assert data == before


# ------------------------------------------------------------------------------------------
# the YAML is bounded

def test_billion_laughs_is_refused_fast(tmp_path):
    levels = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for prev, cur in zip("abcdefgh", "bcdefghi"):
        levels.append(f"{cur}: &{cur} [" + ",".join([f"*{prev}"] * 9) + "]")
    p = tmp_path / "lol.yaml"
    p.write_text("extends: vestal\n" + "\n".join(levels) + "\n")
    assert p.stat().st_size < 600
    t0 = time.perf_counter()
    with pytest.raises(RulebookError, match=r"expands to more than 200,000 values"):
        load_rulebook(p)
    assert time.perf_counter() - t0 < 2.0  # was 78 s then MemoryError


def test_aliases_within_the_limits_are_fine(tmp_path):
    p = tmp_path / "ok.yaml"
    p.write_text("extends: vestal\nrules:\n  - id: HRV-021\n    params:\n      districts: &d [RA-1, RA-2, RC]\n"
                 "  - id: HRV-022\n    params:\n      districts: *d\n")
    rb = load_rulebook(p)
    assert rb["HRV-022"].p("districts") == ["RA-1", "RA-2", "RC"]
    # the shipped rulebook, every rule's phrases included (about 4,700 values), stays far under the limit
    assert loader.expanded_size(yaml.compose((SHIPPED / "vestal.yaml").read_text("utf-8"))) < loader.MAX_YAML_NODES / 25


def test_alias_limit_counts_every_alias(tmp_path):
    def text(n: int) -> str:
        return "extends: vestal\nx: &a [1]\ny: [" + ", ".join(["*a"] * n) + "]\n"

    data = loader._read_yaml(text(loader.MAX_YAML_ALIASES), "ok.yaml")  # the limit itself is fine
    assert len(data["y"]) == 100 and data["y"][99] == [1]
    p = tmp_path / "aliases.yaml"
    p.write_text(text(loader.MAX_YAML_ALIASES + 1))
    with pytest.raises(RulebookError, match="aliases.yaml: uses more than 100 aliases"):
        load_rulebook(p)
    p.write_text("extends: vestal\nx: &a [1, *a]\n")
    with pytest.raises(RulebookError, match="has an alias inside its own anchor"):
        load_rulebook(p)


def test_deep_nesting_is_a_clear_error(tmp_path):
    p = tmp_path / "deep.yaml"
    p.write_text("extends: vestal\nx: " + "[" * 3000 + "]" * 3000 + "\n")
    with pytest.raises(RulebookError, match=r"deep.yaml: nested too deeply to be a rulebook"):
        load_rulebook(p)


@pytest.mark.parametrize("name", ["vestal", "lockport"])
def test_fast_parser_reads_what_the_python_parser_reads(name):
    # libyaml's C parser (where PyYAML has it) and PyYAML's Python parser: the same plain data
    text = (SHIPPED / f"{name}.yaml").read_text("utf-8")
    if yaml.__with_libyaml__:
        assert loader.YAML_PARSER is yaml.CSafeLoader
    assert yaml.load(text, Loader=loader.BoundedLoader) == yaml.load(text, Loader=yaml.SafeLoader)


def test_size_limit_is_stated(tmp_path):
    p = tmp_path / "big.yaml"
    p.write_bytes(b"extends: vestal\n" + b"#" * (loader.MAX_TEXT_BYTES + 1))
    with pytest.raises(RulebookError, match="larger than 1024 kB"):
        load_rulebook(p)
    assert (SHIPPED / "vestal.yaml").stat().st_size < loader.MAX_TEXT_BYTES / 5  # the shipped rulebook: room to grow


def test_rulebook_files_are_hashed_as_loaded(tmp_path):
    # the bytes hashed are the bytes parsed: a file edited after loading keeps the hash of what was applied
    import hashlib

    from geoconstraints.output.provenance import rulebook_files

    book = tmp_path / "my-town.yaml"
    first = "\ufeffextends: vestal\nrulebook: my-town\nversion: '1'\n".encode()  # a byte-order mark is hashed too
    book.write_bytes(first)
    rb = load_rulebook(book)
    mine, base = rb.files
    assert mine == {"rulebook": str(book), "bundled": False, "file": "my-town.yaml", "path": str(book),
                    "size_bytes": len(first), "sha256": hashlib.sha256(first).hexdigest()}
    shipped_bytes = (SHIPPED / "vestal.yaml").read_bytes()
    assert (base["rulebook"], base["bundled"], base["file"], base["path"]) == ("vestal", True, "vestal.yaml", "")
    assert (base["size_bytes"], base["sha256"]) == (len(shipped_bytes), hashlib.sha256(shipped_bytes).hexdigest())
    book.write_text("extends: vestal\nrulebook: my-town\nversion: '2'\n", encoding="utf-8")  # edited after loading
    assert rb.version == "1" and rulebook_files(rb) == [mine, base]
    assert rulebook_files(rb)[0]["sha256"] == hashlib.sha256(first).hexdigest()
    # a file extending a file beside it: both, in turn, as the loader resolved them
    child = tmp_path / "street.yaml"
    child.write_text("extends: my-town.yaml\nrulebook: street\n", encoding="utf-8")
    assert [f["path"] for f in load_rulebook(child).files] == [str(child), str(book), ""]
    # a rulebook made in code was read from no file: none is listed (no hash of a file it does not hold)
    made = dataclasses.replace(rb, files=[])
    assert rulebook_files(made) == []


# ------------------------------------------------------------------------------------------
# town_districts: the town's every zoning district (a value naming none of them is unknown)

_TOWN = "[RA-1, RA-2, RC, RR, C-1, C-2, CD]"  # the districts Vestal's rules name (HRV-003/021/022, SQR-001) + none


def test_town_districts_are_read_and_inherited(tmp_path):
    (tmp_path / "town.yaml").write_text(f"extends: vestal\ntown_districts: {_TOWN}\n")
    rb = load_rulebook(tmp_path / "town.yaml")
    assert rb.town_districts == ("RA-1", "RA-2", "RC", "RR", "C-1", "C-2", "CD")
    # a file extending that one keeps the list; the shipped rulebooks do not list the town's districts
    (tmp_path / "more.yaml").write_text("extends: town.yaml\nrules:\n  - id: HRV-025\n    thresholds: {min_distance_ft: 200}\n")
    assert load_rulebook(tmp_path / "more.yaml").town_districts == rb.town_districts
    assert load_rulebook("vestal").town_districts is None and load_rulebook("lockport").town_districts is None
    assert load_rulebook("vestal").named_districts("harvest") == ["RA-1", "RA-2", "RC", "RR"]


@pytest.mark.parametrize("value, match", [
    ("[RA-1, RA-2, RC, RR, ' ', C-1, C-2, CD]", r"town_districts\[4\] is blank: every entry names a zoning district"),
    ("[RA-1, RA-2, RC, RR, C-1, C-2, CD, 12]", r"town_districts\[7\] = 12 is not text; write it in quotes \(\"12\"\)"),
    ("[RA-1, RA-2, RC, RR, C-1, C-2, CD, null]", r"town_districts\[7\] = None is not a district name"),
    ("[]", r"town_districts is empty"),
    ("RA-1", r"town_districts = 'RA-1' is not a list of the town's zoning districts"),
    ("[RA-1, RA-2, RC, RR, C-1, C-2, CD, ra-1]", r"town_districts lists 'ra-1' twice \(entries 0 and 7\)"),
])
def test_town_districts_must_be_non_blank_text(tmp_path, value, match):
    (tmp_path / "bad.yaml").write_text(f"extends: vestal\ntown_districts: {value}\n")
    with pytest.raises(RulebookError, match=r"^rulebook .*bad\.yaml: " + match + r".*Fix the rulebook$"):
        load_rulebook(tmp_path / "bad.yaml")


@pytest.mark.parametrize("text, match", [
    # RR (HRV-022's district) left out of the town's list
    ("town_districts: [RA-1, RA-2, RC, C-1, C-2, CD]\n",
     r"rule HRV-022 names district RR, which town_districts does not list"),
    # spelled otherwise than the rules spell it: named, with the close spelling
    ("town_districts: [RA-1, RA2, RC, RR, C-1, C-2, CD]\n",
     r"rule HRV-003 names district RA-2, which town_districts does not list \(did you mean 'RA2'\?\)"),
    # SQR-001's commercial-zone item names C-1, C-2, CD: a district a rule names
    ("town_districts: [RA-1, RA-2, RC, RR]\n", r"rule SQR-001 names district C-1"),
    # a user's rule naming a new district must find it listed too
    (f"town_districts: {_TOWN}\nrules:\n  - id: HRV-003\n    params: {{districts: [RA-1, RA-3]}}\n",
     r"rule HRV-003 names district RA-3"),
])
def test_every_district_a_rule_names_is_in_town_districts(tmp_path, text, match):
    (tmp_path / "bad.yaml").write_text("extends: vestal\n" + text)
    with pytest.raises(RulebookError, match=r"^rulebook .*bad\.yaml: " + match + r".*Fix the rulebook$"):
        load_rulebook(tmp_path / "bad.yaml")


def test_town_districts_in_the_json_schema():
    props = schema.json_schema()["properties"]
    assert "town_districts" in props and "town_districts" in schema.FILE_KEYS
    jsonschema.validate({"extends": "vestal", "town_districts": ["RA-1", "C-1"]}, schema.json_schema())


def test_rulebook_notebook_display_escapes_its_name(tmp_path):
    # a user's rulebook names itself: before, its name reached the notebook's HTML as markup, invisibly bidi
    p = tmp_path / "mine.yaml"
    p.write_text('extends: vestal\nname: "<b>x</b>\u202etown"\n')
    page = load_rulebook(p)._repr_html_()
    assert "&lt;b&gt;x&lt;/b&gt;&lt;U+202E&gt;town" in page and "<b>x</b>" not in page and "\u202e" not in page

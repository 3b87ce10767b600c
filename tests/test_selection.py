"""Which files of the set a run writes (output/selection.py, ``--outputs``): the names, the files
written and left out, the notes of the report and the map naming only files of the set, and the
child processes started only for outputs that need them."""

from __future__ import annotations

import json
import re

import pyarrow.parquet as pq
import pytest
from common import SAMPLE

from geoconstraints.cli import main
from geoconstraints.commands import screen_parcels
from geoconstraints.errors import OutputError
from geoconstraints.io.layers import load_layers
from geoconstraints.output import child, gis_rows, prestart_writers, report, write_result
from geoconstraints.output.selection import ALL_OUTPUTS, OUTPUTS, Holders, select_outputs
from geoconstraints.rulebook.loader import load_rulebook

TOWN = SAMPLE / "vestal_sample.gpkg"
FILE_NAMES = ("findings.geojson", "results.gpkg", "findings.csv", "parcels.csv", "findings.parquet",
              "parcels.parquet", "report.html", "report.pdf", "map.html")


@pytest.fixture(scope="module")
def screened():
    return screen_parcels(load_layers(TOWN), load_rulebook("vestal"))


@pytest.fixture(scope="module")
def everything(screened, tmp_path_factory):
    """The whole set of the same screening (the default)."""
    return write_result(screened, tmp_path_factory.mktemp("all") / "out")


def _table_csvs(result):
    names = [f"{t}.csv" for t in result.tables]
    assert "parcels.csv" in names
    return names


def _files(folder):
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())


# -- the names ------------------------------------------------------------------------------------

def test_names_commas_spaces_and_case():
    assert select_outputs(" GPKG, report ,") == {"gpkg", "report"}
    assert select_outputs(["parquet", "map"]) == {"parquet", "map"}
    assert select_outputs(None) == ALL_OUTPUTS == set(OUTPUTS)
    assert select_outputs("csv,all") == ALL_OUTPUTS


@pytest.mark.parametrize("given, says", [
    ("gpkg,kml", "unknown output kml; the outputs are geojson, gpkg, csv, parquet, report, pdf, map, plots, field"),
    ("", "name at least one output"),
    (" , ", "name at least one output"),
    ("report,map,pdf", "no file of the set would hold every finding and every table"),
    ("geojson", "add gpkg, parquet or csv"),
])
def test_refused_names(given, says):
    with pytest.raises(OutputError, match=re.escape(says)):
        select_outputs(given)


@pytest.mark.parametrize("table", ["gpkg", "parquet", "csv"])
def test_each_table_output_is_enough(table):
    assert select_outputs(f"report,{table}") == {"report", table}


def test_holders_name_only_files_of_the_set():
    every = Holders()
    assert every.findings == "findings.geojson and results.gpkg"
    assert every.parcels == "parcels.csv, parcels.parquet and results.gpkg"
    assert every.layers == "results.gpkg"
    assert every.inputs == "report.pdf, report.html and provenance.json"
    some = Holders(select_outputs("csv,geojson,report"))
    assert (some.findings, some.parcels, some.layers, some.inputs) == (
        "findings.geojson", "parcels.csv", "", "report.html and provenance.json")
    tables = Holders(select_outputs("csv,parquet,pdf"))
    assert (tables.findings, tables.parcels, tables.inputs) == (
        "findings.parquet and findings.csv", "parcels.csv and parcels.parquet", "report.pdf and provenance.json")
    assert Holders(select_outputs("gpkg")).inputs == "provenance.json"


# -- the set written --------------------------------------------------------------------------------

def test_only_the_files_chosen_and_provenance(screened, everything, tmp_path):
    out = tmp_path / "out"
    written = write_result(screened, out, outputs="parquet,report")
    tables = [f"{t}.parquet" for t in screened.tables]  # parcels and the preliminary map's map_comparison
    assert sorted(tables) == ["map_comparison.parquet", "parcels.parquet"]
    assert _files(out) == sorted(["findings.parquet", *tables, "provenance.json", "report.html"])
    assert sorted(written) == _files(out)
    prov = json.loads((out / "provenance.json").read_text())
    assert prov["outputs_chosen"] == ["parquet", "report"]
    assert sorted(o["path"] for o in prov["outputs"]) == sorted(["findings.parquet", *tables, "report.html"])
    # the files written are the ones of the whole set (the run id and times aside)
    for name in ("findings.parquet", *tables):
        mine, full = pq.read_table(out / name), pq.read_table(everything[name])
        assert mine.replace_schema_metadata(None).equals(full.replace_schema_metadata(None)), name
    full_prov = json.loads(everything["provenance.json"].read_text())
    assert full_prov["outputs_chosen"] == list(OUTPUTS)


def test_parquet_alone_holds_every_table_of_a_harvest(sample_harvest, tmp_path):
    # "one of gpkg, parquet, csv holds every finding and table": a harvest's per-feature tables (roads,
    # landings ...) too, one Parquet file each with the rows and columns of its table
    res = sample_harvest
    assert len(res.tables) >= 2
    out = tmp_path / "out"
    write_result(res, out, outputs="parquet")
    assert _files(out) == sorted(["findings.parquet", "provenance.json", *(f"{t}.parquet" for t in res.tables)])
    for name, table in res.tables.items():
        back = pq.read_table(out / f"{name}.parquet")
        assert back.num_rows == len(table) > 0, name
        assert back.column_names == [str(c) for c in table.columns], name
    assert pq.read_table(out / "findings.parquet").num_rows == len(res.findings)


def test_report_notes_name_only_files_written(screened, everything, tmp_path):
    page = write_result(screened, tmp_path / "out", outputs="parquet,report")["report.html"].read_text()
    full = everything["report.html"].read_text()
    assert "Every parcel is in parcels.csv, parcels.parquet and results.gpkg (layer parcels)." in full
    assert "Every parcel is in parcels.parquet." in page
    notes = re.findall(r'<p class="[^"]*(?:note|muted)[^"]*"[^>]*>(.*?)</p>', page, flags=re.DOTALL)
    assert any("findings.parquet" in n for n in notes)
    for other in ("findings.geojson", "results.gpkg", "parcels.csv", "findings.csv", "report.pdf"):
        assert other not in page, other


def test_map_notes_name_only_files_written(screened, tmp_path):
    page = write_result(screened, tmp_path / "out", outputs="csv,map", map_max_features=0)["map.html"].read_text()
    text = page.replace("\\u0027", "'").replace("\\u003c", "<").replace("\\u003e", ">")  # the legend's JSON
    assert "The layers are written only to results.gpkg, which this run did not write (--outputs without gpkg)" in text
    assert "each parcel's outcome (worst_status, status_<rule>) in parcels.csv." in text
    assert "the findings that need a person are in findings.csv" in text
    assert '"full_text_note":"The full text of each finding is in findings.csv."' in text  # the popups' note
    assert "findings.geojson" not in text and "parcels.parquet" not in text


def test_the_whole_set_names_its_files(everything):
    page = everything["map.html"].read_text()
    assert '"full_text_note":"The full text of each finding is in findings.geojson and results.gpkg."' in page


def test_pdf_without_the_page(screened, tmp_path):
    out = tmp_path / "out"
    write_result(screened, out, outputs="pdf,csv")
    assert _files(out) == sorted(["findings.csv", "provenance.json", "report.pdf", *_table_csvs(screened)])
    assert (out / "report.pdf").read_bytes().startswith(b"%PDF-")


def test_a_handout_asked_for_is_written(screened, tmp_path):
    pid = str(screened.tables["parcels"]["parcel_id"].iloc[0])
    out = tmp_path / "out"
    write_result(screened, out, outputs="gpkg", parcel=pid)
    # no pdf chosen: no PDF of the handout either
    assert _files(out) == sorted(["provenance.json", report.parcel_report_name(pid), "results.gpkg"])


@pytest.fixture(scope="module")
def screened_all():
    """The same screening keeping every finding (as ``screen --parcel`` does: the handout lists them)."""
    return screen_parcels(load_layers(TOWN), load_rulebook("vestal"), findings="all")


def test_a_handout_names_only_files_of_the_set_for_what_it_leaves_out(screened_all, tmp_path, monkeypatch):
    # the handout squeezed to one finding: the findings it leaves out are named in the files of the set
    # that hold them (findings.csv: the `person` findings of a screening), the info ones as in none
    monkeypatch.setattr(report, "HANDOUT_MAX_ROWS", (1, 1, 1, 1))
    pid = "1003.-11-1"  # review x3 and one info
    out = tmp_path / "out"
    write_result(screened_all, out, outputs="csv", parcel=pid)
    page = " ".join(re.sub(r"<[^>]+>", "", (out / report.parcel_report_name(pid)).read_text()).split())
    assert ("… and 2 more findings of this parcel that are not pass, left out to keep this page to one sheet: "
            "they are in findings.csv.") in page
    assert "Also 1 info findings of this parcel, left out to keep this page to one sheet and not in findings.csv" in page
    assert "Inputs and their SHA-256 are listed in provenance.json." in page
    for other in ("findings.geojson", "results.gpkg", "report.pdf", "parquet"):
        assert other not in page, other


def test_a_handout_laid_out_again_after_the_child_keeps_the_outputs_and_scope(screened_all, tmp_path, monkeypatch):
    # a handout the child found over one page is rendered again in this process: with the set's outputs
    # and findings scope, so its notes still name only the files of the set holding what it leaves out
    from types import SimpleNamespace

    from geoconstraints import output

    calls = []
    monkeypatch.setattr(output, "PDF_CHILD_MIN_CHARS", 0)
    monkeypatch.setattr(report, "write_report_pdf", lambda result, path, **kw: calls.append(kw) or path)

    class OverOnePage:  # the child's answer: not written, over one page
        def __init__(self):
            self.jobs = []

        def submit(self, name, target, job, **params):
            self.jobs.append(SimpleNamespace(name=name, target=target, params=params,
                                             result=lambda: {"written": False}))
            return self.jobs[-1]

    pid, chosen = "1003.-11-1", select_outputs("csv,pdf")
    name = report.parcel_report_name(pid)
    child_ = OverOnePage()
    output._html(screened_all, name, tmp_path, child_, outputs=chosen, parcel=pid, scope="person")
    assert calls == []  # handed to the child
    output._collect_pdf(screened_all, child_.jobs[0], pid, tmp_path)
    assert calls == [{"parcel": pid, "handout_step": 1, "outputs": chosen, "scope": "person"}]


def test_overwrite_replaces_a_whole_set_with_fewer_files(screened, everything, tmp_path):
    out = tmp_path / "out"
    write_result(screened, out)
    assert set(FILE_NAMES) <= set(_files(out))
    write_result(screened, out, outputs="csv", overwrite=True)
    assert _files(out) == sorted(["findings.csv", "provenance.json", *_table_csvs(screened)])


def test_file_steps_take_names_as_text_or_a_list(screened):
    from geoconstraints.output import file_steps

    every = [name for name, _ in file_steps(screened, scope="person")]
    assert every == ["report.html", "findings.geojson", "results.gpkg", "findings.csv", "findings.parquet",
                     "map.html", "plots"]
    assert [n for n, _ in file_steps(screened, scope="person", outputs=["csv", "map"])] == ["findings.csv", "map.html"]
    assert [n for n, _ in file_steps(screened, scope="person", outputs="pdf,gpkg")] == ["report.pdf", "results.gpkg"]
    with pytest.raises(OutputError, match="unknown output html"):
        file_steps(screened, scope="person", outputs="html,csv")


# -- the child processes ------------------------------------------------------------------------------

def test_gis_rows_count_only_the_gis_files_chosen(screened):
    scope = "person"
    n = len(screened.findings)
    frames = sum(len(f) for f in [*screened.derived.values(), *screened.tables.values()] if f is not None)
    assert gis_rows(screened, scope) == 2 * n + frames
    assert gis_rows(screened, scope, select_outputs("geojson,csv")) == n
    assert gis_rows(screened, scope, select_outputs("gpkg")) == n + frames
    assert gis_rows(screened, scope, select_outputs("csv,parquet,report,pdf,map")) == 0


@pytest.mark.parametrize("outputs, kinds", [
    (None, ["pdf", "layers"]),
    ("gpkg,report", ["layers"]),
    ("geojson,csv,pdf", ["pdf", "layers"]),
    ("parquet,report,map", []),
])
def test_children_started_only_for_outputs_that_need_them(monkeypatch, outputs, kinds):
    started = []
    monkeypatch.setattr(child, "prestart", lambda kind: started.append(kind) or True)
    assert prestart_writers(100_000, outputs) is True
    assert started == kinds
    started.clear()
    assert prestart_writers(49_999, outputs) is False  # a small run writes here
    assert started == []


# -- the command line ------------------------------------------------------------------------------

def test_cli_refuses_bad_outputs_before_reading(runner, tmp_path):
    missing = tmp_path / "not-there.gpkg"  # never opened: the option is checked first
    r = runner.invoke(main, ["screen", str(missing), "--out", str(tmp_path / "o"), "--outputs", "report,map"])
    assert r.exit_code == 2
    assert "--outputs report,map: no file of the set would hold every finding and every table" in r.output
    assert "does not exist" not in r.output
    r = runner.invoke(main, ["harvest", str(missing), "--out", str(tmp_path / "o"), "--outputs", "gpkg,shp"])
    assert r.exit_code == 2 and "unknown output shp" in r.output
    assert not (tmp_path / "o").exists()


def test_cli_writes_the_chosen_files(runner, tmp_path):
    out = tmp_path / "o"
    r = runner.invoke(main, ["screen", str(TOWN), "--out", str(out), "--outputs", "gpkg,map"])
    assert r.exit_code == 0, r.output
    assert _files(out) == ["map.html", "provenance.json", "results.gpkg"]
    assert "outputs in" in r.output and "results.gpkg" in r.output and "report.html" not in r.output

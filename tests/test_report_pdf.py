"""report.pdf and the one-page handout: WeasyPrint output read back with poppler and pypdf.

US Letter pages numbered "page N of M"; the parcels table fits the page width (every word of
every page inside the right margin, read with ``pdftotext -bbox``) and its ``Worst status``
column is on page 1; the handout of a parcel is one page. Needs WeasyPrint (a dependency) with
Debian's pango, and poppler-utils: ``bash scripts/pdf_deps.sh`` installs them (scripts/test.sh
runs it).
"""

from __future__ import annotations

import json
import logging
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from browser_util import XSS_ID, make_synthetic_result
from conftest import tree_hashes
from pypdf import PdfReader

from geoconstraints import output
from geoconstraints.errors import MissingToolError, OutputError
from geoconstraints.output import report, write_result

LETTER = (612.0, 792.0)
"""US Letter in PDF points."""

MARGIN_PT = 36.0
"""The report's left and right page margins (0.5 in)."""


def _tool(name: str) -> str:
    path = shutil.which(name)
    assert path, f"{name} not found: run `bash scripts/pdf_deps.sh` (installs poppler-utils)"
    return path


def _words(pdf: Path) -> list[list[tuple[float, float, str]]]:
    """(xMin, xMax, word) of every word, page by page (``pdftotext -bbox``)."""
    out = subprocess.run([_tool("pdftotext"), "-bbox", str(pdf), "-"], check=True, capture_output=True,
                         text=True).stdout
    pages = []
    for page in re.findall(r"<page [^>]*>(.*?)</page>", out, re.DOTALL):
        pages.append([(float(a), float(b), w) for a, b, w in
                      re.findall(r'<word xMin="([\d.]+)" yMin="[\d.]+" xMax="([\d.]+)" yMax="[\d.]+">([^<]*)</word>',
                                 page)])
    return pages


def _text(pdf: Path, page: int) -> str:
    return subprocess.run([_tool("pdftotext"), "-layout", "-f", str(page), "-l", str(page), str(pdf), "-"],
                          check=True, capture_output=True, text=True).stdout


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory):
    base = tmp_path_factory.mktemp("pdf")
    return make_synthetic_result(base / "inputs"), base


@pytest.fixture(scope="module")
def demo_screen(tmp_path_factory):
    """The sample town's screening (24 columns in its parcels table) and its report.pdf."""
    from geoconstraints.commands import screen_parcels
    from geoconstraints.demo import sample_path
    from geoconstraints.io.layers import load_layers
    from geoconstraints.rulebook.loader import load_rulebook

    layers = load_layers(sample_path("vestal_sample.gpkg"), dem=sample_path("dem.tif"), roles=(
        "parcels", "flood_zones", "flood_zones_preliminary", "bfe_lines", "streams", "stream_corridor",
        "critical_slopes", "zoning"))
    res = screen_parcels(layers, load_rulebook("vestal"))
    pdf = report.write_report_pdf(res, tmp_path_factory.mktemp("demo_pdf") / "report.pdf")
    return res, pdf


def _assert_letter_numbered_inside(pdf: Path) -> int:
    reader = PdfReader(str(pdf))
    n = len(reader.pages)
    for i, page in enumerate(reader.pages):
        assert (float(page.mediabox.width), float(page.mediabox.height)) == LETTER, i
    pages = _words(pdf)
    assert len(pages) == n
    for i, words in enumerate(pages):
        text = " ".join(w for _, _, w in words)
        assert f"page {i + 1} of {n}" in text, (i, text[-200:])
        # nothing cut at the right edge: every word inside the right margin (1 pt for rounding)
        over = [(w, x1) for _, x1, w in words if x1 > LETTER[0] - MARGIN_PT + 1.0]
        assert not over, (i + 1, over[:5])
        assert all(x0 >= MARGIN_PT - 1.0 for x0, _, _ in words), i + 1
    return n


def test_report_pdf_is_letter_numbered_and_fits(synthetic):
    res, base = synthetic
    page = report.render_report(res)
    pdf = report.write_report_pdf(res, base / "report.pdf", page=page)  # the HTML of report.html, laid out
    assert pdf.read_bytes()[:5] == b"%PDF-"
    _assert_letter_numbered_inside(pdf)
    first = _text(pdf, 1)
    assert "Worst status" in first and "SFHA share (%)" in first  # the parcels table starts on page 1
    assert "99.7" in first and "0.04" in first
    assert "hunter2" not in "".join(_text(pdf, i) for i in range(1, 4))  # the password is redacted


def test_demo_report_pdf_keeps_worst_status_at_letter_width(demo_screen):
    res, pdf = demo_screen
    n = _assert_letter_numbered_inside(pdf)
    first = _text(pdf, 1)
    assert "Worst status" in first and "Parcel" in first
    assert f"The {report.MAX_PARCEL_ROWS} most severe parcels of {len(res.tables['parcels']):,}" in first
    assert n < 40  # a summary, not a print of every parcel (2,819) or every finding (14,096)
    # every page holding table rows repeats the header row (thead)
    body = [_text(pdf, i) for i in range(1, n + 1)]
    with_rows = [t for t in body if re.search(r"^\s*10\d\d\.-\d+-\d+\s+needs review", t, re.MULTILINE)]
    assert len(with_rows) >= 2  # 100 rows take more than one page
    assert all("Worst status" in t for t in with_rows)
    # columns that do not fit are named, never silently cut
    page = report.render_report(res, overview=False, figures=False)
    named = re.search(r'<p class="muted" id="parcels-not-printed">(.*?)</p>', page)
    printed = "\n".join(body)
    table = re.search(r'<table id="parcels-table" class="sortable">(.*?)</table>', page, re.DOTALL).group(1)
    for head in re.findall(r'<th class="sortable[^"]*" scope="col" data-col="[^"]*">([^<]*)</th>', table):
        first_word = head.split()[0]
        assert first_word in printed or (named and head in named.group(1)), head


def test_handout_pdf_is_one_page(synthetic, demo_screen, tmp_path):
    res, _ = synthetic
    pdf = report.write_report_pdf(res, tmp_path / report.parcel_pdf_name(XSS_ID), parcel=XSS_ID)
    assert pdf.name == "report_parcel_script_alert_1_script-5c140d35.pdf"
    assert len(PdfReader(str(pdf)).pages) == 1
    text = _text(pdf, 1)
    assert XSS_ID in text and "page 1 of 1" in text and "Passes: FLD-001." in text
    # the demo parcel with the most findings that are not pass
    demo, _ = demo_screen
    f = demo.findings
    worst = f[f["status"] != "pass"].groupby("subject_id").size().sort_values().index[-1]
    pdf = report.write_report_pdf(demo, tmp_path / "h.pdf", parcel=worst)
    assert len(PdfReader(str(pdf)).pages) == 1
    _assert_letter_numbered_inside(pdf)
    assert f"Parcel {worst}" in _text(pdf, 1)


def test_pdf_without_weasyprint_says_how_to_get_it(synthetic, tmp_path, monkeypatch):
    res, _ = synthetic
    monkeypatch.setitem(sys.modules, "weasyprint", None)  # import weasyprint -> ImportError
    with pytest.raises(OutputError, match="pip install weasyprint.*pango"):
        report.write_report_pdf(res, tmp_path / "report.pdf")
    assert not (tmp_path / "report.pdf").exists()


def test_set_without_pango_is_written_without_report_pdf(synthetic, tmp_path, monkeypatch, caplog):
    # a machine without pango (WeasyPrint's one system library): the GIS outputs are still written,
    # report.pdf is left out with a warning saying how to install it, and the set's provenance does
    # not list it
    res, _ = synthetic
    monkeypatch.setattr(output, "PDF_CHILD_MIN_CHARS", 10**12)  # laid out in-process
    monkeypatch.setitem(sys.modules, "weasyprint", None)
    with pytest.raises(MissingToolError):
        report.html_to_pdf("<p>x</p>")
    out = tmp_path / "out"
    with caplog.at_level(logging.WARNING):
        write_result(res, out)
    assert (out / "report.html").is_file() and (out / "results.gpkg").is_file() and (out / "map.html").is_file()
    assert not (out / "report.pdf").exists()
    warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any(m.startswith("report.pdf not written: report.pdf needs WeasyPrint and pango") and "pdf_deps.sh" in m
               for m in warned), warned
    listed = json.loads((out / "provenance.json").read_text("utf-8"))
    assert "report.pdf" not in json.dumps(listed.get("outputs", listed))
    assert "report.html" in json.dumps(listed.get("outputs", listed))


# -- report.pdf laid out in a child process (output/child.py) --------------------------------
# The child gets the parent's sys.path, so a fake `weasyprint` put first on it stands in for the
# real one there (the parent keeps the real one it has imported): a machine without pango, a
# full disk, a bug in the layout, a child killed, a handout over one page.
FAKE_WEASYPRINT = """
import errno, os, signal
MODE = {mode!r}
if MODE == "missing":
    raise OSError("cannot load library 'libpango-1.0-0': libpango-1.0-0: cannot open shared object file")
class _Doc:
    pages = [1, 2] if MODE == "long" else [1]
    def write_pdf(self, target):
        if MODE == "nospace":
            raise OSError(errno.ENOSPC, "No space left on device", str(target))
        with open(target, "wb") as fh:
            fh.write(b"%PDF-1.7 from the fake")
class HTML:
    def __init__(self, string):
        self.string = string
    def render(self):
        if MODE == "killed":
            os.kill(os.getpid(), signal.SIGKILL)
        if MODE == "bug":
            raise ValueError("a bug in the layout")
        return _Doc()
"""


def _fake_child(tmp_path: Path, monkeypatch, mode: str) -> None:
    """Every PDF laid out by the child, whose `weasyprint` is the fake in ``mode``."""
    report.html_to_pdf("<p>x</p>")  # the parent has the real WeasyPrint imported
    fake = tmp_path / f"fake-{mode}"
    fake.mkdir()
    (fake / "weasyprint.py").write_text(FAKE_WEASYPRINT.format(mode=mode))
    monkeypatch.syspath_prepend(str(fake))
    monkeypatch.setattr(output, "PDF_CHILD_MIN_CHARS", 0)


def test_child_pdf_is_the_in_process_pdf(synthetic, tmp_path, monkeypatch):
    res, _ = synthetic
    monkeypatch.setattr(output, "PDF_CHILD_MIN_CHARS", 0)
    child = write_result(res, tmp_path / "child", parcel=XSS_ID)
    monkeypatch.setattr(output, "PDF_CHILD_MIN_CHARS", 10**12)
    here = write_result(res, tmp_path / "here", parcel=XSS_ID)
    for name in ("report.pdf", report.parcel_pdf_name(XSS_ID)):
        a, b = child[name], here[name]
        assert a.parent == tmp_path / "child"
        assert len(PdfReader(str(a)).pages) == len(PdfReader(str(b)).pages)
        text = subprocess.run([_tool("pdftotext"), "-layout", str(a), "-"], check=True, capture_output=True,
                              text=True).stdout
        assert text == subprocess.run([_tool("pdftotext"), "-layout", str(b), "-"], check=True, capture_output=True,
                                      text=True).stdout
        assert "page 1 of" in text
    assert len(PdfReader(str(child[report.parcel_pdf_name(XSS_ID)])).pages) == 1
    listed = {o["path"] for o in json.loads((tmp_path / "child" / "provenance.json").read_text("utf-8"))["outputs"]}
    assert {"report.pdf", report.parcel_pdf_name(XSS_ID)} <= listed


def test_child_without_pango_leaves_report_pdf_out(synthetic, tmp_path, monkeypatch, caplog):
    res, _ = synthetic
    _fake_child(tmp_path, monkeypatch, "missing")
    out = tmp_path / "out"
    with caplog.at_level(logging.WARNING):
        write_result(res, out)
    assert (out / "report.html").is_file() and (out / "results.gpkg").is_file()
    assert not (out / "report.pdf").exists()
    warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any(m.startswith("report.pdf not written: report.pdf needs WeasyPrint and pango (OSError: cannot "
                            "load library 'libpango-1.0-0'") and "pdf_deps.sh" in m for m in warned), warned
    listed = {o["path"] for o in json.loads((out / "provenance.json").read_text("utf-8"))["outputs"]}
    assert "report.pdf" not in listed and "report.html" in listed


@pytest.mark.parametrize("mode, error, text", [
    # the file named as an in-process writer's error names it: the temporary file beside report.pdf
    ("nospace", OutputError, (r"^no space left on device writing {out}/\.report\.\w+\.tmp\.pdf; nothing in --out {out} "
                              r"was changed")),
    ("killed", OutputError, (r"^cannot write {out}/report\.pdf \(the process laying out the PDF was killed by "
                             r"SIGKILL\); nothing in --out {out} was changed$")),
    ("bug", ValueError, r"^a bug in the layout\nraised in the process laying out the PDF:\nTraceback"),  # + notes
])
def test_a_failing_child_leaves_out_unchanged(synthetic, tmp_path, monkeypatch, mode, error, text):
    # the child's failure is the failure of the step report.pdf: the earlier set stays, whole
    res, _ = synthetic
    out = tmp_path / "out"
    monkeypatch.setattr(output, "PDF_CHILD_MIN_CHARS", 10**12)
    write_result(res, out)
    before = tree_hashes(out)
    _fake_child(tmp_path, monkeypatch, mode)
    with pytest.raises(error, match=text.format(out=re.escape(str(out)))) as info:
        write_result(res, out, overwrite=True)
    if mode == "bug":  # the error's text is the child's; --debug shows where the child raised it
        assert str(info.value) == "a bug in the layout" and "in render" in "".join(info.value.__notes__)
    assert tree_hashes(out) == before
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".out")) == []


def test_child_handout_over_one_page_is_shortened_in_the_parent(synthetic, tmp_path, monkeypatch):
    # the child lays out the handout as rendered; when it runs over one page it writes nothing and
    # the parent lays it out again with fewer findings listed (write_report_pdf's steps)
    res, _ = synthetic
    _fake_child(tmp_path, monkeypatch, "long")
    out = write_result(res, tmp_path / "out", parcel=XSS_ID)
    assert out["report.pdf"].read_bytes() == b"%PDF-1.7 from the fake"  # max_pages=None: written as laid out
    handout = out[report.parcel_pdf_name(XSS_ID)]
    assert len(PdfReader(str(handout)).pages) == 1 and XSS_ID in _text(handout, 1)


def test_no_child_process_lays_out_here(synthetic, tmp_path, monkeypatch):
    # an embedding application without a Python executable: report.pdf is laid out in-process
    res, _ = synthetic
    monkeypatch.setattr(output, "PDF_CHILD_MIN_CHARS", 0)
    monkeypatch.setattr(sys, "executable", str(tmp_path / "no-python"))
    out = write_result(res, tmp_path / "out")
    assert len(PdfReader(str(out["report.pdf"])).pages) >= 2 and "page 1 of" in _text(out["report.pdf"], 1)

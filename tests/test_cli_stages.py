"""The screen command's progress: one bar over the stages on a terminal, stage times with -v,
nothing when stderr is not a terminal."""

from __future__ import annotations

import io

import pytest

from geoconstraints import cli, sample_path
from geoconstraints.cli import main


def test_stage_times_with_v_and_no_bar_off_a_terminal(runner, tmp_path):
    res = runner.invoke(main, ["-v", "screen", str(sample_path("vestal_sample.gpkg")), "--out", str(tmp_path / "o"),
                               "--workers", "2"])
    assert res.exit_code == 0, res.output
    lines = [ln for ln in res.stderr.splitlines() if ln.startswith("info: ") and ln.endswith(" s")]
    # each writer is an item of the stage "write outputs", named by what it wrote (the CSV and Parquet steps: one
    # file per table too) and handed over (report.pdf: to the PDF child); the wait for the children's files last
    assert [ln[len("info: "): ln.rindex(":")] for ln in lines] == [
        "load", "check", "report.html; report.pdf handed to a child process", "findings.geojson", "results.gpkg",
        "findings.csv, parcels.csv, map_comparison.csv", "findings.parquet, parcels.parquet, map_comparison.parquet",
        "map.html", "plots/sfha_share.png", "waiting for the child processes (report.pdf)", "write outputs"]
    assert "stages" not in res.stderr  # no bar: stderr is not a terminal
    quiet = runner.invoke(main, ["screen", str(sample_path("vestal_sample.gpkg")), "--out", str(tmp_path / "q")])
    assert quiet.exit_code == 0 and quiet.stderr == ""


def test_one_bar_over_the_stages_on_a_terminal(monkeypatch):
    err = io.StringIO()
    monkeypatch.setattr(cli, "_tty", lambda: True)
    monkeypatch.setattr(cli.sys, "stderr", err)
    st = cli.Stages(["load", "check", "write outputs"])
    for name in st.names:
        with st(name):
            pass
    text = err.getvalue()
    assert all(name in text for name in st.names) and "0/3 stages" in text and "2/3 stages" in text


def test_a_stage_raises_a_signal_a_library_swallowed_before_it_begins():
    # a Ctrl-C whose exception was cleared inside the stage before (geoconstraints.interrupt): the next stage
    # does not begin
    from geoconstraints import interrupt

    st = cli.Stages(["load", "check"])
    begun = []
    with st("load"):
        begun.append("load")
    interrupt.raised(KeyboardInterrupt())
    try:
        with pytest.raises(KeyboardInterrupt), st("check"):
            begun.append("check")
    finally:
        interrupt.forget()
        st.close()
    assert begun == ["load"]


def test_the_end_of_a_command_forgets_the_signal():
    # the CLI clears what its handler recorded when the command ends (the restore its context runs on close),
    # so a later command in the same process (a notebook calling main, the tests' runner) is not stopped by it
    from geoconstraints import interrupt

    interrupt.raised(KeyboardInterrupt())
    cli._end_cleanup_limit()
    assert interrupt.pending() is None
    with cli.Stages(["load"])("load"):
        pass


def test_the_bar_counts_the_writers_of_a_stage(monkeypatch):
    # write_result announces its writers (expect) and runs each inside the stage: the bar's total grows by them,
    # and it shows the stage and the item
    err = io.StringIO()
    monkeypatch.setattr(cli, "_tty", lambda: True)
    monkeypatch.setattr(cli.sys, "stderr", err)
    st = cli.Stages(["check", "write outputs"])
    with st("check"):
        pass
    with st("write outputs"):
        st.expect(2)
        assert st.bar.total == 4
        with st("report.html"):
            assert st.bar.desc.startswith("write outputs: report.html")
        with st("map.html"):
            pass
        assert st.bar.n == 3 and st.bar.desc.startswith("write outputs")
    assert st.bar.n == 4
    assert "3/4 stages" in err.getvalue()


def test_a_log_line_goes_above_the_bar_not_into_it(monkeypatch):
    # -v on a terminal: each writer's time is logged while the bar is drawn; the line is written on its own
    # (the bar cleared, then drawn again), not appended to the bar's line
    err = io.StringIO()
    monkeypatch.setattr(cli, "_tty", lambda: True)
    monkeypatch.setattr(cli.sys, "stderr", err)
    cli._setup_logging(1, False)
    try:
        st = cli.Stages(["write outputs"])
        with st("write outputs"):
            st.expect(1)
            with st("report.html"):
                pass
    finally:
        cli._setup_logging(0, False)
    pieces = [p.strip() for p in err.getvalue().replace("\r", "\n").split("\n")]
    assert "info: report.html: 0.0 s" in pieces and "info: write outputs: 0.0 s" in pieces
    assert not [p for p in pieces if "stages" in p and "info:" in p]  # never on the bar's line

"""The screen command's progress: one bar over the stages on a terminal, stage times with -v,
nothing when stderr is not a terminal."""

from __future__ import annotations

import io

from geoconstraints import cli, sample_path
from geoconstraints.cli import main


def test_stage_times_with_v_and_no_bar_off_a_terminal(runner, tmp_path):
    res = runner.invoke(main, ["-v", "screen", str(sample_path("vestal_sample.gpkg")), "--out", str(tmp_path / "o"),
                               "--workers", "2"])
    assert res.exit_code == 0, res.output
    lines = [ln for ln in res.stderr.splitlines() if ln.startswith("info: ") and ln.endswith(" s")]
    assert [ln.split(":")[1].strip() for ln in lines] == ["load", "check", "write outputs"]
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

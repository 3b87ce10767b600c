"""``--out-db``: findings and tables written into a real PostGIS (started by scripts/postgis.sh),
replaced atomically, indexed, and never with the password in a message, a log or a report.
"""

from __future__ import annotations

import sys
import uuid
from urllib.parse import urlsplit, urlunsplit

import pandas as pd
import psycopg
import pytest
from conftest import pg_url

from geoconstraints import load_layers, load_rulebook, sample_path
from geoconstraints.cli import main
from geoconstraints.commands import screen_parcels
from geoconstraints.errors import OutputError
from geoconstraints.output import database
from geoconstraints.output.database import parse_db_target, write_database

PASSWORD = "Tr0ub4dor-" + uuid.uuid4().hex[:10]


@pytest.fixture(scope="module")
def result():
    return screen_parcels(load_layers(sample_path("vestal_sample.gpkg")), load_rulebook("vestal"))


@pytest.fixture
def schema():
    name = f"gc_test_{uuid.uuid4().hex[:8]}"
    yield name
    with psycopg.connect(pg_url(), autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA IF EXISTS "{name}" CASCADE')


def _with_schema(url: str, schema: str) -> str:
    return f"{url}{'&' if '?' in url else '?'}schema={schema}"


def _tables(schema: str) -> dict[str, int]:
    with psycopg.connect(pg_url()) as conn:
        names = [r[0] for r in conn.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = %s ORDER BY 1", [schema])]
        return {n: conn.execute(f'SELECT count(*) FROM "{schema}"."{n}"').fetchone()[0] for n in names}


def _indexes(schema: str) -> dict[str, str]:
    with psycopg.connect(pg_url()) as conn:
        return dict(conn.execute("SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = %s", [schema]).fetchall())


def test_tables_rows_and_indexes(result, schema):
    rows = write_database(result, _with_schema(pg_url(), schema))
    n_parcels, n_findings = len(result.tables["parcels"]), len(result.findings)
    assert rows == {"findings": n_findings, **{k: len(v) for k, v in result.tables.items()}}
    assert _tables(schema) == rows and rows["parcels"] == n_parcels > 50
    idx = _indexes(schema)
    assert "USING gist (geom)" in idx["parcels_geom_gist"] and "USING gist (geom)" in idx["findings_geom_gist"]
    assert "USING btree (parcel_id)" in idx["parcels_parcel_id_idx"]
    assert "USING btree (rule_id)" in idx["findings_rule_id_idx"]
    with psycopg.connect(pg_url()) as conn:
        # geometries arrive whole, in the working CRS: areas as geoconstraints measured them
        got = {r[0]: (r[1], r[2]) for r in conn.execute(
            f'SELECT parcel_id, ST_Area(geom), ST_SRID(geom) FROM "{schema}".parcels')}
        t = result.tables["parcels"]
        for pid, acres in zip(t["parcel_id"], t["area_acres"]):
            assert got[pid][0] / 43_560.0 == pytest.approx(acres, rel=1e-9) and got[pid][1] == 2261
        f = pd.DataFrame(conn.execute(f'SELECT rule_id, status, count(*) FROM "{schema}".findings GROUP BY 1, 2').fetchall(),
                         columns=["rule_id", "status", "n"]).set_index(["rule_id", "status"])["n"]
    want = result.findings.groupby(["rule_id", "status"]).size()
    assert f.sort_index().to_dict() == want.sort_index().to_dict()
    # text survives COPY: tabs, newlines and backslashes are escaped, empty is not NULL
    with psycopg.connect(pg_url()) as conn:
        msgs = [r[0] for r in conn.execute(f'SELECT message FROM "{schema}".findings ORDER BY rule_id, subject_id')]
    assert sorted(msgs) == sorted(result.findings["message"].tolist())


def test_second_run_replaces_without_duplicates(result, schema):
    url = _with_schema(pg_url(), schema)
    first = write_database(result, url)
    second = write_database(result, url)
    assert first == second == _tables(schema)  # same counts, nothing doubled, no leftover new tables
    assert not [n for n in _tables(schema) if n.endswith("__gc_new")]


def test_failure_midway_leaves_the_previous_tables(result, schema):
    url = _with_schema(pg_url(), schema)
    before = write_database(result, url)
    bad = result.tables["parcels"].copy()
    bad.loc[bad.index[-1], "flood_zones"] = "AE\x00"  # PostgreSQL refuses NUL in text: fails on the 2nd table
    with pytest.raises(OutputError, match="refused the write .*nothing was changed"):
        write_database(result, url, tables={"findings": result.findings.iloc[:10], "parcels": bad})
    assert _tables(schema) == before


def test_password_never_shown(tmp_path, runner):
    role = f"gc_writer_{uuid.uuid4().hex[:6]}"
    base = urlsplit(pg_url())
    with psycopg.connect(pg_url(), autocommit=True) as conn:
        conn.execute(f"CREATE ROLE {role} LOGIN PASSWORD '{PASSWORD}'")
        conn.execute(f'GRANT CREATE ON DATABASE "{base.path.lstrip("/")}" TO {role}')
    schema = f"gc_pw_{uuid.uuid4().hex[:6]}"
    netloc = f"{role}:{PASSWORD}@{base.hostname}:{base.port}"
    url = urlunsplit((base.scheme, netloc, base.path, f"schema={schema}", ""))
    try:
        out = tmp_path / "out"
        res = runner.invoke(main, ["-v", "screen", str(sample_path("vestal_sample.gpkg")), "--out", str(out),
                                   "--out-db", url])
        assert res.exit_code == 0, res.output
        assert f"database postgresql://{role}@{base.hostname}:{base.port}/" in res.stdout
        assert PASSWORD not in res.stdout + res.stderr
        for p in out.rglob("*"):
            if p.is_file():
                assert PASSWORD.encode() not in p.read_bytes(), p.name
        assert _tables(schema)["parcels"] > 50
        # a failure (nothing listens on port 1) says where, never the password
        bad = urlunsplit((base.scheme, f"{role}:{PASSWORD}@{base.hostname}:1", base.path, "", ""))
        res = runner.invoke(main, ["screen", str(sample_path("vestal_sample.gpkg")), "--out", str(tmp_path / "o2"),
                                   "--out-db", bad])
        assert res.exit_code == 2
        assert "cannot connect" in res.stderr and f"{role}@{base.hostname}:1/" in res.stderr
        assert PASSWORD not in res.stdout + res.stderr
    finally:
        with psycopg.connect(pg_url(), autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
            conn.execute(f'REVOKE CREATE ON DATABASE "{base.path.lstrip("/")}" FROM {role}')
            conn.execute(f"DROP ROLE IF EXISTS {role}")


def test_bad_targets_are_refused_before_anything_runs(runner, tmp_path):
    with pytest.raises(OutputError, match="schema 'a;drop' is not a plain name"):
        parse_db_target("postgresql://u@h/db?schema=a;drop")
    with pytest.raises(OutputError, match="must be a PostGIS URL"):
        parse_db_target("mysql://u@h/db")
    assert parse_db_target("postgresql://u:pw@h:5/db?sslmode=require").redacted == \
        "postgresql://u@h:5/db?schema=geoconstraints"
    res = runner.invoke(main, ["screen", str(sample_path("vestal_sample.gpkg")), "--out", str(tmp_path / "o"),
                               "--out-db", "postgresql://u@h/db?schema=1x"])
    assert res.exit_code == 2 and "schema '1x' is not a plain name" in res.stderr
    assert not (tmp_path / "o").exists()  # refused before the check and the writers ran
    assert database.DEFAULT_SCHEMA == "geoconstraints"


def test_values_survive_the_copy(result, schema):
    import geopandas as gpd
    from shapely.geometry import Point

    odd = gpd.GeoDataFrame({
        "thing_id": ["a", "b", "c", "d"],
        "text": ['quote " and, comma', "tab\there\nnew line", "back\\slash \\N", ""],
        "maybe": ["x", None, "", "y"],
        "value": [1.5, float("nan"), float("inf"), -0.1 + 0.2],
        "flag": [True, False, True, False],
        "count": [1, 2, 3, 2**40],
        "mixed": pd.Series([1, "a", None, 2.5], dtype=object),
    }, geometry=[Point(1, 2), None, Point(3.000000000001, 4), Point(5, 6)], crs=2261)
    write_database(result, _with_schema(pg_url(), schema), tables={"odd": odd})
    with psycopg.connect(pg_url()) as conn:
        rows = conn.execute(f'SELECT thing_id, text, maybe, value, flag, count, ST_X(geom), ST_Y(geom), '
                            f'pg_typeof(count)::text, mixed FROM "{schema}".odd ORDER BY thing_id').fetchall()
    assert [r[1] for r in rows] == odd["text"].tolist()
    assert [r[2] for r in rows] == ["x", None, "", "y"]  # NULL and the empty string stay apart
    assert rows[0][3] == 1.5 and rows[1][3] is None and rows[2][3] == float("inf") and rows[3][3] == -0.1 + 0.2
    assert [r[4] for r in rows] == [True, False, True, False] and rows[3][5] == 2**40 and rows[0][8] == "bigint"
    assert [r[9] for r in rows] == ["1", "a", None, "2.5"]  # an object column of mixed values: as text
    assert (rows[0][6], rows[0][7]) == (1.0, 2.0) and rows[1][6] is None and rows[2][6] == 3.000000000001


def test_missing_psycopg_says_how_to_install(result, monkeypatch):
    # the one import helper of io.postgis, with the writer's error and words
    monkeypatch.setitem(sys.modules, "psycopg", None)  # import psycopg -> ImportError
    with pytest.raises(OutputError, match=r"^--out-db needs psycopg: pip install 'geoconstraints\[postgis\]'$"):
        write_database(result, "postgresql://gis@db.example/gis?schema=x")

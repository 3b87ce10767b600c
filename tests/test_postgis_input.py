"""Role layers read straight from a real PostGIS (``postgresql://...?table=SCHEMA.TABLE``).

The database comes from ``scripts/postgis.sh`` (``GEOCONSTRAINTS_PG_URL``, a superuser on a
throwaway cluster); without it these tests fail, they are not skipped. The module creates a
schema of tables and a login role with a password, switches that role (only) to scram-sha-256
in the cluster's pg_hba.conf so that a wrong password is really refused, and removes all of it
afterwards.
"""

from __future__ import annotations

import socket
import sys
import time
import uuid
from pathlib import Path

import geopandas as gpd
import numpy as np
import pytest
import shapely
from common import NY_FT_SRID, X0, Y0
from conftest import pg_url
from shapely.geometry import Polygon, box

from geoconstraints.cli import main
from geoconstraints.errors import CRSError, GeometryError, InputError, LayerReadError
from geoconstraints.io.layers import load_layers
from geoconstraints.io.postgis import is_db_source, parse_db_source, read_postgis
from geoconstraints.io.sources import LayerSource, parse_path_layer, resolve_sources

TAG = uuid.uuid4().hex[:8]
SCHEMA = f"gc_town_{TAG}"
ROLE = f"gc_reader_{TAG}"
PASSWORD = f"s3cret-{uuid.uuid4().hex}"
HBA_LINE = f"host all {ROLE} 127.0.0.1/32 scram-sha-256  # geoconstraints tests, removed after the run"

# parcels with their areas by hand: boxes are width x height; the bow-tie P-4 crosses itself at
# (X0+300, Y0+250) and make_valid gives two triangles of base 100 ft and height 100 ft:
# 2 * (100 * 100 / 2) = 10,000 sq ft
PARCELS = {
    "P-1": (box(X0, Y0, X0 + 200, Y0 + 200), 40_000.0),
    "P-2": (box(X0 + 200, Y0, X0 + 400, Y0 + 200), 40_000.0),
    "P-3": (box(X0, Y0 + 200, X0 + 300, Y0 + 300), 30_000.0),
    "P-4": (Polygon([(X0 + 200, Y0 + 200), (X0 + 400, Y0 + 300), (X0 + 400, Y0 + 200), (X0 + 200, Y0 + 300)]),
            10_000.0),
}
ZONING = {"P-1": "R-1", "P-2": "R-1", "P-3": "C-2", "P-4": "R-2"}


def _flood() -> gpd.GeoDataFrame:
    """AE over the west 100 ft of P-1/P-3 (BFE 850 ft), X elsewhere (NFHL -9999 BFE)."""
    return gpd.GeoDataFrame({"FLD_ZONE": ["AE", "X"], "ZONE_SUBTY": [None, "AREA OF MINIMAL FLOOD HAZARD"],
                             "STATIC_BFE": [850.0, -9999.0], "FLD_AR_ID": ["F-1", "F-2"]},
                            geometry=[box(X0 - 50, Y0 - 50, X0 + 100, Y0 + 450),
                                      box(X0 + 100, Y0 - 50, X0 + 450, Y0 + 450)], crs=NY_FT_SRID)


def _set_hba(conn, add: bool) -> None:
    """Add (or remove) this run's pg_hba line through the server (superuser), then reload.

    The file is read with pg_read_file and written back with lo_export, which runs as the server's
    own OS user and keeps the file's owner and mode; an advisory lock keeps parallel runs apart.
    """
    conn.execute("SELECT pg_advisory_lock(hashtext('geoconstraints tests pg_hba'))")
    try:
        path = conn.execute("SHOW hba_file").fetchone()[0]
        text = conn.execute("SELECT pg_read_file(%s)", [path]).fetchone()[0]
        lines = [ln for ln in text.splitlines() if ln != HBA_LINE]
        if add:  # first match wins: before the cluster's trust lines
            first = next((i for i, ln in enumerate(lines) if ln.strip() and not ln.lstrip().startswith("#")),
                         len(lines))
            lines.insert(first, HBA_LINE)
        oid = conn.execute("SELECT lo_from_bytea(0, convert_to(%s, 'UTF8'))", ["\n".join(lines) + "\n"]).fetchone()[0]
        try:
            conn.execute("SELECT lo_export(%s, %s)", [oid, path])
        finally:
            conn.execute("SELECT lo_unlink(%s)", [oid])
        errors = conn.execute("SELECT line_number, error FROM pg_hba_file_rules WHERE error IS NOT NULL").fetchall()
        assert not errors, f"pg_hba.conf has errors after the edit: {errors}"
        conn.execute("SELECT pg_reload_conf()")
    finally:
        conn.execute("SELECT pg_advisory_unlock(hashtext('geoconstraints tests pg_hba'))")


def _url(password: str | None = PASSWORD, table: str = "parcels", port: int | None = None) -> str:
    admin = parse_db_source(pg_url() + "?table=x")
    host, _, p = admin.where.split("/")[0].rpartition(":")
    db = admin.where.split("/", 1)[1]
    cred = f"{ROLE}:{password}" if password is not None else ROLE
    return f"postgresql://{cred}@{host}:{port or p}/{db}?table={SCHEMA}.{table}"


@pytest.fixture(scope="module")
def town(tmp_path_factory):
    """Tables in a fresh schema, a password role able to read them, and the same data as a GeoPackage."""
    import psycopg
    from psycopg import sql

    admin = pg_url()
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS postgis")
        conn.execute(sql.SQL("CREATE ROLE {} LOGIN PASSWORD {}").format(sql.Identifier(ROLE), sql.Literal(PASSWORD)))
        conn.execute(f"CREATE SCHEMA {SCHEMA}")
        conn.execute(f'CREATE TABLE {SCHEMA}.parcels (gid serial PRIMARY KEY, "PARCEL_ID" text, "Zoning" text, '
                     f'land_use text, "ACRES" numeric(8, 3), geom geometry(Polygon, {NY_FT_SRID}))')
        conn.execute(f"CREATE TABLE {SCHEMA}.flood_zones (fld_zone text, zone_subty text, static_bfe double "
                     f"precision, fld_ar_id text, shape geometry(Polygon, {NY_FT_SRID}))")
        conn.execute(f"CREATE TABLE {SCHEMA}.parcels_dup (parcel_id text, geom geometry(Polygon, {NY_FT_SRID}))")
        conn.execute(f"CREATE TABLE {SCHEMA}.parcels_nosrid (parcel_id text, geom geometry(Polygon))")
        conn.execute(f"CREATE TABLE {SCHEMA}.owners (parcel_id text, owner text)")
        with conn.cursor() as cur:
            cur.executemany(f'INSERT INTO {SCHEMA}.parcels ("PARCEL_ID", "Zoning", land_use, "ACRES", geom) '
                            f"VALUES (%s, %s, %s, %s, ST_GeomFromWKB(%s, {NY_FT_SRID}))",
                            [(i, ZONING[i], "residential", a / 43_560, shapely.to_wkb(g))
                             for i, (g, a) in PARCELS.items()])
            fl = _flood()
            cur.executemany(f"INSERT INTO {SCHEMA}.flood_zones VALUES (%s, %s, %s, %s, ST_GeomFromWKB(%s, {NY_FT_SRID}))",
                            [(z, s, b, i, shapely.to_wkb(g)) for z, s, b, i, g in
                             zip(fl["FLD_ZONE"], fl["ZONE_SUBTY"], fl["STATIC_BFE"], fl["FLD_AR_ID"], fl.geometry)])
            cur.executemany(f"INSERT INTO {SCHEMA}.parcels_dup VALUES (%s, ST_GeomFromWKB(%s, {NY_FT_SRID}))",
                            [("D-1", shapely.to_wkb(box(X0, Y0, X0 + 10, Y0 + 10))),
                             ("D-1", shapely.to_wkb(box(X0 + 20, Y0, X0 + 30, Y0 + 10)))])
            cur.execute(f"INSERT INTO {SCHEMA}.parcels_nosrid VALUES ('N-1', ST_GeomFromWKB(%s))",
                        [shapely.to_wkb(box(X0, Y0, X0 + 10, Y0 + 10))])
        conn.execute(f"GRANT USAGE ON SCHEMA {SCHEMA} TO {ROLE}")
        conn.execute(f"GRANT SELECT ON ALL TABLES IN SCHEMA {SCHEMA} TO {ROLE}")
        _set_hba(conn, add=True)
    # the reload is asynchronous: wait until the role's wrong password is refused
    deadline = time.monotonic() + 10
    while True:
        try:
            psycopg.connect(_url("wrong-" + PASSWORD).split("?")[0], connect_timeout=5).close()
        except psycopg.OperationalError as exc:
            assert "password authentication failed" in str(exc), str(exc)
            break
        assert time.monotonic() < deadline, "pg_hba.conf reload did not switch the test role to scram-sha-256"
        time.sleep(0.1)
    folder = tmp_path_factory.mktemp("postgis_input")
    gpkg = folder / "town.gpkg"
    gpd.GeoDataFrame({"PARCEL_ID": list(PARCELS), "Zoning": [ZONING[i] for i in PARCELS],
                      "land_use": ["residential"] * len(PARCELS)},
                     geometry=[g for g, _ in PARCELS.values()], crs=NY_FT_SRID).to_file(gpkg, layer="parcels")
    _flood().to_file(gpkg, layer="flood_zones")
    try:
        yield {"gpkg": gpkg}
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            _set_hba(conn, add=False)
            conn.execute(f"DROP SCHEMA IF EXISTS {SCHEMA} CASCADE")
            conn.execute(f"DROP ROLE IF EXISTS {ROLE}")


# ------------------------------------------------------------------------------------------
# parsing and redaction (no database needed, but the module's fixture is not used)

def test_url_is_not_split_on_colons_and_password_is_redacted() -> None:
    url = "postgresql://gis:pa%3Ass:w@db.town.gov:6543/gis?table=town.parcels&sslmode=require"
    assert is_db_source(url) and is_db_source("POSTGRES://x/y") and not is_db_source("parcels.gpkg:parcels")
    p, layer = parse_path_layer(url)
    assert layer is None and "6543" in str(p)  # not cut at the port's colon
    pg = parse_db_source(url)
    assert pg.redacted == "postgresql://gis@db.town.gov:6543/gis?table=town.parcels"
    assert (pg.schema, pg.table, pg.where, pg.user) == ("town", "parcels", "db.town.gov:6543/gis", "gis")
    assert "pa" not in repr(pg).replace("parcels", "") and "sslmode=require" in pg.conninfo
    assert "table=" not in pg.conninfo  # libpq refuses unknown URI parameters
    # libpq/psycopg can echo the URL or the password in an error: scrubbed
    assert pg.scrub(f"bad {url} and password=pa:ss:w\nsecond line") == (
        "bad postgresql://gis:***@db.town.gov:6543/gis?table=town.parcels&sslmode=require and password=***"
        " second line")
    assert "pa:ss:w" not in pg.scrub("x pa:ss:w y") and "pa%3Ass:w" not in pg.scrub("pa%3Ass:w")
    src, _ = resolve_sources(overrides={"parcels": url})
    assert src["parcels"].db == pg and src["parcels"].label == "db.town.gov:6543/gis table town.parcels"


def test_url_without_table_or_with_bad_table_is_refused() -> None:
    with pytest.raises(InputError, match=r"postgresql://gis@h:1/db: name the table.*\?table=SCHEMA\.TABLE") as e:
        parse_db_source("postgresql://gis:hunter22@h:1/db")
    assert "hunter22" not in str(e.value)
    with pytest.raises(InputError, match="not SCHEMA.TABLE or TABLE"):
        parse_db_source("postgres://h/db?table=a.b.c")
    with pytest.raises(InputError, match="not a role-named GeoPackage"):
        resolve_sources("postgresql://h/db?table=parcels")


def test_missing_psycopg_says_how_to_install(monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "psycopg", None)  # import psycopg -> ImportError
    src = LayerSource("parcels", Path("x"), "t", db=parse_db_source("postgresql://h/db?table=t"))
    with pytest.raises(InputError, match=r"reading from PostGIS needs psycopg: pip install 'geoconstraints\[postgis\]'"):
        read_postgis(src)


# ------------------------------------------------------------------------------------------
# against the database

def test_parcels_from_postgis_equal_the_geopackage(town) -> None:
    db = load_layers(overrides={"parcels": _url()})
    gp = load_layers(overrides={"parcels": f"{town['gpkg']}:parcels"})
    a, b = db["parcels"], gp["parcels"]
    assert list(a["feature_id"]) == list(b["feature_id"]) == list(PARCELS)
    np.testing.assert_allclose(a.area, [v for _, v in PARCELS.values()], rtol=0, atol=1e-6)
    np.testing.assert_allclose(a.area, b.area, rtol=0, atol=1e-9)
    assert a.geom_equals_exact(b.geometry, tolerance=1e-9).all()
    assert list(a["zoning"]) == list(b["zoning"]) == [ZONING[i] for i in PARCELS]  # "Zoning" -> zoning
    assert "parcel_id" in a.columns and "PARCEL_ID" not in a.columns
    np.testing.assert_allclose(a["ACRES"], [round(v / 43_560, 3) for _, v in PARCELS.values()])  # numeric -> float
    assert db.crs.to_epsg() == 2261
    # the same validation path: the bow-tie was repaired, with the same warning text apart from the source
    assert [w.split("): ", 1)[1] for w in db.warnings] == [w.split("): ", 1)[1] for w in gp.warnings]
    assert any("P-4" in w and "make_valid" in w for w in db.warnings)
    info = db.info["parcels"]
    assert info.path == _url(password=None) and PASSWORD not in repr(info)
    assert (info.layer, info.features, info.source_crs, info.size_bytes) == (f"{SCHEMA}.parcels", 4, "EPSG:2261", 0)
    assert len(info.sha256) == 64 and info.sha256 == load_layers(overrides={"parcels": _url()}).info["parcels"].sha256
    assert db.input_paths() == set()  # a database is not a file an output could overwrite
    assert db.summary()["file"].tolist() == [_url(password=None)]


def test_password_from_pgpassword_and_the_flood_role(town, monkeypatch) -> None:
    """The recommended way: no password in the URL, libpq takes PGPASSWORD."""
    monkeypatch.setenv("PGPASSWORD", PASSWORD)
    layers = load_layers(overrides={"flood_zones": _url(None, "flood_zones"), "parcels": _url(None)})
    fz = layers["flood_zones"]
    assert list(fz["feature_id"]) == ["F-1", "F-2"]  # fld_ar_id -> FLD_AR_ID, the role's id field
    # no SFHA_TF column in the table: empty, never guessed from the zone (the zone lists classify), as for files
    assert list(fz["FLD_ZONE"]) == ["AE", "X"] and list(fz["SFHA_TF"]) == [None, None]
    assert fz["STATIC_BFE"].iloc[0] == 850.0 and np.isnan(fz["STATIC_BFE"].iloc[1])  # NFHL -9999 -> missing
    assert layers.info["flood_zones"].sha256 != layers.info["parcels"].sha256


def _one_line_error(result) -> str:
    assert result.exit_code == 2, (result.exit_code, result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert PASSWORD not in result.stdout + result.stderr
    return lines[0]


def test_cli_errors_are_one_line_without_the_password(town, runner, tmp_path) -> None:
    out = str(tmp_path / "out")
    line = _one_line_error(runner.invoke(main, ["screen", "--parcels", _url(table="no_such_table"), "--out", out]))
    assert f"no table or view {SCHEMA}.no_such_table in 127.0.0.1:" in line
    assert f"{SCHEMA}.parcels" in line  # the tables that do have geometry are named
    line = _one_line_error(runner.invoke(main, ["screen", "--parcels", _url("wrong-" + PASSWORD), "--out", out]))
    assert "password authentication failed" in line and "PGPASSWORD or ~/.pgpass" in line
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        free = s.getsockname()[1]
    line = _one_line_error(runner.invoke(main, ["screen", "--parcels", _url(port=free), "--out", out]))
    assert f"cannot connect to 127.0.0.1:{free}/" in line and "Check the host and port" in line
    line = _one_line_error(runner.invoke(main, ["screen", "--parcels", _url(table="owners"), "--out", out]))
    assert "has no PostGIS geometry column" in line
    assert not Path(out).exists()


def test_srid_0_refused_and_duplicate_ids_told_apart(town) -> None:
    with pytest.raises(CRSError, match=r"geometry column geom has SRID 0 \(no CRS\).*UpdateGeometrySRID") as e:
        load_layers(overrides={"parcels": _url(table="parcels_nosrid")})
    assert PASSWORD not in str(e.value) and f"table {SCHEMA}.parcels_nosrid" in str(e.value)
    dup = load_layers(overrides={"parcels": _url(table="parcels_dup")})  # a table is validated like a file
    assert dup["parcels"]["feature_id"].tolist() == ["D-1 (row 1)", "D-1 (row 2)"]
    assert any("2 feature(s) share an id in field parcel_id (D-1 (2x))" in w for w in dup.warnings)
    with pytest.raises(InputError, match="duplicate ids in field parcel_id: D-1"):
        load_layers(overrides={"parcels": _url(table="parcels_dup")}, strict=True)
    with pytest.raises(GeometryError, match="no geometry column 'nope'; geometry columns are geom"):
        load_layers(overrides={"parcels": _url() + "&geometry=nope"})
    with pytest.raises(LayerReadError):
        load_layers(overrides={"parcels": _url(table="PARCELS_MISSING")})


def test_project_file_maps_a_role_to_a_table(town, tmp_path, monkeypatch) -> None:
    base = _url(None).split("?")[0]
    toml = tmp_path / "town.toml"
    toml.write_text(f'[layers.parcels]\npath = "{base}"\ntable = "{SCHEMA}.PARCELS"\ngeometry = "geom"\n'
                    f'id = "PARCEL_ID"\n[layers.flood_zones]\npath = "{town["gpkg"].as_posix()}"\nlayer = "flood_zones"\n')
    monkeypatch.setenv("PGPASSWORD", PASSWORD)
    layers = load_layers(project=toml)  # upper-case PARCELS: found as PostgreSQL folds it
    assert list(layers["parcels"]["feature_id"]) == list(PARCELS) and len(layers["flood_zones"]) == 2
    assert layers.info["parcels"].path == f"{base}?table={SCHEMA}.PARCELS&geometry=geom"
    toml.write_text(f'[layers.parcels]\npath = "{base}"\ntable = "{SCHEMA}.parcels"\nwhere = "1=1; DROP TABLE x"\n')
    with pytest.raises(InputError, match="where is not supported"):
        load_layers(project=toml)


def test_screen_from_postgis_never_writes_the_password(town, runner, tmp_path) -> None:
    out = tmp_path / "out"
    res = runner.invoke(main, ["-v", "screen", "--parcels", _url(), "--flood-zones", f"{town['gpkg']}:flood_zones",
                               "--out", str(out)])
    assert res.exit_code == 0, res.stderr
    assert res.stdout.startswith("screen: ") and " findings (" in res.stdout
    assert "info: reading parcels from PostGIS " + _url(password=None) in res.stderr  # -v shows the redacted URL
    for name in ("findings.geojson", "results.gpkg", "report.html", "map.html", "parcels.csv"):
        assert (out / name).is_file(), name
    for f in out.rglob("*"):
        if f.is_file():
            data = f.read_bytes()
            assert PASSWORD.encode() not in data and PASSWORD.encode("utf-16-le") not in data, f
    assert PASSWORD not in res.stdout + res.stderr
    html = (out / "report.html").read_text("utf-8")  # provenance: the table and the hash of the rows read
    assert f"<td>{SCHEMA}.parcels</td>" in html
    assert load_layers(overrides={"parcels": _url()}).info["parcels"].sha256 in html
    csv = (out / "parcels.csv").read_text("utf-8")
    assert all(i in csv for i in PARCELS)


def test_layers_command_describes_a_table(town, runner) -> None:
    res = runner.invoke(main, ["layers", _url()])
    assert res.exit_code == 0, res.stderr
    assert res.stdout.splitlines()[0] == _url(password=None)
    assert f"table {SCHEMA}.parcels -> role parcels: 4 features (MultiPolygon, Polygon), CRS EPSG:2261" in res.stdout
    assert "P-4" in res.stdout and PASSWORD not in res.stdout + res.stderr
    res = runner.invoke(main, ["layers", _url(table="parcels_dup")])  # not a role name: described raw
    assert res.exit_code == 0 and "not a role name; 2 features (Polygon), CRS EPSG:2261" in res.stdout
    assert PASSWORD not in res.stdout
    res = runner.invoke(main, ["layers", _url("wrong-" + PASSWORD)])
    assert res.exit_code == 2 and "password authentication failed" in res.stdout and PASSWORD not in res.stdout

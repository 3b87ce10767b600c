"""Every entry of the bad-input catalogue (tests/catalogue.py), run the way a user runs it.

For each: the exit code (2 for refused inputs, 0 for inputs that are handled with a warning),
the one-line message naming the file / layer / field and the fix, no traceback, no output
folder left behind by a refused run, and every input file byte for byte unchanged (SHA-256).
"""

from __future__ import annotations

import pytest
from catalogue import CATALOGUE, run_case

REQUIRED = {  # issue 2 item 11: the catalogue must hold at least these
    "no_crs", "lonlat_labelled_state_plane", "lonlat_geojson", "mixed_crs", "missing_required_field",
    "lowercase_fields", "bow_tie", "empty_layer", "z_coordinates", "point_in_polygon_layer", "duplicate_ids",
    "corrupt_file", "zero_byte_file", "unknown_rulebook", "dem_without_vertical_units", "out_is_an_input_file",
    "out_would_overwrite_input", "nfhl_sentinels",
    # issue 11: bad numbers, bounded resources, every bad input named
    "option_improvement_cost_nan", "option_openings_sqin_nan", "option_enclosed_sqft_negative",
    "option_lowest_floor_nan", "rulebook_threshold_nan", "rulebook_threshold_negative", "rulebook_threshold_infinite",
    "rulebook_key_typo", "rainfall_infinite", "rainfall_overflow", "project_crs_nan", "dem_declares_60000_square",
    "dem_window_over_the_cap", "fifo_as_parcels", "device_as_project", "rulebook_billion_laughs", "project_too_large",
    "rulebook_too_large", "rulebook_template_attribute_lookup", "rulebook_template_huge_width", "nan_vertices",
    "local_engineering_crs", "dem_infinite_cells", "project_layer_wrong_type", "rulebook_thresholds_not_a_mapping",
    "id_fields_differ_in_case", "out_name_too_long", "url_unreachable", "shapefile_without_dbf", "id_field_missing",
    "project_dem_as_text", "m_values",
    # issue 10 and 12 (input side)
    "duplicate_ids_told_apart", "blank_ids_strict", "dem_z_units_contradict_metadata", "vsizip_shapefile",
    "project_dry_run_fields",
}


def test_catalogue_is_complete():
    assert len(CATALOGUE) >= 90
    assert REQUIRED <= set(CATALOGUE)


@pytest.mark.parametrize("name", sorted(CATALOGUE))
def test_bad_input(name, tmp_path, runner, monkeypatch):
    folder = tmp_path / name
    folder.mkdir()
    monkeypatch.chdir(folder)  # a case may build its inputs relative to the working folder
    run_case(CATALOGUE[name](folder), folder, runner, monkeypatch)
    assert not (folder / "pwned.txt").exists()


AUDIT_A1 = {  # bad inputs found by the input audit (each failed before its fix: see the entries' notes)
    "dem_units_contradict_in_metadata", "dem_compound_crs_contradicts_band_unit", "dem_without_geotransform",
    "dem_ground_control_points_only", "nfhl_len_unit_unknown", "nfhl_len_unit_without_a_value",
    "rainfall_duplicate_header", "inspection_log_duplicate_header", "rainfall_semicolons",
}


def test_audit_entries_are_catalogued():
    assert AUDIT_A1 <= set(CATALOGUE)

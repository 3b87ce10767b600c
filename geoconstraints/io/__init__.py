"""Inputs: sources and project files, PostGIS, layer validation, projection, DEM, CSV tables.

Everything a check reads comes through here, already in one working CRS in feet with
canonical field names (:func:`geoconstraints.io.layers.load_layers`).
"""

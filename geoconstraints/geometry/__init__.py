"""Rule-agnostic geometry engines: overlay areas, BFE, buffer strips, terrain, phasing.

Pure functions over arrays and GeoDataFrames in a projected CRS in feet. Nothing here
knows a rule id or reads a rulebook: callers pass every threshold as a number.
"""

"""Personal values stored as JSON numbers that are not integers, which the free-text scan never
sees (integer ids are scanned as digits; floats are amounts): a card written as a float
(``4111111111111111.0``) and coordinates under a latitude/longitude key. Written here: JSON
numbers are outside every maintained recognizer's reach."""

from __future__ import annotations

from golden_distill.redaction.recognizers.base import luhn_ok

#: keys whose number is a coordinate (the last key of the leaf's path, case-insensitive)
COORDINATE_KEYS = frozenset({"lat", "latitude", "lon", "lng", "long", "longitude"})
#: keys whose list of numbers is a position (GeoJSON ``coordinates``: [longitude, latitude])
COORDINATE_LISTS = frozenset({"coordinates", "coords", "latlng", "lnglat", "position"})
#: decimals a coordinate must carry to place a person (3: ~100 m)
MIN_COORDINATE_DECIMALS = 3


def personal_float(path: tuple[object, ...], value: float) -> str | None:
    """The entity type of a float leaf at ``path``, or None for an ordinary number."""
    key = str(path[-1]).lower() if path else ""
    if isinstance(path[-1] if path else None, int) and len(path) > 1:
        key = str(path[-2]).lower()  # an item of a GeoJSON "coordinates": [lon, lat] list
    if (key in COORDINATE_KEYS or key in COORDINATE_LISTS) and abs(value) <= 180:
        decimals = repr(value).partition(".")[2]
        if len(decimals.rstrip("0")) >= MIN_COORDINATE_DECIMALS and "e" not in decimals:
            return "LOCATION"
    if value.is_integer() and 1e11 <= abs(value) < 1e20:
        digits = str(int(abs(value)))
        if 13 <= len(digits) <= 19 and luhn_ok(digits):
            return "CREDIT_CARD"
    return None

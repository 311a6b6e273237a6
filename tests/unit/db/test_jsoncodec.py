"""The JSON codec of the database's columns and the simulated cloud keeps the standard library's
meaning for every value it stored before (orjson where it can, json where orjson refuses)."""

from __future__ import annotations

import enum
import json
import math
from dataclasses import dataclass
from datetime import UTC, datetime

import pytest

from vnfm.adapters import jsoncodec
from vnfm.adapters.db.engine import json_dumps


class Colour(enum.Enum):
    RED = "red"


@dataclass
class Point:
    x: int


def test_round_trip_of_what_json_accepts() -> None:
    value = {"a": [1, 2.5, None, True, "é"], 3: "int key", "big": 2**80, "nested": {"k": {"deep": []}}}
    text = jsoncodec.dumps(value)
    assert jsoncodec.loads(text) == json.loads(json.dumps(value))
    assert jsoncodec.loads(text)["big"] == 2**80  # beyond 64 bits: written and read by json


def test_nan_is_read_as_json_reads_it() -> None:
    assert math.isnan(jsoncodec.loads('{"x": NaN}')["x"])


def test_the_database_default_is_asked_as_before() -> None:
    at = datetime(2026, 11, 26, 9, 0, 0, 123456, tzinfo=UTC)
    text = json_dumps({"at": at, "c": Colour.RED, "s": {1}, "t": (1, 2)})
    assert json.loads(text) == {"at": at.isoformat(), "c": "red", "s": [1], "t": [1, 2]}


def test_what_json_refused_is_still_refused() -> None:
    with pytest.raises(TypeError):
        json_dumps({"p": Point(1)})  # a dataclass is not serialised behind the mapper's back
    with pytest.raises(TypeError):
        jsoncodec.dumps({"o": object()})

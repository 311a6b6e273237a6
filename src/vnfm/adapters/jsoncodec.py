"""JSON text of the database's JSON columns and of the simulated cloud's documents.

orjson (C; several times faster than the standard library's `json` both ways) with the standard
library's rules kept: keys that are not strings become strings, datetimes and dataclasses go to
`default` as they did, and what orjson refuses (integers beyond 64 bits, lone surrogates, NaN
literals) is written or read by `json` itself, so no value that was stored before is refused now.
The text differs only in form (non-ASCII characters are written as they are, not as \\u escapes).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import orjson

_OPTIONS = orjson.OPT_NON_STR_KEYS | orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_DATACLASS


def dumps(value: Any, default: Callable[[Any], Any] | None = None) -> str:
    try:
        return orjson.dumps(value, default=default, option=_OPTIONS).decode()
    except orjson.JSONEncodeError:  # e.g. an integer beyond 64 bits; `default`'s own refusal again below
        return json.dumps(value, default=default, separators=(",", ":"))


def loads(text: str | bytes) -> Any:
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:  # e.g. NaN, an integer beyond 64 bits
        return json.loads(text)

"""The server's log configuration (entrypoints/logsetup.py): levels, the human and JSON formats,
extra fields as keys, secrets scrubbed from messages, fields and tracebacks."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator

import pytest

from vnfm.entrypoints.logsetup import configure_logging, scrub_text


@pytest.fixture
def restore_loggers() -> Iterator[None]:
    names = ("vnfm", "uvicorn", "uvicorn.error", "uvicorn.access")
    saved = {n: (logging.getLogger(n).level, list(logging.getLogger(n).handlers), logging.getLogger(n).propagate,
                 logging.getLogger(n).disabled) for n in names}
    yield
    for n, (level, handlers, propagate, disabled) in saved.items():
        lg = logging.getLogger(n)
        lg.setLevel(level)
        lg.handlers[:] = handlers
        lg.propagate = propagate
        lg.disabled = disabled


def test_json_lines_with_fields_and_secrets_scrubbed(restore_loggers: None) -> None:
    out = io.StringIO()
    configure_logging("INFO", "json", known_secrets=["t0psecret"], stream=out)
    log = logging.getLogger("vnfm.lcm")
    log.debug("not shown at INFO")
    log.info("stage %s done in %.2fs", "infra_deploy", 1.5, extra={"instance": "i-1", "op": "o-1", "seconds": 1.5})
    log.warning("proxy http://bob:hunter2@proxy:3128 said t0psecret; body {\"password\": \"pa ss\"} token=abc",
                extra={"password": "xyz", "url": "http://u:pw@h"})
    log.info("params", extra={"params": {"master": {"password": "n3sted"}, "note": "t0psecret"}})
    try:
        raise RuntimeError("failed with t0psecret")
    except RuntimeError:
        logging.getLogger("vnfm.service").exception("boom")
    logging.getLogger("uvicorn.error").info("Application startup complete.")
    lines = [json.loads(ln) for ln in out.getvalue().splitlines()]
    assert [d["level"] for d in lines] == ["INFO", "WARNING", "INFO", "ERROR", "INFO"]
    first = lines[0]
    assert first["message"] == "stage infra_deploy done in 1.50s" and first["logger"] == "vnfm.lcm"
    assert (first["instance"], first["op"], first["seconds"]) == ("i-1", "o-1", 1.5)
    assert first["time"].endswith("Z") and first["time"][10] == "T"
    text = out.getvalue()
    for secret in ("hunter2", "t0psecret", "pa ss", "abc", "xyz", ":pw@", "n3sted"):
        assert secret not in text, secret
    assert "master" in lines[2]["params"]  # a structured field is kept, its secrets masked
    assert "Traceback" in lines[3]["exception"] and lines[4]["logger"] == "uvicorn.error"


def test_human_format_and_level(restore_loggers: None) -> None:
    out = io.StringIO()
    configure_logging("WARNING", "human", stream=out)
    logging.getLogger("vnfm.lcm").info("hidden")
    logging.getLogger("vnfm.lcm").warning("taking over %s", "op-1", extra={"op": "op-1", "state": "PROCESSING"})
    (line,) = out.getvalue().splitlines()
    date, clock, level, name, rest = line.split(maxsplit=4)
    assert len(date) == 10 and clock.count(":") == 2 and (level, name) == ("WARNING", "vnfm.lcm")
    assert rest == "taking over op-1  op=op-1  state=PROCESSING"
    out2 = io.StringIO()
    configure_logging("DEBUG", "human", stream=out2)  # again: replaces the handler, no duplicates
    logging.getLogger("vnfm.x").debug("once")
    assert out.getvalue().count("\n") == 1 and out2.getvalue().count("once") == 1
    with pytest.raises(ValueError, match="xml"):
        configure_logging("INFO", "xml")


def test_scrub_text_keeps_harmless_key_values() -> None:
    harmless = "stage instantiate_start: deploying 2 x worker"
    assert scrub_text(harmless) == harmless
    assert scrub_text("client_password='a b' user=ubuntu") == "client_password='***' user=ubuntu"


def test_scrub_text_masks_by_either_separator_and_spares_texts_without_one() -> None:
    """The key-value search is skipped for a text with neither `:` nor `=` (an access line, a
    path); either separator alone still gets a secret key's value masked."""
    assert scrub_text("password=hunter2") == "password=***"
    assert scrub_text('"token": "abc"') == '"token": "***"'
    assert scrub_text("secret_key:xyz") == "secret_key:***"
    line = "GET /vnflcm/v1/vnf_instances/password-reset 200 1.2ms"
    assert scrub_text(line) == line
    assert scrub_text("GET /x?pw=1 s3cr3t", ["s3cr3t"]) == "GET /x?pw=1 ***"


def test_times_formatted_once_per_second_stay_exact() -> None:
    """Both formats cache the text of the current second: records of other seconds (and records
    arriving out of order, from other threads) still show their own time."""
    from vnfm.entrypoints.logsetup import HumanFormatter, JsonFormatter

    human, js = HumanFormatter(), JsonFormatter()
    for created, clock in [(1_700_000_000.250, "22:13:20.250"), (1_700_000_000.875, "22:13:20.875"),
                           (1_700_000_001.125, "22:13:21.125"), (1_699_999_999.5, "22:13:19.500"),
                           (1_700_000_061.0, "22:14:21.000")]:
        record = logging.LogRecord("vnfm.x", logging.INFO, "", 0, "m %s", ("a",), None)
        record.created, record.msecs = created, (created % 1) * 1000
        assert human.format(record) == f"2023-11-14 {clock} INFO    vnfm.x  m a"
        assert json.loads(js.format(record))["time"] == f"2023-11-14T{clock}Z"

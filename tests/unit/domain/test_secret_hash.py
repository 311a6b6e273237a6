"""Client secrets as scrypt hashes; a config whose client has a plain secret is refused in one line."""

from __future__ import annotations

from pathlib import Path

import pytest

from vnfm.config import SettingsError, load_settings
from vnfm.domain.secret_hash import hash_problem, hash_secret, verify_secret


def test_hash_and_verify() -> None:
    encoded = hash_secret("a-long-client-secret")
    assert encoded.startswith("scrypt$16384$8$1$") and "a-long-client-secret" not in encoded
    assert hash_problem(encoded) is None
    assert verify_secret("a-long-client-secret", encoded)
    assert not verify_secret("a-long-client-secreT", encoded)
    assert hash_secret("a-long-client-secret") != encoded  # salted
    for bad in ("a-long-client-secret", "scrypt$1024$8$1$c2FsdA$aGFzaA", "scrypt$16384$8$1$$x", ""):
        assert hash_problem(bad) is not None
        assert not verify_secret("a-long-client-secret", bad)


def test_a_client_with_a_plain_secret_is_one_line_naming_it(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("VNFM_OAUTH2_CLIENTS", raising=False)
    conf = tmp_path / "vnfm.toml"
    conf.write_text('[[oauth2_clients]]\nclient_id = "nfvo"\nsecret_hash = "plain-S3cret"\nroles = ["operator"]\n'
                    'tenant = "a"\n')
    with pytest.raises(SettingsError) as err:
        load_settings(conf)
    (line,) = err.value.lines
    assert line.startswith("setting oauth2_clients (env VNFM_OAUTH2_CLIENTS): secret_hash is not a scrypt hash")
    assert "plain-S3cret" not in line
    conf.write_text(conf.read_text().replace('"operator"', '"root"').replace("plain-S3cret", hash_secret("x" * 16)))
    with pytest.raises(SettingsError) as err:
        load_settings(conf)
    assert "oauth2_clients" in err.value.lines[0]

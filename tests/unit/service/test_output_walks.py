"""The one-pass walks that mask, prune, seal and unseal documents (issue 24 item 4: the API's lists
build thousands of documents, the engine seals a body per stage) give exactly what the plain
recursive definitions give, on random documents full of secrets, nulls, URLs and user data."""

from __future__ import annotations

import random
from typing import Any

from cryptography.fernet import Fernet

from vnfm.domain.secrets import URL_USERINFO, is_secret_key, mask_url_credentials
from vnfm.service import views
from vnfm.service.secrets import PREFIX, SecretBox

KEYS = ["id", "name", "password", "adminPassword", "client-secret", "token", "private_key", "vnfdId", "a", "b",
        "additionalParams", "operationParams", "metadata", "accessInfo", "extensions", "x", "y"]
STRINGS = ["", "plain", "http://user:pw@proxy:3128", "user@host", "https://h/p", "ftp://a:b@c/d", "@", "x://:@"]


def _doc(rnd: random.Random, depth: int = 0) -> Any:
    pick = rnd.random()
    if depth < 4 and pick < 0.35:
        return {rnd.choice(KEYS): _doc(rnd, depth + 1) for _ in range(rnd.randint(0, 5))}
    if depth < 4 and pick < 0.5:
        return [_doc(rnd, depth + 1) for _ in range(rnd.randint(0, 4))]
    return rnd.choice([None, 0, 1, True, False, 2.5, *STRINGS])


def _docs(n: int = 400) -> list[Any]:
    rnd = random.Random(24)
    return [_doc(rnd) for _ in range(n)]


# The definitions the walks replaced, as they were.
def _ref_prune(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: (v if k in views.USER_DATA else _ref_prune(v)) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_ref_prune(v) for v in value]
    return value


def _ref_mask_secrets(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: ("***" if is_secret_key(str(k)) and v not in (None, "") else _ref_mask_secrets(v))
                for k, v in value.items()}
    if isinstance(value, list):
        return [_ref_mask_secrets(v) for v in value]
    return value


def _ref_mask_urls(value: Any) -> Any:
    if isinstance(value, str):
        return mask_url_credentials(value) if "@" in value else value
    if isinstance(value, dict):
        return {k: _ref_mask_urls(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_ref_mask_urls(v) for v in value]
    return value


def _ref_seal(box: SecretBox, value: Any, scope: str) -> Any:
    if isinstance(value, dict):
        return {k: _ref_seal_one(box, v, scope) if is_secret_key(str(k)) else _ref_seal(box, v, scope)
                for k, v in value.items()}
    if isinstance(value, list):
        return [_ref_seal(box, v, scope) for v in value]
    if isinstance(value, str) and "@" in value and URL_USERINFO.search(value):
        return _ref_seal_one(box, value, scope)
    return value


def _ref_seal_one(box: SecretBox, v: Any, scope: str) -> Any:
    if isinstance(v, str) and v and not v.startswith(PREFIX):
        return box._encrypt(v, scope)
    if isinstance(v, dict | list):
        return _ref_seal(box, v, scope)
    return v


def test_output_is_the_masked_pruned_document() -> None:
    for doc in _docs():
        wrapped = {"top": doc, "operationParams": doc, "list": [doc, None]}
        assert views.masked(doc) == _ref_mask_urls(_ref_mask_secrets(doc))
        assert views._output(wrapped) == _ref_mask_urls(_ref_mask_secrets(_ref_prune(wrapped)))
        assert repr(views._output(wrapped)) == repr(_ref_mask_urls(_ref_mask_secrets(_ref_prune(wrapped))))


def test_seal_and_unseal_are_the_plain_walks() -> None:
    box = SecretBox(Fernet.generate_key())
    sealed_some = False
    for n, doc in enumerate(_docs()):
        scope = f"entity-{n}"  # with a scope a value's ciphertext is reused: the two walks compare equal
        sealed = box.seal(doc, scope)
        assert sealed == _ref_seal(box, doc, scope)
        assert box.unseal(sealed) == doc
        sealed_some = sealed_some or PREFIX in repr(sealed)
    assert sealed_some  # the documents did hold secrets


def test_unseal_leaves_the_parts_without_a_secret_unwalked() -> None:
    box = SecretBox(Fernet.generate_key())
    plain = {"vnfcs": [{"id": "v1", "addresses": ["10.0.0.1"]}], "note": "enc:v1 is not a prefix"}
    stored = box.seal({"resources": plain, "driver_state": {"nodes": plain, "kubeadm": {"token": "t0ken"}},
                       "additional_params": {"a": {"b": {"password": "pw"}}}}, "inst-1")
    assert stored["resources"] == plain and stored["additional_params"]["a"]["b"]["password"].startswith(PREFIX)
    opened = box.unseal(stored)
    assert opened == {"resources": plain, "driver_state": {"nodes": plain, "kubeadm": {"token": "t0ken"}},
                      "additional_params": {"a": {"b": {"password": "pw"}}}}
    assert opened is not stored  # a new document, sharing the parts that hold no ciphertext
    assert opened["resources"] is stored["resources"]
    assert opened["driver_state"]["nodes"] is stored["driver_state"]["nodes"]
    assert opened["driver_state"] is not stored["driver_state"]


def test_seal_leaves_the_parts_without_a_secret_word_unwalked() -> None:
    box = SecretBox(Fernet.generate_key())
    plain = {"vnfcs": [{"id": "v1", "addresses": ["10.0.0.1"]}], "flavour": "simple"}
    body = {"resources": plain, "state": {"nodes": plain, "join": {"Kubeadm-TOKEN": "t0ken"}},
            "params": {"proxy": ["http://u:pw@proxy:3128"]}, "other": {"Private-Key": {"x": "pem"}},
            "odd": {"K\u212aey": "plain words", "TO\u212aEN": "with a kelvin sign k"}}
    stored = box.seal(body, "inst-1")
    assert stored["resources"] is plain and stored["state"]["nodes"] is plain  # nothing to seal: not walked
    assert stored["state"]["join"]["Kubeadm-TOKEN"].startswith(PREFIX)
    assert stored["params"]["proxy"][0].startswith(PREFIX)  # a URL with credentials
    assert stored["other"]["Private-Key"] == {"x": "pem"}  # under a secret key, only secret strings are sealed
    assert stored["odd"]["TO\u212aEN"].startswith(PREFIX) and stored["odd"]["K\u212aey"] == "plain words"
    assert box.unseal(stored) == body

from __future__ import annotations

from typing import Any

from vnfm.entrypoints.cli.output import (
    MASK,
    generic_columns,
    key,
    mask_secrets,
    mask_text,
    render_fields,
    render_table,
)


def test_table_columns_are_aligned() -> None:
    rows = [{"id": "a", "state": "ONBOARDED"}, {"id": "long-identifier", "state": "CREATED"}]
    text = render_table(rows, [("ID", key("id")), ("STATE", key("state"))])
    lines = text.splitlines()
    assert lines[0].split() == ["ID", "STATE"]
    assert set(lines[1]) <= {"-", " "}
    # every STATE value starts in the same column as its header
    col = lines[0].index("STATE")
    assert lines[2][col:] == "ONBOARDED"
    assert lines[3][col:] == "CREATED"
    assert lines[3].startswith("long-identifier  ")


def test_table_empty_and_nested_cells() -> None:
    assert render_table([], [("ID", key("id"))]) == "(none)"
    text = render_table(
        [{"a": {"x": 1}, "b": ["p", "q"], "c": None, "d": True}],
        [("A", key("a")), ("B", key("b")), ("C", key("c")), ("D", key("d"))],
    )
    assert '{"x":1}' in text and "p, q" in text and "true" in text


def test_nested_key_getter_tolerates_missing_levels() -> None:
    get = key("instantiatedVnfInfo", "flavourId")
    assert get({"instantiatedVnfInfo": {"flavourId": "simple"}}) == "simple"
    assert get({}) is None
    assert get({"instantiatedVnfInfo": None}) is None


def test_mask_secrets_masks_every_secret_key_at_any_depth() -> None:
    body: dict[str, Any] = {
        "flavourId": "simple",
        "additionalParams": {
            "k8s_cluster_installation_param": {
                "master_node": {"username": "ubuntu", "password": "s3cret-m"},
                "external_lb_param": {"ssh_username": "u", "ssh_password": "s3cret-lb"},
                "proxy": {"http_proxy": "http://user1:password1@host1:8080"},
                "nodes": [{"token": "tok-123"}],
            }
        },
        "accessInfo": {"clientSecret": "abc", "privateKey": {"pem": "----"}},
    }
    masked = mask_secrets(body)
    text = repr(masked)
    for secret in ("s3cret-m", "s3cret-lb", "password1", "tok-123", "abc", "----"):
        assert secret not in text, secret
    p = masked["additionalParams"]["k8s_cluster_installation_param"]
    assert p["master_node"] == {"username": "ubuntu", "password": MASK}
    assert p["external_lb_param"]["ssh_username"] == "u"
    assert p["proxy"]["http_proxy"] == f"http://user1:{MASK}@host1:8080"
    assert masked["flavourId"] == "simple"
    # the original is untouched
    assert body["additionalParams"]["k8s_cluster_installation_param"]["master_node"]["password"] == "s3cret-m"


def test_mask_keeps_empty_values_visible() -> None:
    assert mask_secrets({"password": ""}) == {"password": ""}
    assert mask_secrets({"password": None}) == {"password": None}


def test_mask_text_leaves_plain_urls() -> None:
    assert mask_text("http://host:8080/path") == "http://host:8080/path"
    assert mask_text("see https://bob:pw@x.example/") == f"see https://bob:{MASK}@x.example/"


def test_render_fields_and_generic_columns() -> None:
    text = render_fields({"id": "x", "nested": {"a": 1}, "_links": {"self": {}}})
    assert "id      x" in text and '"a": 1' in text and "_links" not in text
    cols = generic_columns([{"status": "ACTIVE", "name": "n", "id": "1", "vnfInstanceId": "v"}])
    assert [h for h, _ in cols][:3] == ["ID", "vnfInstanceId", "name"]

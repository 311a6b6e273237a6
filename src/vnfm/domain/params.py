"""Declared request parameters: the field types every owner of `additionalParams` keys (the engine,
an infrastructure driver, a management driver) builds its schema from, and parsing that answers a
refusal naming the key path.

The status rule (docs/parameters.md): a value the schema refuses (unknown key, wrong type, a value
its type does not admit, a required key missing) is 400 at its path; a well-formed request that
does not fit this VNFD, this package, this instance's state or this cluster is 422.

Each type admits only what is valid where its value lands (a node script, a configuration file, a
command line, a path on a host); the code that writes it still quotes it for the file it lands in.
A type's `Doc` names it in the generated reference. Secrets are fields whose key the scrubber
recognises (domain/secrets.py); `Secret` refuses what could break a line, and test_params checks
that every secret-typed field has such a key.
"""

from __future__ import annotations

import difflib
import ipaddress
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Generic, Literal, TypeVar
from urllib.parse import urlsplit

from pydantic import (
    AfterValidator,
    AliasChoices,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
)

from vnfm.domain.errors import BadRequest
from vnfm.domain.secrets import is_secret_key


@dataclass(frozen=True)
class Doc:
    """How the reference names a type."""

    label: str


# ============================================================================= value checks
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_VNFD_ID = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.:-]{0,254}$")
_LOGIN = re.compile(r"^[a-z_][a-z0-9_.-]{0,31}$", re.IGNORECASE)
_HOSTNAME = re.compile(r"^(?=.{1,253}$)[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
                       r"(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$")
_ABS = re.compile(r"^/[A-Za-z0-9_./@+-]*$")
_PKG = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_./@+-]*$")
# what a proxy URL may hold: RFC 3986's unreserved and a few delimiters, credentials %-encoded;
# never a quote, a backslash, a blank or a semicolon (the files it lands in: systemd, apt, YAML)
_URL_CHARS = re.compile(r"^[A-Za-z0-9._~:/?#\[\]@!&*+,=%-]+$")
_LABEL = r"[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?"
_NO_PROXY_ITEM = re.compile(rf"^(\*|\*?\.?{_LABEL}(\.{_LABEL})*)(:[0-9]{{1,5}})?$")
_VERSION = re.compile(r"^1\.[0-9]{1,2}\.[0-9]{1,3}$")
_PY_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")
# directories a request may not name (nor anything under the first group): mounting, exporting or
# writing there would change the host's system
SYSTEM_TREES = ("/bin", "/boot", "/dev", "/etc", "/lib", "/lib32", "/lib64", "/libx32", "/proc", "/root",
                "/run", "/sbin", "/sys", "/usr")
SYSTEM_DIRS = ("/", "/home", "/opt", "/srv", "/tmp", "/var", "/var/lib", "/var/log",  # noqa: S108
               "/var/run", "/mnt", "/media")


def check_single_line(value: str) -> str:
    if _CONTROL.search(value):
        raise ValueError("must be one line without control characters")
    return value


def check_vnfd_id(value: str) -> str:
    if not _VNFD_ID.match(value):
        raise ValueError(f"{value!r} contains characters not allowed in a VNFD id")
    return value


def check_login(value: str) -> str:
    if not _LOGIN.match(value):
        raise ValueError(f"{value!r} is not a valid login name")
    return value


def check_ip(value: str) -> str:
    try:
        ipaddress.ip_address(value)
    except ValueError:
        raise ValueError(f"{value!r} is not an IP address") from None
    return value


def check_host(value: str) -> str:
    try:
        ipaddress.ip_address(value)
    except ValueError:
        if not _HOSTNAME.match(value):
            raise ValueError(f"{value!r} is neither an IP address nor a host name") from None
    return value


def check_abs_path(value: str) -> str:
    """A plain absolute path outside the system's directories (trailing slash dropped)."""
    v = value.rstrip("/") or "/"
    if not _ABS.match(v) or "/../" in v + "/" or "/./" in v + "/" or "//" in v:
        raise ValueError(f"{value!r} must be a plain absolute path")
    if v in SYSTEM_DIRS or any(v == t or v.startswith(t + "/") for t in SYSTEM_TREES):
        raise ValueError(f"{value!r} is a system directory (or under one): choose a directory of its own, "
                         "e.g. /var/lib/<name> or /srv/<name>")
    return v


def check_package_path(value: str) -> str:
    """A relative path inside the VNF package ('./' dropped)."""
    v = value[2:] if value.startswith("./") else value
    if not _PKG.match(v) or ".." in v.split("/") or "//" in v:
        raise ValueError(f"{value!r} must be a relative path inside the VNF package")
    return v


def check_proxy_url(value: str) -> str:
    """An http(s) URL with a host; the message never echoes it (it may hold credentials)."""
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.hostname or not _URL_CHARS.match(value) \
            or re.search(r"%(?![0-9A-Fa-f]{2})", value):
        raise ValueError("must be an http:// or https:// URL with a host (no blanks, quotes, backslashes or "
                         "semicolons; credentials %-encoded)")
    return value


def check_no_proxy(value: str) -> tuple[str, ...]:
    items = tuple(x.strip() for x in value.split(",") if x.strip())
    for x in items:
        try:
            ipaddress.ip_network(x.strip("[]"), strict=False)
        except ValueError:
            if not _NO_PROXY_ITEM.match(x):
                raise ValueError(f"{x!r} is not a host, domain or network") from None
    return items


def check_cidr(value: str, info: ValidationInfo) -> str:
    """A network; an address ending in .0 with host bits under its prefix (the seeds' own
    192.168.3.0/16) is read as its network with a warning; other host bits are refused."""
    try:
        iface = ipaddress.ip_interface(value)
    except ValueError:
        raise ValueError(f"{value!r} is not a CIDR (expected e.g. 10.0.0.0/16)") from None
    if "/" not in value:
        raise ValueError(f"{value!r} has no prefix length (expected e.g. {iface.network})")
    net = iface.network
    if iface.ip == net.network_address:
        return str(net)
    if iface.version == 4 and int(iface.ip) % 256 == 0:
        warnings = (info.context or {}).get("warnings")
        if isinstance(warnings, list):
            warnings.append((info.field_name, f"{value!r} has host bits set; using {net}"))
        return str(net)
    raise ValueError(f"{value!r} has host bits set (did you mean {net}?)")


def check_host_port(value: str) -> str:
    """host[:port] or [v6]:port, as an image name references a registry."""
    if "/" in value:
        raise ValueError(f"{value!r} must be a host[:port] without scheme or path (e.g. 192.168.0.10:5000)")
    host, port = value, None
    m = re.match(r"^\[([0-9A-Fa-f:.]+)\](?::([0-9]+))?$", value)
    if m:
        host, port = m.group(1), m.group(2)
    elif value.count(":") == 1:
        host, port = value.split(":")
    check_host(host)
    if port is not None and (not port.isdigit() or not 0 < int(port) < 65536):
        raise ValueError(f"{value!r} has an invalid port")
    return value


def _text(v: str) -> str:
    v = check_single_line(v).strip()
    if not v:
        raise ValueError("must not be empty")
    return v


def _private_key(v: str) -> str:
    if "PRIVATE KEY" not in v or "\x00" in v:
        raise ValueError("must be an OpenSSH or PEM private key text")
    return v


def _secret(v: str) -> str:
    if not v or any(c in v for c in "\x00\r\n"):
        raise ValueError("must be a non-empty single-line string")  # never echo it
    return v


def _export_to(v: str) -> str:
    if v != "*":
        try:
            ipaddress.ip_network(v, strict=False)
        except ValueError:
            raise ValueError(f"{v!r} is not an address or network (e.g. 10.10.0.0/24)") from None
    return v


def _dev(v: str) -> str:
    if not re.match(r"^/dev/[A-Za-z0-9_./:-]+$", v) or "/../" in v + "/":
        raise ValueError(f"{v!r} must be a path under /dev")
    return v


def _version(v: str) -> str:
    if not _VERSION.match(v):
        raise ValueError(f"{v!r} is not a Kubernetes version like 1.30.4")
    return v


def _py_name(v: str) -> str:
    if not _PY_NAME.match(v):
        raise ValueError(f"{v!r} is not a Python class name")
    return v


def _hosts_entry(v: str) -> tuple[str, str]:
    parts = v.split()
    if len(parts) != 2:
        raise ValueError(f"{v!r} must be '<IP address> <FQDN>'")
    check_ip(parts[0])
    if not _HOSTNAME.match(parts[1]):
        raise ValueError(f"{parts[1]!r} is not a host name")
    return parts[0], parts[1]


def _int_to_str(v: Any) -> Any:
    return str(v) if isinstance(v, int) and not isinstance(v, bool) else v


def _typed(check: Callable[..., Any], label: str) -> Any:
    return Annotated[str, AfterValidator(_text), AfterValidator(check), Doc(label)]


# ============================================================================= field types
Text = Annotated[str, AfterValidator(_text), Doc("string")]
VnfdId = _typed(check_vnfd_id, "VNFD id")
CpName = _typed(check_vnfd_id, "CP name")
Login = _typed(check_login, "login")
IpAddress = _typed(check_ip, "IP address")
Host = _typed(check_host, "host")
HostPort = _typed(check_host_port, "host[:port]")
AbsPath = _typed(check_abs_path, "absolute path")
DevPath = _typed(_dev, "/dev path")
PackagePath = _typed(check_package_path, "package path")
Cidr = _typed(check_cidr, "CIDR")
KubernetesVersion = _typed(_version, "version 1.x.y")
PythonName = _typed(_py_name, "Python class name")
ExportTo = _typed(_export_to, "address, network or `*`")
ProxyUrl = Annotated[str, AfterValidator(_text), AfterValidator(check_proxy_url),
                     Doc("URL, secret if it has credentials")]
NoProxy = Annotated[tuple[str, ...], BeforeValidator(lambda v: check_no_proxy(v) if isinstance(v, str) else v),
                    Doc("hosts and networks, comma-separated")]
HostsEntry = Annotated[tuple[str, str], BeforeValidator(lambda v: _hosts_entry(v) if isinstance(v, str) else v),
                       Doc('"IP FQDN"')]
Secret = Annotated[str, AfterValidator(_secret), Doc("string, secret")]
PrivateKey = Annotated[str, AfterValidator(_private_key), Doc("private key text, secret")]
Seconds = Annotated[float, Field(gt=0, le=86400), Doc("number (s)")]
Port = Annotated[int, Field(ge=1, le=65535), Doc("TCP port")]
Mtu = Annotated[int, Field(ge=576, le=9216), Doc("integer 576-9216")]
ConnectionType = Annotated[Literal["0", "1"], BeforeValidator(_int_to_str), Doc('"0" or "1"')]
FreeForm = Annotated[dict[str, Any], Doc("object (free-form)")]


# ============================================================================= models
class Params(BaseModel):
    """A parameter object: a key it does not declare is refused (400, with the nearest known key)."""

    model_config = ConfigDict(extra="forbid", hide_input_in_errors=True, populate_by_name=False)

    def __repr_args__(self) -> Any:  # secrets and proxy URLs (credentials) never in a repr
        for name, value in super().__repr_args__():
            hide = name is not None and (is_secret_key(name) or name.endswith("proxy")) and value is not None
            yield name, "***" if hide else value


def doc(meaning: str, seed: str = "ext", *, default: Any = None, shown: str | None = None, alias: str | None = None,
        aliases: tuple[str, ...] = (), inert: str | None = None, required: str | None = None) -> Any:
    """A field with its reference entry: what it means, the seed that defines it ("ext" for a vnfm
    extension), the default as shown, `inert`: the key is accepted but vnfm does not act on it (a
    warning saying why is stored in the occurrence), `required`: the "required" column when the
    rule is not the plain one (e.g. "one of password, ssh_private_key")."""
    extra: dict[str, Any] = {"seed": seed}
    if shown is not None:
        extra["shown"] = shown
    if inert is not None:
        extra["inert"] = inert
    if required is not None:
        extra["required"] = required
    kw: dict[str, Any] = {"description": meaning, "json_schema_extra": extra}
    if alias is not None:
        kw["alias"] = alias
        if aliases:
            kw["validation_alias"] = AliasChoices(alias, *aliases)
    if default is ...:
        return Field(**kw)
    return Field(default, **kw)


M = TypeVar("M", bound=Params)


def _loc(loc: tuple[Any, ...], root: str) -> str:
    out = root
    for p in loc:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out


def _model_at(model: type[BaseModel], loc: tuple[Any, ...]) -> type[BaseModel] | None:
    current: Any = model
    for step in loc:
        if isinstance(step, int):
            continue
        if not (isinstance(current, type) and issubclass(current, BaseModel)):
            return None
        field = next((f for n, f in current.model_fields.items() if step in (n, f.alias)), None)
        if field is None:
            return None
        current = inner_model(field.annotation)
    return current if isinstance(current, type) and issubclass(current, BaseModel) else None


def inner_model(annotation: Any) -> Any:
    """The model a field holds (through Optional, lists, tuples and Annotated), else the annotation."""
    from typing import get_args
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for a in get_args(annotation):
        found = inner_model(a)
        if isinstance(found, type) and issubclass(found, BaseModel):
            return found
    return annotation


def known_keys(model: type[BaseModel]) -> list[str]:
    """Each field's key, and the other spellings it accepts (`aliases` of `doc`)."""
    out: list[str] = []
    for n, f in model.model_fields.items():
        out.append(f.alias or n)
        if isinstance(f.validation_alias, AliasChoices):
            out += [a for a in f.validation_alias.choices if isinstance(a, str) and a not in out]
    return out


def nearest(key: str, known: list[str]) -> str:
    close = difflib.get_close_matches(key, known, n=1, cutoff=0.6)
    if close:
        return f" (did you mean '{close[0]}'?)"
    return f" (known: {', '.join(sorted(known))})" if len(known) <= 12 else ""


_TYPES = {"string_type": "a string", "dict_type": "an object", "model_type": "an object", "list_type": "a list",
          "tuple_type": "a list", "bool_type": "true or false", "bool_parsing": "true or false",
          "int_type": "an integer", "int_parsing": "an integer", "int_from_float": "an integer",
          "float_type": "a number", "float_parsing": "a number"}
_BOUNDS = {"ge": "at least", "gt": "more than", "le": "at most", "lt": "less than"}
_SUBPATH = re.compile(r"^([A-Za-z_][\w-]*(?:\[\d+\])?(?:\.[A-Za-z_][\w-]*(?:\[\d+\])?)*): (.*)$", re.DOTALL)


def _problem(model: type[BaseModel], err: Any, root: str) -> str:
    loc = tuple(err["loc"])
    path = _loc(loc, root)
    if err["type"] == "extra_forbidden":
        parent = _model_at(model, loc[:-1])
        return f"{path}: not a known key{nearest(str(loc[-1]), known_keys(parent)) if parent else ''}"
    if err["type"] == "missing":
        return f"{path}: is required"
    if err["type"] in _TYPES:
        return f"{path}: must be {_TYPES[err['type']]}, got {type(err.get('input')).__name__}"
    bound = next(((why, (err.get("ctx") or {})[k]) for k, why in _BOUNDS.items() if k in (err.get("ctx") or {})), None)
    if bound is not None:
        return f"{path}: must be {bound[0]} {bound[1]}"
    msg = str(err["msg"]).removeprefix("Value error, ").removeprefix("Assertion failed, ")
    msg = msg.replace("Input should be", "must be", 1)
    sub = _SUBPATH.match(msg)
    here = _model_at(model, loc)
    if sub and here is not None and re.split(r"[.\[]", sub[1])[0] in known_keys(here):
        return f"{path}.{sub[1]}: {sub[2]}"  # a check of the object that names one of its keys
    return f"{path}: {msg}"


def explain(model: type[BaseModel], exc: ValidationError, root: str) -> str:
    """'<path>: <why>' for each error, the first error's path first."""
    return "; ".join(dict.fromkeys(_problem(model, err, root) for err in exc.errors()))


def parse(model: type[M], data: Any, root: str, warnings: list[str] | None = None) -> M:
    """`data` as `model`; BadRequest (400) naming each bad key path under `root` otherwise."""
    try:
        return model.model_validate(data, context={"warnings": warnings if warnings is not None else []})
    except ValidationError as exc:
        raise BadRequest(explain(model, exc, root)) from None


# ============================================================================= declarations
def merge(stored: Mapping[str, Any], extra: Mapping[str, Any], depth: int) -> dict[str, Any]:
    """A scale/heal request's parameters over the stored ones: objects are merged key by key for
    `depth` levels (1: each top-level key replaces the stored one whole), below that replaced whole."""
    out = dict(stored)
    for k, v in extra.items():
        if depth > 1 and isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = merge(out[k], v, depth - 1)
        else:
            out[k] = v
    return out


@dataclass(frozen=True)
class Declared(Generic[M]):
    """The additionalParams keys one owner declares: `model`'s fields are its top-level keys;
    `merge_depth` says once how a scale/heal request's values combine with the stored ones
    (see `merge`); `owner` names it in messages."""

    owner: str
    model: type[M]
    merge_depth: int = 1

    @property
    def keys(self) -> frozenset[str]:
        return frozenset(known_keys(self.model))

    def own(self, params: Mapping[str, Any] | None) -> dict[str, Any]:
        return {k: v for k, v in (params or {}).items() if k in self.keys}

    def parse(self, params: Mapping[str, Any] | None, warnings: list[str] | None = None) -> M:
        return parse(self.model, self.own(params), "additionalParams", warnings)

    def merged(self, stored: Mapping[str, Any] | None, extra: Mapping[str, Any] | None) -> dict[str, Any]:
        return merge(self.own(stored), self.own(extra), self.merge_depth)

    def for_operation(self, operation: str, stored: Mapping[str, Any] | None, extra: Mapping[str, Any] | None,
                      warnings: list[str] | None = None) -> M:
        """Instantiate's parameters, or the stored ones with a later request's over them."""
        if str(operation) == "INSTANTIATE":
            return self.parse(extra, warnings)
        return self.parse(self.merged(stored, extra), warnings)

    def notices(self, extra: Mapping[str, Any] | None) -> list[str]:
        """A warning for each key given that is accepted but not acted on (its field says why)."""
        return inert_given(self.model, self.own(extra), "additionalParams")


def inert_given(model: type[BaseModel], data: Any, path: str) -> list[str]:
    out: list[str] = []
    if not isinstance(data, dict):
        return out
    for name, f in model.model_fields.items():
        key = f.alias or name
        if key not in data or data[key] is None:
            continue
        extra = f.json_schema_extra if isinstance(f.json_schema_extra, dict) else {}
        if extra.get("inert"):
            out.append(f"{path}.{key}: accepted but not acted on: {extra['inert']}")
        sub = inner_model(f.annotation)
        if isinstance(sub, type) and issubclass(sub, BaseModel):
            items = data[key] if isinstance(data[key], list) else [data[key]]
            for i, item in enumerate(items):
                where = f"{path}.{key}[{i}]" if isinstance(data[key], list) else f"{path}.{key}"
                out += inert_given(sub, item, where)
    return out

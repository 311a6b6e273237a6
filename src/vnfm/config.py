"""Settings (pydantic-settings): keyword arguments, then the environment (VNFM_<NAME>), then a TOML
config file (VNFM_CONFIG or `vnfm server --config FILE`; keys are the field names), then the
defaults, which fit the embedded set-up.

    # /etc/vnfm/vnfm.toml
    host = "0.0.0.0"
    port = 9890
    data_dir = "/var/lib/vnfm"
    database_url = "postgresql+psycopg://vnfm@db/vnfm"   # the password: VNFM_DATABASE_URL
    log_format = "json"

`load_settings` turns every bad value into one line naming the setting, its environment variable
and what is wrong (`SettingsError`); `check_runtime` does the same for a data directory that cannot
be written and a database that does not answer.
"""

from __future__ import annotations

import difflib
import ipaddress
import os
import ssl
import tomllib
from contextvars import ContextVar
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from vnfm.adapters.snapshots_s3 import S3Target
from vnfm.domain.access import Role
from vnfm.domain.secret_hash import hash_problem
from vnfm.domain.secrets import mask_url_credentials, scrub
from vnfm.service.secrets import parse_keys

ENV_PREFIX = "VNFM_"
_CONFIG_FILE: ContextVar[Path | None] = ContextVar("vnfm_config_file", default=None)


class SettingsError(Exception):
    """Bad settings: `lines` says, one line each, which setting is wrong and why."""

    def __init__(self, lines: list[str]) -> None:
        super().__init__("\n".join(lines))
        self.lines = lines


def _worker_id() -> str:
    return f"{os.uname().nodename}-{os.getpid()}"


class OAuthClient(BaseModel):
    """A client of the built-in OAuth 2.0 authorization server (`[[oauth2_clients]]` in the config file)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    client_id: str = Field(min_length=1, max_length=128, pattern=r"^[A-Za-z0-9._~-]+$")
    secret_hash: str = Field(repr=False)  # `vnfm auth hash-secret`: never the secret itself
    roles: list[Role] = Field(min_length=1)
    tenant: str = Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9._~-]+$")

    @field_validator("secret_hash")
    @classmethod
    def _hashed(cls, value: str) -> str:
        problem = hash_problem(value)
        if problem is not None:
            raise ValueError(f"secret_hash {problem}")
        return value


class MtlsClient(BaseModel):
    """A client known by its certificate (`[[mtls_clients]]`): the subject common name of a
    certificate `tls_client_ca` verified."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    common_name: str = Field(min_length=1, max_length=128)
    roles: list[Role] = Field(min_length=1)
    tenant: str = Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9._~-]+$")


LOOPBACK_HOSTS = frozenset({"127.0.0.1", "::1", "localhost"})


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix=ENV_PREFIX, extra="ignore", validate_default=True)

    data_dir: Path = Path("var")
    database_url: str = Field(default="", repr=False)  # default: sqlite in the data dir
    host: str = "127.0.0.1"
    port: int = Field(default=9890, ge=0, le=65535)
    # TLS for the API server: both or neither (PEM files)
    tls_cert: Path | None = None
    tls_key: Path | None = None
    # Mutual TLS: client certificates verified against this CA bundle (PEM); `mtls_clients` maps
    # their common names to roles and a tenant.
    tls_client_ca: Path | None = None
    mtls_clients: list[MtlsClient] = Field(default_factory=list)
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "INFO"
    log_format: Literal["human", "json"] = "human"
    # Simulated cloud latencies (seconds).
    sim_boot_time: float = Field(default=0.05, ge=0)
    sim_step_time: float = Field(default=0.005, ge=0)
    # The simulated cloud's address pools (see SimConfig): an external network created on demand
    # is a /sim_external_prefix of sim_external_pool (a /16: Tacker's samples share one network).
    sim_mgmt_cidr: str = "10.10.0.0/16"
    sim_public_cidr: str = "172.24.0.0/16"
    sim_external_pool: str = "10.16.0.0/12"
    sim_external_prefix: int = Field(default=16, ge=8, le=30)
    sim_internal_pool: str = "10.64.0.0/10"
    # How long a write of the simulated cloud waits for another process's (a paused server holding
    # the store's lock) before the operation's stage fails (seconds).
    sim_lock_timeout: float = Field(default=5.0, gt=0)
    # How long each node step on a simulated VM takes (the twin of kubeadm, etcd, ...; 0: instant).
    sim_node_step_time: float = Field(default=0.0, ge=0)
    # How long the certificates of a simulated control plane last (kubeadm: one year); tests
    # shorten it to reach certificate expiry
    sim_cert_validity: float = Field(default=365 * 86400.0, gt=0)
    # The clusters' certificate expiry watch (service/certificates.py): seconds between two checks
    # of an instance (0: no watch in this process), the warning's and the automatic renewal's
    # thresholds in days before the earliest expiry, and whether renewal is automatic (off).
    cert_check_interval: float = Field(default=3600.0, ge=0)
    cert_warn_days: float = Field(default=45.0, ge=0)
    cert_renew_days: float = Field(default=30.0, ge=0)
    cert_auto_renew: bool = False
    # The simulated clusters' Kubernetes API listener (HTTPS); port 0: any free port, chosen when
    # the first cluster registers as a VIM (a fixed port keeps registered VIM URLs valid across restarts).
    sim_kube_api_host: str = "127.0.0.1"
    sim_kube_api_port: int = Field(default=0, ge=0, le=65535)
    # How long the Kubernetes infrastructure driver waits for a CNF's pods to be Ready (seconds).
    kube_ready_timeout: float = Field(default=600.0, gt=0)
    # The simulated cloud as a VIM (with its API, /sim/v1): on in the embedded default (`vnfm server`
    # without a config, `vnfm demo`, the tests), off in the shipped production configuration.
    simulator: bool = True
    # The simulator's fault-injection API (/sim/v1/faults): for tests and demos only.
    fault_injection: bool = False
    # Run the LCM engine in this process (several processes may share one PostgreSQL database).
    run_engine: bool = True
    worker_id: str = Field(default_factory=_worker_id)
    # Occurrences whose owner has not heart-beaten for this long are taken over (FAILED_TEMP).
    orphan_after: float = Field(default=30.0, ge=0)
    # Bounded waits on the database (seconds; PostgreSQL: lock_timeout, statement_timeout and
    # idle_in_transaction_session_timeout of every session) and its connection pool (a request
    # that gets no connection within db_pool_timeout is answered 503 with Retry-After).
    db_lock_timeout: float = Field(default=5.0, gt=0)
    db_statement_timeout: float = Field(default=30.0, gt=0)
    db_idle_in_transaction_timeout: float = Field(default=10.0, gt=0)
    db_pool_size: int = Field(default=10, ge=1)
    db_pool_overflow: int = Field(default=10, ge=0)
    db_pool_timeout: float = Field(default=5.0, gt=0)
    # HTTP: a request head must arrive within http_head_timeout of the connection (or of the
    # previous response); a body may pause at most http_body_timeout between two reads; idle
    # keep-alive connections close after http_keep_alive; at most http_max_connections at once.
    http_head_timeout: float = Field(default=30.0, gt=0)
    http_body_timeout: float = Field(default=30.0, gt=0)
    http_keep_alive: float = Field(default=5.0, gt=0)
    http_max_connections: int = Field(default=4096, ge=1)
    # Notifications a process stored but did not deliver (it died) are delivered by another after this.
    notify_reclaim_after: float = Field(default=300.0, ge=0)
    # GET /metrics reads the database's counts at most once per this many seconds (a scrape storm
    # cannot load the database); 0 reads them at every scrape.
    metrics_cache_seconds: float = Field(default=5.0, ge=0, le=300)
    # Node-health watching (service/fm): one watcher per process checks its share of the instantiated
    # instances every health_interval seconds (+-20 %), health_batch at a time; 0 turns it off.
    health_interval: float = Field(default=10.0, ge=0)
    health_batch: int = Field(default=20, ge=1)
    # A VNFC a cluster driver made a node that the cluster's API does not list is alarmed
    # (KUBERNETES_NODE_ABSENT) once missing this many seconds (a node's NotReady takes 40 s).
    health_absent_grace: float = Field(default=40.0, ge=0)
    # Automatic heal of instances with vnfConfigurableProperties.isAutohealEnabled: a VNFC unhealthy
    # for autoheal_after seconds is healed, unless more than autoheal_max_unhealthy (a share) of the
    # cluster's nodes are unhealthy, or the cluster had autoheal_max_per_hour automatic heals in the
    # last hour (a master only while the other masters keep etcd's quorum).
    autoheal_after: float = Field(default=30.0, ge=0)
    autoheal_max_unhealthy: float = Field(default=0.4, ge=0, le=1)
    autoheal_max_per_hour: int = Field(default=3, ge=0)
    # Scheduled etcd backups of cluster VNFs (service/backups.py), each with a restore drill: seconds
    # between two backups of a cluster whose instantiate request set no `etcd_backup` (0: off, the
    # default; the request's `etcd_backup.interval` turns it on per cluster), how many the VNFM's store
    # keeps per cluster, how often a process looks for clusters due (0: no backup task in this process).
    etcd_backup_interval: float = Field(default=0.0, ge=0)
    etcd_backup_keep: int = Field(default=7, ge=1, le=20)
    etcd_backup_round: float = Field(default=60.0, ge=0)
    # The backups' store: <data_dir>/etcd-backups, or with an endpoint (http(s)://host[:port]) an
    # S3-compatible bucket (adapters/snapshots_s3.py; the bucket must exist), objects
    # <prefix>/<instance id>/<name>; the keys are secrets (never shown, logged or in an error).
    etcd_backup_s3_endpoint: str = ""
    etcd_backup_s3_bucket: str = ""
    etcd_backup_s3_prefix: str = "vnfm/etcd-backups"
    etcd_backup_s3_region: str = ""
    etcd_backup_s3_access_key: str = Field(default="", repr=False)
    etcd_backup_s3_secret_key: str = Field(default="", repr=False)
    # Lists longer than this are paged (SOL013 5.4.2: Link rel="next"); 0 sends every item at once.
    page_size: int = Field(default=1000, ge=0)
    # Extra hook bindings: implementation/artifact name -> driver name ("a=b,c=d").
    driver_bindings: str = ""
    max_package_size: int = Field(default=512 * 1024 * 1024, gt=0)
    # Where the server connects for a caller (callbacks, token endpoints, package URIs): never to
    # loopback, link-local, metadata (adapters/remote/egress) or these networks, unless allowed here.
    egress_allow_networks: list[str] = Field(default_factory=list)
    egress_deny_networks: list[str] = Field(default_factory=list)
    # The client certificate (PEM) notifications present to subscribers whose authentication is
    # TLS_CERT (SOL013 8.3.4); without it such subscriptions are refused.
    notify_client_cert: Path | None = None
    notify_client_key: Path | None = None
    # SOL003: test a subscription's callback URI (GET, expect 204) before accepting it.
    probe_callbacks: bool = True
    # Fernet keys encrypting stored secrets, comma-separated, newest first (rotation: "NEW,OLD");
    # default: <data_dir>/secret.key, generated once.
    secret_key: str = Field(default="", repr=False)
    # When set, every request may authenticate with it (X-Auth-Token or Bearer) as an admin of the
    # default tenant: for development only (OAuth 2.0 clients below are what production uses).
    auth_token: str = Field(default="", repr=False)
    # Listen beyond loopback without any authentication (VNFM_ALLOW_INSECURE_NO_AUTH=1 and
    # `vnfm server --insecure-no-auth`): anyone who reaches the port is an admin. Never in production.
    allow_insecure_no_auth: bool = False
    # The built-in OAuth 2.0 authorization server (POST /oauth2/token, client credentials).
    oauth2_clients: list[OAuthClient] = Field(default_factory=list, repr=False)
    oauth2_issuer: str = "vnfm"  # the `iss` of the tokens it signs
    oauth2_audience: str = "vnfm"  # the `aud` every accepted JWT must carry
    oauth2_token_lifetime: int = Field(default=300, ge=30, le=3600)
    # An external authorization server: JWTs checked against its JWKS, or opaque tokens by introspection.
    oauth2_external_issuer: str = ""
    oauth2_jwks_url: str = ""
    # A token naming a key the cached JWKS lacks refetches it, at most once per this many seconds.
    oauth2_jwks_refetch_after: float = Field(default=30.0, ge=0)
    oauth2_introspection_url: str = ""
    oauth2_introspection_client_id: str = ""
    oauth2_introspection_client_secret: str = Field(default="", repr=False)
    # The claims that carry a caller's roles (a list, or words of `scope`) and tenant.
    oauth2_roles_claim: str = "roles"
    oauth2_tenant_claim: str = "tenant"

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        sources: list[PydanticBaseSettingsSource] = [init_settings, env_settings]
        config = config_file()
        if config is not None:
            sources.append(TomlConfigSettingsSource(settings_cls, toml_file=config))
        return tuple(sources)

    @field_validator("egress_allow_networks", "egress_deny_networks")
    @classmethod
    def _networks(cls, value: list[str]) -> list[str]:
        for net in value:
            try:
                ipaddress.ip_network(net, strict=False)
            except ValueError:
                raise ValueError(f"{net!r} is no network (CIDR such as 10.0.0.0/8 or fd00::/8)") from None
        return value

    @field_validator("secret_key")
    @classmethod
    def _fernet_keys(cls, value: str) -> str:
        if value:
            parse_keys(value)
        return value

    @model_validator(mode="after")
    def _derived(self) -> Settings:
        if not self.database_url:
            self.database_url = f"sqlite:///{self.data_dir / 'vnfm.db'}"
        if (self.tls_cert is None) != (self.tls_key is None):
            raise ValueError("tls_cert and tls_key go together: set both (or neither)")
        if (self.notify_client_cert is None) != (self.notify_client_key is None):
            raise ValueError("notify_client_cert and notify_client_key go together: set both (or neither)")
        if self.tls_client_ca is not None and not self.tls:
            raise ValueError("tls_client_ca needs tls_cert and tls_key (client certificates come with TLS)")
        if self.mtls_clients and self.tls_client_ca is None:
            raise ValueError("mtls_clients need tls_client_ca (the CA their certificates are checked against)")
        if bool(self.oauth2_external_issuer) != bool(self.oauth2_jwks_url):
            raise ValueError("oauth2_external_issuer and oauth2_jwks_url go together: set both (or neither)")
        ids = [c.client_id for c in self.oauth2_clients]
        if len(ids) != len(set(ids)):
            raise ValueError("oauth2_clients: a client_id appears twice")
        if self.etcd_backup_s3_endpoint:
            self.etcd_backup_s3  # noqa: B018 - checked whole now: a bad store stops the start, not a backup
        elif self.etcd_backup_s3_bucket or self.etcd_backup_s3_access_key or self.etcd_backup_s3_secret_key:
            raise ValueError("etcd_backup_s3_bucket / _access_key / _secret_key need etcd_backup_s3_endpoint "
                             "(without it the backups go to the data directory)")
        if self.fault_injection and not self.simulator:
            raise ValueError("fault_injection needs the simulator (simulator = true): it injects simulated faults")
        return self

    @property
    def auth_configured(self) -> bool:
        """Some way for callers to authenticate is set up (else every caller is an anonymous admin)."""
        return bool(self.auth_token or self.oauth2_clients or self.oauth2_jwks_url or self.oauth2_introspection_url
                    or self.mtls_clients)

    @property
    def loopback_only(self) -> bool:
        return self.host in LOOPBACK_HOSTS or self.host.startswith("127.")

    @property
    def etcd_backup_s3(self) -> S3Target | None:
        """The S3-compatible store of the etcd backups (None: the data directory's)."""
        if not self.etcd_backup_s3_endpoint:
            return None
        return S3Target(self.etcd_backup_s3_endpoint, self.etcd_backup_s3_bucket, self.etcd_backup_s3_access_key,
                        self.etcd_backup_s3_secret_key, self.etcd_backup_s3_prefix, self.etcd_backup_s3_region)

    @property
    def sim_state_file(self) -> Path:
        return self.data_dir / "simcloud.db"  # SQLite; an older simcloud.json is imported once

    @property
    def package_cache(self) -> Path:
        return self.data_dir / "packages"

    @property
    def tls(self) -> bool:
        return self.tls_cert is not None


def config_file() -> Path | None:
    """The TOML config file in effect: the one `load_settings` was given, else VNFM_CONFIG."""
    chosen = _CONFIG_FILE.get()
    if chosen is not None:
        return chosen
    env = os.environ.get(f"{ENV_PREFIX}CONFIG")
    return Path(env) if env else None


def _describe(err: dict[str, Any]) -> str:
    loc = [str(p) for p in err.get("loc", ())]
    name = loc[0] if loc else ""
    msg = str(err.get("msg", "invalid")).removeprefix("Value error, ")
    if not name:
        return f"settings: {msg}"
    value = err.get("input")
    hidden = ("auth_token", "database_url", "oauth2_clients", "oauth2_introspection_client_secret", "secret_key")
    shown = "" if name in hidden or isinstance(value, dict | list) else f" (got {value!r})"
    return f"setting {name} (env {ENV_PREFIX}{name.upper()}): {msg}{shown}"


def _check_keys(path: Path) -> None:
    """A key the settings do not have (a typo) is an error, not silently ignored."""
    try:
        data = tomllib.loads(path.read_text())
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise SettingsError([f"config file {path}: {exc}"]) from None
    lines = []
    for key in sorted(set(data) - set(Settings.model_fields)):
        near = difflib.get_close_matches(key, list(Settings.model_fields), n=1)
        lines.append(f"config file {path}: unknown setting {key!r}"
                     + (f" (did you mean {near[0]!r}?)" if near else ""))
    if lines:
        raise SettingsError(lines)


def load_settings(config: Path | None = None, **overrides: Any) -> Settings:
    """Settings from `overrides`, the environment and the config file; SettingsError lists every bad one."""
    if config is not None and not config.is_file():
        raise SettingsError([f"config file {config}: not found"])
    found = config or config_file()
    if found is not None and not found.is_file():
        raise SettingsError([f"config file {found} (env {ENV_PREFIX}CONFIG): not found"])
    if found is not None:
        _check_keys(found)
    token = _CONFIG_FILE.set(found)
    try:
        return Settings(**overrides)
    except ValidationError as exc:
        raise SettingsError([_describe(dict(e)) for e in exc.errors()]) from None
    except ValueError as exc:  # a config file that is not TOML
        raise SettingsError([f"config file {found}: {exc}"]) from None
    finally:
        _CONFIG_FILE.reset(token)


def _tls_problems(settings: Settings) -> list[str]:
    """The server's certificate and key load together (a PEM that is not one, a key of another
    certificate), as uvicorn would load them only once the engine runs."""
    if settings.tls_cert is None or settings.tls_key is None:
        return []
    if not (os.access(settings.tls_cert, os.R_OK) and os.access(settings.tls_key, os.R_OK)):
        return []  # said above
    try:
        ssl.create_default_context(ssl.Purpose.CLIENT_AUTH).load_cert_chain(settings.tls_cert, settings.tls_key)
    except (ssl.SSLError, OSError) as exc:
        why = getattr(exc, "reason", None) or exc.strerror or str(exc)
        return [f"setting tls_cert / tls_key (env {ENV_PREFIX}TLS_CERT / {ENV_PREFIX}TLS_KEY): {settings.tls_cert} "
                f"and {settings.tls_key} do not load as a certificate and its key ({why})"]
    return []


def _key_file_problems(settings: Settings) -> list[str]:
    """Without secret_key, <data_dir>/secret.key (when there) holds a Fernet key."""
    path = settings.data_dir / "secret.key"
    if settings.secret_key or not path.exists():
        return []
    try:
        parse_keys(path.read_text(encoding="ascii").strip() or "-")
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        why = exc.strerror if isinstance(exc, OSError) else "not a Fernet key"
        return [f"secret key file {path} ({why}): restore it from your backup, or give the key in "
                f"{ENV_PREFIX}SECRET_KEY; a new key cannot decrypt the stored credentials"]
    return []


def check_runtime(settings: Settings, ping: Any = None) -> None:
    """The data directory can be written, the TLS files read and (given `ping(url)`) the database
    answers; SettingsError with one line per problem otherwise."""
    problems: list[str] = []
    data = settings.data_dir
    try:
        data.mkdir(parents=True, exist_ok=True)
        probe = data / ".vnfm-write-test"
        probe.write_text("ok")
        probe.unlink()
    except OSError as exc:
        why = exc.strerror or str(exc)
        problems.append(f"setting data_dir (env {ENV_PREFIX}DATA_DIR): {data} cannot be written ({why})")
    for name in ("tls_cert", "tls_key", "tls_client_ca", "notify_client_cert", "notify_client_key"):
        path = getattr(settings, name)
        if path is not None and not os.access(path, os.R_OK):
            problems.append(f"setting {name} (env {ENV_PREFIX}{name.upper()}): {path} cannot be read")
    problems += _tls_problems(settings) + _key_file_problems(settings)
    if ping is not None and not problems:
        try:
            ping(settings.database_url)
        except Exception as exc:  # any driver error: say which database and the first line of why
            text = str(exc).strip()
            reason = scrub(text.splitlines()[0] if text else "", [settings.database_url])
            where = mask_url_credentials(settings.database_url)
            problems.append(f"setting database_url (env {ENV_PREFIX}DATABASE_URL): {where} does not answer "
                            f"({type(exc).__name__}{': ' + reason if reason else ''})")
    if not settings.auth_configured and not settings.loopback_only and not settings.allow_insecure_no_auth:
        problems.append(
            f"setting host (env {ENV_PREFIX}HOST): listening on {settings.host} needs authentication: configure "
            "oauth2_clients (built-in OAuth 2.0 server), oauth2_jwks_url or oauth2_introspection_url (an external "
            "one) or, for development, auth_token; or accept that anyone who reaches the port is an admin with "
            f"--insecure-no-auth ({ENV_PREFIX}ALLOW_INSECURE_NO_AUTH=1)")
    if problems:
        raise SettingsError(problems)

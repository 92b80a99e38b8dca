"""One Settings object (env prefix MEMVET_), read once at the entry point and passed down."""

from __future__ import annotations

from pathlib import Path

import platformdirs
from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict


def default_data_dir() -> Path:
    return Path(platformdirs.user_data_dir("memvet", appauthor=False))


def default_cache_dir() -> Path:
    return Path(platformdirs.user_cache_dir("memvet", appauthor=False))


class Settings(BaseSettings):
    """Everything configurable. Init arguments override the environment (tests use that)."""

    model_config = SettingsConfigDict(env_prefix="MEMVET_", extra="ignore")

    data_dir: Path = Field(default_factory=default_data_dir)
    cache_dir: Path = Field(default_factory=default_cache_dir)  # derived model files (ONNX)
    database_url: str | None = None  # default: SQLite in the data dir
    chroma_url: str | None = None  # default: embedded Chroma in the data dir
    host: str = "127.0.0.1"
    port: int = 8765
    public_url: str | None = None  # how people reach the dashboard, if not http://host:port

    embedder: str = "onnx"  # onnx | torch | fake (tests only)
    # A local sentence-transformers model directory (e.g. a multilingual one); unset: the
    # packaged all-MiniLM-L6-v2. Switching takes `memvet reindex` (the old model serves until
    # the new one's collections are complete).
    embedding_model: str | None = None
    equivalence_threshold: float | None = None  # default: the embeddings package's measured one
    semantic_equivalence: bool = True
    decision_weight: float = 1.25
    postmortem_weight: float = 1.25

    extractor: str = "learned"  # learned | heuristic | llm
    extractor_model: Path | None = None  # the learned extractor's model.npz (default: shipped)
    llm_base_url: str | None = None
    llm_model: str | None = None
    llm_api_key: str | None = None
    llm_timeout: float = 20.0
    llm_fallback: bool = True
    extraction_workers: int = 2

    default_persona: str = "default"
    archive_days: int = 30
    sweep_interval_s: float = 3600.0
    outbox_interval_s: float = 5.0

    max_body_bytes: int = 2 * 1024 * 1024
    max_query_depth: int = 12  # GraphQL: nesting depth of one operation
    max_query_tokens: int = 2000  # GraphQL: tokens in one document
    max_query_aliases: int = 30  # GraphQL: aliases in one operation
    max_batch_operations: int = 10  # GraphQL: operations in one batched POST
    # GraphiQL loads its scripts from a CDN, which the dashboard's CSP (and an offline
    # machine) does not allow: off unless asked for.
    graphiql: bool = False
    # Host names the API answers to besides loopback (comma-separated), e.g. the name a
    # reverse proxy forwards. On a loopback bind anything else is refused (DNS rebinding);
    # on another bind the check runs only when this is set.
    allowed_hosts: str = ""
    log_level: str = "INFO"

    @field_validator("data_dir", mode="before")
    @classmethod
    def _expand(cls, value: object) -> object:
        return Path(str(value)).expanduser() if value else value

    @field_validator("embedding_model", mode="before")
    @classmethod
    def _model_dir(cls, value: object) -> object:
        if value is None or not str(value).strip():
            return None
        return str(Path(str(value).strip()).expanduser().resolve())

    @property
    def sqlite_path(self) -> Path:
        return self.data_dir / "memvet.db"

    @property
    def db_url(self) -> str:
        return self.database_url or f"sqlite:///{self.sqlite_path}"

    @property
    def embedded(self) -> bool:
        """True when some part lives in the data dir and so belongs to one process."""
        return self.database_url is None or self.chroma_url is None

    @property
    def allowed_host_names(self) -> list[str] | None:
        """Host names /graphql and /mcp answer to; None means any."""
        from memvet.api.security import allowed_hosts

        return allowed_hosts(self.host, self.public_url, self.allowed_hosts.split(","))

    @property
    def base_url(self) -> str:
        return (self.public_url or f"http://{self.host}:{self.port}").rstrip("/")

"""A model entry's `endpoints:` or `endpoints_file:`: the servers of one OpenAI-compatible model
used as a pool."""

from __future__ import annotations

import re
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from stratagem.errors import StratagemError
from stratagem.experiments.limits import MAX_CONCURRENCY
from stratagem.experiments.quotas import LimitsConfig


class EndpointEntry(BaseModel):
    """One server of a model's pool (issue 26): calls go to the pool, not one `base_url`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    base_url: str
    """The server's OpenAI-compatible URL, e.g. http://gpu-3:8000/v1."""
    max_concurrency: int | None = Field(None, ge=1, le=MAX_CONCURRENCY)
    """Calls in flight on this server at once; none of its own by default."""
    limits: LimitsConfig = LimitsConfig()
    """This server's own rate limits (the fields of `models[].limits`), on top of the model's
    and kept per process: a call goes to a server whose quota is free, and waits only when none
    is (`llm.pool`); none by default."""
    api_key_env: str | None = None
    """Its key's environment variable; the model's `api_key_env` by default."""

    @field_validator("base_url")
    @classmethod
    def _url(cls, value: str) -> str:
        scheme, sep, rest = value.partition("://")
        if scheme not in ("http", "https") or not sep or not rest.split("/")[0]:
            raise ValueError(f"'{value}' is not an http(s) URL, e.g. http://gpu-3:8000/v1")
        return value

    @field_validator("api_key_env")
    @classmethod
    def _env_name(cls, value: str | None) -> str | None:
        if value is not None and not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", value):
            raise ValueError("must be the NAME of an environment variable holding the key")
        return value


def pool_of(entry_endpoints: list[EndpointEntry] | None, file: str | None) -> list[EndpointEntry]:
    """A model entry's servers: its `endpoints`, or its `endpoints_file` read now, when the run
    starts (a cluster job writes the file after the experiment file)."""
    return list(entry_endpoints or ()) if file is None else read_endpoints_file(file)


def read_endpoints_file(file: str) -> list[EndpointEntry]:
    """One URL a line, blank lines and `#` comments ignored; a relative path is relative to the
    current directory, as `output` is. Errors are one line naming the file (and the line)."""
    path = Path(file)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise StratagemError(f"endpoints_file {file}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else "not UTF-8 text"
        raise StratagemError(f"endpoints_file {file}: cannot read it ({why})") from None
    found: list[EndpointEntry] = []
    for number, line in enumerate(text.splitlines(), 1):
        url = line.split("#", 1)[0].strip()
        if not url:
            continue
        try:
            found.append(EndpointEntry(base_url=url))
        except ValidationError as exc:
            why = str(exc.errors()[0]["msg"]).removeprefix("Value error, ")
            raise StratagemError(f"endpoints_file {file}, line {number}: {why}") from None
    if not found:
        raise StratagemError(
            f"endpoints_file {file}: lists no URL (one a line, e.g. http://gpu-3:8000/v1)"
        )
    return found

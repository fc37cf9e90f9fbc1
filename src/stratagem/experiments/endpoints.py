"""A model entry's `endpoints:` or `endpoints_file:`: the servers of one OpenAI-compatible model
used as a pool.

Each URL is checked as any `base_url` is (`llm.server_urls`: http(s), a host, a valid port, no
credentials). A server listed twice, in any spelling, is refused naming both places rather than
merged: a list that names one server twice is a mistake (a job that appends its hosts on every
restart, two entries with different settings) whose fix only its author knows; merged, it
would hide it. A pool holds at most `MAX_ENDPOINTS` servers.
"""

from __future__ import annotations

import re
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from stratagem.errors import StratagemError
from stratagem.experiments.limits import MAX_CONCURRENCY, MAX_ENDPOINTS
from stratagem.experiments.quotas import LimitsConfig
from stratagem.llm.server_urls import check_url, first_repeat, server_key


class EndpointEntry(BaseModel):
    """One server of a model's pool (issue 26): calls go to the pool, not one `base_url`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    base_url: str
    """The server's OpenAI-compatible URL, e.g. http://gpu-3:8000/v1, checked as a model's
    `base_url` is."""
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
        return check_url(value)

    @field_validator("api_key_env")
    @classmethod
    def _env_name(cls, value: str | None) -> str | None:
        if value is not None and not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", value):
            raise ValueError("must be the NAME of an environment variable holding the key")
        return value


def check_pool(entries: list[EndpointEntry]) -> None:
    """Refuse an inline `endpoints:` list with more than `MAX_ENDPOINTS` servers or one server
    twice: a `ValueError` whose message starts with the field (`endpoints.3: ...`)."""
    if len(entries) > MAX_ENDPOINTS:
        raise ValueError(
            f"endpoints: {len(entries):,} servers, more than the {MAX_ENDPOINTS:,} one pool may "
            "have (MAX_ENDPOINTS)"
        )
    repeat = first_repeat([entry.base_url for entry in entries])
    if repeat is not None:
        first, again = repeat
        url = entries[again].base_url
        raise ValueError(f"endpoints.{again}: {_twice(url, f'endpoints.{first}')}")


def _twice(url: str, first: str) -> str:
    return f"{url} is {first} again (one server: {server_key(url)}); list each server once"


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
    lines: dict[str, int] = {}
    for number, line in enumerate(text.splitlines(), 1):
        url = line.split("#", 1)[0].strip()
        if not url:
            continue
        where = f"endpoints_file {file}, line {number}"
        if len(found) == MAX_ENDPOINTS:
            raise StratagemError(
                f"{where}: more than {MAX_ENDPOINTS:,} servers in one pool (MAX_ENDPOINTS)"
            )
        try:
            entry = EndpointEntry(base_url=url)
        except ValidationError as exc:
            why = str(exc.errors()[0]["msg"]).removeprefix("Value error, ")
            raise StratagemError(f"{where}: {why}") from None
        first = lines.setdefault(server_key(url), number)
        if first != number:
            raise StratagemError(f"{where}: {_twice(url, f'line {first}')}")
        found.append(entry)
    if not found:
        raise StratagemError(
            f"endpoints_file {file}: lists no URL (one a line, e.g. http://gpu-3:8000/v1)"
        )
    return found

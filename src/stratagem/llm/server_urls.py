"""The URL of a model's server (`base_url`, a pool's endpoints): checked before anything is sent,
and compared as the server it names.

A URL is where a credential gets pasted by mistake (`http://user:password@host/v1`): it would be
sent, stored with every call and printed in errors, so it is refused, and the refusal shows the
URL with its `user:password@` part masked. Two spellings of one server (`HTTP://GPU-1:80/v1/`
and `http://gpu-1/v1`) are one server: a pool listing both would send it twice its share.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from urllib.parse import urlsplit

SCHEMES = ("http", "https")
DEFAULT_PORTS = {"http": 80, "https": 443}
EXAMPLE = "http://gpu-3:8000/v1"
_UNPRINTABLE = re.compile(r"[\s\x00-\x1f\x7f]")


def masked(url: str) -> str:
    """`url` as an error may show it: all from the start of its host part to its last `@` (a
    `user:password@`, a lone token, a password with a `/` in it) is `***`, also in a string that
    is not a valid URL."""
    at = url.rfind("@")
    if at < 0:
        return url
    start = url.find("://") + 3 if "://" in url[:at] else 0
    return url[:start] + "***" + url[at:]


def check_url(url: str) -> str:
    """`url` if it is an http(s) URL naming a host, with a valid port and no credentials; else a
    `ValueError` whose message names the problem and shows the URL masked (`masked`)."""
    shown = masked(url)
    if "@" in url:
        raise ValueError(
            f"'{shown}' has credentials in it; a key goes in an environment variable named by "
            "api_key_env, never in the URL"
        )
    if _UNPRINTABLE.search(url):
        raise ValueError(f"'{shown}' has a space or control character in it; give one URL")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:  # an unclosed '[', a port that is not a number from 0 to 65535
        if str(exc).startswith("Port out of range"):
            raise ValueError(f"'{shown}': its port is not from 1 to 65535") from None
        raise ValueError(f"'{shown}' is not a valid URL ({exc}), e.g. {EXAMPLE}") from None
    if parts.scheme.lower() not in SCHEMES or not parts.netloc:
        raise ValueError(f"'{shown}' is not an http(s) URL, e.g. {EXAMPLE}")
    if not parts.hostname:
        raise ValueError(f"'{shown}' names no host, e.g. {EXAMPLE}")
    if port is not None and not 1 <= port <= 65535:
        raise ValueError(f"'{shown}': its port is not from 1 to 65535")
    return url


def server_key(url: str) -> str:
    """The server `url` names, the same for every spelling of it: scheme and host in lower case,
    the scheme's default port left out, no trailing slash. `url` passed `check_url`."""
    parts = urlsplit(url)
    scheme, host = parts.scheme.lower(), parts.hostname or ""
    if ":" in host:  # an IPv6 address, bracketed again
        host = f"[{host}]"
    port = "" if parts.port in (None, DEFAULT_PORTS[scheme]) else f":{parts.port}"
    query = f"?{parts.query}" if parts.query else ""
    return f"{scheme}://{host}{port}{parts.path.rstrip('/')}{query}"


def first_repeat(urls: Sequence[str]) -> tuple[int, int] | None:
    """The positions (first, again) of the first server `urls` name twice, in any spelling."""
    seen: dict[str, int] = {}
    for index, url in enumerate(urls):
        first = seen.setdefault(server_key(url), index)
        if first != index:
            return first, index
    return None

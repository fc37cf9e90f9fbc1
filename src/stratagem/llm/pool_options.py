"""The params an endpoint pool reads itself (`health_wait_s`), apart from those each server's
OpenAI-compatible provider gets: checked when the experiment loads, as the provider's are, and
again when the pool is built (`llm.pool`)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from stratagem.llm.errors import PermanentError

HEALTH_WAIT_S = 30.0
"""Default wait for a first healthy server (`params.health_wait_s` overrides it); given, the
wait covers servers that refuse the connection too."""
MAX_HEALTH_WAIT_S = 86_400.0
"""The longest `params.health_wait_s`: a day (a typo's extra zeros are an error, not a hang)."""
POOL_PARAMS = ("health_wait_s",)


def pool_options(model: str, params: Mapping[str, Any]) -> tuple[float | None, dict[str, Any]]:
    """(`health_wait_s` as given, None if not; the params left for each server's provider), or
    a one-line `PermanentError` naming a bad value."""
    given = params.get("health_wait_s")
    rest = {k: v for k, v in params.items() if k not in POOL_PARAMS}
    if given is None:
        return None, rest
    seconds = given if isinstance(given, int | float) and not isinstance(given, bool) else math.nan
    if not 0 <= seconds <= MAX_HEALTH_WAIT_S:
        raise PermanentError(
            f"{model}: params.health_wait_s must be seconds from 0 to {MAX_HEALTH_WAIT_S:,.0f}, "
            f"got {given!r}"
        )
    return float(seconds), rest

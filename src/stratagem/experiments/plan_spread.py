"""How a plan's episodes spread over a model's pool of servers (issue 26 item 3).

A pool sends each episode's calls to the server ranked first for the episode's id by its
rendezvous hash, while that server is healthy and has room (`stratagem.llm.pool`). The plan
counts, for every episode it is about to play, the server the pool will prefer, with the pool's
own ranking (`pool.preferred`), so the shares shown are those a run with every server healthy
starts from; a full server's calls spill over to the least loaded one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

from stratagem.experiments.endpoints import pool_of
from stratagem.experiments.model_entry import ModelEntry
from stratagem.llm.pool import preferred, shown_url


@dataclass
class PoolSpread:
    """One model entry's pool and the episodes each of its servers is preferred for."""

    entry: ModelEntry
    urls: list[str]
    """As the pool shows them (`shown_url`): the names it hashes."""
    caps: list[int | None]
    episodes: dict[str, int] = field(default_factory=dict)
    calls: dict[str, float] = field(default_factory=dict)
    """Estimated model calls by server, set once the plan knows the calls per episode."""

    @classmethod
    def of(cls, entry: ModelEntry) -> PoolSpread | None:
        """The entry's pool, None when it has none. An `endpoints_file` is read now, as the run
        reads it when it starts; one not written yet (the cluster job writes it) has no spread."""
        if entry.endpoints is None and entry.endpoints_file is None:
            return None
        if entry.endpoints_file is not None and not Path(entry.endpoints_file).exists():
            return cls(entry, [], [])
        servers = pool_of(entry.endpoints, entry.endpoints_file)
        urls = [shown_url(s.base_url) for s in servers]
        return cls(entry, urls, [s.max_concurrency for s in servers], dict.fromkeys(urls, 0))

    def add(self, episode_id: str) -> None:
        """Count an episode that plays this model: its calls are routed by its id."""
        if self.urls:
            self.episodes[preferred(episode_id, self.urls)] += 1

    def at_once(self) -> float:
        """Calls in flight at most: the entry's `max_concurrency` caps the whole pool, and the
        servers' own caps, summed, cap it too (inf when one has none)."""
        total = math.inf if not self.caps or None in self.caps else sum(c or 0 for c in self.caps)
        return min(float(self.entry.max_concurrency), total)

    def lines(self) -> list[str]:
        """The plan's lines about this pool: a heading, then one per server."""
        name = self.entry.name
        if not self.urls:
            return [f"  {name}: endpoints_file {self.entry.endpoints_file} is not written yet: "
                    "the plan shows its spread once it is"]  # fmt: skip
        where = f" ({self.entry.endpoints_file})" if self.entry.endpoints_file else ""
        out = [
            f"  {name} over {len(self.urls)} endpoints{where}, "
            f"max_concurrency {self.entry.max_concurrency} for the pool:"
        ]
        width = max(len(url) for url in self.urls)
        for url, cap in zip(self.urls, self.caps, strict=True):
            calls = round(self.calls.get(url, 0.0))
            out.append(
                f"    {url:<{width}}  {_n(self.episodes[url], 'episode')}, about "
                f"{_n(calls, 'call')}, "
                + (f"max_concurrency {cap}" if cap is not None else "no max_concurrency of its own")
            )
        return out


def _n(count: int, noun: str) -> str:
    return f"{count:,} {noun}" if count == 1 else f"{count:,} {noun}s"

"""The balance filter of seed-004 §4 ("Setting selection"), re-run on any model.

The paper played "200 game simulations involving all three players as GPT-4 with randomly chosen
topic settings" and "pinpointed 20 topic settings that promote a more equitable win rate", because
the chameleon side won too often in Chameleon and the civilians in Undercover. Its 20 settings per
game are unpublished (§10.4), so stratagem ships regenerated ones; this module lets a user re-run
the filter on them with any model, to see which settings are even for that model and to rebuild
the set an experiment plays.

The filter, as implemented here:

1. **Self-play.** Every candidate setting is played `games_per_setting` times with all three seats
   the `magic` architecture on one model (§2), as an ordinary experiment (`balance_config`), so
   the runner's cache, budget, resume and one-writer lock all apply and a rerun continues.
2. **Spy win rate per setting.** The spy side's credits over the credits handed out: chameleon
   credits / 2 per game (§3.1 table), undercover credits / 3 per game (§3.2 table), exactly the
   role rates of §5 restricted to one setting. Credits come from each game's `win_flag` through
   the metrics' own credit table (`tallies.CREDITS`), so the filter and the metrics cannot
   disagree on what a win is.
3. **Selection.** The `keep` settings whose rate is closest to 0.5, compared as exact fractions;
   ties go to the lower setting index, so the same games always give the same list.

Candidates: `selected`, the 20 settings an experiment plays (`<game>/*`), or `all`, every
setting of the game's file: every topic word of §3.1 with every chameleon seat (96), every word
pair with every undercover seat (60), the pool the paper's filter chose its 20 from (§4). The
kept settings are named `<game>/<index>`, ready for an experiment's `games:` list, and their
content is part of their episodes' ids.

The self-play seats do not answer the hidden probes of §6.1 (`probes: false`): the probes are
separate calls nobody sees, so they cannot change a game's outcome, and leaving them out makes the
filter about three times cheaper.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

from stratagem.errors import StratagemError, unknown_name
from stratagem.experiments.config import ExperimentConfig, config_from_dict
from stratagem.experiments.grid import Grid
from stratagem.experiments.limits import MAX_REPETITIONS, check_range, check_storable
from stratagem.experiments.store import ResultStore
from stratagem.games import settings_data
from stratagem.games.catalog import expand_settings, get_entry, split_setting
from stratagem.llm.server_urls import check_url
from stratagem.studies.magic.records import SOCIAL_GAMES, SPY_ROLES
from stratagem.studies.magic.tallies import CREDIT_TOTAL, CREDITS

BALANCE_GAMES: tuple[str, ...] = SOCIAL_GAMES
"""The games with a spy side to balance (seed-004 §4: the two social games)."""
CANDIDATE_POOLS: tuple[str, ...] = ("selected", "all")
"""Where candidate settings come from (see the module docstring)."""
EVEN = Fraction(1, 2)
"""The spy win rate of a perfectly balanced setting."""
DEFAULT_GAMES_PER_SETTING = 10
"""20 selected settings x 10 games = 200 games, the paper's number of simulations (§4)."""
DEFAULT_KEEP = 20
"""seed-004 §4 keeps 20 settings per social game."""
MAX_KEEP = 10_000
AGENT = "magic"
"""The agent entry (and architecture) of every seat: the study's own player (§2)."""
BALANCE_FILE = "balance.json"
TIE_RULE = "closest to 0.5 first (exact fractions); equal distances: lower setting index first"


@dataclass(frozen=True)
class BalanceRun:
    """One run of the filter: which game, on which model, how many games per setting, what to
    keep. Checked on construction, so a bad value is a one-line error before anything runs."""

    game: str
    model: str
    base_url: str | None = None
    api_key_env: str | None = None
    games_per_setting: int = DEFAULT_GAMES_PER_SETTING
    keep: int = DEFAULT_KEEP
    candidates: str = "selected"
    seed: int = 0
    temperature: float | None = None
    """None: the architecture's own, 0 (seed-004 §2)."""
    max_usd: float | None = None
    output: Path | None = None
    """The results directory; None: `default_output()`."""

    def __post_init__(self) -> None:
        if self.game not in BALANCE_GAMES:
            get_entry(self.game)  # an unknown name: the catalog's error, with suggestions
            raise StratagemError(
                f"game '{self.game}' has no spy side to balance; balance one of: "
                f"{', '.join(BALANCE_GAMES)}"
            )
        if self.candidates not in CANDIDATE_POOLS:
            raise unknown_name("candidate pool", self.candidates, CANDIDATE_POOLS)
        provider, _, name = self.model.partition("/")
        if not provider or not name:
            raise StratagemError(
                f"model must be 'provider/model', e.g. openai/gpt-4o-mini; got {self.model!r}"
            )
        if self.base_url is not None:
            try:
                check_url(self.base_url)  # else a model entry's error, or balance.json, shows it
            except ValueError as exc:
                raise StratagemError(f"base url: {exc}") from None
        check_range("games per setting", self.games_per_setting, 1, MAX_REPETITIONS)
        check_range("keep", self.keep, 1, MAX_KEEP)
        check_storable("seed", self.seed)
        if self.temperature is not None and not self.temperature >= 0:
            raise StratagemError(f"temperature must be >= 0, got {self.temperature}")
        if self.max_usd is not None and not self.max_usd > 0:
            raise StratagemError(f"max usd must be > 0, got {self.max_usd}")

    @property
    def experiment(self) -> str:
        """One experiment per game, model and temperature: another model or temperature in the
        same directory adds its own episodes instead of changing what stored ones mean."""
        name = f"magic-balance-{self.game}-{self.model}"
        return name if self.temperature is None else f"{name}-t{self.temperature:g}"

    def default_output(self) -> Path:
        return Path("results") / f"magic-balance-{self.game}-{slug(self.model)}"

    @property
    def directory(self) -> Path:
        return self.output if self.output is not None else self.default_output()

    def candidate_settings(self) -> list[str]:
        """`chameleon/0`, `chameleon/1`, ...: every candidate of the pool, in index order."""
        if self.candidates == "selected":
            return expand_settings(f"{self.game}/*")
        count = len(settings_data.settings(self.game))
        return [f"{self.game}/{k}" for k in range(count)]

    def config(self) -> ExperimentConfig:
        """The self-play experiment: three `magic` seats on the model, every candidate setting,
        `games_per_setting` repetitions of each (each with its own request seeds)."""
        model: dict[str, Any] = {"model": self.model}
        if self.base_url is not None:
            model["base_url"] = self.base_url
        if self.api_key_env is not None:
            model["api_key_env"] = self.api_key_env
        agent: dict[str, Any] = {"name": AGENT, "kind": AGENT, "options": {"probes": False}}
        if self.temperature is not None:
            agent["temperature"] = self.temperature
        data: dict[str, Any] = {
            "name": self.experiment,
            "output": str(self.directory),
            "models": [model],
            "agents": [agent],
            "games": self.candidate_settings(),
            "lineups": [[AGENT, AGENT, AGENT]],
            "seeds": [self.seed],
            "repetitions": self.games_per_setting,
        }
        if self.max_usd is not None:
            data["budget"] = {"max_usd": self.max_usd}
        return config_from_dict(data, "magic balance")


def slug(text: str) -> str:
    """A model string as a directory name: `openai/gpt-4o` -> `openai-gpt-4o`."""
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-") or "model"


def episode_settings(config: ExperimentConfig) -> dict[str, str]:
    """Episode id -> setting name (`chameleon/3`) for every episode of the experiment's grid: the
    episodes whose outcomes the filter reads, and no others (a directory may also hold episodes
    of an earlier, larger run)."""
    return {spec.id: spec.game for spec in Grid(config).specs()}


# -- win rates ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SettingRate:
    """The spy side's record in one setting: credits won over the games finished."""

    setting: str
    games: int
    spy_credits: int
    credits_per_game: int
    """2 in Chameleon, 3 in Undercover (seed-004 §5's 2n and 3n)."""

    @property
    def rate(self) -> Fraction | None:
        """Spy credits / (credits_per_game x games); None before any game finished."""
        if self.games == 0:
            return None
        return Fraction(self.spy_credits, self.credits_per_game * self.games)

    @property
    def distance(self) -> Fraction | None:
        """How far the rate is from an even 0.5."""
        rate = self.rate
        return None if rate is None else abs(rate - EVEN)

    @property
    def index(self) -> int:
        return setting_index(self.setting)


def setting_index(name: str) -> int:
    index = split_setting(name)[1]
    if index is None:
        raise StratagemError(f"'{name}' names no setting (expected <game>/<k>)")
    return index


def spy_credits(game: str, outcome: Mapping[str, Any], where: str) -> int:
    """The spy's credits in one game, from its `win_flag` through the credit table of seed-004
    §3.1 / §3.2; a one-line error naming the episode when the outcome cannot be read."""
    flag = outcome.get("win_flag") if isinstance(outcome, Mapping) else None
    table = CREDITS[game]
    if isinstance(flag, bool) or not isinstance(flag, int) or flag not in table:
        raise StratagemError(
            f"{where}: the outcome's win_flag {flag!r} is not one of {game}'s "
            f"({', '.join(map(str, sorted(table)))})"
        )
    return table[flag][0]


def setting_rates(
    store: ResultStore, game: str, episodes: Mapping[str, str], candidates: Sequence[str]
) -> list[SettingRate]:
    """One rate per candidate setting (in the order given), from the finished episodes among
    `episodes` (episode id -> setting name). Unfinished or failed episodes count as no game; a
    finished one without a readable outcome is an error, never a silent zero."""
    if game not in CREDIT_TOTAL:
        raise StratagemError(f"game '{game}' has no spy credits; one of: {', '.join(CREDIT_TOTAL)}")
    games = dict.fromkeys(candidates, 0)
    credits = dict.fromkeys(candidates, 0)
    for episode_id, setting in episodes.items():
        if setting not in games:
            continue
        record = store.episode(episode_id)
        if record is None or record.status != "finished":
            continue
        outcomes = store.events(episode_id, kind="outcome")
        where = f"episode {episode_id} ({setting})"
        if not outcomes:
            raise StratagemError(f"{where}: finished but has no outcome event")
        games[setting] += 1
        credits[setting] += spy_credits(game, outcomes[-1].data, where)
    total = CREDIT_TOTAL[game]
    return [SettingRate(s, games[s], credits[s], total) for s in candidates]


# -- selection ------------------------------------------------------------------------------------


def ranked(rates: Iterable[SettingRate]) -> list[SettingRate]:
    """Settings with at least one game, most even first (`TIE_RULE`)."""
    played = [r for r in rates if r.games > 0]
    return sorted(played, key=lambda r: (r.distance, r.index))


def select_balanced(rates: Iterable[SettingRate], keep: int) -> list[SettingRate]:
    """The `keep` most even settings (fewer if fewer were played), most even first."""
    if isinstance(keep, bool) or not isinstance(keep, int) or keep < 1:
        raise StratagemError(f"keep must be a whole number >= 1, got {keep!r}")
    return ranked(rates)[:keep]


def kept_names(kept: Iterable[SettingRate]) -> list[str]:
    """The kept settings in index order, as an experiment's `games:` list names them."""
    return [r.setting for r in sorted(kept, key=lambda r: r.index)]


# -- what a setting is, and the file -------------------------------------------------------------


def describe(name: str) -> str:
    """A setting's words and spy seat, for a table: `Sports: Golf (chameleon Player 3)`,
    `wig / haircut (undercover Player 1)` (the civilians' word first)."""
    game, index = split_setting(name)
    if index is None or game not in BALANCE_GAMES:
        return ""
    s = settings_data.setting(game, index)
    if game == "chameleon":
        return f"{s['topic']}: {s['code']} (chameleon {s['chameleon_name']})"
    return (
        f"{s['non_undercover_code']} / {s['undercover_code']} (undercover {s['undercover_name']})"
    )


def _roles(name: str) -> dict[str, Any]:
    """The setting's fields without its recorded clues (what a settings file would need)."""
    game, index = split_setting(name)
    assert index is not None
    return {k: v for k, v in settings_data.setting(game, index).items() if k != "clues"}


def balance_document(
    run: BalanceRun, rates: Sequence[SettingRate], kept: Sequence[SettingRate]
) -> dict[str, Any]:
    """`balance.json`: how the filter was run, every candidate's record, and the kept list."""
    chosen = {r.setting for r in kept}
    return {
        "source": "seed-004 §4 'Setting selection': self-play, spy win rate closest to 0.5",
        "game": run.game,
        "spy_role": SPY_ROLES[run.game],
        "model": run.model,
        "base_url": run.base_url,
        "architecture": AGENT,
        "temperature": run.temperature,
        "candidates": run.candidates,
        "games_per_setting": run.games_per_setting,
        "seed": run.seed,
        "keep": run.keep,
        "experiment": run.experiment,
        "credits_per_game": CREDIT_TOTAL[run.game],
        "tie_rule": TIE_RULE,
        "settings": [
            {
                "setting": r.setting,
                **_roles(r.setting),
                "games": r.games,
                "spy_credits": r.spy_credits,
                "win_rate": None if r.rate is None else float(r.rate),
                "distance": None if r.distance is None else float(r.distance),
                "kept": r.setting in chosen,
            }
            for r in rates
        ],
        "kept": kept_names(kept),
    }


def write_balance(directory: Path, document: Mapping[str, Any]) -> Path:
    """Write `balance.json` into the results directory (replacing an earlier one)."""
    path = directory / BALANCE_FILE
    try:
        directory.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", "utf-8")
    except OSError as exc:
        raise StratagemError(f"{path}: cannot write ({exc.strerror or exc})") from None
    return path

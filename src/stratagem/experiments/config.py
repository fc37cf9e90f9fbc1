"""The experiment file: a YAML grid of models x games x line-ups x rounds x seeds x repetitions.

A line-up says who sits in each seat. `agents x opponents` is the shorthand of the first release
(an agent in seat 0 against each opponent in seat 1); `lineups` name every seat, or put one
challenger in every seat in turn against fixed defenders.

Validated by pydantic; every error names the file, the field and what is allowed, on one line.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    Field,
    PrivateAttr,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from stratagem import plugins
from stratagem.agents.debate_agent import DEFAULT_MAX_TURNS
from stratagem.agents.prompt_variants import PromptSet
from stratagem.agents.prompts import framing_templates, framings
from stratagem.agents.registry import ARCHITECTURES
from stratagem.agents.tool_agent import DEFAULT_MAX_TOOL_CALLS
from stratagem.errors import StratagemError
from stratagem.experiments.compare_entry import COMPARE, CompareEntry, analysis_section
from stratagem.experiments.limits import (
    MAX_CONCURRENCY,
    MAX_PER_DECISION,
    MAX_REPETITIONS,
    MAX_ROUNDS,
    SQLITE_MAX,
    SQLITE_MIN,
)
from stratagem.experiments.model_entry import ModelEntry
from stratagem.experiments.plugin_names import name_plugin
from stratagem.experiments.prompt_entry import PromptAxis
from stratagem.experiments.strict import Strict
from stratagem.experiments.yaml_file import read_yaml
from stratagem.games.catalog import check_game_options, expand_settings, make_variant
from stratagem.games.matrix.normal_form import NormalFormGame


class AgentEntry(Strict):
    """An LLM agent architecture and its prompt settings."""

    name: str = "plain"
    """What line-ups and `opponents` (`agent:<name>`) call this entry."""
    kind: str = "plain"
    """The architecture (`stratagem architectures`): plain, one model call per decision, in any
    game with prompts; tool: a lawyer tool (seed-001 §6.2); debate: a suspect and a lawyer talk
    until a decision (seed-001 §6.3)."""
    attitude: Literal["cooperate", "defect", "compute"] | None = None
    """The lawyer's suggested decision (seed-001 §4.2); only tool and debate agents have one."""
    questions: bool = False
    """Ask seed-001's four comprehension questions after every round (§7)."""
    memory: Literal["fresh", "episode"] = "fresh"
    """Tool and debate agents: a fresh conversation per decision, or one kept for the episode."""
    max_turns: int = Field(DEFAULT_MAX_TURNS, ge=1, le=MAX_PER_DECISION)
    """Debate agents: the turn cap of one debate, both speakers together (seed-001 AMBIG-5)."""
    max_tool_calls: int = Field(DEFAULT_MAX_TOOL_CALLS, ge=0, le=MAX_PER_DECISION)
    """Tool agents: tool calls run per decision (1: the thesis' "Use each tool only once")."""
    framing: str = "neutral"
    """A prompt framing: neutral, prisoner (seed-001), counterfactual (seed-003 as its code ran) or
    counterfactual-paper (seed-003's printed App. C.2 templates with a "History:" block)."""
    prompting: Literal["zs", "cot", "spp"] = "zs"
    """seed-003 §2.1: zero-shot, chain-of-thought or solo-performance prompting (the framing must
    have the mode's preamble)."""
    samples: int | Literal["study"] = 1
    """Self-consistency (seed-003 §3.5): decisions sampled per round, the majority move played;
    1 = off; "study" = seed-003's k, 3 in 2-action games and 5 in 3-action ones. Plain agents
    only."""
    constrain: bool = True
    """Send a constraint the provider enforces (a grammar or schema): output choice, a label;
    json, the decision object; tag, the reply `[move] <label>`. false lets the model answer
    freely, as the studies' models did (replies are parsed and re-asked either way)."""
    repetitions: int | None = Field(None, ge=1, le=MAX_REPETITIONS)
    """Repetitions of this agent's episodes, overriding the experiment's (seed-003 §3.1 plays
    the self-consistency rows 2 times and the others 5)."""
    output: Literal["choice", "json", "tag"] = "choice"
    """choice: the reply is constrained to a label; json / tag: parsed, re-asked when invalid."""
    history: Literal["prompt", "chat"] = "prompt"
    """prompt: the history is appended to each prompt; chat: it is kept as a multi-turn chat."""
    max_reasks: int = Field(5, ge=0, le=MAX_PER_DECISION)
    """Re-asks of a reply that is not a legal action, each with the error as a hint, before the
    decision is recorded as invalid."""
    invalid: str = "forfeit"
    """What an invalid decision plays: forfeit (the round scores the forfeit payoffs) or
    default:<label>; either way the round is recorded as invalid."""
    temperature: float | None = Field(None, ge=0)
    """Sampling temperature; left out, none is sent (the provider's default)."""
    max_tokens: int | None = Field(None, ge=1)
    """A reply's token limit; left out, the provider's or the reply format's."""
    options: dict[str, Any] = {}
    """The architecture's own settings (`stratagem architectures` lists them), e.g. a magic
    agent's `{code_compat: true}`."""

    _prompts: PromptSet | None = PrivateAttr(None)

    @property
    def prompts(self) -> PromptSet | None:
        """The prompt variant it plays under in a seat (the grid's; not in the entry's key)."""
        return self._prompts

    def with_prompts(self, prompts: PromptSet) -> AgentEntry:
        entry = self.model_copy()
        entry._prompts = prompts
        return entry

    @field_validator("kind")
    @classmethod
    def _registered(cls, value: str) -> str:
        if value not in ARCHITECTURES:
            failed = plugins.unavailable("architecture", value)
            if failed is not None:
                raise ValueError(str(failed))
            raise ValueError(f"got {value!r}, allowed: {', '.join(ARCHITECTURES)}")
        return value

    @field_validator("options")
    @classmethod
    def _canonical(cls, value: dict[str, Any], info: ValidationInfo) -> dict[str, Any]:
        """Each option as its declared type reads it, before it enters the episode id
        (`Architecture.canonical_options`); `_fits_kind` refuses what its type cannot read."""
        kind = info.data.get("kind")
        if not isinstance(kind, str) or kind not in ARCHITECTURES:
            return value
        return ARCHITECTURES[kind].canonical_options(value)

    @model_validator(mode="after")
    def _fits_kind(self) -> AgentEntry:
        """The architecture says which settings it honours (`Architecture.settings`) and which
        options it takes: any other set to other than its default is refused, not ignored. One
        that honours an attitude (a lawyer's, seed-001 §4.2) needs one."""
        architecture = ARCHITECTURES[self.kind]
        # A default written out means nothing either way, and a stored entry (which lists every
        # field, `drift`) must read back.
        fields = type(self).model_fields
        given = {f for f in self.model_fields_set if getattr(self, f) != fields[f].default}
        try:
            architecture.check_settings(given)
            architecture.check_options(self.options)
        except StratagemError as exc:
            raise ValueError(str(exc)) from None
        missing = sorted(architecture.templates - framing_templates(self.framing))
        if missing:
            having = [f for f in framings() if architecture.templates <= framing_templates(f)]
            raise ValueError(
                f"framing: a {self.kind} agent renders {', '.join(missing)}, which framing "
                f"'{self.framing}' lacks; framings that have them: {', '.join(having) or 'none'}"
            )
        if "attitude" in architecture.settings and self.attitude is None:
            raise ValueError(f"attitude: a {self.kind} agent needs one: cooperate, defect, compute")
        if isinstance(self.samples, int) and not 1 <= self.samples <= MAX_PER_DECISION:
            raise ValueError(
                f"samples: must be from 1 (no self-consistency) to {MAX_PER_DECISION}, or 'study'"
            )
        return self

    def key(self) -> dict[str, Any]:
        """What identifies the agent in an episode id. Settings added after the first release
        enter it only when changed from their default, so stored episodes keep their ids; the
        number of repetitions is not part of it (each repetition's index is)."""
        data = self.model_dump(exclude={"repetitions"})
        for name in _LATER_AGENT_FIELDS:
            if data[name] == type(self).model_fields[name].default:
                del data[name]
        return data

    @field_validator("invalid")
    @classmethod
    def _invalid(cls, value: str) -> str:
        if value != "forfeit" and not (value.startswith("default:") and len(value) > 8):
            raise ValueError("must be 'forfeit' or 'default:<label>'")
        return value


_LATER_AGENT_FIELDS = ("prompting", "samples", "constrain", "options")


class VariantEntry(Strict):
    """A counterfactual variant of a catalog matrix game (seed-003 §1): new labels, payoffs or
    both. Its name can then be used in `games` like a catalog name."""

    name: str = Field(min_length=1)
    """The variant's name, for `games`."""
    base: str
    """The catalog game it transforms (e.g. pd, eq1)."""
    labels: list[str] | list[list[str]] | None = None
    """One list for every player, or one list per player."""
    payoffs: list[Any] | None = None
    """The full payoff tensor, or for a symmetric 2-player base the row player's matrix."""
    description: str = ""
    """One line for listings and reports."""

    def build(self) -> NormalFormGame:
        """The variant's stage game (errors name what is wrong with it)."""
        return make_variant(self.base, self.name, self.labels, self.payoffs, self.description)


class RotationEntry(Strict):
    """One challenger against fixed defenders, in every seat in turn: a game of n seats gives n
    line-ups, the challenger in seat 0, then seat 1, ... (seed-004's evaluation pattern)."""

    challenger: str
    """The seat that rotates: an agent entry's name, or any seat a line-up may name."""
    defenders: str | list[str]
    """One seat for every other seat, or n - 1 seats in order."""
    by: Literal["seat", "side"] = "seat"
    """seat: the challenger in each seat in turn. side: in a game whose seats form sides (a
    social deduction game: the spy against the majority), the challenger takes every seat of
    one side at once, one line-up per side (seed-004 §4: the spy seat, then both majority
    seats); games without sides rotate by seat. `defenders` must then be one seat."""


LineupEntry = list[str] | RotationEntry
"""Seats in order, or a rotation. A seat is an agent entry's name (played by each model of the
grid), `<agent>@<model id>` (played by that model only), a rule-based strategy, or
`scripted:<a>,<b>,...` (plays those actions in turn, for tests and demonstrations)."""


class BudgetConfig(Strict):
    """Caps over every call this results directory ever paid for, across runs: once one is
    reached, no new call starts (calls under way are paid and counted); raise it and re-run."""

    max_usd: float | None = Field(None, gt=0)
    """Dollars, at the listed prices."""
    max_tokens: int | None = Field(None, ge=1)
    """Tokens, prompt and reply."""


class ConfirmConfig(Strict):
    """Above any bound, `stratagem run` asks before starting (`--yes` answers for you)."""

    episodes: int = Field(2000, ge=0)
    """Episodes still to play."""
    usd: float = Field(1.0, ge=0)
    """Estimated spend, at the listed prices, of the episodes still to play."""
    calls: int = Field(100_000, ge=0)
    """Estimated model calls of the episodes still to play: a free local server's time (and a
    priced model whose price is unknown) is bounded too."""


class RetryConfig(Strict):
    """Retries of a call that failed transiently (429, 5xx, a timeout, a connection error)."""

    max_attempts: int = Field(6, ge=1)
    """Attempts of one call, the first included."""
    base_delay: float = Field(0.5, ge=0)
    """Seconds of backoff before the first retry, doubled at each (drawn with jitter)."""
    max_delay: float = Field(30.0, ge=0)
    """The longest backoff; a server's Retry-After is honoured even above it."""


class ExperimentConfig(Strict):
    name: str
    """The experiment's name: its episodes are stored under it."""
    output: Path
    """Directory of the store, the response cache and the rate-limit state."""
    plugins: list[str] = []
    """Modules or `.py` files whose games, architectures, strategies, models and studies this
    file names, as `<plugin>:<name>` (docs/plugins.md). A relative file is relative to this
    file's folder; it is stored as its absolute path, so `stratagem report` and `view` of the
    results name it again."""
    models: list[ModelEntry] = Field(min_length=1)
    """The grid's models: each plays every LLM seat not pinned to another (`<agent>@<model id>`)."""
    agents: list[AgentEntry] = [AgentEntry()]
    """The LLM agents line-ups and `opponents` seat, by name."""
    prompts: PromptAxis = []
    """Prompt variants, an axis of the grid: every cell is played under each, every LLM seat of
    an episode under the episode's (`PromptEntry`; docs/prompt-variants.md). Left out, the
    agents' own prompts, as `[{name: base}]`."""
    games: list[str] = Field(min_length=1)
    """Catalog games (see `stratagem games`) or names of `variants`; `<game>/<k>` plays setting k
    of a game with settings (seed-004's), `<game>/*` every setting."""
    variants: list[VariantEntry] = []
    """Counterfactual variants of catalog matrix games, then named in `games`."""
    game_options: dict[str, dict[str, Any]] = {}
    """Rule options of catalog games, by the game's catalog name (`undercover: {self_votes:
    count}`; `stratagem games` lists each game's options): every setting of that game is played
    with them, and an option that differs from the game's default is part of the episode id."""
    analysis: dict[str, dict[str, Any] | list[CompareEntry]] = {}
    """Each study's analysis options for its report (`magic: {code_compat: true}`), checked by
    `stratagem run` and `stratagem report`; they change what is computed, never what is played.
    `compare:` lists the comparisons the experiment is for (below; docs/statistics.md)."""
    opponents: list[str] = []
    """Shorthand line-ups: each agent in seat 0 against each of these in seat 1. Rule-based
    strategies (see `stratagem strategies`), or `agent:<name>`: the agent entry of that name,
    played by the same model (seed-003's LLM-vs-LLM matchups)."""
    lineups: list[LineupEntry] = []
    """Who sits in each seat (`LineupEntry`), for games of any number of seats."""
    rounds: list[int | Literal["study"]] = Field(["study"], min_length=1)
    """Round counts; "study" is the number the game's source study plays (seed-003: 16 in the PD
    family, 24 in RPS; seed-004's public good: 5), a variant's being its base game's. Games of a
    fixed length (the ultimatum game) ignore it."""
    seeds: list[Annotated[int, Field(ge=SQLITE_MIN, le=SQLITE_MAX)]] = [0]
    """Each cell is played once per seed: the game's chance and the agents' sampling follow it."""
    repetitions: int = Field(1, ge=1, le=MAX_REPETITIONS)
    """Episodes per cell and seed (each repetition's index is part of the episode id)."""
    replicates: int = Field(0, ge=0, le=MAX_REPETITIONS)
    """Null copies of every cell: each cell is played this many more times with the same
    settings, seeds and repetitions under new sampling seeds, so the report shows every
    comparison beside the noise floor, the difference between two identical cells
    (docs/statistics.md). The cells' own episodes keep their ids."""
    concurrency: int = Field(4, ge=1, le=MAX_CONCURRENCY)
    """Episodes played at once (each model also has its own max_concurrency)."""
    budget: BudgetConfig = BudgetConfig()
    """Spending caps (below); none by default."""
    confirm: ConfirmConfig = ConfirmConfig()
    """When `stratagem run` asks before starting (below)."""
    retry: RetryConfig = RetryConfig()
    """Retries of transient errors (below)."""

    @model_validator(mode="before")
    @classmethod
    def _use_plugins(cls, data: Any, info: ValidationInfo) -> Any:
        """Name the file's plugins before any of its names is checked (they are imported when
        one of their names is); each kept in the form that names it from anywhere."""
        if not isinstance(data, dict) or not isinstance(data.get("plugins"), list):
            return data  # a bad `plugins` is the field's own type error
        base = (info.context or {}).get("base")
        named = []
        for i, spec in enumerate(data["plugins"]):
            if not isinstance(spec, str):
                raise ValueError(f"plugins.{i}: a module name or a .py file, got {spec!r}")
            try:
                named.append(name_plugin(spec, "experiment file", base))
            except StratagemError as exc:
                raise ValueError(f"plugins.{i}: {exc}") from None
        return {**data, "plugins": named}

    @field_validator("output", mode="before")
    @classmethod
    def _a_directory(cls, value: Any) -> Any:
        if isinstance(value, str) and not value.strip():
            raise ValueError("must name a directory (empty would mean the current directory)")
        return value

    @field_validator("lineups", mode="before")
    @classmethod
    def _rotations(cls, value: Any) -> Any:
        """A mapping is a rotation: its errors name its own fields (`lineups.0.by`), not the two
        forms a line-up can take."""
        if not isinstance(value, list):
            return value
        entries = []
        for i, entry in enumerate(value):
            if isinstance(entry, dict):
                try:
                    entry = RotationEntry.model_validate(entry)
                except ValidationError as exc:
                    raise ValueError(f"{i}.{_first_error(exc)}") from None
            entries.append(entry)
        return entries

    @field_validator("analysis", mode="before")
    @classmethod
    def _comparisons(cls, value: Any) -> Any:
        return analysis_section(value, _first_error)

    @property
    def study_options(self) -> dict[str, dict[str, Any]]:
        """`analysis:` without `compare`: each study's options by study name."""
        return {k: v for k, v in self.analysis.items() if isinstance(v, dict)}

    @property
    def comparisons(self) -> list[CompareEntry] | None:
        """The file's `analysis.compare`, None when it has none (the study's own apply)."""
        entries = self.analysis.get(COMPARE)
        return entries if isinstance(entries, list) else None

    @field_validator("games")
    @classmethod
    def _settings(cls, value: list[str]) -> list[str]:
        try:
            return [name for entry in value for name in expand_settings(entry)]
        except StratagemError as exc:
            raise ValueError(str(exc)) from None

    @field_validator("game_options")
    @classmethod
    def _game_options(cls, value: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
        for game, options in value.items():
            try:
                check_game_options(game, options)
            except StratagemError as exc:
                raise ValueError(f"{game}: {exc}") from None
        return value

    @field_validator("rounds")
    @classmethod
    def _rounds(cls, value: list[int | str]) -> list[int | str]:
        if any(isinstance(r, int) and not 1 <= r <= MAX_ROUNDS for r in value):
            raise ValueError(f"every round count must be from 1 to {MAX_ROUNDS:,}")
        return value

    @model_validator(mode="after")
    def _someone_to_play(self) -> ExperimentConfig:
        if not self.opponents and not self.lineups:
            raise ValueError("opponents or lineups: name who plays (at least one of them)")
        return self


def load_config(path: str | Path) -> ExperimentConfig:
    """Read and validate an experiment file (a relative `output` is relative to the cwd)."""
    file = Path(path)
    data = read_yaml(file, "experiment file")
    if not isinstance(data, dict):
        raise StratagemError(f"{file}: expected a mapping of settings at the top level")
    return config_from_dict(data, str(file), base=file.parent)


def config_from_dict(
    data: dict[str, Any], source: str, base: Path | None = None
) -> ExperimentConfig:
    """Validate settings given as data (a parsed file, or built by a command); errors name
    `source` and the field, on one line. `base`: the folder relative `plugins` files are in
    (the file's; the current directory without one)."""
    infinite = _not_finite(data)
    if infinite is not None:
        raise StratagemError(f"{source}: {infinite}")
    try:
        return ExperimentConfig.model_validate(data, context={"base": base})
    except ValidationError as exc:
        raise StratagemError(f"{source}: {_first_error(exc)}") from None


def _not_finite(data: Any, path: str = "") -> str | None:
    """`field: why` for the first number that is infinite or NaN (YAML's .inf, .nan, 1.0e999),
    anywhere, `params` and `options` included: no setting means infinity."""
    if isinstance(data, float) and not math.isfinite(data):
        return f"{path or '(top level)'}: must be a finite number, not {data}"
    if isinstance(data, dict):
        items: Iterable[tuple[Any, Any]] = data.items()
    elif isinstance(data, list):
        items = enumerate(data)
    else:
        return None
    for key, value in items:
        found = _not_finite(value, f"{path}.{key}" if path else str(key))
        if found is not None:
            return found
    return None


_FIELD_FIRST = re.compile(r"([\w.-]+): ")
"""A validator's message that starts `field: ` names a field inside the one it validates."""


def _first_error(exc: ValidationError) -> str:
    errors = exc.errors()
    first = errors[0]
    field = ".".join(str(part) for part in first["loc"]) or "(top level)"
    message = first["msg"]
    if first["type"] == "extra_forbidden":
        message = "unknown field"
    elif first["type"] == "literal_error":
        expected = first.get("ctx", {}).get("expected", "")
        message = f"got {first['input']!r}, allowed: {expected}"
    elif first["type"] == "value_error":
        message = message.removeprefix("Value error, ")
        inner = _FIELD_FIRST.match(message)
        if inner is not None:
            field = f"{field}.{inner[1]}" if first["loc"] else inner[1]
            message = message[inner.end() :]
    more = f" (and {len(errors) - 1} more problems)" if len(errors) > 1 else ""
    return f"{field}: {message}{more}"

"""Prompt rendering: a framing is a folder of jinja2 templates; this module only feeds them data.

Prompts are experimental material, so they live as template files (one folder per framing under
`agents/templates/`), and the studies' texts are reproduced there verbatim. Python computes only
framing-neutral facts (labels, the payoff table from this player's seat, the past rounds); each
template derives what it needs (years in prison, T/R/P/S, the RPS win amounts) and calls
`fail(...)` when the game does not fit its framing.

Files of a framing `<f>`:
- `system.j2`: the system prompt (required).
- `decision.j2`: the user turn asking for a decision (required). In history mode "prompt" it
  includes the history summary itself, where the framing wants it.
- `history.j2`: the summary of past rounds (required).
- `round.j2`: optional, one past round's text, given to templates as `r.text` (None without it).
  It is rendered once per round, not at every prompt that shows the history (a history template
  re-rendering every past round made a game's prompts quadratic in its length), so it sees only
  `r` and what stays fixed in an episode: not `round`, `history` or `last`.
- `result.j2`: the user turn telling a round's result, for history mode "chat".
- `move_made.j2`: an optional user turn after a valid move in chat mode (seed-003).
- `reask.j2`: the correction hint after an invalid reply (default: `_common/reask.j2`).
- `label.j2`: how an action label is shown (default: as is); must differ only in case.
- `preamble_<mode>.j2`: the instruction of a prompting mode (seed-003 §2.1, §4.4: `cot`, `spp`),
  given to templates as `preamble`; a framing without it does not offer that mode. `zs` (zero-shot)
  needs none.
- `history_table.j2`: the history as a table of outcomes (`history_views`), standing in for
  `history.j2` in the "table" view; a framing without it does not offer that view.

A prompt variant (`prompt_variants`) is a folder of such folders searched before the packaged
ones (`templates`), so its files replace theirs one by one. Packaged variants live under
`templates/variants/`, which is no framing.

Rendering rule: jinja2 drops a template file's final newline, so a text that must end with a
newline ends its file with an empty line.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal, NoReturn, get_args

import jinja2
from jinja2 import meta

from stratagem.agents.history_views import FULL, HistoryView, ViewLoader, view_context
from stratagem.agents.parsing import quoted_alternatives
from stratagem.errors import StratagemError, unknown_name
from stratagem.games.base import Observation
from stratagem.games.matrix.normal_form import NormalFormGame
from stratagem.games.matrix.repeated import FORFEIT, RepeatedObservation, Round

OutputFormat = Literal["json", "tag", "choice"]
HistoryMode = Literal["prompt", "chat"]
Prompting = Literal["zs", "cot", "spp"]
"""seed-003 §2.1: zero-shot, chain-of-thought, solo performance prompting."""

_COMMON = "_common"
VARIANTS = "variants"
"""The folder of the packaged prompt variants (`prompt_variants`), beside the framings."""


def format_number(x: float) -> str:
    """Payoffs as people write them: 4.0 -> "4", -1.0 -> "-1", 1.5 -> "1.5"."""
    value = float(x)
    if value.is_integer():
        return str(int(value))
    return repr(value)


def _fail(message: str) -> NoReturn:
    raise StratagemError(message)


@functools.lru_cache(maxsize=32)
def _environment(extra: Path | None, history: str = "history.j2") -> jinja2.Environment:
    """One environment per templates folder and history template, shared by every prompter:
    jinja2 caches compiled templates per environment, so episodes do not recompile them (a
    benchmark found ~20 ms each)."""
    loaders: list[jinja2.BaseLoader] = []
    if extra is not None:
        loaders.append(jinja2.FileSystemLoader(str(extra)))
    loaders.append(jinja2.PackageLoader("stratagem.agents", "templates"))
    loader: jinja2.BaseLoader = jinja2.ChoiceLoader(loaders)
    if history != "history.j2":
        loader = ViewLoader(loader, history)
    return prompt_environment(loader)


def prompt_environment(loader: jinja2.BaseLoader) -> jinja2.Environment:
    """A jinja2 environment for prompts (plain text, strict about missing values) with the
    filters every prompt template may use."""
    env = jinja2.Environment(
        loader=loader,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,  # plain text for models, not HTML
        auto_reload=False,  # no stat() of the file at every use: templates are fixed in a run
    )
    env.filters["num"] = format_number
    env.filters["alternatives"] = quoted_alternatives
    env.globals["fail"] = _fail
    return env


def framings(templates: Path | None = None) -> list[str]:
    """The available framings: folders with a `system.j2`, the user's `templates` dir included."""
    return list(_framings(templates))


@functools.lru_cache(maxsize=16)
def _framings(templates: Path | None) -> tuple[str, ...]:
    """Listed once per folder and process (every episode's prompter asks)."""
    names = {
        name.split("/", 1)[0]
        for name in _environment(templates).list_templates()
        if name.endswith("/system.j2")
    }
    return tuple(sorted(names - {_COMMON, VARIANTS}))


@functools.lru_cache(maxsize=64)
def framing_templates(framing: str, templates: Path | None = None) -> frozenset[str]:
    """The template files a framing's folder holds (`debate_decision.j2`, ...)."""
    prefix = f"{framing}/"
    return frozenset(
        name.removeprefix(prefix)
        for name in _environment(templates).list_templates()
        if name.startswith(prefix)
    )


@functools.lru_cache(maxsize=256)
def _free_names(env: jinja2.Environment, name: str) -> tuple[str, ...] | None:
    """The context names a template reads, or None if it includes or imports others (whose
    names are not visible here): what a rendering may be remembered by."""
    assert env.loader is not None
    source, _, _ = env.loader.get_source(env, name)
    ast = env.parse(source)
    if any(True for _ in meta.find_referenced_templates(ast)):
        return None
    return tuple(sorted(meta.find_undeclared_variables(ast)))


@functools.lru_cache(maxsize=512)
def _template_exists(env: jinja2.Environment, name: str) -> bool:
    """Remembered, because jinja2 asks its loaders again for every missing template."""
    try:
        env.get_template(name)
    except jinja2.TemplateNotFound:
        return False
    return True


@dataclass(frozen=True)
class PastRound:
    """One past round from this player's seat, as templates see it."""

    round: int
    own: str | None
    """This player's action as displayed; None if its decision was invalid (forfeited)."""
    opponent: str | None
    own_payoff: float
    opponent_payoff: float
    text: str | None = None
    """The framing's `round.j2` for this round, if it has one."""

    @property
    def valid(self) -> bool:
        return self.own is not None and self.opponent is not None


class Prompter:
    """Renders one framing's prompts for repeated 2-player matrix games.

    `output` chooses the reply format the prompts ask for ("json", "tag" or "choice"); `history`
    whether past rounds are summarised in each prompt ("prompt", seed-001) or told turn by turn in
    one growing conversation ("chat", seed-003). `reveal_rounds` says whether templates may tell
    the number of rounds (seed-001 does, seed-003 does not). `prompting` is the prompting mode
    (`Prompting`). `templates` is an optional folder of user framings, searched before the packaged
    ones (a prompt variant's). `view` is how the history is shown in history mode "prompt"
    (`history_views`: every round, the last k, or a table).
    """

    def __init__(
        self,
        framing: str = "neutral",
        output: OutputFormat = "choice",
        history: HistoryMode = "prompt",
        *,
        reveal_rounds: bool = True,
        prompting: Prompting = "zs",
        templates: Path | None = None,
        view: HistoryView = FULL,
    ) -> None:
        if output not in get_args(OutputFormat):
            raise StratagemError(
                f"unknown output format '{output}': use {', '.join(get_args(OutputFormat))}"
            )
        if history not in get_args(HistoryMode):
            raise StratagemError(
                f"unknown history mode '{history}': use {', '.join(get_args(HistoryMode))}"
            )
        self._env = _environment(templates, view.template)
        available = framings(templates)
        if framing not in available:
            raise unknown_name("framing", framing, available)
        self.framing = framing
        self.output: OutputFormat = output
        self.history: HistoryMode = history
        self.reveal_rounds = reveal_rounds
        self.view = view
        if prompting not in get_args(Prompting):
            raise StratagemError(
                f"unknown prompting mode '{prompting}': use {', '.join(get_args(Prompting))}"
            )
        if prompting != "zs" and not self._has(f"preamble_{prompting}.j2"):
            raise StratagemError(
                f"framing '{framing}' has no {prompting} prompt (preamble_{prompting}.j2); "
                "use prompting 'zs'"
            )
        self.prompting: Prompting = prompting
        self._stage_parts: tuple[NormalFormGame, int, dict[str, Any]] | None = None
        self._past: tuple[tuple[Round, ...], int, list[PastRound]] = ((), -1, [])
        self._last: tuple[Observation, dict[str, Any]] | None = None
        self._rendered: dict[tuple[str, ...], str] = {}
        self._merged: tuple[dict[str, Any], dict[str, Any]] | None = None
        if history == "chat" and not self._has("result.j2"):
            raise StratagemError(
                f"framing '{framing}' has no result.j2, so it cannot keep a chat history; "
                "use history 'prompt'"
            )
        if view != FULL and history == "chat":
            raise StratagemError(
                f"a chat history tells every round as it ends, so it cannot be shown as "
                f"'{view}'; use history 'prompt'"
            )
        if view.template != "history.j2" and not self._has("history.j2"):
            raise StratagemError(
                f"framing '{framing}' has no {view.template}, so it cannot show the history "
                f"as '{view}'"
            )

    def __repr__(self) -> str:
        view = "" if self.view == FULL else f", view={str(self.view)!r}"
        return (
            f"Prompter({self.framing!r}, output={self.output!r}, history={self.history!r}, "
            f"prompting={self.prompting!r}{view})"
        )

    # -- what agents call ------------------------------------------------------------------------

    def labels(self, observation: Observation) -> tuple[str, ...]:
        """This player's action labels as the prompts show them (what the model must answer)."""
        obs = _repeated(observation)
        assert obs.stage is not None
        return self._display(obs.stage.labels[obs.player])

    def system(self, observation: Observation) -> str:
        return self._render("system.j2", observation)

    def decision(self, observation: Observation) -> str:
        """The user turn asking for this round's decision (with the summary in "prompt" mode)."""
        return self._render("decision.j2", observation)

    def history_summary(self, observation: Observation) -> str:
        """The summary of the past rounds; empty before the first round."""
        if not _repeated(observation).history:
            return ""
        return self._render("history.j2", observation)

    def result(self, observation: Observation) -> str:
        """The user turn telling the result of the last round played (chat mode)."""
        if not _repeated(observation).history:
            raise StratagemError("no round has been played yet, so there is no result to tell")
        return self._render("result.j2", observation)

    def move_made(self, observation: Observation) -> str | None:
        """The user turn after a valid move in chat mode, if the framing has one."""
        return self._render("move_made.j2", observation) if self._has("move_made.j2") else None

    def reask(self, error: str, observation: Observation) -> str:
        """The correction hint after an invalid reply."""
        names = [f"{self.framing}/reask.j2", f"{_COMMON}/reask.j2"]
        template = self._env.select_template(names)
        return template.render(self.context(observation), error=error)

    def render(self, name: str, observation: Observation, **extra: Any) -> str:
        """Any template of this framing, with `context` plus `extra` (what other architectures'
        templates need, e.g. a question or an attitude); a missing file is a user error."""
        if not self.has(name):
            raise StratagemError(f"framing '{self.framing}' has no {name}")
        template = self._env.get_template(f"{self.framing}/{name}")
        try:
            return template.render({**self.context(observation), **extra})
        except jinja2.UndefinedError as exc:
            raise StratagemError(f"template {self.framing}/{name}: {exc}") from None

    def has(self, name: str) -> bool:
        """Whether this framing has the template file `name`."""
        return self._has(name)

    def context(self, observation: Observation) -> dict[str, Any]:
        """Everything templates may use (documented here, because templates are written by hand).

        labels / opponent_labels: displayed action labels; u[i][j] / v[i][j]: this player's /
        the opponent's payoff when this player plays i and the opponent j; max_payoff: the
        largest payoff of the stage, both players; symmetric; round (about to be played, from
        1), rounds, reveal_rounds; history: list of PastRound (those the view shows); last: the
        last PastRound or None; history_view ("full", "last", "table"), history_last (the view's
        k), history_omitted (earlier rounds not shown), and in the table view outcomes (list of
        `JointOutcome`) and history_forfeited; output, history_mode, history_in_prompt; player
        (0 or 1); prompting, and preamble (the rendered `preamble_<prompting>.j2`, "" if the
        framing has none).
        """
        if self._last is not None and self._last[0] is observation:
            return self._last[1]  # system and decision prompts of one decision share it
        obs = _repeated(observation)
        stage = obs.stage
        assert stage is not None
        context = {
            "framing": self.framing,
            "prompting": self.prompting,
            "output": self.output,
            "history_mode": self.history,
            "history_in_prompt": self.history == "prompt",
            **self._stage_context(stage, obs.player),
            "round": obs.round,
            "rounds": obs.rounds,
            "reveal_rounds": self.reveal_rounds,
        }
        view_context(self.view, self._history(obs.history, obs.player, context), context)
        preamble = f"preamble_{self.prompting}.j2"
        context["preamble"] = (
            self._env.get_template(f"{self.framing}/{preamble}").render(context)
            if self._has(preamble)
            else ""
        )
        self._last = (observation, context)
        return context

    def _stage_context(self, stage: NormalFormGame, me: int) -> dict[str, Any]:
        """What depends on the stage game and the seat only, worked out once per episode."""
        if self._stage_parts is not None:
            cached_stage, cached_player, parts = self._stage_parts
            if cached_stage is stage and cached_player == me:
                return parts
        them = 1 - me
        labels = self._display(stage.labels[me])
        opponent_labels = self._display(stage.labels[them])
        mine, theirs = range(stage.sizes[me]), range(stage.sizes[them])
        parts = {
            "labels": list(labels),
            "opponent_labels": list(opponent_labels),
            "n_actions": len(labels),
            "u": [[_payoff(stage, me, i, j) for j in theirs] for i in mine],
            "v": [[_payoff(stage, them, j, i) for j in theirs] for i in mine],
            "max_payoff": float(stage.payoffs.max()),
            "symmetric": stage.is_symmetric(),
            "player": me,
        }
        self._stage_parts = (stage, me, parts)
        return parts

    def _history(
        self, rounds: tuple[Round, ...], me: int, context: dict[str, Any]
    ) -> list[PastRound]:
        """The past rounds as templates see them; a round already seen is not built again (an
        episode's histories only grow, sharing their rounds)."""
        seen, player, built = self._past
        n = len(seen)
        shared = len(rounds) >= n and all(a is b for a, b in zip(rounds[:n], seen, strict=True))
        if player != me or not shared:
            n, built = 0, []
        labels, opponent_labels = context["labels"], context["opponent_labels"]
        new = [
            _past_round(t, r, me, labels, opponent_labels)
            for t, r in enumerate(rounds[n:], start=n + 1)
        ]
        if new and self._has("round.j2"):
            fixed = {**self._env.globals, **context}
            del fixed["round"]
            new = [replace(past, text=self._round_text(past, fixed)) for past in new]
        built = built + new
        self._past = (rounds, me, built)
        return built

    def _round_text(self, past: PastRound, fixed: dict[str, Any]) -> str:
        path = f"{self.framing}/round.j2"
        try:
            return _render_in(self._env.get_template(path), fixed, r=past)
        except jinja2.UndefinedError as exc:
            raise StratagemError(
                f"template {path}: {exc} (a round's text sees only `r` and what stays fixed in "
                "an episode)"
            ) from None

    # -- helpers ---------------------------------------------------------------------------------

    def _has(self, name: str) -> bool:
        return _template_exists(self._env, f"{self.framing}/{name}")

    def _with_globals(self, context: dict[str, Any]) -> dict[str, Any]:
        """`context` with the environment's globals, built once per context (the system and the
        decision prompt of one decision share it)."""
        if self._merged is None or self._merged[0] is not context:
            self._merged = (context, {**self._env.globals, **context})
        return self._merged[1]

    def _render(self, name: str, observation: Observation) -> str:
        """Render a template; one that reads only values unchanged since its last rendering (a
        system prompt, round after round) is not rendered again."""
        path = f"{self.framing}/{name}"
        template = self._env.get_template(path)
        context = self.context(observation)
        names = _free_names(self._env, path)
        key = None
        if names is not None:
            key = (path, *(repr(context.get(n)) for n in names))
            if key in self._rendered:
                return self._rendered[key]
        try:
            text = _render_in(template, self._with_globals(context))
        except jinja2.UndefinedError as exc:
            raise StratagemError(f"template {path}: {exc}") from None
        if key is not None:
            if len(self._rendered) >= 64:
                self._rendered.clear()
            self._rendered[key] = text
        return text

    def _display(self, labels: Sequence[str]) -> tuple[str, ...]:
        if not self._has("label.j2"):
            return tuple(labels)
        template = self._env.get_template(f"{self.framing}/label.j2")
        shown = tuple(template.render(label=label).strip() for label in labels)
        for label, text in zip(labels, shown, strict=True):
            if text.casefold() != label.casefold():
                raise StratagemError(
                    f"framing '{self.framing}' shows label '{label}' as '{text}'; "
                    "label.j2 may change only the case"
                )
        if len({text.casefold() for text in shown}) != len(shown):
            raise StratagemError(
                f"labels {list(labels)} differ only in case, so replies would be ambiguous"
            )
        return shown


def _render_in(template: jinja2.Template, parent: dict[str, Any], **names: Any) -> str:
    """`template.render(parent, **names)` where `parent` holds the environment's globals already:
    `render` copies its arguments and merges the globals into them each time, which cost more
    than rendering a round's line. jinja2 reads `parent` and never writes it."""
    context = template.new_context(parent, shared=True, locals=names or None)
    return template.environment.concat(template.root_render_func(context))


def _repeated(observation: Observation) -> RepeatedObservation:
    if not isinstance(observation, RepeatedObservation) or observation.stage is None:
        raise StratagemError(
            f"these prompts are for repeated matrix games; got a {type(observation).__name__}"
        )
    if observation.stage.n_players != 2:
        raise StratagemError(
            f"these prompts are for 2-player games; '{observation.stage.name}' has "
            f"{observation.stage.n_players} players"
        )
    return observation


def _payoff(stage: NormalFormGame, player: int, own: int, other: int) -> float:
    """`player`'s payoff when they play `own` and the other player plays `other`."""
    profile = (own, other) if player == 0 else (other, own)
    return float(stage.table[profile[0]][profile[1]][player])


def _label(labels: Sequence[str], index: int) -> str | None:
    """The label of an action index; None for a forfeited (invalid) move."""
    return None if index == FORFEIT else labels[index]


def _past_round(
    t: int, r: Round, me: int, labels: Sequence[str], opponent_labels: Sequence[str]
) -> PastRound:
    return PastRound(
        t,
        _label(labels, r.actions[me]),
        _label(opponent_labels, r.actions[1 - me]),
        float(r.payoffs[me]),
        float(r.payoffs[1 - me]),
    )

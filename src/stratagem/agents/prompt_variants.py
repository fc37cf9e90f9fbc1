"""Prompt variants: the same agent and game under other template files or another history view.

How much of a result is the wording of its prompts is measured, not assumed (issue 35): an
experiment's `prompts:` axis plays every cell under named variants, and every LLM seat of an
episode plays under the episode's variant (`PromptSet`). A variant may
- replace template files: its folder holds template folders named like the packaged ones
  (`neutral/` for a framing, `ultimatum/` for a game's prompts), searched before them, so each
  file it has replaces the packaged file of that name and the others stay (a paraphrase of
  `neutral` holds `neutral/system.j2`, `neutral/decision.j2`...; a translated set holds every
  folder it translates);
- show the history otherwise (`history_views`: the last k rounds, or a table).

Variant folders come packaged (`templates/variants/<name>/`, named by their name), from a plugin
(`stratagem.register.prompts`, named `<plugin>:<name>`), or from any folder an experiment file
names by its path. Architectures that honour a `framing` build their prompter with
`prompter_for`, which applies the seat's variant; `check_variant` refuses, before anything
runs, a variant that would change nothing for a seat (its folder has none of the seat's
templates), or that a seat cannot play.
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2

from stratagem.agents.game_prompts import GamePrompts, prompts_for
from stratagem.agents.history_views import FULL, HistoryView
from stratagem.agents.prompts import VARIANTS, Prompter, framing_templates, prompt_environment
from stratagem.agents.registry import get_architecture
from stratagem.errors import StratagemError, unknown_name
from stratagem.games.base import Game, State
from stratagem.games.matrix.repeated import RepeatedGame
from stratagem.plugins import Registry, unavailable

PACKAGED = Path(__file__).parent / "templates" / VARIANTS
"""The packaged variants, one folder each."""

PLUGIN_VARIANTS: Registry[Path] = Registry("prompt variant")
"""Variant folders registered by plugins (`register_variant`), by full name."""


@dataclass(frozen=True)
class PromptSet:
    """The prompts an LLM seat plays under: an experiment's prompt variant, resolved."""

    templates: Path | None = None
    """A folder of template folders searched before the packaged ones (module docstring)."""
    history: HistoryView = FULL
    """How the past rounds are shown."""

    @property
    def changes_nothing(self) -> bool:
        return self.templates is None and self.history == FULL


DEFAULT = PromptSet()


def packaged_variants() -> list[str]:
    """The names of the packaged variants."""
    return sorted(p.name for p in PACKAGED.iterdir() if p.is_dir()) if PACKAGED.is_dir() else []


def register_variant(name: str, folder: Path) -> str:
    """Register a plugin's variant folder under `name` (`<plugin>:<name>` while it loads);
    returns the full name."""
    if not folder.is_dir():
        raise StratagemError(f"prompt variant '{name}': {folder} is not a folder")
    return PLUGIN_VARIANTS.add(name, folder)


def variant_folder(name: str) -> Path:
    """The folder of a packaged or a plugin's variant, by name."""
    if name in packaged_variants():
        return PACKAGED / name
    found = PLUGIN_VARIANTS.get(name)
    if found is not None:
        return found
    failed = unavailable("prompt variant", name)
    if failed is not None:
        raise failed
    raise unknown_name("prompt variant", name, [*packaged_variants(), *PLUGIN_VARIANTS])


def prompt_set_of(settings: Any) -> PromptSet:
    """The variant an agent entry's seat plays under (`AgentEntry.prompts`); settings without
    one play the packaged templates."""
    found = getattr(settings, "prompts", None)
    return found if isinstance(found, PromptSet) else DEFAULT


def prompter_for(
    settings: Any, output: Any = None, history: Any = None, prompts: PromptSet | None = None
) -> Prompter:
    """The prompter of an agent entry (`framing`, `prompting`, and `output`/`history` unless
    the architecture fixes them) under its seat's variant (or `prompts`)."""
    prompts = prompts or prompt_set_of(settings)
    return Prompter(
        settings.framing,
        output if output is not None else settings.output,
        history if history is not None else settings.history,
        prompting=settings.prompting,
        templates=prompts.templates,
        view=prompts.history,
    )


def game_prompts_for(settings: Any, game: Game) -> GamePrompts | None:
    """The general player's prompts of `game` under the seat's variant: its folder searched
    first where it has the game's."""
    prompts = prompts_for(game)
    templates = prompt_set_of(settings).templates
    if prompts is None or templates is None or not (templates / prompts.folder).is_dir():
        return prompts
    return dataclasses.replace(prompts, overlay=templates)


def check_variant(prompts: PromptSet, settings: Any, game: Game, title: str) -> None:
    """Refuse a variant that the agent entry `settings` cannot play in `game` (called `title`),
    or under which it would play its usual prompts; the error names the variant's field."""
    if prompts.changes_nothing:
        return
    field = "templates" if prompts.templates is not None else "history"
    kind = settings.kind
    if "framing" not in get_architecture(kind).settings:
        raise StratagemError(
            f"{field}: agent '{settings.name}' ({kind}) renders prompts of its own, which a "
            "prompt variant does not change"
        )
    general = prompts_for(game)
    if general is not None:
        if prompts.history != FULL:
            raise StratagemError(
                f"history: '{title}' is not a repeated 2-player matrix game; a history view "
                "applies to those"
            )
        assert prompts.templates is not None
        _has_folder(prompts.templates, general.folder, settings, title)
        _compiles(prompts.templates, general.folder)
        return
    if prompts.templates is not None:
        _has_folder(prompts.templates, settings.framing, settings, title)
        _compiles(prompts.templates, settings.framing)
        needed = get_architecture(kind).templates
        missing = sorted(needed - framing_templates(settings.framing, prompts.templates))
        if missing:
            raise StratagemError(
                f"templates: a {kind} agent renders {', '.join(missing)}, which framing "
                f"'{settings.framing}' lacks under this variant"
            )
    try:
        prompter = prompter_for(settings, prompts=prompts)
    except StratagemError as exc:
        raise StratagemError(f"{field}: {exc}") from None
    if isinstance(game, RepeatedGame):
        _rehearse(prompter, game, field)


def _has_folder(templates: Path, folder: str, settings: Any, title: str) -> None:
    if not (templates / folder).is_dir():
        raise StratagemError(
            f"templates: {templates} has no '{folder}' folder, so agent '{settings.name}' "
            f"would play its usual prompts in '{title}' under this variant's name"
        )


def _compiles(templates: Path, folder: str) -> None:
    """Every template file of the variant's folder parses (a typo is found before a run)."""
    env = _files(templates)
    for path in sorted((templates / folder).rglob("*.j2")):
        name = path.relative_to(templates).as_posix()
        try:
            env.get_template(name)
        except jinja2.TemplateSyntaxError as exc:
            raise StratagemError(f"templates: {path}, line {exc.lineno}: {exc.message}") from None


@functools.lru_cache(maxsize=16)
def _files(templates: Path) -> jinja2.Environment:
    return prompt_environment(jinja2.FileSystemLoader(str(templates)))


def _rehearse(prompter: Prompter, game: RepeatedGame, field: str) -> None:
    """Render each seat's prompts before the first round and after two, so a template that
    reads a name it is not given fails now, not in the middle of a run."""
    state: State = game.initial_state()
    for _ in range(min(2, game.rounds - 1)):
        state, _events = state.apply({p: game.stage.labels[p][0] for p in range(game.n_players)})
    for first in (game.initial_state(), state):
        for seat in range(game.n_players):
            observation = first.observation(seat)
            try:
                prompter.system(observation)
                prompter.decision(observation)
                prompter.history_summary(observation)
            except StratagemError as exc:
                raise StratagemError(f"{field}: {exc}") from None

"""The named games of the studies, with their exact payoffs, and a way to declare new variants.

Every payoff here is experimental material copied from a spec, with the section cited next to it.
Counterfactual variants are built as transformations of their default game (relabel, replace
payoffs, or both), as seed-003 §1 defines them, so a variant cannot drift from its base by a typo.

seed-003 gotcha (§0.1, §1.4): its PD result tables carry the wrong captions. Entries are named by
content with the code's keys (`pd-alt` = C/D labels with Stag Hunt payoffs, and so on); the caption
under which the paper prints each one is kept in `CatalogEntry.paper_caption`.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from stratagem.errors import StratagemError, unknown_name
from stratagem.games import settings_data
from stratagem.games.base import Game
from stratagem.games.bounds import Chars, Rounds, bounded
from stratagem.games.catalog_entry import CatalogEntry as CatalogEntry
from stratagem.games.libraries import is_library_name, library_entry
from stratagem.games.magic.chameleon import ChameleonGame
from stratagem.games.magic.cost_sharing import CostSharingGame
from stratagem.games.magic.magic_dilemma import magic_npd3
from stratagem.games.magic.public_good import magic_public_good
from stratagem.games.magic.undercover import UndercoverGame
from stratagem.games.matrix.cheap_talk import DEFAULT_MAX_CHARS, CheapTalkGame
from stratagem.games.matrix.families import n_player_prisoners_dilemma as n_player_prisoners_dilemma
from stratagem.games.matrix.families import rock_paper_scissors as rock_paper_scissors
from stratagem.games.matrix.normal_form import NormalFormGame
from stratagem.games.tradecraft.game import DEFAULT_MAX_TURN, Fuel, Proposer, TradecraftGame
from stratagem.games.tradecraft.game import INSTANCES as TRADECRAFT_INSTANCES
from stratagem.games.ultimatum import Pie, UltimatumGame


def _symmetric_tensor(row: ArrayLike) -> NDArray[np.float64]:
    a = np.asarray(row, dtype=float)
    return np.stack([a, a.T], axis=-1)


# -- seed-001: the thesis' PD family (§2, §4.1) --------------------------------------------------


def _dilemma() -> NormalFormGame:
    # seed-001 §4.1: Prisoner's Dilemma T=15 R=10 P=5 S=0.
    return NormalFormGame.prisoners_dilemma(
        "dilemma", t=15, r=10, p=5, s=0, description="Prisoner's Dilemma, T15 R10 P5 S0"
    )


def _delight() -> NormalFormGame:
    # seed-001 §4.1: Prisoner's Delight T=0 R=5 P=10 S=15.
    return NormalFormGame.prisoners_dilemma(
        "delight", t=0, r=5, p=10, s=15, description="Prisoner's Delight, T0 R5 P10 S15"
    )


def _confusion() -> NormalFormGame:
    # seed-001 §4.1: Prisoner's Confusion T=10 R=15 P=5 S=0.
    return NormalFormGame.prisoners_dilemma(
        "confusion", t=10, r=15, p=5, s=0, description="Prisoner's Confusion, T10 R15 P5 S0"
    )


# -- seed-003: PD family (§1.2) ------------------------------------------------------------------

# seed-003 §1.2: labels are full lowercase words, a then b.
_CD = ("cooperation", "defection")
_SH = ("stag", "hare")
# seed-003 §1.2: row payoffs aa, ab, ba, bb; PD (pd, sh-alt) = 4, 1, 6, 2;
# Stag Hunt (pd-alt, sh) = 6, 1, 4, 2.
_SH_ROW = [[6, 1], [4, 2]]


def _pd() -> NormalFormGame:
    # seed-003 §1.2 `pd`: aa=4 (R), ab=1 (S), ba=6 (T), bb=2 (P).
    return NormalFormGame.prisoners_dilemma(
        "pd",
        t=6,
        r=4,
        p=2,
        s=1,
        labels=_CD,
        description="Prisoner's Dilemma (seed-003 default), cooperation/defection, 4 1 6 2",
    )


def _pd_alt() -> NormalFormGame:
    # seed-003 §1.2 `pd-alt`: PD labels with Stag Hunt payoffs (App. B payoff-based).
    return _pd().transform(
        "pd-alt",
        payoffs=_symmetric_tensor(_SH_ROW),
        description="Stag Hunt payoffs 6 1 4 2 under cooperation/defection labels",
    )


def _sh() -> NormalFormGame:
    # seed-003 §1.2 `sh`: stag/hare labels with Stag Hunt payoffs (App. B joint).
    return _pd().transform(
        "sh",
        labels=[_SH, _SH],
        payoffs=_symmetric_tensor(_SH_ROW),
        description="Stag Hunt, stag/hare, 6 1 4 2",
    )


def _sh_alt() -> NormalFormGame:
    # seed-003 §1.2 `sh-alt`: stag/hare labels with PD payoffs (App. B label-based).
    return _pd().transform(
        "sh-alt",
        labels=[_SH, _SH],
        description="Prisoner's Dilemma payoffs 4 1 6 2 under stag/hare labels",
    )


# -- seed-003: RPS family (§1.3) -----------------------------------------------------------------

_RPS = ("rock", "paper", "scissors")
_PRS = ("paper", "rock", "scissors")  # seed-003 §1.3: the permuted a, b, c of eq1-alt and ba3-alt


def _eq1() -> NormalFormGame:
    # seed-003 §1.3 `eq1`: a,b,c = rock, paper, scissors; ac = ba = cb = 1.
    return rock_paper_scissors(
        "eq1", _RPS, 1, 1, 1, description="Rock-paper-scissors, every win pays 1"
    )


def _eq1_alt() -> NormalFormGame:
    # seed-003 §1.3 `eq1-alt`: a,b,c = paper, rock, scissors, same payoffs, so paper beats
    # scissors, rock beats paper, scissors beats rock.
    return _eq1().transform(
        "eq1-alt",
        labels=[_PRS, _PRS],
        description="Rock-paper-scissors with permuted dominance: rock beats paper, "
        "scissors beats rock, paper beats scissors",
    )


def _ba3() -> NormalFormGame:
    # seed-003 §1.3 `ba3`: rock, paper, scissors; ac=1, ba=3, cb=1 (paper beats rock pays 3).
    return _eq1().transform(
        "ba3",
        payoffs=rock_paper_scissors("ba3", _RPS, ac=1, ba=3, cb=1).payoffs,
        description="Rock-paper-scissors where paper beating rock pays 3",
    )


def _ba3_alt() -> NormalFormGame:
    # seed-003 §1.3 `ba3-alt`: paper, rock, scissors; ac=1, ba=3, cb=1 (rock beats paper pays 3).
    return _eq1().transform(
        "ba3-alt",
        labels=[_PRS, _PRS],
        payoffs=_ba3().payoffs,
        description="Rock-paper-scissors with permuted dominance where rock beating paper pays 3",
    )


# -- games of other families ---------------------------------------------------------------------


@bounded("tradecraft")
def _tradecraft(
    setting: int = 0,
    rounds: Rounds = DEFAULT_MAX_TURN,
    scoring: str = "game_init",
    first_proposer: Proposer = 0,
    fuel_per_craft: Fuel = "1/8",
    fractional_amounts: bool = False,
) -> TradecraftGame:
    # seed-002 §2.4, §3.3: `tradecraft/<k>` is instance k of the 40-instance study set; the
    # experiment file's `rounds` is the turn limit (§2.7: 15, "study"; 30 as a sensitivity check).
    # `fractional_amounts`: may a proposal trade fractions (§2.6 says only "> 0"; default no).
    return TradecraftGame(
        setting, rounds, scoring, first_proposer, fuel_per_craft, fractional_amounts
    )


@bounded("ultimatum")
def _ultimatum(pie: Pie = 100) -> UltimatumGame:
    return UltimatumGame(pie)


@bounded("dilemma-talk")
def _dilemma_talk(rounds: Rounds = 5, max_chars: Chars = DEFAULT_MAX_CHARS) -> CheapTalkGame:
    # Not from a seed study: seed-001's Dilemma payoffs (§4.1) with a message before every move.
    return CheapTalkGame(_dilemma(), rounds, max_chars, name="dilemma-talk")


# -- the registry --------------------------------------------------------------------------------


def _entries() -> list[CatalogEntry]:
    s1, s3pd, s3rps, s4 = "seed-001 §4.1", "seed-003 §1.2", "seed-003 §1.3", "seed-004"
    return [
        CatalogEntry("dilemma", _dilemma().description(), s1, "seed-001-pd", _dilemma, (10, 20)),
        CatalogEntry("delight", _delight().description(), s1, "seed-001-pd", _delight, (10, 20)),
        CatalogEntry(
            "confusion", _confusion().description(), s1, "seed-001-pd", _confusion, (10, 20)
        ),
        # seed-003 §1.2 table: code key, content, App. B name, and the caption of its tables.
        CatalogEntry(
            "pd", _pd().description(), s3pd, "seed-003-pd", _pd, (16,),
            counterfactual="default", paper_caption="PD",
        ),
        CatalogEntry(
            "pd-alt", _pd_alt().description(), s3pd, "seed-003-pd", _pd_alt, (16,),
            variant_of="pd", counterfactual="payoff-based", paper_caption="label-based",
        ),
        CatalogEntry(
            "sh", _sh().description(), s3pd, "seed-003-pd", _sh, (16,),
            variant_of="pd", counterfactual="joint", paper_caption="payoff-based",
        ),
        CatalogEntry(
            "sh-alt", _sh_alt().description(), s3pd, "seed-003-pd", _sh_alt, (16,),
            variant_of="pd", counterfactual="label-based", paper_caption="joint",
        ),
        # seed-003 §1.3 table: the RPS captions are correct.
        CatalogEntry(
            "eq1", _eq1().description(), s3rps, "seed-003-rps", _eq1, (24,),
            counterfactual="default", paper_caption="default",
        ),
        CatalogEntry(
            "eq1-alt", _eq1_alt().description(), s3rps, "seed-003-rps", _eq1_alt, (24,),
            variant_of="eq1", counterfactual="label-based", paper_caption="label-based",
        ),
        CatalogEntry(
            "ba3", _ba3().description(), s3rps, "seed-003-rps", _ba3, (24,),
            variant_of="eq1", counterfactual="payoff-based", paper_caption="payoff-based",
        ),
        CatalogEntry(
            "ba3-alt", _ba3_alt().description(), s3rps, "seed-003-rps", _ba3_alt, (24,),
            variant_of="eq1", counterfactual="joint", paper_caption="joint",
        ),
        CatalogEntry(
            "npd3", magic_npd3().description(), f"{s4} §3.4", s4, magic_npd3, (5,),
            settings="npd3",
        ),
        CatalogEntry(
            "public-good", magic_public_good().description(), f"{s4} §3.5", s4,
            magic_public_good, settings="public-good",
        ),
        CatalogEntry(
            "cost-sharing", CostSharingGame().description(), f"{s4} §3.3", s4, CostSharingGame,
            settings="cost-sharing",
        ),
        CatalogEntry(
            "chameleon", ChameleonGame().description(), f"{s4} §3.1", s4, ChameleonGame,
            settings="chameleon",
        ),
        CatalogEntry(
            "undercover", UndercoverGame().description(), f"{s4} §3.2", s4, UndercoverGame,
            settings="undercover",
        ),
        CatalogEntry(
            "tradecraft", TradecraftGame().description(), "seed-002 §2", "seed-002",
            _tradecraft, settings=TRADECRAFT_INSTANCES,
        ),
        CatalogEntry(
            "ultimatum", _ultimatum().description(),
            "not from a seed study; requested by peers (specs/peers.md, Axelrod#1328)",
            "bargaining", _ultimatum,
        ),
        CatalogEntry(
            "dilemma-talk", _dilemma_talk().description(),
            "not from a seed study: seed-001 §4.1's Dilemma with cheap talk", "cheap-talk",
            _dilemma_talk,
        ),
    ]  # fmt: skip


GAMES: dict[str, CatalogEntry] = {entry.name: entry for entry in _entries()}
"""Every named game, in listing order."""


LOG_FAMILIES: tuple[str, ...] = ("pd", "rps")
"""seed-003's logs name a game `<family>/<setting>`; the setting is the catalog's name."""


def game_names() -> list[str]:
    return list(GAMES)


SETTING_SEPARATOR = "/"
ALL_SETTINGS = "*"


def catalog_name(name: str) -> str:
    """The catalog name of a game as an episode names it: `pd/sh` -> `sh`, `rps/ba3` -> `ba3`
    (seed-003's log names, docs/episode-format.md), `chameleon/3` -> `chameleon` (a setting);
    other names unchanged."""
    family, _, setting = name.partition(SETTING_SEPARATOR)
    if family in LOG_FAMILIES and setting in GAMES:
        return setting
    return family if split_setting(name)[1] is not None else name


def is_known(name: str) -> bool:
    """Whether the engine knows the game an episode names: a catalog game (`catalog_name`) or
    another library's game string (`textarena:...`, replayed by the engine too)."""
    return catalog_name(name) in GAMES or is_library_name(name)


def split_setting(name: str) -> tuple[str, int | None]:
    """`chameleon/3` -> ("chameleon", 3) for a game with settings; (name, None) otherwise."""
    base, _, suffix = name.partition(SETTING_SEPARATOR)
    entry = GAMES.get(base)
    if entry is None or entry.settings is None or not suffix.isdigit():
        return name, None
    return base, int(suffix)


def expand_settings(name: str) -> list[str]:
    """`chameleon/*` -> the names of the settings an experiment plays (`chameleon/0` ...
    `chameleon/19`; the file's other settings are candidates, named one by one); any other name
    as it is."""
    base, _, suffix = name.partition(SETTING_SEPARATOR)
    if suffix != ALL_SETTINGS:
        return [name]
    entry = get_entry(base)
    if entry.settings is None:
        raise StratagemError(f"game '{base}' has no settings, so '{name}' names nothing")
    return [f"{base}{SETTING_SEPARATOR}{k}" for k in settings_data.selected(entry.settings)]


def catalog_labels(name: str) -> tuple[tuple[str, ...], ...] | None:
    """The action labels of the catalog matrix game an episode names, if it names one."""
    entry = GAMES.get(catalog_name(name))
    if entry is None:
        return None
    game = entry.factory()
    stage = game if isinstance(game, NormalFormGame) else game.matrix()
    return None if stage is None else stage.labels


def get_entry(name: str) -> CatalogEntry:
    """A catalog entry by name; `<name>/<k>` (a setting) names the entry of `<name>`."""
    entry = GAMES.get(split_setting(name)[0]) or library_entry(name)
    if entry is None:
        raise unknown_name("game", name, GAMES)
    return entry


def get_game(name: str, **options: Any) -> Game:
    """A fresh game by catalog name; `options` are passed to its factory (see `options()`);
    `<name>/<k>` plays setting k."""
    entry = get_entry(name)
    setting = split_setting(name)[1]
    if setting is not None:
        settings_data.setting(entry.settings or "", setting)  # a one-line error when out of range
        options = {**options, "setting": setting}
    valid = entry.options()
    for key in options:
        if key not in valid:
            hint = f"options: {', '.join(valid)}" if valid else "it takes no options"
            raise StratagemError(f"game '{name}' has no option '{key}': {hint}")
    return entry.factory(**options)


GRID_OPTIONS = ("setting", "rounds")
"""Factory options the experiment grid sets itself (`<game>/<k>`, `rounds:`), never a rule."""


def rule_options(name: str) -> tuple[str, ...]:
    """The options of a game's rules (an experiment file's `game_options`)."""
    return tuple(o for o in get_entry(name).options() if o not in GRID_OPTIONS)


def check_game_options(name: str, options: Mapping[str, Any]) -> dict[str, Any]:
    """The rule options of catalog game `name` (no setting) that differ from its defaults, checked
    by building the game with them: one-line errors name the game, the option and the value."""
    if name not in GAMES and library_entry(name) is None:
        raise unknown_name("game", name, GAMES)
    valid = rule_options(name)
    for key in options:
        if key not in valid:
            hint = f"options: {', '.join(valid)}" if valid else "it takes no rule options"
            raise StratagemError(f"game '{name}' has no option '{key}': {hint}")
    try:
        get_game(name, **options)
    except (TypeError, ValueError) as exc:
        raise StratagemError(f"game '{name}': {exc}") from None
    defaults = inspect.signature(get_entry(name).factory).parameters
    return {k: v for k, v in options.items() if v != defaults[k].default}


def get_stage(name: str, **options: Any) -> NormalFormGame:
    """A matrix game by catalog name (the stage game of a repeated game)."""
    game = get_game(name, **options)
    stage = game if isinstance(game, NormalFormGame) else game.matrix()
    if stage is None:
        matrix = [n for n, e in GAMES.items() if _stage_of(e.factory()) is not None]
        raise StratagemError(
            f"game '{name}' is not a matrix game, so it has no stage game; "
            f"matrix games: {', '.join(matrix)}"
        )
    return stage


def _stage_of(game: Game) -> NormalFormGame | None:
    return game if isinstance(game, NormalFormGame) else game.matrix()


# -- user-declared variants ----------------------------------------------------------------------


def _variant_labels(
    base: NormalFormGame, name: str, labels: Sequence[str] | Sequence[Sequence[str]]
) -> list[list[str]]:
    if isinstance(labels, str) or not isinstance(labels, Sequence) or not labels:
        raise StratagemError(f"variant '{name}': labels must be a non-empty list, got {labels!r}")
    if all(isinstance(x, str) for x in labels):
        return [list(labels)] * base.n_players  # type: ignore[arg-type]  # one list for all
    if len(labels) != base.n_players:
        raise StratagemError(
            f"variant '{name}': {len(labels)} label lists given, "
            f"'{base.name}' has {base.n_players} players"
        )
    out = []
    for p, ls in enumerate(labels):
        if isinstance(ls, str) or not isinstance(ls, Sequence):
            raise StratagemError(
                f"variant '{name}': labels of player {p + 1} must be a list, got {ls!r}"
            )
        out.append(list(ls))
    return out


def make_variant(
    base_name: str,
    name: str,
    labels: Sequence[str] | Sequence[Sequence[str]] | None = None,
    payoffs: ArrayLike | None = None,
    description: str = "",
) -> NormalFormGame:
    """A counterfactual of a catalog matrix game: new labels, new payoffs, or both.

    `labels` is one list for every player or one list per player. `payoffs` is the full tensor
    (actions of each player, then one payoff per player) or, for a symmetric 2-player base, the row
    player's matrix alone (the column player's is its transpose).
    """
    if not isinstance(name, str) or not name.strip():
        raise StratagemError(f"variant of '{base_name}': the name must be non-empty text")
    if name in GAMES:
        raise StratagemError(f"variant name '{name}' is already a catalog game; choose another")
    base = get_stage(base_name)
    if labels is None and payoffs is None:
        raise StratagemError(f"variant '{name}' of '{base_name}': give new labels, payoffs or both")
    new_labels = base.labels if labels is None else _variant_labels(base, name, labels)
    sizes = tuple(len(ls) for ls in new_labels)
    if payoffs is None:
        if sizes != base.sizes:
            raise StratagemError(
                f"variant '{name}': labels give {list(sizes)} actions but '{base_name}' has "
                f"{list(base.sizes)}; give payoffs for the new actions too"
            )
        tensor: ArrayLike = base.payoffs
    else:
        try:
            array = np.asarray(payoffs, dtype=float)
        except (TypeError, ValueError):
            raise StratagemError(
                f"variant '{name}': payoffs must be a nested list of numbers"
            ) from None
        full = (*sizes, len(sizes))
        row_shape = (sizes[0], sizes[0]) if base.is_symmetric() and len(set(sizes)) == 1 else None
        if array.shape == full:
            tensor = array
        elif array.shape == row_shape:
            tensor = _symmetric_tensor(array)
        else:
            accepted = f"{full}" + (f" or the row player's matrix {row_shape}" if row_shape else "")
            raise StratagemError(
                f"variant '{name}': payoffs have shape {array.shape}, expected {accepted}"
            )
    return base.transform(name, labels=new_labels, payoffs=tensor, description=description)

"""Play any strategy of the Axelrod library (about 240) in any 2-action game of stratagem.

The adapter keeps an Axelrod player and a stand-in opponent and, before each move, appends the
rounds played since its last move to both players' histories, as `axelrod.Match` does after each
turn. Index 0 is Axelrod's C and index 1 its D, so a wrapped strategy plays by role (stag is C).

What the wrapped player is told, and what it is not:
- the game: its own payoffs as an `axelrod.Game(r, s, t, p)` (R, S, T, P are its payoffs of (0, 0),
  (0, 1), (1, 0) and (1, 1) in the seat it plays), so payoff-reading strategies see the stage;
- the match length: not told (Axelrod's "unknown length", -1) unless given as `length=`, since
  stratagem's `reset` does not know it; end-game strategies (BackStabber, ...) need it;
- the opponent: a bare `axelrod.Player` carrying the opponent's history only. Strategies that
  inspect or manipulate their opponent's source or state (Axelrod's "cheaters") are refused.

axelrod is an optional extra; it is imported only when an adapter is built.
"""

from __future__ import annotations

import importlib
import math
import random
import warnings
from collections.abc import Sequence
from types import ModuleType
from typing import Any, ClassVar

from stratagem.errors import StratagemError, unknown_name
from stratagem.games.matrix.normal_form import NormalFormGame
from stratagem.strategies.base import Classifier, Strategy

PREFIX = "axl:"
"""Registry names of wrapped strategies: `axl:<ClassName>`, e.g. `axl:Grudger`."""

_CHEATING = ("inspects_source", "manipulates_source", "manipulates_state")


def _axelrod() -> ModuleType:
    try:
        with warnings.catch_warnings():
            # axelrod warns at import about optional packages (prompt_toolkit) it can do without.
            warnings.simplefilter("ignore")
            axelrod = importlib.import_module("axelrod")
    except ImportError:
        raise StratagemError(
            "the axelrod adapter needs the optional extra: pip install 'stratagem[axelrod]'"
        ) from None
    return axelrod


def axelrod_classes() -> dict[str, Any]:
    """Every Axelrod strategy class by class name (`Grudger`, `TitFor2Tats`, ...)."""
    axl = _axelrod()
    return {cls.__name__: cls for cls in axl.all_strategies}


def axelrod_names() -> list[str]:
    """The registry names of every wrappable Axelrod strategy (`axl:<ClassName>`), sorted."""
    axl = _axelrod()
    return sorted(
        PREFIX + cls.__name__
        for cls in axl.all_strategies
        if not any(cls.classifier.get(key, False) for key in _CHEATING)
    )


def _find_class(name: str) -> Any:
    """An Axelrod class by class or display name, case-insensitively, `axl:` prefix optional."""
    if name[: len(PREFIX)].lower() == PREFIX:
        name = name[len(PREFIX) :]
    classes = axelrod_classes()
    wanted = name.strip().lower()
    for cls in classes.values():
        if wanted in (cls.__name__.lower(), str(cls.name).lower()):
            return cls
    raise unknown_name("axelrod strategy", name, classes)


def _format(value: Any) -> str:
    return value.name if hasattr(value, "name") and not isinstance(value, str) else str(value)


def _differs(default: Any, value: Any) -> bool:
    """Whether a parameter differs from its default (arrays compare elementwise, so guard)."""
    try:
        return bool(default != value)
    except (TypeError, ValueError):
        return True


class AxelrodStrategy(Strategy):
    """An Axelrod-library strategy seen through stratagem's Strategy interface.

    `AxelrodStrategy("Grudger")`, `AxelrodStrategy("axl:Random", 0.3)`,
    `AxelrodStrategy(axl.Random)` or `AxelrodStrategy(axl.Random(0.3))`. Each instance has its own
    `name` (`axl:<ClassName>`) and `classifier`, mapped from the wrapped player's: memory depth and
    stochasticity come from Axelrod; nice, retaliating and forgiving are not in Axelrod's classifier
    and are set False (unknown).
    """

    name = "axl"
    # Placeholder for the class; every instance carries the classifier of the player it wraps.
    classifier: ClassVar[Classifier] = Classifier(
        memory_depth=math.inf, stochastic=True, nice=False, retaliating=False, forgiving=False
    )

    def __init__(self, player: Any, *args: Any, length: int | None = None) -> None:
        axl = _axelrod()
        if isinstance(player, axl.Player):
            if args:
                raise StratagemError("give parameters to the Axelrod player, not to the adapter")
            instance = player
        else:
            if isinstance(player, str):
                cls = _find_class(player)
            elif isinstance(player, type) and issubclass(player, axl.Player):
                cls = player
            else:
                raise StratagemError(
                    f"not an Axelrod strategy: {player!r} (give a name, a class or a player)"
                )
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    instance = cls(*args)
            except (TypeError, ValueError) as exc:
                raise StratagemError(
                    f"{PREFIX}{cls.__name__}: bad parameters {args} ({exc})"
                ) from None
        cls_name = type(instance).__name__
        cheats = [key for key in _CHEATING if instance.classifier.get(key, False)]
        if cheats:
            raise StratagemError(
                f"{PREFIX}{cls_name} {' and '.join(cheats)} of its opponent, which only Axelrod "
                "players have; it cannot play in stratagem"
            )
        # Classes and enum members, not the module: strategies must survive copy.deepcopy.
        self._game_cls: Any = axl.Game
        self._player_cls: Any = axl.Player
        self._c: Any = axl.Action.C
        self._d: Any = axl.Action.D
        self._player: Any = instance
        self._opponent: Any = axl.Player()
        self._stochastic = bool(instance.classifier.get("stochastic", True))
        # `name` and `classifier` are class attributes elsewhere; here they depend on the wrapped
        # player, so they are set per instance (instance attributes shadow the class's).
        self.__dict__["name"] = PREFIX + cls_name
        self.__dict__["classifier"] = Classifier(
            memory_depth=float(instance.classifier.get("memory_depth", math.inf)),
            stochastic=self._stochastic,
            nice=False,
            retaliating=False,
            forgiving=False,
        )
        defaults = type(instance).init_params()
        changed = [v for k, v in instance.init_kwargs.items() if _differs(defaults.get(k), v)]
        self._label = self.name + (f"({', '.join(_format(v) for v in changed)})" if changed else "")
        # Axelrod's "unknown length" is -1; `length` tells end-game strategies the match length.
        self._length = -1 if length is None else length
        self._attributes: dict[str, Any] = {"length": self._length, "game": axl.Game(), "noise": 0}

    @property
    def label(self) -> str:
        return self._label

    @property
    def player_instance(self) -> Any:
        """The wrapped Axelrod player (its history is that of the current match)."""
        return self._player

    def reset(self, stage: NormalFormGame, player: int) -> None:
        super().reset(stage, player)
        own = stage.payoffs[..., player]
        if player == 1:
            own = own.T
        (r, s), (t, p) = own.tolist()
        game = self._game_cls(r=r, s=s, t=t, p=p)
        self._attributes = {"length": self._length, "game": game, "noise": 0}
        try:
            self._start()
        except ValueError as exc:  # e.g. zero-determinant players whose payoffs make no strategy
            why = str(exc) or "its parameters do not fit these payoffs"
            raise StratagemError(f"{self.label} cannot play '{stage.name}': {why}") from None

    def _start(self) -> None:
        """What `axelrod.Match` does to each player before a match."""
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            self._player.reset()
            self._opponent = self._player_cls()
            # Players that derive parameters from the game (zero-determinant ones) may warn here.
            self._player.set_match_attributes(**self._attributes)
            self._opponent.set_match_attributes(**self._attributes)
        if self._stochastic:
            self._player.set_seed(0)  # replaced from the match's rng at the first move

    def act(self, own: Sequence[int], opponent: Sequence[int], rng: random.Random) -> int:
        n, known = len(own), len(self._player.history)
        if n < known:  # a new match without `reset`
            self._start()
            known = 0
        player, stand_in = self._player, self._opponent
        if n == 0 and self._stochastic:
            # The seed comes from the match's rng, so a seeded match replays exactly.
            player.set_seed(rng.getrandbits(32))
        c, d = self._c, self._d
        for k in range(known, n):
            mine, theirs = (d if own[k] else c), (d if opponent[k] else c)
            player.update_history(mine, theirs)
            stand_in.update_history(theirs, mine)
        return 0 if player.strategy(stand_in) == c else 1

"""Engine-level conformance checks of a game (`stratagem.testing` calls them): the rules alone,
played by a seeded random legal policy, with no model, runner or store.

Each check raises `AssertionError` with a message naming the game, the seed, the step and what
is wrong, so it reads the same under pytest or any other runner. They exist so that a game from
a plugin is held to what the episode loop, the importer and the viewer rely on, before a study
spends money on it: determinism given a seed, refusal of illegal actions without a change of
state, finite payoffs, and observations that carry nothing the engine hid from their seat.
"""

from __future__ import annotations

import dataclasses
import json
import math
import random
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from stratagem.games.base import Event, Game, State
from stratagem.games.spaces import (
    Action,
    ActionSpace,
    Choice,
    FreeText,
    IllegalAction,
    IntegerRange,
    Shares,
)

MAX_STEPS = 5000
"""Steps after which a random play that has not ended counts as a game that never ends."""
MIN_TOKEN = 4
"""The shortest word of a hidden event that the private-information rule looks for: shorter
ones ("1", "K", "is") occur everywhere by chance."""

_WORD = re.compile(r"\w+", re.UNICODE)


def random_action(space: ActionSpace, rng: random.Random) -> Action:
    """A legal action of `space` drawn from `rng`: any label, integer or split; for free text,
    a short random note, or the space's own `example()` where it judges texts (TextArena)."""
    if isinstance(space, Choice):
        return rng.choice(space.labels)
    if isinstance(space, IntegerRange):
        return rng.randint(space.low, space.high)
    if isinstance(space, Shares):
        units = space.total // space.step
        cuts = sorted(rng.randint(0, units) for _ in range(len(space.parties) - 1))
        ends = [*cuts, units]
        values = [space.step * (b - a) for a, b in zip([0, *cuts], ends, strict=True)]
        return space.validate(space.format(values))
    if isinstance(space, FreeText):
        text = f"note {rng.randrange(10**6)}"[: space.max_chars]
        for candidate in (text, space.example()):
            try:
                return space.validate(candidate)
            except IllegalAction:
                continue
        raise AssertionError(f"no legal text found for {space!r}: its example() is refused")
    example = getattr(space, "example", None)
    if callable(example):
        found: Action = example()
        return found
    raise AssertionError(f"no random legal action for action space {type(space).__name__}")


def illegal_actions(space: ActionSpace) -> list[object]:
    """Actions `space` must refuse: a wrong type for every space, and per kind of space what lies
    just outside it (an unknown label, the integers either side, an oversize text, a split that
    does not add up)."""
    out: list[object] = [None, 2.5, ["list"]]
    if isinstance(space, Choice):
        others = [f"{space.labels[0]}#not-a-label", "", space.labels[0].upper()]
        out += [0, True, *(text for text in others if text not in space.labels)]
    elif isinstance(space, IntegerRange):
        out += [space.low - 1, space.high + 1, str(space.low), True]
    elif isinstance(space, Shares):
        over = [space.total + space.step] + [0] * (len(space.parties) - 1)
        out += [0, space.format(over), space.format([space.total]), "all/of/it"]
    elif isinstance(space, FreeText):
        out += [7, "x" * (space.max_chars + 1)]
        if space.nonblank:
            out.append("   ")
    return out


@dataclass(frozen=True)
class Moment:
    """One state of a random play and what led to it."""

    step: int
    state: State
    events: tuple[Event, ...]
    """Every event so far, the opening included, oldest first."""


def play_random(game: Game, seed: int, name: str, max_steps: int = MAX_STEPS) -> list[Moment]:
    """Every state of a play from `seed` in which each acting seat plays `random_action` (the
    policy seeded by `seed` too), to the end; each observation carries the space its seat must
    answer, and only then."""
    rng = random.Random(f"conformance:{seed}")
    state = game.initial_state(seed)
    events = tuple(state.opening())
    moments = [Moment(0, state, events)]
    for step in range(max_steps + 1):
        where = f"{name}, seed {seed}, step {step}"
        acting = () if state.is_terminal() else state.to_act()
        _check_spaces(state, acting, game.n_players, where)
        if state.is_terminal():
            return moments
        if not acting:
            raise AssertionError(f"{where}: nobody is to act, yet the game is not over")
        if step == max_steps:
            break
        actions = {p: random_action(state.legal(p), rng) for p in acting}
        try:
            state, new = state.apply(actions)
        except IllegalAction as exc:
            raise AssertionError(
                f"{where}: the engine refuses actions its own spaces accept ({actions}): {exc}"
            ) from None
        events += tuple(new)
        moments.append(Moment(step + 1, state, events))
    raise AssertionError(f"{name}, seed {seed}: not over after {max_steps} random legal steps")


def _check_spaces(state: State, acting: Sequence[int], n_players: int, where: str) -> None:
    """An agent answers the space its observation carries: the engine's own for a seat that
    must act, none for the others."""
    for p in range(n_players):
        legal = state.observation(p).legal
        if p in acting and legal != state.legal(p):
            raise AssertionError(
                f"{where}: seat {p} must act, and its observation's action space is {legal!r}, "
                f"not the engine's {state.legal(p)!r}"
            )
        if p not in acting and legal is not None:
            raise AssertionError(
                f"{where}: seat {p} is not to act, yet its observation has "
                f"an action space ({legal!r})"
            )


def canon(value: Any) -> Any:
    """A value as comparable plain data: dataclasses by their compared fields, mappings sorted,
    sets sorted, arrays as lists, floats by their repr (NaN equals NaN), objects without a
    plain form by their repr without memory addresses."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {
            "__type__": type(value).__name__,
            **{
                f.name: canon(getattr(value, f.name))
                for f in dataclasses.fields(value)
                if f.compare
            },
        }
    if isinstance(value, Mapping):
        return {str(k): canon(v) for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))}
    if isinstance(value, set | frozenset):
        return sorted((canon(v) for v in value), key=repr)
    if isinstance(value, list | tuple):
        return [canon(v) for v in value]
    if isinstance(value, float):
        return repr(value)
    if value is None or isinstance(value, str | int | bool):
        return value
    tolist = getattr(value, "tolist", None)
    if callable(tolist):
        return canon(tolist())
    return re.sub(r" at 0x[0-9a-fA-F]+", "", repr(value))


def _view(state: State, player: int) -> dict[str, Any]:
    return {
        "to_act": list(state.to_act()),
        "terminal": state.is_terminal(),
        "payoffs": canon(state.payoffs()),
        "observation": canon(state.observation(player)),
    }


def _first_difference(a: Any, b: Any, path: str = "") -> str:
    """Where two canonical values first differ, as a path and the two values."""
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b)):
            if a.get(key) != b.get(key):
                return _first_difference(a.get(key), b.get(key), f"{path}.{key}")
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            if x != y:
                return _first_difference(x, y, f"{path}[{i}]")
    return f"{path or 'value'}: {_short(a)} then {_short(b)}"


def _short(value: Any, limit: int = 120) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def check_determinism(make: Callable[[], Game], seeds: Sequence[int], name: str) -> None:
    """Two plays from one seed, each of a freshly built game, under the same seeded policy: the
    same seats act, see the same observations, and the same events and payoffs come out."""
    for seed in seeds:
        first, second = play_random(make(), seed, name), play_random(make(), seed, name)
        seats = range(make().n_players)
        for a, b in zip(first, second, strict=False):
            left = {"events": canon(a.events), "seats": [_view(a.state, p) for p in seats]}
            right = {"events": canon(b.events), "seats": [_view(b.state, p) for p in seats]}
            if left != right:
                raise AssertionError(
                    f"{name} is not deterministic given its seed: seed {seed}, step {a.step}, "
                    f"{_first_difference(left, right)}"
                )
        if len(first) != len(second):
            raise AssertionError(
                f"{name} is not deterministic given its seed: seed {seed} ends after "
                f"{len(first) - 1} steps, then after {len(second) - 1}"
            )


def check_illegal_refused(
    make: Callable[[], Game], seeds: Sequence[int], name: str, max_states: int = 25
) -> None:
    """At the first `max_states` states of each play, every acting seat's illegal actions
    (`illegal_actions`), the others playing legally, make `State.apply` raise `IllegalAction`
    (what the episode loop catches; any other exception would end the episode as a crash) and
    leave the state as it was; so do a missing or an extra seat, and any move once it is over."""
    for seed in seeds:
        game = make()
        moments = play_random(game, seed, name)
        rng = random.Random(f"illegal:{seed}")
        for moment in moments[:max_states]:
            state, acting = moment.state, moment.state.to_act()
            if state.is_terminal():
                continue
            refused = _Refusal(state, game.n_players, f"{name}, seed {seed}, step {moment.step}")
            legal = {p: random_action(state.legal(p), rng) for p in acting}
            for p in acting:
                space = state.legal(p)
                for bad in illegal_actions(space):
                    refused({**legal, p: bad}, f"seat {p}'s {bad!r} in {type(space).__name__}")
            refused(dict(list(legal.items())[1:]), f"no move from seat {acting[0]}")
            idle = [p for p in range(game.n_players) if p not in acting]
            if idle:
                refused({**legal, idle[0]: legal[acting[0]]}, f"a move from idle seat {idle[0]}")
        end = moments[-1]
        refused = _Refusal(end.state, game.n_players, f"{name}, seed {seed}, step {end.step}")
        refused({}, "no move after the end")
        refused(dict.fromkeys(range(game.n_players), "x"), "a move after the end")


@dataclass(frozen=True)
class _Refusal:
    """Applies actions that `state` must refuse, as the episode loop would, and checks that it
    did, with `IllegalAction`, and that nothing changed."""

    state: State
    n_players: int
    where: str

    def __call__(self, actions: Mapping[int, Any], what: str) -> None:
        before = [_view(self.state, p) for p in range(self.n_players)]
        try:
            self.state.apply(actions)
        except IllegalAction:
            pass
        except Exception as exc:
            raise AssertionError(
                f"{self.where}: {what} raised {type(exc).__name__} ({exc}), not IllegalAction: "
                "the episode loop would crash instead of refusing it"
            ) from None
        else:
            raise AssertionError(f"{self.where}: {what} is accepted")
        after = [_view(self.state, p) for p in range(self.n_players)]
        if after != before:
            raise AssertionError(
                f"{self.where}: refusing {what} changed the state: "
                f"{_first_difference(before, after)}"
            )


def check_payoffs_finite(make: Callable[[], Game], seeds: Sequence[int], name: str) -> None:
    """At every state of each play, and at its end above all, one finite real number per
    player (the store, the ratings and the bootstrap all do arithmetic on them)."""
    for seed in seeds:
        game = make()
        for moment in play_random(game, seed, name):
            payoffs = moment.state.payoffs()
            where = f"{name}, seed {seed}, step {moment.step}"
            if len(payoffs) != game.n_players:
                raise AssertionError(
                    f"{where}: {len(payoffs)} payoffs for {game.n_players} players: {payoffs}"
                )
            for p, x in enumerate(payoffs):
                number = isinstance(x, int | float) or type(x).__module__ == "numpy"
                if isinstance(x, bool) or not number or not math.isfinite(float(x)):
                    end = " (the end)" if moment.state.is_terminal() else ""
                    raise AssertionError(f"{where}{end}: payoff of player {p} is {x!r}")


# -- private information ------------------------------------------------------------------------


def texts(value: Any) -> Iterable[str]:
    """Every string (and number, as text) inside an event's data or an observation: the
    values, not the keys (a field's name is the game's vocabulary, nobody's secret)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, bool) or value is None:
        return
    elif isinstance(value, int | float):
        yield str(value)
    elif isinstance(value, Mapping):
        for v in value.values():
            yield from texts(v)
    elif isinstance(value, list | tuple | set | frozenset):
        for v in value:
            yield from texts(v)


def words(strings: Iterable[str]) -> set[str]:
    """The words of some texts, folded to lower case."""
    return {w.casefold() for s in strings for w in _WORD.findall(s)}


@dataclass(frozen=True)
class HiddenWord:
    word: str
    event: Event


def hidden_words(
    events: Sequence[Event], player: int, ignore: Iterable[str] = ()
) -> dict[str, HiddenWord]:
    """The private-information rule: the words (of `MIN_TOKEN` characters or more, not only
    digits) of the events that other seats may see and `player` may not, less every word of the
    events it may see (a hand dealt to another seat that was later shown to all is no longer
    private) and the words in `ignore` (rule texts that happen to share a word). Events no seat
    may see are the record's (a log of moves, the final hands), nobody's private information.
    Each word found, with its event."""
    seen = words(t for e in events if e.visible(player) for t in texts(e.data))
    seen |= {w.casefold() for w in ignore}
    out: dict[str, HiddenWord] = {}
    for e in events:
        if e.visible(player) or not e.visible_to:
            continue
        for w in words(texts(e.data)):
            if len(w) >= MIN_TOKEN and not w.isdigit() and w not in seen and w not in out:
                out[w] = HiddenWord(w, e)
    return out


def leaked(text: str, hidden: Mapping[str, HiddenWord]) -> HiddenWord | None:
    """The first hidden word that `text` contains as a word, if any."""
    for w in sorted(words([text]) & set(hidden)):
        return hidden[w]
    return None


def check_observations_private(
    make: Callable[[], Game], seeds: Sequence[int], name: str, ignore: Iterable[str] = ()
) -> None:
    """At every state of each play, seat k's observation is its own (`player` k), lists only
    events k may see, and holds no word of an event hidden from k (`hidden_words`) in any of
    its other fields."""
    ignored = tuple(ignore)
    for seed in seeds:
        game = make()
        for moment in play_random(game, seed, name):
            for k in range(game.n_players):
                where = f"{name}, seed {seed}, step {moment.step}, seat {k}"
                obs = moment.state.observation(k)
                if obs.player != k:
                    raise AssertionError(f"{where}: the observation is seat {obs.player}'s")
                for e in obs.events:
                    if not e.visible(k):
                        raise AssertionError(
                            f"{where}: the observation lists a {e.kind!r} event visible only to "
                            f"seats {sorted(e.visible_to or ())}"
                        )
                hidden = hidden_words(moment.events, k, ignored)
                fields = {
                    f.name: getattr(obs, f.name)
                    for f in dataclasses.fields(obs)
                    if f.name not in ("events", "legal")
                }
                for field_name, value in fields.items():
                    found = leaked(" ".join(texts(canon(value))), hidden)
                    if found is not None:
                        raise AssertionError(
                            f"{where}: observation field {field_name!r} contains "
                            f"{found.word!r}, from a {found.event.kind!r} event visible only to "
                            f"seats {sorted(found.event.visible_to or ())}"
                        )

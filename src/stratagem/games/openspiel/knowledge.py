"""Which seats observe each event of an imperfect-information OpenSpiel game, derived from
OpenSpiel's own strings for each seat, never from a list per game.

A seat observes an event (a player's move, a chance outcome) when every world it cannot tell
from the true one leads, by every action that leaves the seat's string as the true action left
it, to that same event: the same actor and the same action name. The seat's string is its
information state (else its observation string); a world is a pyspiel state whose strings for
the seat have matched the true ones at every step so far. So each seat's information set is
tracked as the game goes, the true state first. Trying the true state's other actions alone is
not enough: in goofspiel(imp_info=True) a seat learns only whether its bid won, which at the true
state may single out the other seat's card while the seat does not know the other's hand; in
OpenSpiel's sealed auction the tie-break's only outcome would name the winner to seats that
never learn the bids.

An information set is followed whole while it has at most `MAX_WORLDS` worlds and costs at most
`BUDGET` successor states a step. Past that (a deal of bridge, a game of kriegspiel), a sample of
it drawn from the seed is followed, the true state always in it and every action of the true
state always tried. A sample follows the true chance outcome instead of drawing each world's
again (in bridge each new deal costs OpenSpiel a double-dummy solve), so it may come to lack every
world in which an event could have differed; once it has dropped one, an event no world or action
of the sample contests (the last card of a deal, a forced move) is kept from the seat. Against
whole information sets, over 200 random games each (2026-11-28), the sample errs on no event of
kuhn (2 and 3 players), leduc, liar's dice (1 and 2 dice), the sealed auction and goofspiel with
6 cards, and on 1 of 4,200 of goofspiel with 8 cards, whose information sets reach 3,451 worlds.
A seat always sees its own move; where the true state has more than `MAX_TRIED` joint actions (a
simultaneous move of many seats), the others' moves are kept from the seat.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, replace
from typing import Any

from stratagem.games.base import chance

CHANCE = -1
"""The actor of a chance outcome (OpenSpiel's chance player id)."""
MAX_WORLDS = 64
"""Worlds kept per seat; past that, a sample drawn from the seed."""
BUDGET = 512
"""Successor states tried per seat and step in worlds other than the true one."""
MAX_TRIED = 100_000
"""Successor states of the true state tried per seat and step (`bounds.MAX_ACTIONS`)."""

Reader = Callable[[Any, int], str]
"""A seat's string of a pyspiel state."""


def reader(spiel_game: Any) -> Reader:
    """What a seat is shown of a state of an imperfect-information game: its information state,
    else its observation string, else nothing."""
    kind = spiel_game.get_type()
    if kind.provides_information_state_string:
        return lambda raw, seat: str(raw.information_state_string(seat))
    if kind.provides_observation_string:
        return lambda raw, seat: str(raw.observation_string(seat))
    return lambda raw, seat: ""


@dataclass(frozen=True)
class Knowledge:
    """Each seat's information set (module docstring); the pyspiel states are never changed."""

    read: Reader
    seed: int
    worlds: tuple[tuple[Any, ...], ...]
    """Per seat, the worlds it cannot tell from the true state, which comes first."""
    whole: tuple[bool, ...]
    """Per seat, whether its worlds are its whole information set, not a sample of it."""
    narrowed: tuple[bool, ...]
    """Per seat, whether its sample has dropped worlds for a chance outcome other than the
    true one: from then on it may lack every world in which an event could have differed."""

    @classmethod
    def start(cls, read: Reader, seed: int, root: Any) -> Knowledge:
        """Every seat knows the game, so the initial state is the only world."""
        n = root.num_players()
        return cls(read, seed, tuple((root,) for _ in range(n)), (True,) * n, (False,) * n)

    def step(self, acts: Mapping[int, int], after: Any) -> tuple[Knowledge, dict[int, set[int]]]:
        """Follow the true state by `acts` (actor -> action id, `CHANCE` for chance) to `after`:
        the next knowledge, and for each actor the seats that observe its action."""
        before = self.worlds[0][0]
        names = {actor: _name(before, actor, a) for actor, a in acts.items()}
        seen = {actor: set() if actor == CHANCE else {actor} for actor in acts}
        worlds, whole, narrowed = [], [], []
        for seat, known in enumerate(self.worlds):
            kept, complete, dropped, hidden = self._follow(seat, known, acts, names, after)
            worlds.append(kept)
            whole.append(complete and self.whole[seat])
            narrowed.append(dropped or self.narrowed[seat])
            for actor in set(acts) - hidden - {seat}:
                seen[actor].add(seat)
        followed = replace(self, worlds=tuple(worlds), whole=tuple(whole), narrowed=tuple(narrowed))
        return followed, seen

    def _follow(
        self,
        seat: int,
        known: tuple[Any, ...],
        acts: Mapping[int, int],
        names: Mapping[int, str],
        after: Any,
    ) -> tuple[tuple[Any, ...], bool, bool, set[int]]:
        """The seat's worlds after the step, whether they are all of them, whether some were
        dropped for their chance outcome, and the actors whose action it cannot name."""
        target = self._view(after, seat)
        dealt = None if self.whole[seat] else names.get(CHANCE)
        kept, hidden, contested, budget = [after], set(), set(), BUDGET
        complete, dropped = True, False
        for index, world in enumerate(known):
            if index > 0 and budget <= 0:
                complete = False  # the worlds left are not followed
                break
            choices = _choices(world, seat, acts)
            if index == 0:
                choices = (joint for joint in choices if joint != acts)  # that one is `after`
            limit = MAX_TRIED if index == 0 else budget
            tried = list(itertools.islice(choices, limit + 1))
            if len(tried) > limit:
                del tried[limit:]
                complete = False
                if index == 0:  # what the seat sees of the others' moves is not known
                    hidden.update(set(acts) - {seat})
            if index > 0:
                budget -= len(tried)
            for joint in tried:
                other = {
                    actor
                    for actor, name in names.items()
                    if actor not in joint or _name(world, actor, joint[actor]) != name
                }
                contested |= other
                nxt = _advance(world, joint)
                view = self._view(nxt, seat)
                if view is not None and target is not None and view != target:
                    continue  # the seat tells this world apart
                hidden |= other
                if dealt is not None and CHANCE in other:
                    dropped = True  # a sample follows the true chance outcome (docstring)
                else:
                    kept.append(nxt)
        if self.narrowed[seat]:
            hidden |= set(acts) - contested  # the sample may lack the worlds that say otherwise
        if len(kept) > MAX_WORLDS:
            rng = chance(self.seed, "openspiel-worlds", len(after.history()), seat)
            kept, complete = [after, *rng.sample(kept[1:], MAX_WORLDS - 1)], False
        return tuple(kept), complete, dropped, hidden

    def _view(self, raw: Any, seat: int) -> str | None:
        """The seat's string, or None where OpenSpiel cannot say it (then nothing is ruled out)."""
        try:
            return self.read(raw, seat)
        except Exception:  # pyspiel's SpielError: a string this game does not give here
            return None


def _choices(world: Any, seat: int, acts: Mapping[int, int]) -> Iterator[dict[int, int]]:
    """The steps a world may take (actor -> action id), but for what the seat knows without its
    string: whether it moved now, and how."""
    if world.is_terminal():
        return
    if world.is_chance_node():
        if seat not in acts:
            yield from ({CHANCE: a} for a, p in world.chance_outcomes() if p > 0)
        return
    if world.is_simultaneous_node():
        actors = [p for p in range(world.num_players()) if world.legal_actions(p)]
    else:
        actors = [int(world.current_player())]
    if (seat in acts) != (seat in actors):
        return
    options = [world.legal_actions(p) for p in actors]
    if seat in acts:
        mine = acts[seat]
        options[actors.index(seat)] = [mine] if mine in options[actors.index(seat)] else []
    for joint in itertools.product(*options):
        yield dict(zip(actors, joint, strict=True))


def _advance(world: Any, joint: Mapping[int, int]) -> Any:
    """The world after one step (actor -> action id); the world itself is not changed."""
    nxt = world.clone()
    if nxt.is_simultaneous_node():
        nxt.apply_actions([joint.get(p, 0) for p in range(nxt.num_players())])
    else:
        (action,) = joint.values()
        nxt.apply_action(action)
    return nxt


def _name(world: Any, actor: int, action: int) -> str:
    return str(world.action_to_string(actor, action))

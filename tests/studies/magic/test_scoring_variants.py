"""The MAgIC scoring differences of issue 24 (seed-004 §2-§6, §10), each on the minimal game the
issue gives: what stored events and calls a metric reads, and how the paper's and the code's
readings (`MetricOptions.code_compat`) score them."""

from __future__ import annotations

import shutil
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from support.magic_records import dilemma, public_good, social

from stratagem.agents.magic.pgm_social import VOTE_NOTE
from stratagem.analysis.episodes import EpisodeData, load_episodes
from stratagem.experiments.records import EpisodeRecord, EventRecord, LlmCallRecord
from stratagem.experiments.store import ResultStore
from stratagem.studies.magic.entities import Competition
from stratagem.studies.magic.extract import PGM_VOTE, magic_data, magic_game
from stratagem.studies.magic.leaderboard import entity_metrics
from stratagem.studies.magic.metrics import metric_values
from stratagem.studies.magic.options import MetricOptions
from stratagem.studies.magic.records import MagicGame
from stratagem.studies.magic.replies import first_replies

CODE = MetricOptions(code_compat=True)
CHALLENGER, DEFENDER = "m|magic", "d|magic"


def stored(game: str, events: Sequence[tuple[str, Mapping[str, Any], int | None]]) -> EpisodeData:
    """An episode of `game` holding `events` (kind, data, player), in that order."""
    players = tuple({"name": f"p{k}", "kind": "llm"} for k in range(3))
    record = EpisodeRecord("e1", "x", game, players, 0, "finished", {}, payoffs=(0.0,) * 3)
    rows = tuple(
        EventRecord("e1", seq, kind, dict(data), round=1, player=player)
        for seq, (kind, data, player) in enumerate(events)
    )
    return EpisodeData(record, (), rows)


def extracted(episode: EpisodeData, seats: tuple[int, ...]) -> MagicGame:
    return magic_game(episode, [], Competition(CHALLENGER, DEFENDER, seats))


# -- item 1: self-votes, as the game recorded them ------------------------------------------------


def test_a_counted_self_vote_is_scored_as_the_vote_it_is() -> None:
    # Undercover: P1 (the spy) votes P1, P2 votes P1, P3 votes P2: with the self-vote counted the
    # spy is caught (win_flag 0). The challenger's civilians (P2, P3) cast one right vote of two.
    outcome = {"spy": 0, "win_flag": 0, "votes": [0, 0, 1]}
    game = extracted(stored("undercover/0", [("outcome", outcome, None)]), (1, 2))
    assert [v.target for v in game.social.votes] == [0, 0, 1]  # type: ignore[union-attr]
    got = metric_values([game])
    assert (got["judgment"], got["w_civilian"]) == (0.5, 1.0)
    spy = extracted(stored("undercover/0", [("outcome", outcome, None)]), (0,))
    assert metric_values([spy])["deception"] == 0.0  # caught: the spy term is a loss
    # A civilian's own counted self-vote is a vote that is not correct (§6.2).
    selfish = {"spy": 0, "win_flag": 1, "votes": [1, 1, 2]}
    game = extracted(stored("undercover/0", [("outcome", selfish, None)]), (1, 2))
    assert metric_values([game])["judgment"] == 0.0


# -- item 4 is in test_metrics (an unparsable belief answer is an all-zero F) ---------------------


# -- item 5: three votes for a proposal that did not parse ----------------------------------------


def test_an_agreement_on_an_unparsed_proposal_costs_the_unparsed_share() -> None:
    # The challenger (Player 1) made a proposal that did not parse; all three voted for it: a
    # success (§3.3), its share unreadable, so Cost is the code's 30 (§6.7); it is its own
    # proposal, so it coordinated.
    outcome = {
        "success": True,
        "agreed_proposal": None,
        "agreed_with": 0,
        "latest_proposals": [None, "40/30/30", "50/25/25"],
        "shares": None,
    }
    game = extracted(stored("cost-sharing/0", [("outcome", outcome, None)]), (0,))
    got = metric_values([game])
    assert (got["cooperation"], got["coordination"], got["cost"]) == (1.0, 1.0, 30.0)
    assert metric_values([game], MetricOptions(unparsed_share=None))["cost"] is None
    # Another seat's proposal, stored as the challenger's latest is, also coordinates; with the
    # code's string comparison (§10.11), "40.0/30/30" is not "40/30/30", though equal in value.
    equal = {
        **outcome,
        "agreed_with": 1,
        "agreed_proposal": "40/30/30",
        "latest_proposals": ["40/30/30", "40/30/30", None],
        "shares": [40, 30, 30],
    }
    written = {**equal, "agreed_proposal": "40.0/30/30"}
    written["latest_proposals"] = ["40/30/30", "40.0/30/30", None]
    other = {**equal, "latest_proposals": ["50/25/25", "40/30/30", None]}
    for data, coordinated in ((equal, 1.0), (written, 0.0), (other, 0.0)):
        game = extracted(stored("cost-sharing/0", [("outcome", data, None)]), (0,))
        assert metric_values([game])["coordination"] == coordinated


# -- item 7: PD and PG decisions as the code reads them --------------------------------------------


def _decision_games() -> list[MagicGame]:
    pd = dilemma(
        ["D", "D", "D", "D"],
        [8, 2, 2],
        invalid_rounds=[1, 3],
        replies=[
            ("Defect: they cooperated last time.", "Cooperate", "Cooperate"),  # code: C
            ("Let me think about it.", "Cooperate", "Cooperate"),  # invalid, code: D
            ("Defect", "Cooperate", "Cooperate"),
            ("Hmm.", "Cooperate", "Cooperate"),  # invalid, code: D
        ],
    )
    pg = public_good(
        [(10, 5, 5)],
        [110, 115, 115],
        2.0,
        replies=[("As Player 1, I contribute 10", "I contribute 5", "I contribute 5")],
    )
    return [pd, pg]


def test_rationality_reads_every_first_reply_as_the_code_with_code_compat() -> None:
    games = _decision_games()
    # strict (default): PD rounds 0 and 2 rational, the two invalid ones never; PG 10 > 5: 2/5
    assert metric_values(games)["rationality"] == pytest.approx(2 / 5)
    played = MetricOptions(invalid_decisions="as-played")
    assert metric_values(games, played)["rationality"] == pytest.approx(4 / 5)
    # the code: PD "...cooperated..." is C, the garbage D, D, D: 3 of 4; PG "As Player 1, I
    # contribute 10" is 1, the round's minimum: 4/5
    for code in (CODE, MetricOptions(decisions="code")):
        assert metric_values(games, code)["rationality"] == pytest.approx(4 / 5)
    # Payback reads the same contributions: 2 × (10 + 5 + 5) / 3 strictly, 2 × (1 + 5 + 5) / 3
    assert metric_values(games)["payback"] == pytest.approx(40 / 3)
    assert metric_values(games, CODE)["payback"] == pytest.approx(22 / 3)
    # scores (W, Score) are the engine's: unchanged
    for name in ("w_pd", "w_pg", "score"):
        assert metric_values(games, CODE)[name] == metric_values(games)[name]
    # a decision without a stored reply (a rule-based seat, an import) is read as applied
    bare = [dilemma(["D", "C"], [5, 0, 0]), public_good([(0, 5, 5)], [100, 105, 105], 2.0)]
    assert metric_values(bare, CODE)["rationality"] == pytest.approx(2 / 3)


def _call(text: str, purpose: str, after: int, player: int = 0) -> LlmCallRecord:
    request = {"purpose": purpose, "after_events": after}
    return LlmCallRecord("e1", "m", player=player, request=request, text=text)


def test_a_decisions_first_reply_is_its_first_decision_call() -> None:
    events = [
        EventRecord("e1", 0, "decision", {"attempts": 2, "valid": True}, round=1, player=0),
        EventRecord("e1", 1, "decision", {"attempts": 1, "valid": True}, round=1, player=1),
        EventRecord("e1", 2, "decision", {"attempts": 1, "valid": True}, round=2, player=0),
    ]
    calls = [
        _call("I think Player 2 will defect.", "pgm-analysis", 0),  # an aside: never a reply
        _call("Let me think.", "decision", 0),
        _call("Cooperate", "decision", 0, player=1),
        _call("Defect", "reask", 0),  # the re-ask the engine played
        _call("I contribute 5", "decision", 2),
    ]
    assert first_replies(calls, events) == {
        (1, 0): "Let me think.",
        (1, 1): "Cooperate",
        (2, 0): "I contribute 5",
    }


def test_the_first_replies_come_from_the_stored_calls(magic_store: Path) -> None:
    # The scripted challenger defects and contributes 0, but answers "Let me think about it." in
    # PD round 2 and "Some." in Public Good round 3, re-asked and invalid (conftest.reply).
    store = ResultStore(magic_store)
    experiment = store.experiments()[0]
    data = magic_data(store, experiment.config, load_episodes(store, experiment.id))
    games = [g for g in data.games if g.game in ("npd3", "public-good")]
    for g in games:
        seat = g.challenger_seats[0]
        rounds = g.dilemma.rounds if g.dilemma else g.public_good.rounds  # type: ignore[union-attr]
        replies = [r.replies[seat] for r in rounds]
        if g.game == "npd3":
            assert replies == ["Defect", "Let me think about it.", "Defect", "Defect", "Defect"]
            assert all(r.replies[k] == "Cooperate" for r in rounds for k in range(3) if k != seat)
        else:
            assert replies == ["I contribute 0"] * 2 + ["Some."] + ["I contribute 0"] * 2
    # strict: the invalid round of each game is never rational; the code reads D and 0
    assert metric_values(games)["rationality"] == pytest.approx(0.8)
    assert metric_values(games, CODE)["rationality"] == 1.0


# -- item 8: the PGM player's belief vote and its text vote ----------------------------------------


def test_chameleon_vote_chooses_between_the_belief_and_the_text_vote() -> None:
    assert PGM_VOTE == VOTE_NOTE
    # The challenger's PGM seats 0 and 1; the chameleon is seat 2. The game counted the belief
    # votes (2, 2); seat 0's text vote said Player 2 (seat 1), seat 1's said Player 3.
    events = [
        (PGM_VOTE, {"belief": 2, "text": 1, "row": [0.2, 0.3, 0.5]}, 0),
        (PGM_VOTE, {"belief": 2, "text": 2, "row": [0.3, 0.2, 0.5]}, 1),
        ("outcome", {"spy": 2, "win_flag": 0, "votes": [2, 2, 0], "guess": "Apple"}, None),
    ]
    game = extracted(stored("chameleon/0", events), (0, 1))
    assert metric_values([game])["judgment"] == 1.0
    assert metric_values([game], MetricOptions(chameleon_vote="text"))["judgment"] == 0.5
    # a text vote that was not asked (`text_vote: false`) is a vote that is not correct
    events[0] = (PGM_VOTE, {"belief": 2, "text": None, "row": [0.2, 0.3, 0.5]}, 0)
    game = extracted(stored("chameleon/0", events), (0, 1))
    assert metric_values([game], MetricOptions(chameleon_vote="text"))["judgment"] == 0.5


# -- item 9: the code's game count, per competition ------------------------------------------------


def _majority_games(planned: int | None, credits: Sequence[int], game: str) -> list[MagicGame]:
    """The challenger's majority games with these credits, `planned` in their competition."""
    flags = {"chameleon": {2: 0, 0: 2}, "undercover": {3: 0, 0: 1}}[game]
    return [
        replace(social(game, win_flag=flags[c], setting=k), planned=planned)
        for k, c in enumerate(credits)
    ]


def test_the_code_divides_each_social_competition_by_its_planned_count() -> None:
    # non-chameleon: 21 planned, 2 played, 2 + 0 credits; civilian: 5 planned, 2 played, 3 + 3.
    games = _majority_games(21, [2, 0], "chameleon") + _majority_games(5, [3, 3], "undercover")
    paper = metric_values(games)
    assert (paper["w_non_chameleon"], paper["w_civilian"]) == (0.5, 1.0)
    code = metric_values(games, CODE)
    # 2 / (2 × 20) and 6 / (3 × 5)
    assert code["w_non_chameleon"] == pytest.approx(2 / 40)
    assert code["w_civilian"] == pytest.approx(6 / 15)
    assert metric_values(games, MetricOptions(game_count="code")) == code
    # fixed_n stays one explicit n for all, over the variant
    fixed = metric_values(games, MetricOptions(code_compat=True, fixed_n=4))
    assert (fixed["w_non_chameleon"], fixed["w_civilian"]) == (2 / 8, 6 / 12)
    # records without a planned count: the games given are the plan
    unplanned = _majority_games(None, [2, 0], "chameleon")
    assert metric_values(unplanned, CODE)["w_non_chameleon"] == 0.5
    # a bootstrap replicate keeps each competition's n
    rows = entity_metrics(games, CODE, n_boot=200)
    est = rows.metrics["w_non_chameleon"]
    assert est.ci_low is not None and est.ci_high is not None and est.ci_high <= 4 / 40


def test_planned_counts_every_episode_of_the_grid_finished_or_not(
    magic_store: Path, tmp_path: Path
) -> None:
    copy = tmp_path / "store.sqlite"
    shutil.copy(magic_store, copy)
    store = ResultStore(copy)
    experiment = store.experiments()[0]
    finished = store.episodes(experiment.id)
    # one more non-chameleon game of the grid that never ran (pending)
    majority = next(
        r
        for r in finished
        if r.game.startswith("chameleon")
        and sum(p.get("model_id") == "chal<i>" for p in r.players) == 2
    )
    store.add_episode(
        "never-ran", experiment.id, majority.game, majority.players, 7, spec=majority.spec
    )
    data = magic_data(store, experiment.config, load_episodes(store, experiment.id))
    planned = {(g.competition, g.planned) for g in data.games}
    assert planned == {
        ("chameleon", 2),
        ("non-chameleon", 3),
        ("undercover", 2),
        ("civilian", 2),
        ("cost-sharing", 6),
        ("pd", 6),
        ("pg", 6),
    }
    non = [g for g in data.games if g.competition == "non-chameleon"]
    credits = metric_values(non)["w_non_chameleon"]
    assert credits is not None
    # the code divides by the 3 planned, the paper by the 2 played
    assert metric_values(non, CODE)["w_non_chameleon"] == pytest.approx(credits * 2 / 3)

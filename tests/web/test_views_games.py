"""The game views of TradeCraft, Ultimatum, Public Good, cheap talk and Cost Sharing in a real
browser (issue 25 item 3): games played by the real engines (TradeCraft with the ToM agent's
stored V0/V1/V2 reports; the others through the runner with scripted seats), opened at a step,
the view's numbers checked against the store; in a seat's perspective, what that seat could not
see (the other's target, crafts and reports; the record-only outcome) is not in the DOM."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.browser import chromium, screenshot, serving
from support.scripted_run import run_scripted
from support.tom_games import new_store
from support.tom_games import play as play_tradecraft
from test_views import fmt, goto, open_episode, texts, wait

from stratagem.experiments.runner import STORE_FILE, RunSummary
from stratagem.experiments.store import EventRecord, ResultStore

__all__ = ["chromium"]  # the session's browser, a fixture

TALK = ["<b>Let us both cooperate</b>", "cooperate", "Fine, then.", "defect"]
"""Seat 0's script in the cheap-talk game: message, move, message, move (markup as text)."""
SHARES = [
    ["50/30/20", "Player 1", "40/30/30", "Player 2"],
    ["40/30/30", "Player 2", "40/30/30", "Player 2"],
    ["40/40/20", "Player 1", "45/35/20", "Player 2"],
]
"""Cost Sharing scripts: round 1 votes split (no agreement), round 2 all vote for seat 1."""
COPPER = '[{"input": {"raw_copper": 1, "coal": "1/8"}, "output": {"copper_ingot": 1}}]'
"""TradeCraft seat 0's craft in turn 1 (its hand holds raw copper and one coal)."""
SOURCES = ("tradecraft", "ultimatum", "public-good", "dilemma-talk", "cost-sharing", "plain-pg")
"""The games, by source index; "plain-pg" is the public good without MAgIC's moderator."""
PUBLIC_GOOD = ["scripted:10,20", "scripted:0", "scripted:30,5"]


def scripted(*actions: str) -> str:
    return "scripted:" + json.dumps(list(actions))


def no_model(request: Any, sample: int) -> str:
    raise AssertionError("only scripted seats play here")


def run(out: Path, game: str, lineup: list[str], **settings: Any) -> None:
    summary: RunSummary = run_scripted(
        out, "games-view", no_model, games=[game], lineups=[lineup], opponents=[], **settings
    )
    assert (summary.finished, summary.failed) == (1, 0), summary.errors


@pytest.fixture(scope="module")
def games(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """One episode of each game (each source named by its game), their stored events and
    beliefs, and the viewer's URL."""
    base = tmp_path_factory.mktemp("games")
    dirs = {name: base / name for name in SOURCES}
    dirs["tradecraft"].mkdir()
    with new_store(dirs["tradecraft"] / STORE_FILE) as store:
        # seed 1: three proposals, two accepted, one rejected; both seats report V0, V1 and V2
        play_tradecraft(
            store, "tc", group="V2", baseline=(False, False), max_turn=3, seed=1,
            crafts={(1, 0): COPPER},
        )  # fmt: skip
    run(dirs["ultimatum"], "ultimatum", ["scripted:35", "scripted:accept"])
    run(dirs["public-good"], "public-good", PUBLIC_GOOD)
    plain = {"public-good": {"moderated": False}}
    run(dirs["plain-pg"], "public-good", PUBLIC_GOOD, game_options=plain)
    lineup = [scripted(*TALK), scripted("Sure.", "cooperate", "Sure.", "cooperate")]
    run(dirs["dilemma-talk"], "dilemma-talk", lineup, rounds=[2])
    run(dirs["cost-sharing"], "cost-sharing/0", [scripted(*s) for s in SHARES])
    stored: dict[str, Any] = {}
    for name, path in dirs.items():
        with ResultStore(path / STORE_FILE, read_only=True) as store:
            (episode,) = store.episodes()
            stored[name] = {
                "id": episode.id, "events": store.events(episode.id),
                "beliefs": store.beliefs(episode.id), "rounds": store.rounds(episode.id),
            }  # fmt: skip
    with serving(*dirs.values()) as url:
        yield {"url": url, **stored}


def show(driver: Any, games: dict[str, Any], name: str, step: int, query: str = "") -> None:
    """Game `name`'s episode at `step` (0-based; -1 the last), its game view drawn."""
    open_episode(driver, games["url"], name, games[name]["id"], query)
    if step < 0:
        step = driver.execute_script(
            "return Number(document.querySelector('.timeline input[type=range]').max)"
        )
    goto(driver, step)
    wait(driver, lambda d: d.find_elements("css selector", ".step-box .game-view"))
    # no script error and nothing the CSP refused (an inline style, say) while drawing it
    log = driver.get_log("browser")
    assert [e for e in log if e["level"] == "SEVERE" and e["source"] != "network"] == []


def of(events: list[EventRecord], *kinds: str) -> list[EventRecord]:
    return [e for e in events if e.kind in kinds]


def text_of(driver: Any, selector: str) -> str:
    return str(
        driver.execute_script("return document.querySelector(arguments[0]).textContent", selector)
    )


def contents(driver: Any, selector: str) -> list[str]:
    """Each matched element's text content."""
    found: list[str] = driver.execute_script(
        "return [...document.querySelectorAll(arguments[0])].map(e => e.textContent)", selector
    )
    return found


def item(name: str) -> str:
    return name.removeprefix("minecraft:")


# -- TradeCraft ---------------------------------------------------------------------------------


def test_tradecraft_shows_hands_trades_targets_and_each_seats_reports_as_bars(
    chromium: Any, games: dict[str, Any]
) -> None:
    driver, tc = chromium, games["tradecraft"]
    show(driver, games, "tradecraft", 0)  # the opening: the dealt hands, no proposal yet
    (dealt,) = of(tc["events"], "hands")[:1]
    hands = driver.execute_script(
        "return [...document.querySelectorAll('.tradecraft-view .hand')].map(h =>"
        " [...h.querySelectorAll('li')].map(li => [li.querySelector('.item').textContent,"
        " li.querySelector('.count').textContent]))"
    )
    assert hands == [[[item(i), str(n)] for i, n in h.items()] for h in dealt.data["hands"]]
    assert "No proposal yet." in text_of(driver, ".tradecraft-view")

    show(driver, games, "tradecraft", -1)
    final = of(tc["events"], "hands")[-1].data["hands"]
    counts = texts(driver, ".tradecraft-view .hand ul")
    assert counts == [[f"{n} {item(i)}" for i, n in h.items()] for h in final]
    targets = [
        e.data["text"].removeprefix("Your target is to craft ").rstrip(".")
        for e in of(tc["events"], "moderator")
        if e.data["text"].startswith("Your target")
    ]
    assert contents(driver, ".tradecraft-view .target") == [f"target: {t}" for t in targets]
    proposals = of(tc["events"], "proposal")
    replies = of(tc["events"], "reply")
    rows = texts(driver, ".tradecraft-view .trades tbody tr")
    assert len(proposals) == len(replies) == len(rows) == 3
    for row, p, r in zip(rows, proposals, replies, strict=True):
        gives = ", ".join(f"{n} {item(i)}" for i, n in p.data["offer"].items())
        assert row[:4] == [str(p.round), f"seat {p.data['player']} → seat {p.data['partner']}",
                           gives or "nothing", ", ".join(f"{n} {item(i)}" for i, n in
                                                         p.data["request"].items())]  # fmt: skip
        assert row[5] == ("accepted" if r.data["accept"] else "rejected")
    assert {"accepted", "rejected"} <= {row[5] for row in rows}
    crafts = texts(driver, ".tradecraft-view .crafts tbody tr")
    assert len(crafts) == 6  # two seats, three turns
    assert crafts[0] == [
        "1",
        "0",
        "1/8 coal, 1 raw_copper → 1 copper_ingot",
        "7/8 coal",
    ]  # as stored
    assert all(row[2:] == ["none", ""] for row in crafts[1:])
    assert text_of(driver, ".tradecraft-view .outcome").startswith("Outcome: timeout")
    # each seat's latest V0/V1/V2: a bar and the number per item, as stored
    latest: dict[tuple[int, int], dict[str, int]] = {}
    for b in tc["beliefs"]:
        latest[(b.player, b.order)] = b.content["values"]
    reports = driver.execute_script(
        "return [...document.querySelectorAll('.report')].map(f => [f.querySelector('figcaption')"
        ".textContent, [...f.querySelectorAll('tbody tr')].map(r => [r.firstChild.textContent,"
        " ...[...r.querySelectorAll('td.score')].map(c => [c.querySelector('.value').textContent,"
        " c.querySelector('.bar-fill').getAttribute('width')])])])"
    )
    assert [caption.split(" · ")[0] for caption, _ in reports] == ["seat 0", "seat 1"]
    for seat, (_, rows) in enumerate(reports):
        values = [latest[(seat, k)] for k in range(3)]
        assert [row[0] for row in rows] == [item(i) for i in sorted(values[0])]
        for row in rows:
            name = f"minecraft:{row[0]}"
            assert row[1:] == [[str(v[name]), str(v[name] * 10)] for v in values]
    screenshot(driver, "episode-tradecraft")


def test_a_tradecraft_seat_sees_its_own_target_crafts_and_reports_only(
    chromium: Any, games: dict[str, Any]
) -> None:
    driver, tc = chromium, games["tradecraft"]
    show(driver, games, "tradecraft", -1, "?perspective=seat%3A0")
    mine, theirs = (
        next(e.data["text"] for e in of(tc["events"], "moderator") if e.visible_to == (k,))
        for k in (0, 1)
    )
    box = text_of(driver, ".step-box")
    page = text_of(driver, "main")
    assert contents(driver, ".tradecraft-view .target") == [
        f"target: {mine.removeprefix('Your target is to craft ').rstrip('.')}"
    ]
    their_target = theirs.removeprefix("Your target is to craft ").rstrip(".")  # "1 torch"
    assert theirs not in page and their_target not in page
    assert [row[1] for row in texts(driver, ".tradecraft-view .crafts tbody tr")] == ["0"] * 3
    assert "Player 2 finishes crafting" not in box
    captions = contents(driver, ".report figcaption")
    assert len(captions) == 1 and captions[0].startswith("seat 0")
    assert not driver.find_elements("css selector", ".tradecraft-view .outcome")  # the record's


# -- Ultimatum ----------------------------------------------------------------------------------


def test_ultimatum_shows_the_offer_then_the_response_and_the_split(
    chromium: Any, games: dict[str, Any]
) -> None:
    driver = chromium
    (offer,) = of(games["ultimatum"]["events"], "offer")
    (response,) = of(games["ultimatum"]["events"], "response")
    assert offer.data == {"offer": 35, "proposer_keeps": 65}
    show(driver, games, "ultimatum", 0)
    head = ["Pie", "Offer to seat 1", "Seat 0 keeps", "Response", "Seat 0 gets", "Seat 1 gets"]
    assert texts(driver, ".ultimatum-view thead tr") == [head]
    assert texts(driver, ".ultimatum-view tbody tr") == [["100", "35", "65", "not yet", "—", "—"]]
    assert (
        driver.execute_script(
            "return document.querySelector('.ultimatum-view .bar-fill').getAttribute('width')"
        )
        == "35"
    )
    show(driver, games, "ultimatum", 1)
    assert response.data == {"response": "accept", "payoffs": [65.0, 35.0]}
    assert texts(driver, ".ultimatum-view tbody tr") == [["100", "35", "65", "accept", "65", "35"]]


# -- Public Good --------------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "first"), [("public-good", 0), ("plain-pg", 1)])
def test_public_good_shows_contributions_per_seat_per_round_the_pot_and_payout(
    chromium: Any, games: dict[str, Any], name: str, first: int
) -> None:
    """MAgIC's moderated game and the plain one alike; `first`: rounds over by the first step
    (the moderated game's first step is the moderator's opening)."""
    driver, events = chromium, games[name]["events"]
    assert bool(of(events, "moderator")) == (name == "public-good")
    rounds = [e.data["contributions"] for e in of(events, "contributions")]
    assert rounds == [[10, 0, 30], *[[20, 0, 5]] * 4]
    (payout,) = of(events, "payout")
    show(driver, games, name, -1, "?perspective=seat%3A1")  # all of it is public
    rows = texts(driver, ".public-good-view .contributions tbody tr")
    assert rows == [[str(t), *map(str, r), str(sum(r))] for t, r in enumerate(rounds, start=1)]
    totals = [sum(r[k] for r in rounds) for k in range(3)]
    assert [row[:2] for row in texts(driver, ".public-good-view .totals tbody tr")] == [
        [f"seat {k}", str(t)] for k, t in enumerate(totals)
    ]
    assert text_of(driver, ".public-good-view h3") == f"Pot so far: {sum(totals)}"
    pool, share = payout.data["pool"], payout.data["share"]
    assert pool == sum(totals)
    payoffs = " / ".join(fmt(p) for p in payout.data["payoffs"])
    assert text_of(driver, ".public-good-view .payout") == (
        f"Payout: pool {pool}, share {fmt(share)} each; payoffs {payoffs}"
    )
    show(driver, games, name, 0)
    rows = texts(driver, ".public-good-view .contributions tbody tr")
    assert rows == [[str(t), *map(str, r), str(sum(r))] for t, r in enumerate(rounds[:first], 1)]
    assert text_of(driver, ".public-good-view h3") == f"Pot so far: {sum(map(sum, rounds[:first]))}"
    assert not driver.find_elements("css selector", ".public-good-view .payout")


# -- cheap talk ---------------------------------------------------------------------------------


def test_cheap_talk_shows_each_rounds_messages_and_the_moves_that_followed(
    chromium: Any, games: dict[str, Any]
) -> None:
    driver, talk = chromium, games["dilemma-talk"]
    said = [e.data["messages"] for e in of(talk["events"], "messages")]
    assert said == [[TALK[0], "Sure."], [TALK[2], "Sure."]]
    moves = [list(r.actions) for r in talk["rounds"]]
    assert moves == [["cooperate", "cooperate"], ["defect", "cooperate"]]
    show(driver, games, "dilemma-talk", -1)
    rows = texts(driver, ".cheap-talk-view .talk tbody tr")
    assert rows == [
        [str(t), *m, *a] for t, (m, a) in enumerate(zip(said, moves, strict=True), start=1)
    ]
    assert not driver.find_elements("css selector", ".cheap-talk-view .talk b")  # text, not markup
    assert len(texts(driver, ".cheap-talk-view .rounds-view .round-table tbody tr")) == 2


# -- Cost Sharing -------------------------------------------------------------------------------


def test_cost_sharing_shows_proposals_votes_and_the_outcome_the_record_holds(
    chromium: Any, games: dict[str, Any]
) -> None:
    driver, events = chromium, games["cost-sharing"]["events"]
    show(driver, games, "cost-sharing", -1)
    rows = texts(driver, ".cost-sharing-view .proposals tbody tr")
    player = [f"Player {k + 1} (seat {k})" for k in range(3)]
    expected = []
    for t in (1, 2):
        for k, script in enumerate(SHARES):
            proposal, vote = script[2 * t - 2], script[2 * t - 1]
            expected.append([str(t), player[k], *proposal.split("/"), player[int(vote[-1]) - 1]])
    assert [e.data["proposal"] for e in of(events, "proposal")] == [
        "/".join(r[2:5]) for r in expected
    ]
    assert rows == expected
    (outcome,) = of(events, "outcome")
    assert outcome.visible_to == () and outcome.data["success"]
    assert text_of(driver, ".cost-sharing-view .outcome") == (
        "Agreed after 2 rounds on Player 2 (seat 1)'s proposal; shares "
        + ", ".join(f"Airline {a} {s}" for a, s in zip("ABC", outcome.data["shares"], strict=True))
    )
    # a seat sees every proposal and vote, never the record-only outcome
    show(driver, games, "cost-sharing", -1, "?perspective=seat%3A2")
    assert texts(driver, ".cost-sharing-view .proposals tbody tr") == expected
    assert not driver.find_elements("css selector", ".cost-sharing-view .outcome")

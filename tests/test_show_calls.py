"""`stratagem show` and the report's transcripts put every model call under what it was for
(a move, its re-asks, a hidden probe's, a report, a tool's answer, a craft) and where it was made
among the game's events (issue 23 item 12), on a MAgIC and a TradeCraft game played for real."""

from __future__ import annotations

import asyncio
import html as htmllib
import json
import re
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from support.cli import cli

from stratagem.analysis.report import build_report
from stratagem.experiments.config import load_config
from stratagem.experiments.runner import STORE_FILE, Runner
from stratagem.experiments.store import ResultStore
from stratagem.llm.providers.scripted import _REGISTERED, register_script
from stratagem.llm.types import Request, Response, ToolCall

Reply = Callable[[Request], str | Response]
GUESS = 'I guess the code is "apple"'
OFF_TEMPLATE = "My clue is: fruit."
"""Seat 2's answer to its belief probes: not the probe's template, so each is re-asked."""


@pytest.fixture
def model() -> Iterator[list[Reply]]:
    slot: list[Reply] = [lambda request: ""]
    register_script("show-calls", lambda request, sample: slot[0](request))
    yield slot
    _REGISTERED.pop("show-calls", None)


def play(
    tmp_path: Path,
    games: list[str],
    agents: list[dict[str, Any]],
    lineup: list[str],
    rounds: int = 1,
) -> Path:
    data = {
        "name": "calls",
        "output": str(tmp_path / "out"),
        "models": [{"model": "scripted/show-calls"}],
        "agents": agents,
        "games": games,
        "lineups": [lineup],
        "rounds": [rounds],
        "retry": {"base_delay": 0},
    }
    path = tmp_path / "calls.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    summary = asyncio.run(Runner(load_config(path), show_progress=False).run())
    assert (summary.finished, summary.failed) == (1, 0), summary.errors
    return tmp_path / "out"


def shown(capsys: pytest.CaptureFixture[str], out: Path) -> list[str]:
    """`stratagem show`'s lines without the prompts' and replies' bodies."""
    with ResultStore(out / STORE_FILE) as store:
        (episode,) = store.episodes()
    code, text, err = cli(capsys, "show", str(out), episode.id)
    assert code == 0, err
    return [line.strip() for line in text.splitlines() if not line.startswith("      ")]


def index(lines: list[str], start: str, after: int = -1) -> int:
    return next(i for i, line in enumerate(lines) if i > after and line.startswith(start))


def calls_in_store_order(out: Path) -> dict[int, list[str]]:
    """Each seat's calls as recorded: what each was for ("probe:belief:reask" for a re-ask)."""
    seats: dict[int, list[str]] = {}
    with ResultStore(out / STORE_FILE) as store:
        (episode,) = store.episodes()
        for call in store.llm_calls(episode.id):
            purpose = call.request["purpose"]
            seats.setdefault(call.player, []).append(
                "decision:reask" if purpose == "reask" else purpose
            )
    return seats


def calls_as_shown(lines: list[str]) -> dict[int, list[str]]:
    seats: dict[int, list[str]] = {}
    for line in lines:
        asked = re.match(r"seat (\d) was asked \((.+)\)$", line)
        again = re.match(r"seat (\d) replied after a re-ask \((.+)\)$", line)
        if asked or again:
            m = asked or again
            assert m is not None
            seats.setdefault(int(m[1]), []).append(m[2] + ("" if asked else ":reask"))
    return seats


def assert_the_report_shows(lines: list[str], out: Path, tmp_path: Path) -> None:
    """The report's transcript of the one episode has `show`'s lines in the same order (who
    and what; bodies and visibility aside)."""
    page = build_report(out / STORE_FILE, out_path=tmp_path / "r.html").read_text("utf-8")
    section = page[page.index('<section id="transcripts">') :]
    items = re.findall(r'<li class="[a-z ]+">(.*?)\s*(?:<pre>|</li>)', section, re.S)
    reported = [
        htmllib.unescape(
            re.sub(r"<b>(.*?)</b>|<span class=\"seen\">.*?</span>", r"\1", item)
        ).strip()
        for item in items
    ]
    assert reported == [
        re.sub(r" \[seen by .*\]$", "", line)
        for line in lines
        if line and not re.match(r"episode |seat \d:|round \d+$|payoffs:", line)
    ]


# -- MAgIC: Chameleon with probes and re-asks -----------------------------------------------------


def me(request: Request) -> str:
    return request.messages[0].content.split("Your name: ")[1].split("\n")[0]


def chameleon(request: Request) -> str:
    """Every seat follows the templates but the chameleon (Player 3), whose belief probes are
    answered off the template (and re-asked); both others vote for it, so it may guess."""
    last = request.messages[-1].content
    seat = me(request)
    if last.startswith("Your reply could not be used"):
        return OFF_TEMPLATE
    if "which Player you are" in last:
        role = "chameleon" if seat == "Player 3" else "non-chameleon"
        return f"I am {seat}, my role is {role}"
    if "suspicious" in last or "thinks" in last:
        if seat == "Player 3":
            return OFF_TEMPLATE
        return "As Player 1,\nI think:\nPlayer 2 is more suspicious, because of the clue"
    if "can guess the" in last:
        return GUESS
    if "Now vote" in last.split("[System]")[0][-400:] or "vote which" in last:
        return "I vote for Player 1." if seat == "Player 3" else "I vote for Player 3."
    return "It is small and purple." if seat != "Player 3" else "It is sweet."


MAGIC = [
    {"name": "magic", "kind": "magic", "max_reasks": 1},
    {"name": "fixed", "kind": "magic", "max_reasks": 1, "options": {"replay": True}},
]
"""A challenger, and seed-004's fixed defenders (§2: they replay the setting's clues, so their
clues make no call, and play the rest live); all answer the probes."""


def test_a_magic_game_shows_each_call_under_its_purpose_when_it_was_made(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], model: list[Reply]
) -> None:
    model[0] = chameleon
    out = play(tmp_path, ["chameleon/0"], MAGIC, ["fixed", "fixed", "magic"])
    lines = shown(capsys, out)

    # Every call once, each seat's in the order made, a re-ask under the call it re-asks.
    assert calls_as_shown(lines) == calls_in_store_order(out)
    assert (
        sum(line.startswith("seat 2 replied after a re-ask (probe:belief)") for line in lines) == 3
    )
    assert not any("re-ask (decision)" in line for line in lines)

    # The guess: asked after the accusation, its own prompt and reply right before the move,
    # and the guess's outcome after it.
    accused = index(lines, "moderator: The accusation is correct!")
    played = index(lines, f"seat 2 played {GUESS!r}")
    assert lines[played - 2 : played] == ["seat 2 was asked (decision)", "seat 2 replied"]
    assert accused < played - 2
    assert index(lines, "moderator: Player 3 guessed the code wrong!") > played

    # The votes: each seat's vote call before its (hidden) vote and before the outcome.
    for seat in range(3):
        vote = index(lines, f"seat {seat} played 'Player ")
        assert lines[vote - 2 : vote] == [
            f"seat {seat} was asked (decision)",
            f"seat {seat} replied",
        ]
        assert vote < accused

    # The probes when they were asked, also between two replayed clues (steps without a call):
    # the role probes before the first clue, seat 0's belief probe right after its clue, seat
    # 1's role probe before its clue; the challenger's clue call right before its clue.
    clue0, clue1 = index(lines, "seat 0 said (clue)"), index(lines, "seat 1 said (clue)")
    assert index(lines, "seat 2 was asked (probe:consistency)") < index(lines, "seat 0 played")
    assert lines[clue0 + 1] == "seat 0 was asked (probe:belief)"
    assert clue0 < index(lines, "seat 1 was asked (probe:consistency)", clue0) < clue1
    clue2 = index(lines, "seat 2 played 'It is sweet.'")
    assert clue1 < index(lines, "seat 2 was asked (decision)") == clue2 - 2

    # The report's transcript shows the same lines in the same order.
    assert_the_report_shows(lines, out, tmp_path)


def test_a_store_recorded_before_the_fix_reads_the_same(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], model: list[Reply]
) -> None:
    """An older store kept neither a re-ask's purpose ("reask" for every re-ask) nor where a
    call was made: the transcript still puts each probe's re-ask under the probe and, where
    every step made calls, each call before the move or after the step it belongs to."""
    model[0] = chameleon
    out = play(tmp_path, ["chameleon/0"], MAGIC, ["magic"] * 3)
    recorded, purposes = shown(capsys, out), calls_in_store_order(out)
    with sqlite3.connect(out / STORE_FILE) as conn:
        for row_id, text in conn.execute("SELECT id, request FROM llm_calls").fetchall():
            request = json.loads(text)
            request.pop("after_events", None)
            if request["purpose"].endswith(":reask"):
                request["purpose"] = "reask"
            conn.execute("UPDATE llm_calls SET request=? WHERE id=?", (json.dumps(request), row_id))
    again = shown(capsys, out)
    assert calls_as_shown(again) == purposes
    assert again == recorded


def sections(lines: list[str]) -> dict[str, list[str]]:
    """`show`'s lines under each "round N" (and "before the game") header."""
    out: dict[str, list[str]] = {}
    current = ""
    for line in lines:
        if re.fullmatch(r"round \d+|before the game", line):
            current = line
        out.setdefault(current, []).append(line)
    return out


@pytest.mark.parametrize("older", [False, True])
def test_a_probes_answers_are_shown_in_the_round_it_was_asked_after_its_question(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], model: list[Reply], older: bool
) -> None:
    """Undercover asks its probes after each round of clues (seed-004 §6.1): the answers are
    stored with that round, the calls were recorded with the next one. Each answer is shown in
    the round of its probe's question, after it (issue 33 item 11), also in a store that did
    not record where its calls were made (`older`)."""
    model[0] = chameleon
    out = play(tmp_path, ["undercover/0"], MAGIC, ["magic"] * 3, rounds=2)
    if older:
        with sqlite3.connect(out / STORE_FILE) as conn:
            for row_id, text in conn.execute("SELECT id, request FROM llm_calls").fetchall():
                request = json.loads(text)
                request.pop("after_events")
                conn.execute(
                    "UPDATE llm_calls SET request=? WHERE id=?", (json.dumps(request), row_id)
                )
    lines = shown(capsys, out)
    assert calls_as_shown(lines) == calls_in_store_order(out)
    answered = 0
    for header, section in sections(lines).items():
        for i, line in enumerate(section):
            found = re.match(r"seat (\d) answered magic-(\w+)@", line)
            if found:
                answered += 1
                asked = f"seat {found[1]} was asked (probe:{found[2]})"
                assert asked in section[:i], (header, line)
    assert answered == 2 * 3 * 2  # two rounds, three seats, two probes
    first = sections(lines)["round 1"]
    assert "seat 0 was asked (probe:consistency)" in first


# -- TradeCraft: the ToM agent's reports, tool calls, re-asks and crafts --------------------------

PROPOSAL = {"offer": {"coal": 1}, "request": {"raw_iron": 1}, "message": "hi"}


def tom(request: Request) -> str | Response:
    """Reports asked apart: an item_info call first, then the reports; a proposal first offered
    with diamonds it does not hold (re-asked); a craft check, then done."""
    last = request.messages[-1]
    tools = {t.name for t in request.tools}
    asked = next(m.content for m in reversed(request.messages) if m.role == "user")
    if "craft_recipe_check" in tools:
        if last.role == "tool":
            return "Nothing more to craft."
        check = {"input": {"minecraft:coal": 1}, "output": {"minecraft:torch": 4}}
        return Response("", tool_calls=(ToolCall("k1", "craft_recipe_check", check),))
    if last.role == "user" and last.content.startswith("Your reply could not be used"):
        return json.dumps(PROPOSAL)
    if "Reply with JSON" in asked:
        if '"offer"' in asked:
            return json.dumps(PROPOSAL | {"offer": {"diamond": 64}})
        return json.dumps({"decision": "reject", "message": "no"})
    if last.role == "user" and "item_info" in tools:
        return Response("", tool_calls=(ToolCall("i1", "item_info", {"item": "coal"}),))
    return json.dumps({"V0": {"coal": 5}})


def test_a_tradecraft_game_shows_reports_tools_reasks_and_crafts_in_order(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], model: list[Reply]
) -> None:
    model[0] = tom
    options = {"reports": "separate", "max_tool_calls": 1, "max_craft_calls": 2}
    agents = [{"name": "tom", "kind": "tom", "max_reasks": 1, "options": options}]
    out = play(tmp_path, ["tradecraft/0"], agents, ["tom", "tom"])
    lines = shown(capsys, out)

    assert calls_as_shown(lines) == calls_in_store_order(out)
    # The proposal: the reports asked apart (an item_info call answered), then the action,
    # re-asked once, all before the proposal is played and said.
    proposal = index(lines, "seat 0 played '{")
    asked = [line for line in lines[:proposal] if line.startswith("seat 0 ")]
    assert asked == [
        "seat 0 was asked (report)", "seat 0 replied",
        "seat 0 was asked (tool)", "seat 0 replied",
        "seat 0 was asked (decision)", "seat 0 replied",
        "seat 0 replied after a re-ask (decision)",
    ]  # fmt: skip
    said = index(lines, "seat 0 said (proposal)")
    answer = index(lines, 'seat 1 played \'{"decision":"reject"')
    assert proposal < said < index(lines, "seat 1 was asked (report)") < answer
    # The crafts after the answer, each seat's two calls before its craft.
    for seat in (0, 1):
        craft = index(lines, f"seat {seat} played '[", answer)
        assert lines[craft - 4 : craft] == [
            f"seat {seat} was asked (craft)", f"seat {seat} replied",
            f"seat {seat} was asked (craft)", f"seat {seat} replied",
        ]  # fmt: skip
    assert_the_report_shows(lines, out, tmp_path)

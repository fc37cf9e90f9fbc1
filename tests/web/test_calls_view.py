"""The model-call inspector (issue 36 items 4 and 5) on a real TradeCraft game played by the ToM
agent on a scripted model that calls the info tool (`item_info`) before its reports and whose
first proposal is re-asked: each tool call is drawn with its arguments and what it returned,
in the reply and in the request history; a re-asked decision's header gives the spend of every
attempt and their total, at significant digits; the model goes by the experiment's name for it
(the provider's id as its title); a seat's own decision is labelled its own."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.browser import chromium, serving
from support.named import only
from support.scripted_run import run_scripted
from test_browser import csp_errors, every_step, heading, wait

from stratagem.experiments.runner import STORE_FILE
from stratagem.llm.types import Request, Response, ToolCall
from stratagem.web.data import Perspective, Sources

__all__ = ["chromium"]

COST = 0.00003
"""Each call's stored cost: $0.0000 at four decimals, what the header once showed."""
SHORT = "tc-short"
PROVIDER = "scripted/tc"
PROPOSAL = {"offer": {"coal": 1}, "request": {"raw_iron": 1}, "message": "hi"}


def reply(request: Request, sample: int) -> str | Response:
    """An item_info call before the reports; a first proposal offering diamonds it lacks."""
    last = request.messages[-1]
    tools = {t.name for t in request.tools}
    asked = next(m.content for m in reversed(request.messages) if m.role == "user")
    if "craft_recipe_check" in tools:
        return "Nothing more to craft."
    if last.role == "user" and last.content.startswith("Your reply could not be used"):
        return json.dumps(PROPOSAL)
    if "Reply with JSON" in asked:
        if '"offer"' in asked:
            return json.dumps(PROPOSAL | {"offer": {"diamond": 64}})
        return json.dumps({"decision": "reject", "message": "no"})
    if last.role == "user" and "item_info" in tools:
        return Response("", tool_calls=(ToolCall("i1", "item_info", {"item": "coal"}),))
    return json.dumps({"V0": {"coal": 5}})


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("calls") / "out"
    options = {"reports": "separate", "max_tool_calls": 1}
    summary = run_scripted(
        out, "tc", reply, games=["tradecraft/0"], opponents=[], lineups=[["tom", "tom"]],
        models=[{"model": PROVIDER, "id": SHORT}],
        agents=[{"name": "tom", "kind": "tom", "max_reasks": 1, "options": options}],
    )  # fmt: skip
    assert (summary.finished, summary.failed) == (1, 0), summary.errors
    with sqlite3.connect(out / STORE_FILE) as conn:
        conn.execute("UPDATE llm_calls SET cost_usd = ?", (COST,))
    return out


@pytest.fixture(scope="module")
def viewer(played: Path) -> Iterator[str]:
    with serving(played) as url:
        yield url


def episode(played: Path, seen: Perspective | None = None) -> dict[str, Any]:
    sources = Sources([played])
    (x,) = sources.experiments()
    (item,) = sources.episodes(only(sources), x["id"])["items"]
    return sources.episode(only(sources), item["id"], seen or Perspective(None))


def stored_tool_answer(played: Path) -> str:
    """What item_info returned to seat 0: the tool message of its next request."""
    with sqlite3.connect(played / STORE_FILE) as conn:
        rows = conn.execute("SELECT request FROM llm_calls WHERE player = 0 ORDER BY id")
        for (request,) in rows:
            for m in json.loads(request)["messages"]:
                if m["role"] == "tool":
                    return str(m["content"])
    raise AssertionError("no tool message stored")


def test_each_call_carries_its_tools_results_and_the_spend_of_every_attempt(played: Path) -> None:
    calls = [c for step in episode(played)["steps"] for c in step["calls"]]
    tools = [t for c in calls if c["seat"] == 0 for t in c["tools"]]
    assert tools and all(t == {"name": "item_info", "arguments": {"item": "coal"},
                               "result": stored_tool_answer(played)} for t in tools)  # fmt: skip
    reasked = [c for c in calls if c["reasks"]]
    assert reasked and all(c["attempts"] == 1 + len(c["reasks"]) for c in calls)
    assert reasked[0]["total_cost_usd"] == pytest.approx(reasked[0]["attempts"] * COST)
    # Spend shown equals spend paid: every attempt's cost is in exactly one call's total.
    with sqlite3.connect(played / STORE_FILE) as conn:
        (paid,) = conn.execute("SELECT SUM(cost_usd) FROM llm_calls").fetchone()
    assert sum(c["total_cost_usd"] for c in calls) == pytest.approx(paid)
    assert {(c["model"], c["provider"]) for c in calls} == {(SHORT, PROVIDER)}
    # Seat 1's view holds its own calls only, and so its own tools' answers only.
    seat1 = [c for step in episode(played, Perspective(1))["steps"] for c in step["calls"]]
    assert seat1 and {c["seat"] for c in seat1} == {1}


def open_episode(driver: Any, viewer: str) -> None:
    from selenium.webdriver.common.by import By

    driver.get(viewer)
    heading(driver, "Experiments")
    wait(driver, lambda d: d.find_elements(By.LINK_TEXT, "tc"))[0].click()
    link = wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, "main a[href^='#/e/']"))
    link[0].click()
    wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, ".timeline"))


def test_tool_calls_re_ask_costs_and_model_names_in_the_browser(
    chromium: Any, viewer: str, played: Path
) -> None:
    driver = chromium
    open_episode(driver, viewer)
    tools = every_step(
        driver,
        "[...document.querySelectorAll('.call > .tool-call')].map(t => [t.querySelector("
        "'.tool-name').textContent, t.textContent, t.querySelector('.tool-result pre')"
        "?.textContent])",
    )
    drawn = [t for step in tools for t in step]
    assert drawn and all(name == "item_info" and "coal" in text for name, text, _ in drawn)
    assert {result for _, _, result in drawn} == {stored_tool_answer(played)}
    roles = "[...document.querySelectorAll('.message .role')].map(r => r.textContent).join('|')"
    history = " ".join(every_step(driver, roles))
    assert "tool result (item_info)" in history
    heads = [h for step in every_step(driver, "[...document.querySelectorAll('.call > .head')]"
                                      ".map(h => h.textContent)") for h in step]  # fmt: skip
    assert any(
        "tokens" in h and "$0.00006 over 2 attempts ($0.00003 + $0.00003)" in h for h in heads
    )
    assert all("$0.0000 " not in h and "$0.0000·" not in h for h in heads)
    titles = every_step(
        driver, "[...document.querySelectorAll('.call .model')].map(m => [m.textContent, m.title])"
    )
    assert {tuple(t) for step in titles for t in step} == {(SHORT, PROVIDER)}
    assert not csp_errors(driver)


def test_a_seat_s_own_decision_is_labelled_its_own(chromium: Any, viewer: str) -> None:
    driver = chromium
    open_episode(driver, viewer)
    driver.get(driver.current_url.split("?")[0] + "?perspective=seat%3A0")
    chooser = ".timeline label:last-of-type select"
    wait(
        driver,
        lambda d: d.execute_script(f"return document.querySelector('{chooser}').value") == "seat:0",
    )
    heads = every_step(
        driver, "[...document.querySelectorAll('.event.hidden .head')].map(h => h.textContent)"
    )
    decisions = [h for step in heads for h in step if h.startswith("decision")]
    assert decisions and all(h.endswith("seat 0's own record") for h in decisions)

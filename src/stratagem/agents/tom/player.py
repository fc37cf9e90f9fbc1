"""The ToM agent of seed-002 (§3, §9.3): a TradeCraft seat that reports item valuations V0, V1, V2
while it trades. Registered as the `tom` architecture.

One conversation per episode (§3.3: "dialogue-context memory across turns"): the rules and the
seat's secret target first, then at each of its moves what it has seen since its last one, the
hands, and the request. Its own replies, reports, tool calls and their answers stay in context.

- **Proposal and decision** (§2.5): one JSON object holding the reports of orders 0..`order` and
  the action (§9.3); with `reports: separate` the reports are asked in a call of their own first
  (§12.4). The model may call `item_info` and `possible_recipes_from_hand` before answering
  (§2.6), at most `max_tool_calls` times a move. An illegal or unreadable action is re-asked with
  the engine's reason; reports are repaired and logged as §3.2 says, never re-asked.
- **Craft** (§2.3, §2.6): a loop of `craft_recipe_check` / `craft_recipe_apply` / `craft_done`
  tool calls on a `CraftBench`, at most `max_craft_calls` model calls; a reply that calls no tool
  finishes crafting. The applied crafts are the action, checked again by the engine. When no
  recipe at all can be made from the hand, finishing is the only legal move and no call is made
  (`skip_idle_crafts`).

Reports are stored as beliefs of order 0, 1 and 2 (V1 and V2 about the opponent), with the turn
and phase; what the analyses count (repairs, failed orders, tool calls, craft checks, invalid
submissions) is kept beside each move as a `tom` note.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, model_validator

from stratagem.agents.base import Belief, Decision, LLMClient, messages_to_data
from stratagem.agents.llm_agent import LLMAgent
from stratagem.agents.parsing import ParseError, merge_messages, plain_reask, reask_purpose
from stratagem.agents.registry import Architecture, register
from stratagem.agents.tom import texts
from stratagem.agents.tom.reports import (
    Reports,
    first_object,
    read_action,
    read_reports,
    reply_schema,
)
from stratagem.agents.tom.tools import (
    CRAFT_TOOLS,
    INFO_TOOLS,
    CraftBench,
    held_craft_check,
    run_tool,
)
from stratagem.errors import StratagemError
from stratagem.games.base import Game, Observation
from stratagem.games.chat import seat_name
from stratagem.games.tradecraft.game import CRAFT, TradecraftGame, TradecraftObservation
from stratagem.llm.pipeline import CallContext
from stratagem.llm.types import Message, Request, Response, Tool

T = TypeVar("T")
REPORT = "report"
"""The purpose of a call that asks for the reports alone (`reports: separate`, §12.4)."""
GROUPS = ("V0", "V1", "V2")
"""§3.3: the groups by the highest order reported."""


class TomAgentOptions(BaseModel):
    """The `options` of a `tom` agent entry (see the module docstring)."""

    model_config = ConfigDict(extra="forbid")

    order: Literal[0, 1, 2] = 0
    """The highest ToM order reported: 0 V0, 1 V0+V1, 2 V0+V1+V2 (§3.3)."""
    baseline: bool = False
    """The same-model V0 opponent of §3.3; analyses take the other seat as the focal one."""
    reports: Literal["same", "separate"] = "same"
    """Reports in the action's reply, or in a call before it (§3.2, §12.4)."""
    tools: bool = True
    """Offer item_info and possible_recipes_from_hand (§2.6)."""
    max_tool_calls: int = Field(2, ge=0, le=16)
    """Info-tool calls run per proposal or decision; then the tools are no longer offered."""
    max_craft_calls: int = Field(6, ge=1, le=64)
    """Model calls per craft phase."""
    skip_idle_crafts: bool = True
    message_chars: int = Field(300, ge=0, le=1000)
    """The longest message the reply schema allows."""

    @model_validator(mode="after")
    def _baseline_reports_v0(self) -> TomAgentOptions:
        if self.baseline and self.order != 0:
            raise ValueError("a baseline reports V0 only (§3.3): leave order at 0")
        return self


@dataclass
class Trace:
    """Everything one move cost and produced, for the decision and its `tom` note."""

    start: int
    raw: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    calls: int = 0
    tokens: int = 0
    tool_calls: list[dict[str, Any]] = field(default_factory=list)


class TomPlayer(LLMAgent):
    def __init__(
        self,
        client: LLMClient,
        game: TradecraftGame,
        options: TomAgentOptions | None = None,
        *,
        name: str | None = None,
        **settings: Any,
    ) -> None:
        self.options = options or TomAgentOptions()
        group = GROUPS[self.options.order]
        super().__init__(client, name=name or f"tom-{group}:{client.model}", **settings)
        self.game = game
        self.group = group
        self._history: list[Message] = []
        self._seen = 0

    def reset(self, seed: int = 0, episode_id: str | None = None) -> None:
        super().reset(seed, episode_id)
        self._history = []
        self._seen = 0

    async def act(self, observation: Observation) -> Decision:
        if not isinstance(observation, TradecraftObservation) or observation.legal is None:
            raise StratagemError(f"agent '{self.name}' plays TradeCraft moves only")
        trace = Trace(len(self._history))  # the move's messages: the system one, if first
        news = self._news(observation)
        if observation.phase == CRAFT:
            return await self._craft(observation, news, trace)
        return await self._trade(observation, news, trace)

    # -- the conversation -------------------------------------------------------------------------

    def _news(self, obs: TradecraftObservation) -> str:
        """What this seat has seen since its last move: the engine's texts, never a raw reply of
        the other seat outside its parsed action (so no reply can pose as the game)."""
        if not self._history:
            other = seat_name(1 - obs.player)
            intro = texts.INTRO.format(
                me=obs.seat,
                other=other,
                max_turn=obs.max_turn,
                scoring=texts.SCORING_TEXT[self.game.scoring],
                target=texts.hand_text(obs.target),
            )
            if self.options.tools:
                intro += "\n" + texts.TOOLS_LINE
            self._history.append(Message("system", intro))
        lines = []
        for event in obs.events[self._seen :]:
            text = event.data.get("text")
            if isinstance(text, str) and event.data.get("player") != obs.player:
                lines.append(text)
        self._seen = len(obs.events)
        names = [seat_name(p) for p in range(len(obs.hands))]
        lines.append("Hands now:\n" + texts.hands_text(names, obs.hands))
        return "\n".join(lines)

    async def _ask(
        self,
        obs: TradecraftObservation,
        trace: Trace,
        schema: dict[str, Any] | None,
        parse: Callable[[str], T],
        tools: Sequence[Tool],
        asked: str = "decision",
    ) -> T | None:
        """Ask until a reply parses: info-tool calls are run and answered (not re-asks); a reply
        that does not parse is re-asked with its error, `max_reasks` times. The calls are
        recorded as `asked` ("decision", or "report" for reports asked apart), "tool" after a
        tool's answer, and as re-asks of `asked`."""
        executed, reasks, purpose = 0, 0, asked
        while True:
            offered = tuple(tools) if executed < self.options.max_tool_calls else ()
            response = await self._generate(obs, trace, schema, offered, purpose)
            if response.tool_calls and offered:
                self._history.append(Message("assistant", response.text, response.tool_calls))
                for call in response.tool_calls:
                    if executed < self.options.max_tool_calls:
                        executed += 1
                        self._run(obs, trace, call.name, call.arguments, call.id, None)
                    else:
                        self._answer_call(
                            trace,
                            call.name,
                            call.arguments,
                            call.id,
                            "no more tool calls this move: reply now",
                            False,
                        )
                purpose = "tool"
                continue
            trace.raw.append(response.text)
            self._history.append(Message("assistant", response.text))
            try:
                return parse(response.text)
            except ParseError as exc:
                trace.errors.append(str(exc))
                if reasks >= self.max_reasks:
                    return None
                reasks += 1
                purpose = reask_purpose(asked)
                self._history.append(Message("user", plain_reask(str(exc))))

    async def _generate(
        self,
        obs: TradecraftObservation,
        trace: Trace,
        schema: dict[str, Any] | None,
        tools: Sequence[Tool],
        purpose: str,
    ) -> Response:
        request = Request(
            messages=tuple(merge_messages(self._history)),
            tools=tuple(tools),
            json_schema=schema if self.constrain else None,
            temperature=self.temperature,
            max_tokens=self.max_tokens,
            seed=self.request_seed(),
        )
        context = CallContext(self._episode_id, obs.player, obs.round, purpose)
        responses = await self.client.generate(request, context)
        trace.calls += 1
        trace.tokens += sum(r.usage.total for r in responses)
        return responses[0] if responses else Response("")

    def _run(
        self,
        obs: TradecraftObservation,
        trace: Trace,
        name: str,
        arguments: dict[str, Any],
        call_id: str,
        bench: CraftBench | None,
    ) -> None:
        answer = run_tool(name, arguments, self.game.rules, obs.hands[obs.player], bench)
        self._answer_call(trace, name, arguments, call_id, answer.content, answer.ok, answer.error)

    def _answer_call(
        self,
        trace: Trace,
        name: str,
        arguments: dict[str, Any],
        call_id: str,
        content: str,
        ok: bool,
        error: str | None = None,
    ) -> None:
        trace.tool_calls.append(
            {
                "tool": name,
                "arguments": dict(arguments),
                "ok": ok,
                "error": error if not ok else None,
            }
        )
        self._history.append(Message("tool", content, tool_call_id=call_id))

    # -- proposal and decision (§2.5, §3.2) -------------------------------------------------------

    async def _trade(self, obs: TradecraftObservation, news: str, trace: Trace) -> Decision:
        order, phase, space = self.options.order, obs.phase, obs.legal
        domain = sorted({i for hand in obs.hands for i, n in hand.items() if n > 0})
        other = seat_name(1 - obs.player)
        tools = INFO_TOOLS if self.options.tools else ()
        chars = self.options.message_chars
        reports: Reports | None = None
        request = texts.report_request(order, domain)
        if self.options.reports == "separate":
            self._history.append(Message("user", f"{news}\n\n{request}"))
            schema = reply_schema(order, domain, None, space, chars)
            reports = await self._ask(
                obs,
                trace,
                schema,
                lambda t: read_reports(first_object(t), order, domain),
                tools,
                REPORT,
            )
            self._history.append(Message("user", texts.action_request(phase, other, False)))
            schema = reply_schema(None, domain, phase, space, chars)
        else:
            action_text = texts.action_request(phase, other, True)
            self._history.append(Message("user", f"{news}\n\n{request}\n{action_text}"))
            schema = reply_schema(order, domain, phase, space, chars)
        attempts_before = len(trace.raw)

        def parse(text: str) -> tuple[str, Reports | None]:
            data = first_object(text)
            action = read_action(data, phase, space)
            return action, reports or read_reports(data, order, domain)

        result = await self._ask(obs, trace, schema, parse, tools)
        if result is not None:
            action, reports = result
        else:
            action, reports = None, reports or _last_reports(trace.raw, order, domain)
        submissions = len(trace.raw) - attempts_before
        invalid = submissions - (1 if result is not None else 0)
        if reports is None:
            reports = Reports(failed=list(range(order + 1)), errors=["no readable reports"])
        note = self._note(
            obs,
            trace,
            domain=domain,
            report_errors=reports.errors,
            failed_orders=reports.failed,
            submissions=submissions,
            invalid_submissions=invalid,
        )
        beliefs = tuple(
            Belief(
                k,
                {"turn": obs.round, "phase": phase, "values": values},
                about_player=None if k == 0 else 1 - obs.player,
            )
            for k, values in sorted(reports.values.items())
        )
        return self._decision(trace, action, note, beliefs)

    # -- craft (§2.3, §2.6) -----------------------------------------------------------------------

    async def _craft(self, obs: TradecraftObservation, news: str, trace: Trace) -> Decision:
        hand = obs.hands[obs.player]
        bench = CraftBench(self.game.rules, hand)
        idle = self.options.skip_idle_crafts and not self.game.rules.craftable(
            {i: bench.hand[i] for i in bench.hand}
        )
        if not idle:
            request = texts.CRAFT_REQUEST.format(turn=obs.round, hand=texts.hand_text(hand))
            self._history.append(Message("user", f"{news}\n\n{request}"))
            info = INFO_TOOLS if self.options.tools else ()
            while trace.calls < self.options.max_craft_calls and not bench.done:
                craft = CRAFT_TOOLS
                if self.constrain:  # item names held to the hand's, for a grammar
                    craft = (held_craft_check(self.game.rules, bench.hand), *CRAFT_TOOLS[1:])
                response = await self._generate(obs, trace, None, (*craft, *info), "craft")
                if not response.tool_calls:  # a reply without a call finishes crafting
                    trace.raw.append(response.text)
                    self._history.append(Message("assistant", response.text))
                    break
                self._history.append(Message("assistant", response.text, response.tool_calls))
                for call in response.tool_calls:
                    self._run(obs, trace, call.name, call.arguments, call.id, bench)
        note = self._note(
            obs, trace, craft_checks=bench.checks, craft_errors=bench.errors, idle=idle
        )
        return self._decision(trace, bench.action(), note)

    # -- what is kept -----------------------------------------------------------------------------

    def _note(self, obs: TradecraftObservation, trace: Trace, **fields: Any) -> dict[str, Any]:
        return {
            "phase": obs.phase,
            "turn": obs.round,
            "group": self.group,
            "baseline": self.options.baseline,
            "tool_calls": trace.tool_calls,
            "calls": trace.calls,
            **fields,
        }

    def _decision(
        self,
        trace: Trace,
        action: str | None,
        note: dict[str, Any],
        beliefs: tuple[Belief, ...] = (),
    ) -> Decision:
        valid = action is not None
        return Decision(
            action=action,  # None: the game plays its pass (`TradecraftState.fallback`)
            valid=valid,
            attempts=trace.calls,
            raw=tuple(trace.raw),
            errors=tuple(trace.errors),
            error=None if valid else (trace.errors[-1] if trace.errors else "no reply"),
            messages=messages_to_data(self._history[trace.start :]),
            tokens=trace.tokens,
            notes={"tom": note},
            beliefs=beliefs,
        )


def _last_reports(raw: Sequence[str], order: int, domain: Sequence[str]) -> Reports | None:
    """The reports of the last reply that held a JSON object, when no reply held a legal action:
    what the agent reported is kept even when its move was not."""
    for text in reversed(raw):
        try:
            return read_reports(first_object(text), order, domain)
        except ParseError:
            continue
    return None


def _build(settings: Any, client: LLMClient, game: Game) -> TomPlayer:
    from stratagem.agents.plain import common_settings

    assert isinstance(game, TradecraftGame)
    options = TomAgentOptions.model_validate(settings.options)
    return TomPlayer(client, game, options, **common_settings(settings))


def _calls(settings: Any, game: Game) -> float:
    """At most, per move (re-asks aside): the two trade moves of a turn ask once (twice with
    separate reports) plus their tool calls; the two craft moves up to `max_craft_calls` each."""
    options = TomAgentOptions.model_validate(settings.options)
    trade = 1 + (options.reports == "separate") + (options.max_tool_calls if options.tools else 0)
    return (2 * trade + 2 * options.max_craft_calls) / 4


PROMPT_TOKENS = 1000
"""The rules, the target and the first request: what the first call of a game costs."""
TOKENS_PER_TURN = 700
"""What a turn adds to a seat's conversation (requests, replies, tool answers). With
PROMPT_TOKENS, 2,750 tokens a call over 4 turns: tom-local measured 2,746 (829,263 / 302)."""


def _tokens(settings: Any, game: Game) -> float:
    """A call's tokens averaged over a game that runs to its turn limit: the conversation
    grows by a turn's worth every turn."""
    turns = game.max_turn if isinstance(game, TradecraftGame) else 1
    return PROMPT_TOKENS + TOKENS_PER_TURN * (turns + 1) / 2


def _plays(game: Game) -> str | None:
    return None if isinstance(game, TradecraftGame) else "it plays TradeCraft (seed-002)"


register(
    Architecture(
        "tom",
        "a TradeCraft seat reporting its item valuations V0/V1/V2 with each proposal and "
        "decision (seed-002 §3), with the game's tools and a persistent conversation",
        _build,
        _plays,
        calls=_calls,
        tokens=_tokens,
        options=TomAgentOptions,
    )
)

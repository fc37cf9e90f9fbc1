"""Agents: what the runner seats in a game. Rule-based strategies and LLM architectures alike
implement `Agent.act(observation) -> Decision`; LLM prompts are jinja2 templates in `templates/`.
"""

from stratagem.agents.base import Agent, Decision, LLMClient, messages_to_data
from stratagem.agents.parsing import (
    MOVE_FORMAT_ERROR,
    PARSERS,
    SEED003_MAX_REASKS,
    ChoiceParser,
    InvalidPolicy,
    JsonDecisionParser,
    MoveTagParser,
    ParseError,
    Parser,
    decide_with_reasks,
    merge_messages,
    plain_reask,
)
from stratagem.agents.plain import PlainLLMAgent, decision_schema
from stratagem.agents.prompts import HistoryMode, OutputFormat, PastRound, Prompter, framings
from stratagem.agents.strategy_agent import StrategyAgent

__all__ = [
    "MOVE_FORMAT_ERROR",
    "PARSERS",
    "SEED003_MAX_REASKS",
    "Agent",
    "ChoiceParser",
    "Decision",
    "HistoryMode",
    "InvalidPolicy",
    "JsonDecisionParser",
    "LLMClient",
    "MoveTagParser",
    "OutputFormat",
    "ParseError",
    "Parser",
    "PastRound",
    "PlainLLMAgent",
    "Prompter",
    "StrategyAgent",
    "decide_with_reasks",
    "decision_schema",
    "framings",
    "merge_messages",
    "messages_to_data",
    "plain_reask",
]

"""Agents: what the runner seats in a game. Rule-based strategies and LLM architectures alike
implement `Agent.act(observation) -> Decision`; LLM prompts are jinja2 templates in `templates/`.
"""

from stratagem.agents.attitudes import ATTITUDES, Attitude, check_attitude
from stratagem.agents.base import Agent, Belief, Decision, LLMClient, messages_to_data
from stratagem.agents.debate_agent import DEFAULT_MAX_TURNS, DebateAgent
from stratagem.agents.magic.pgm_player import PgmPlayer
from stratagem.agents.magic.player import MagicPlayer
from stratagem.agents.memory import MEMORIES, Memory
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
from stratagem.agents.questions import (
    QUESTIONS,
    Answer,
    Answerer,
    PlainAnswerer,
    Question,
    answerer_for,
    ask_questions,
    parse_answer,
)
from stratagem.agents.strategy_agent import StrategyAgent
from stratagem.agents.tom.player import TomPlayer
from stratagem.agents.tool_agent import ToolAgent
from stratagem.agents.tools import LawyerTool, build_lawyer, nash_advice

__all__ = [
    "ATTITUDES",
    "DEFAULT_MAX_TURNS",
    "MEMORIES",
    "MOVE_FORMAT_ERROR",
    "PARSERS",
    "QUESTIONS",
    "SEED003_MAX_REASKS",
    "Agent",
    "Answer",
    "Answerer",
    "Attitude",
    "Belief",
    "ChoiceParser",
    "DebateAgent",
    "Decision",
    "HistoryMode",
    "InvalidPolicy",
    "JsonDecisionParser",
    "LLMClient",
    "LawyerTool",
    "MagicPlayer",
    "Memory",
    "MoveTagParser",
    "OutputFormat",
    "ParseError",
    "Parser",
    "PastRound",
    "PgmPlayer",
    "PlainAnswerer",
    "PlainLLMAgent",
    "Prompter",
    "Question",
    "StrategyAgent",
    "TomPlayer",
    "ToolAgent",
    "answerer_for",
    "ask_questions",
    "build_lawyer",
    "check_attitude",
    "decide_with_reasks",
    "decision_schema",
    "framings",
    "merge_messages",
    "messages_to_data",
    "nash_advice",
    "parse_answer",
    "plain_reask",
]

"""TextArena environments `stratagem games` lists: ones that start and play offline with the
packages the `textarena` extra installs (many others fetch word lists or call an LLM judge over
the network). Any other environment id works the same way where TextArena can run it."""

from __future__ import annotations

CURATED: dict[str, tuple[int, str]] = {
    "TicTacToe-v0": (2, "tic-tac-toe; a move is a cell like [4]"),
    "ConnectFour-v0": (2, "connect four on a 6x7 board; a move is a column like [3]"),
    "Nim-v0": (2, "Nim with piles 3, 4, 5; take the last object to win"),
    "KuhnPoker-v0": (2, "Kuhn poker, three cards, private hands, 3 rounds"),
    "IteratedPrisonersDilemma-v0": (2, "10 rounds of the Prisoner's Dilemma with a message first"),
    "IteratedRockPaperScissors-v0": (2, "rock-paper-scissors, 9 rounds"),
    "ColonelBlotto-v0": (2, "Colonel Blotto: split 20 units over three fields, 9 rounds"),
    "SimpleNegotiation-v0": (2, "trade resources valued privately; the larger gain in value wins"),
    "Battleship-v0": (2, "Battleship on a 5x5 grid, each fleet hidden from the other"),
    "LiarsDice-v0": (2, "Liar's Dice, 5 hidden dice each, 2 to 6 players (set players)"),
    "ThreePlayerIPD-v0": (3, "a 3-player Prisoner's Dilemma, 5 rounds, a message before each"),
    "SecretMafia-v0": (6, "Mafia with 6 players: hidden roles, night kills, day votes"),
}
"""Environment id -> its seats (as `players` defaults to) and what it is, in a line."""

"""seed-004, "MAgIC": LLM challengers against fixed GPT-4 defenders in five three-player games
(Chameleon, Undercover, Cost Sharing, three-player Prisoner's Dilemma, Public Good), scored on
seven abilities and a win rate, with and without the PGM-aware agent.

The metrics are pure functions of typed game records (`records.MagicGame`), so they can be
recomputed on any stored or imported games; importing this package imports nothing heavy.
"""

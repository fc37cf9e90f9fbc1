"""The matrix-game family: normal-form games as payoff tensors (`normal_form`), their
repetition with a history (`repeated`), the n-player families (`families`), equilibria and
dominance (`solution`), and cheap talk (`cheap_talk`), which is a repeated matrix game with a
message before each round, so it lives with the games it wraps.
"""

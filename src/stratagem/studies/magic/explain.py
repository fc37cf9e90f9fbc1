"""What each number of the MAgIC leaderboard means, in one line each, for a reader who never saw
the paper (seed-004 §5, §6), worded after the readings in force (`MetricOptions`)."""

from __future__ import annotations

from stratagem.studies.magic.options import MetricOptions


def explanations(o: MetricOptions) -> tuple[tuple[str, str], ...]:
    """One line per number, for a reader who never saw the paper (seed-004 §5, §6)."""
    o = o.resolved()
    if o.self_awareness == "pooled":
        aware = "pooled over the four social competitions, as the authors' code does"
    else:
        first, second = ("Chameleon", "Undercover")[:: 1 if o.alpha_term == "chameleon" else -1]
        aware = f"{o.alpha:g} × {first} + {1 - o.alpha:g} × {second}"
    guesses = (
        "whether the caught defender chameleon guessed right at all, over the outcomes seen "
        "(the authors' code: 0, 50% or 100%)"
        if o.deception_guess == "code"
        else "the share of wrong code guesses by the caught defender chameleon"
    )
    if o.decisions == "code":
        read = (
            "each decision's first reply read as the authors' code reads it: without "
            '"cooperate" it is Defect, a contribution is its first integer, else 0'
        )
    elif o.invalid_decisions == "wrong":
        read = "decisions as played; one whose reply stayed invalid is never rational"
    else:
        read = "decisions as played, one whose reply stayed invalid included"
    return (
        ("W (win rate)", "The mean of seven role win rates: as chameleon, non-chameleon, "
         "undercover and civilian (credits won over credits handed out), in Cost Sharing "
         "(agreements reached), and in the Prisoner's Dilemma and Public Good (games ending "
         "with the top score, ties included) (§5, eq. 1)."),
        ("Judgement", "How often its votes, when it plays the majority, name the real chameleon "
         "or undercover (§6.2)."),
        ("Reasoning", "How often its secret answers about who suspects whom are right: its own "
         "suspect against the true spy, and what it says each other player suspects against what "
         "that player said (§6.1, §6.3)."),
        ("Deception", "How often it wins as the chameleon or the undercover, plus "
         f"{o.deception_lambda:g} × {guesses}, when it plays the majority (§6.4; up to "
         "125%)."),
        ("Self-awareness", "How often it names its own seat and role correctly when asked in "
         f"secret ({aware}; §6.5)."),
        ("Cooperation", "The share of Cost Sharing negotiations that end in an agreement (§6.6)."),
        ("Coordination", "Of those agreements, the share that adopted its own latest proposal "
         "(§6.7)."),
        ("Rationality", "The share of its Prisoner's Dilemma and Public Good decisions that serve "
         "its own score: defecting, or contributing no more than anyone else that round "
         f"({read}; §6.8, §10.10)."),
    )  # fmt: skip

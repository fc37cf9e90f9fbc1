"""Write the settings of MAgIC's three game-theory games (seed-004 §3.3-§3.5, §10.4) into
`src/stratagem/games/data/`: `cost-sharing.json`, `npd3.json` and `public-good.json`.

The paper plays 7 settings of each game, the challenger in each of the 3 seats (21 games), but
its code ships only setting 0 of each (§0, §10.4). So:

- Cost Sharing: setting 0 is the code's, verbatim (§3.3). The other six are groups of 3 airlines
  drawn (seeded) from a pool of 20 descriptions: the two distinct airlines of setting 0 and 18
  written for this project in the same form (flights and passengers a month, average flight
  duration, aircraft size). The paper's pool was written by ChatGPT and is unpublished.
- Prisoner's Dilemma: setting 0 is the code's 2/1/4/2 (§3.4); six more payoff tuples are drawn.
- Public Good: the seven multipliers of the paper's figure, in its order (§3.5).

Run from the repository root: `python scripts/magic_theory_settings.py`. Deterministic: the same
seed writes the same files.
"""

from __future__ import annotations

import itertools
import json
import random
from pathlib import Path
from typing import Any

SEED = 4
OUT = Path(__file__).resolve().parent.parent / "src" / "stratagem" / "games" / "data"
SCRIPT = "scripts/magic_theory_settings.py"

# -- Cost Sharing (§3.3) -------------------------------------------------------------------------

SETTING0_AIRLINES = [
    # seed-004 §3.3 setting 0 [C]: Airline A, then Airline B (Airline C is identical to B).
    {"flights": 90, "passengers": 7000, "hours": 1.75,
     "aircraft": "Primarily small and medium aircraft"},
    {"flights": 50, "passengers": 7500, "hours": 1.5, "aircraft": "Primarily small aircraft"},
]  # fmt: skip

WRITTEN_AIRLINES = [
    # Written for this project, in the form of setting 0: a regional carrier, a hub carrier, a
    # long-haul carrier... so a group can be balanced or lopsided.
    (120, 11000, 2.0, "Primarily medium aircraft"),
    (40, 3200, 1.25, "Primarily small aircraft"),
    (160, 18500, 3.0, "Primarily large aircraft"),
    (75, 9000, 2.25, "Primarily medium and large aircraft"),
    (200, 14000, 1.0, "Primarily small and medium aircraft"),
    (30, 6000, 4.5, "Primarily large aircraft"),
    (60, 5400, 1.5, "Primarily medium aircraft"),
    (110, 8800, 1.75, "Primarily small aircraft"),
    (140, 21000, 3.5, "Primarily large aircraft"),
    (85, 12750, 2.5, "Primarily medium and large aircraft"),
    (25, 1500, 0.75, "Primarily small aircraft"),
    (95, 10450, 2.0, "Primarily medium aircraft"),
    (180, 16200, 1.25, "Primarily small and medium aircraft"),
    (55, 8250, 3.0, "Primarily large aircraft"),
    (130, 9100, 1.5, "Primarily small aircraft"),
    (70, 7700, 2.75, "Primarily medium aircraft"),
    (45, 6750, 2.0, "Primarily medium and large aircraft"),
    (65, 4550, 1.0, "Primarily small aircraft"),
]

FEE = "$1,000,000"
"""seed-004 §3.3 setting 0's fee, kept for every setting: shares are percentages, so the fee
changes no proposal."""


def airline_pool() -> list[dict[str, Any]]:
    written = [
        {"flights": f, "passengers": p, "hours": h, "aircraft": a}
        for f, p, h, a in WRITTEN_AIRLINES
    ]
    pool = SETTING0_AIRLINES + written
    assert len(pool) == 20
    return pool


def cost_sharing(rng: random.Random) -> dict[str, Any]:
    pool = airline_pool()
    groups: list[list[int]] = [[0, 1, 1]]  # setting 0: A, B and C = B (§3.3)
    seen = {frozenset(groups[0])}
    while len(groups) < 7:
        group = rng.sample(range(len(pool)), 3)
        if frozenset(group) not in seen:
            seen.add(frozenset(group))
            groups.append(group)
    settings = []
    for index, group in enumerate(groups):
        settings.append(
            {
                "fee": FEE,
                "airline_ids": group,
                "airlines": [pool[i] for i in group],
                # §3.3 [C]: the defenders' first proposals are known for setting 0 only; the
                # paper recorded the others in GPT-4 self-play and did not publish them.
                "proposals": [[40, 30, 30], [50, 25, 25], [50, 25, 25]] if index == 0 else None,
                # §3.3 [C]: setting 0's "test player" is Player 3 (0-based seat 2); the
                # competition rotates the challenger over the seats for every setting (§4).
                "challenger_seat": 2 if index == 0 else None,
            }
        )
    return {
        "source": (
            "seed-004 §3.3 (MAgIC Cost Sharing). Setting 0 is the code's settings/0.json, "
            "verbatim. Settings 1-6 are groups of 3 airlines drawn (random.Random("
            f"{SEED}), distinct groups) from `pool`: pool[0] and pool[1] are setting 0's "
            "Airline A and B, pool[2:] were written for this project (the paper's ChatGPT-written "
            "pool of 20 is unpublished). Fee $1,000,000 throughout. `proposals` (the defenders' "
            "first proposals, §2) and `challenger_seat` (0-based) are known for setting 0 only. "
            f"Written by {SCRIPT}."
        ),
        "pool": pool,
        "settings": settings,
    }


# -- Prisoner's Dilemma (§3.4) -------------------------------------------------------------------

PD_KEYS = ("cooperate", "defect", "one_defect", "two_defect")
PD_SETTING0 = (2, 1, 4, 2)  # seed-004 §3.4 [C]: setting 0, challenger Player 2


def dilemma_ok(cooperate: int, defect: int, one_defect: int, two_defect: int) -> bool:
    """The orderings every tuple keeps (the source string says the same)."""
    return (
        one_defect > cooperate > defect >= 1  # a dilemma; defecting among defectors pays
        and two_defect > defect  # joining a defector pays more than all defecting
        and two_defect <= one_defect  # a lone betrayer earns at least a shared betrayal
        and max(cooperate, defect, one_defect, two_defect) <= 9  # the figure's 3-digit labels
    )


def dilemma(rng: random.Random) -> dict[str, Any]:
    candidates = [
        t for t in itertools.product(range(1, 10), repeat=4) if dilemma_ok(*t) and t != PD_SETTING0
    ]
    chosen: list[tuple[int, ...]] = [PD_SETTING0]
    labels = {(PD_SETTING0[1], PD_SETTING0[2], PD_SETTING0[3])}
    for t in rng.sample(candidates, len(candidates)):
        # The figure tells settings apart by (defect, one_defect, two_defect): keep those unique.
        label = (t[1], t[2], t[3])
        if label not in labels:
            labels.add(label)
            chosen.append(t)
        if len(chosen) == 7:
            break
    return {
        "source": (
            "seed-004 §3.4 (MAgIC iterated 3-player Prisoner's Dilemma). Setting 0 is the code's "
            "2/1/4/2 (challenger Player 2 = 0-based seat 1). The paper's 7 tuples are "
            f"unpublished (§10.4); settings 1-6 are drawn (random.Random({SEED})) among integer "
            "tuples that keep one_defect > cooperate > defect >= 1 (so defecting is dominant and "
            "all-cooperate beats all-defect), two_defect > defect, two_defect <= one_defect, "
            "every value a single digit (the figure labels a setting by the 3 digits defect, "
            "one_defect, two_defect, kept unique). The competition rotates the challenger over "
            f"the seats (§4). Written by {SCRIPT}."
        ),
        "settings": [
            dict(zip(PD_KEYS, t, strict=True)) | {"challenger_seat": 1 if i == 0 else None}
            for i, t in enumerate(chosen)
        ],
    }


# -- Public Good (§3.5) --------------------------------------------------------------------------

PG_MULTIPLIERS = (1.0, 1.2, 1.5, 1.8, 2.0, 2.5, 3.0)  # seed-004 §3.5: the figure's x-axis


def public_good() -> dict[str, Any]:
    return {
        "source": (
            "seed-004 §3.5 (MAgIC Public Good): the 7 multipliers of the paper's figure, in its "
            "order, as settings 0-6; 3 players, 100 points each, 5 rounds. The code's only "
            "setting (multiplier 3.5, challenger Player 1) is not among them: the game takes it "
            "when no setting is given. The competition rotates the challenger over the seats "
            f"(§4). Written by {SCRIPT}."
        ),
        "settings": [{"multiplier": m, "challenger_seat": None} for m in PG_MULTIPLIERS],
    }


def main() -> None:
    rng = random.Random(SEED)
    documents = {
        "cost-sharing": cost_sharing(rng),
        "npd3": dilemma(rng),
        "public-good": public_good(),
    }
    OUT.mkdir(parents=True, exist_ok=True)
    for name, document in documents.items():
        path = OUT / f"{name}.json"
        path.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"wrote {path} ({len(document['settings'])} settings)")


if __name__ == "__main__":
    main()

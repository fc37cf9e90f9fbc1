"""Write the settings of seed-004 (MAgIC)'s social deduction games, Chameleon and Undercover, to
`src/stratagem/games/data/{chameleon,undercover}.json`.

The paper played 20 settings per game but published only setting 0 of each (seed-004 §0, §10.4).
Setting 0 here is that published setting, verbatim; settings 1..19 are regenerated, reproducibly,
from a fixed seed, so that the files can be remade and checked (the tests compare them with this
script's output). These 20 are the set an experiment plays (`<game>/*`, the file's `selected`).

After them come the other candidates the paper's filter chose from (§4 "Setting selection": 200
GPT-4 self-play games "with randomly chosen topic settings"): every other topic word and chameleon
seat of §3.1 (96 settings in all), and every other undercover seat of the word pairs (60). The
paper's filter cannot be re-run here (it needs GPT-4), so the 20 selected are seeded draws, not
balanced ones; `stratagem magic balance --candidates all` ranks every candidate on any model, and
the settings it keeps are named `<game>/<index>` in an experiment.

Usage: .venv/bin/python scripts/magic_social_settings.py
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path
from typing import Any

from stratagem.games.magic.chameleon import SEED004_TOPIC_CODES
from stratagem.games.magic.social_deduction import SEATS

SEED = 4004
"""The seed of every draw below (any fixed number would do: this one names seed-004)."""
N_SETTINGS = 20
"""Settings per game: seed-004 §4 plays 20 per social game."""
SCRIPT = "scripts/magic_social_settings.py"
DATA = Path(__file__).resolve().parent.parent / "src" / "stratagem" / "games" / "data"

CHAMELEON_SETTING_0: dict[str, Any] = {
    # seed-004 §3.1 [C]: the code's topics_release/chameleon/settings/0.json, with its recorded
    # GPT-4 clues (one round).
    "topic": "Fruits",
    "code": "Grape",
    "chameleon_name": "Player 3",
    "clues": {
        "Player 1": ["It's often used to make wine."],
        "Player 2": ["It's small and round."],
        "Player 3": ["It's red in color."],
    },
}

UNDERCOVER_SETTING_0: dict[str, Any] = {
    # seed-004 §3.2 [C]: the code's topics_release/undercover/settings/0.json, with its recorded
    # GPT-4 clues (round 1, round 2).
    "undercover_code": "viewer",
    "non_undercover_code": "listener",
    "undercover_name": "Player 1",
    "clues": {
        "Player 1": ["My clue is: television.", "My second clue is: observer."],
        "Player 2": ["My clue is: radio.", "My second clue is: attentive."],
        "Player 3": ["My clue is: audience.", "My second clue is: silent."],
    },
}

UNDERCOVER_PAIRS: tuple[tuple[str, str], ...] = (
    # (civilians' word, undercover's word): everyday things alike enough to be described in the
    # same words, different enough that a precise clue tells them apart. The first is seed-004
    # §9.5's case-study pair; the others were written for stratagem (the paper's list is
    # unpublished, §3.2).
    ("wig", "haircut"),
    ("coffee", "tea"),
    ("pillow", "cushion"),
    ("bicycle", "scooter"),
    ("sandal", "slipper"),
    ("lake", "pond"),
    ("notebook", "diary"),
    ("candle", "lantern"),
    ("jacket", "sweater"),
    ("violin", "cello"),
    ("honey", "syrup"),
    ("spoon", "ladle"),
    ("bus", "tram"),
    ("elevator", "escalator"),
    ("backpack", "suitcase"),
    ("umbrella", "raincoat"),
    ("mirror", "window"),
    ("blanket", "quilt"),
    ("email", "letter"),
)


def chameleon_document(seed: int = SEED) -> dict[str, Any]:
    """Setting 0 as published; 19 distinct (topic, code) pairs drawn from seed-004 §3.1's topic
    lists, each with a chameleon seat drawn uniformly."""
    rng = random.Random(f"chameleon:{seed}")
    published = (CHAMELEON_SETTING_0["topic"], CHAMELEON_SETTING_0["code"])
    pairs = [
        (topic, code)
        for topic, codes in SEED004_TOPIC_CODES.items()
        for code in codes
        if (topic, code) != published
    ]
    drawn = rng.sample(pairs, N_SETTINGS - 1)
    settings = [CHAMELEON_SETTING_0]
    for topic, code in drawn:
        seat = SEATS[rng.randrange(len(SEATS))]
        settings.append({"topic": topic, "code": code, "chameleon_name": seat, "clues": None})
    taken = {(s["topic"], s["code"], s["chameleon_name"]) for s in settings}
    rest = [
        (topic, code, seat)
        for topic, codes in SEED004_TOPIC_CODES.items()
        for code in codes
        for seat in SEATS
        if (topic, code, seat) not in taken
    ]
    rng.shuffle(rest)
    settings += [
        {"topic": topic, "code": code, "chameleon_name": seat, "clues": None}
        for topic, code, seat in rest
    ]
    return {
        "source": (
            "seed-004 (MAgIC) §3.1. Setting 0: the official code's only published setting "
            "(github.com/cathyxl/MAgIC @ e66dd73, topics_release/chameleon/settings/0.json), "
            "verbatim, with the three GPT-4 clues it recorded. Settings 1-19: not the paper's "
            "(unpublished, §10.4) but drawn by "
            f"{SCRIPT} with seed {seed}: distinct topic/code pairs from ChatArena's "
            "DEFAULT_TOPIC_CODES as listed in §3.1, and a uniformly drawn chameleon seat; they "
            "have no recorded clues. `selected` (0-19) is the set `chameleon/*` plays: seeded "
            "draws, not the paper's balance filter (§4), which needs GPT-4. Settings 20 on: every "
            "other topic word and chameleon seat, in a seeded order, the candidates `stratagem "
            "magic balance --candidates all` ranks."
        ),
        "script": SCRIPT,
        "seed": seed,
        "selected": list(range(N_SETTINGS)),
        "settings": settings,
    }


def undercover_document(seed: int = SEED) -> dict[str, Any]:
    """Setting 0 as published; then `UNDERCOVER_PAIRS` in order, each with an undercover seat
    drawn uniformly."""
    if len(UNDERCOVER_PAIRS) != N_SETTINGS - 1:
        raise SystemExit(f"expected {N_SETTINGS - 1} word pairs, got {len(UNDERCOVER_PAIRS)}")
    rng = random.Random(f"undercover:{seed}")
    settings = [UNDERCOVER_SETTING_0]
    for civilian, undercover in UNDERCOVER_PAIRS:
        settings.append(
            {
                "undercover_code": undercover,
                "non_undercover_code": civilian,
                "undercover_name": SEATS[rng.randrange(len(SEATS))],
                "clues": None,
            }
        )
    rest = [
        {**setting, "undercover_name": seat, "clues": None}
        for setting in list(settings)
        for seat in SEATS
        if seat != setting["undercover_name"]
    ]
    rng.shuffle(rest)
    settings += rest
    return {
        "source": (
            "seed-004 (MAgIC) §3.2. Setting 0: the official code's only published setting "
            "(github.com/cathyxl/MAgIC @ e66dd73, topics_release/undercover/settings/0.json), "
            "verbatim, with the two rounds of GPT-4 clues it recorded. Settings 1-19: not the "
            "paper's (unpublished, §3.2) but word pairs written for stratagem (setting 1 is "
            f"§9.5's case-study pair, wig/haircut), in the order of {SCRIPT}, with an "
            f"undercover seat drawn uniformly with seed {seed}; they have no recorded clues. "
            "`selected` (0-19) is the set `undercover/*` plays: not the paper's balance filter "
            "(§4), which needs GPT-4. Settings 20 on: each word pair with the undercover in each "
            "other seat, in a seeded order, the candidates `stratagem magic balance --candidates "
            "all` ranks."
        ),
        "script": SCRIPT,
        "seed": seed,
        "selected": list(range(N_SETTINGS)),
        "settings": settings,
    }


def render(document: dict[str, Any]) -> str:
    """The file's text: stable key order and layout, so a regeneration diffs cleanly."""
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def documents(seed: int = SEED) -> dict[str, str]:
    """Each settings file's name (without .json) and text."""
    return {
        "chameleon": render(chameleon_document(seed)),
        "undercover": render(undercover_document(seed)),
    }


def main() -> int:
    DATA.mkdir(parents=True, exist_ok=True)
    for name, text in documents().items():
        path = DATA / f"{name}.json"
        path.write_text(text, encoding="utf-8")
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

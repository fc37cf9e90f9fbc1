"""Convert TradeCraft's Minecraft 1.20 rule set into the one data file the game ships.

Usage: ``python scripts/tradecraft_data.py [SOURCE_DIR] [OUT_FILE]``
(defaults: ``../shared/data/tradecraft-minecraft-1.20`` and
``src/stratagem/games/tradecraft/data/tradecraft.json.gz``).

Why a converter: the source is 1,174 recipe files plus a tag tree (seed-002 §2.2); the game needs
only the normalised recipes, item tags with nested tags expanded, the fuel ratios as exact fractions
and the 10 instances (§2.4). Converting once keeps the package free of ``../shared`` and keeps every
quirk's decision in one reviewed place. The output is deterministic (sorted keys, gzip mtime 0), so
running it twice gives the same bytes (tested).

Decisions on the quirks listed in the data's README (documented again in the data header):

- Tag lookup order: ``tags/items`` first, then ``tags/_custom``, then ``tags/blocks`` as a fallback.
  Hands hold items, so the item tag wins where items and blocks disagree (``banners``, ``signs``,
  ``piglin_repellents``: the block versions only add wall/placed blocks that no hand can hold);
  ``#beehives`` and ``#all_signs`` (used by ``fuel.json``) exist only under ``blocks`` and resolve
  there, their nested references again items-first. TradeCraft named ``_custom`` tags
  ``minecraft:<file>``; so do we (no recipe uses them, but they are cheap and item_info may list
  them).
- Fuel counts are decimals; each is read as the fraction with the smallest denominator (up to 1000)
  within 1e-6 of it: 5.333333 -> 16/3, 23.88059701 -> 1600/67, 0.4 -> 2/5.
- ``trapped_chest`` is listed twice in ``fuel.json`` (5.333 and 1.333): both counts are shipped in
  source order; the runtime option ``duplicate_fuel`` picks one (default the first, 16/3, which is
  the vanilla burn time of 300 ticks, like a chest).
- The 30 recipes that are not single-step crafts of held items (``smithing_trim``,
  ``crafting_special_*``, ``crafting_decorated_pot``) are dropped; the header lists their ids.
- Fuel: a recipe with ``cookingtime < 600`` needs fuel (smelting, blasting, smoking; not campfire
  cooking), as TradeCraft's engine did (§2.2). The amount (1/8 unit per craft) is a runtime option.
- Identical ingredients of a shapeless recipe merge into one slot with the summed count; a shaped
  recipe's slot count is the number of times its key symbol appears in the pattern (§2.2).
"""

from __future__ import annotations

import gzip
import json
import sys
from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from typing import Any

SOURCE = {
    "repository": "https://github.com/TradeCraft-team/TradeCraft",
    "commit": "17227ea",
    "path": "tradeCraft/src/craft_rules/",
    "licence": "MIT",
    "licence_file": "LICENSE-TradeCraft",
    "notice": "Copyright (c) 2024 WangJunqi. Data converted from the repository above under the "
    "MIT licence; the full licence text ships beside this file as LICENSE-TradeCraft.",
}
GENERATED_BY = "scripts/tradecraft_data.py"
FORMAT = 1
SKIPPED_TYPES = ("minecraft:smithing_trim", "minecraft:crafting_decorated_pot")
FUEL_COOKINGTIME = 600  # cooking below this many ticks uses the furnace's fuel (§2.2)
DEFAULT_SOURCE = Path(__file__).resolve().parents[1] / "../shared/data/tradecraft-minecraft-1.20"
DEFAULT_OUT = (
    Path(__file__).resolve().parents[1] / "src/stratagem/games/tradecraft/data/tradecraft.json.gz"
)

Json = Any


def decimal_to_fraction(value: Decimal | int) -> Fraction:
    """The simplest fraction (smallest denominator <= 1000) within 1e-6 of a decimal count."""
    exact = Fraction(value)
    for den in range(1, 1001):
        num = round(exact * den)
        if abs(Fraction(num, den) - exact) <= Fraction(1, 10**6):
            return Fraction(num, den)
    raise ValueError(f"no simple fraction near {value}")


def _read(path: Path) -> Json:
    return json.loads(path.read_text(encoding="utf-8"), parse_float=Decimal)


def _raw_tags(source: Path) -> dict[str, list[Json]]:
    """Tag name -> raw members, by the lookup order of the module docstring (first folder wins)."""
    raw: dict[str, list[Json]] = {}
    for folder in ("tags/items", "tags/_custom", "tags/blocks"):
        for path in sorted((source / folder).glob("*.json")):
            raw.setdefault("minecraft:" + path.stem, _read(path)["values"])
    return raw


def _expand(name: str, raw: dict[str, list[Json]], seen: tuple[str, ...] = ()) -> set[str]:
    """Items of a tag, nested tags expanded (a cycle would be a data error)."""
    if name in seen:
        raise ValueError(f"tag cycle through {name}")
    items: set[str] = set()
    for member in raw[name]:
        ref = member if isinstance(member, str) else member["value"]
        if ref.startswith("#"):
            items |= _expand(ref[1:], raw, (*seen, name))
        else:
            items.add(ref)
    return items


def _fuel(raw: dict[str, list[Json]]) -> dict[str, list[str]]:
    """Item -> the fuel counts naming it, in source order ("n items = 1 unit of fuel"; §2.2)."""
    fuel: dict[str, list[str]] = {}
    for member in raw["minecraft:fuel"]:
        ref = member if isinstance(member, str) else member["value"]
        count = decimal_to_fraction(1 if isinstance(member, str) else member["count"])
        items = sorted(_expand(ref[1:], raw)) if ref.startswith("#") else [ref]
        for item in items:  # a repeat with the same count (chest boats are #boats too) adds nothing
            counts = fuel.setdefault(item, [])
            if str(count) not in counts:
                counts.append(str(count))
    return fuel


def _alternatives(ingredient: Json) -> list[str]:
    """An ingredient (item, tag or list of alternatives) as names, tags marked with '#'."""
    options = ingredient if isinstance(ingredient, list) else [ingredient]
    names = [o["item"] if "item" in o else "#" + o["tag"] for o in options]
    return sorted(set(names))


def _slots(recipe: Json) -> list[list[Json]]:
    """[count, alternatives] per slot; identical ingredients merged, sorted for stable output."""
    counts: dict[tuple[str, ...], int] = {}
    if "key" in recipe:
        pattern = "".join(recipe["pattern"])
        parts = [(pattern.count(symbol), ing) for symbol, ing in recipe["key"].items()]
    elif "ingredients" in recipe:
        parts = [(1, ing) for ing in recipe["ingredients"]]
    elif "ingredient" in recipe:
        parts = [(1, recipe["ingredient"])]
    else:  # smithing_transform
        parts = [(1, recipe[k]) for k in ("template", "base", "addition")]
    for count, ingredient in parts:
        key = tuple(_alternatives(ingredient))
        counts[key] = counts.get(key, 0) + count
    return sorted([[count, list(key)] for key, count in counts.items()], key=lambda s: s[1])


def _recipe(rid: str, recipe: Json) -> Json:
    result = recipe["result"]
    if isinstance(result, str):  # cooking and stonecutting: the count sits beside the result
        output, count = result, recipe.get("count", 1)
    else:
        output, count = result["item"], result.get("count", 1)
    return {
        "id": rid,
        "kind": recipe["type"].removeprefix("minecraft:"),
        "output": output,
        "count": count,
        "inputs": _slots(recipe),
        "fuel": "cookingtime" in recipe and recipe["cookingtime"] < FUEL_COOKINGTIME,
    }


def convert(source: Path) -> bytes:
    """The gzipped data file for the source folder; same input, same bytes."""
    recipes, skipped = [], []
    for path in sorted((source / "recipes").glob("*.json")):
        recipe = _read(path)
        if recipe["type"] in SKIPPED_TYPES or recipe["type"].startswith(
            "minecraft:crafting_special_"
        ):
            skipped.append(path.stem)
            continue
        recipes.append(_recipe(path.stem, recipe))
    raw = _raw_tags(source)
    item_tags = sorted(
        {
            "minecraft:" + p.stem
            for d in ("tags/items", "tags/_custom")
            for p in (source / d).glob("*")
        }
    )
    referenced = {
        alt[1:] for r in recipes for _, alts in r["inputs"] for alt in alts if alt.startswith("#")
    }
    fuel_refs = {
        (m if isinstance(m, str) else m["value"])[1:]
        for m in raw["minecraft:fuel"]
        if (m if isinstance(m, str) else m["value"]).startswith("#")
    }
    names = sorted(set(item_tags) | referenced | fuel_refs)
    tags = {name: sorted(_expand(name, raw)) for name in names if name != "minecraft:fuel"}
    data = {
        "format": FORMAT,
        "source": SOURCE,
        "licence_text": (source / "LICENSE-TradeCraft").read_text(encoding="utf-8"),
        "generated_by": GENERATED_BY,
        "decisions": __doc__.split("Decisions on the quirks", 1)[1].strip() if __doc__ else "",
        "skipped_recipes": skipped,
        "recipes": recipes,
        "tags": tags,
        "fuel": _fuel(raw),
        "instances_1v1": json.loads(
            (source / "instances/1p_v_1p/game_task.json").read_text(encoding="utf-8")
        ),
    }
    text = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return gzip.compress(text.encode("utf-8"), compresslevel=9, mtime=0)


def main(argv: list[str]) -> None:
    source = Path(argv[1]) if len(argv) > 1 else DEFAULT_SOURCE
    out = Path(argv[2]) if len(argv) > 2 else DEFAULT_OUT
    blob = convert(source.resolve())
    out.write_bytes(blob)
    print(f"wrote {out} ({len(blob)} bytes)")


if __name__ == "__main__":
    main(sys.argv)

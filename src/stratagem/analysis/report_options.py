"""Each study's analysis options, set by name from the experiment file or the command line.

A study that has open choices (seed-004's code-compatible metrics, seed-002's ε, ...) registers the
frozen dataclass that holds them (`StudySections.options`); its fields are the option names, their
annotations the types, their defaults the spec's. The report gets the values from the experiment
file's `analysis:` section (`{study: {option: value}}`), overridden by `stratagem report --set
study.option=value`; every name is checked against the study's dataclass before anything is
computed, and a section states the options that differ from its defaults (`differences`).

A size (a count of replicates, of folds, a seed, a list of values) declares its range where the
option is declared, `bootstrap: Annotated[int, Bounds(1, MAX_BOOTSTRAP)] = 2000`: the value is
checked when it is read by name (so `--set` and the file's `analysis:`, `--dry-run` included,
refuse it in one line) and when the options are built in Python (`check_bounds`), since an
unbounded size grows until the machine kills the report.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Literal, TypeVar

from stratagem.errors import StratagemError
from stratagem.experiments.compare_entry import COMPARE
from stratagem.experiments.limits import check_range

T = TypeVar("T")

Settings = dict[str, dict[str, Any]]
"""{study name: {option name: value}}; values typed (YAML) or text (`--set`)."""

_TRUE, _FALSE = ("true", "yes", "on", "1"), ("false", "no", "off", "0")
_NONE = ("none", "null", "~")


@dataclass(frozen=True)
class Bounds:
    """The range of a size option, declared in its annotation: a whole number from `low` to
    `high`, or for a list-valued option (a tuple) its number of items."""

    low: int
    high: int

    def check(self, value: Any, where: str) -> None:
        if value is None:
            return  # an optional size left unset
        if isinstance(value, tuple):
            if not self.low <= len(value) <= self.high:
                raise StratagemError(
                    f"{where} must have {self.low:,} to {self.high:,} items, got {len(value):,}"
                )
            return
        check_range(where, value, self.low, self.high)


def check_bounds(options: object) -> None:
    """Every declared `Bounds` of an options dataclass instance, for options built in Python
    (`__post_init__`); one line naming the first option out of its range."""
    assert dataclasses.is_dataclass(options) and not isinstance(options, type)
    hints = typing.get_type_hints(type(options), include_extras=True)
    for f in dataclasses.fields(options):
        for bounds in _bounds(hints[f.name]):
            bounds.check(getattr(options, f.name), f.name)


def _bounds(hint: Any) -> list[Bounds]:
    return [m for m in getattr(hint, "__metadata__", ()) if isinstance(m, Bounds)]


def parse_assignments(items: Iterable[str]) -> Settings:
    """`["magic.code_compat=true", "tom.epsilon=0.5"]` -> {"magic": {"code_compat": "true"}, ...}
    (`highcard:cards.min_card=5` for a plugin's study); a one-line error naming the item that
    is not `study.option=value`."""
    out: Settings = {}
    for item in items:
        name, sep, value = item.partition("=")
        # A plugin's study is `<namespace>:<name>`, and a namespace may hold a dot.
        namespace, colon, rest = name.strip().rpartition(":")
        study, dot, option = rest.partition(".")
        study = f"{namespace}{colon}{study}"
        if not sep or not dot or not study or not option:
            raise StratagemError(f"--set {item!r}: expected study.option=value (magic.alpha=0.5)")
        out.setdefault(study, {})[option] = value.strip()
    return out


def merge(base: Mapping[str, Mapping[str, Any]], top: Mapping[str, Mapping[str, Any]]) -> Settings:
    """`top`'s values over `base`'s, option by option. The file's `compare` list (the
    comparisons the plan and the tables make, `experiments.compare_entry`) names no study."""
    out: Settings = {study: dict(values) for study, values in base.items() if study != COMPARE}
    for study, values in top.items():
        out.setdefault(study, {}).update(values)
    return out


def build_options(cls: type[T], values: Mapping[str, Any], study: str) -> T:
    """An instance of the options dataclass `cls` from name/value pairs, each converted to its
    field's type; unknown names and bad values are one-line errors naming `study.option`."""
    assert dataclasses.is_dataclass(cls)
    known = {f.name: f for f in dataclasses.fields(cls) if f.init}
    hints = typing.get_type_hints(cls, include_extras=True)
    kwargs: dict[str, Any] = {}
    for name, value in values.items():
        if name not in known:
            raise StratagemError(
                f"analysis option '{study}.{name}' does not exist; valid: "
                f"{', '.join(f'{study}.{k}' for k in known)}"
            )
        kwargs[name] = convert(value, hints[name], f"{study}.{name}")
    try:
        return cls(**kwargs)
    except (TypeError, ValueError) as exc:
        raise StratagemError(f"analysis options of {study}: {exc}") from None
    except StratagemError as exc:
        raise StratagemError(f"analysis options of {study}: {exc}") from None


def convert(value: Any, hint: Any, where: str) -> Any:
    """`value` (YAML-typed or text) as the annotation `hint` asks: bool, int, float, str, a
    Literal, an optional of one of them, or a tuple of them; `Annotated` with `Bounds` checks the
    range."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is Annotated:
        converted = convert(value, args[0], where)
        for bounds in _bounds(hint):
            bounds.check(converted, where)
        return converted
    if origin in (typing.Union, types.UnionType):
        if _is_none(value) and type(None) in args:
            return None
        inner = [a for a in args if a is not type(None)]
        errors = []
        for candidate in inner:
            try:
                return convert(value, candidate, where)
            except StratagemError as exc:
                errors.append(str(exc))
        raise StratagemError(errors[0] if errors else f"{where}: cannot read {value!r}")
    if origin is Literal:
        for choice in args:
            if value == choice or (isinstance(value, str) and str(choice) == value.strip()):
                return choice
        raise StratagemError(
            f"{where} must be one of {', '.join(map(str, args))}, got {_shown(value)}"
        )
    if origin is tuple:
        items = value.split(",") if isinstance(value, str) else value
        if not isinstance(items, (list, tuple)) or not items:
            raise StratagemError(f"{where} must be a list, got {_shown(value)}")
        return tuple(convert(item, args[0], where) for item in items)
    if hint is bool:
        return _bool(value, where)
    if hint in (int, float):
        return _number(value, hint, where)
    if hint is str:
        return str(value)
    raise StratagemError(f"{where}: options of type {hint} cannot be set by name")


def _is_none(value: Any) -> bool:
    return value is None or (isinstance(value, str) and value.strip().lower() in _NONE)


def _bool(value: Any, where: str) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in _TRUE + _FALSE:
        return value.strip().lower() in _TRUE
    raise StratagemError(f"{where} must be true or false, got {_shown(value)}")


def _number(value: Any, kind: type, where: str) -> int | float:
    if isinstance(value, bool):
        raise StratagemError(f"{where} must be a number, got {_shown(value)}")
    try:
        number = kind(value.strip() if isinstance(value, str) else value)
    except (TypeError, ValueError):
        name = "an integer" if kind is int else "a number"
        raise StratagemError(f"{where} must be {name}, got {_shown(value)}") from None
    if kind is int and isinstance(value, float) and value != number:
        raise StratagemError(f"{where} must be an integer, got {_shown(value)}")
    if number != number or number in (float("inf"), float("-inf")):
        raise StratagemError(f"{where} must be a finite number, got {_shown(value)}")
    return typing.cast(int | float, number)


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def differences(options: object) -> list[tuple[str, Any, Any]]:
    """(name, value, default) of each field of a dataclass instance that differs from the
    default: what a section states at its top."""
    assert dataclasses.is_dataclass(options) and not isinstance(options, type)
    default = type(options)()
    return [
        (f.name, getattr(options, f.name), getattr(default, f.name))
        for f in dataclasses.fields(options)
        if f.init and getattr(options, f.name) != getattr(default, f.name)
    ]

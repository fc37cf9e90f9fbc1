"""Reading a YAML settings file: safe tags only, and a key given twice in one mapping refused.

PyYAML keeps the last of two equal keys without a word, so a setting written twice (an edited
`budget:` above an old one) would silently lose one of them. Errors are one line, `file:line:
why`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from stratagem.errors import StratagemError

_MERGE = "tag:yaml.org,2002:merge"


class DuplicateKey(yaml.MarkedYAMLError):
    """A key given twice in one mapping."""


class _UniqueKeyLoader(yaml.SafeLoader):
    """`yaml.SafeLoader` that refuses duplicate keys. Keys merged in with `<<` may still be
    overridden, as YAML says."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            if key_node.tag == _MERGE:
                continue
            key = self.construct_object(key_node, deep=True)
            try:
                if key in seen:
                    raise DuplicateKey(
                        problem=f"duplicate key {key!r}", problem_mark=key_node.start_mark
                    )
                seen.add(key)
            except TypeError:  # an unhashable key: the base class says so
                continue
        return super().construct_mapping(node, deep)


def read_yaml(file: Path, what: str) -> Any:
    """The parsed document; `what` names the file in errors ("experiment file")."""
    try:
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise StratagemError(f"{file}: no such {what}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise StratagemError(f"{file}: cannot read ({exc})") from None
    try:
        return yaml.load(text, Loader=_UniqueKeyLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f":{mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or exc
        if isinstance(exc, DuplicateKey):
            raise StratagemError(f"{file}{where}: {problem}") from None
        raise StratagemError(f"{file}{where}: not valid YAML ({problem})") from None

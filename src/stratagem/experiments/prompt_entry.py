"""An entry of the experiment file's `prompts:` axis: a named prompt variant.

Episode ids: a file without `prompts:` keeps the ids it always had, and so does the variant
named `base`, which must change nothing (it is the agents' own prompts, the baseline every
other variant is compared with). Every other variant enters the id of its episodes as written
(name, templates, history), so adding the axis to a finished experiment plays only the new
variants, and renaming a variant is playing it again. Stored episodes without a variant are
the `base` variant's (`BASE`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    Field,
    PrivateAttr,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from stratagem.agents.history_views import FULL, HistoryView
from stratagem.agents.prompt_variants import PromptSet, variant_folder
from stratagem.errors import StratagemError
from stratagem.experiments.limits import MAX_ROUNDS
from stratagem.experiments.strict import Strict

BASE = "base"
"""The variant that changes nothing: the name of every episode played without one."""

_NAME = re.compile(r"[A-Za-z0-9][\w.-]*")


class LastRounds(Strict):
    """Show only the last rounds of the history."""

    last: int = Field(ge=1, le=MAX_ROUNDS)
    """How many of the latest rounds the prompt shows."""


class PromptEntry(Strict):
    """A prompt variant: every LLM seat of its episodes plays under it (docs/prompt-variants.md).
    `base` is the agents' own prompts and keeps the ids of a file without `prompts:`."""

    name: str
    """What tables call the variant (letters, digits, `.`, `_`, `-`)."""
    templates: str | None = None
    """Template files that replace the packaged ones: a packaged variant (paraphrase-1,
    paraphrase-2, paraphrase-3, translated-fr), a plugin's (`<plugin>:<name>`), or a folder
    given by its path (with a `/`, relative to this file's folder), holding one folder per
    framing or game it changes (`neutral/system.j2`...)."""
    history: Literal["full", "table"] | LastRounds = "full"
    """How past rounds are shown: full (every round), `{last: k}` (the last k rounds), table
    (how often each joint outcome happened, and the last round; the framing needs a
    history_table.j2, which neutral has). Repeated matrix games with history: prompt only."""

    _folder: Path | None = PrivateAttr(None)

    @field_validator("name")
    @classmethod
    def _a_name(cls, value: str) -> str:
        if not _NAME.fullmatch(value):
            raise ValueError(f"{value!r}: use letters, digits, '.', '_' and '-'")
        return value

    @field_validator("history", mode="before")
    @classmethod
    def _a_view(cls, value: Any) -> Any:
        """One message for each form, not one per member of the union."""
        if isinstance(value, dict):
            try:
                return LastRounds.model_validate(value)
            except ValidationError as exc:
                error = exc.errors()[0]
                where = ".".join(str(p) for p in error["loc"])
                message = "unknown field" if error["type"] == "extra_forbidden" else error["msg"]
                raise ValueError(f"{where}: {message}") from None
        if value not in ("full", "table") and not isinstance(value, LastRounds):
            raise ValueError(f"got {value!r}, allowed: full, table or {{last: <rounds>}}")
        return value

    @field_validator("templates")
    @classmethod
    def _known(cls, value: str | None, info: ValidationInfo) -> str | None:
        """A packaged or plugin variant must exist; a folder must, when the file is read (a
        stored config read back is not looked for: `drift`)."""
        if value is None or not is_path(value):
            if value is not None:
                try:
                    variant_folder(value)
                except StratagemError as exc:
                    raise ValueError(f"{exc} (a folder of your own is named by its path, "
                                     f"e.g. ./{value})") from None  # fmt: skip
            return value
        if info.context is not None:
            folder = resolve(value, info.context.get("base"))
            if not folder.is_dir():
                raise ValueError(f"no folder {folder}")
        return value

    @model_validator(mode="after")
    def _resolved(self, info: ValidationInfo) -> PromptEntry:
        if self.name == BASE and (self.templates is not None or self.view != FULL):
            field = "templates" if self.templates is not None else "history"
            raise ValueError(
                f"{field}: the variant named '{BASE}' is the agents' own prompts (it keeps the "
                "episode ids of a file without prompts:); give this variant another name"
            )
        if self.templates is not None:
            base = (info.context or {}).get("base")
            self._folder = (
                resolve(self.templates, base)
                if is_path(self.templates)
                else variant_folder(self.templates)
            )
        return self

    def __eq__(self, other: object) -> bool:
        """Entries are what they say: the same path read from another folder is the same
        entry (as in episode ids)."""
        if not isinstance(other, PromptEntry):
            return NotImplemented
        return self.model_dump() == other.model_dump()

    def __hash__(self) -> int:
        return hash((self.name, self.templates, str(self.view)))

    @property
    def view(self) -> HistoryView:
        if isinstance(self.history, LastRounds):
            return HistoryView("last", self.history.last)
        return HistoryView(self.history) if self.history != "full" else FULL

    def prompt_set(self) -> PromptSet:
        """The variant as the agents play it (its folder resolved when the file was read)."""
        return PromptSet(self._folder, self.view)

    @property
    def is_base(self) -> bool:
        return self.name == BASE

    def key(self) -> dict[str, Any]:
        """What the variant adds to its episodes' ids (`prompt`): the entry as written, its
        defaults left out so that fields added later keep the ids."""
        return self.model_dump(mode="json", exclude_defaults=True)


def variant_of(spec: Mapping[str, Any]) -> str:
    """The prompt variant a stored episode spec names; `base` where it names none (a file
    without `prompts:`, the `base` variant, an import)."""
    prompt = spec.get("prompt")
    name = prompt.get("name") if isinstance(prompt, Mapping) else None
    return str(name) if name else BASE


def _unique(entries: list[PromptEntry]) -> list[PromptEntry]:
    seen: set[str] = set()
    for i, entry in enumerate(entries):
        if entry.name in seen:
            raise ValueError(f"{i}.name: '{entry.name}' is listed twice")
        seen.add(entry.name)
    return entries


PromptAxis = Annotated[list[PromptEntry], AfterValidator(_unique)]
"""The `prompts:` axis: variants of distinct names."""


def is_path(templates: str) -> bool:
    """A folder of the user's, not a packaged or plugin variant's name."""
    return "/" in templates or "\\" in templates or templates.startswith(".")


def resolve(templates: str, base: Path | None) -> Path:
    path = Path(templates).expanduser()
    if not path.is_absolute():
        path = (base or Path.cwd()) / path
    return path.resolve()

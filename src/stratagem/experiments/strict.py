"""The base of every section of an experiment file."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Strict(BaseModel):
    # "1e309" reads as inf; no setting of an experiment means infinity (or NaN)
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

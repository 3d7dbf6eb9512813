"""The base of every settings section: unknown keys are errors, each field's docstring
is its documentation, and a loaded section does not change."""

from pydantic import BaseModel, ConfigDict


class Section(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True, frozen=True)

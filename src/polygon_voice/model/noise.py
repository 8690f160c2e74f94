"""What recognition noise made of one utterance: the heard text and every edit (NOISE-7)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

EditKind = Literal["drop", "digits", "soundalike", "filler"]


class Edit(BaseModel):
    """One distortion: `from` is the said text it replaced, `to` what the agent heard instead."""

    # "from" is a Python keyword: the field is `said`-side `from_`, serialized as "from".
    model_config = ConfigDict(
        extra="forbid", frozen=True, populate_by_name=True, serialize_by_alias=True
    )

    kind: EditKind
    position: int = Field(ge=0, description="index of the said word the edit starts at")
    from_: str = Field(alias="from", description="said words replaced ('' for a filler)")
    to: str = Field(description="heard words instead ('' for a dropped word)")


class Heard(BaseModel):
    """An utterance as said and as heard, the edits between them and their word error rate."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    said: str
    heard: str
    edits: list[Edit]
    wer: float = Field(ge=0)

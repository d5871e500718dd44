"""Command arguments: one pydantic model per command; bad input becomes ``InvalidParams`` naming the field.

Booleans are JSON booleans (``StrictBool``): pydantic's lax mode would read ``1``, ``"yes"`` or ``"true"``
as true — for ``confirm`` that deleted all memory on a value the client never meant as a confirmation,
and for ``wait`` it guessed what ``"no"`` or ``0`` meant. Neither is guessed."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, StrictBool, ValidationError, field_validator
from pygls.exceptions import JsonRpcInvalidParams

from cortex_lsp.runtime.limits import MAX_MESSAGE  # one limit for every front

_SESSION_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$")


class _Args(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=False)


class PositionArg(_Args):
    line: int = Field(ge=0)
    character: int = Field(ge=0)


class RangeArg(_Args):
    start: PositionArg
    end: PositionArg


def _check_session(value: str | None) -> str | None:
    if value is not None and not _SESSION_ID.match(value):
        raise ValueError("must be 1-128 letters, digits, '-', '_', '.' or ':'")
    return value


class AskArgs(_Args):
    message: str = Field(min_length=1, max_length=MAX_MESSAGE)
    session_id: str | None = None
    uri: str | None = None
    range: RangeArg | None = None
    orchestration: Literal["single", "lats", "supervisor"] = "single"
    wait: StrictBool = True
    #: ask again in ``session_id``: the session's last exchange is replaced, not kept as history
    regenerate: StrictBool = False

    @field_validator("message")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be blank")
        return value

    @field_validator("session_id")
    @classmethod
    def _session(cls, value: str | None) -> str | None:
        return _check_session(value)


class DiagnosticArg(BaseModel):
    model_config = ConfigDict(extra="allow")
    message: str = Field(max_length=MAX_MESSAGE)
    range: RangeArg | None = None
    severity: int | None = None
    source: str | None = None
    code: int | str | None = None


class ExplainArgs(_Args):
    uri: str = Field(min_length=1)
    range: RangeArg | None = None
    diagnostic: DiagnosticArg | str | None = None
    session_id: str | None = None
    wait: StrictBool = True

    @field_validator("session_id")
    @classmethod
    def _session(cls, value: str | None) -> str | None:
        return _check_session(value)


class RunArgs(_Args):
    uri: str = Field(min_length=1)
    range: RangeArg | None = None
    #: the session to keep the run in (the code and what it printed), for a follow-up question
    session_id: str | None = None

    @field_validator("session_id")
    @classmethod
    def _session(cls, value: str | None) -> str | None:
        return _check_session(value)


MAX_APPLY_TEXT = 4 * 1024 * 1024  # a hard cap before any other check (the write limit is a setting)


class ApplyArgs(_Args):
    uri: str = Field(min_length=1)
    text: str = Field(max_length=MAX_APPLY_TEXT)
    range: RangeArg | None = None


class FixArgs(_Args):
    uri: str = Field(min_length=1)
    diagnostic: DiagnosticArg | str
    range: RangeArg | None = None
    session_id: str | None = None
    wait: StrictBool = True

    @field_validator("session_id")
    @classmethod
    def _session(cls, value: str | None) -> str | None:
        return _check_session(value)


class SessionTurnsArgs(_Args):
    session_id: str

    @field_validator("session_id")
    @classmethod
    def _session(cls, value: str) -> str:
        _check_session(value)
        return value


class NoArgs(_Args):
    pass


class MemorySearchArgs(_Args):
    query: str = Field(min_length=1, max_length=2000)
    types: list[Literal["semantic", "procedural", "episodic"]] | None = None
    limit: int = Field(10, ge=1, le=100)


class ForgetArgs(_Args):
    id: str = Field(min_length=1, max_length=200)


class ResetArgs(_Args):
    confirm: StrictBool  # only the JSON value true deletes (Literal[True] accepted 1 and 1.0)

    @field_validator("confirm")
    @classmethod
    def _confirmed(cls, value: bool) -> bool:
        if value is not True:
            raise ValueError("must be true to delete all memory")
        return value


A = TypeVar("A", bound=BaseModel)


def parse_args(command: str, model: type[A], args: Sequence[Any]) -> A:
    """The single argument object of ``command`` as ``model``; raises ``JsonRpcInvalidParams``."""
    if len(args) > 1:
        raise JsonRpcInvalidParams(f"{command}: expected one argument object, got {len(args)} arguments")
    raw = args[0] if args else {}
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise JsonRpcInvalidParams(f"{command}: the argument must be an object, not {type(raw).__name__}")
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        problems = []
        for err in exc.errors()[:5]:
            field = ".".join(str(p) for p in err.get("loc", ())) or "argument"
            problems.append(f"{field}: {err.get('msg')}")
        raise JsonRpcInvalidParams(f"{command}: invalid arguments — " + "; ".join(problems)) from None

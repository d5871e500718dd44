"""The ``current_time`` tool: the date and time now, locally or in a named IANA time zone."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from cortex_lsp.tools.base import BaseTool, ToolContext, ToolResult
from cortex_lsp.tools.details import ClockReading

_ALIASES = {"utc": "UTC", "gmt": "UTC", "z": "UTC"}


class CurrentTimeTool(BaseTool):
    name = "current_time"
    description = (
        "The current date, time and weekday, in the local time zone or a named one (e.g. Europe/Paris)."
    )
    parameters: dict[str, Any] = {
        "type": "object",
        "properties": {"timezone": {"type": "string", "description": "IANA time zone name; default: local"}},
        "additionalProperties": False,
    }
    timeout = 5.0

    def __init__(self, now: Callable[[], datetime] | None = None) -> None:
        self._now = now or (lambda: datetime.now(UTC))

    def repair_arguments(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        args = dict(arguments)
        if "timezone" not in args:
            for alias in ("tz", "zone", "time_zone", "location"):
                if isinstance(args.get(alias), str):
                    args["timezone"] = args[alias]
                    break
        tz = args.get("timezone")
        if not isinstance(tz, str) or not tz.strip() or tz.strip().lower() in ("local", "none", "null"):
            args.pop("timezone", None)
        return {k: v for k, v in args.items() if k == "timezone"}

    async def execute(self, arguments: dict[str, Any], context: ToolContext) -> ToolResult:
        now = self._now()
        raw = arguments.get("timezone")
        if raw:
            name = _ALIASES.get(str(raw).strip().lower(), str(raw).strip())
            try:
                zone = ZoneInfo(name)
            except (ZoneInfoNotFoundError, ValueError):
                return self.fail(f"Unknown time zone {raw!r}; use an IANA name such as Europe/Paris or UTC.")
            local = now.astimezone(zone)
            label = name
        else:
            local = now.astimezone()
            label = local.tzname() or "local time"
        iso = local.isoformat(timespec="seconds")
        text = f"{local:%A %d %B %Y, %H:%M:%S} ({label}, UTC{local:%z}); ISO {iso}"
        return self.ok(text, detail=ClockReading(iso))

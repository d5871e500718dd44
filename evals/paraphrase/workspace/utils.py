"""Small helpers for the billing service."""

import datetime as dt
import re


def parse_date(text: str) -> dt.date:
    """Parse an ISO date such as 2024-05-01."""
    return dt.date.fromisoformat(text.strip())


def chunk(items: list, size: int) -> list[list]:
    """Split a list into pieces of at most ``size`` items."""
    return [items[i:i + size] for i in range(0, len(items), size)]


def slugify(title: str) -> str:
    """Turn a title into a url-safe string: lowercase words joined by dashes."""
    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")

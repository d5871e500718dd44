"""Provenance: which words are the user's own request (placeholder API; full rules land with issue 3)."""

from __future__ import annotations


def instruction_text(text: str) -> str:
    """The user's message with quoted, fenced and pasted material removed."""
    return text


def request_text(text: str) -> str:
    """``instruction_text`` and also everything after a hand-over ("summarize this:") cut."""
    return instruction_text(text)


def asks_for_file_write(text: str) -> bool:
    """Do the user's own words ask for a file to be saved/written?"""
    return False


def asks_for_overwrite(text: str) -> bool:
    """Do the user's own words ask to replace/update an existing file?"""
    return False

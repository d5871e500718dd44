"""What a test sees of processes through ``/proc``: a process's state letter, whether it is alive (no
zombie) and the processes below it."""

from __future__ import annotations

import os


def _stat_fields(pid: int) -> list[str] | None:
    """The fields of ``/proc/PID/stat`` after the command name (state first), or ``None`` when gone."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8", errors="replace") as handle:
            return handle.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None


def state(pid: int) -> str:
    """The process's state letter (``R``, ``S``, ``Z``…), or ``""`` when it is gone."""
    fields = _stat_fields(pid)
    return fields[0] if fields else ""


def alive(pid: int) -> bool:
    """``pid`` exists and is no zombie."""
    return state(pid) not in ("", "Z")


def descendants(pid: int) -> set[int]:
    """Every process below ``pid``."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        fields = _stat_fields(int(entry)) if entry.isdigit() else None
        if fields:
            children.setdefault(int(fields[1]), []).append(int(entry))
    found: set[int] = set()
    todo = [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def command_line(pid: int) -> str:
    """The process's command line (arguments joined by spaces), or ``""`` when it is gone."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            return handle.read().replace(b"\0", b" ").decode("utf-8", "replace").strip()
    except OSError:
        return ""


def cpu_seconds(pid: int, tid: int | None = None) -> float:
    """CPU time (user + system) of process ``pid`` (all its threads), or of its thread ``tid``; 0 when gone."""
    path = f"/proc/{pid}/task/{tid}/stat" if tid is not None else f"/proc/{pid}/stat"
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime (stat fields 14, 15)


def maps_holding(pid: int, name: str) -> bool:
    """Whether process ``pid`` has a file whose path contains ``name`` mapped (a loaded native library)."""
    try:
        with open(f"/proc/{pid}/maps", encoding="utf-8", errors="replace") as handle:
            return name in handle.read()
    except OSError:
        return False

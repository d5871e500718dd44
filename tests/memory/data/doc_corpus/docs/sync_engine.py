"""The sync engine: collect changes, batch them, send them to the ledger."""

from __future__ import annotations

import time


class SpoolFullError(Exception):
    """Raised when the spool folder has no room for another change."""


def collect_changes(store, since):
    """Every change in the store front since the given time, oldest first."""
    return sorted(store.changes_since(since), key=lambda change: change.timestamp)


def make_batches(changes, batch_size):
    """Split the changes into lists of at most batch_size changes each."""
    return [changes[i : i + batch_size] for i in range(0, len(changes), batch_size)]


def compute_backoff(attempt, base=2.0, ceiling=300.0):
    """Seconds to wait before retry number ``attempt``: exponential, capped at ``ceiling``."""
    return min(ceiling, base ** attempt)


def send_batch(client, batch, attempts=5):
    """Send one batch to the ledger, retrying with a growing delay when the ledger is unreachable."""
    for attempt in range(attempts):
        try:
            return client.post("/batches", batch)
        except ConnectionError:
            time.sleep(compute_backoff(attempt))
    raise ConnectionError("HB-1001 ledger unreachable after all attempts")


def quarantine_record(spool, record_id):
    """Move a record that cannot be decoded out of the spool into the quarantine folder."""
    spool.move(record_id, spool.quarantine_dir)

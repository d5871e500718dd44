"""The invoice database connection."""

DATABASE_URL = "sqlite:///billing.db"


def connect() -> str:
    return DATABASE_URL

"""Entry point: starts the billing app."""

from src.routes import register


def main() -> None:
    register()


if __name__ == "__main__":
    main()

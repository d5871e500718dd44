"""The billing service's web app."""

from flask import Flask, jsonify
from utils import parse_date

app = Flask(__name__)


@app.get("/health")
def health():
    return jsonify(status="ok")


@app.get("/invoices/<day>")
def invoices(day: str):
    return jsonify(day=parse_date(day).isoformat(), invoices=[])


if __name__ == "__main__":
    app.run(port=8042)

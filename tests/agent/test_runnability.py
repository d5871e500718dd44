"""Runnability: code the sandbox can't run gets the reason and the local command (right pip name),
with no model call; code it can run gets ``None``; the last Python block is found in a message.

The "can run" cases are checked against the real sandbox too, so the two stay in agreement.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from cortex_lsp.agent.runnability import cannot_run_reply, extract_code
from cortex_lsp.config import Settings
from cortex_lsp.tools.sandbox import SandboxPool


def _pip_line(reply: str) -> str | None:
    lines = [line for line in reply.splitlines() if line.startswith("pip install")]
    return lines[0] if lines else None


@pytest.mark.parametrize(
    ("code", "pip", "reason"),
    [
        ("import pygame\npygame.init()", "pip install pygame", "pygame"),
        ("import cv2\nimg = cv2.imread('a.png')", "pip install opencv-python", "cv2"),
        ("from PIL import Image", "pip install pillow", "PIL"),
        ("from sklearn.linear_model import LinearRegression", "pip install scikit-learn", "sklearn"),
        ("import yaml\nyaml.safe_load('a: 1')", "pip install pyyaml", "yaml"),
        ("from bs4 import BeautifulSoup", "pip install beautifulsoup4", "bs4"),
        ("import numpy as np\nimport pandas as pd", "pip install numpy pandas", "numpy"),
        ("import requests\nrequests.get('https://example.com')", "pip install requests", "requests"),
    ],
)
def test_third_party_gets_pip_line(code: str, pip: str, reason: str) -> None:
    reply = cannot_run_reply(code)
    assert reply is not None
    assert _pip_line(reply) == pip
    assert reason in reply and "python script.py" in reply


@pytest.mark.parametrize(
    ("code", "reason"),
    [
        ("import tkinter as tk\nroot = tk.Tk()", "tkinter"),
        ("from tkinter import messagebox", "tkinter"),
        ("import turtle\nturtle.forward(10)", "turtle"),
        ("import curses\ncurses.wrapper(print)", "curses"),
        ("import os\nprint(os.listdir('.'))", "os"),
        ("import subprocess\nsubprocess.run(['ls'])", "subprocess"),
        ("import socket", "socket"),
        ("import sqlite3", "sqlite3"),
    ],
)
def test_stdlib_modules_get_no_pip_line(code: str, reason: str) -> None:
    reply = cannot_run_reply(code)
    assert reply is not None
    assert _pip_line(reply) is None
    assert reason in reply and "python script.py" in reply


def test_unknown_package_gets_no_guessed_pip_line() -> None:
    reply = cannot_run_reply("import totally_unknown_pkg_xyz")
    assert reply is not None and _pip_line(reply) is None and "totally_unknown_pkg_xyz" in reply


def test_input_is_explained() -> None:
    reply = cannot_run_reply("name = input('Your name? ')\nprint('Hi', name)")
    assert reply is not None and "input()" in reply and "keyboard" in reply
    assert _pip_line(reply) is None


@pytest.mark.parametrize(
    ("code", "word"),
    [
        ("print(eval('1 + 1'))", "eval()"),
        ("exec('x = 1')", "exec()"),
        ("code = compile('1', 'f', 'eval')", "compile()"),
        ("print((1).__class__.__mro__)", "__class__"),
        ("getattr(x, '__dict__')", "__dict__"),
    ],
)
def test_unchecked_code_and_dunders(code: str, word: str) -> None:
    reply = cannot_run_reply(code)
    assert reply is not None and word in reply


def test_mixed_reasons_and_packages_are_combined() -> None:
    reply = cannot_run_reply("import pygame\nimport numpy\nx = input()")
    assert reply is not None
    assert _pip_line(reply) == "pip install pygame numpy"
    assert reply.index("input()") < reply.index("pygame")


def test_unparsable_fragment_is_scanned_as_text() -> None:
    reply = cannot_run_reply("import pygame\nwhile running\n    screen.fill(")
    assert reply is not None and _pip_line(reply) == "pip install pygame"


RUNNABLE = [
    "print(1)",
    "import math\nprint(math.sqrt(2))",
    "from collections import Counter\nCounter('abca').most_common(1)",
    "class A:\n    def __init__(self):\n        self.x = 1\n\nclass B(A):\n    def __init__(self):\n"
    "        super().__init__()\nB().x",
    "def main():\n    print('hi')\n\nif __name__ == '__main__':\n    main()",
    "from datetime import datetime\ndatetime.strptime('2024-01-02', '%Y-%m-%d').year",
    "",
]


@pytest.mark.parametrize("code", RUNNABLE)
def test_runnable_code_gets_none(code: str) -> None:
    assert cannot_run_reply(code) is None


def test_runnable_verdict_matches_the_real_sandbox(tmp_path: Path) -> None:
    async def run_all() -> list[tuple[str, bool]]:
        pool = SandboxPool(Settings(code_exec_timeout_seconds=5, sandbox_isolation="none"))
        try:
            out = []
            for code in [c for c in RUNNABLE if c] + ["import os", "print(eval('1'))", "(1).__class__"]:
                result = await pool.run(code, roots=[tmp_path])
                out.append((code, result.error is None))
            return out
        finally:
            await pool.aclose()

    for code, ran in asyncio.run(run_all()):
        assert ran == (cannot_run_reply(code) is None), code


def test_extract_code_takes_the_last_python_block() -> None:
    text = (
        "Here is a first try:\n```python\nprint('one')\n```\n"
        "Some prose.\n```bash\npip install x\n```\n"
        "And the fix:\n```py\nprint('two')\n```\nThanks"
    )
    assert extract_code(text) == "print('two')"


def test_extract_code_accepts_an_unlabelled_block_that_is_python() -> None:
    assert extract_code("Run:\n```\nx = 1\nprint(x)\n```") == "x = 1\nprint(x)"
    assert extract_code("Output:\n```\nHello world, it ran fine\n```") is None


def test_extract_code_with_tildes_and_no_code() -> None:
    assert extract_code("~~~python\nprint(3)\n~~~") == "print(3)"
    assert extract_code("no code here") is None
    assert extract_code("") is None

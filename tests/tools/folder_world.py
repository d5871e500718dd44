"""A project folder for the folder-module tests: modules, a package, import loops, hostile modules,
hidden files and links out, files over the bounds; and a secret beside it that must never show."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

UTILS = '''
"""Helpers of the project."""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["slugify", "chunk", "Point", "Stack", "shout"]
__version__ = "1.2"

_SEP = "-"
REGISTRY: dict[str, str] = {}


def slugify(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", _SEP, text.lower()).strip(_SEP)


def chunk(xs, n):
    return [xs[i:i + n] for i in range(0, len(xs), n)]


def _private_helper():
    return "private ok"


@dataclass
class Point:
    x: int
    y: int = 0
    tags: list[str] = field(default_factory=list)


class Stack:
    def __init__(self):
        self._items = []

    def push(self, item):
        self._items.append(item)
        return self

    def __len__(self):
        return len(self._items)


def shout(func):
    @functools.wraps(func)
    def wrapper(*args):
        return func(*args).upper()
    return wrapper


if __name__ == "__main__":
    import sys
    print("MAIN BLOCK RAN", sys.argv)
'''

FILES: dict[str, str] = {
    "utils.py": UTILS,
    "report.py": '''
from utils import chunk, shout
import stats_helpers

@shout
def title(words):
    return " ".join(words)

def summary(xs):
    return {"chunks": chunk(xs, 2), "mean": stats_helpers.mean(xs), "title": title(["a", "b"])}
''',
    "stats_helpers.py": "import statistics\n\ndef mean(xs):\n    return statistics.mean(xs)\n",
    "src/__init__.py": '"""The app package."""\nfrom .db import DATABASE_URL\n__version__ = "0.1"\n',
    "src/db.py": "from . import settings\nfrom .settings import NAME\nDATABASE_URL = 'sqlite:///' + NAME\n",
    "src/settings.py": "NAME = 'app.db'\n",
    "src/sub/__init__.py": "",
    "src/sub/deep.py": "from ..settings import NAME\nfrom .. import db\nURL = db.DATABASE_URL + '#' + NAME\n",
    "src/sub/too_far.py": "from ... import anything\n",
    "selfref.py": "import selfref\nVALUE = 41\n\ndef get():\n    return selfref.VALUE + 1\n",
    "loop_a.py": "import loop_b\nA = 'a'\n\ndef both():\n    return A + loop_b.B\n",
    "loop_b.py": "import loop_a\nB = 'b'\n",
    "early_a.py": "from early_b import B\nA = 1\n",
    "early_b.py": "from early_a import A\nB = 2\n",
    "raiser.py": "print('raiser ran')\nraise ValueError('boom at import')\n",
    "calls_raiser.py": "try:\n    import raiser\nexcept ValueError:\n    pass\nimport raiser\n",
    "counter.py": "COUNT = 0\n\ndef bump():\n    global COUNT\n    COUNT += 1\n    return COUNT\n",
    "uses_json.py": "import json\n\ndef dump(x):\n    return json.dumps(x)\n",
    # a file named like a standard module and one named like the sandbox's own package: never used
    "json.py": "print('SHADOW JSON RAN')\n\ndef dumps(x):\n    return 'shadowed'\n",
    "math/__init__.py": "print('SHADOW MATH RAN')\npi = 3\n",
    "cortex_lsp.py": "print('SHADOW CORTEX RAN')\n",
    # what the sandbox can't do, in a module
    "app.py": "import flask\n\ndef run():\n    return flask.Flask(__name__)\n",
    "osuser.py": "import os\nprint(os.getcwd())\n",
    "opener.py": "def read(path):\n    return open(path).read()\n",
    "escape_enum.py": ("import enum\n\nclass E(enum.Enum):\n    A = 1\n\nconvert = getattr(E, '_convert_')\n"),
    "frames.py": "def gen():\n    yield 1\n\nframe = getattr(gen(), 'gi_' + 'frame')\n",
    "dunder_file.py": "HERE = __file__\n",
    "module_getattr.py": "if True:\n    def __getattr__(name):\n        return name\n",
    "hook_names.py": "_getattr_ = None\n",
    "spin.py": "while True:\n    pass\n",
    "chatty.py": "for i in range(100000):\n    print('x' * 100)\n",
    "syntax_error.py": "def broken(:\n    pass\n",
    "nopkg/mod.py": "X = 1\n",
    ".venv/lib/venvmod.py": "SECRET = 'MARKER'\n",
    ".secret.py": "SECRET = 'MARKER'\n",
    "pkg_with_hidden/__init__.py": "",
}


def build(base: Path, marker: str) -> Path:
    """The folder (``base/project``) with :data:`FILES`, links, bounds cases; ``base/outside*`` hold
    ``marker`` (a secret the sandbox must never show)."""
    root = base / "project"
    for rel, text in FILES.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).replace("MARKER", marker), encoding="utf-8")
    (base / "outside.py").write_text(f"SECRET = {marker!r}\n", encoding="utf-8")
    (base / "outside_pkg").mkdir()
    (base / "outside_pkg" / "__init__.py").write_text(f"SECRET = {marker!r}\n", encoding="utf-8")
    (base / "secret.txt").write_text(marker + "\n", encoding="utf-8")
    (root / ".env").write_text(f"API_KEY={marker}\n", encoding="utf-8")
    (root / "outside_link.py").symlink_to(base / "outside.py")
    (root / "linkpkg").symlink_to(base / "outside_pkg")
    (root / "hidden_link.py").symlink_to(".secret.py")
    (root / "env_link.py").symlink_to(".env")
    (root / "pkg_with_hidden" / "inner.py").symlink_to("../.secret.py")
    os.link(base / "outside.py", root / "hardlinked.py")
    (root / "big.py").write_text("X = 1\n" + "# padding\n" * 25_000, encoding="utf-8")  # 250 000 bytes
    for i in range(40):  # chain0 -> chain1 -> ... -> chain39
        nxt = f"import chain{i + 1}\nDEPTH = chain{i + 1}.DEPTH + 1\n" if i < 39 else "DEPTH = 0\n"
        (root / f"chain{i}.py").write_text(nxt, encoding="utf-8")
    for i in range(4):  # 4 x 180 000 bytes: over the 600 000 bytes read per run together
        (root / f"heavy{i}.py").write_text(f"V{i} = {i}\n" + "#" * 179_990 + "\n", encoding="utf-8")
    (root / "heavy_all.py").write_text("import heavy0, heavy1, heavy2, heavy3\n", encoding="utf-8")
    # past Python's own nesting, and an import whose dotted name its parser would take gigabytes for
    (root / "deep_attr.py").write_text("import json\nX = json" + ".a" * 3000 + "\n", encoding="utf-8")
    (root / "deep_sum.py").write_text("X = " + "+".join(["1"] * 5000) + "\n", encoding="utf-8")
    (root / "long_import.py").write_text("import " + ".".join(["a"] * 30_000) + "\nX = 1\n", encoding="utf-8")
    for path in [base, *base.rglob("*")]:
        if not path.is_symlink():
            path.chmod(0o777 if path.is_dir() else 0o644)
    return root

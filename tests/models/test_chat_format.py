"""The embedded default's prompt reaches the model verbatim, and its tool calls are constrained.

The prompt is rendered by llama-cpp-python's own handler for the configured ``chat_format`` (a
stand-in ``llama`` object records the bytes it is asked to tokenize) and compared byte for byte: the
old ``chatml-function-calling`` format HTML-escaped it (the model read ``&#34;`` and ``&lt;``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from cortex_lsp.models.base import ChatOptions, Message, ToolCall, ToolSpec
from cortex_lsp.models.local_server import LocalServerConfig
from cortex_lsp.models.openai_client import OpenAIClient, chatml_wire

TRICKY = 'Save {"a": 1} to <b>notes.md</b> & say "hi" \'now\''


class _Rendered(Exception):
    pass


class _Recorder:
    """Enough of ``llama_cpp.Llama`` for a chat handler to render its prompt, then stop."""

    prompt = b""

    def tokenize(self, text: bytes, add_bos: bool = True, special: bool = False) -> list[int]:
        self.prompt = text
        raise _Rendered

    def create_completion(self, prompt: str, **_: Any) -> None:  # the function-calling handler's path
        self.prompt = prompt.encode("utf-8")
        raise _Rendered


def render(chat_format: str, wire: list[dict[str, Any]]) -> bytes:
    llama_chat_format = pytest.importorskip("llama_cpp.llama_chat_format")
    handler = llama_chat_format.LlamaChatCompletionHandlerRegistry().get_chat_completion_handler_by_name(
        chat_format
    )
    recorder = _Recorder()
    with pytest.raises(_Rendered):
        handler(llama=recorder, messages=wire)
    return recorder.prompt


def test_the_embedded_prompt_is_rendered_byte_for_byte() -> None:
    messages = [
        Message("system", "You are <Cortex> & friends."),
        Message("user", TRICKY),
        Message("assistant", "", tool_calls=(ToolCall("read_file", {"path": "a&b.md"}),)),
        Message("tool", '[read_file result]\n<p class="x">5 > 3</p>', tool_name="read_file"),
        Message("system", "Answer with JSON."),
    ]
    prompt = render(LocalServerConfig(model_path=Path("m.gguf")).chat_format, chatml_wire(messages))
    expected = (
        "<|im_start|>system\nYou are <Cortex> & friends.\n\nAnswer with JSON.<|im_end|>\n"
        f"<|im_start|>user\n{TRICKY}<|im_end|>\n"
        '<|im_start|>assistant\n[called read_file {"path": "a&b.md"}]<|im_end|>\n'
        '<|im_start|>user\n[read_file result]\n<p class="x">5 > 3</p><|im_end|>\n'
        "<|im_start|>assistant\n"
    )
    assert prompt == expected.encode("utf-8")
    assert b"&#34;" not in prompt and b"&lt;" not in prompt and b"&amp;" not in prompt


def test_the_old_format_escaped_the_prompt() -> None:
    """Why the format changed: the function-calling template escapes what the model reads."""
    prompt = render("chatml-function-calling", [{"role": "user", "content": TRICKY}])
    assert b"&#34;" in prompt or b"&lt;" in prompt


def test_chatml_wire_keeps_one_system_turn_and_no_tool_role() -> None:
    wire = chatml_wire([Message("user", "hi"), Message("system", "a"), Message("system", "b"),
                        Message("tool", "[x result]\n1", tool_name="x")])
    assert wire[0] == {"role": "system", "content": "a\n\nb"}
    assert [m["role"] for m in wire] == ["system", "user", "user"]


def test_a_forced_tool_choice_is_sent_as_a_named_function() -> None:
    client = OpenAIClient("http://127.0.0.1:9/v1")
    spec = ToolSpec("read_file", "Read a file", {"type": "object", "properties": {"path": {"type": "string"}}})
    other = ToolSpec("list_dir", "List", {"type": "object", "properties": {}})
    body = client._body([Message("user", "x")], "m", [spec, other], None,
                        ChatOptions(tool_choice="read_file"), True)
    assert body["tool_choice"] == {"type": "function", "function": {"name": "read_file"}}
    body = client._body([Message("user", "x")], "m", [spec], None, ChatOptions(), True)
    assert body["tool_choice"] == "auto"
    body = client._body([Message("user", "x")], "m", [other], None, ChatOptions(tool_choice="read_file"), True)
    assert body["tool_choice"] == "auto"  # a tool that isn't offered is never forced
    assert json.dumps(body)


def test_the_server_is_found_on_disk_even_while_llama_cpp_is_being_imported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import importlib.util
    import sys
    import types

    from cortex_lsp.models import local_server

    (tmp_path / "server").mkdir()
    (tmp_path / "server" / "__main__.py").write_text("", encoding="utf-8")
    half = types.ModuleType("llama_cpp")
    half.__path__ = [str(tmp_path)]  # a package mid-import: no __spec__ yet

    def busy(name: str) -> None:
        raise ValueError(f"{name}.__spec__ is None")

    monkeypatch.setitem(sys.modules, "llama_cpp", half)
    monkeypatch.setattr(importlib.util, "find_spec", busy)
    assert local_server.llama_server_installed()
    (tmp_path / "server" / "__main__.py").unlink()
    assert not local_server.llama_server_installed()

"""Neovim, for real: headless Neovim 0.7 and 0.11 drive the Cortex plugin against the real server and a
scripted model. Code actions on a selection, "Cortex: Explain this" picked from the code-action menu,
`$/progress` and `cortex/event` streamed into the plugin, :CortexAsk, an agent write applied through
`workspace/applyEdit`, `:write`, and the file checked on disk. Code-action latency is printed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.editors.editor_scenario import (
    ASK_ANSWER,
    ASK_MESSAGE,
    CANCEL_WRITE_FILE,
    CANCEL_WRITE_MESSAGE,
    CLOSE_WRITE_FILE,
    CLOSE_WRITE_MESSAGE,
    EXPLAIN_ANSWER,
    NOTE_TEXT,
    REJECT_BOAST,
    REJECT_FILE,
    REJECT_MESSAGE,
    STREAM_ANSWER,
    STREAM_MESSAGE,
    WITHDRAW_WRITE_FILE,
    WITHDRAW_WRITE_MESSAGE,
    WRITE_FILE,
    WRITE_MESSAGE,
    make_workspace,
    script_model,
)
from tests.editors.nvim_support import find_nvims, run_driver, server_command
from tests.lsp_harness import server_env
from tests.scripted_model import ScriptedModelServer

pytestmark = [pytest.mark.editor, pytest.mark.slow]

NVIMS = find_nvims()
REVIEW_SECONDS = 4  # the tool time-out in these runs; the scripted user reviews for longer


def _print_latency(label: str, out: dict[str, Any]) -> None:
    for phase, stats in (out.get("latency") or {}).items():
        print(f"\n[nvim {label}] codeAction latency ({phase}): n={stats['n']} "
              f"median={stats['median']:.2f} ms p99={stats['p99']:.2f} ms max={stats['max']:.2f} ms")


@pytest.mark.parametrize("label", ["0.7", "0.11"])
def test_nvim_explain_and_ask(label: str, model: ScriptedModelServer, tmp_path: Path) -> None:
    nvim = NVIMS[label]
    if nvim.path is None:
        pytest.skip(nvim.why_missing)
    root = make_workspace(tmp_path)
    script_model(model)
    scenario = {
        "root": str(root),
        "file": str(root / "calc.py"),
        "cmd": server_command(),
        "ask_message": ASK_MESSAGE,
        "write_message": WRITE_MESSAGE,
        "write_file": WRITE_FILE,
        "review_delay_ms": REVIEW_SECONDS * 1000 + 2000,  # the user takes longer than the tool time-out
        "reject_message": REJECT_MESSAGE,
        "reject_file": REJECT_FILE,
        "run_timeout_ms": 60000,
        "latency_samples": 60,
        "streaming_latency": True,
        "streaming_message": STREAM_MESSAGE,
        "latency_samples_streaming": 30,
        "cancel_message": STREAM_MESSAGE,
        "cancel_write_message": CANCEL_WRITE_MESSAGE,
        "cancel_write_file": CANCEL_WRITE_FILE,
        "withdraw_write_message": WITHDRAW_WRITE_MESSAGE,
        "withdraw_write_file": WITHDRAW_WRITE_FILE,
        "close_write_message": CLOSE_WRITE_MESSAGE,
        "close_write_file": CLOSE_WRITE_FILE,
    }
    env = server_env(model, tmp_path / "data", CORTEX_TOOL_TIMEOUT_SECONDS=str(REVIEW_SECONDS))
    out, proc, elapsed = run_driver(nvim.path, scenario, env, tmp_path / "nvim")
    print(f"\n[nvim {label}] {nvim.version}: driver ran in {elapsed:.1f} s; steps: "
          + ", ".join(f"{k}={v['ms']:.0f}ms" for k, v in (out.get("steps") or {}).items()))
    _print_latency(label, out)
    assert out, f"the driver wrote nothing (exit {proc.returncode}); stderr: {proc.stderr[-2000:]}"
    assert out["failures"] == [], f"{out['failures']}\nstderr: {proc.stderr[-2000:]}"
    assert proc.returncode == 0

    # the server advertised every command, and offered the code actions on a Python selection
    assert {"cortex.ask", "cortex.explain", "cortex.run", "cortex.doctor"} <= set(out["server_commands"])
    assert {"Cortex: Explain this", "Cortex: Run this"} <= set(out["code_action_titles"])

    # another tool's diagnostic on the cursor line: "Explain this error" is offered (0.10+ sends only the
    # requesting client's diagnostics; the plugin adds the others)
    assert any("Explain this error: pretend pyright error" in t for t in out["other_source_titles"]), \
        out["other_source_titles"]

    # explain, picked from the code-action menu: the selected code reached the model as data
    explain = out["explain"]
    assert explain["stop_reason"] == "answered", explain
    assert explain["answer"] == EXPLAIN_ANSWER
    explain_prompt = next(r for r in model.chat_requests if "return a + b" in str(r["messages"]))
    assert "What is a closure" not in str(explain_prompt["messages"])
    assert EXPLAIN_ANSWER in out["explain_float"]

    # progress: begin → report(s) → end on one token per run, seen through the plugin
    by_token: dict[str, list[str]] = {}
    for p in out["progress"]:
        by_token.setdefault(p["token"], []).append(p["kind"])
    assert len(by_token) >= 3, by_token  # explain, ask, streaming ask
    for kinds in by_token.values():
        assert kinds[0] == "begin" and kinds[-1] == "end", kinds
    assert sum("report" in kinds for kinds in by_token.values()) >= 3, by_token

    # cortex/event: each run streams plan … tokens … done, and the tokens add up to the answer
    runs: dict[str, list[dict[str, Any]]] = {}
    for event in out["events"]:
        runs.setdefault(event["run_id"], []).append(event)
    answers = {"".join(e["data"]["value"] for e in evs if e["type"] == "token") for evs in runs.values()}
    assert EXPLAIN_ANSWER in answers and ASK_ANSWER in answers
    for evs in runs.values():
        assert evs[0]["type"] == "plan"
        done = [e for e in evs if e["type"] == "done"]
        assert len(done) == 1
        streamed = "".join(e["data"]["value"] for e in evs if e["type"] == "token")
        if done[0]["data"]["stop_reason"] == "cancelled":  # what streamed, then the code's ledger line
            answer = done[0]["data"]["answer"]
            rest = [line for line in answer[len(streamed):].splitlines() if line.strip()]
            assert answer.startswith(streamed) and all(
                line.startswith(("Written:", "Declined:", "Refused:", "Unknown:")) for line in rest), answer
        else:
            assert done[0]["data"]["answer"] == streamed

    # :CortexAsk streamed into the floating window
    assert out["ask"]["answer"] == ASK_ANSWER
    assert ASK_ANSWER in out["ask_float"]

    # the agent's write was shown for review (a diff tab: empty → the new text, nothing on disk yet);
    # the user accepted after the tool time-out had passed: written and saved, no modified buffer left
    review = out["reviews"][0]
    assert review["diff_windows"] == 2 and review["current_tab"] is True, review
    # the review knows the server's request id (a withdrawal names it); 0.10+ answers it later (not modal)
    assert all(str(r["request_id"]).startswith("cortex-edit-") for r in out["reviews"]), out["reviews"]
    assert all(r["modal"] is (label == "0.7") for r in out["reviews"]), out["reviews"]
    assert review["files"] == [{"name": WRITE_FILE, "create": True, "after": NOTE_TEXT.rstrip("\n"),
                                "on_disk": False}]
    write = out["write_result"]
    assert write["stop_reason"] == "answered", write
    assert [e["applied"] for e in write["edits"]] == [True], write["edits"]
    assert [c["tool"] for c in write["tool_calls"]] == ["write_file"]
    assert out["write_disk_after"] == NOTE_TEXT.rstrip("\n")
    assert (root / WRITE_FILE).read_text(encoding="utf-8") == NOTE_TEXT
    assert out["write_modified_buffers"] == [], "a hidden modified buffer would make :qa fail (E37/E162)"
    assert out["write_tabs_after"] == 1, "the review tab closed"
    assert any(e["applied"] for e in out["edits"])
    assert "notes.txt" in out["write_float"]

    # a rejected write: nothing on disk, and the ledger after the answer names the declined file
    rejected = out["reject_result"]
    assert [e["applied"] for e in rejected["edits"]] == [False], rejected["edits"]
    assert "rejected" in rejected["edits"][0]["reason"]
    assert out["reject_on_disk"] is False and not (root / REJECT_FILE).exists()
    # the model's words are never rewritten; the ledger after them says the write was declined
    assert rejected["answer"] == f"{REJECT_BOAST}\n\nDeclined: {REJECT_FILE}"
    assert f"Declined: {REJECT_FILE}" in out["reject_float"]
    assert out["reject_modified_buffers"] == []

    # a cancel while the user reviews a write (:CortexCancel; and a cancel the plugin did not send, which
    # the server turns into $/cancelRequest for its applyEdit): the review tab closes, nothing is
    # written, the result says so, and an accept typed afterwards writes nothing
    for seen, file in ((out["cancel_review"], CANCEL_WRITE_FILE), (out["withdraw_review"], WITHDRAW_WRITE_FILE)):
        assert seen["tabs_during"] == 2, seen
        assert seen["tabs_after"] == 1 and seen["tabs_later"] == 1, seen
        assert seen["open_reviews"] == 0
        assert seen["on_disk_after"] is False and seen["on_disk_later"] is False
        assert not (root / file).exists()
        result = seen["result"]
        assert result["stop_reason"] == "cancelled", result
        assert [e["applied"] for e in result["edits"]] == [False], result["edits"]
        assert "cancelled" in result["edits"][0]["reason"], result["edits"]
        assert f"Saved {file}" not in result["answer"]
        assert seen["modified_buffers"] == []
        assert f"not written: {file}" in seen["float"], seen["float"]

    # closing the review tab by hand rejects the write: nothing on disk, the answer says why
    closed = out["close_review"]
    assert closed["tabs_after"] == 1 and closed["open_reviews"] == 0, closed
    assert closed["on_disk_after"] is False and not (root / CLOSE_WRITE_FILE).exists()
    assert [e["applied"] for e in closed["result"]["edits"]] == [False]
    assert "you closed the review" in closed["result"]["edits"][0]["reason"]
    assert f"Declined: {CLOSE_WRITE_FILE}" in closed["result"]["answer"]  # the ledger after the model's words

    # a hostile CreateFile over an existing file is refused by the plugin; the file is untouched
    clobber = out["clobber"]
    assert clobber["result"]["applied"] is False and "already exists" in clobber["result"]["failureReason"]
    assert clobber["disk"] == "original" and clobber["buffer_modified"] is False

    # the other commands answered, into the floating window
    doctor = out["cortex.doctor"]
    assert doctor.get("err") is None and doctor["result"]["checks"], doctor
    assert "Doctor" in doctor["float"]
    memory = out["cortex.memory.search"]
    assert memory.get("err") is None and "results" in memory["result"], memory
    run = out["cortex.run"]
    assert run.get("err") is None and run["result"]["ran"] is True, run
    assert "Run calc.py" in run["float"]

    # :CortexCancel stopped a streaming run
    assert out["cancel"]["stop_reason"] == "cancelled", out["cancel"]
    assert 0 < len(out["cancel"]["answer"]) < len(STREAM_ANSWER)  # stopped mid-answer
    assert "cancelled" in out["cancel_float"]

    # the statusline component showed the last run, then cleared
    assert "Cancelled" in out["status_busy"] or "Answered" in out["status_busy"], out["status_busy"]
    assert out["status_cleared"] is True and out["status"] == "", out["status"]

    # code actions still answered while a run streamed
    assert STREAM_ANSWER in answers
    assert out["streaming_still_running"] is True, (out.get("streaming_sampling_ms"), out["steps"])
    assert out["latency"]["streaming"]["n"] == 30

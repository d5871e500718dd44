"""Recovery (once each) and the Python plan guard, with the real sandbox behind python_exec."""

from __future__ import annotations

from pathlib import Path

import pytest

from cortex_lsp.agent.prompts import ROLE_EXECUTOR, ROLE_PLANNER, ROLE_REFLECTOR
from tests.agent.conftest import AgentHarness, plan_reply, tool_names
from tests.scripted_model import Reply, call


async def test_code_pasted_instead_of_run_is_run_for_the_model(py_agent: AgentHarness) -> None:
    agent = py_agent
    agent.model.on(
        plan_reply("tools", ["Write the code", "Run it with python_exec"], ["python_exec"]),
        contains=ROLE_PLANNER,
    )
    agent.model.on(Reply(content="It prints 55."), contains="ran it with python_exec")
    agent.model.on(
        Reply(content="Here is the code:\n```python\nprint(sum(range(11)))\n```"), contains=ROLE_EXECUTOR
    )

    result = await agent.run("Write Python code that sums 0..10 and run it")

    assert [c.tool for c in result.tool_calls] == ["python_exec"]
    assert result.tool_calls[0].success and "55" in result.tool_calls[0].output
    assert "recovery: run_code" in result.notes
    assert result.answer == "It prints 55."


async def test_explicit_use_python_is_honoured(py_agent: AgentHarness) -> None:
    agent = py_agent
    agent.model.on(plan_reply("tools", ["Compute with calculator"], ["calculator"]), contains=ROLE_PLANNER)
    agent.model.on(
        Reply(tool_calls=[call("calculator", expression="2**100")]), contains=ROLE_EXECUTOR, times=1
    )
    agent.model.on(Reply(content='{"progress": true}'), contains=ROLE_REFLECTOR, times=None)
    agent.model.on(Reply(content="2**100 = 1267650600228229401496703205376"), contains="[python_exec result]")
    agent.model.on(Reply(tool_calls=[call("python_exec", code="2**100")]), contains=ROLE_EXECUTOR, times=None)

    result = await agent.run("Use Python to compute 2**100")

    assert "python_exec" in result.plan.tools
    assert any("python_exec" in s for s in result.plan.steps)
    first = agent.requests(ROLE_EXECUTOR)[0]
    assert "python_exec" in tool_names(first) and "calculator" not in tool_names(first)
    calc = [c for c in result.tool_calls if c.tool == "calculator"]
    assert calc and not calc[0].success  # the model tried the calculator anyway: refused, not run
    py = [c for c in result.tool_calls if c.tool == "python_exec"]
    assert py and py[0].success and "1267650600228229401496703205376" in py[0].output


async def test_assignment_value_is_reported(py_agent: AgentHarness) -> None:
    agent = py_agent
    agent.model.on(plan_reply("tools", ["Run it with python_exec"], ["python_exec"]), contains=ROLE_PLANNER)
    agent.model.on(Reply(tool_calls=[call("python_exec", code="x = 6 * 7")]), contains=ROLE_EXECUTOR)
    agent.model.on(Reply(content="x is 42."), contains="[python_exec result]")
    result = await agent.run("Use Python: set x to 6*7")
    assert "42" in result.tool_calls[0].output


async def test_try_again_after_an_error_gets_one_real_retry(py_agent: AgentHarness) -> None:
    agent = py_agent
    agent.model.on(plan_reply("tools", ["Run it with python_exec"], ["python_exec"]), contains=ROLE_PLANNER)
    agent.model.on(Reply(content='{"progress": true}'), contains=ROLE_REFLECTOR, times=None)
    agent.model.on(Reply(content="The answer is 3."), contains="[python_exec result]\\nvalue")
    agent.model.on(Reply(tool_calls=[call("python_exec", code="1 + 2")]), contains="call the tool again")
    agent.model.on(Reply(tool_calls=[call("python_exec", code="1 +* 2")]), contains=ROLE_EXECUTOR, times=1)
    agent.model.on(Reply(content="That failed, let me try again."), contains=ROLE_EXECUTOR, times=1)

    result = await agent.run("Use Python to add 1 and 2")

    assert [c.success for c in result.tool_calls] == [False, True]
    assert "recovery: retry" in result.notes
    assert result.answer == "The answer is 3."


async def test_skipped_required_tool_is_nudged_once(agent: AgentHarness, workspace_files: Path) -> None:
    agent.model.on(
        plan_reply("tools", ["Read notes.txt with read_file"], ["read_file"]), contains=ROLE_PLANNER
    )
    agent.model.on(Reply(content="It has three lines."), contains="[read_file result]")
    agent.model.on(
        Reply(tool_calls=[call("read_file", path="notes.txt")]), contains="Use the read_file tool now"
    )
    agent.model.on(Reply(content="notes.txt probably holds notes."), contains=ROLE_EXECUTOR, times=1)

    result = await agent.run("Read notes.txt and tell me how many lines it has")

    assert [c.tool for c in result.tool_calls] == ["read_file"]
    assert "recovery: nudge" in result.notes
    assert result.answer == "It has three lines."


async def test_nudge_happens_only_once(agent: AgentHarness, workspace_files: Path) -> None:
    agent.model.on(
        plan_reply("tools", ["Read notes.txt with read_file"], ["read_file"]), contains=ROLE_PLANNER
    )
    agent.model.on(Reply(content="I refuse to read files."), contains=ROLE_EXECUTOR, times=None)
    result = await agent.run("Read notes.txt and tell me how many lines it has")
    assert result.stop_reason == "answered"
    assert result.notes.count("recovery: nudge") == 1
    assert len(agent.requests(ROLE_EXECUTOR)) == 2


async def test_sandbox_refusing_the_users_code_ends_the_run(py_agent: AgentHarness) -> None:
    agent = py_agent
    code = "import os\nprint(os.listdir('/'))"
    agent.model.on(plan_reply("tools", ["Run it with python_exec"], ["python_exec"]), contains=ROLE_PLANNER)
    agent.model.on(Reply(tool_calls=[call("python_exec", code=code)]), contains=ROLE_EXECUTOR, times=None)
    result = await agent.run(f"Run this code:\n```python\n{code}\n```")
    # "run it" on code the sandbox can't run is answered without a model (runnability), or refused
    assert result.stop_reason in ("answered", "refused")
    assert "sandbox" in result.answer.lower()
    assert len([c for c in result.tool_calls if c.tool == "python_exec"]) <= 1


def _calls_on_this_thread(function: object) -> tuple[list[str], object]:
    """A profile hook for this (the event loop's) thread recording each call of ``function``."""
    import threading

    seen: list[str] = []
    target = getattr(function, "__code__", None)

    def profile(frame: object, event: str, arg: object) -> None:
        if event == "call" and getattr(frame, "f_code", None) is target:
            seen.append(threading.current_thread().name)

    return seen, profile


@pytest.mark.parametrize("profile_name", ["default", "small"])
async def test_the_refusal_reply_is_worked_out_off_the_event_loop(py_agent: AgentHarness, profile_name: str
                                                                  ) -> None:
    """The reply for code the sandbox refused reads the folder modules the code imports (and scans its
    text): it runs in a worker thread, never on the event loop, in the agent's own loop (``default``)
    and in a routed run (``small``). A profile hook on the loop's thread records every call made there."""
    import sys

    from cortex_lsp.agent import runnability

    agent = py_agent
    (agent.root / "helper.py").write_text("X = 1\n")
    code = "import helper\nprint(open('/etc/passwd').read())"  # runnable by the check, refused when run
    if profile_name == "small":
        agent.configure(model_profile="small")
        message = "execute: import helper; print(open('/etc/passwd').read())"
    else:
        agent.model.on(plan_reply("tools", ["Run it with python_exec"], ["python_exec"]), contains=ROLE_PLANNER)
        agent.model.on(Reply(tool_calls=[call("python_exec", code=code)]), contains=ROLE_EXECUTOR, times=None)
        message = f"Run this code:\n```python\n{code}\n```"
    on_loop, profile = _calls_on_this_thread(runnability.cannot_run_reply)
    sys.setprofile(profile)  # type: ignore[arg-type]
    try:
        result = await agent.run(message)
    finally:
        sys.setprofile(None)
    assert result.stop_reason == "refused", (result.stop_reason, result.answer)
    assert "sandbox refused to run" in result.answer.lower(), result.answer
    assert on_loop == [], f"cannot_run_reply ran on the event loop's thread: {on_loop}"

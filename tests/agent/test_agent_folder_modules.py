"""The user's own modules through the agent: the runnability check (no model) and python_exec, with the
real sandbox and the workspace's folder."""

from __future__ import annotations

from cortex_lsp.agent.prompts import ROLE_EXECUTOR, ROLE_PLANNER
from tests.agent.conftest import AgentHarness, plan_reply
from tests.scripted_model import Reply, call

UTILS = (
    "import re\n\ndef slugify(text):\n    return re.sub(r'[^a-z0-9]+', '-', text.lower()).strip('-')\n\n"
    "def chunk(xs, n):\n    return [xs[i:i + n] for i in range(0, len(xs), n)]\n"
)


async def test_a_snippet_importing_the_users_module_runs(py_agent: AgentHarness) -> None:
    agent = py_agent
    (agent.root / "utils.py").write_text(UTILS, encoding="utf-8")
    code = "from utils import slugify; print(slugify('Hello World 2024'))"
    agent.model.on(plan_reply("tools", ["Run it with python_exec"], ["python_exec"]), contains=ROLE_PLANNER)
    agent.model.on(Reply(tool_calls=[call("python_exec", code=code)]), contains=ROLE_EXECUTOR, times=1)
    agent.model.on(Reply(content="It prints hello-world-2024."), contains="[python_exec result]")
    result = await agent.run(f"Run this snippet in the workspace and tell me what it prints: {code}")
    runs = [c for c in result.tool_calls if c.tool == "python_exec"]
    assert runs and runs[0].success and "hello-world-2024" in runs[0].output, result.tool_calls
    assert "does not have" not in result.answer and result.answer == "It prints hello-world-2024."


async def test_a_module_the_sandbox_cant_run_is_named_without_a_model(py_agent: AgentHarness) -> None:
    agent = py_agent
    (agent.root / "app.py").write_text("import flask\n\nAPP = flask.Flask('x')\n", encoding="utf-8")
    result = await agent.run("Run this:\n```python\nfrom app import APP\nprint(APP)\n```")
    assert result.tool_calls == [] and not agent.requests(ROLE_PLANNER)
    assert "it imports app (app.py in the folder), which imports flask, a package the sandbox does not have" \
        in result.answer, result.answer
    assert "pip install flask" in result.answer


def small(agent: AgentHarness) -> AgentHarness:
    agent.configure(model_profile="small")
    return agent


async def test_the_users_words_with_inline_code_run_on_a_small_model(py_agent: AgentHarness) -> None:
    agent = small(py_agent)
    (agent.root / "utils.py").write_text(UTILS, encoding="utf-8")
    result = await agent.run("Run this snippet in the workspace and tell me what it prints: "
                             "from utils import slugify; print(slugify('Hello World 2024'))")
    assert [c.tool for c in result.tool_calls] == ["python_exec"] and result.tool_calls[0].success, result
    assert "hello-world-2024" in result.answer
    result = await agent.run("execute: from utils import chunk; print(chunk([1,2,3,4,5,6,7], 3))")
    assert "[[1, 2, 3], [4, 5, 6], [7]]" in result.answer, result.answer


async def test_a_refused_module_is_explained_on_a_small_model(py_agent: AgentHarness) -> None:
    """Inline code is run first (no runnability check before it): the refusal's explanation reads the
    run's folders and names the module and its import."""
    agent = small(py_agent)
    (agent.root / "app.py").write_text("import flask\n\nAPP = flask.Flask('x')\n", encoding="utf-8")
    result = await agent.run("execute: from app import APP; print(APP)")
    assert [c.tool for c in result.tool_calls] == ["python_exec"] and not result.tool_calls[0].success
    assert "it imports app (app.py in the folder), which imports flask" in result.answer, result.answer
    assert "it imports app, a package the sandbox does not have" not in result.answer

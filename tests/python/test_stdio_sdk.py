"""The official Python MCP SDK (PyPI `mcp`) driving the built lf-mcp-stdio binary.

Run by .ci/run after `cargo build -p lf-mcp-stdio`; LF_STDIO_BIN names the
binary. Every connection mode the SDK speaks is exercised: the initialize
handshake ("legacy"), the handshake-free 2026-07-28 era ("2026-07-28"), and
"auto", which probes server/discover first.
"""

import os
import tempfile
import uuid

import pytest
from mcp import StdioServerParameters
from mcp.client.client import Client
from mcp.shared.exceptions import MCPError

BIN = os.environ.get("LF_STDIO_BIN")

BODY = (
    "You are a senior [[Language]] engineer. Review the following code for bugs, "
    "security issues, and performance problems.\n\nCode:\n[[Code]]\n\nFocus area: [[FocusArea!]]"
)

MODES = ["legacy", "2026-07-28", "auto"]


@pytest.fixture(scope="module")
def binary():
    assert BIN, "set LF_STDIO_BIN to the built lf-mcp-stdio binary"
    assert os.access(BIN, os.X_OK), f"{BIN} is not an executable"
    return BIN


def params(binary, db_dir):
    return StdioServerParameters(
        command=binary,
        env={
            "LENSERFIGHT_DATABASE_URL": f"sqlite:{db_dir}/lenserfight.db",
            "LENSERFIGHT_LENSER_ID": str(uuid.uuid4()),
            "LENSERFIGHT_LOG": "warn",
        },
    )


@pytest.mark.anyio
@pytest.mark.parametrize("mode", MODES)
async def test_list_create_run_and_missing_params(binary, mode):
    with tempfile.TemporaryDirectory() as db_dir:
        async with Client(params(binary, db_dir), mode=mode) as client:
            # The era really negotiated: the handshake, or the handshake-free
            # 2026-07-28 era (which "auto" reaches through server/discover).
            expected = "2025-11-25" if mode == "legacy" else "2026-07-28"
            assert client.session.protocol_version == expected
            tools = await client.list_tools()
            names = {t.name for t in tools.tools}
            assert {"create_lens", "run_lens", "search_lenses", "find_and_run_lens"} <= names
            assert len(names) == 66, "20 Lens tools, 10 Battle tools, search and fetch, 19 Workflow tools and 15 Agent tools"
            run_tool = next(t for t in tools.tools if t.name == "run_lens")
            assert run_tool.output_schema is not None
            # MCP's default for a missing readOnlyHint is false, and the server leaves defaults out.
            assert not run_tool.annotations.read_only_hint and run_tool.annotations.open_world_hint is False

            created = await client.call_tool(
                "create_lens", {"title": "Code Reviewer", "template_body": BODY, "visibility": "private"}
            )
            assert not created.is_error, created
            lens = created.structured_content
            assert lens["head_semver"] == "1.0.0"
            labels = [(p["label"], p["optional"]) for p in lens["head_version"]["version_parameters"]]
            assert labels == [("Language", False), ("Code", False), ("FocusArea", True)]

            # get_lens in the spec's shape: versions.template_body and a top-level version_parameters.
            got = await client.call_tool("get_lens", {"lens_id": lens["id"]})
            assert not got.is_error, got
            assert got.structured_content["versions"]["template_body"] == BODY
            assert [(p["label"], p["optional"]) for p in got.structured_content["version_parameters"]] == labels

            ran = await client.call_tool(
                "run_lens",
                {"lens_id": lens["id"], "param_values": {"language": "Rust", "Code": "fn main() {}"}},
            )
            assert not ran.is_error, ran
            prompt = ran.structured_content["resolved_prompt"]
            assert prompt.startswith("You are a senior Rust engineer.")
            assert prompt.endswith("Focus area: ")
            assert ran.structured_content["estimated_input_tokens"] == -(-len(prompt) // 4)

            missing = await client.call_tool("run_lens", {"lens_id": lens["id"], "param_values": {"Code": "x"}})
            assert missing.is_error
            assert missing.structured_content["code"] == "MISSING_PARAMS"
            assert missing.structured_content["details"]["missing"] == ["Language"]
            assert "Ask the user for: Language" in missing.structured_content["message"]

            found = await client.call_tool("search_lenses", {"query": "senior engineer"})
            assert found.structured_content["total"] == 1

            prompts = await client.list_prompts()
            assert [p.name for p in prompts.prompts] == [lens["id"]]


@pytest.mark.anyio
@pytest.mark.parametrize("mode", MODES)
async def test_resources_list_templates_and_read(binary, mode):
    with tempfile.TemporaryDirectory() as db_dir:
        async with Client(params(binary, db_dir), mode=mode) as client:
            modern = mode != "legacy"
            lens = (await client.call_tool("create_lens", {"title": "Code Reviewer", "template_body": BODY})).structured_content
            uri = f"lenserfight://lenses/{lens['id']}"

            templates = await client.list_resource_templates()
            assert [t.uri_template for t in templates.resource_templates] == [
                "lenserfight://lenses/{lens_id}",
                "lenserfight://lenses/{lens_id}{?label}",
                "lenserfight://workflows/{workflow_id}",
                "lenserfight://battles/{battle_id}",
                "lenserfight://experiments/{experiment_id}/results.jsonl",
                "lenserfight://experiments/{experiment_id}/results.csv",
                "lenserfight://battles/{battle_id}/chart.svg",
                "lenserfight://experiments/{experiment_id}/chart.svg",
                "lenserfight://battles/{battle_id}/chart.png",
                "lenserfight://experiments/{experiment_id}/chart.png",
            ]
            listed = await client.list_resources()
            assert [(r.uri, r.name, r.mime_type) for r in listed.resources] == [(uri, "Code Reviewer", "text/markdown")]
            assert listed.resources[0].annotations.last_modified
            read = await client.read_resource(uri)
            assert len(read.contents) == 1
            text = read.contents[0].text
            assert read.contents[0].mime_type == "text/markdown"
            assert text.startswith("# Code Reviewer\n")
            assert f"```text\n{BODY}\n```" in text
            # Caching hints come with the 2026-07-28 era only.
            if modern:
                assert (templates.ttl_ms, templates.cache_scope) == (3_600_000, "public")
                assert (listed.ttl_ms, listed.cache_scope) == (5_000, "private")
                assert (read.ttl_ms, read.cache_scope) == (5_000, "public")
            else:
                # Absent on the wire; the SDK reads that as 0, immediately stale.
                assert not listed.ttl_ms and not read.ttl_ms

            missing = f"lenserfight://lenses/{uuid.uuid4()}"
            with pytest.raises(MCPError) as e:
                await client.read_resource(missing)
            assert e.value.code == (-32602 if modern else -32002)
            assert e.value.data == {"uri": missing}


@pytest.mark.anyio
@pytest.mark.parametrize("mode", MODES)
async def test_a_prompt_by_label_keeps_its_version(binary, mode):
    with tempfile.TemporaryDirectory() as db_dir:
        async with Client(params(binary, db_dir), mode=mode) as client:
            lens = (await client.call_tool("create_lens", {"title": "Code Reviewer", "template_body": BODY})).structured_content
            lens_id = lens["id"]
            newer = BODY + "\nAnswer in bullet points."
            updated = await client.call_tool("update_lens", {"lens_id": lens_id, "template_body": newer})
            assert not updated.is_error, updated
            assert updated.structured_content["lens"]["head_semver"] == "1.0.1"
            labelled = await client.call_tool("set_lens_label", {"lens_id": lens_id, "label": "production", "version": "1.0.0"})
            assert not labelled.is_error, labelled
            assert labelled.structured_content["label"]["protected"] is True

            args = {"Language": "Rust", "Code": "fn main() {}"}
            old = await client.get_prompt(f"{lens_id}@production", args)
            text = old.messages[0].content.text
            assert text.startswith("You are a senior Rust engineer.") and "bullet points" not in text
            assert old.description == "Code Reviewer 1.0.0"
            head = await client.get_prompt(lens_id, args)
            assert head.messages[0].content.text.endswith("Answer in bullet points.")

            with pytest.raises(MCPError) as e:
                await client.get_prompt(f"{lens_id}@staging", args)
            assert "its labels are production" in e.value.message
            read = await client.read_resource(f"lenserfight://lenses/{lens_id}?label=production")
            assert "version 1.0.0 (label production)" in read.contents[0].text


@pytest.mark.anyio
@pytest.mark.parametrize("mode", MODES)
async def test_search_and_fetch(binary, mode):
    with tempfile.TemporaryDirectory() as db_dir:
        async with Client(params(binary, db_dir), mode=mode) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            for name in ["search", "fetch"]:
                assert tools[name].annotations.read_only_hint is True
                assert tools[name].annotations.open_world_hint is False
            lens = (await client.call_tool("create_lens", {"title": "Code Reviewer", "template_body": BODY})).structured_content
            battle = (
                await client.call_tool("create_battle", {"title": "Review duel", "task_prompt": "Review this code for bugs."})
            ).structured_content
            flow = await client.call_tool("create_workflow", {"title": "Review pipeline", "steps": [
                {"key": "start", "kind": "trigger", "name": "By hand", "node_type": "manual_trigger"},
                {"key": "review", "kind": "lens", "name": "Review", "lens_id": lens["id"],
                 "parameters": {"Language": "Rust", "Code": "fn main() {}"}},
            ], "connections": [{"from_step": "start", "to_step": "review", "input_parameter": "FocusArea"}]})
            assert not flow.is_error, flow
            flow_id = flow.structured_content["id"]

            found = await client.call_tool("search", {"query": "review"})
            assert not found.is_error, found
            assert found.structured_content == {
                "results": [
                    {"id": f"lens:{lens['id']}", "title": "Code Reviewer", "url": f"lenserfight://lenses/{lens['id']}"},
                    {"id": f"workflow:{flow_id}", "title": "Review pipeline", "url": f"lenserfight://workflows/{flow_id}"},
                    {"id": f"battle:{battle['id']}", "title": "Review duel", "url": f"lenserfight://battles/{battle['id']}"},
                ]
            }
            fetched = await client.call_tool("fetch", {"id": f"lens:{lens['id']}"})
            assert not fetched.is_error, fetched
            doc = fetched.structured_content
            assert sorted(doc) == ["id", "metadata", "text", "title", "url"]
            assert BODY in doc["text"] and doc["metadata"]["kind"] == "lens"
            assert doc["text"] == (await client.read_resource(doc["url"])).contents[0].text

            steps = await client.call_tool("fetch", {"id": f"workflow:{flow_id}"})
            assert not steps.is_error, steps
            assert steps.structured_content["metadata"]["steps"] == 2
            assert f"(lens, lens, lens lens:{lens['id']})" in steps.structured_content["text"]
            listed = [r.uri for r in (await client.list_resources()).resources]
            assert listed == [
                f"lenserfight://lenses/{lens['id']}",
                f"lenserfight://workflows/{flow_id}",
                f"lenserfight://battles/{battle['id']}",
            ]

            gone = await client.call_tool("fetch", {"id": f"battle:{uuid.uuid4()}"})
            assert gone.is_error and gone.structured_content["code"] == "NOT_FOUND"
            bad = await client.call_tool("fetch", {"id": "nope"})
            assert bad.structured_content["code"] == "INVALID_ARGUMENT"
            assert bad.structured_content["details"]["field"] == "id"


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_bad_input_is_a_tool_error(binary, mode):
    with tempfile.TemporaryDirectory() as db_dir:
        async with Client(params(binary, db_dir), mode=mode) as client:
            bad = await client.call_tool("get_lens", {"lens_id": "not-a-uuid"})
            assert bad.is_error
            assert bad.structured_content["code"] == "INVALID_ARGUMENT"
            assert bad.structured_content["details"]["field"] == "lens_id"
            gone = await client.call_tool("get_lens", {"lens_id": str(uuid.uuid4())})
            assert gone.structured_content["code"] == "NOT_FOUND"


WORKFLOW_BODY = "Write a short note about [[Topic]] for the team, in a [[Tone!]] tone. Three sentences at most."


def digest_blueprint(lens_id, title="Team notes"):
    return {
        "title": title,
        "steps": [
            {"key": "start", "kind": "trigger", "name": "Start", "node_type": "manual_trigger"},
            {"key": "note", "kind": "lens", "name": "Write the note", "lens_id": lens_id,
             "parameters": {"Tone": "calm"}},
            {"key": "log", "kind": "tool", "name": "Log it", "node_type": "logger",
             "config": {"message": "note: [[input]]"}},
        ],
        "connections": [
            {"from_step": "start", "output_key": "topic", "to_step": "note", "input_parameter": "Topic"},
            {"from_step": "note", "output_key": "text", "to_step": "log", "input_parameter": "input"},
        ],
    }


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_workflow_create_validate_get(binary, mode):
    with tempfile.TemporaryDirectory() as db_dir:
        async with Client(params(binary, db_dir), mode=mode) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            assert {"create_workflow", "validate_workflow", "get_workflow", "list_workflow_node_types"} <= set(tools)
            assert tools["validate_workflow"].annotations.read_only_hint is True
            assert tools["archive_workflow"].annotations.destructive_hint is not False

            lens = await client.call_tool("create_lens", {"title": "Team note", "template_body": WORKFLOW_BODY})
            assert not lens.is_error, lens
            lens_id = lens.structured_content["id"]

            created = await client.call_tool("create_workflow", digest_blueprint(lens_id))
            assert not created.is_error, created
            workflow = created.structured_content
            assert (workflow["node_count"], workflow["edge_count"], workflow["visibility"]) == (3, 2, "private")
            assert [s["key"] for s in workflow["creation_summary"]["steps"]] == ["start", "note", "log"]
            assert workflow["next_steps"][0] == "Call validate_workflow with the returned workflow id."

            checked = await client.call_tool("validate_workflow", {"workflow_id": workflow["id"]})
            assert not checked.is_error, checked
            report = checked.structured_content
            assert report["valid"] and report["run_ready"], report
            assert report["execution_order"] == ["start", "note", "log"]
            note = next(n for n in report["nodes"] if n["key"] == "note")
            assert (note["configured_parameters"], note["wired_parameters"]) == (["Tone"], ["Topic"])

            got = await client.call_tool("get_workflow", {"workflow_id": workflow["id"]})
            assert not got.is_error, got
            assert got.structured_content["head"]["number"] == 1
            assert [v["number"] for v in got.structured_content["versions"]] == [1]
            assert got.structured_content["trigger"]["node_type"] == "manual_trigger"

            graph = await client.call_tool("get_workflow_graph", {"workflow_id": workflow["id"], "version": 1})
            assert [n["node_type"] for n in graph.structured_content["nodes"]] == ["manual_trigger", "lens", "logger"]

            bad = digest_blueprint(lens_id, "Bad")
            bad["steps"][2]["node_type"] = "loger"
            refused = await client.call_tool("create_workflow", bad)
            assert refused.is_error
            assert refused.structured_content["code"] == "INVALID_ARGUMENT"
            assert "logger" in refused.structured_content["message"], "the closest type is named"
            listed = await client.call_tool("list_workflows", {})
            assert listed.structured_content["total"] == 1, "the refused workflow was not written"

        # The workflow is in the database: a new server process reads it back.
        async with Client(params(binary, db_dir), mode=mode) as client:
            again = await client.call_tool("validate_workflow", {"workflow_id": workflow["id"]})
            assert not again.is_error and again.structured_content["valid"], again


@pytest.fixture
def anyio_backend():
    return "asyncio"


async def wait_for_run(client, run_id, want=("completed", "failed", "cancelled"), tries=400):
    import anyio

    for _ in range(tries):
        status = await client.call_tool("get_workflow_run_status", {"run_id": run_id})
        assert not status.is_error, status
        if status.structured_content["status"] in want:
            return status.structured_content
        await anyio.sleep(0.025)
    raise AssertionError(f"run {run_id} is still {status.structured_content['status']}")


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_workflow_runs_and_survives_a_restart(binary, mode):
    with tempfile.TemporaryDirectory() as db_dir:
        async with Client(params(binary, db_dir), mode=mode) as client:
            lens = await client.call_tool("create_lens", {"title": "Team note", "template_body": WORKFLOW_BODY})
            lens_id = lens.structured_content["id"]
            workflow = (await client.call_tool("create_workflow", digest_blueprint(lens_id))).structured_content

            started = await client.call_tool(
                "run_workflow", {"workflow_id": workflow["id"], "inputs": {"topic": "release day"}, "idempotency_key": "once"}
            )
            assert not started.is_error, started
            run = started.structured_content
            assert (run["workflow_id"], run["replayed"]) == (workflow["id"], False)
            again = await client.call_tool(
                "run_workflow", {"workflow_id": workflow["id"], "inputs": {"topic": "release day"}, "idempotency_key": "once"}
            )
            assert (again.structured_content["id"], again.structured_content["replayed"]) == (run["id"], True)

            done = await wait_for_run(client, run["id"])
            assert done["status"] == "completed", done
            assert done["cost_metadata"]["model_calls"] == 1
            logs = (await client.call_tool("get_workflow_run_logs", {"run_id": run["id"]})).structured_content
            steps = {n["step"]: n for n in logs["node_results"]}
            assert set(steps) == {"start", "note", "log"}
            assert steps["note"]["output"]["model"] == "offline-deterministic", "the offline provider names itself"
            assert "release day" in steps["note"]["input"]["Topic"]

            # A run waiting on a timer when the session closes.
            waiting = {
                "title": "Wait, then log",
                "steps": [
                    {"key": "start", "kind": "trigger", "name": "Start", "node_type": "manual_trigger"},
                    {"key": "pause", "kind": "tool", "name": "Pause", "node_type": "wait_delay", "config": {"delay_ms": 1500}},
                    {"key": "log", "kind": "tool", "name": "Log", "node_type": "logger", "config": {"message": "[[input]]"}},
                ],
                "connections": [
                    {"from_step": "start", "to_step": "pause", "input_parameter": "input"},
                    {"from_step": "pause", "to_step": "log", "input_parameter": "input"},
                ],
            }
            wf2 = (await client.call_tool("create_workflow", waiting)).structured_content
            later = (await client.call_tool("run_workflow", {"workflow_id": wf2["id"], "inputs": {"n": 1}})).structured_content
            running = await wait_for_run(client, later["id"], want=("running",))
            assert running["completed_at"] is None

        # The next session's server resumes it.
        async with Client(params(binary, db_dir), mode=mode) as client:
            done = await wait_for_run(client, later["id"])
            assert done["status"] == "completed", done
            summary = (await client.call_tool("summarize_workflow", {"run_id": later["id"]})).structured_content
            assert summary["nodes"]["completed"] == 3, summary


async def events_of(client, agent, team_run):
    listed = await client.call_tool("list_agent_run_events", {"ai_lenser_id": agent, "run_id": team_run})
    assert not listed.is_error, listed
    return [e["event_type"] for e in reversed(listed.structured_content["items"])]


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_an_agent_acts_and_runs_a_team_run(binary, mode):
    import anyio

    with tempfile.TemporaryDirectory() as db_dir:
        async with Client(params(binary, db_dir), mode=mode) as client:
            created = await client.call_tool(
                "create_ai_lenser", {"handle": "py_bot", "display_name": "Py bot", "persona": "You are terse."}
            )
            assert not created.is_error, created
            agent = created.structured_content["ai_lenser_id"]
            lens = (await client.call_tool("create_lens", {"title": "Team note", "template_body": WORKFLOW_BODY})).structured_content

            refused = await client.call_tool(
                "run_agent_action", {"ai_lenser_id": agent, "action_type": "get_lens", "metadata": {"lens_id": lens["id"]}}
            )
            assert refused.is_error and refused.structured_content["code"] == "PERMISSION_DENIED", refused
            granted = await client.call_tool("assign_agent_tool", {"ai_lenser_id": agent, "tool_id": "get_lens"})
            assert not granted.is_error, granted
            acted = await client.call_tool(
                "run_agent_action", {"ai_lenser_id": agent, "action_type": "get_lens", "metadata": {"lens_id": lens["id"]}}
            )
            assert not acted.is_error, acted
            assert acted.structured_content["result"]["title"] == "Team note"
            assert acted.structured_content["tool"] == "get_lens"

            # A team run of a workflow whose step is the agent itself.
            flow = {
                "title": "Agent flow",
                "steps": [
                    {"key": "start", "kind": "trigger", "name": "Start", "node_type": "manual_trigger"},
                    {"key": "think", "kind": "tool", "name": "Think", "node_type": "agent_execute",
                     "config": {"ai_lenser_id": agent, "prompt": "Find lenses about [[topic]]."}},
                ],
                "connections": [{"from_step": "start", "to_step": "think", "input_parameter": "input"}],
            }
            wf = (await client.call_tool("create_workflow", flow)).structured_content
            started = await client.call_tool(
                "start_agent_team_run", {"ai_lenser_id": agent, "workflow_id": wf["id"], "inputs": {"topic": "seas"}}
            )
            assert not started.is_error, started
            team_run = started.structured_content["team_run_id"]
            for _ in range(400):
                kinds = await events_of(client, agent, team_run)
                if kinds[-1] in ("completed", "failed"):
                    break
                await anyio.sleep(0.025)
            assert kinds == ["dispatch_queued", "dispatch_started", "node_started", "node_completed", "completed"], kinds
            runs = (await client.call_tool("list_workflow_runs", {"workflow_id": wf["id"]})).structured_content
            assert [r["origin"] for r in runs["items"]] == ["team"]
            logs = (await client.call_tool("get_workflow_run_logs", {"run_id": runs["items"][0]["id"]})).structured_content
            think = next(n for n in logs["node_results"] if n["step"] == "think")
            assert think["output"]["model"] == "offline-deterministic", "the offline provider names itself"
            assert "@py_bot" in think["output"]["text"]

            again = await client.call_tool("cancel_agent_run", {"ai_lenser_id": agent, "team_run_id": team_run})
            assert again.is_error and again.structured_content["code"] == "INVALID_TRANSITION", again

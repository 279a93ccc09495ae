"""Elicitation with the official Python MCP SDK (PyPI `mcp`): a client with an
elicitation callback is asked to confirm destructive calls and to fill in a
lens's missing parameters, in both eras (2025-11-25's elicitation/create,
2026-07-28's input_required result), over stdio and HTTP; a client without
one is answered CONFIRMATION_REQUIRED and MISSING_PARAMS as before.

LF_STDIO_BIN and LF_HTTP_BIN name the built binaries, as for the other SDK tests.
"""

import tempfile

import httpx2
import mcp.types as types
import pytest
from mcp.client.client import Client
from mcp.client.streamable_http import streamable_http_client

from test_http_sdk import bearer_client, serve, stop
from test_http_sdk import server as http_server  # noqa: F401 (a fixture)
from test_stdio_sdk import binary, params  # noqa: F401 (a fixture)

BODY = "Review this [[Language]] code at depth [[Depth:integer!]] for bugs:\n[[Code]]"
LENS_PARAMS = [
    {"label": "Language", "options": ["Rust", "Go"]},
    {"label": "Depth", "default": "2", "description": "How deep"},
]
MODES = ["legacy", "2026-07-28"]


def asking_client(server, mode, person):
    """A client of `server` with the bearer token, answering elicitation through `person`."""
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {server['token']}"})
    transport = streamable_http_client(server["base"] + "/mcp", http_client=http)
    return http, Client(transport, mode=mode, elicitation_callback=person)


class Person:
    """An elicitation callback answering `action` (and `content` on accept), recording what it was asked."""

    def __init__(self):
        self.action = "accept"
        self.content = {}
        self.asked = []

    async def __call__(self, context, params):
        self.asked.append(params)
        if self.action == "accept":
            return types.ElicitResult(action="accept", content=self.content)
        return types.ElicitResult(action=self.action)


async def new_lens(client):
    made = await client.call_tool(
        "create_lens", {"title": "Reviewer", "template_body": BODY, "params": LENS_PARAMS, "visibility": "private"}
    )
    assert not made.is_error, made
    return made.structured_content["id"]


async def confirms_and_fills_in(client, person):
    """What every client with a callback sees, whatever its era and transport."""
    # A tool that takes confirm: the person answers for it.
    for action in ["decline", "cancel"]:
        lens_id = await new_lens(client)
        person.action, person.asked = action, []
        refused = await client.call_tool("delete_lens", {"lens_id": lens_id})
        assert refused.is_error and refused.structured_content["code"] == "DECLINED", refused
        assert refused.structured_content["details"]["answer"] == action
        assert len(person.asked) == 1 and lens_id in person.asked[0].message
        assert not (await client.call_tool("get_lens", {"lens_id": lens_id})).is_error, "nothing changed"
    person.action, person.asked = "accept", []
    deleted = await client.call_tool("delete_lens", {"lens_id": lens_id})
    assert not deleted.is_error, deleted
    gone = await client.call_tool("get_lens", {"lens_id": lens_id})
    assert gone.structured_content["code"] == "NOT_FOUND"

    # A Destructive tool without confirm is asked about before it runs.
    lens_id = await new_lens(client)
    person.action = "decline"
    assert (await client.call_tool("archive_lens", {"lens_id": lens_id})).structured_content["code"] == "DECLINED"
    person.action = "accept"
    archived = await client.call_tool("archive_lens", {"lens_id": lens_id})
    assert archived.structured_content["status"] == "archived", archived

    # Missing parameters: one typed form.
    lens_id = await new_lens(client)
    person.asked, person.content = [], {"Language": "Go", "Depth": 4, "Code": "x := 1"}
    ran = await client.call_tool("run_lens", {"lens_id": lens_id})
    assert not ran.is_error, ran
    assert ran.structured_content["resolved_prompt"] == "Review this Go code at depth 4 for bugs:\nx := 1"
    schema = person.asked[0].requested_schema
    assert schema["required"] == ["Language", "Code"]
    assert schema["properties"]["Language"]["enum"] == ["Rust", "Go"]
    assert schema["properties"]["Depth"]["type"] == "integer" and schema["properties"]["Depth"]["default"] == 2

    person.content = {"Language": "Rust"}
    prompt = await client.get_prompt(lens_id, {"Code": "fn f() {}"})
    assert prompt.messages[0].content.text == "Review this Rust code at depth 2 for bugs:\nfn f() {}"

    person.action = "cancel"
    refused = await client.call_tool("run_lens", {"lens_id": lens_id})
    assert refused.structured_content["code"] == "DECLINED", refused


async def answers_as_before(client):
    lens_id = await new_lens(client)
    asked = await client.call_tool("delete_lens", {"lens_id": lens_id})
    assert asked.structured_content["code"] == "CONFIRMATION_REQUIRED", asked
    missing = await client.call_tool("run_lens", {"lens_id": lens_id})
    assert missing.structured_content["code"] == "MISSING_PARAMS", missing
    confirmed = await client.call_tool("delete_lens", {"lens_id": lens_id, "confirm": True})
    assert not confirmed.is_error, confirmed


@pytest.mark.anyio
@pytest.mark.parametrize("mode", MODES)
async def test_stdio_asks_the_person(binary, mode):  # noqa: F811
    person = Person()
    with tempfile.TemporaryDirectory() as db_dir:
        async with Client(params(binary, db_dir), mode=mode, elicitation_callback=person) as client:
            assert client.session.protocol_version == ("2025-11-25" if mode == "legacy" else "2026-07-28")
            await confirms_and_fills_in(client, person)


@pytest.mark.anyio
@pytest.mark.parametrize("mode", MODES)
async def test_stdio_without_elicitation(binary, mode):  # noqa: F811
    with tempfile.TemporaryDirectory() as db_dir:
        async with Client(params(binary, db_dir), mode=mode) as client:
            await answers_as_before(client)


@pytest.fixture(scope="module")
def http_sessions(http_server):  # noqa: F811
    """The same database served with sessions, where a 2025-11-25 client can be sent requests."""
    proc, base = serve(http_server["env"], "--sessions")
    yield {**http_server, "base": base}
    stop(proc)


@pytest.mark.anyio
@pytest.mark.parametrize("mode", MODES)
async def test_http_asks_the_person(http_server, http_sessions, mode):  # noqa: F811
    # The handshake era needs a session to be sent elicitation/create; 2026-07-28 needs none.
    server = http_sessions if mode == "legacy" else http_server
    person = Person()
    http, client = asking_client(server, mode, person)
    async with http, client:
        await confirms_and_fills_in(client, person)


@pytest.mark.anyio
@pytest.mark.parametrize("mode", MODES)
async def test_http_without_elicitation(http_server, mode):  # noqa: F811
    http, client = bearer_client(http_server, http_server["token"], mode)
    async with http, client:
        await answers_as_before(client)


@pytest.mark.anyio
async def test_http_without_sessions_asks_nobody_in_the_handshake_era(http_server):  # noqa: F811
    """Without sessions a 2025-11-25 client cannot be sent a request: it is answered as before."""
    person = Person()
    http, client = asking_client(http_server, "legacy", person)
    async with http, client:
        await answers_as_before(client)
        assert person.asked == []


@pytest.mark.anyio
@pytest.mark.parametrize("mode", MODES)
async def test_stdio_asks_the_person_an_approval_awaits(binary, mode):  # noqa: F811
    person = Person()
    with tempfile.TemporaryDirectory() as db_dir:
        async with Client(params(binary, db_dir), mode=mode, elicitation_callback=person) as client:
            agent = (await client.call_tool("create_ai_lenser", {"handle": "asker", "display_name": "Asker"}))
            agent_id = agent.structured_content["ai_lenser_id"]
            flow = await client.call_tool("create_workflow", {
                "title": "Flow", "visibility": "private",
                "steps": [{"key": "start", "kind": "trigger", "name": "Start", "node_type": "manual_trigger"},
                          {"key": "log", "kind": "tool", "name": "Log", "node_type": "noop"}],
                "connections": [{"from_step": "start", "to_step": "log", "input_parameter": "input"}],
            })
            start = {"ai_lenser_id": agent_id, "workflow_id": flow.structured_content["id"], "policy": "approval_required"}
            for action, content, status in [("decline", None, None), ("accept", {"decision": "reject", "reason": "not now"}, "rejected")]:
                run = await client.call_tool("start_agent_team_run", start)
                assert run.structured_content["status"] == "awaiting_approval", run
                person.action, person.content, person.asked = action, content, []
                decided = await client.call_tool("decide_agent_approval", {
                    "ai_lenser_id": agent_id, "team_run_id": run.structured_content["team_run_id"], "decision": "approve",
                })
                assert len(person.asked) == 1 and "@asker's team run" in person.asked[0].message
                if status is None:
                    assert decided.structured_content["code"] == "DECLINED", decided
                else:
                    assert decided.structured_content["status"] == status, decided

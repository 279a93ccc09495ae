"""The official Python MCP SDK (PyPI `mcp`) against the built lf-mcp-http binary.

Run by .ci/run after `cargo build -p lf-mcp-http`; LF_HTTP_BIN names the
binary. The server runs as a user would run it: an account made with
`admin create-lenser`, a token from `admin issue-token`, then `serve`. The SDK
connects with the bearer token in every mode it speaks, and completes the
OAuth 2.1 flow with its own OAuthClientProvider (the "browser" that signs in
and consents is scripted with plain HTTP here; tests/browser does it in
Chromium).
"""

import html
import json
import os
import re
import signal
import socket
import subprocess
import tempfile
import time
from urllib.parse import parse_qs, urlparse

import httpx2
import pytest
from mcp.client.auth import OAuthClientProvider
from mcp.client.client import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientMetadata

BIN = os.environ.get("LF_HTTP_BIN")
PASSWORD = "correct horse battery staple"
BODY = (
    "You are a senior [[Language]] engineer. Review the following code for bugs, "
    "security issues, and performance problems.\n\nCode:\n[[Code]]"
)
MODES = ["legacy", "2026-07-28", "auto"]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server():
    assert BIN, "set LF_HTTP_BIN to the built lf-mcp-http binary"
    tmp = tempfile.mkdtemp()
    env = {
        **os.environ,
        "LENSERFIGHT_DATABASE_URL": f"sqlite:{tmp}/lenserfight.db",
        "LENSERFIGHT_LOG": "warn",
    }
    subprocess.run(
        [BIN, "admin", "create-lenser", "--handle", "alice"],
        input=PASSWORD + "\n", env=env, check=True, text=True, capture_output=True,
    )
    issued = subprocess.run(
        [BIN, "admin", "issue-token", "--handle", "alice"],
        env=env, check=True, text=True, capture_output=True,
    )
    token = issued.stdout.strip()
    assert re.fullmatch(r"lf_mcp_[0-9a-f]{64}", token)
    read = subprocess.run(
        [BIN, "admin", "issue-token", "--handle", "alice", "--scope", "read"],
        env=env, check=True, text=True, capture_output=True,
    ).stdout.strip()
    listed = subprocess.run([BIN, "admin", "list-tokens"], env=env, check=True, text=True, capture_output=True)
    assert token not in listed.stdout and read not in listed.stdout, "list-tokens never prints a token"
    proc, base = serve(env)
    yield {"base": base, "token": token, "read": read, "env": env}
    stop(proc)


def serve(env, *flags):
    """Starts `lf-mcp-http serve` with `flags` on a free loopback port; its process and base URL."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    proc = subprocess.Popen([BIN, "serve", "--bind", f"127.0.0.1:{port}", *flags], env=env)
    deadline = time.time() + 30
    while True:
        try:
            if httpx2.get(base + "/health").status_code == 200:
                return proc, base
        except httpx2.HTTPError:
            pass
        assert proc.poll() is None, "the server exited"
        assert time.time() < deadline, "the server did not answer /health"
        time.sleep(0.1)


def stop(proc):
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=15) == 0, "SIGTERM stops the server cleanly"


@pytest.fixture(scope="module")
def connector(server):
    """A second server on the same database, as one would serve a ChatGPT connector: the Search tools only."""
    proc, base = serve(server["env"], "--toolsets", "search")
    yield {**server, "base": base}
    stop(proc)


def bearer_client(server, token, mode):
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"})
    return http, Client(streamable_http_client(server["base"] + "/mcp", http_client=http), mode=mode)


@pytest.mark.anyio
@pytest.mark.parametrize("mode", MODES)
async def test_bearer_token_in_every_mode(server, mode):
    http, client = bearer_client(server, server["token"], mode)
    async with http, client:
        expected = "2025-11-25" if mode == "legacy" else "2026-07-28"
        assert client.session.protocol_version == expected
        tools = await client.list_tools()
        names = {t.name for t in tools.tools}
        assert {"create_lens", "run_lens", "search_lenses"} <= names
        created = await client.call_tool("create_lens", {"title": f"Reviewer {mode}", "template_body": BODY})
        assert not created.is_error, created
        lens_id = created.structured_content["id"]
        run = await client.call_tool("run_lens", {"lens_id": lens_id, "param_values": {"Language": "Rust", "Code": "fn main() {}"}})
        assert not run.is_error
        assert "senior Rust engineer" in run.structured_content["resolved_prompt"]
        missing = await client.call_tool("run_lens", {"lens_id": lens_id, "param_values": {"Language": "Rust"}})
        assert missing.is_error
        assert missing.structured_content["code"] == "MISSING_PARAMS"


@pytest.mark.anyio
@pytest.mark.parametrize("mode", MODES)
async def test_a_chatgpt_connector_with_a_read_token(server, connector, mode):
    writer_http, writer = bearer_client(server, server["token"], "legacy")
    async with writer_http, writer:
        lens = await writer.call_tool("create_lens", {"title": f"Connector {mode}", "template_body": BODY})
        assert not lens.is_error, lens
        lens_id = lens.structured_content["id"]

    http, client = bearer_client(connector, connector["read"], mode)
    async with http, client:
        tools = await client.list_tools()
        assert [t.name for t in tools.tools] == ["search", "fetch"]
        assert [list(t.input_schema["properties"]) for t in tools.tools] == [["query"], ["id"]]
        found = await client.call_tool("search", {"query": f"connector {mode}"})
        assert not found.is_error, found
        hit = {"id": f"lens:{lens_id}", "title": f"Connector {mode}", "url": f"lenserfight://lenses/{lens_id}"}
        assert found.structured_content["results"] == [hit]
        # The text block is the same JSON, for clients that read only text.
        assert found.content[0].text == json.dumps(found.structured_content, separators=(",", ":"))
        fetched = await client.call_tool("fetch", {"id": hit["id"]})
        assert not fetched.is_error, fetched
        assert fetched.structured_content["url"] == hit["url"]
        assert "senior [[Language]] engineer" in fetched.structured_content["text"]

        uris = [r.uri for r in (await client.list_resources()).resources]
        assert hit["url"] in uris
        read = await client.read_resource(hit["url"])
        assert read.contents[0].text == fetched.structured_content["text"]


@pytest.mark.anyio
async def test_bad_token_is_refused(server):
    http, client = bearer_client(server, "lf_mcp_" + "0" * 64, "legacy")
    async with http:
        with pytest.raises(Exception):
            async with client:
                await client.list_tools()


class MemoryStorage:
    def __init__(self):
        self.tokens = None
        self.client_info = None

    async def get_tokens(self):
        return self.tokens

    async def set_tokens(self, tokens):
        self.tokens = tokens

    async def get_client_info(self):
        return self.client_info

    async def set_client_info(self, client_info):
        self.client_info = client_info


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_oauth_client_provider_completes_the_flow(server, mode):
    base = server["base"]
    captured = {}

    async def redirect_handler(url):
        # The user's browser: open the page, sign in, consent.
        async with httpx2.AsyncClient() as browser:
            page = await browser.get(url)
            assert page.status_code == 200, page.text
            fields = {k: html.unescape(v) for k, v in re.findall(r'<input type="hidden" name="([a-z_]+)" value="([^"]*)">', page.text)}
            fields.update(handle="alice", password=PASSWORD, decision="approve", grant_write="1")
            answer = await browser.post(base + "/oauth/authorize", data=fields)
            assert answer.status_code == 303, answer.text
            query = parse_qs(urlparse(answer.headers["location"]).query)
            captured["code"] = query["code"][0]
            captured["state"] = query["state"][0]
            captured["iss"] = query["iss"][0]

    async def callback_handler():
        # The issuer too (RFC 9207): the SDK checks it against the metadata's.
        return AuthorizationCodeResult(code=captured["code"], state=captured["state"], iss=captured["iss"])

    storage = MemoryStorage()
    provider = OAuthClientProvider(
        server_url=base + "/mcp",
        client_metadata=OAuthClientMetadata(
            client_name="pytest OAuth client",
            redirect_uris=["http://127.0.0.1:7777/callback"],
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
            token_endpoint_auth_method="none",
        ),
        storage=storage,
        redirect_handler=redirect_handler,
        callback_handler=callback_handler,
    )
    async with httpx2.AsyncClient(auth=provider) as http:
        async with Client(streamable_http_client(base + "/mcp", http_client=http), mode=mode) as client:
            tools = await client.list_tools()
            assert any(t.name == "get_lens" for t in tools.tools)
            found = await client.call_tool("list_lenses", {})
            assert not found.is_error
    assert storage.tokens is not None and storage.tokens.access_token.startswith("lf_mcp_")
    assert storage.tokens.refresh_token.startswith("lf_rt_")

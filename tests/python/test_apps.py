"""MCP Apps (the io.modelcontextprotocol/ui extension) with the official Python SDK over the built
lf-mcp-stdio binary: a client declaring the extension finds get_leaderboard, get_battle and
get_experiment naming their ui:// views and reads each view as self-contained HTML whose strict
Content-Security-Policy allows exactly its inline script and style; a client declaring nothing
finds no _meta and the same results.

LF_STDIO_BIN names the binary, as for the other SDK tests.
"""

import base64
import hashlib
import re
import tempfile

import pytest
from mcp.client.client import Client
from mcp.client.extension import advertise

from test_stdio_sdk import binary, params  # noqa: F401 (a fixture)

UI = "io.modelcontextprotocol/ui"
MIME = "text/html;profile=mcp-app"
VIEWS = {
    "get_leaderboard": "ui://lenserfight/leaderboard.html",
    "get_battle": "ui://lenserfight/battle.html",
    "get_experiment": "ui://lenserfight/experiment.html",
}
MODES = ["legacy", "2026-07-28"]


def with_eval(binary, db_dir):
    p = params(binary, db_dir)
    p.env["LENSERFIGHT_TOOLSETS"] = "default,eval"
    return p


def host(binary, db_dir, mode):
    return Client(with_eval(binary, db_dir), mode=mode, extensions=[advertise(UI, {"mimeTypes": [MIME]})])


def sha256(text):
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


def views_of(tools):
    return {t.name: (t.meta or {}).get("ui", {}).get("resourceUri") for t in tools if t.meta}


@pytest.mark.anyio
@pytest.mark.parametrize("mode", MODES)
async def test_a_host_of_apps_finds_and_reads_the_views(binary, mode):  # noqa: F811
    with tempfile.TemporaryDirectory() as db_dir:
        async with host(binary, db_dir, mode) as client:
            tools = (await client.list_tools()).tools
            assert views_of(tools) == VIEWS
            for uri in VIEWS.values():
                read = await client.read_resource(uri)
                assert len(read.contents) == 1
                c = read.contents[0]
                assert (str(c.uri), c.mime_type) == (uri, MIME)
                assert c.meta == {"ui": {"csp": {}, "prefersBorder": True}}
                html = c.text
                assert html.startswith("<!doctype html>")
                # Self-contained: nothing to load from anywhere.
                assert not re.search(r"\s(src|href)=", html)
                assert "http://" not in html.replace('"http://www.w3.org/2000/svg"', "")
                assert "https://" not in html
                # The policy allows exactly the page's one script and one stylesheet.
                csp = re.search(r'<meta http-equiv="Content-Security-Policy" content="([^"]+)">', html).group(1)
                (script,) = re.findall(r"<script>(.*?)</script>", html, re.S)
                (style,) = re.findall(r"<style>(.*?)</style>", html, re.S)
                assert csp == (
                    f"default-src 'none'; script-src {sha256(script)}; style-src {sha256(style)}; "
                    "img-src data:; base-uri 'none'; form-action 'none'"
                )
                # It draws the result the host posts, as text.
                assert "ui/initialize" in script and "ui/notifications/tool-result" in script
                assert "structuredContent" in script and "innerHTML" not in script
            # The results a view draws are the tools' own.
            made = await client.call_tool("create_battle", {"title": "Rivers", "task_prompt": "<b>Name</b> three."})
            got = await client.call_tool("get_battle", {"battle_id": made.structured_content["id"]})
            assert not got.is_error and got.structured_content["task_prompt"] == "<b>Name</b> three."


@pytest.mark.anyio
@pytest.mark.parametrize("mode", MODES)
async def test_a_client_without_the_extension_sees_no_views(binary, mode):  # noqa: F811
    with tempfile.TemporaryDirectory() as one, tempfile.TemporaryDirectory() as two:
        async with Client(with_eval(binary, one), mode=mode) as plain, host(binary, two, mode) as apps:
            bare = (await plain.list_tools()).tools
            assert all(t.meta is None for t in bare)
            assert {"get_leaderboard", "get_battle", "get_experiment"} <= {t.name for t in bare}
            dressed = {t.name: t for t in (await apps.list_tools()).tools}
            for t in bare:
                other = dressed[t.name].model_dump(exclude={"meta"})
                assert t.model_dump(exclude={"meta"}) == other, t.name
            board = await plain.call_tool("get_leaderboard", {})
            assert not board.is_error
            assert board.structured_content == (await apps.call_tool("get_leaderboard", {})).structured_content

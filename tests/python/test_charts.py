"""A battle's and an experiment's charts as PNG (and SVG) resources, read with the official Python SDK from
the built lf-mcp-http binary and decoded with the standard library alone: the signature, IHDR and every
chunk's CRC checked, the pixels inflated by zlib, and each contender's bar measured in pixels against its
share of the votes or its pass rate. Another lenser gets not-found, as for the battle or experiment itself.

LF_HTTP_BIN names the binary, as for the other SDK tests: lensers made with `admin create-lenser`, each
with a bearer token. The experiment's models answer from a fake OpenAI-compatible server on loopback.
"""

import base64
import json
import os
import re
import struct
import subprocess
import tempfile
import threading
import time
import uuid
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from mcp.shared.exceptions import MCPError

from test_http_sdk import PASSWORD, bearer_client, serve, stop

MODES = ["legacy", "2026-07-28"]
SIGNATURE = b"\x89PNG\r\n\x1a\n"
BAR = (0x3B, 0x6F, 0xD8)
TRACK = (0xEE, 0xEE, 0xEE)
INK = (0x11, 0x11, 0x11)


def decode(png):
    """The PNG's width, height and rows of RGB pixels; every chunk's CRC checked."""
    assert png[:8] == SIGNATURE
    chunks, at = [], 8
    while at < len(png):
        (length,) = struct.unpack(">I", png[at : at + 4])
        kind, data = png[at + 4 : at + 8], png[at + 8 : at + 8 + length]
        (crc,) = struct.unpack(">I", png[at + 8 + length : at + 12 + length])
        assert crc == zlib.crc32(kind + data), kind
        chunks.append((kind, data))
        at += 12 + length
    assert at == len(png)
    kinds = [k for k, _ in chunks]
    assert kinds[0] == b"IHDR" and kinds[-1] == b"IEND" and b"PLTE" in kinds
    width, height, depth, colour, compression, filtering, interlace = struct.unpack(">IIBBBBB", chunks[0][1])
    assert (depth, colour, compression, filtering, interlace) == (8, 3, 0, 0, 0), "8-bit indexed colour"
    plte = dict(chunks)[b"PLTE"]
    palette = [tuple(plte[i : i + 3]) for i in range(0, len(plte), 3)]
    raw = zlib.decompress(b"".join(d for k, d in chunks if k == b"IDAT"))
    assert len(raw) == height * (width + 1)
    rows = []
    for y in range(height):
        line = raw[y * (width + 1) : (y + 1) * (width + 1)]
        assert line[0] == 0, "rows unfiltered"
        rows.append([palette[i] for i in line[1:]])
    return width, height, rows


def bars(rows):
    """Each bar from the top: its length and its track's in pixels (on the bar's first row), where the
    track starts and the bar's first row."""
    found, inside = [], False
    for y, row in enumerate(rows):
        drawn = [x for x, c in enumerate(row) if c in (BAR, TRACK)]
        if drawn and not inside:
            start = drawn[0]
            length = next((i for i, c in enumerate(row[start:]) if c != BAR), len(row) - start)
            found.append((length, len(drawn), start, y))
        inside = bool(drawn)
    return found


def svg_bars(svg):
    """The SVG's bars' widths, top to bottom (a bar of 0 is not drawn)."""
    return [int(w) for w in re.findall(r'<rect x="\d+" y="\d+" width="(\d+)" height="18" fill="#3b6fd8"/>', svg)]


async def png_of(client, uri):
    read = await client.read_resource(uri)
    (c,) = read.contents
    assert (str(c.uri), c.mime_type) == (uri, "image/png")
    png = base64.b64decode(c.blob)
    assert len(png) < 100_000
    return png


async def not_found(client, uri, mode):
    with pytest.raises(MCPError) as e:
        await client.read_resource(uri)
    assert e.value.code == (-32002 if mode == "legacy" else -32602)
    assert e.value.data == {"uri": uri}


async def call(client, tool, args):
    got = await client.call_tool(tool, args)
    assert not got.is_error, got
    return got.structured_content


def drawn_as(png, shares, svg, intervals=None):
    """The PNG's bars are `shares` of their track, to a pixel, and the SVG's bars alike; each interval
    (if any) a whisker in ink across the bar's middle from its low end to its high end."""
    width, height, rows = decode(png)
    assert width == 640 and height == 40 + 28 * len(shares) + 16
    measured = bars(rows)
    assert len(measured) == len(shares)
    for (length, track, _, _), share in zip(measured, shares):
        assert track == 240
        assert abs(length - share * track) <= 1, (length, share)
    assert svg_bars(svg) == [length for length, *_ in measured if length]
    for (_, track, start, y), (lo, hi) in zip(measured, intervals or []):
        ink = [x for x, c in enumerate(rows[y + 9]) if c == INK and x >= start]
        assert abs(ink[0] - start - lo * track) <= 1 and abs(ink[-1] - start - hi * track) <= 1, (ink, lo, hi)


class Models(BaseHTTPRequestHandler):
    """An OpenAI-compatible chat endpoint: `t-all` answers every question right, `t-half` the even ones,
    `t-none` none."""

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        n = int(re.search(r"Question (\d+)", body["messages"][-1]["content"]).group(1))
        right = {"t-all": True, "t-half": n % 2 == 0, "t-none": False}[body["model"]]
        text = f"Answer {n}" if right else "I do not know."
        out = json.dumps({
            "id": "chatcmpl-fake", "object": "chat.completion", "model": body["model"],
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
        }).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    def log_message(self, *args):
        pass


# Alice makes the battle and the experiment; Frank, Gina and Hank answer; Bob, Carol, Dan and Erin vote.
LENSERS = ["alice", "bob", "carol", "dan", "erin", "frank", "gina", "hank", "mallory"]


@pytest.fixture(scope="module")
def world():
    """lf-mcp-http serving every toolset on a new database, its models the fake ones; a token per lenser."""
    from test_http_sdk import BIN

    assert BIN, "set LF_HTTP_BIN to the built lf-mcp-http binary"
    models = ThreadingHTTPServer(("127.0.0.1", 0), Models)
    threading.Thread(target=models.serve_forever, daemon=True).start()
    tmp = tempfile.mkdtemp()
    os.makedirs(f"{tmp}/config/lenserfight")
    with open(f"{tmp}/config/lenserfight/config.toml", "w") as f:
        base_url = f"http://127.0.0.1:{models.server_address[1]}/v1"
        f.write(f'[[models]]\nname = "fake"\nbase_url = "{base_url}"\nconcurrency = 4\ntimeout = 10\n')
    env = {
        **os.environ,
        "LENSERFIGHT_DATABASE_URL": f"sqlite:{tmp}/lenserfight.db",
        "LENSERFIGHT_LOG": "warn",
        "LENSERFIGHT_TOOLSETS": "all",
        "LENSERFIGHT_EGRESS_ALLOW": "127.0.0.1",
        "XDG_CONFIG_HOME": f"{tmp}/config",
    }
    env.pop("LENSERFIGHT_CONFIG", None)

    def admin(*args, **kw):
        return subprocess.run([BIN, "admin", *args], env=env, check=True, text=True, capture_output=True, **kw)

    tokens, ids = {}, {}
    for handle in LENSERS:
        made = admin("create-lenser", "--handle", handle, input=PASSWORD + "\n").stdout
        ids[handle] = re.search(r"with id (\S+)", made).group(1)
        tokens[handle] = admin("issue-token", "--handle", handle).stdout.strip()
    proc, base = serve(env)
    yield {"base": base, "tokens": tokens, "ids": ids}
    stop(proc)
    models.shutdown()


def as_lenser(world, handle, mode):
    return bearer_client(world, world["tokens"][handle], mode)


@pytest.mark.anyio
@pytest.mark.parametrize("mode", MODES)
async def test_a_battles_chart_draws_its_votes(world, mode):
    http, owner = as_lenser(world, "alice", mode)
    async with http, owner:
        templates = (await owner.list_resource_templates()).resource_templates
        charts = {t.uri_template: t.mime_type for t in templates if "/chart." in t.uri_template}
        assert charts == {
            "lenserfight://battles/{battle_id}/chart.svg": "image/svg+xml",
            "lenserfight://experiments/{experiment_id}/chart.svg": "image/svg+xml",
            "lenserfight://battles/{battle_id}/chart.png": "image/png",
            "lenserfight://experiments/{experiment_id}/chart.png": "image/png",
        }
        battle = (await call(owner, "create_battle", {
            "title": "Longest river", "task_prompt": "Name the longest river.",
            "battle_type": "human_vs_human_open_votes", "max_contenders": 3,
        }))["id"]
        draft = (await call(owner, "create_battle", {"title": "Draft", "task_prompt": "Later."}))["id"]
        names = ["Nile", "Amazon", "漢字 Yangtze, " + "a very long name " * 4]
        contenders = []
        for name, who in zip(names, ["frank", "gina", "hank"]):
            added = await call(owner, "add_battle_contender", {
                "battle_id": battle, "display_name": name, "contender_type": "human",
                "contender_ref_id": world["ids"][who],
            })
            contenders.append((added["contender_id"], who))
        for status in ["open", "executing"]:
            await call(owner, "set_battle_status", {"battle_id": battle, "status": status})
        for contender, who in contenders:
            wh, wc = as_lenser(world, who, mode)
            async with wh, wc:
                await call(wc, "submit_battle_run", {
                    "battle_id": battle, "contender_id": contender, "content_text": "The Nile.",
                })

        # Four other people vote: three for the Nile, one for the Amazon.
        for voter, choice in [("bob", 0), ("carol", 0), ("dan", 1), ("erin", 0)]:
            vh, vc = as_lenser(world, voter, mode)
            async with vh, vc:
                await call(vc, "cast_battle_vote", {"battle_id": battle, "contender_id": contenders[choice][0]})

        uri = f"lenserfight://battles/{battle}/chart.png"
        png = await png_of(owner, uri)
        svg = (await owner.read_resource(uri.replace(".png", ".svg"))).contents[0].text
        drawn_as(png, [3 / 4, 1 / 4, 0], svg)
        assert ">A: Nile</text>" in svg and ">3 votes</text>" in svg
        assert len(await png_of(owner, f"lenserfight://battles/{draft}/chart.png")) > 0, "the owner reads a draft"

    mh, mallory = as_lenser(world, "mallory", mode)
    async with mh, mallory:
        for chart in ["chart.png", "chart.svg"]:
            await not_found(mallory, f"lenserfight://battles/{draft}/{chart}", mode)
            await not_found(mallory, f"lenserfight://battles/{uuid.uuid4()}/{chart}", mode)


@pytest.mark.anyio
@pytest.mark.parametrize("mode", MODES)
async def test_an_experiments_chart_draws_its_pass_rates(world, mode):
    http, owner = as_lenser(world, "alice", mode)
    async with http, owner:
        for m in ["t-all", "t-half", "t-none"]:
            await call(owner, "create_model_profile", {"name": f"{m}-{mode}", "endpoint": "fake", "model": m})
        cases = [{"prompt": f"Question {i}?", "expected": f"Answer {i}"} for i in range(1, 5)]
        data = (await call(owner, "create_dataset", {"name": f"qa {mode}", "cases": cases}))["dataset"]["dataset_id"]
        started = await call(owner, "run_experiment", {
            "dataset_id": data, "contenders": [f"{m}-{mode}" for m in ["t-all", "t-half", "t-none"]],
            "visibility": "private", "assertions": [{"type": "equals"}],
        })
        experiment = started["experiment_id"]
        # Until every cell has its result (a minute at most).
        deadline = time.monotonic() + 60
        while True:
            view = await call(owner, "get_experiment", {"experiment_id": experiment})
            if view["done"] == 12:
                break
            assert time.monotonic() < deadline, view
            time.sleep(0.1)
        rates = [c["pass_rate"] for c in view["contenders"]]
        assert rates == [1.0, 0.5, 0.0]
        intervals = [c["pass_rate_95"] for c in view["contenders"]]
        assert all(lo <= rate <= hi and lo < hi for rate, (lo, hi) in zip(rates, intervals))

        uri = f"lenserfight://experiments/{experiment}/chart.png"
        png = await png_of(owner, uri)
        svg = (await owner.read_resource(uri.replace(".png", ".svg"))).contents[0].text
        drawn_as(png, rates, svg, intervals)
        assert ">50% of 4 (score 0.50)</text>" in svg

    mh, mallory = as_lenser(world, "mallory", mode)
    async with mh, mallory:
        await not_found(mallory, uri, mode)
        await not_found(mallory, uri.replace(".png", ".svg"), mode)

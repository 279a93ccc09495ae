"use strict";
// A LenserFight view inside an MCP Apps host: it asks the host for the
// tool's result over postMessage (JSON-RPC, the MCP Apps protocol) and
// draws its structuredContent with DOM calls only. Text from the result
// becomes text nodes, never markup; nothing is fetched.
(function () {
  const app = document.getElementById("app");
  const view = app.dataset.view;
  const pending = new Map();
  let nextId = 1;
  const send = (m) => window.parent.postMessage(m, "*");
  const request = (method, params) => {
    const id = nextId++;
    send({ jsonrpc: "2.0", id, method, params });
    return new Promise((ok, bad) => pending.set(id, { ok, bad }));
  };
  const el = (tag, attrs, ...kids) => {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, String(v));
    for (const k of kids) if (k !== null && k !== undefined) e.append(typeof k === "object" ? k : String(k));
    return e;
  };
  const svg = (tag, attrs) => {
    const e = document.createElementNS("http://www.w3.org/2000/svg", tag);
    for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
    return e;
  };
  const num = (x, d) => (typeof x === "number" ? x.toFixed(d) : "–");
  const pct = (x) => (typeof x === "number" ? (100 * x).toFixed(1) + "%" : "–");
  const row = (cells, head) =>
    el("tr", null, ...cells.map(([v, n]) => el(head ? "th" : "td", n ? { class: "n" } : null, v)));
  const table = (head, rows) =>
    el("table", null, el("thead", null, row(head, true)), el("tbody", null, ...rows.map((r) => row(r))));
  // A point and its interval on [lo, hi], 160 px wide.
  const interval = (value, low, high, lo, hi) => {
    const x = (v) => 4 + (152 * (v - lo)) / (hi - lo || 1);
    const s = svg("svg", { class: "iv", width: 160, height: 12, viewBox: "0 0 160 12", "aria-hidden": "true" });
    if (typeof low === "number" && typeof high === "number")
      s.append(svg("line", { x1: x(low), x2: x(high), y1: 6, y2: 6 }));
    if (typeof value === "number") s.append(svg("circle", { cx: x(value), cy: 6, r: 3 }));
    return s;
  };

  function leaderboard(s) {
    const items = s.items || [];
    const values = items.flatMap((r) => [r.rating, r.lower, r.upper]).filter((v) => typeof v === "number");
    const lo = Math.min(...values), hi = Math.max(...values);
    app.append(el("h1", null, "Leaderboard"));
    app.append(el("p", { class: "muted" }, `${s.battles_counted ?? 0} battles, ${items.length} rated`));
    app.append(table(
      [["#", 1], ["Contender"], ["Rating", 1], ["95% interval"], ["W-L-T", 1], ["Battles", 1]],
      items.map((r) => [[r.rank, 1], [r.display_name], [num(r.rating, 0), 1],
        [interval(r.rating, r.lower, r.upper, lo, hi)], [`${r.wins}-${r.losses}-${r.ties}`, 1], [r.battles, 1]]),
    ));
  }

  function battle(s) {
    const voting = s.status === "voting";
    const name = new Map((s.contenders || []).map((c) => [c.id, c.display_name]));
    app.append(el("h1", null, s.title), el("p", { class: "muted" }, `${s.status}, judged by ${s.judging_mode}`));
    app.append(el("h2", null, "Task"), el("div", { class: "task" }, s.task_prompt));
    const status = el("p", { role: "status" });
    const answers = el("div", { class: "answers" });
    for (const sub of s.submissions || []) {
      // While voting, answers are labelled by position only.
      const who = voting ? `Answer ${sub.slot}` : `${sub.slot}: ${name.get(sub.contender_id) ?? "?"}`;
      const box = el("div", { class: "answer" }, el("h2", null, who), el("pre", null, sub.content_text));
      if (voting) {
        const b = el("button", { type: "button" }, `Vote ${sub.slot}`);
        b.addEventListener("click", () => vote(s.id, { contender_id: sub.contender_id }, status));
        box.append(b);
      }
      answers.append(box);
    }
    app.append(el("h2", null, "Answers"), answers);
    if (voting) {
      const tie = el("button", { type: "button" }, "Tie");
      tie.addEventListener("click", () => vote(s.id, { tie: true }, status));
      app.append(tie, status);
    }
    if ((s.standings || []).length)
      app.append(el("h2", null, "Standings"), table(
        [["Place", 1], ["Contender"], ["Score", 1], ["Votes", 1]],
        s.standings.map((t) => [[t.position, 1], [`${t.slot}: ${name.get(t.contender_id) ?? "?"}`],
          [num(t.score, 2), 1], [t.votes, 1]]),
      ));
    else if ((s.vote_aggregates || []).length && !voting)
      app.append(el("h2", null, "Votes"), table(
        [["Contender"], ["Votes", 1]],
        s.vote_aggregates.map((v) => [[`${v.slot}: ${name.get(v.contender_id) ?? "?"}`], [v.vote_count, 1]]),
      ));
  }

  function vote(battleId, choice, status) {
    status.textContent = "Voting…";
    request("tools/call", { name: "cast_battle_vote", arguments: { battle_id: battleId, ...choice } }).then(
      (r) => {
        const s = (r && r.structuredContent) || {};
        status.textContent = r && r.isError ? `Not counted: ${s.message ?? "refused"}` : "Your vote is counted.";
      },
      (e) => { status.textContent = `Not counted: ${(e && e.message) || "the host refused"}`; },
    );
  }

  function experiment(s) {
    const e = s.experiment || {};
    app.append(el("h1", null, "Experiment"));
    app.append(el("p", { class: "muted" }, `${e.status}: ${s.done ?? 0} of ${e.cells ?? 0} cells, ${s.spent_credits ?? 0} credits`));
    app.append(table(
      [["Contender"], ["Pass rate", 1], ["95% interval"], ["Score", 1], ["Errors", 1], ["p50 ms", 1], ["p95 ms", 1], ["Cost $", 1]],
      (s.contenders || []).map((c) => [[c.contender], [pct(c.pass_rate), 1],
        [interval(c.pass_rate, (c.pass_rate_95 || [])[0], (c.pass_rate_95 || [])[1], 0, 1)],
        [num(c.mean_score, 2), 1], [c.errors, 1], [c.latency_p50_ms ?? "–", 1], [c.latency_p95_ms ?? "–", 1],
        [num(c.cost_usd, 4), 1]]),
    ));
  }

  const views = { leaderboard, battle, experiment };
  function show(result) {
    app.replaceChildren();
    const s = result && result.structuredContent;
    if (!s || result.isError) {
      app.append(el("p", { class: "error" }, (s && s.message) || "There is no result to show."));
    } else {
      views[view](s);
    }
  }

  // The content's size, whenever it changes (the host sizes its frame to it).
  let told = "";
  const sizes = new ResizeObserver(() => {
    const width = document.documentElement.scrollWidth;
    const height = Math.ceil(document.body.getBoundingClientRect().height);
    if (`${width}x${height}` === told) return;
    told = `${width}x${height}`;
    send({ jsonrpc: "2.0", method: "ui/notifications/size-changed", params: { width, height } });
  });

  window.addEventListener("message", (ev) => {
    if (ev.source !== window.parent) return;
    const m = ev.data;
    if (!m || m.jsonrpc !== "2.0") return;
    if (m.method === undefined && pending.has(m.id)) {
      const p = pending.get(m.id);
      pending.delete(m.id);
      if (m.error) p.bad(m.error); else p.ok(m.result);
    } else if (m.method === "ui/notifications/tool-result") {
      show(m.params);
    } else if (m.method === "ui/notifications/tool-cancelled") {
      const why = m.params && m.params.reason;
      app.replaceChildren(el("p", { class: "error" }, why ? `Cancelled: ${why}` : "Cancelled."));
    } else if (m.method !== undefined && m.id !== undefined) {
      // The host's requests: ping and teardown need nothing of the view.
      const known = m.method === "ping" || m.method === "ui/resource-teardown";
      send(known ? { jsonrpc: "2.0", id: m.id, result: {} }
        : { jsonrpc: "2.0", id: m.id, error: { code: -32601, message: `Method not found: ${m.method}` } });
    }
  });
  request("ui/initialize", {
    protocolVersion: "2026-01-26",
    appInfo: { name: `lenserfight-${view}`, version: "1" },
    appCapabilities: { availableDisplayModes: ["inline"] },
  }).then(() => {
    send({ jsonrpc: "2.0", method: "ui/notifications/initialized", params: {} });
    sizes.observe(document.body);
  }, () => {});
})();

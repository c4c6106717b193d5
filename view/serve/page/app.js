// ralph serve's page: a live view of a workspace's loop or autopilot over
// ralph serve's HTTP API. It reads two Server-Sent Events streams with
// fetch (an EventSource cannot send the bearer token): the dashboard
// (/api/dashboard/stream), which says what runs, and the selected log's
// events (/api/events/stream), resumed after a dropped connection from the
// last offset seen, so nothing is missed or shown twice. Plain JavaScript,
// no build step, nothing fetched from anywhere but the server.
"use strict";

(() => {
  const TOKEN_KEY = "ralph.serve.token";
  const MAX_EVENTS = 1000;
  const SVG = "http://www.w3.org/2000/svg";
  const $ = (sel) => document.querySelector(sel);

  // ---- the token ---------------------------------------------------------

  // takeToken keeps the token the server printed (#token=… in the URL, or
  // ?token=… on a first load from another machine) for this tab, and takes
  // it out of the address bar so it is not bookmarked or shared by accident.
  function takeToken() {
    const hash = new URLSearchParams(location.hash.slice(1));
    const query = new URLSearchParams(location.search);
    const given = hash.get("token") || query.get("token");
    if (given) {
      sessionStorage.setItem(TOKEN_KEY, given);
      query.delete("token");
      const search = query.toString();
      history.replaceState(null, "", location.pathname + (search ? "?" + search : ""));
    }
    return sessionStorage.getItem(TOKEN_KEY) || "";
  }
  const token = takeToken();

  function headers(extra) {
    const h = Object.assign({}, extra);
    if (token) h.Authorization = "Bearer " + token;
    return h;
  }

  // ---- requests ------------------------------------------------------------

  // APIError is the server's {"error", "hint"} answer to a request.
  class APIError extends Error {
    constructor(status, message, hint) {
      super(message);
      this.status = status;
      this.hint = hint || "";
    }
  }

  async function readJSON(res) {
    const text = await res.text();
    let data = null;
    try {
      data = text ? JSON.parse(text) : null;
    } catch (_) {
      data = null;
    }
    if (!res.ok) {
      const message = (data && data.error) || `${res.status} ${res.statusText}`.trim();
      throw new APIError(res.status, message, data && data.hint);
    }
    return data;
  }

  async function request(method, path, body) {
    const init = { method, headers: headers(body === undefined ? {} : { "Content-Type": "application/json" }), cache: "no-store" };
    if (body !== undefined) init.body = JSON.stringify(body);
    return readJSON(await fetch(path, init));
  }

  function query(params) {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(params)) if (v !== "" && v !== undefined && v !== null && v !== false) q.set(k, String(v));
    const s = q.toString();
    return s ? "?" + s : "";
  }

  // ---- Server-Sent Events over fetch ------------------------------------

  // readSSE calls onEvent with each event ({event, data, id}) of an
  // event-stream body until it ends.
  async function readSSE(body, onEvent) {
    const reader = body.pipeThrough(new TextDecoderStream()).getReader();
    let buf = "";
    let ev = { event: "message", data: [], id: undefined };
    const line = (l) => {
      if (l === "") {
        if (ev.data.length || ev.id !== undefined) onEvent({ event: ev.event, data: ev.data.join("\n"), id: ev.id });
        ev = { event: "message", data: [], id: undefined };
        return;
      }
      if (l[0] === ":") return; // a comment: the server's keepalive
      const colon = l.indexOf(":");
      const field = colon < 0 ? l : l.slice(0, colon);
      let value = colon < 0 ? "" : l.slice(colon + 1);
      if (value[0] === " ") value = value.slice(1);
      if (field === "data") ev.data.push(value);
      else if (field === "event") ev.event = value;
      else if (field === "id") ev.id = value;
    };
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buf += value;
      let i;
      while ((i = buf.search(/\r\n|\r|\n/)) >= 0) {
        if (buf[i] === "\r" && i === buf.length - 1) break; // maybe half of \r\n
        line(buf.slice(0, i));
        buf = buf.slice(i + (buf.startsWith("\r\n", i) ? 2 : 1));
      }
    }
  }

  // Stream follows an event stream, connecting again after it drops (with
  // Last-Event-ID = the last id seen, so the server resumes after it)
  // until it is closed.
  class Stream {
    constructor(path, onEvent, hooks) {
      this.path = path;
      this.onEvent = onEvent;
      this.hooks = hooks || {};
      this.lastId = "";
      this.closed = false;
      this.ctrl = null;
      this.run();
    }

    close() {
      this.closed = true;
      if (this.ctrl) this.ctrl.abort();
    }

    async run() {
      let delay = 500;
      while (!this.closed) {
        this.ctrl = new AbortController();
        let got = false;
        try {
          const h = headers({ Accept: "text/event-stream" });
          if (this.lastId) h["Last-Event-ID"] = this.lastId;
          const res = await fetch(this.path, { headers: h, signal: this.ctrl.signal, cache: "no-store" });
          if (!res.ok) await readJSON(res); // throws the server's error
          if (this.hooks.open) this.hooks.open();
          await readSSE(res.body, (ev) => {
            if (this.closed) return;
            got = true;
            if (ev.id) this.lastId = ev.id;
            this.onEvent(ev);
          });
        } catch (err) {
          if (this.closed) return;
          if (this.hooks.error && this.hooks.error(err) === false) return;
        }
        if (this.closed) return;
        if (this.hooks.drop) this.hooks.drop();
        delay = got ? 500 : Math.min(delay * 2, 10000);
        await new Promise((r) => setTimeout(r, delay));
      }
    }
  }

  // ---- formatting ----------------------------------------------------------

  function tokensOf(u) {
    if (!u) return 0;
    return (u.input_tokens || 0) + (u.output_tokens || 0);
  }
  function fmtCount(n) {
    if (n >= 1e6) return (n / 1e6).toFixed(n >= 1e7 ? 0 : 1) + "M";
    if (n >= 1e4) return Math.round(n / 1e3) + "k";
    return String(n);
  }
  function fmtTokens(u) {
    if (!u) return "–";
    const s = `${fmtCount(tokensOf(u))}`;
    const cache = (u.cache_read_tokens || 0) + (u.cache_write_tokens || 0);
    return cache ? `${s} (+${fmtCount(cache)} cache)` : s;
  }
  // Costs are shown as ralph words them (cost_text, run_cost_text): the
  // page formats none itself, so an unknown cost is never a number here.
  function fmtDuration(ms) {
    if (ms == null || ms < 0) return "–";
    const s = Math.floor(ms / 1000);
    if (s < 60) return ms < 10000 ? (ms / 1000).toFixed(1) + "s" : s + "s";
    const m = Math.floor(s / 60);
    if (m < 60) return `${m}m${String(s % 60).padStart(2, "0")}s`;
    return `${Math.floor(m / 60)}h${String(m % 60).padStart(2, "0")}m`;
  }
  function fmtTime(ts) {
    const d = new Date(ts);
    return isNaN(d) ? "" : d.toLocaleTimeString([], { hour12: false });
  }
  function isZeroTime(ts) {
    return !ts || ts.startsWith("0001-01-01");
  }

  function el(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === undefined || v === null || v === false) continue;
      if (k === "class") e.className = v;
      else if (k === "text") e.textContent = v;
      else if (k.startsWith("data-") || k === "title" || k === "type" || k.startsWith("aria-")) e.setAttribute(k, v);
      else e[k] = v;
    }
    for (const c of children) if (c != null) e.append(c);
    return e;
  }
  function svg(tag, attrs, text) {
    const e = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
    if (text != null) e.textContent = text;
    return e;
  }
  function setText(sel, text) {
    const e = $(sel);
    if (e.textContent !== text) e.textContent = text;
  }

  // ---- the status line -----------------------------------------------------

  function setStatus(message, kind, hint) {
    const s = $("#status");
    delete s.dataset.lost;
    delete s.dataset.idle;
    s.dataset.state = kind || "info";
    s.replaceChildren(document.createTextNode(message || ""));
    if (hint) s.append(el("span", { class: "hint", text: "hint: " + hint }));
  }
  function showError(err) {
    if (err instanceof APIError) setStatus(err.message, "error", err.hint);
    else setStatus(String((err && err.message) || err), "error");
  }
  // showStreamError shows a stream's `error` event ({"error", "hint"}),
  // which the server sends before it ends a stream it cannot go on with.
  function showStreamError(ev) {
    if (ev.event !== "error") return false;
    try {
      const e = JSON.parse(ev.data);
      setStatus(e.error, "error", e.hint);
    } catch (_) {
      setStatus(ev.data, "error");
    }
    return true;
  }

  function setConn(text, state) {
    const c = $("#conn");
    c.textContent = text;
    c.dataset.state = state;
  }

  // ---- the page's state ----------------------------------------------------

  const state = {
    chosen: "", // the task a person picked, "" for the server's choice
    dash: null, // the last api.Dashboard
    dashStream: null,
    eventsStream: null,
    eventsKey: "",
    itersKey: "",
    itersBusy: false,
    itersAgain: false,
    graphKey: "",
    questionId: "",
    filters: { topic: "", hat: "", log: "loop" },
    its: [], // the selected loop's iterations, as the chart shows them
  };

  // task is the task whose loop the page shows, "" for the workspace's own.
  function task() {
    const d = state.dash;
    return d && d.kind === "autopilot" ? d.selected || "" : "";
  }

  // ---- the dashboard -------------------------------------------------------

  function connectDashboard() {
    if (state.dashStream) state.dashStream.close();
    const path = "/api/dashboard/stream" + query({ task: state.chosen });
    state.dashStream = new Stream(
      path,
      (ev) => {
        if (showStreamError(ev)) return;
        if (ev.event !== "dashboard") return;
        try {
          render(JSON.parse(ev.data));
        } catch (err) {
          showError(err);
        }
      },
      {
        open: () => {
          setConn("live", "live");
          // the connection is back: what said it was lost no longer holds
          if ($("#status").dataset.lost) setStatus("", "info");
        },
        drop: () => setConn("reconnecting", "reconnecting"),
        error: (err) => {
          setConn("reconnecting", "reconnecting");
          if (err instanceof APIError) showError(err);
          else {
            setStatus("lost the connection to ralph serve; trying again", "error", "is `ralph serve` still running?");
            $("#status").dataset.lost = "1";
          }
        },
      },
    );
  }

  function select(taskID) {
    if (taskID === state.chosen && state.dash && state.dash.selected === taskID) return;
    state.chosen = taskID;
    for (const li of document.querySelectorAll("#slots [data-task]")) li.classList.toggle("selected", li.dataset.task === taskID);
    connectDashboard();
  }

  function render(d) {
    state.dash = d;
    const kind = $("#kind");
    kind.dataset.kind = d.kind;
    kind.textContent = d.kind === "none" ? "nothing running" : d.kind;
    const status = $("#status");
    if (d.kind === "none" && status.dataset.state !== "error") {
      setStatus("Nothing runs in this workspace yet: start `ralph loop` or `ralph autopilot`.", "info");
      status.dataset.idle = "1";
    } else if (d.kind !== "none" && status.dataset.idle) setStatus("", "info");
    renderAutopilot(d);
    renderLoop(d);
    renderQuestion(d);
    renderControls(d);
    renderGraph(d);
    refreshIterationsIfChanged(d);
    followEventsOf(d);
  }

  function renderAutopilot(d) {
    const panel = $("#autopilot");
    const a = d.autopilot;
    panel.hidden = !a;
    if (!a) return;
    setText("#autopilot-run", a.run_id);
    const st = a.ended ? "ended" : a.paused ? "paused" : a.running ? "running" : "not running";
    const badge = $("#autopilot-state");
    badge.textContent = st;
    badge.dataset.state = st;
    panel.dataset.paused = String(!!a.paused);
    panel.dataset.running = String(!!a.running);
    const counts = [
      ["parallel", a.parallel],
      ["started", a.started],
      ["completed", a.completed],
      ["failed", a.failed],
      ["merge queue", a.merge_queue],
    ];
    if (a.max_tasks) counts.push(["max tasks", a.max_tasks]);
    const reviews = a.reviews || [];
    if (reviews.length) counts.push(["in review", reviews.length]);
    $("#autopilot-counts").replaceChildren(
      ...counts.map(([k, v]) => el("div", { "data-count": k }, el("dt", { text: k }), el("dd", { text: String(v) }))),
    );
    renderSlots(d);
    renderReviews(reviews);
  }

  // renderReviews lists the tasks whose pull requests wait for a person,
  // each linked to its pull request when that is a web address.
  function renderReviews(reviews) {
    const list = $("#reviews");
    list.hidden = reviews.length === 0;
    list.replaceChildren(
      ...reviews.map((r) => {
        const label = `in review: ${r.task}${r.title ? " (" + r.title + ")" : ""}, ${r.name || "pull request #" + r.number}`;
        const link = /^https?:\/\//.test(r.url) ? el("a", { href: r.url, rel: "noopener", target: "_blank", text: r.url }) : r.url;
        return el("li", { "data-task": r.task }, label + " ", link);
      }),
    );
  }

  function renderSlots(d) {
    const list = $("#slots");
    const byTask = new Map();
    for (const li of list.children) byTask.set(li.dataset.task, li);
    const items = d.slots.map((s) => {
      let li = byTask.get(s.task);
      if (!li) {
        li = el("li", { "data-task": s.task }, el("button", { type: "button" }));
        li.firstChild.addEventListener("click", () => select(li.dataset.task));
      }
      li.dataset.slot = s.slot;
      li.dataset.hat = s.hat || "";
      li.dataset.iteration = String(s.iteration);
      li.classList.toggle("selected", s.task === d.selected);
      const b = li.firstChild;
      b.setAttribute("aria-pressed", String(s.task === d.selected));
      b.replaceChildren(
        el("span", { class: "slot-name", text: `slot ${s.slot}` }),
        el("strong", { class: "slot-task", text: s.task }),
        el("span", { class: "slot-title", text: s.title || "" }),
        el("span", { class: "slot-meta", text: [s.hat ? `hat ${s.hat}` : "", `iteration ${s.iteration}`, s.attempt > 1 ? `attempt ${s.attempt}` : "", s.worker ? `on ${s.worker}` : ""].filter(Boolean).join(" · ") }),
        el("span", { class: "slot-last mono", text: s.last_event || "" }),
      );
      return li;
    });
    list.replaceChildren(...items);
    $("#slots-empty").hidden = d.slots.length > 0;
  }

  function renderLoop(d) {
    const panel = $("#loop");
    const l = d.loop;
    panel.hidden = !l;
    for (const p of document.querySelectorAll(".loop-only")) p.hidden = !l;
    $(".columns").classList.toggle("no-loop", !l); // the events then take the width
    if (!l) return;
    panel.dataset.run = l.run_id;
    panel.dataset.phase = l.phase;
    panel.dataset.hat = l.hat || "";
    setText("#loop-task", d.kind === "autopilot" && d.selected ? d.selected : "");
    const st = l.ended ? "ended" : l.gone ? "stopped (killed)" : l.question ? "waiting for you" : l.running ? "running" : "not running";
    const badge = $("#loop-state");
    badge.textContent = st;
    badge.dataset.state = st;
    const chain = $("#loop-chain");
    chain.hidden = !l.chain;
    chain.textContent = l.chain ? l.chain.where : "";
    setText("#loop-objective", l.objective || "");
    setText("#run-id", l.run_id);
    setText("#iteration", l.max_iterations ? `${l.iteration} / ${l.max_iterations}` : String(l.iteration));
    setText("#hat", l.hat || "–");
    setText("#phase", l.paced_text || l.phase);
    setText("#backend", l.backend || "–");
    setText("#sandbox", l.sandbox || "–");
    setText("#tokens", fmtTokens(l.tokens));
    setText("#cost", l.cost_text);
    $("#by-backend-row").hidden = !l.by_backend_text;
    setText("#by-backend", l.by_backend_text || "");
    const ended = $("#loop-ended");
    ended.hidden = !l.ended;
    if (l.ended) ended.textContent = l.ended.message || `${l.ended.reason} (exit ${l.ended.exit_code})`;
    tickElapsed();
    renderActivity(l.activity || []);
  }

  // renderActivity lists the last things the loop's agents did: what they
  // said, the tools they used, their errors.
  function renderActivity(records) {
    const shown = records.filter((a) => a.kind !== "usage").slice(-8);
    $("#activity-panel").hidden = shown.length === 0;
    const line = (a) => {
      switch (a.kind) {
        case "tool":
          return `${a.tool || "tool"} ${a.tool_name || ""} ${a.path || a.command || ""}`.replace(/\s+/g, " ").trim();
        case "error":
          return "agent error: " + (a.text || "");
        case "rate_limit":
          return "rate limited: " + (a.text || "");
        default:
          return (a.text || "").trim().split("\n").filter((l) => l.trim())[0] || "";
      }
    };
    $("#activity").replaceChildren(
      ...shown.map((a) =>
        el("li", { "data-kind": a.kind, "data-iteration": String(a.iteration) },
          el("span", { class: "who", text: [a.hat, a.iteration ? `#${a.iteration}` : ""].filter(Boolean).join(" ") }),
          el("span", { class: "mono", text: line(a) })),
      ),
    );
  }

  function tickElapsed() {
    const l = state.dash && state.dash.loop;
    if (!l || isZeroTime(l.started)) {
      setText("#elapsed", "–");
      return;
    }
    let end = Date.now();
    if (!isZeroTime(l.stopped)) end = Date.parse(l.stopped);
    else if (l.ended) end = Date.parse(l.ended.at);
    else if (!l.running && !isZeroTime(l.phase_since)) end = Date.parse(l.phase_since);
    setText("#elapsed", fmtDuration(end - Date.parse(l.started)));
  }

  function renderQuestion(d) {
    const q = d.loop && d.loop.question;
    const panel = $("#question");
    panel.hidden = !q;
    if (!q) {
      state.questionId = "";
      delete panel.dataset.id;
      return;
    }
    panel.dataset.id = q.id;
    if (state.questionId === q.id) return; // keep what a person is typing
    state.questionId = q.id;
    $("#question-text").textContent = q.question;
    const meta = [`${q.id}`, q.hat ? `asked by ${q.hat}` : "", q.iteration ? `in iteration ${q.iteration}` : ""];
    if (!isZeroTime(q.deadline)) meta.push(`until ${fmtTime(q.deadline)}`);
    $("#question-meta").textContent = meta.filter(Boolean).join(" · ");
    $("#question-options").replaceChildren(
      ...(q.options || []).map((o) => {
        const b = el("button", { type: "button", class: "option", "data-option": o, text: o });
        b.addEventListener("click", () => {
          $("#answer-text").value = o;
          $("#answer-text").focus();
        });
        return b;
      }),
    );
    $("#answer-text").value = "";
  }

  function renderControls(d) {
    const a = d.autopilot;
    const apRunning = !!(a && a.running && !a.ended);
    $("#pause").hidden = !apRunning || a.paused;
    $("#resume").hidden = !apRunning || !a.paused;
    const loopRunning = !!(d.loop && d.loop.running && !d.loop.ended);
    $("#stop").disabled = !(apRunning || (d.kind === "loop" && loopRunning));
  }

  // ---- the hat graph -------------------------------------------------------

  function renderGraph(d) {
    const g = d.loop && d.loop.graph;
    const box = $("#graph");
    $("#graph-empty").hidden = !!g;
    box.style.display = g ? "" : "none";
    const key = g ? (d.loop.run_id || "") + JSON.stringify(g) : "";
    if (key !== state.graphKey) {
      state.graphKey = key;
      box.replaceChildren();
      if (g) drawGraph(box, g);
    }
    // the hat at work, or once the run has completed, its end
    const l = d.loop;
    const hat = !l ? "" : l.ended ? (l.ended.reason === "completed" ? "_done" : "") : l.hat || "";
    for (const n of box.querySelectorAll("[data-node]")) n.classList.toggle("current", n.dataset.node === hat);
    box.dataset.current = hat;
  }

  // drawGraph lays the hats out in columns by their distance from the
  // starting event, left to right, and draws each hand-off as an arrow
  // labelled with its topic.
  function drawGraph(box, g) {
    const rank = new Map();
    const start = g.nodes.find((n) => n.kind === "start");
    if (start) {
      rank.set(start.id, 0);
      const queue = [start.id];
      while (queue.length) {
        const id = queue.shift();
        for (const e of g.edges) {
          if (e.from !== id || rank.has(e.to) || e.kind === "blocked") continue;
          const to = g.nodes.find((n) => n.id === e.to);
          if (to && (to.kind === "done" || to.kind === "cancel")) continue;
          rank.set(e.to, rank.get(id) + 1);
          queue.push(e.to);
        }
      }
    }
    let max = 0;
    for (const r of rank.values()) max = Math.max(max, r);
    const rest = g.nodes.filter((n) => !rank.has(n.id) && n.kind !== "done" && n.kind !== "cancel");
    if (rest.length) max++;
    for (const n of rest) rank.set(n.id, max);
    for (const n of g.nodes) if (n.kind === "done" || n.kind === "cancel") rank.set(n.id, max + 1);

    const rowH = 64, nodeH = 30, pad = 16;
    const widthOf = (n) => Math.min(170, Math.max(70, 7 * (n.label || n.id).length + 22));
    // Each column is as wide as its widest node, and the gap after it
    // leaves room for the longest topic that leaves it.
    const colW = [], gap = [];
    for (let r = 0; r <= max + 1; r++) {
      colW[r] = 0;
      gap[r] = 56;
    }
    for (const n of g.nodes) colW[rank.get(n.id)] = Math.max(colW[rank.get(n.id)], widthOf(n));
    for (const e of g.edges) {
      const r = rank.get(e.from);
      if (r !== undefined && rank.get(e.to) > r) gap[r] = Math.max(gap[r], 6.2 * e.topic.length + 24);
    }
    const colX = [pad];
    for (let r = 1; r <= max + 1; r++) colX[r] = colX[r - 1] + colW[r - 1] + gap[r - 1];
    const rows = new Map();
    const pos = new Map();
    for (const n of g.nodes) {
      const r = rank.get(n.id);
      const row = rows.get(r) || 0;
      rows.set(r, row + 1);
      const w = widthOf(n);
      pos.set(n.id, { x: colX[r] + (colW[r] - w) / 2, y: pad + 24 + row * rowH, w });
    }
    let height = 0;
    for (const c of rows.values()) height = Math.max(height, c);
    const width = colX[max + 1] + colW[max + 1] + pad;
    const H = pad * 2 + 24 + height * rowH + 16;
    box.setAttribute("viewBox", `0 0 ${width} ${H}`);
    box.setAttribute("width", String(width));
    box.setAttribute("height", String(H));

    const defs = svg("defs");
    const marker = svg("marker", { id: "arrow", viewBox: "0 0 10 10", refX: "9", refY: "5", markerWidth: "7", markerHeight: "7", orient: "auto-start-reverse" });
    marker.append(svg("path", { d: "M0,0 L10,5 L0,10 z", class: "arrowhead" }));
    defs.append(marker);
    box.append(defs);

    const edges = svg("g", { class: "edges" });
    const loops = new Map();
    for (const e of g.edges) {
      const a = pos.get(e.from), b = pos.get(e.to);
      if (!a || !b) continue;
      let d, lx, ly;
      if (e.from === e.to) {
        const x = a.x + a.w / 2, y = a.y;
        d = `M${x - 12},${y} C${x - 30},${y - 34} ${x + 30},${y - 34} ${x + 12},${y}`;
        lx = x; ly = y - 30;
      } else if (rank.get(e.to) - rank.get(e.from) > 1) {
        // past the columns between: an arc over the nodes
        const k = (loops.get("over") || 0) + 1;
        loops.set("over", k);
        const x1 = a.x + a.w / 2, x2 = b.x + b.w / 2, y1 = a.y, y2 = b.y;
        const top = Math.min(y1, y2) - 10 - 8 * k;
        d = `M${x1},${y1} C${x1},${top} ${x2},${top} ${x2},${y2}`;
        lx = (x1 + x2) / 2; ly = top + 4;
      } else if (b.x > a.x) {
        const x1 = a.x + a.w, y1 = a.y + nodeH / 2, x2 = b.x, y2 = b.y + nodeH / 2;
        const mx = (x1 + x2) / 2;
        d = `M${x1},${y1} C${mx},${y1} ${mx},${y2} ${x2},${y2}`;
        lx = mx; ly = (y1 + y2) / 2 - 5;
      } else {
        // a hand-off back: an arc under the nodes
        const k = (loops.get(e.to) || 0) + 1;
        loops.set(e.to, k);
        const x1 = a.x + a.w / 2, x2 = b.x + b.w / 2, y1 = a.y + nodeH, y2 = b.y + nodeH;
        const dip = Math.max(y1, y2) + 14 + 12 * k;
        d = `M${x1},${y1} C${x1},${dip} ${x2},${dip} ${x2},${y2}`;
        lx = (x1 + x2) / 2; ly = dip - 2;
      }
      const path = svg("path", { d, class: "edge " + e.kind, "marker-end": "url(#arrow)", "data-edge": `${e.from}>${e.to}`, "data-topic": e.topic });
      path.append(svg("title", {}, `${e.from} → ${e.to}: ${e.topic} (${e.kind})`));
      edges.append(path);
      edges.append(svg("text", { x: lx, y: ly, class: "edge-label", "text-anchor": "middle" }, e.topic));
    }
    box.append(edges);

    const nodes = svg("g", { class: "nodes" });
    for (const n of g.nodes) {
      const p = pos.get(n.id);
      const node = svg("g", { "data-node": n.id, class: `node ${n.kind}${n.reachable ? "" : " unreachable"}`, transform: `translate(${p.x},${p.y})` });
      const rx = n.kind === "hat" || n.kind === "coordinator" ? 6 : nodeH / 2;
      node.append(svg("rect", { width: p.w, height: nodeH, rx, ry: rx }));
      node.append(svg("text", { x: p.w / 2, y: nodeH / 2 + 4, "text-anchor": "middle" }, n.label || n.id));
      node.append(svg("title", {}, `${n.id} (${n.kind}${n.reachable ? "" : ", unreachable"})`));
      nodes.append(node);
    }
    box.append(nodes);
  }

  // ---- iterations and the chart ----------------------------------------

  function refreshIterationsIfChanged(d) {
    const l = d.loop;
    const key = l ? [task(), l.run_id, l.iteration, l.phase, !!l.ended].join("|") : "";
    if (key === state.itersKey) return;
    const runChanged = state.itersKey.split("|").slice(0, 2).join("|") !== key.split("|").slice(0, 2).join("|");
    state.itersKey = key;
    if (runChanged) renderIterations([]);
    if (l) refreshIterations();
  }

  // refreshIterations reads the selected loop's finished iterations; one
  // read at a time, and one more when asked during it.
  async function refreshIterations() {
    if (state.itersBusy) {
      state.itersAgain = true;
      return;
    }
    state.itersBusy = true;
    try {
      do {
        state.itersAgain = false;
        const want = state.itersKey;
        const its = await request("GET", "/api/iterations" + query({ task: task() }));
        if (want === state.itersKey) renderIterations(its || []);
      } while (state.itersAgain);
    } catch (err) {
      if (!(err instanceof APIError && err.status === 404)) showError(err);
    } finally {
      state.itersBusy = false;
    }
  }

  function renderIterations(its) {
    const body = $("#iterations tbody");
    body.replaceChildren(
      ...its.map((it) =>
        el(
          "tr",
          { "data-iteration": String(it.iteration), "data-hat": it.hat, "data-outcome": it.outcome, title: it.message || "" },
          // A loop of this workspace links to its iteration's page (prompt,
          // output, diff); a task's loop runs in a worktree of its own.
          task()
            ? el("td", { class: "num", text: String(it.iteration) })
            : el("td", { class: "num" }, el("a", { href: `/iteration/${it.iteration}`, text: String(it.iteration) })),
          el("td", { text: it.hat }),
          el("td", {}, el("span", { class: "outcome", "data-outcome": it.outcome, text: it.outcome })),
          el("td", { class: "num", text: fmtDuration(it.duration_ms) }),
          el("td", { class: "num", text: fmtCount(tokensOf(it.tokens)) }),
          el("td", { class: "num", "data-cost-source": it.cost_source || "", text: it.cost_text }),
        ),
      ),
    );
    $("#iterations-empty").hidden = its.length > 0;
    drawChart(its);
  }

  // drawChart draws each iteration's tokens as a bar and the run's cost so
  // far as a line over them, each on its own scale.
  function drawChart(its) {
    state.its = its;
    const box = $("#chart");
    box.replaceChildren();
    const W = Math.max(240, Math.round(box.clientWidth || 480)), H = 120, left = 44, right = 56, top = 12, bottom = 22;
    box.setAttribute("viewBox", `0 0 ${W} ${H}`);
    const iw = W - left - right, ih = H - top - bottom;
    box.append(svg("line", { x1: left, y1: top + ih, x2: left + iw, y2: top + ih, class: "axis" }));
    if (!its.length) {
      box.append(svg("text", { x: W / 2, y: H / 2, "text-anchor": "middle", class: "chart-empty" }, "no iteration yet"));
      return;
    }
    const toks = its.map((it) => tokensOf(it.tokens));
    // The cost line goes as far as the run's cost is known: past an
    // iteration whose cost is unknown, a sum would be a false figure.
    const known = its.findIndex((it) => it.cost_source === "unknown");
    const upTo = known < 0 ? its.length : known;
    let sum = 0;
    const cost = its.slice(0, upTo).map((it) => (sum += it.cost_usd || 0));
    const maxT = Math.max(1, ...toks), maxC = Math.max(1e-9, sum);
    const bw = iw / its.length;
    const bars = svg("g", { class: "bars" });
    its.forEach((it, i) => {
      const h = (toks[i] / maxT) * ih;
      const r = svg("rect", { x: left + i * bw + bw * 0.15, y: top + ih - h, width: Math.max(1, bw * 0.7), height: h, "data-iteration": String(it.iteration) });
      r.append(svg("title", {}, `iteration ${it.iteration}: ${toks[i]} tokens, ${it.cost_text}; the run so far ${it.run_cost_text}`));
      bars.append(r);
    });
    box.append(bars);
    if (cost.length) {
      const pts = cost.map((c, i) => `${left + i * bw + bw / 2},${top + ih - (c / maxC) * ih}`).join(" ");
      box.append(svg("polyline", { points: pts, class: "cost-line" }));
    }
    for (const [i, c] of cost.entries()) box.append(svg("circle", { cx: left + i * bw + bw / 2, cy: top + ih - (c / maxC) * ih, r: 2.5, class: "cost-dot" }));
    box.append(svg("text", { x: left - 4, y: top + 8, "text-anchor": "end", class: "tick tokens" }, fmtCount(maxT)));
    box.append(svg("text", { x: left - 4, y: top + ih, "text-anchor": "end", class: "tick" }, "0"));
    // The scale's top is the last known point's figure (its words cut to
    // the figure, for the margin; the title has them all).
    const topText = upTo ? its[upTo - 1].run_cost_text : "unknown";
    const tick = svg("text", { x: left + iw + 4, y: top + 8, class: "tick cost" }, topText.split(" ")[0]);
    tick.append(svg("title", {}, `the run's cost: ${its[its.length - 1].run_cost_text}`));
    box.append(tick);
    box.append(svg("text", { x: left, y: H - 6, class: "tick" }, `#${its[0].iteration}`));
    box.append(svg("text", { x: left + iw, y: H - 6, "text-anchor": "end", class: "tick" }, `#${its[its.length - 1].iteration}`));
  }

  // ---- events ----------------------------------------------------------------

  // followEventsOf (re)starts the events stream when the log to show
  // changes: another task selected, a new run, other filters.
  function followEventsOf(d) {
    const f = state.filters;
    const ap = d.kind === "autopilot";
    $("#filter-log").disabled = !ap;
    const useAutopilot = ap && (f.log === "autopilot" || !d.selected);
    // The newest MAX_EVENTS of a long log at first; a reconnect resumes
    // after the last one seen (the server ignores last then).
    const params = { topic: f.topic, hat: f.hat, last: MAX_EVENTS, text: "true" };
    if (useAutopilot) params.autopilot = "1";
    else if (ap) params.task = d.selected;
    const run = d.loop ? d.loop.run_id : "";
    const logName = useAutopilot ? "autopilot" : ap ? `task ${d.selected}` : d.kind === "loop" ? `run ${run}` : "";
    const key = d.kind === "none" ? "" : JSON.stringify([params, useAutopilot ? (d.autopilot && d.autopilot.run_id) : run]);
    if (key === state.eventsKey) return;
    state.eventsKey = key;
    if (state.eventsStream) state.eventsStream.close();
    state.eventsStream = null;
    $("#events").replaceChildren();
    setText("#events-log", logName);
    if (!key) return;
    state.eventsStream = new Stream("/api/events/stream" + query(params), addEvent, {
      error: (err) => {
        if (!(err instanceof APIError)) return true; // a lost connection: the dashboard's stream says so
        showError(err);
        // a bad filter will not get better by asking again
        return err.status !== 400;
      },
    });
  }

  const utf8 = new TextEncoder();

  function addEvent(ev) {
    if (showStreamError(ev)) return;
    if (ev.event !== "event") return;
    // With text=true the data is the log's line, then on a line of its
    // own the event's text as `ralph events` shows it (a JSON string):
    // ralph words its own lines, the page renders none itself.
    const cut = ev.data.indexOf("\n");
    const raw = cut < 0 ? ev.data : ev.data.slice(0, cut);
    let e, payload;
    try {
      e = JSON.parse(raw);
      payload = cut < 0 ? "" : JSON.parse(ev.data.slice(cut + 1));
    } catch (_) {
      return;
    }
    const next = Number(ev.id);
    const offset = Number.isFinite(next) ? next - utf8.encode(raw).length - 1 : "";
    const li = el(
      "li",
      { "data-offset": String(offset), "data-next": ev.id || "", "data-topic": e.topic, "data-hat": e.hat || "", "data-source": e.source || "" },
      el("time", { datetime: e.ts, text: fmtTime(e.ts) }),
      el("span", { class: "what" },
        el("span", { class: "topic mono", text: e.topic }),
        el("span", { class: "who", text: [e.hat, e.iteration ? `#${e.iteration}` : "", e.source].filter(Boolean).join(" · ") })),
      el("span", { class: "payload", text: payload.length > 240 ? payload.slice(0, 240) + "…" : payload }),
    );
    if (payload.length > 240 || payload.includes("\n")) {
      li.classList.add("expandable");
      li.addEventListener("click", () => {
        const open = li.classList.toggle("open");
        li.querySelector(".payload").textContent = open ? payload : payload.slice(0, 240) + (payload.length > 240 ? "…" : "");
      });
    }
    const list = $("#events");
    list.append(li);
    while (list.children.length > MAX_EVENTS) list.firstChild.remove();
    if ($("#follow").checked) list.scrollTop = list.scrollHeight; // the list, not the page
    if (e.topic === "iteration.finished" && e.source === "ralph") refreshIterations();
  }

  // ---- controls ----------------------------------------------------------

  async function act(button, path, body) {
    button.disabled = true;
    try {
      const res = await request("POST", path, body);
      setStatus((res && res.message) || "done", "ok");
    } catch (err) {
      showError(err);
    } finally {
      button.disabled = false;
    }
  }

  function wire() {
    $("#pause").addEventListener("click", (e) => act(e.currentTarget, "/api/pause"));
    $("#resume").addEventListener("click", (e) => act(e.currentTarget, "/api/resume"));
    // Stop asks twice: a stopped autopilot or loop does not come back by
    // itself.
    let armed = 0;
    $("#stop").addEventListener("click", (e) => {
      const b = e.currentTarget;
      if (!armed) {
        b.textContent = "Stop: sure?";
        b.classList.add("armed");
        armed = setTimeout(() => {
          armed = 0;
          b.textContent = "Stop";
          b.classList.remove("armed");
        }, 4000);
        return;
      }
      clearTimeout(armed);
      armed = 0;
      b.textContent = "Stop";
      b.classList.remove("armed");
      act(b, "/api/stop", { now: $("#stop-now").checked });
    });
    $("#answer-form").addEventListener("submit", async (e) => {
      e.preventDefault();
      const text = $("#answer-text").value.trim();
      if (!text) return;
      const q = $("#question");
      const button = $("#answer");
      button.disabled = true;
      try {
        const res = await request("POST", "/api/answer", { task: task(), id: q.dataset.id || "", text });
        setStatus((res && res.message) || "answered", "ok");
        $("#answer-text").value = "";
      } catch (err) {
        showError(err);
      } finally {
        button.disabled = false;
      }
    });
    // Guidance goes to the loop shown (the workspace's, or the selected
    // task's), which carries it in its next iteration's prompt.
    $("#guidance-form").addEventListener("submit", async (e) => {
      e.preventDefault();
      const text = $("#guidance-text").value.trim();
      if (!text) return;
      const button = $("#guide");
      button.disabled = true;
      try {
        const res = await request("POST", "/api/guidance", { task: task(), text });
        setStatus((res && res.message) || "guidance sent", "ok");
        $("#guidance-text").value = "";
      } catch (err) {
        showError(err);
      } finally {
        button.disabled = false;
      }
    });
    $("#event-filters").addEventListener("submit", (e) => {
      e.preventDefault();
      state.filters = { topic: $("#filter-topic").value.trim(), hat: $("#filter-hat").value.trim(), log: $("#filter-log").value };
      setStatus("", "info");
      state.eventsKey = "\x00"; // restart even when the log is the same
      if (state.dash) followEventsOf(state.dash);
    });
    $("#filter-log").addEventListener("change", () => $("#event-filters").requestSubmit());
    setInterval(tickElapsed, 1000);
    window.addEventListener("resize", () => drawChart(state.its));
  }

  wire();
  connectDashboard();
})();

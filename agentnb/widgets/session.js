// agentnb front end, part 5: the session view (header, controls, tabs, the message list).

const STATE_TEXT = {
  idle: "idle",
  running: "● running",
  paused: "❚❚ paused",
  pausing: "pausing after this stage…",
  stopped: "■ stopped",
  error: "✖ error",
};

function statusLine(store) {
  const s = store.status || {};
  const bits = [STATE_TEXT[s.state] || String(s.state || "idle")];
  if (s.stage) bits.push(`stage ${s.stage}`);
  if (s.iteration != null) {
    // The wrap-up call (final_answer_on_stop) comes after the last iteration: say so.
    if (s.max_iterations && s.iteration > s.max_iterations) bits.push(`wrap-up after ${s.max_iterations} iterations`);
    else bits.push(`iteration ${s.iteration}${s.max_iterations ? "/" + s.max_iterations : ""}`);
  }
  if (s.next && s.state !== "stopped" && s.state !== "idle") bits.push(`next: ${s.next}`);
  if (s.reason) bits.push(`stop_reason: ${s.reason}${s.detail ? " — " + s.detail : ""}`);
  if (s.note) bits.push(s.note);
  return bits.join(" · ");
}

// The user's side of a conversation: what plays it, its goal, the facts it still holds back,
// its patience, how it stopped.
function talkStrip(t) {
  const who = t.person ? "a person (taken over)" : t.by === "model" ? `a model${t.model ? " (" + t.model + ")" : ""}` : `the rules${t.seed != null ? ", seed " + t.seed : ""}`;
  const held = (t.held_back || []).map((k) => `${k}${t.facts && t.facts[k] != null ? " = " + t.facts[k] : ""}`);
  const bits = [h("b", { text: "User: " }), h("span", { text: `played by ${who}` }),
    h("span", { class: "anb-talk-goal", text: ` · goal: ${t.goal || "?"}` }),
    h("span", { class: "anb-talk-held", text: ` · holds back: ${held.length ? held.join(", ") : "nothing"}` }),
    h("span", { class: "anb-talk-patience", text: ` · patience ${t.patience ?? "?"}/${t.max_patience ?? "?"}` })];
  if (t.turn != null) bits.push(h("span", { text: ` · turn ${t.turn}` }));
  if (t.stop) bits.push(h("span", { class: "anb-talk-stop", text: ` · stopped: ${t.stop}` }));
  const box = [h("div", {}, ...bits)];
  if (t.prompt) box.push(h("details", {}, h("summary", { text: "the model's prompt" }), h("pre", { text: t.prompt })));
  return box;
}

function renderSession(model, el, store) {
  const root = h("div", { class: "anb anb-session" });
  el.append(root);
  const title = h("span", { class: "anb-title" });
  const counts = h("span", { class: "anb-counts" });
  const status = h("div", { class: "anb-status-line" });
  const progress = h("progress", { class: "anb-progress", max: 1, value: 0 });
  const errors = h("div", { class: "anb-errors" });
  let talkControls = () => {};
  const talkBox = h("div", { class: "anb-talk", hidden: true });
  root.append(h("div", { class: "anb-top" }, title, counts), h("div", { class: "anb-statusbar" }, status, progress), talkBox);

  // Controls (bound to an agent on the Python side).
  if (model.get("controls")) {
    const input = h("input", { class: "anb-input", type: "text", placeholder: "a request for the agent (Run / Step start a run with it)" });
    const send = (op) => () => model.send({ op, text: input.value });
    const person = () => Boolean(store.talk && store.talk.person);
    input.addEventListener("keydown", (ev) => {
      if (ev.key !== "Enter") return;
      if (person()) { // the person at the keyboard plays the user: Enter sends their message
        model.send({ op: "say", text: input.value });
        input.value = "";
      } else send("run")(); // Enter runs, as the Run button does
    });
    const take = h("button", { class: "anb-btn anb-take-over", type: "button", "data-op": "take_over", text: "Take over", hidden: true,
      onclick: () => model.send({ op: person() ? "hand_back" : "take_over" }) });
    root.append(h("div", { class: "anb-controls" }, input,
      ["run", "step", "pause", "stop", "reset"].map((op) =>
        h("button", { class: `anb-btn anb-ctl anb-${op}`, type: "button", "data-op": op, text: op[0].toUpperCase() + op.slice(1), onclick: send(op) })), take));
    talkControls = () => {
      const driven = Boolean(store.talk && store.talk.driven);
      take.hidden = !driven;
      take.textContent = person() ? "Hand back" : "Take over";
      take.title = person() ? "the simulated user plays the user's side again from its next turn" : "you play the user's side: type its next message and press Enter";
      input.placeholder = !driven ? "a request for the agent (Run / Step start a run with it)"
        : person() ? "your reply, as the user (Enter sends it)" : "the simulated user plays this side (Take over to type)";
    };
  }
  root.append(errors);

  // Tabs: messages, requests (inspector, diff), timeline.
  const tabs = h("div", { class: "anb-tabs" });
  const panes = {};
  let active = "messages";
  const show = (name) => {
    active = name;
    for (const [k, p] of Object.entries(panes)) p.hidden = k !== name;
    for (const b of tabs.children) b.classList.toggle("anb-on", b.dataset.tab === name);
    redraw();
  };
  for (const [name, label] of [["messages", "Messages"], ["requests", "Requests"], ["timeline", "Timeline"]]) {
    tabs.append(h("button", { class: "anb-tab", type: "button", "data-tab": name, text: label, onclick: () => show(name) }));
    panes[name] = h("div", { class: `anb-pane anb-pane-${name}` });
  }
  root.append(tabs, ...Object.values(panes));

  // Messages: filters, search, legend, the windowed list.
  const role = h("select", { class: "anb-filter-role", title: "filter by role" },
    ["all roles", "user", "assistant", "tool", "system"].map((r) => h("option", { value: r === "all roles" ? "" : r, text: r })));
  const tool = h("select", { class: "anb-filter-tool", title: "filter by tool" }, h("option", { value: "", text: "all tools" }));
  const search = h("input", { class: "anb-search", type: "search", placeholder: "search text" });
  const shown = h("span", { class: "anb-muted anb-shown" });
  const legend = h("div", { class: "anb-legend", text: LEGEND, hidden: true });
  const latest = h("button", { class: "anb-btn anb-latest", type: "button", text: "↓ latest", onclick: () => list.toBottom() });
  const scroller = h("div", { class: "anb-scroll" });
  scroller.style.height = `${model.get("height") || 560}px`;
  panes.messages.append(
    h("div", { class: "anb-toolbar" }, role, tool, search, shown, h("span", { class: "anb-spacer" }),
      h("button", { class: "anb-btn", type: "button", text: "legend", onclick: () => (legend.hidden = !legend.hidden) }), latest),
    legend, scroller);
  for (const c of [role, tool]) c.addEventListener("change", () => redraw());
  search.addEventListener("input", () => redraw());

  let facts = null;
  let factsRev = -1;
  let factsLive = null;
  const isLive = () => ["running", "pausing", "paused"].includes(store.status.state);
  const decide = (op, call, digest) => model.send({ op, call, digest });
  const ctx = () => ({ ...facts, tools: store.tools, newSince: store.newSince, ground: store.ground,
    waiting: store.waiting, keys: store.keys, decide,
    running: store.status.state === "running" || store.status.state === "pausing",
    paused: store.status.state === "paused", next: store.status.next, maxIt: store.status.max_iterations });
  let cardCtx = null;
  const list = new VList(
    scroller,
    (k) => {
      if (k === "ctx") return contextCard(store.context);
      if (k === "delta") return h("div", { class: "anb-card anb-role-assistant anb-streaming" },
        h("div", { class: "anb-head", text: "assistant (streaming…)" }), fold(store.delta.reasoning + store.delta.text + store.delta.calls));
      const card = messageCard(k, store.msgs, cardCtx, flat);
      const g = groups.get(k);
      if (g) card.querySelector(".anb-head").append(repeatButton(k, g));
      if (k === store.newSince && k > 0) card.prepend(h("div", { class: "anb-divider", text: `new since model call ${store.calls}` }));
      return card;
    },
    (k) => {
      if (k === "ctx") return JSON.stringify(store.context && [store.context.tok, store.context.tools.length, store.context.instructions.length]);
      if (k === "delta") return String(store.rev);
      const g = groups.get(k);
      return sigOf(k) + (g ? `|x${g.count}|${expanded.has(k)}` : "");
    },
  );
  // A link to a message whose row is not drawn (sourcing.js's jump): the row holding it (its
  // call's card for a result, the first of a folded repeat) brought in and drawn.
  root.addEventListener("anb-reveal", (ev) => {
    const i = ev.detail.index;
    let key = !flat && facts && facts.parent[i] >= 0 ? facts.parent[i] : i;
    for (const [first, g] of groups) if (first <= key && key <= g.last && !expanded.has(first)) key = first;
    list.reveal(key);
  });
  let flat = false;
  const sigOf = (i) => {
    const m = store.msgs[i];
    const res = facts.results.get(i);
    let r = "";
    if (res) for (const j of res.values()) r += `${j}:${store.msgs[j].r}:${(facts.steering.steers.get(j) || []).length},`;
    const w = facts.warn.get(i);
    const gr = store.ground && store.ground.i === i ? store.ground.figures.join("/") : "";
    // Only a card with a call still open reads the run's state (waiting / paused / no result).
    const open = ((m.w || {}).tool_calls || []).length > (res ? res.size : 0);
    const run = open ? `${cardCtx.running}|${cardCtx.paused}|${cardCtx.next}|${JSON.stringify(store.waiting)}` : "";
    return `${m.r}|${r}|${w ? w.join("/") : ""}|${i >= store.newSince}|${i === facts.final}|${i === store.newSince}|${flat}|${run}|${gr}|${JSON.stringify(store.tools[(m.w || {}).tool_call_id] || "")}`;
  };

  // Identical consecutive cards (a runaway loop) collapse into one with a count: the same
  // role, text, calls (names and arguments, not ids) and results.
  const groups = new Map(); // first index -> {count, last}
  const expanded = new Set();
  const cardKey = (i) => {
    const m = store.msgs[i];
    const res = facts.results.get(i);
    let rk = "";
    if (res) for (const j of res.values()) rk += `${j}:${store.msgs[j].r},`;
    if (m.ck === undefined || m.ckr !== m.r + "|" + rk) {
      const w = m.w || {};
      const calls = (w.tool_calls || []).map((c) => [(c.function || {}).name, (c.function || {}).arguments]);
      const results = res ? [...res.values()].map((j) => (store.msgs[j].w || {}).content) : [];
      m.ck = JSON.stringify([w.role, w.content, calls, results]);
      m.ckr = m.r + "|" + rk;
    }
    return m.ck;
  };
  const repeatButton = (k, g) => h("button", {
    class: "anb-btn anb-repeat", type: "button",
    title: expanded.has(k) ? "collapse the identical cards again" : `#${k} to #${g.last}: ${g.count} identical cards (same text, calls and results); click to show each`,
    text: expanded.has(k) ? `× ${g.count} (shown)` : `× ${g.count}`,
    onclick: () => {
      if (expanded.has(k)) expanded.delete(k);
      else expanded.add(k);
      redraw();
    },
  });

  // Requests: pick a model call, see its exact request; compare two.
  const reqBar = h("div", { class: "anb-toolbar" });
  const reqBody = h("div", { class: "anb-inspector" });
  panes.requests.append(reqBar, reqBody);
  const openRequest = async (k) => {
    reqBody.replaceChildren(h("div", { class: "anb-muted", text: `loading model call ${k}…` }));
    const data = await store.ask({ op: "get", what: "request", k });
    reqBody.replaceChildren();
    renderRequest(data, reqBody, (kk) => openRequest(kk), (j, kk) => openDiff(j, kk));
  };
  const openDiff = async (j, k) => {
    reqBody.replaceChildren(h("div", { class: "anb-muted", text: `comparing ${j} and ${k}…` }));
    const data = await store.ask({ op: "get", what: "diff", j, k });
    reqBody.replaceChildren();
    renderDiff(data, reqBody);
  };
  let reqCalls = -1;
  const drawRequests = () => {
    if (reqCalls === store.calls) return;
    reqCalls = store.calls;
    reqBar.replaceChildren(h("span", { class: "anb-muted", text: store.calls ? "model calls: " : "no model calls yet" }));
    for (let k = 1; k <= store.calls; k++)
      reqBar.append(h("button", { class: "anb-btn anb-call-btn", type: "button", text: `#${k}`, onclick: () => openRequest(k) }));
    if (store.calls >= 2)
      reqBar.append(h("button", { class: "anb-btn anb-diff-btn", type: "button", text: `diff ${store.calls - 1} → ${store.calls}`, onclick: () => openDiff(store.calls - 1, store.calls) }));
  };

  // Timeline: the events of the runs this view saw.
  const tl = h("div", { class: "anb-timeline-box" });
  panes.timeline.append(tl);
  let tlRev = -1;

  let drawnErrors = 0;
  let errorsRev = 0;
  function redraw() {
    const live = isLive();
    if (factsRev !== store.rev || !facts || factsLive !== live) {
      facts = analyse(store.msgs, store.tools, live);
      factsRev = store.rev;
      factsLive = live;
    }
    cardCtx = ctx();
    const n = store.msgs.length;
    let tok = 0;
    for (const m of store.msgs) tok += m.tok || 0;
    let nw = 0;
    for (const l of facts.warn.values()) nw += l.length;
    title.textContent = `Session ${store.session || ""}`;
    const plural = (k, word) => `${fmtInt(k)} ${word}${k === 1 ? "" : "s"}`;
    const health = nw ? `⚠ ${plural(nw, "warning")}` : "✓ valid";
    const bits = [plural(n, "message"), `~${fmtInt(tok)} tok (estimated)`, health];
    if (facts.inflight) bits.push(`${plural(facts.inflight, "call")} in flight`);
    const ng = store.ground ? (store.ground.figures || []).length : 0;
    if (ng) bits.push(`⚑ ${plural(ng, "ungrounded figure")}`);
    if (facts.steering.flags) bits.push(`⚑ ${plural(facts.steering.flags, "instruction")} found in data`);
    if (facts.steering.steeredBy.size) bits.push(`⚑ ${plural(facts.steering.steeredBy.size, "steered call")}`);
    bits.push(plural(store.calls, "model call"));
    counts.replaceChildren(...bits.flatMap((b, j) => {
      const cls = b === health ? (nw ? "anb-health anb-bad" : "anb-health") : b.startsWith("⚑") ? "anb-flag" : null;
      return [j ? " · " : "", cls ? h("span", { class: cls, text: b }) : b];
    }));
    counts.classList.toggle("anb-bad", false);
    status.textContent = statusLine(store);
    talkBox.hidden = !store.talk;
    if (store.talk) talkBox.replaceChildren(...talkStrip(store.talk));
    talkControls();
    const s = store.status;
    progress.hidden = s.state !== "running" && s.state !== "pausing";
    if (s.max_iterations) {
      progress.max = s.max_iterations;
      progress.value = s.iteration || 0;
    } else progress.removeAttribute("value");
    if (errorsRev !== store.errorsRev) {
      errorsRev = store.errorsRev;
      errors.replaceChildren();
      drawnErrors = 0;
    }
    for (; drawnErrors < store.errors.length; drawnErrors++) {
      const e = store.errors[drawnErrors];
      errors.append(h("details", { class: "anb-error", open: true }, h("summary", { text: e.text }), e.detail ? h("pre", { text: e.detail }) : null));
    }
    // Tool names for the filter.
    const names = new Set();
    for (const m of store.msgs) for (const c of (m.w && m.w.tool_calls) || []) names.add(String((c.function || {}).name));
    if (names.size !== tool.options.length - 1) {
      const keep = tool.value;
      tool.replaceChildren(h("option", { value: "", text: "all tools" }), ...[...names].sort().map((t) => h("option", { value: t, text: t })));
      tool.value = keep;
    }
    if (active === "messages") drawMessages();
    else if (active === "requests") drawRequests();
    else if (tlRev !== store.rev) {
      tlRev = store.rev;
      renderTimeline(store.events, tl);
    }
  }

  function drawMessages() {
    const r = role.value;
    const t = tool.value;
    const q = search.value.trim().toLowerCase();
    flat = Boolean(r || q);
    const keys = r || t || q ? [] : ["ctx"];
    groups.clear();
    let head = -1;
    let headKey = null;
    for (let i = 0; i < store.msgs.length; i++) {
      const w = store.msgs[i].w || {};
      if (r && (w.role === "developer" ? "system" : w.role) !== r) continue;
      if (!flat && w.role === "tool" && facts.parent[i] >= 0) continue; // nested under its call
      if (t && !(w.role === "tool" ? w.name === t : (w.tool_calls || []).some((c) => (c.function || {}).name === t))) continue;
      if (q) {
        const m = store.msgs[i];
        if (m.q === undefined || m.qr !== m.r) {
          m.q = JSON.stringify(w).toLowerCase();
          m.qr = m.r;
        }
        if (!m.q.includes(q)) continue;
      }
      if (!flat) {
        const ck = cardKey(i);
        if (head >= 0 && ck === headKey && !expanded.has(head)) {
          const g = groups.get(head) || { count: 1, last: head };
          g.count++;
          g.last = i;
          groups.set(head, g);
          continue; // folded into the first card of the run of identical ones
        }
        if (head < 0 || ck !== headKey) {
          head = i;
          headKey = ck;
        } else {
          const g = groups.get(head) || { count: 1, last: head };
          g.count++;
          g.last = i;
          groups.set(head, g);
        }
      }
      keys.push(i);
    }
    if (store.delta && !flat) keys.push("delta");
    shown.textContent = r || t || q ? `${keys.length} shown` : "";
    list.setKeys(keys);
  }

  let scheduled = false;
  const onChange = () => {
    if (scheduled) return;
    scheduled = true;
    requestAnimationFrame(() => {
      scheduled = false;
      redraw();
    });
  };
  store.views.add(onChange);
  show("messages");
  return () => {
    store.views.delete(onChange);
    list.resize.disconnect();
  };
}

// agentnb front end, part 9: the optimiser's live view — the candidate tree, the score over
// the budget, the current proposal, a candidate's diff against its parent, Stop.
// Same rules as every view: every text from a model or a task is a text node.

const OPT_STATUS = {
  seed: "the agent as given",
  rejected: "no better on the minibatch",
  pool: "in the pool (not gated)",
  promoted: "promoted by the gate",
  held: "gated, not promoted",
  running: "being decided now",
  stopped: "stopped before it was decided",
};

function svgEl(tag, attrs, ...children) {
  const el = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const [k, v] of Object.entries(attrs || {})) if (v != null) el.setAttribute(k, String(v));
  for (const c of children) if (c != null) el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return el;
}

// The incumbent's validation success as a step over metric calls; each candidate's training
// success as a point at the calls spent when it was decided; a line at the calls spent now.
function optChart(d) {
  const W = 420, H = 190, L = 40, R = 10, T = 12, B = 30;
  const x = (calls) => L + ((W - L - R) * Math.min(calls, d.budget)) / (d.budget || 1);
  const y = (rate) => T + (H - T - B) * (1 - rate);
  const svg = svgEl("svg", { class: "anb-o-chart", width: W, height: H, viewBox: `0 0 ${W} ${H}`, role: "img" });
  for (const r of [0, 0.5, 1]) {
    svg.append(svgEl("line", { x1: L, x2: W - R, y1: y(r), y2: y(r), class: "anb-o-grid" }));
    svg.append(svgEl("text", { x: L - 4, y: y(r) + 4, class: "anb-o-axis", "text-anchor": "end" }, `${r * 100}%`));
  }
  svg.append(svgEl("text", { x: W - R, y: H - 6, class: "anb-o-axis", "text-anchor": "end" }, `metric calls (budget ${d.budget})`));
  svg.append(svgEl("text", { x: L, y: H - 6, class: "anb-o-axis" }, "0"));
  const byId = new Map(d.candidates.map((c) => [c.id, c]));
  const steps = [];
  const seed = byId.get("c0");
  if (seed && seed.validation != null) steps.push([seed.decided_at, seed.validation]);
  for (const c of d.candidates) if (c.status === "promoted" && c.validation != null) steps.push([c.decided_at, c.validation]);
  if (steps.length) {
    let path = `M ${x(steps[0][0])} ${y(steps[0][1])}`;
    for (let i = 1; i < steps.length; i++) path += ` H ${x(steps[i][0])} V ${y(steps[i][1])}`;
    path += ` H ${x(Math.max(d.calls, steps[steps.length - 1][0]))}`;
    svg.append(svgEl("path", { d: path, class: "anb-o-step" }));
  }
  for (const c of d.candidates) {
    if (c.train_success == null) continue;
    const dot = svgEl("circle", { cx: x(c.decided_at), cy: y(c.train_success), r: c.id === d.best ? 5 : 3.5, class: `anb-o-dot anb-o-${c.status}` });
    dot.append(svgEl("title", {}, `${c.id} (${c.status}): training ${pct(c.train_success)}${c.validation != null ? `, validation ${pct(c.validation)}` : ""}`));
    svg.append(dot);
  }
  svg.append(svgEl("line", { x1: x(d.calls), x2: x(d.calls), y1: T, y2: H - B, class: "anb-o-now" }));
  return h("div", { class: "anb-o-chartbox" }, svg,
    h("div", { class: "anb-muted", text: "line: the incumbent's validation success · points: each candidate's training success" }));
}

function optTree(d, selected, onPick) {
  const kids = new Map();
  for (const c of d.candidates) {
    const key = c.parent || "";
    if (!kids.has(key)) kids.set(key, []);
    kids.get(key).push(c);
  }
  const node = (c) => {
    const bits = [h("b", { text: c.id })];
    bits.push(h("span", { class: `anb-o-badge anb-o-${c.status}`, text: c.status }));
    if (c.train_success != null) bits.push(h("span", { class: "anb-muted", text: `train ${pct(c.train_success)}` }));
    if (c.validation != null) bits.push(h("span", { text: `val ${pct(c.validation)}` }));
    if (c.id === d.best) bits.push(h("span", { class: "anb-good", text: "★ incumbent" }));
    const row = h("div", { class: `anb-o-node${c.id === selected ? " anb-o-selected" : ""}`, title: c.reason || OPT_STATUS[c.status] || "", onclick: () => onPick(c.id) }, bits);
    const below = (kids.get(c.id) || []).map(node);
    return h("li", {}, row, below.length ? h("ul", {}, below) : null);
  };
  return h("ul", { class: "anb-o-tree" }, (kids.get("") || []).map(node));
}

function optDetail(d, id) {
  const c = d.candidates.find((x) => x.id === id);
  if (!c) return h("div", { class: "anb-muted", text: "click a candidate: its diff against its parent, its rationale, the gate's verdict" });
  const box = h("div", { class: "anb-o-detail" },
    h("div", { class: "anb-sub", text: `${c.id}${c.parent ? ` from ${c.parent}` : ""} · ${c.status}: ${OPT_STATUS[c.status] || ""}` }),
    c.reason ? h("div", { class: c.status === "promoted" ? "anb-good" : "anb-muted", text: c.reason }) : null);
  if (c.rationale) box.append(h("div", { class: "anb-sub", text: "the proposer's rationale" }), h("div", { class: "anb-o-rationale", text: c.rationale }));
  if (c.note) box.append(h("div", { class: "anb-muted", text: `the optimiser's note on the reply: ${c.note}` }));
  if (c.parent) box.append(promptDiff(c.diff, c.parent, c.id));
  return box;
}

function renderOptimise(model, el) {
  let data = model.get("data");
  let selected = null;
  const head = h("div", { class: "anb-toolbar" });
  const warn = h("div", {});
  const body = h("div", { class: "anb-o-body" });
  const left = h("div", { class: "anb-o-left" });
  const right = h("div", { class: "anb-o-right" });
  const current = h("div", { class: "anb-o-current" });
  const detail = h("div", {});
  body.append(left, right);
  el.append(head, warn, body, current, detail);
  const stop = h("button", { class: "anb-btn anb-ctl", type: "button", text: "■ Stop", onclick: () => model.send({ op: "stop" }) });

  const pick = (id) => { selected = id; draw(); };
  const drawHead = () => {
    const best = data.candidates.find((c) => c.id === data.best);
    const state = data.stopped ? `stopped · ${data.reason}` : data.done ? `done · ${data.reason}` : "running";
    head.replaceChildren(
      h("b", { text: `Optimiser: ${data.train} training + ${data.validation} validation tasks, gate ${data.gate} at α = ${data.alpha}` }),
      h("progress", { class: "anb-progress", max: data.budget || 1, value: data.calls }),
      h("span", { class: "anb-m-count", text: `${data.calls}/${data.budget} metric calls` }),
      h("span", { text: best ? `incumbent ${best.id}${best.validation != null ? ` · validation ${pct(best.validation)}` : ""}` : "" }),
      h("span", { class: "anb-muted", text: `proposer: ${data.proposer} · task runs ${data.spend}` }),
      h("span", { class: data.stopped ? "anb-bad" : data.done ? "anb-good" : "anb-muted", text: state }),
      ...(data.done ? [] : [stop]));
  };
  const drawCurrent = () => {
    const cur = data.current || {};
    if (data.done || !cur.parent) { current.replaceChildren(); return; }
    current.replaceChildren(
      h("div", { class: "anb-sub", text: `the current proposal (from ${cur.parent}${cur.candidate ? `, ${cur.candidate}` : ""})` }),
      h("div", { class: "anb-o-rationale", text: cur.asking ? "asking the proposer…" : cur.rationale || "(no rationale given)" }));
  };
  const draw = () => {
    drawHead();
    warn.replaceChildren(...(data.warnings || []).map((w) => h("div", { class: "anb-bad", text: `⚠ ${w}` })));
    left.replaceChildren(h("div", { class: "anb-sub", text: "candidates" }), optTree(data, selected, pick));
    right.replaceChildren(optChart(data));
    drawCurrent();
    detail.replaceChildren(optDetail(data, selected));
  };
  const onMsg = (msg) => {
    if (!msg || typeof msg !== "object") return;
    if (msg.op === "state") {
      data = msg.data;
    } else if (msg.op === "update") {
      const byId = new Map(data.candidates.map((c, i) => [c.id, i]));
      for (const c of msg.candidates || []) {
        if (byId.has(c.id)) data.candidates[byId.get(c.id)] = c;
        else data.candidates.push(c);
      }
      for (const k of Object.keys(msg)) if (k !== "op" && k !== "candidates") data[k] = msg[k];
    } else if (msg.op === "error") {
      detail.replaceChildren(h("pre", { class: "anb-error", text: msg.text }));
      return;
    } else return;
    draw();
  };
  model.on("msg:custom", onMsg);
  draw();
  model.send({ op: "hello" });
  return () => model.off("msg:custom", onMsg);
}

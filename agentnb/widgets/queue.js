// agentnb front end: the queue view - a Runtime's tasks, and the live view of the session of
// the task clicked, composed in place (anywidget's host.getWidget). Rows are keyed by task id
// and updated in place; every text from a task enters as text.

const QUEUE_COLUMNS = [
  ["session", "session"], ["status", "status"], ["attempt", "attempt"], ["iteration", "iter"],
  ["latency", "latency"], ["tokens", "tokens"], ["stop", "stop reason"], ["text", "message"],
];
const QUEUE_COUNTS = ["pending", "running", "paused", "awaiting_approval", "done", "error", "cancelled"];
const QUEUE_FINAL = ["done", "error", "cancelled"];

function queueCell(key, row) {
  if (key === "latency") return fmtMs(row.latency);
  if (key === "tokens") return fmtInt(row.tokens);
  if (key === "status") return row.status + (row.error && row.status === "error" ? " ⚠" : "");
  return row[key] == null ? "" : String(row[key]);
}

function renderQueue(model, el, host) {
  const height = (model.get("data") || {}).height || 360;
  const header = h("div", { class: "anb-toolbar anb-queue-head" });
  const thead = h("tr", {}, QUEUE_COLUMNS.map(([, label]) => h("th", { text: label })), h("th", { text: "" }));
  const tbody = h("tbody");
  const scroll = h("div", { class: "anb-queue-scroll" }, h("table", { class: "anb-queue" }, h("thead", {}, thead), tbody));
  scroll.style.maxHeight = `${height}px`;
  const holder = h("div", { class: "anb-q-session" });
  el.append(h("div", { class: "anb anb-queue-view" }, header, scroll, holder));
  const rows = new Map();
  const { show, stop } = composer(model, host, holder, "the queue view (anywidget >= 0.11 can): display rt.view().opened");

  function drawHeader(counts) {
    header.replaceChildren(h("b", { text: "tasks" }),
      ...QUEUE_COUNTS.map((k) => h("span", { class: `anb-count anb-q-${k}`, text: ` ${k} ${fmtInt(counts[k] || 0)}` })),
      h("span", { class: "anb-count anb-q-depth", text: ` · queue depth ${fmtInt(counts.queued || 0)}` }));
  }

  function draw(row) {
    let tr = rows.get(row.id);
    if (!tr) {
      tr = h("tr", { class: "anb-q-row", "data-task": row.id, onclick: () => model.send({ op: "open", task: row.id }) });
      rows.set(row.id, tr);
      tbody.append(tr);
    }
    const cancel = QUEUE_FINAL.includes(row.status) ? null : h("button", {
      class: "anb-btn anb-q-cancel", type: "button", text: "Cancel", title: `cancel ${row.id}`,
      onclick: (ev) => { ev.stopPropagation(); model.send({ op: "cancel", task: row.id }); },
    });
    // A call awaiting a person: Approve / Deny right on the row (with the digest shown).
    const decide = (op, a) => (ev) => { ev.stopPropagation(); model.send({ op, task: row.id, call: a.call_id, digest: a.digest }); };
    const asks = (row.approvals || []).map((a) => h("span", { class: "anb-q-ask", title: `${a.tool}(${a.arguments}) · digest ${a.digest}` },
      h("span", { class: "anb-waiting-badge", text: `${a.tool}?` }),
      h("button", { class: "anb-btn anb-approve", type: "button", text: "Approve", onclick: decide("approve", a) }),
      h("button", { class: "anb-btn anb-deny", type: "button", text: "Deny", onclick: decide("deny", a) })));
    tr.className = `anb-q-row anb-q-${row.status}` + (model.get("selected") === row.id ? " anb-q-selected" : "");
    tr.title = row.error ? `${row.id}: ${row.error}` : row.id;
    tr.replaceChildren(...QUEUE_COLUMNS.map(([key]) => h("td", { class: `anb-q-${key}`, text: queueCell(key, row) })), h("td", {}, ...asks, cancel));
  }

  function apply(msg) {
    if (msg.reset) { rows.clear(); tbody.replaceChildren(); }
    for (const row of msg.rows || []) draw(row);
    drawHeader(msg.counts || {});
  }

  async function loadSnapshot() {
    const blob = model.get("snapshot");
    if (!blob || !blob.byteLength || rows.size) return; // live rows are newer than any snapshot
    try {
      apply({ ...JSON.parse(await inflate(blob)), reset: true });
    } catch (err) {
      el.append(h("pre", { class: "anb-error", text: `could not read the queue's snapshot: ${err}` }));
    }
  }

  const onMsg = (msg) => {
    if (msg && msg.op === "rows") apply(msg);
  };
  const onSelect = () => {
    for (const [id, tr] of rows) tr.classList.toggle("anb-q-selected", id === model.get("selected"));
  };
  model.on("msg:custom", onMsg);
  model.on("change:selected", onSelect);
  model.on("change:view", show);
  drawHeader({});
  loadSnapshot().then(() => model.send({ op: "hello" }));
  show();
  return () => {
    model.off("msg:custom", onMsg);
    model.off("change:selected", onSelect);
    model.off("change:view", show);
    stop();
  };
}

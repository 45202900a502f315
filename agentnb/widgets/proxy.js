// agentnb front end, part 9: the proxy view - the conversations a recording proxy saw, and the
// live view of the one picked, composed in place (anywidget's host.getWidget). Every id, note
// and count is a text node.

// The API each conversation came in on, as its row names it.
const API_NAMES = { chat: "Chat Completions", responses: "Responses API", anthropic: "Anthropic Messages" };

function conversationLabel(c) {
  if (c.how === "branch") return `branch of ${c.parent}`;
  if (c.how === "compaction") return `compaction of ${c.parent}`;
  if (c.how === "unthreaded") return "unthreaded";
  return null;
}

function conversationRow(c, picked, pick) {
  const label = conversationLabel(c);
  const state = c.live
    ? h("span", { class: "anb-good", text: "● call in flight" })
    : c.stop
      ? h("span", { class: "anb-muted", text: `last: ${c.stop}` })
      : null;
  return h("div", {
    class: `anb-p-row${c.id === picked ? " anb-p-picked" : ""}`,
    role: "button",
    tabindex: 0,
    "data-session": c.id,
    onclick: () => pick(c.id),
    onkeydown: (e) => { if (e.key === "Enter" || e.key === " ") pick(c.id); },
  },
    h("span", { class: "anb-p-id", text: c.id }),
    h("span", { class: "anb-p-size", text: `${fmtInt(c.messages)} messages · ${fmtInt(c.calls)} calls` }),
    c.api ? h("span", { class: "anb-p-api", title: "the API its calls came in on", text: API_NAMES[c.api] || c.api }) : null,
    state,
    label ? h("span", { class: c.how === "unthreaded" ? "anb-bad" : "anb-ref", title: c.note || "", text: label }) : null,
    c.problems ? h("span", { class: "anb-bad", text: `${fmtInt(c.problems)} problems` }) : null,
  );
}

function renderProxy(model, el, host) {
  const head = h("div", { class: "anb-toolbar anb-p-head" });
  const list = h("div", { class: "anb-p-list" });
  const holder = h("div", { class: "anb-p-session" });
  el.append(h("div", { class: "anb anb-proxy" }, head, list, holder));
  const pick = (id) => model.send({ op: "pick", id });
  const { show, stop } = composer(model, host, holder, "the proxy view (anywidget >= 0.11 can): display proxy.view().current");

  const draw = () => {
    const d = model.get("data") || {};
    const convs = d.conversations || [];
    const bits = [
      h("b", { class: "anb-p-count", text: `${fmtInt(convs.length)} conversation${convs.length === 1 ? "" : "s"}` }),
      h("span", { class: "anb-muted", text: `${fmtInt(d.calls)} model calls through ${d.base_url || ""}` }),
    ];
    if (d.skipped) bits.push(h("span", { class: "anb-bad", text: `${fmtInt(d.skipped)} requests not recorded (proxy.skipped says why)` }));
    head.replaceChildren(...bits);
    list.replaceChildren(...convs.map((c) => conversationRow(c, d.picked, pick)));
    if (!convs.length) list.append(h("div", { class: "anb-muted", text: "no conversation yet: point the app's base URL at the proxy" }));
  };


  draw();
  show();
  model.on("change:data", draw);
  model.on("change:view", show);
  return () => {
    model.off("change:data", draw);
    model.off("change:view", show);
    stop();
  };
}

// agentnb front end, part 1: DOM helpers.
// Every string that comes from a model, a tool or a user enters the page as a text node
// (h() children, textContent). Nothing here parses markup: no innerHTML, no href or src
// built from data, no inline handlers. A model output is data, never markup.

const FOLD_AT = 600; // characters shown before a long content folds
const PREVIEW = 240;

function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  if (attrs) {
    for (const [k, v] of Object.entries(attrs)) {
      if (v == null || v === false) continue;
      if (k === "class") el.className = v;
      else if (k === "text") el.textContent = String(v);
      else if (k === "title") el.title = String(v);
      else if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
      else el.setAttribute(k, String(v)); // only our own attribute names reach here
    }
  }
  for (const c of children.flat(Infinity)) {
    if (c == null || c === false) continue;
    el.append(c instanceof Node ? c : String(c)); // strings become text nodes
  }
  return el;
}

function fmtInt(n) {
  return n == null ? "?" : Number(n).toLocaleString("en-US");
}

function fmtMs(seconds) {
  if (seconds == null) return "";
  const ms = seconds * 1000;
  return ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${ms.toFixed(ms < 10 ? 2 : 1)} ms`;
}

function asText(content) {
  if (content == null) return "";
  if (typeof content === "string") return content;
  return JSON.stringify(content, null, 2);
}

// Parse a JSON string; undefined when it is not JSON.
function tryJSON(text) {
  if (typeof text !== "string") return undefined;
  const t = text.trim();
  if (!(t.startsWith("{") || t.startsWith("["))) return undefined;
  try {
    return JSON.parse(t);
  } catch (e) {
    return undefined;
  }
}

// Pretty-print JSON text; other text unchanged.
function pretty(text) {
  const value = tryJSON(text);
  return value === undefined ? asText(text) : JSON.stringify(value, null, 2);
}

// A <pre> holding text; long text folds to a preview with its size and a toggle.
function fold(text, cls, limit) {
  limit = limit || FOLD_AT;
  const pre = h("pre", { class: "anb-text " + (cls || "") });
  if (text.length <= limit) {
    pre.textContent = text;
    return pre;
  }
  const more = h("button", { class: "anb-more", type: "button" });
  let open = false;
  const show = () => {
    pre.textContent = open ? text : text.slice(0, PREVIEW) + " …";
    more.textContent = open ? "fold" : `show all (${fmtInt(text.length)} chars)`;
  };
  more.addEventListener("click", () => {
    open = !open;
    show();
  });
  show();
  return h("div", { class: "anb-fold" }, pre, more);
}

function flash(button, text) {
  const old = button.textContent;
  button.textContent = text;
  setTimeout(() => (button.textContent = old), 1200);
}

async function copyText(text, button) {
  try {
    await navigator.clipboard.writeText(text);
    flash(button, "copied");
  } catch (e) {
    const area = h("textarea", { class: "anb-offscreen" });
    area.value = text;
    document.body.append(area);
    area.select();
    let ok = false;
    try {
      ok = document.execCommand("copy");
    } catch (e2) {
      ok = false;
    }
    area.remove();
    flash(button, ok ? "copied" : "copy blocked");
  }
}

// Inflate the zlib-compressed snapshot trait (a DataView) into its JSON text.
async function inflate(view) {
  const stream = new Blob([view]).stream().pipeThrough(new DecompressionStream("deflate"));
  return await new Response(stream).text();
}

const ROLES = new Set(["system", "developer", "user", "assistant", "tool"]);
function roleClass(role) {
  return "anb-role-" + (ROLES.has(role) ? role : "other");
}

// A view that shows another widget inside it by reference (the proxy's and the queue's picked
// session view, through anywidget's host.getWidget): `show` renders the model's current "view"
// ref into `holder` (a newer pick aborts the one before), `stop` ends the last one.
function composer(model, host, holder, where) {
  let shown = null;
  let controller = null;
  const show = async () => {
    const ref = model.get("view");
    if (!ref || ref === shown) return;
    shown = ref;
    if (controller) controller.abort();
    controller = new AbortController();
    holder.replaceChildren();
    if (!host || !host.getWidget) {
      holder.append(h("div", { class: "anb-error", text: `this notebook's anywidget cannot show a session inside ${where}` }));
      return;
    }
    const child = await host.getWidget(ref);
    if (shown === ref) await child.render({ el: holder, signal: controller.signal });
  };
  return { show, stop: () => controller && controller.abort() };
}

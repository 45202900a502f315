// agentnb front end, part 4: the session store, one per widget model, shared by its views.
// It applies the kernel's custom messages in seq order over the last snapshot.

class Store {
  constructor(model) {
    this.model = model;
    this.msgs = [];
    this.events = [];
    this.tools = {};
    this.context = null;
    this.status = { state: "idle" };
    this.newSince = 0;
    this.calls = 0;
    this.seq = 0;
    this.rev = 0;
    this.mrev = 0;
    this.errors = [];
    this.errorsRev = 0; // bumped when the errors are cleared (the next action succeeded)
    this.ground = null; // {i, figures}: figures of the final answer found in no tool result
    this.waiting = {}; // call id -> {tool, digest, expires, can}: calls awaiting approval
    this.keys = {}; // call id -> the idempotency key of a side-effecting call
    this.delta = null; // text streaming in before the reply is appended
    this.talk = null; // a conversation's user side: goal, facts held back, patience, who plays
    this.views = new Set();
    this.replies = new Map();
    this.queue = null; // messages that arrive while a snapshot inflates
    this.askedSync = false;
    this.ready = this.load().then(() => model.send({ op: "hello", seq: this.seq }));
    model.on("change:snapshot", () => this.load());
    model.on("msg:custom", (msg) => this.receive(msg));
  }

  async load() {
    const blob = this.model.get("snapshot");
    if (!blob || !blob.byteLength) return;
    this.queue = this.queue || [];
    try {
      const s = JSON.parse(await inflate(blob));
      if (s.seq >= this.seq) {
        this.msgs = s.messages.map((m) => ((m.r = ++this.mrev), m));
        this.events = s.events;
        this.tools = s.tools || {};
        this.context = s.context;
        this.status = s.status || { state: "idle" };
        this.newSince = s.new_since;
        this.calls = s.calls;
        this.seq = s.seq;
        this.session = s.session;
        this.ground = s.ground || null;
        this.waiting = s.waiting || {};
        this.talk = s.talk || null;
        this.keys = {};
        for (const e of this.events) if (e.idempotency_key) this.keys[e.call_id] = e.idempotency_key;
        this.delta = null;
      }
    } catch (err) {
      this.errors.push({ text: `could not read the snapshot: ${err}` });
    }
    const queued = this.queue;
    this.queue = null;
    this.askedSync = false;
    for (const msg of queued) this.apply(msg);
    this.changed();
  }

  receive(msg) {
    try {
      this.receiveOne(msg);
    } catch (err) {
      this.errors.push({ text: `the view could not apply a message: ${err}`, detail: JSON.stringify(msg).slice(0, 2000) });
      this.changed();
    }
  }

  receiveOne(msg) {
    if (!msg || typeof msg !== "object") return;
    if (msg.op === "reply") {
      const resolve = this.replies.get(msg.id);
      this.replies.delete(msg.id);
      if (resolve) resolve(msg.data);
      return;
    }
    if (msg.op === "error") {
      this.errors.push(msg);
      this.changed();
      return;
    }
    if (this.queue) this.queue.push(msg);
    else {
      this.apply(msg);
      this.changed();
    }
  }

  // Ask the kernel something (a request, a diff); resolves with its reply.
  ask(content) {
    const id = Math.random().toString(36).slice(2);
    return new Promise((resolve) => {
      this.replies.set(id, resolve);
      this.model.send({ ...content, id });
    });
  }

  apply(msg) {
    if (msg.seq == null || msg.seq <= this.seq) return; // already in the snapshot
    if (msg.seq > this.seq + 1) {
      // A message was lost (sent before this view existed): ask for a fresh snapshot.
      if (!this.askedSync) this.model.send({ op: "sync" });
      this.askedSync = true;
      return;
    }
    this.seq = msg.seq;
    const m = msg.m;
    if (m) m.r = ++this.mrev;
    switch (msg.op) {
      case "append":
        this.msgs[msg.index] = m;
        this.delta = null;
        if (msg.st) {
          const role = (m.w || {}).role;
          const summary = `+ #${msg.index} ${role}${msg.run ? "" : " (appended by hand)"}`;
          this.events.push({ seq: msg.eseq, type: "MessageAppended", stage: msg.st, it: m.it, t: msg.t, run: msg.run, summary });
        }
        break;
      case "replace":
        this.msgs[msg.index] = m;
        break;
      case "delete":
        this.msgs.splice(msg.index, 1);
        for (let i = msg.index; i < this.msgs.length; i++) this.msgs[i].r = ++this.mrev;
        break;
      case "truncate":
        this.msgs.length = Math.min(this.msgs.length, msg.length);
        break;
      case "event":
        this.event(msg);
        break;
      case "clear_errors":
        this.errors = [];
        this.errorsRev++;
        break;
    }
    if (msg.e && msg.op !== "event") this.events.push(msg.e); // an edit's timeline row
    if (msg.ground !== undefined) this.ground = msg.ground;
    if (msg.waiting !== undefined) this.waiting = msg.waiting; // "waiting", or with an event
    if (msg.talk !== undefined) this.talk = msg.talk; // a user turn, or the controls' take-over
    if (msg.status) this.status = { ...this.status, ...msg.status }; // only what changed
    if (msg.new_since != null) this.newSince = msg.new_since;
    if (msg.calls != null) this.calls = msg.calls;
    if (msg.context) this.context = msg.context;
    if (this.newSince > this.msgs.length) this.newSince = this.msgs.length;
  }

  event(msg) {
    const e = msg.e;
    if (e.type === "ModelDelta") {
      const d = (this.delta = this.delta || { text: "", reasoning: "", calls: "" });
      if (e.kind === "text") d.text += e.delta;
      else if (e.kind === "reasoning") d.reasoning += e.delta;
      else d.calls += (e.kind === "tool_call" ? `\n→ ${e.delta}(` : "") + (e.kind === "tool_args" ? e.delta : "");
      return;
    }
    if (e.type === "ToolFinished") {
      const stat = { ok: e.ok, kind: e.kind || null, ms: Math.round(e.latency * 10000) / 10 };
      if (e.traceback) stat.tb = e.traceback;
      if (e.note) stat.note = e.note;
      if (msg.sub) stat.sub = msg.sub; // a sub-agent's session, nested under the result
      this.tools[e.call_id] = stat;
    }
    if (e.type === "ToolStarted" && e.idempotency_key) this.keys[e.call_id] = e.idempotency_key;
    if (e.type === "RunStopped") this.delta = null;
    this.events.push(e);
    if (this.events.length > 5000) this.events.splice(0, this.events.length - 4000);
  }

  changed() {
    this.rev++;
    for (const v of this.views) v();
  }
}

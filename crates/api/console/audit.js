// The audit log: newest first, 50 at a time behind a cursor (the list is keyed by sequence
// number, so the first page costs the same over a million records as over ten), filtered;
// the shown range's hash chain verified as a badge; one record in full; the exports, run
// asynchronously with their progress shown.

import { add, api, attempt, bars, button, call, fields, h, input, put, say, select, status, table, values, when } from "./core.js";

let cursor = null;
let shown = [];

export const view = {
  id: "audit",
  title: "Audit",
  role: "viewer",
  render(into) {
    const form = h(
      "form",
      { id: "audit-filters", class: "filters" },
      input("Event type", "event_type", { placeholder: "policy.decision" }),
      input("Decision", "decision", { placeholder: "deny" }),
      input("Agent", "agent_id", { placeholder: "agent id" }),
      select("Actor type", "actor_type", [["", "any"], ["agent", "agent"], ["user", "user"], ["api_key", "API key"], ["system", "system"]], ""),
      input("Actor id", "actor_id"),
      input("From", "from", { type: "datetime-local" }),
      input("To", "to", { type: "datetime-local" }),
      h("button", { type: "submit" }, "Filter"),
    );
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      load(true);
    });
    const exports = h(
      "form",
      { id: "audit-export", class: "filters" },
      select("Format", "format", [["jsonl", "JSON Lines"], ["json", "JSON"], ["csv", "CSV"]], "jsonl"),
      h("button", { type: "submit" }, "Export the filtered log"),
      h("progress", { id: "export-progress", max: "1", value: "0", hidden: true, "aria-label": "Export progress" }),
      h("span", { id: "export-status", role: "status" }),
    );
    exports.addEventListener("submit", (event) => {
      event.preventDefault();
      exportLog(values(exports).format);
    });
    add(into,
      h("h2", { id: "audit-title" }, "Audit log"),
      h("div", { id: "audit-charts", class: "charts" }),
      form,
      h("p", {}, h("span", { id: "chain", role: "status" })),
      h("div", { id: "records-table" }),
      status("audit-status"),
      button("Load more", () => load(false), { id: "audit-more", hidden: true }),
      h("h3", {}, "Export"),
      exports,
      h("section", { id: "record", "aria-label": "Record", hidden: true }),
    );
    return Promise.all([load(true), charts()]);
  },
};

/** Checks answered over the last 24 hours, per hour and per decision (`GET /stats`). */
async function charts() {
  await attempt("audit-status", async () => {
    const s = (await call("GET", `${api}/stats`)).decisions;
    put(
      document.getElementById("audit-charts"),
      bars("Policy checks per hour, last 24 hours", s.series.map((p) => [new Date(p.hour).getHours().toString(), p.total])),
      bars("Policy checks by decision, last 24 hours", Object.entries(s.by_decision).map(([d, n]) => [d.replace("_", " "), n])),
    );
  });
}

/** The filters as the API takes them (times as RFC 3339 in UTC). */
function filters() {
  const f = values(document.getElementById("audit-filters"));
  for (const name of ["from", "to"]) if (f[name]) f[name] = new Date(f[name]).toISOString();
  return f;
}

const columns = [
  ["Seq", (r) => r.seq],
  ["Time", (r) => when(r.timestamp)],
  ["Event", (r) => r.event_type],
  ["Actor", (r) => (r.actor ? `${r.actor.type}:${r.actor.id ?? ""}` : "")],
  ["Decision", (r) => r.decision],
  ["Action", (r) => r.action],
  ["Resource", (r) => r.resource],
];

async function load(fresh) {
  await attempt("audit-status", async () => {
    const query = new URLSearchParams({ limit: "50", ...filters() });
    if (!fresh && cursor) query.set("cursor", cursor);
    const page = await call("GET", `${api}/audit?${query}`);
    if (fresh) shown = [];
    shown.push(...page.items);
    const holder = document.getElementById("records-table");
    put(holder, table("Audit records, newest first", columns, shown, open));
    holder.querySelector("tbody").id = "records";
    cursor = page.next_cursor;
    document.getElementById("audit-more").hidden = !cursor;
    if (!shown.length) add(holder, h("p", {}, "No records match."));
    await verify();
  });
}

async function verify() {
  const badge = document.getElementById("chain");
  if (!shown.length) {
    badge.textContent = "";
    return;
  }
  const seqs = shown.map((r) => r.seq);
  const from = Math.min(...seqs);
  const to = Math.max(...seqs);
  const v = await call("GET", `${api}/audit/verify?from_seq=${from}&to_seq=${to}`);
  badge.className = v.valid ? "ok" : "broken";
  badge.textContent = v.valid ? `Chain verified: records ${from} to ${to} (${v.checked} checked)` : `Chain broken at record ${v.first_invalid_seq} (${v.fault})`;
}

/** One record in full; a policy decision opens its own view. */
function open(record) {
  if (record.event_type === "policy.decision") {
    location.hash = `#decision/${record.id}`;
    return;
  }
  const pane = document.getElementById("record");
  pane.hidden = false;
  put(pane,
    h("h3", { tabindex: "-1", id: "record-title" }, `Record ${record.seq}: ${record.event_type}`),
    fields([
      ["Id", record.id],
      ["Time", when(record.timestamp)],
      ["Actor", record.actor],
      ["Origin", record.origin],
      ["Agent", record.agent_id],
      ["Action", record.action],
      ["Resource", record.resource],
      ["Decision", record.decision],
      ["Risk score", record.risk_score],
      ["Details", record.details],
      ["Previous hash", record.prev_hash],
      ["Hash", record.hash],
    ]),
  );
  document.getElementById("record-title").focus();
}

async function exportLog(format) {
  const bar = document.getElementById("export-progress");
  await attempt("export-status", async () => {
    const job = await call("POST", `${api}/audit/export/async`, { format, filters: filters() });
    bar.hidden = false;
    for (let current = job; ; ) {
      bar.value = current.progress || 0;
      say("export-status", `${current.status}: ${current.rows ?? 0} records`);
      if (current.status === "completed") {
        const link = h("a", { href: `${api}/audit/export/download/${current.id}`, download: `audit.${format}` }, `Download (${current.rows} records, ${current.bytes} bytes)`);
        put(document.getElementById("export-status"), link);
        return;
      }
      if (current.status === "failed") throw new Error(`The export failed: ${current.error}`);
      await new Promise((resolve) => setTimeout(resolve, 500));
      current = await call("GET", `${api}/audit/export/status/${current.id}`);
    }
  });
}

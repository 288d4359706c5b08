// Anomalies: reports over time and by severity, the list with filters, and the label an
// analyst gives a report (the detector learns from it).

import { add, api, atLeast, attempt, bars, call, fields, h, put, say, select, status, table, values, when } from "./core.js";

let cursor = null;
let rows = [];

export const view = {
  id: "anomalies",
  title: "Anomalies",
  role: "viewer",
  async render(into) {
    const filters = h(
      "form",
      { id: "anomaly-filters", class: "filters" },
      select("Status", "status", [["", "any"], ["open", "open"], ["acknowledged", "acknowledged"], ["resolved", "resolved"], ["false_positive", "false positive"]], "open"),
      select("Severity", "severity", [["", "any"], ["low", "low"], ["medium", "medium"], ["high", "high"], ["critical", "critical"]], ""),
      h("button", { type: "submit" }, "Filter"),
    );
    filters.addEventListener("submit", (e) => {
      e.preventDefault();
      list(true);
    });
    add(into, h("h2", { id: "anomalies-title" }, "Anomalies"), h("div", { id: "anomaly-stats", class: "charts" }), filters, status("anomalies-status"), h("div", { id: "anomalies-list" }), h("button", { type: "button", id: "anomalies-more", hidden: true, onclick: () => list(false) }, "Load more"));
    await Promise.all([stats(), list(true)]);
  },
  onEvent(event) {
    if (event.type === "anomaly.detected" && document.getElementById("anomalies-list")) {
      stats();
      list(true);
    }
  },
};

async function stats() {
  await attempt("anomalies-status", async () => {
    const s = await call("GET", `${api}/anomalies/stats?bucket=hour`);
    put(document.getElementById("anomaly-stats"),
      fields([["Reports in 24 h", s.total]]),
      bars("Reports per hour, last 24 hours", s.series.map((p) => [new Date(p.start).getHours().toString(), p.count])),
      bars("Reports by severity, last 24 hours", Object.entries(s.by_severity)),
    );
  });
}

async function list(fresh) {
  await attempt("anomalies-status", async () => {
    const query = new URLSearchParams({ limit: "50", ...values(document.getElementById("anomaly-filters")) });
    if (!fresh && cursor) query.set("cursor", cursor);
    const page = await call("GET", `${api}/anomalies?${query}`);
    rows = fresh ? page.items : rows.concat(page.items);
    cursor = page.next_cursor;
    const columns = [
      ["Time", (a) => when(a.created_at)],
      ["Agent", (a) => h("a", { href: `#agents/${a.agent_id}` }, a.agent_id)],
      ["Type", (a) => a.type],
      ["Severity", (a) => `${a.severity} (${a.score})`],
      ["Description", (a) => a.description],
      ["Status", (a) => a.status],
    ];
    if (atLeast("analyst")) columns.push(["Label", (a) => label(a)]);
    put(document.getElementById("anomalies-list"), rows.length ? table("Anomaly reports, newest first", columns, rows) : h("p", {}, "No reports match."));
    document.getElementById("anomalies-more").hidden = !cursor;
  });
}

function label(a) {
  const choice = h(
    "select",
    { "aria-label": `Status of the report on ${a.agent_id} at ${when(a.created_at)}` },
    ["open", "acknowledged", "resolved", "false_positive"].map((s) => h("option", { value: s, selected: s === a.status }, s.replace("_", " "))),
  );
  choice.addEventListener("change", () =>
    attempt("anomalies-status", async () => {
      await call("PUT", `${api}/anomalies/${a.id}`, { status: choice.value });
      say("anomalies-status", `Marked ${choice.value.replace("_", " ")}.`);
    }),
  );
  return choice;
}

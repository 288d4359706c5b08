// Agents: the list (type, risk, status, last heartbeat) with filters, semantic search,
// one agent's details with its risk factors and nearest neighbours, suspend / reactivate.

import { add, api, atLeast, attempt, bars, button, call, fields, h, input, put, say, select, status, table, values, when } from "./core.js";

let cursor = null;
let rows = [];

export const view = {
  id: "agents",
  title: "Agents",
  role: "viewer",
  async render(into, id) {
    const filters = h(
      "form",
      { id: "agent-filters", class: "filters" },
      select("Status", "status", [["", "any"], ["active", "active"], ["inactive", "inactive"], ["suspended", "suspended"]], ""),
      select("Risk", "risk", [["", "any"], ["low", "low"], ["medium", "medium"], ["high", "high"], ["critical", "critical"]], ""),
      input("Type", "type"),
      h("button", { type: "submit" }, "Filter"),
    );
    filters.addEventListener("submit", (e) => {
      e.preventDefault();
      list(true);
    });
    const search = h("form", { id: "agent-search", class: "filters", role: "search" }, input("Search by meaning", "q", { placeholder: "agents that move money" }), h("button", { type: "submit" }, "Search"));
    search.addEventListener("submit", (e) => {
      e.preventDefault();
      find(values(search).q);
    });
    add(into,
      h("h2", { id: "agents-title" }, "Agents"),
      search,
      filters,
      status("agents-status"),
      h("div", { id: "agents-list" }),
      button("Load more", () => list(false), { id: "agents-more", hidden: true }),
      h("div", { id: "agents-chart" }),
      h("section", { id: "agent", "aria-label": "Agent", hidden: true }),
    );
    await list(true);
    if (id) await details(id);
  },
  onEvent(event) {
    if (event.type.startsWith("agent.") && document.getElementById("agents-list")) list(true);
  },
};

const columns = [
  ["Name", (a) => a.name],
  ["Type", (a) => `${a.type} (predicted ${a.predicted_type})`],
  ["Risk", (a) => `${a.risk} (${a.risk_score})`],
  ["Status", (a) => a.status],
  ["Last heartbeat", (a) => (a.last_seen_at ? when(a.last_seen_at) : "never")],
];

async function list(fresh) {
  await attempt("agents-status", async () => {
    const query = new URLSearchParams({ limit: "50", ...values(document.getElementById("agent-filters")) });
    if (!fresh && cursor) query.set("cursor", cursor);
    const page = await call("GET", `${api}/agents?${query}`);
    rows = fresh ? page.items : rows.concat(page.items);
    cursor = page.next_cursor;
    put(document.getElementById("agents-list"), rows.length ? table("Agents, newest first", columns, rows, (a) => (location.hash = `#agents/${a.id}`)) : h("p", {}, "No agents match."));
    document.getElementById("agents-more").hidden = !cursor;
    const levels = ["low", "medium", "high", "critical"];
    put(document.getElementById("agents-chart"), bars("Risk distribution of the agents listed", levels.map((l) => [l, rows.filter((a) => a.risk === l).length])));
  });
}

async function find(q) {
  if (!q) return list(true);
  await attempt("agents-status", async () => {
    const found = await call("GET", `${api}/agents/search?${new URLSearchParams({ q, limit: "20" })}`);
    rows = found.items;
    cursor = null;
    document.getElementById("agents-more").hidden = true;
    const ranked = [["Score", (a) => a.score.toFixed(3)], ...columns];
    put(document.getElementById("agents-list"), table(`Agents ranked for “${q}”`, [columns[0], ...ranked.filter((c) => c !== columns[0])], rows, (a) => (location.hash = `#agents/${a.id}`)));
    say("agents-status", rows.length ? `${rows.length} found (${found.model})` : "Nothing matches.");
  });
}

async function details(id) {
  const pane = document.getElementById("agent");
  await attempt("agents-status", async () => {
    const a = await call("GET", `${api}/agents/${id}/details`);
    pane.hidden = false;
    const controls = atLeast("analyst")
      ? h(
          "div",
          { class: "actions" },
          a.status === "suspended" ? button("Reactivate", () => setStatus(a, "active")) : button("Suspend", () => setStatus(a, "suspended")),
        )
      : null;
    put(pane,
      h("h3", { id: "agent-title", tabindex: "-1" }, a.name),
      controls,
      fields([
        ["Id", a.id],
        ["Type", `${a.type} (predicted ${a.predicted_type}, confidence ${a.predicted_type_confidence})`],
        ["Status", a.status],
        ["Risk", `${a.risk} (${a.risk_score})`],
        ["Description", a.description],
        ["Capabilities", (a.capabilities || []).join(", ")],
        ["Permissions", a.permissions],
        ["Last heartbeat", a.last_seen_at ? when(a.last_seen_at) : "never"],
      ]),
      h("h4", {}, "Risk factors"),
      table("Risk factors, strongest first", [["Factor", (f) => f.code], ["Weight", (f) => f.weight], ["Evidence", (f) => f.evidence], ["Reason", (f) => f.reason]], a.risk_factors || []),
      h("h4", {}, "Nearest agents"),
      h("ul", {}, ((a.embedding && a.embedding.neighbours) || []).map((n) => h("li", {}, h("a", { href: `#agents/${n.id}` }, n.name), ` (${n.score.toFixed(3)})`))),
    );
    document.getElementById("agent-title").focus();
  });
}

/** Suspends or reactivates: `PUT /agents/{id}` with the agent as it is and the new status. */
async function setStatus(a, next) {
  await attempt("agents-status", async () => {
    const body = { name: a.name, type: a.type, description: a.description, capabilities: a.capabilities, permissions: a.permissions, metadata: a.metadata, status: next };
    await call("PUT", `${api}/agents/${a.id}`, body);
    await list(true);
    await details(a.id);
    say("agents-status", `${a.name} is ${next === "active" ? "active again" : "suspended"}.`);
  });
}

// Discovery: shadow-agent candidates with their evidence (fingerprint, sample events);
// confirm (registers the agent, under another name if asked) or dismiss with a reason; start a
// clustering run.

import { add, api, atLeast, attempt, button, call, fields, h, put, say, select, status, table, values, when } from "./core.js";

export const view = {
  id: "discovery",
  title: "Discovery",
  role: "viewer",
  async render(into) {
    const filter = h("form", { id: "candidate-filters", class: "filters" }, select("Status", "status", [["pending", "pending"], ["confirmed", "confirmed"], ["dismissed", "dismissed"], ["", "any"]], "pending"), h("button", { type: "submit" }, "Show"));
    filter.addEventListener("submit", (e) => {
      e.preventDefault();
      list();
    });
    add(into,
      h("h2", { id: "discovery-title" }, "Shadow-agent discovery"),
      filter,
      atLeast("analyst") ? button("Cluster recent activity now", cluster) : null,
      status("discovery-status"),
      h("ul", { id: "candidates", class: "cards" }),
    );
    await list();
  },
  onEvent(event) {
    if (event.type.startsWith("discovery.") && document.getElementById("candidates")) list();
  },
};

async function list() {
  await attempt("discovery-status", async () => {
    const query = new URLSearchParams({ limit: "50", ...values(document.getElementById("candidate-filters")) });
    const page = await call("GET", `${api}/discovery/candidates?${query}`);
    put(document.getElementById("candidates"), ...(page.items.length ? page.items.map(card) : [h("li", {}, "No candidates.")]));
  });
}

function card(c) {
  const evidence = Object.entries(c.fingerprint || {}).map(([field, vals]) => [field, vals.map((v) => `${v.value} (${Math.round(v.share * 100)} %)`).join(", ")]);
  const li = h(
    "li",
    { dataset: { id: c.id } },
    h("h3", {}, `${c.suggested_name} (${c.suggested_type})`),
    fields([
      ["Status", c.status],
      ["Confidence", c.confidence],
      ["Events", `${c.event_count}, ${when(c.first_seen)} to ${when(c.last_seen)}`],
      ["Capabilities", c.capabilities.join(", ")],
      ...evidence,
      ["Decided", c.decided_by ? `${c.decided_by.type}:${c.decided_by.id ?? ""}, ${when(c.decided_at)}${c.reason ? ` — ${c.reason}` : ""}` : ""],
    ]),
    h(
      "details",
      {},
      h("summary", {}, `Sample events (${c.sample_events.length})`),
      table("Sample events", [["Time", (e) => when(e.timestamp)], ["Source", (e) => e.source], ["Host", (e) => e.host], ["Process", (e) => e.process], ["Endpoint", (e) => e.endpoint], ["Model", (e) => e.model]], c.sample_events),
    ),
  );
  if (atLeast("analyst") && c.status === "pending") {
    const name = h("input", { type: "text", value: c.suggested_name, "aria-label": `Name to register ${c.suggested_name} under` });
    const reason = h("input", { type: "text", placeholder: "Reason (optional)", "aria-label": `Reason to dismiss ${c.suggested_name}` });
    add(li,
      h(
        "div",
        { class: "actions" },
        name,
        button("Confirm and register", () =>
          attempt("discovery-status", async () => {
            const agent = await call("POST", `${api}/discovery/candidates/${c.id}/confirm`, { name: name.value.trim() || c.suggested_name });
            say("discovery-status", `Registered ${agent.name}.`);
            await list();
          }),
        ),
        reason,
        button("Dismiss", () =>
          attempt("discovery-status", async () => {
            await call("POST", `${api}/discovery/candidates/${c.id}/dismiss`, reason.value.trim() ? { reason: reason.value.trim() } : {});
            say("discovery-status", `Dismissed ${c.suggested_name}.`);
            await list();
          }),
        ),
      ),
    );
  }
  return li;
}

async function cluster() {
  await attempt("discovery-status", async () => {
    let job = await call("POST", `${api}/discovery/cluster`);
    while (job.status === "queued" || job.status === "running") {
      say("discovery-status", `Clustering: ${job.status} (${Math.round((job.progress || 0) * 100)} %)`);
      await new Promise((resolve) => setTimeout(resolve, 500));
      job = await call("GET", `${api}/discovery/cluster/${job.id}`);
    }
    const s = job.summary || {};
    say("discovery-status", job.status === "completed" ? `Clustered ${s.events} events: ${s.candidates_created} new, ${s.candidates_updated} updated.` : `Clustering ${job.status}: ${job.error || ""}`);
    await list();
  });
}

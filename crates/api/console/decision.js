// One policy decision (`#decision/<audit record id>`): what the policies were asked, each
// policy's outcome, the risk factors, the anomaly flag, the approval it opened; and
// "re-check now", the same check as a dry run (nothing recorded, no approval opened).

import { add, api, atLeast, attempt, button, call, fields, h, put, status, table, when } from "./core.js";

export const view = {
  id: "decision",
  title: "Decision",
  role: "viewer",
  hidden: true,
  async render(into, id) {
    add(into, h("h2", { id: "decision-title" }, "Decision"), status("decision-status"));
    await attempt("decision-status", async () => {
      const record = await call("GET", `${api}/audit/${id}`);
      if (record.event_type !== "policy.decision") throw new Error(`Record ${record.seq} is a ${record.event_type}, not a policy decision.`);
      const d = record.details || {};
      const risk = d.risk_factors || [];
      add(into,
        fields([
          ["Decision", record.decision],
          ["Reason", d.reason],
          ["Risk score", record.risk_score],
          ["Anomaly", d.anomaly ? "yes: the detector found this action unusual for the agent" : "no"],
          ["Time", when(record.timestamp)],
          ["Asked by", record.actor],
          ["Agent", h("a", { href: `#agents/${record.agent_id}` }, record.agent_id)],
          ["Action", record.action],
          ["Resource", record.resource],
          ["Context", d.context || {}],
          ["Session", d.session_id],
          ["Tool call", d.tool_call_id],
          ["Policies evaluated", d.policies_evaluated],
        ]),
        h("h3", {}, "Each policy's outcome"),
        (d.matched_policies || []).length
          ? table("Policies that matched", [["Policy", (p) => h("a", { href: `#policies/${p.id}` }, p.name)], ["Version", (p) => p.version], ["Effect", (p) => p.effect], ["Messages", (p) => p.messages.join("; ")]], d.matched_policies)
          : h("p", {}, "No policy matched: every evaluated policy allowed it."),
        h("h3", {}, "Risk factors"),
        risk.length ? table("Risk factors", [["Factor", (f) => f.code], ["Weight", (f) => f.weight], ["Evidence", (f) => f.evidence], ["Reason", (f) => f.reason]], risk) : h("p", {}, "None."),
        h("h3", {}, "Approval"),
        h("div", { id: "decision-approval" }, d.required_approval ? "Looking for the approval it opened…" : "No approval was asked for."),
        atLeast("analyst") ? h("div", {}, button("Re-check now (dry run)", () => recheck(record)), h("div", { id: "recheck", role: "status" })) : null,
      );
      if (d.required_approval) await approval(record);
    });
  },
};

/** The approval this check opened: the `hitl.requested` record that names it. */
async function approval(record) {
  const holder = document.getElementById("decision-approval");
  const from = record.timestamp;
  const to = new Date(new Date(record.timestamp).getTime() + 60_000).toISOString();
  const query = new URLSearchParams({ event_type: "hitl.requested", agent_id: record.agent_id, from, to, limit: "100" });
  const opened = (await call("GET", `${api}/audit?${query}`)).items.find((r) => r.details && r.details.decision_id === record.id);
  if (!opened) {
    holder.textContent = "None was opened (an approval was already pending, or the request failed).";
    return;
  }
  const request = await call("GET", `${api}/hitl/status/${opened.details.hitl_request_id}`).catch(() => null);
  put(holder,
    request
      ? fields([
          ["Request", request.id],
          ["Status", request.status],
          ["Decided by", request.decided_by],
          ["Decided at", when(request.decided_at)],
          ["Comment", request.comment],
          ["Expires", when(request.expires_at)],
        ])
      : h("p", {}, `Request ${opened.details.hitl_request_id}`),
  );
}

async function recheck(record) {
  const out = document.getElementById("recheck");
  await attempt("recheck", async () => {
    const body = { agent_id: record.agent_id, action: record.action, resource: record.resource, context: (record.details || {}).context || {}, dry_run: true };
    const r = await call("POST", `${api}/policies/check`, body);
    const verdict = r.allowed ? "allowed" : r.required_approval ? "would need approval" : "denied";
    put(out,
      h("p", {}, `Now: ${verdict} (risk ${r.risk} ${r.risk_score}). ${r.reason}`),
      r.matched_policies.length ? h("ul", {}, r.matched_policies.map((p) => h("li", {}, `${p.name} v${p.version}: ${p.effect}`))) : null,
    );
  });
}

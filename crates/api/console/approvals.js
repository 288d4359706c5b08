// Approvals: the pending queue, kept current by the feed (opened, decided elsewhere, expired).
// Analysts and above read `GET /hitl/pending` and decide; a viewer, whom the API gives no
// queue and no decision, sees the same requests read-only, gathered from what a viewer may
// read (the `hitl.requested` audit records and `GET /hitl/status/{id}`).

import { add, api, atLeast, attempt, button, call, fields, h, put, say, session, status, when } from "./core.js";

const decided = [];
let root = null;

export const view = {
  id: "approvals",
  title: "Approvals",
  role: "viewer",
  render(into) {
    root = into;
    add(into,
      h("h2", { id: "approvals-title" }, "Pending approvals"),
      status("approvals-status"),
      h("ul", { id: "queue", class: "cards" }),
      h("h3", {}, "Decided while you watched"),
      h("ul", { id: "decided", class: "plain" }),
    );
    renderDecided();
    return load();
  },
  onEvent(event) {
    if (!event.type.startsWith("hitl.")) return;
    // An escalation leaves the request pending: the queue shows it, not the decided list.
    if (event.type !== "hitl.requested" && event.type !== "hitl.escalated" && event.data) {
      decided.unshift(event.data);
      decided.splice(20);
    }
    if (root && root.isConnected) {
      renderDecided();
      load();
    }
  },
};

function renderDecided() {
  const list = document.getElementById("decided");
  if (!list) return;
  put(list,
    ...decided.map((r) => {
      const by = r.decided_by ? `${r.decided_by.type}:${r.decided_by.id ?? ""}` : "the system";
      return h("li", { dataset: { id: r.id } }, `${r.status}: ${r.action} on ${r.resource} (${r.agent_name}) by ${by}, ${when(r.decided_at || r.updated_at)}`, r.comment ? ` — “${r.comment}”` : "");
    }),
  );
  if (!decided.length) add(list, h("li", {}, "Nothing yet."));
}

async function load() {
  await attempt("approvals-status", async () => {
    const items = atLeast("analyst") ? (await call("GET", `${api}/hitl/pending?limit=100`)).items : await readOnlyQueue();
    const queue = document.getElementById("queue");
    if (queue) put(queue, ...items.map(card));
    const note = atLeast("analyst") ? "" : "Read-only: deciding needs the analyst role. ";
    say("approvals-status", note + (items.length ? "" : "Nothing is waiting for a decision."));
  });
}

/** A viewer's queue: requests opened in the last week still pending, oldest first. */
async function readOnlyQueue() {
  const from = new Date(Date.now() - 7 * 24 * 3600 * 1000).toISOString();
  const query = new URLSearchParams({ event_type: "hitl.requested", from, limit: "100" });
  const records = (await call("GET", `${api}/audit?${query}`)).items;
  const open = records.filter((r) => r.details && new Date(r.details.expires_at) > new Date());
  const requests = await Promise.all(open.map((r) => call("GET", `${api}/hitl/status/${r.details.hitl_request_id}`).catch(() => null)));
  return requests.filter((r) => r && r.status === "pending").reverse();
}

function left(expires) {
  const seconds = Math.round((new Date(expires) - Date.now()) / 1000);
  if (seconds <= 0) return "expired";
  if (seconds < 120) return `${seconds} s left`;
  if (seconds < 7200) return `${Math.round(seconds / 60)} min left`;
  return `${Math.round(seconds / 3600)} h left`;
}

/** The request's last escalation step, when it took one (the tenant's chain). */
function escalated(request) {
  const e = request.escalation;
  if (!e || !e.level) return [];
  return [["Escalated", `to ${e.role} (step ${e.level} of ${e.steps.length}), ${when(e.escalated_at)}`]];
}

function card(request) {
  const why = h("details", {}, h("summary", {}, "Risk factors and the policies that asked"));
  why.addEventListener("toggle", () => explain(why, request), { once: true });
  const li = h(
    "li",
    { dataset: { id: request.id } },
    fields([
      ["Agent", request.agent_name],
      ["Action", request.action],
      ["Resource", request.resource],
      ["Risk", `${request.risk} (${request.risk_score})`],
      ["Reason", request.reason],
      ["Context", request.context],
      ["Requested by", `${request.requested_by.type}:${request.requested_by.id ?? ""}`],
      ["Time left", `${left(request.expires_at)} (until ${when(request.expires_at)})`],
      ...escalated(request),
    ]),
    why,
  );
  if (!atLeast("analyst")) return li;
  const comment = h("input", { type: "text", placeholder: "Reason (optional)", "aria-label": `Reason for the decision on ${request.action}` });
  const decide = (verb) => async () => {
    await attempt("approvals-status", async () => {
      const body = comment.value.trim() ? { comment: comment.value.trim() } : undefined;
      const done = await call("POST", `${api}/hitl/${verb}/${request.id}`, body);
      li.remove();
      say("approvals-status", `${verb === "approve" ? "Approved" : "Rejected"}: ${request.action} by ${session.user.email}, ${when(done.decided_at)}`);
    });
  };
  add(li, h("div", { class: "actions" }, comment, button("Approve", decide("approve")), button("Reject", decide("reject"))));
  return li;
}

/** The check that asked for approval: its risk factors and each policy's outcome. */
async function explain(into, request) {
  if (!request.decision_id) {
    add(into, h("p", {}, "Asked for directly, not by a policy check."));
    return;
  }
  try {
    const record = await call("GET", `${api}/audit/${request.decision_id}`);
    const d = record.details || {};
    add(into,
      h("h4", {}, "Policies"),
      h("ul", {}, (d.matched_policies || []).map((p) => h("li", {}, `${p.name} v${p.version}: ${p.effect}`, p.messages.length ? ` — ${p.messages.join("; ")}` : ""))),
      h("h4", {}, "Risk factors"),
      h("ul", {}, (d.risk_factors || []).map((f) => h("li", {}, `${f.code} (${f.weight}): ${f.reason}`))),
      h("a", { href: `#decision/${request.decision_id}` }, "Open the decision"),
    );
  } catch (e) {
    add(into, h("p", {}, e.message));
  }
}

// Policies: the list, the templates, an editor whose validation errors point at their line
// and column, enable / disable, and "try a check" (one policy, nothing recorded). Editing is
// for admins, as in the API; everyone else reads.

import { add, api, atLeast, attempt, button, call, fields, h, input, put, say, status, table, values, when } from "./core.js";

let policies = [];

export const view = {
  id: "policies",
  title: "Policies",
  role: "viewer",
  async render(into, id) {
    add(into,
      h("h2", { id: "policies-title" }, "Policies"),
      status("policies-status"),
      atLeast("admin") ? button("New policy", () => edit(null)) : null,
      h("div", { id: "policies-list" }),
      h("section", { id: "policy", "aria-label": "Policy", hidden: true }),
      h("h3", {}, "Templates"),
      h("div", { id: "templates" }),
    );
    await Promise.all([list(), templates()]);
    if (id) {
      const p = policies.find((x) => x.id === id) || (await call("GET", `${api}/policies/${id}`).catch(() => null));
      if (p) edit(p);
    }
  },
  onEvent(event) {
    if (event.type === "policy.changed" && document.getElementById("policies-list")) list();
  },
};

async function list() {
  await attempt("policies-status", async () => {
    policies = (await call("GET", `${api}/policies?limit=100`)).items;
    const columns = [
      ["Name", (p) => p.name],
      ["Version", (p) => p.version],
      ["Enabled", (p) => (p.enabled ? "yes" : "no")],
      ["Updated", (p) => when(p.updated_at)],
      ["Description", (p) => p.description],
    ];
    if (atLeast("admin")) columns.push(["", (p) => button(p.enabled ? `Disable ${p.name}` : `Enable ${p.name}`, () => save(p, { enabled: !p.enabled }))]);
    put(document.getElementById("policies-list"), policies.length ? table("Policies", columns, policies, (p) => (location.hash = `#policies/${p.id}`)) : h("p", {}, "No policies: every check is allowed unless its risk needs approval."));
  });
}

async function templates() {
  await attempt("policies-status", async () => {
    const list = await call("GET", `${api}/policies/templates`);
    const use = (t) =>
      button(`Use ${t.name}`, () =>
        attempt("policies-status", async () => {
          const made = await call("POST", `${api}/policies`, { name: `${t.id}-${Date.now().toString(36)}`, description: t.description, template: { id: t.id } });
          await list();
          location.hash = `#policies/${made.id}`;
        }),
      );
    const columns = [["Template", (t) => t.name], ["What it does", (t) => t.description], ["Parameters", (t) => (t.parameters || []).map((p) => p.name).join(", ")]];
    if (atLeast("admin")) columns.push(["", use]);
    put(document.getElementById("templates"), table("Policy templates", columns, list.items || list));
  });
}

/** Sends the policy as it is with `changes` (a conditional update: 409 if someone else saved in between). */
async function save(p, changes) {
  return attempt("policies-status", async () => {
    const body = { name: p.name, description: p.description, rego: p.rego, enabled: p.enabled, version: p.version, ...changes };
    const saved = await call("PUT", `${api}/policies/${p.id}`, body);
    say("policies-status", `${saved.name} is now version ${saved.version}${saved.enabled ? "" : " (disabled)"}.`);
    await list();
    return saved;
  });
}

/** The editor (and, for readers, the source) of one policy; `p.id` absent for a new one. */
function edit(p) {
  const pane = document.getElementById("policy");
  pane.hidden = false;
  const admin = atLeast("admin");
  const source = h("textarea", { id: "rego", name: "rego", rows: "12", spellcheck: "false", readonly: !admin, "aria-describedby": "rego-error" });
  source.value = (p && p.rego) || "package tenant.example\nimport rego.v1\n\ndeny contains \"no deletions in production\" if {\n  input.action == \"delete\"\n  startswith(input.resource, \"prod/\")\n}\n";
  const form = h(
    "form",
    { id: "policy-form" },
    input("Name", "name", { value: (p && p.name) || "", required: true, readonly: !admin }),
    input("Description", "description", { value: (p && p.description) || "", readonly: !admin }),
    h("label", { for: "rego" }, "Rego"),
    source,
    h("p", { role: "alert", id: "rego-error" }),
    admin ? h("button", { type: "submit" }, p && p.id ? "Save" : "Create") : null,
  );
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const v = values(form);
    const shown = document.getElementById("rego-error");
    put(shown);
    try {
      const saved =
        p && p.id
          ? await call("PUT", `${api}/policies/${p.id}`, { name: v.name, description: v.description, rego: source.value, enabled: p.enabled, version: p.version })
          : await call("POST", `${api}/policies`, { name: v.name, description: v.description, rego: source.value, enabled: true });
      say("policies-status", `Saved ${saved.name}, version ${saved.version}.`);
      await list();
      edit(saved);
    } catch (err) {
      showError(source, err);
    }
  });
  put(pane,
    h("h3", { id: "policy-title", tabindex: "-1" }, p && p.id ? `${p.name} (version ${p.version})` : "New policy"),
    p && p.id ? fields([["Enabled", p.enabled ? "yes" : "no"], ["Created by", p.created_by], ["Updated", when(p.updated_at)]]) : null,
    form,
    p && p.id && admin ? tryCheck(p) : null,
  );
  document.getElementById("policy-title").focus();
}

/** A compile error at its line and column: said in words, the caret put there. */
function showError(source, err) {
  const shown = document.getElementById("rego-error");
  const e = (err.errors || []).find((x) => x.field === "rego" && x.line);
  if (!e) {
    shown.textContent = err.message;
    return;
  }
  const lines = source.value.split("\n");
  const offending = lines[e.line - 1] ?? "";
  put(shown, `Line ${e.line}, column ${e.column ?? 1}: ${e.message}`, h("pre", { class: "offending" }, `${e.line} | ${offending}\n${" ".repeat(String(e.line).length)} | ${" ".repeat(Math.max((e.column ?? 1) - 1, 0))}^`));
  const at = lines.slice(0, e.line - 1).reduce((n, l) => n + l.length + 1, 0) + Math.max((e.column ?? 1) - 1, 0);
  source.focus();
  source.setSelectionRange(at, at);
  shown.scrollIntoView({ block: "nearest" });
}

/** "Try a check": this policy alone against a check's body (`POST /policies/{id}/test`). */
function tryCheck(p) {
  const form = h(
    "form",
    { id: "try-check", class: "filters" },
    input("Agent id", "agent_id", { required: true }),
    input("Action", "action", { required: true, value: "delete" }),
    input("Resource", "resource", { required: true, value: "prod/db" }),
    h("label", {}, "Context (JSON) ", h("input", { name: "context", value: "{}" })),
    h("button", { type: "submit" }, "Try"),
  );
  const out = h("div", { id: "try-result", role: "status" });
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    attempt("try-result", async () => {
      const v = values(form);
      let context = {};
      try {
        context = JSON.parse(v.context || "{}");
      } catch {
        throw new Error("The context is not valid JSON.");
      }
      const r = await call("POST", `${api}/policies/${p.id}/test`, { agent_id: v.agent_id, action: v.action, resource: v.resource, context });
      const verdict = r.allowed ? "allowed" : r.required_approval ? "needs approval" : "denied";
      put(out, h("p", {}, `${verdict}: ${r.reason} (risk ${r.risk} ${r.risk_score})`));
    });
  });
  return h("div", {}, h("h4", {}, "Try a check against this policy (nothing is recorded)"), form, out);
}

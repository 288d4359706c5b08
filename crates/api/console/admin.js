// Administration: users (admins), API keys (everyone: their own; admins: the tenant's) and
// the tenant's settings (everyone reads, admins change).

import { add, api, atLeast, attempt, button, call, fields, h, input, put, say, select, session, status, table, values, when } from "./core.js";

const roles = ["viewer", "analyst", "admin", "super_admin"];

export const users = {
  id: "users",
  title: "Users",
  role: "admin",
  async render(into) {
    const form = h(
      "form",
      { id: "new-user", class: "filters" },
      input("E-mail", "email", { type: "email", required: true, autocomplete: "off" }),
      input("Name", "name"),
      input("Initial password", "password", { type: "password", required: true, minlength: "12", autocomplete: "new-password" }),
      select("Role", "role", roles.map((r) => [r, r]), "viewer"),
      h("button", { type: "submit" }, "Add user"),
    );
    form.addEventListener("submit", (e) => {
      e.preventDefault();
      attempt("users-status", async () => {
        const u = await call("POST", `${api}/users`, values(form));
        form.reset();
        say("users-status", `Added ${u.email}.`);
        await listUsers();
      });
    });
    add(into, h("h2", { id: "users-title" }, "Users"), form, status("users-status"), h("div", { id: "users-list" }));
    await listUsers();
  },
};

async function listUsers() {
  await attempt("users-status", async () => {
    const page = await call("GET", `${api}/users?limit=200`);
    const role = (u) => {
      const choice = h("select", { "aria-label": `Role of ${u.email}` }, roles.map((r) => h("option", { value: r, selected: r === u.role }, r)));
      choice.addEventListener("change", () =>
        attempt("users-status", async () => {
          await call("PUT", `${api}/users/${u.id}/role`, { role: choice.value });
          say("users-status", `${u.email} is now ${choice.value}.`);
        }),
      );
      return choice;
    };
    const block = (u) =>
      button(u.status === "blocked" ? `Unblock ${u.email}` : `Block ${u.email}`, () =>
        attempt("users-status", async () => {
          await call("POST", `${api}/users/${u.id}/${u.status === "blocked" ? "unblock" : "block"}`);
          await listUsers();
        }),
      );
    const columns = [
      ["E-mail", (u) => u.email],
      ["Name", (u) => u.name],
      ["Role", (u) => (u.id === session.user.id ? u.role : role(u))],
      ["Status", (u) => u.status],
      ["Last sign-in", (u) => when(u.last_login_at)],
      ["", (u) => (u.id === session.user.id ? "you" : block(u))],
    ];
    put(document.getElementById("users-list"), table("Users of the tenant", columns, page.items));
  });
}

export const keys = {
  id: "keys",
  title: "API keys",
  role: "viewer",
  async render(into) {
    const form = h("form", { id: "new-key", class: "filters" }, input("Name", "name", { required: true }), input("Permissions (comma-separated; empty: all of your role's)", "permissions"), h("button", { type: "submit" }, "Create key"));
    form.addEventListener("submit", (e) => {
      e.preventDefault();
      attempt("keys-status", async () => {
        const v = values(form);
        const body = { name: v.name };
        if (v.permissions) body.permissions = v.permissions.split(",").map((p) => p.trim()).filter(Boolean);
        const made = await call("POST", `${api}/api-keys`, body);
        form.reset();
        // The secret is shown this once, in the page only (never in the address or storage).
        put(document.getElementById("new-secret"), h("p", {}, "Copy the key now; it is not shown again: "), h("code", {}, made.api_key));
        await listKeys();
      });
    });
    add(into, h("h2", { id: "keys-title" }, "API keys"), form, h("div", { id: "new-secret", role: "status" }), status("keys-status"), h("div", { id: "keys-list" }));
    await listKeys();
  },
};

async function listKeys() {
  await attempt("keys-status", async () => {
    const page = await call("GET", `${api}/api-keys?limit=200`);
    const items = (page.items || page).filter((k) => k.kind !== "session");
    const columns = [
      ["Name", (k) => k.name],
      ["Prefix", (k) => k.prefix],
      ["Permissions", (k) => k.permissions.join(", ")],
      ["Created", (k) => when(k.created_at)],
      ["Last used", (k) => when(k.last_used_at)],
      ["Expires", (k) => when(k.expires_at) || "never"],
      [
        "",
        (k) =>
          button(`Revoke ${k.name}`, () =>
            attempt("keys-status", async () => {
              await call("DELETE", `${api}/api-keys/${k.id}`);
              say("keys-status", `Revoked ${k.name}.`);
              await listKeys();
            }),
          ),
      ],
    ];
    put(document.getElementById("keys-list"), items.length ? table("API keys", columns, items) : h("p", {}, "No keys."));
  });
}

export const tenant = {
  id: "tenant",
  title: "Tenant",
  role: "viewer",
  async render(into) {
    add(into, h("h2", { id: "tenant-title" }, "Tenant settings"), status("tenant-status"), h("div", { id: "tenant-body" }));
    await showTenant();
  },
  onEvent(event) {
    if (event.type === "tenant.updated" && document.getElementById("tenant-body")) showTenant();
  },
};

async function showTenant() {
  await attempt("tenant-status", async () => {
    const t = await call("GET", `${api}/tenant`);
    const e = t.effective_settings;
    const body = document.getElementById("tenant-body");
    put(body, fields([["Name", t.name], ["Id", t.id], ["Chosen settings", t.settings], ["In effect", e], ["Updated", when(t.updated_at)]]));
    if (!atLeast("admin")) return;
    const num = (label, name, value, attrs) => input(label, name, { type: "number", step: "any", value: value ?? "", ...attrs });
    const form = h(
      "form",
      { id: "tenant-form" },
      input("Name", "name", { value: t.name, required: true }),
      num("Approval threshold (0 to 1)", "approval_threshold", e.approval_threshold, { min: "0", max: "1" }),
      num("Guard threshold (0 to 1; empty: each model's own)", "guard_threshold", t.settings.guard_threshold, { min: "0", max: "1" }),
      num("Approval timeout (seconds)", "hitl_timeout_secs", e.hitl_timeout_secs, { min: "1", max: "604800", step: "1" }),
      num("Risk level: medium from", "medium", e.risk_levels.medium, { min: "0", max: "1" }),
      num("Risk level: high from", "high", e.risk_levels.high, { min: "0", max: "1" }),
      num("Risk level: critical from", "critical", e.risk_levels.critical, { min: "0", max: "1" }),
      h("button", { type: "submit" }, "Save"),
    );
    // Only what was changed is sent: a setting left alone stays as it is (the server's default
    // stays a default), and one emptied returns to the default (`null`).
    const before = values(form);
    form.addEventListener("submit", (ev) => {
      ev.preventDefault();
      attempt("tenant-status", async () => {
        const now = values(form);
        const changed = (name) => (now[name] ?? "") !== (before[name] ?? "");
        const number = (name) => (now[name] === undefined ? null : Number(now[name]));
        const settings = {};
        for (const name of ["approval_threshold", "guard_threshold", "hitl_timeout_secs"]) {
          if (changed(name)) settings[name] = number(name);
        }
        if (["medium", "high", "critical"].some(changed)) {
          settings.risk_levels = ["medium", "high", "critical"].some((l) => now[l] === undefined)
            ? null
            : { medium: Number(now.medium), high: Number(now.high), critical: Number(now.critical) };
        }
        const body = {};
        if (changed("name")) body.name = now.name;
        if (Object.keys(settings).length) body.settings = settings;
        if (!Object.keys(body).length) return say("tenant-status", "Nothing changed.");
        await call("PATCH", `${api}/tenant`, body);
        await showTenant();
        say("tenant-status", "Saved.");
      });
    });
    add(body, h("h3", {}, "Change"), form);
  });
}

// Prompt Guard: recent blocked prompts (their redacted excerpts) with one-click feedback,
// verdicts over time, the detector's versions with train and rollback.

import { add, api, atLeast, attempt, bars, button, call, fields, h, put, say, status, table, when } from "./core.js";

export const view = {
  id: "guard",
  title: "Guard",
  role: "viewer",
  async render(into) {
    add(into,
      h("h2", { id: "guard-title" }, "Prompt Guard"),
      status("guard-status"),
      h("div", { id: "guard-stats", class: "charts" }),
      h("h3", {}, "Recently blocked"),
      h("div", { id: "blocked" }),
      h("h3", {}, "Detector versions"),
      atLeast("admin") ? h("div", { class: "actions" }, button("Train a new version from the feedback", train), h("progress", { id: "train-progress", max: "1", value: "0", hidden: true, "aria-label": "Training progress" })) : null,
      h("div", { id: "versions" }),
    );
    await Promise.all([stats(), blocked(), versions()]);
  },
  onEvent(event) {
    if (!document.getElementById("blocked")) return;
    if (event.type === "guard.blocked") blocked();
    if (event.type === "guard.model_changed") versions();
  },
};

async function stats() {
  await attempt("guard-status", async () => {
    const s = await call("GET", `${api}/guard/stats?window_hours=24`);
    const hours = (s.series || []).map((p) => [new Date(p.hour).getHours().toString(), p.total - (p.by_verdict.benign || 0)]);
    put(document.getElementById("guard-stats"),
      fields([
        ["Screened in 24 h", s.total],
        ["Blocked", `${s.blocked} (${(s.block_rate * 100).toFixed(1)} %)`],
        ["Latency p50 / p99", `${s.latency_ms_p50 ?? "–"} / ${s.latency_ms_p99 ?? "–"} ms`],
      ]),
      bars("Verdicts in the last 24 hours", ["benign", "injection", "jailbreak", "leakage"].map((v) => [v, s.by_verdict[v] || 0])),
      hours.length ? bars("Blocked prompts per hour, last 24 hours", hours) : null,
    );
  });
}

async function blocked() {
  await attempt("guard-status", async () => {
    const page = await call("GET", `${api}/audit?${new URLSearchParams({ event_type: "guard.blocked", limit: "25" })}`);
    const feedback = (r, label) =>
      button(label === "false_positive" ? "Not an attack" : "Confirm attack", () =>
        attempt("guard-status", async () => {
          await call("POST", `${api}/guard/detector/feedback`, { validation_id: r.id, label });
          say("guard-status", `Thank you: recorded as ${label === "false_positive" ? "a false positive" : "an attack"}.`);
        }),
      );
    const columns = [
      ["Time", (r) => when(r.timestamp)],
      ["Verdict", (r) => `${(r.details || {}).verdict ?? r.resource} (${r.risk_score})`],
      ["Excerpt (secrets redacted)", (r) => (r.details || {}).excerpt],
      ["Reasons", (r) => ((r.details || {}).reasons || []).join("; ")],
    ];
    if (atLeast("admin")) columns.push(["Feedback", (r) => h("span", { class: "actions" }, feedback(r, "false_positive"), feedback(r, "attack"))]);
    put(document.getElementById("blocked"), page.items.length ? table("Blocked prompts, newest first", columns, page.items) : h("p", {}, "Nothing blocked yet."));
  });
}

async function versions() {
  await attempt("guard-status", async () => {
    const list = await call("GET", `${api}/guard/detector/versions`);
    const columns = [
      ["Version", (v) => (v.version === 0 ? "0 (built in)" : v.version)],
      ["Active", (v) => (v.active ? "yes" : "")],
      ["Attack recall", (v) => v.metrics.attack_recall],
      ["False positives", (v) => v.metrics.false_positive_rate],
      ["Examples", (v) => v.examples],
      ["Trained", (v) => when(v.trained_at)],
    ];
    if (atLeast("admin")) columns.push(["", (v) => (v.active ? "" : button(`Roll back to ${v.version}`, () => rollback(v.version)))]);
    put(document.getElementById("versions"), table("Detector versions, newest first", columns, list.items || list));
  });
}

async function rollback(version) {
  await attempt("guard-status", async () => {
    await call("POST", `${api}/guard/detector/rollback/${version}`);
    say("guard-status", `Version ${version} is active.`);
    await versions();
  });
}

async function train() {
  const bar = document.getElementById("train-progress");
  await attempt("guard-status", async () => {
    let task = await call("POST", `${api}/guard/detector/train`);
    bar.hidden = false;
    while (task.status === "queued" || task.status === "running") {
      bar.value = task.progress || 0;
      say("guard-status", `Training: ${task.status}`);
      await new Promise((resolve) => setTimeout(resolve, 1000));
      task = await call("GET", `${api}/guard/detector/training/status?task_id=${task.task_id}`);
    }
    bar.hidden = true;
    say("guard-status", task.status === "completed" ? `Trained version ${task.version ?? ""}.` : `Training ${task.status}: ${task.error || ""}`);
    await versions();
  });
}

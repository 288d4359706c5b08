// The analyst console: plain ES module, no build step, nothing from a CDN. The session is an
// HttpOnly cookie the page never sees; state-changing requests echo the CSRF token the
// session endpoint gives. Every value from the API is written with textContent (never as HTML).

const api = "/api/v1";
let csrf = "";

const $ = (id) => document.getElementById(id);

function show(id, visible) {
  $(id).hidden = !visible;
}

async function call(method, path, body) {
  const headers = { Accept: "application/json" };
  if (method !== "GET") headers["X-CSRF-Token"] = csrf;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const res = await fetch(path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    credentials: "same-origin",
  });
  const text = await res.text();
  const data = text ? JSON.parse(text) : null;
  if (!res.ok) {
    const detail = data && data.detail ? data.detail : `${res.status} ${res.statusText}`;
    const error = new Error(detail);
    error.status = res.status;
    throw error;
  }
  return data;
}

// The live feed: the queue is read again whenever an approval is opened, decided, cancelled
// or expires anywhere (the socket carries the session cookie; same origin only).
let feed = null;
let retry = 1000;

function follow() {
  if (feed || !csrf) return;
  const scheme = location.protocol === "https:" ? "wss" : "ws";
  feed = new WebSocket(`${scheme}://${location.host}${api}/ws`);
  feed.addEventListener("open", () => {
    retry = 1000;
    feed.send(JSON.stringify({ type: "subscribe", events: ["hitl.*"] }));
  });
  feed.addEventListener("message", (message) => {
    const event = JSON.parse(message.data);
    if (typeof event.type === "string" && event.type.startsWith("hitl.")) loadQueue();
  });
  feed.addEventListener("close", () => {
    feed = null;
    if (csrf) setTimeout(follow, retry);
    retry = Math.min(retry * 2, 30000);
  });
}

function unfollow() {
  if (feed) {
    const socket = feed;
    feed = null;
    socket.close();
  }
}

// Views, one at a time, chosen by the address's fragment (#approvals, #audit).
const views = ["approvals", "audit"];

function route() {
  if (!csrf) return;
  const view = views.includes(location.hash.slice(1)) ? location.hash.slice(1) : "approvals";
  for (const v of views) show(v, v === view);
  for (const a of document.querySelectorAll("nav a")) {
    if (a.getAttribute("href") === `#${view}`) a.setAttribute("aria-current", "page");
    else a.removeAttribute("aria-current");
  }
  if (view === "approvals") loadQueue();
  if (view === "audit") loadAudit(true);
}

// The audit log: newest first, a page at a time, filtered; the shown range's hash chain
// verified and shown as a badge.
let auditCursor = null;
let shownSeqs = [];

function cell(text) {
  const td = document.createElement("td");
  td.textContent = text === null || text === undefined ? "" : String(text);
  return td;
}

async function loadAudit(fresh) {
  const form = new FormData($("audit-filters"));
  const query = new URLSearchParams({ limit: "50" });
  for (const name of ["event_type", "decision", "agent_id"]) {
    const value = String(form.get(name) || "").trim();
    if (value) query.set(name, value);
  }
  if (!fresh && auditCursor) query.set("cursor", auditCursor);
  try {
    const page = await call("GET", `${api}/audit?${query}`);
    if (fresh) {
      $("records").replaceChildren();
      shownSeqs = [];
    }
    for (const r of page.items) {
      const tr = document.createElement("tr");
      const actor = r.actor ? `${r.actor.type}:${r.actor.id ?? ""}` : "";
      tr.append(cell(r.seq), cell(new Date(r.timestamp).toLocaleString()), cell(r.event_type), cell(actor));
      tr.append(cell(r.decision), cell(r.action), cell(r.resource));
      $("records").append(tr);
      shownSeqs.push(r.seq);
    }
    auditCursor = page.next_cursor;
    $("audit-more").hidden = !auditCursor;
    $("audit-status").textContent = shownSeqs.length ? "" : "No records match.";
    await verifyShown();
  } catch (e) {
    if (e.status === 401) return signedOut();
    $("audit-status").textContent = e.message;
  }
}

async function verifyShown() {
  const badge = $("chain");
  if (!shownSeqs.length) {
    badge.textContent = "";
    return;
  }
  const from = Math.min(...shownSeqs);
  const to = Math.max(...shownSeqs);
  const v = await call("GET", `${api}/audit/verify?from_seq=${from}&to_seq=${to}`);
  badge.className = v.valid ? "ok" : "broken";
  badge.textContent = v.valid
    ? `Chain verified: records ${from} to ${to} (${v.checked} checked)`
    : `Chain broken at record ${v.first_invalid_seq}`;
}

function signedIn(session) {
  csrf = session.csrf_token;
  $("user").textContent = `${session.user.email} (${session.user.role})`;
  show("signin", false);
  show("nav", true);
  show("who", true);
  route();
  follow();
}

function signedOut() {
  csrf = "";
  unfollow();
  show("nav", false);
  show("who", false);
  for (const v of views) show(v, false);
  show("signin", true);
}

function field(dl, name, value) {
  const dt = document.createElement("dt");
  dt.textContent = name;
  const dd = document.createElement("dd");
  if (typeof value === "object" && value !== null) {
    const pre = document.createElement("pre");
    pre.textContent = JSON.stringify(value, null, 2);
    dd.append(pre);
  } else {
    dd.textContent = String(value);
  }
  dl.append(dt, dd);
}

function item(request) {
  const li = document.createElement("li");
  li.dataset.id = request.id;
  const dl = document.createElement("dl");
  field(dl, "Agent", request.agent_name);
  field(dl, "Action", request.action);
  field(dl, "Resource", request.resource);
  field(dl, "Risk", `${request.risk} (${request.risk_score})`);
  field(dl, "Reason", request.reason);
  field(dl, "Context", request.context);
  field(dl, "Expires", new Date(request.expires_at).toLocaleString());
  li.append(dl);
  const comment = document.createElement("input");
  comment.type = "text";
  comment.placeholder = "Reason (optional)";
  comment.setAttribute("aria-label", `Reason for the decision on ${request.action}`);
  const decide = (verb) => async () => {
    try {
      const body = comment.value.trim() ? { comment: comment.value.trim() } : undefined;
      await call("POST", `${api}/hitl/${verb}/${request.id}`, body);
      li.remove();
      $("approvals-status").textContent = `${verb === "approve" ? "Approved" : "Rejected"}: ${request.action}`;
    } catch (e) {
      $("approvals-status").textContent = e.message;
    }
  };
  const approve = document.createElement("button");
  approve.type = "button";
  approve.textContent = "Approve";
  approve.addEventListener("click", decide("approve"));
  const reject = document.createElement("button");
  reject.type = "button";
  reject.textContent = "Reject";
  reject.addEventListener("click", decide("reject"));
  li.append(comment, " ", approve, " ", reject);
  return li;
}

async function loadQueue() {
  try {
    const page = await call("GET", `${api}/hitl/pending?limit=100`);
    $("queue").replaceChildren(...page.items.map(item));
    $("approvals-status").textContent = page.items.length ? "" : "Nothing is waiting for a decision.";
  } catch (e) {
    if (e.status === 401) return signedOut();
    $("approvals-status").textContent = e.message;
  }
}

// Single sign-on: a button per configured provider; the provider sends the browser back to
// /console/?code=…&state=…, which the page trades for the session cookie.
async function providers() {
  let list = [];
  try {
    list = await call("GET", `${api}/auth/sso/providers`);
  } catch {
    return;
  }
  const back = `${location.origin}/console/`;
  $("sso").replaceChildren(
    ...list.map((provider) => {
      const button = document.createElement("button");
      button.type = "button";
      button.textContent = `Sign in with ${provider.name}`;
      button.addEventListener("click", () => {
        sessionStorage.setItem("agentgov-sso-provider", provider.id);
        const query = new URLSearchParams({ provider: provider.id, redirect_uri: back });
        location.assign(`${api}/auth/sso/login?${query}`);
      });
      return button;
    }),
  );
}

async function finishSso() {
  const params = new URLSearchParams(location.search);
  const code = params.get("code");
  const state = params.get("state");
  if (!code || !state) return null;
  history.replaceState(null, "", "/console/");
  const provider = sessionStorage.getItem("agentgov-sso-provider");
  sessionStorage.removeItem("agentgov-sso-provider");
  const body = provider ? { code, state, provider } : { code, state };
  return call("POST", `${api}/auth/sso/session`, body);
}

async function start() {
  window.addEventListener("hashchange", route);
  $("audit-filters").addEventListener("submit", (event) => {
    event.preventDefault();
    loadAudit(true);
  });
  $("audit-more").addEventListener("click", () => loadAudit(false));
  $("signin-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    const form = new FormData(event.target);
    try {
      signedIn(await call("POST", "/console/session", { email: form.get("email"), password: form.get("password") }));
      event.target.reset();
      $("signin-error").textContent = "";
    } catch (e) {
      $("signin-error").textContent = e.message;
    }
  });
  $("signout").addEventListener("click", async () => {
    try {
      await call("DELETE", "/console/session");
    } finally {
      signedOut();
    }
  });
  providers();
  try {
    const sso = await finishSso();
    if (sso) return signedIn(sso);
  } catch (e) {
    signedOut();
    $("signin-error").textContent = `Single sign-on failed: ${e.message}`;
    return;
  }
  try {
    signedIn(await call("GET", "/console/session"));
  } catch {
    signedOut();
  }
}

start();

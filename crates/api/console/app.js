// The analyst console: plain ES modules, no build step, nothing from a CDN. The session is an
// HttpOnly cookie the page never sees; state-changing requests echo the CSRF token the
// session endpoint gives (core.js). One view at a time, chosen by the address's fragment
// (`#audit`, `#agents/<id>`, `#decision/<record id>`); the feed keeps the shown view current.

import { api, atLeast, call, h, session } from "./core.js";
import { view as approvals } from "./approvals.js";
import { view as audit } from "./audit.js";
import { view as decision } from "./decision.js";
import { view as agents } from "./agents.js";
import { view as discovery } from "./discovery.js";
import { view as guard } from "./guard.js";
import { view as policies } from "./policies.js";
import { view as anomalies } from "./anomalies.js";
import { keys, tenant, users } from "./admin.js";

const views = [approvals, audit, decision, agents, discovery, guard, policies, anomalies, users, keys, tenant];

const $ = (id) => document.getElementById(id);

// The live feed: the tenant's events the views follow, handed to each view. The
// socket carries the session cookie (same origin only) and reconnects with back-off.
let feed = null;
let retry = 1000;

function follow() {
  if (feed || !session.csrf) return;
  const scheme = location.protocol === "https:" ? "wss" : "ws";
  feed = new WebSocket(`${scheme}://${location.host}${api}/ws`);
  feed.addEventListener("open", () => {
    retry = 1000;
    // What the views follow; not every denied check of a busy tenant.
    const events = ["hitl.*", "agent.*", "discovery.*", "guard.*", "anomaly.*", "tenant.updated", "policy.changed"];
    feed.send(JSON.stringify({ type: "subscribe", events }));
  });
  feed.addEventListener("message", (message) => {
    const event = JSON.parse(message.data);
    if (typeof event.type !== "string" || !event.tenant_id) return;
    for (const v of views) if (v.onEvent) v.onEvent(event);
  });
  feed.addEventListener("close", () => {
    feed = null;
    if (session.csrf) setTimeout(follow, retry);
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

function allowed() {
  return views.filter((v) => atLeast(v.role));
}

function menu() {
  $("nav").replaceChildren(...allowed().filter((v) => !v.hidden).map((v) => h("a", { href: `#${v.id}` }, v.title)));
}

async function route() {
  if (!session.csrf) return;
  const [name, arg] = location.hash.slice(1).split("/");
  const v = allowed().find((x) => x.id === name) || approvals;
  for (const a of document.querySelectorAll("nav a")) {
    if (a.getAttribute("href") === `#${v.id}` || (v === decision && a.getAttribute("href") === "#audit")) a.setAttribute("aria-current", "page");
    else a.removeAttribute("aria-current");
  }
  const section = h("section", { id: v.id, "aria-labelledby": `${v.id}-title` });
  $("view").replaceChildren(section);
  document.title = `${v.title} · agentgov console`;
  await v.render(section, arg ? decodeURIComponent(arg) : undefined);
}

function signedIn(s) {
  session.csrf = s.csrf_token;
  session.user = s.user;
  $("user").textContent = `${s.user.email} (${s.user.role})`;
  $("signin").hidden = true;
  $("nav").hidden = false;
  $("who").hidden = false;
  menu();
  route();
  follow();
}

function signedOut() {
  session.csrf = "";
  session.user = null;
  unfollow();
  $("nav").hidden = true;
  $("who").hidden = true;
  $("view").replaceChildren();
  $("signin").hidden = false;
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
    ...list.map((provider) =>
      h(
        "button",
        {
          type: "button",
          onclick: () => {
            sessionStorage.setItem("agentgov-sso-provider", provider.id);
            const query = new URLSearchParams({ provider: provider.id, redirect_uri: back });
            location.assign(`${api}/auth/sso/login?${query}`);
          },
        },
        `Sign in with ${provider.name}`,
      ),
    ),
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
  window.addEventListener("agentgov:signed-out", signedOut);
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

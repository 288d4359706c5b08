// What every view shares: the API call, the session's role, and small DOM builders. Every
// value from the API is written as text (textContent, attribute values), never as HTML.

export const api = "/api/v1";

export const session = { csrf: "", user: null };

const ranks = { viewer: 0, analyst: 1, admin: 2, super_admin: 3 };

/** Whether the signed-in user's role is `role` or above (the API's own gate decides; the
 * console only leaves out controls that would be refused). */
export function atLeast(role) {
  return session.user !== null && ranks[session.user.role] >= ranks[role];
}

/** A request with the session cookie; state changes echo the CSRF token. A problem+json
 * answer becomes an Error with its `detail`, `status` and field `errors`. */
export async function call(method, path, body, accept = "application/json") {
  const headers = { Accept: accept };
  if (method !== "GET") headers["X-CSRF-Token"] = session.csrf;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const res = await fetch(path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    credentials: "same-origin",
  });
  const text = await res.text();
  let data = null;
  if (text && (res.headers.get("Content-Type") || "").includes("json")) data = JSON.parse(text);
  if (!res.ok) {
    const detail = data && data.detail ? data.detail : `${res.status} ${res.statusText}`;
    const error = new Error(detail);
    error.status = res.status;
    error.errors = (data && data.errors) || [];
    throw error;
  }
  return data === null ? text : data;
}

/** An element: `h("button", {type: "button", onclick: f}, "Approve")`. Attributes are set
 * as values; children are nodes or text. */
export function h(tag, attrs = {}, ...children) {
  const svg = ["svg", "rect", "line", "text", "title", "g", "polyline"].includes(tag);
  const el = svg ? document.createElementNS("http://www.w3.org/2000/svg", tag) : document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith("on")) el.addEventListener(name.slice(2), value);
    else if (name === "dataset") Object.assign(el.dataset, value);
    else el.setAttribute(name, value === true ? "" : String(value));
  }
  add(el, ...children);
  return el;
}

function present(children) {
  return children.flat().filter((c) => c !== null && c !== undefined && c !== false).map(text);
}

/** `el.append` leaving out absent children (`cond ? node : null`). */
export function add(el, ...children) {
  el.append(...present(children));
}

/** `el.replaceChildren` leaving out absent children. */
export function put(el, ...children) {
  el.replaceChildren(...present(children));
}

function text(child) {
  return child instanceof Node ? child : document.createTextNode(String(child));
}

/** A value as people read it: JSON objects pretty-printed, times in the local zone. */
export function shown(value) {
  if (value === null || value === undefined) return "";
  if (typeof value === "object") return h("pre", {}, JSON.stringify(value, null, 2));
  return String(value);
}

export function when(time) {
  return time ? new Date(time).toLocaleString() : "";
}

/** A description list of [name, value] pairs (values may be nodes). */
export function fields(pairs) {
  return h("dl", { class: "fields" }, pairs.flatMap(([name, value]) => [h("dt", {}, name), h("dd", {}, shown(value))]));
}

/** A table: `columns` is [[heading, row => value]]; rows may be made clickable. */
export function table(caption, columns, rows, onOpen) {
  const body = h(
    "tbody",
    {},
    rows.map((row) =>
      h(
        "tr",
        {},
        columns.map(([, get], i) => {
          const value = get(row);
          if (i === 0 && onOpen) return h("td", {}, h("button", { type: "button", class: "link", onclick: () => onOpen(row) }, value));
          return h("td", {}, value instanceof Node ? value : shown(value));
        }),
      ),
    ),
  );
  return h(
    "table",
    {},
    h("caption", { class: "visually-hidden" }, caption),
    h("thead", {}, h("tr", {}, columns.map(([name]) => h("th", { scope: "col" }, name)))),
    body,
  );
}

/** A view's status line: polite updates, errors read out. */
export function status(id) {
  return h("p", { role: "status", id });
}

export function say(id, message) {
  const el = document.getElementById(id);
  if (el) el.textContent = message;
}

/** A labelled input. */
export function input(label, name, attrs = {}) {
  return h("label", {}, label, " ", h("input", { name, ...attrs }));
}

export function select(label, name, options, value) {
  return h(
    "label",
    {},
    label,
    " ",
    h("select", { name }, options.map(([v, text]) => h("option", { value: v, selected: v === value }, text))),
  );
}

export function button(label, onclick, attrs = {}) {
  return h("button", { type: "button", onclick, ...attrs }, label);
}

/** Runs `work`, reporting its error on the status line `id`; a lost session signs out. */
export async function attempt(id, work) {
  try {
    return await work();
  } catch (e) {
    if (e.status === 401) window.dispatchEvent(new Event("agentgov:signed-out"));
    say(id, e.message);
    return undefined;
  }
}

/** A bar chart as SVG (no library): `bars` is [[label, value]]; the data is also in the
 * chart's title and a visually hidden table, for screen readers. */
export function bars(title, series, unit = "") {
  const width = 560;
  const height = 110;
  const max = Math.max(1, ...series.map(([, v]) => v));
  const step = series.length ? width / series.length : width;
  const chart = h(
    "svg",
    { viewBox: `0 0 ${width} ${height + 18}`, role: "img", "aria-label": title, class: "chart" },
    h("title", {}, title),
    series.map(([label, value], i) => {
      const barHeight = Math.round((value / max) * height);
      return h(
        "g",
        {},
        h("rect", { x: i * step + 2, y: height - barHeight, width: Math.max(step - 4, 1), height: barHeight, class: "bar" }, h("title", {}, `${label}: ${value}${unit}`)),
        series.length <= 24 ? h("text", { x: i * step + step / 2, y: height + 14, "text-anchor": "middle", class: "axis" }, label) : null,
      );
    }),
  );
  return h("figure", { class: "chart" }, h("figcaption", {}, title), chart);
}

/** Form values, trimmed, without the empty ones. */
export function values(form) {
  const out = {};
  for (const [name, value] of new FormData(form)) {
    const v = String(value).trim();
    if (v) out[name] = v;
  }
  return out;
}

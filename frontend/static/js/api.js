/* Calls to the JSON API with the session cookie and CSRF header; errors as sentences.
 */
import { stopJobWatch } from "./jobs.js";
import { $, state } from "./util.js";

/* ------------------------------------------------------------------ API */

export class ApiError extends Error {
  constructor(status, message) { super(message); this.status = status; }
}

export function csrf() {
  const config = document.getElementById("foldwise-config");
  const name = (config && JSON.parse(config.textContent).csrfCookie) || "foldwise_csrf";
  const hit = document.cookie.split("; ").find((c) => c.startsWith(name + "="));
  return hit ? decodeURIComponent(hit.slice(name.length + 1)) : "";
}

export function detailOf(body, status) {
  const d = body && body.detail;
  if (typeof d === "string") return d;
  if (Array.isArray(d)) {
    return d.map((e) => `${(e.loc || []).slice(1).join(".") || "input"}: ${e.msg}`).join("; ");
  }
  if (status >= 500) return `the server failed (error ${status}); try again, or tell your administrator`;
  return `the server answered ${status}`;
}

export async function api(method, url, body) {
  const headers = { Accept: "application/json" };
  const opts = { method, headers, credentials: "same-origin" };
  if (method !== "GET") headers["X-CSRF-Token"] = csrf();
  if (body instanceof FormData) opts.body = body;
  else if (body !== undefined) {
    headers["Content-Type"] = "application/json";
    opts.body = JSON.stringify(body);
  }
  const write = method !== "GET";
  if (write) { state.writes += 1; state.writesSent += 1; }
  let res;
  try {
    res = await fetch(url, opts);
  } catch (err) {
    throw new ApiError(0, "cannot reach the server; check your connection");
  } finally {
    // The tree listens: a read it set aside while this change was in flight is done now.
    if (write && --state.writes === 0) document.dispatchEvent(new CustomEvent("foldwise:writes-settled"));
  }
  if (res.status === 401) {
    sessionExpired();
    throw new ApiError(401, "your session has expired");
  }
  if (res.status === 204) return null;
  const type = res.headers.get("content-type") || "";
  const data = type.includes("json") ? await res.json().catch(() => null) : await res.text();
  if (!res.ok) throw new ApiError(res.status, detailOf(data, res.status));
  return data;
}

export function sessionExpired() {
  if (state.sessionLost) return;
  state.sessionLost = true;
  stopJobWatch();
  const banner = $("#banner");
  banner.innerHTML = 'Your session has expired. <a href="/login?expired=1&next=/" id="relogin">Log in again</a> ' +
    "to keep working; nothing you did before was lost.";
  banner.hidden = false;
}

/** A short message at the bottom; with ``action`` ({label, run}) it carries one button
 * (Undo) and stays long enough to reach it. */
export function toast(message, kind = "info", action = null) {
  const el = document.createElement("div");
  el.className = `toast ${kind}`;
  el.setAttribute("role", kind === "error" ? "alert" : "status");
  const text = document.createElement("span");
  text.textContent = message;
  el.append(text);
  if (action) {
    const button = document.createElement("button");
    button.type = "button";
    button.className = "toast-action";
    button.textContent = action.label;
    button.addEventListener("click", () => { el.remove(); action.run(); });
    el.append(button);
  }
  $("#toasts").append(el);
  setTimeout(() => el.remove(), action ? 12000 : kind === "error" ? 8000 : 3500);
  return el;
}

export function fail(err, what) {
  if (err instanceof ApiError && err.status === 401) return;
  toast(`${what}: ${err.message}`, "error");
}

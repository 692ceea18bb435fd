/* Recluster jobs: start one, follow it (server-sent events, polling as fallback) and
 * redraw the tree when a new version is ready.
 */
import { api, fail } from "./api.js";
import { refreshView } from "./panels.js";
import { refreshQuestion } from "./side.js";
import { refreshTree } from "./tree.js";
import { $, POLL_MS, aboutDuration, state } from "./util.js";

/** What each phase of a recluster does, in words (the phase ids are the worker's). */
export const PHASE_WORDS = {
  queued: "Waiting to start",
  load: "Reading your documents",
  exemplars: "Picking typical documents",
  weights: "Learning from your folders",
  cluster: "Grouping similar documents",
  open_set: "Looking for topics you have no folder for",
  placement: "Learning where documents go",
  extended_tree: "Placing new documents and proposing folders",
  commit: "Saving the new suggestions",
  rerun: "Starting again with your latest changes",
};

/** "about 20 seconds left", from the time so far and the share done; "" when unknown. */
export function timeLeft(job, fraction) {
  const started = job.started_at && Date.parse(job.started_at.endsWith("Z") || /[+-]\d\d:\d\d$/.test(job.started_at) ? job.started_at : `${job.started_at}Z`);
  if (!started || fraction < 0.05) return "";
  const elapsed = Math.max(0, (Date.now() - started) / 1000);
  return `, ${aboutDuration(elapsed * (1 - fraction) / fraction)} left`;
}

/* --------------------------------------------------------------- jobs */

export async function startRecluster(quiet) {
  try {
    const job = await api("POST", "/api/recluster", {});
    showJob(job);
    followJob(job.id);
  } catch (err) {
    if (!quiet) fail(err, "Could not start a recluster");
    else watchJobs();
  }
}

export function jobFraction(job) {
  const p = job.progress || {};
  if (job.state === "done") return 1;
  if (job.state === "queued") return 0.02;
  const runs = Math.max(p.r_max || 1, 1);
  const within = p.merges_total ? p.merges_done / p.merges_total : 0;
  const run = Math.max((p.run || 1) - 1, 0);
  return Math.min(0.98, Math.max(0.05, (run + within) / runs));
}

export function showJob(job) {
  state.job = job;
  const box = $("#job");
  box.hidden = false;
  box.classList.toggle("failed", job.state === "failed");
  box.classList.toggle("done", job.state === "done");
  box.dataset.state = job.state;
  const frac = jobFraction(job);
  $("#job-bar").style.width = `${Math.round(frac * 100)}%`;
  $("#job-progress").setAttribute("aria-valuenow", String(Math.round(frac * 100)));
  const p = job.progress || {};
  let label;
  if (job.state === "queued") label = "Update of the suggestions will start soon…";
  else if (job.state === "running") {
    label = `${PHASE_WORDS[p.phase] || "Working"}${timeLeft(job, frac)}`;
  } else if (job.state === "done") label = "Suggestions updated";
  else if (job.state === "failed") label = `Recluster failed: ${job.error || "unknown error"}`;
  else label = "Started again: you changed something meanwhile";
  $("#job-label").textContent = label;
  $("#job-label").title = label;
}

export function stopJobWatch() {
  if (state.jobTimer) clearTimeout(state.jobTimer);
  state.jobTimer = null;
  if (state.jobStream) state.jobStream.close();
  state.jobStream = null;
}

/** Follow a job over server-sent events; fall back to polling if the stream fails. */
export function followJob(id) {
  stopJobWatch();
  if (!window.EventSource) { pollJob(id); return; }
  const stream = new EventSource(`/api/jobs/${id}/events`);
  state.jobStream = stream;
  let ended = false;
  stream.addEventListener("progress", (ev) => showJob(JSON.parse(ev.data)));
  stream.addEventListener("end", (ev) => {
    ended = true;
    stopJobWatch();
    jobFinished(JSON.parse(ev.data));
  });
  // Polling also reports what a stream cannot say (an expired session, a vanished job).
  stream.onerror = () => { if (!ended && state.jobStream === stream) { stopJobWatch(); pollJob(id); } };
}

export async function pollJob(id) {
  stopJobWatch();
  let job;
  try {
    job = await api("GET", `/api/jobs/${id}`);
  } catch (err) {
    if (err.status === 401) return;
    showJob({ id, state: "failed", error: err.message, progress: {} });
    return;
  }
  showJob(job);
  if (job.state === "queued" || job.state === "running") {
    state.jobTimer = setTimeout(() => pollJob(id), POLL_MS);
    return;
  }
  jobFinished(job);
}

export async function jobFinished(job) {
  showJob(job);
  if (job.state === "done") {
    await refreshTree();
    refreshQuestion();
    refreshView();
    setTimeout(() => { if (state.job && state.job.id === job.id && state.job.state === "done") $("#job").hidden = true; }, 4000);
  }
  if (job.state === "stale") watchJobs();
}

/** Find the newest unfinished job (critiques and uploads start them in the background). */
export async function watchJobs() {
  try {
    const page = await api("GET", "/api/jobs?limit=5");
    const live = page.items.find((j) => j.state === "queued" || j.state === "running");
    if (live) {
      if (!state.job || state.job.id !== live.id || !(state.jobStream || state.jobTimer)) { showJob(live); followJob(live.id); }
      return;
    }
    const last = page.items[0];
    if (last && last.result_version != null && last.result_version > (state.version || 0)) {
      await refreshTree();
      refreshView();
    }
    if (last && last.state === "failed" && (!state.job || state.job.id !== last.id)) showJob(last);
  } catch (err) {
    if (err.status === 404) return;
    fail(err, "Could not read the job list");
  }
}

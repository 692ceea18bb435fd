/* The side panel: "which is closer?" questions, the critique history with undo, and
 * the quality report.
 */
import { api, fail, toast } from "./api.js";
import { critique, openMovePicker } from "./critiques.js";
import { watchJobs } from "./jobs.js";
import { folderLabel, refreshView, showView, whereLabel } from "./panels.js";
import { folderKey, refreshTree } from "./tree.js";
import { $, esc, plural, state } from "./util.js";

/* ----------------------------------------------------------- questions */

export async function refreshQuestion() {
  const panel = $("#panel-questions");
  let q = null;
  try {
    // Questions the person skipped are not asked again in this session: the next one comes.
    const exclude = [...skipped].map((id) => `exclude=${encodeURIComponent(id)}`).join("&");
    q = await api("GET", `/api/questions/closer${exclude ? `?${exclude}` : ""}`);
  } catch (err) {
    if (err.status !== 404) { panel.innerHTML = `<p class="error">${esc(err.message)}</p>`; return; }
  }
  state.question = q;
  if (!q || !q.a) {
    panel.innerHTML = '<p class="muted" id="no-question">No questions right now. When Foldwise hesitates between two places, it asks here.</p>';
    return;
  }
  // "open" is a button of its own beside the answer, never inside it: it opens, not answers.
  const card = (d, cls) => `<div class="doc-card ${cls}"><strong>${esc(d.title)}</strong>` +
    ` <button type="button" class="link small open-doc" data-open="${d.id}" title="Open in the main area">open</button>` +
    `<div class="muted small">${whereLabel(d.id, d.folder_id)}</div></div>`;
  const choice = (d, pick) => `<div class="choice" id="pick-${pick}" data-pick="${pick}">${card(d, "")}` +
    `<button type="button" class="small answer" id="answer-${pick}">Closer to this one</button></div>`;
  panel.innerHTML =
    `<div class="question" id="closer-question"><h3>Which is closer?</h3>${card(q.a, "anchor")}` +
    '<p>is closer to…</p><div class="choices">' +
    `${choice(q.b, "b")}${choice(q.c, "c")}</div>` +
    `<p class="muted small" id="question-reason">${esc(readableReason(q.reason || ""))}</p>` +
    '<div class="question-other"><button type="button" id="neither-question" class="small">Neither: it belongs elsewhere…</button>' +
    ' <button type="button" id="skip-question" class="link">Skip</button></div></div>';
  $("#pick-b").onclick = (ev) => { if (!ev.target.closest("[data-open]")) answerQuestion(q, q.b, q.c); };
  $("#pick-c").onclick = (ev) => { if (!ev.target.closest("[data-open]")) answerQuestion(q, q.c, q.b); };
  // "Neither" is a move: the person names the folder, and the next question follows it.
  $("#neither-question").onclick = () => openMovePicker({ docs: [q.a.id] });
  $("#skip-question").onclick = () => skipQuestion(q);
}

// A move of the document a question is about answers it: ask the next one.
document.addEventListener("foldwise:moved", (ev) => {
  const q = state.question;
  if (q && q.a && ev.detail.docIds.includes(q.a.id)) refreshQuestion();
});

/** The server names documents by id and adds figures; the person knows them by title. */
export function readableReason(reason) {
  return reason
    .replace(/\bdocument (\d+)\b/g, (_, id) => `“${titleOf(Number(id))}”`)
    .replace(/\s*\(an answer moves it [^)]*\)/g, "")
    .replace(/;\s*b and c are their most typical documents/, ". The two choices are the most typical documents of each.");
}

export async function answerQuestion(q, closer, other) {
  $("#panel-questions").innerHTML = `<p class="muted">Thanks: “${esc(q.a.title)}” is closer to “${esc(closer.title)}”.</p>`;
  const out = await critique({ kind: "closer", a: q.a.id, b: closer.id, c: other.id }, "Could not record the answer");
  if (out) offerUndo("Answer recorded", out.id);
  setTimeout(refreshQuestion, 600);
}

/** Ids of documents whose question the person skipped in this browser session. */
export const skipped = new Set(
  JSON.parse(sessionStorage.getItem("foldwise.skipped-docs") || "[]").filter(Number.isInteger));
export async function skipQuestion(q) {
  skipped.add(q.a.id);
  try { sessionStorage.setItem("foldwise.skipped-docs", JSON.stringify([...skipped].slice(-200))); } catch (_) { /* ignore */ }
  await refreshQuestion();
}

/* -------------------------------------------------------------- history */

export const KIND_LABEL = {
  move: "Moved", accept: "Accepted folder", rename: "Accepted and renamed", reject: "Rejected folder",
  closer: "Answered", not_in: "Doesn’t belong", folder_move: "Moved folder", folder_delete: "Deleted folder",
  import: "Imported",
};

export function titleOf(id) {
  const d = state.tree && state.tree.docs.get(id);
  return d ? d.title : `document ${id}`;
}

export function describe(c) {
  switch (c.kind) {
    case "move": return `“${titleOf(c.document_id)}” → ${c.folder_id == null ? "not filed" : folderLabel(folderKey(c.folder_id)) || `folder ${c.folder_id}`}`;
    case "folder_move": return `“${c.name}”`;
    case "folder_delete": return `“${c.name}”`;
    case "import": return `${(c.filed_document_ids || []).length} document(s) filed`;
    case "accept": {
      const made = c.created_folder_id != null && folderLabel(folderKey(c.created_folder_id));
      return made ? `“${made}”` : c.name ? `“${c.name}”` : "a proposed folder";
    }
    case "rename": return `as “${c.name}”`;
    case "reject": return c.name ? `“${c.name}”` : "a proposed folder";
    case "closer": return `“${titleOf(c.a)}” is closer to “${titleOf(c.b)}” than to “${titleOf(c.c)}”`;
    case "not_in": return `“${titleOf(c.document_id)}” not in ${c.name ? `“${c.name}”` : "the proposed folder"}`;
    default: return c.kind;
  }
}

export async function refreshHistory() {
  const panel = $("#panel-history");
  let items;
  try {
    const res = await api("GET", "/api/critiques?include_undone=true");
    items = Array.isArray(res) ? res : res.items || [];
  } catch (err) {
    panel.innerHTML = err.status === 404 ? '<p class="muted">No critiques yet.</p>'
      : `<p class="error">${esc(err.message)}</p>`;
    return;
  }
  if (!items.length) { panel.innerHTML = '<p class="muted" id="no-history">No critiques yet. Everything you correct shows here, with undo.</p>'; return; }
  panel.innerHTML = `<p class="muted small" id="triples-summary"></p><ul class="history" id="history-list">${items.map((c) => {
    const triples = (c.triples || []).slice(0, 6).map(([x, y, z]) =>
      `<li>${esc(titleOf(x))} closer to ${esc(titleOf(y))} than to ${esc(titleOf(z))}</li>`).join("");
    const more = c.triples && c.triples.length > 6 ? `<li>… ${c.triples.length - 6} more</li>` : "";
    // What the critique taught Foldwise, for those who want it: behind "Details".
    const details = triples ? `<details class="details"><summary>Details</summary>` +
      `<div class="when">Made on tree version ${c.tree_version}. Foldwise now keeps these together:</div>` +
      `<ul class="triples">${triples}${more}</ul></details>` : "";
    const filed = c.filed_document_ids && c.filed_document_ids.length
      ? `<div class="muted small">${c.filed_document_ids.length} document(s) filed</div>` : "";
    return `<li class="${c.undone_at ? "undone" : ""}" data-critique="${c.id}"><div class="what">` +
      `<strong>${esc(KIND_LABEL[c.kind] || c.kind)}</strong><span>${esc(describe(c))}</span>` +
      (c.undone_at ? '<em class="muted small">undone</em>' : `<button class="small act-undo" data-id="${c.id}">Undo</button>`) +
      `</div><div class="when">${new Date(c.created_at).toLocaleString()} · by ${esc(c.author)}</div>` +
      filed + details + "</li>";
  }).join("")}</ul>`;
  summarizeTriples();
}

/** One line over the history: what the next recluster must respect. */
export async function summarizeTriples() {
  try {
    const t = await api("GET", "/api/triples");
    const stated = t.triples.filter((x) => x.source === "critique").length;
    const inferred = t.triples.length - stated;
    const labeled = t.folders.reduce((n, f) => n + f.labeled_documents, 0);
    const el = $("#triples-summary");
    if (el) {
      el.textContent = `Foldwise keeps to your ${plural(t.folders.length, "folder")} ` +
        `(${plural(labeled, "filed document")})` +
        (stated ? `, to ${plural(stated, "thing")} you told it and to ${inferred} it worked out from them.` : ".");
    }
  } catch (_) { /* the summary is optional */ }
}

/** The message after an action, with its Undo one click away. */
export function offerUndo(message, critiqueId) {
  toast(message, "info", { label: "Undo", run: () => undoCritique(critiqueId) });
}

export async function undoCritique(id, button = null) {
  if (button) button.disabled = true;
  try {
    const out = await api("DELETE", `/api/critiques/${id}`);
    toast(out && out.notes && out.notes.length ? `Undone. ${out.notes.map(readableReason).join("; ")}.` : "Undone");
    await refreshTree();
    refreshHistory();
    watchJobs();
    refreshView();
  } catch (err) {
    if (button) button.disabled = false;
    fail(err, "Could not undo");
  }
}

/* -------------------------------------------------------------- quality */

export async function refreshQuality() {
  const view = $("#quality-view");
  showView("quality-view");
  $("#panel-quality").innerHTML = '<p class="muted">The quality report is open in the main area.</p>' +
    '<button type="button" id="quality-refresh" class="small">Measure again</button>';
  $("#quality-refresh").onclick = refreshQuality;
  view.innerHTML = '<h2>How the tree compares with your folders</h2><p class="muted">Measuring…</p>';
  try {
    const html = await api("GET", "/ui/api/quality");
    view.innerHTML = `<h2>How the tree compares with your folders</h2>${html}`;
  } catch (err) {
    view.innerHTML = `<h2>Quality</h2><p class="error" role="alert">Could not measure: ${esc(err.message)}</p>`;
  }
}

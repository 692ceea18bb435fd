/* The inbox: every unfiled document with the place Foldwise suggests and how sure it is,
 * sorted and filtered; file one, or all above a confidence the person picks; and the
 * proposed folders (docs/ui.md, "The inbox").
 */
import { acceptProposal, moveDocument, rejectProposal } from "./critiques.js";
import { fileEach } from "./manage.js";
import { folderLabel, showView } from "./panels.js";
import { $, esc, pct, plural, state } from "./util.js";

/** The unfiled documents as inbox rows: where Foldwise would put each, and how sure. */
export function inboxRows() {
  const rows = [];
  for (const d of state.tree.docs.values()) {
    if (d.filed) continue;
    const f = state.tree.folders.get(d.folderKey);
    let place;
    if (f && f.kind === "existing") place = folderLabel(f.key);
    else if (f && f.kind === "proposed") place = `a new folder “${f.name}”`;
    else if (d.placed) place = "no good place yet";
    else place = "not placed yet";
    rows.push({
      d, place, folder: f && f.kind === "existing" ? f : null, proposal: f && f.kind === "proposed" ? f : null,
      // None in a proposal (the tree model keeps no figure there: docs/ui.md).
      confidence: d.placed && d.confidence != null ? d.confidence : -1,
    });
  }
  return rows;
}

const ORDERS = {
  "confidence-desc": (a, b) => b.confidence - a.confidence || a.d.title.localeCompare(b.d.title),
  // Rows without a figure (in a proposal, not placed yet) last: the unsure suggestions in
  // the person's folders are what this order is for.
  "confidence-asc": (a, b) => (a.confidence < 0) - (b.confidence < 0) || a.confidence - b.confidence ||
    a.d.title.localeCompare(b.d.title),
  title: (a, b) => a.d.title.localeCompare(b.d.title),
  place: (a, b) => a.place.localeCompare(b.place) || b.confidence - a.confidence,
};

/** The rows the controls ask for. */
function shownRows() {
  const filter = $("#inbox-filter").value.trim().toLowerCase();
  const rows = inboxRows().filter((r) => !filter ||
    r.d.title.toLowerCase().includes(filter) || r.place.toLowerCase().includes(filter));
  return rows.sort(ORDERS[$("#inbox-sort").value] || ORDERS["confidence-desc"]);
}

function threshold() {
  const n = Number($("#inbox-threshold").value);
  return Number.isFinite(n) ? Math.max(0, Math.min(100, n)) / 100 : 1;
}

/** The documents "File all" would file: shown, suggested in one of your folders, sure enough. */
function fileable(rows) {
  const at = threshold();
  return rows.filter((r) => r.folder && r.confidence >= at);
}

export function openInbox() {
  state.openDoc = null;
  state.openFolder = null;
  state.openProposal = null;
  showView("inbox-view");
  $("#content").scrollTop = 0;
  renderInbox();
}

/** Draw the list and the proposals from the current tree (also after every change). */
export function renderInbox() {
  if (!state.tree) return;
  const rows = shownRows();
  const all = inboxRows().length;
  const ready = fileable(rows);
  $("#inbox-file-all").textContent = `File the ${plural(ready.length, "document")} at ${Math.round(threshold() * 100)}% or more`;
  $("#inbox-file-all").disabled = ready.length === 0;
  $("#inbox-summary").textContent = all
    ? `${plural(all, "unfiled document")}${rows.length !== all ? `, ${rows.length} shown` : ""}.`
    : "Nothing waits to be filed: every document is in one of your folders.";
  $("#inbox-list").innerHTML = rows.map((r) => {
    const conf = r.confidence >= 0
      ? `<span class="conf${r.confidence < 0.5 ? " low" : ""}">${pct(r.confidence)}</span>` : '<span class="muted">–</span>';
    const action = r.folder
      ? `<button type="button" class="small act-file" data-file="${r.d.id}" data-folder="${r.folder.id}">File here</button>`
      : r.proposal ? `<button type="button" class="small act-proposal" data-proposal="${esc(r.proposal.key)}">See the proposal</button>` : "";
    return `<tr data-doc-row="${r.d.id}" data-confidence="${r.confidence}">` +
      `<td class="title-cell"><a href="#" class="doc-link" data-open-doc="${r.d.id}">${esc(r.d.title)}</a></td>` +
      `<td class="place-cell">${esc(r.place)}</td><td class="conf-cell">${conf}</td><td>${action}</td></tr>`;
  }).join("");
  const proposals = [...state.tree.folders.values()].filter((f) => f.kind === "proposed" && !f.nested);
  $("#inbox-proposals").innerHTML = proposals.length
    ? proposals.map((f) => `<li data-proposal-row="${esc(f.key)}"><a href="#" data-proposal="${esc(f.key)}" class="act-proposal">` +
      `${esc(f.name)}</a> <span class="muted small">${plural(f.total, "document")} · ${esc(f.terms.slice(0, 5).join(", "))}</span>` +
      '<span class="row-end gap"><button type="button" class="small primary act-accept-p">Accept</button>' +
      '<button type="button" class="small danger act-reject-p">Reject…</button></span></li>').join("")
    : '<li class="muted">No proposed folders right now.</li>';
}

/** File every shown document suggested at or above the chosen confidence. */
export function fileAllAbove() {
  const pairs = fileable(shownRows()).map((r) => [r.d.id, r.folder.id]);
  if (pairs.length) fileEach(pairs);
}

export function onInboxClick(ev, { openDoc, openProposal }) {
  const file = ev.target.closest(".act-file");
  if (file) { moveDocument(Number(file.dataset.file), Number(file.dataset.folder)); return; }
  const doc = ev.target.closest("[data-open-doc]");
  if (doc) { ev.preventDefault(); openDoc(Number(doc.dataset.openDoc)); return; }
  const row = ev.target.closest("[data-proposal-row]");
  const f = row && state.tree.folders.get(row.dataset.proposalRow);
  if (f && ev.target.closest(".act-accept-p")) { acceptProposal(f); return; }
  if (f && ev.target.closest(".act-reject-p")) { rejectProposal(f); return; }
  const proposal = ev.target.closest(".act-proposal");
  if (proposal) { ev.preventDefault(); openProposal(proposal.dataset.proposal); }
}

/** The count on the Inbox button. */
export function updateInboxCount() {
  const n = state.tree ? [...state.tree.docs.values()].filter((d) => !d.filed).length : 0;
  $("#inbox-count").textContent = n ? String(n) : "";
  $("#inbox-btn").setAttribute("aria-label", `Inbox: ${plural(n, "unfiled document")}`);
}

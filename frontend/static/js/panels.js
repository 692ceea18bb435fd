/* The main area: a document (where and why, similar documents), a folder or proposal,
 * search results, and adding documents.
 */
import { api, toast } from "./api.js";
import { acceptProposal, moveDocument, notInProposal, openMovePicker, rejectProposal, startRename } from "./critiques.js";
import { renderInbox } from "./inbox.js";
import { latestCritique, removeUploaded } from "./manage.js";
import { undoCritique } from "./side.js";
import { startRecluster } from "./jobs.js";
import { folderKey, hasProposedParts, refreshTree } from "./tree.js";
import { $, $$, PREVIEW_CHARS, esc, pct, plural, saveView, state } from "./util.js";

/* ------------------------------------------------------ document panel */

export function showView(id) {
  for (const v of $$("#content .view")) v.hidden = v.id !== id;
  // On a phone one pane shows at a time: what was just opened comes to the front.
  if (id !== "welcome") showPane("content");
}

/** Which pane a narrow window shows: "tree", "content" or "side" (docs/ui.md, "Phones"). */
export function showPane(name) {
  document.body.dataset.pane = name;
  for (const b of $$("#pane-tabs button")) b.setAttribute("aria-current", String(b.dataset.pane === name));
}

/** The nearest existing folder above a proposed one (null at the top level). */
function existingAncestor(f) {
  let up = state.tree.folders.get(f.parentKey);
  while (up && up.kind !== "existing") up = state.tree.folders.get(up.parentKey);
  return up || null;
}

export function folderLabel(key) {
  const names = [];
  let f = state.tree && state.tree.folders.get(key);
  while (f) { names.unshift(f.name); f = state.tree.folders.get(f.parentKey); }
  return names.join(" / ");
}

/** Open a document; a new item starts at the top (``keepScroll`` when only redrawing). */
export async function openDocument(id, { keepScroll = false } = {}) {
  state.openDoc = id;
  state.openProposal = null;
  state.openFolder = null;
  saveView();
  const view = $("#doc-view");
  showView("doc-view");
  const scroll = keepScroll ? $("#content").scrollTop : 0;
  if (!keepScroll) { $("#content").scrollTop = 0; view.innerHTML = '<p class="muted">Loading…</p>'; }
  let doc;
  try {
    doc = await api("GET", `/api/documents/${id}`);
  } catch (err) {
    view.innerHTML = `<p class="error" role="alert">Could not open this document: ${esc(err.message)}</p>`;
    return;
  }
  if (state.openDoc !== id) return;
  const m = state.tree && state.tree.docs.get(id);
  const f = m && state.tree.folders.get(m.folderKey);
  let where;
  if (doc.folder_id != null) {
    where = `<div class="where" id="doc-where"><div>Filed in <span class="path">${esc(doc.folder_path || folderLabel(folderKey(doc.folder_id)))}</span>` +
      '<span class="muted" id="doc-filed-by"></span></div></div>';
  } else if (m && m.placed && f && f.kind !== "unfiled") {
    const proposal = f.kind === "proposed";
    const under = proposal ? existingAncestor(f) : null;
    const sure = !proposal ? `<span class="conf">${pct(m.confidence)} confident</span>`
      : under ? `<span class="conf" id="doc-under">${pct(m.underConfidence)} that it belongs under ${esc(folderLabel(under.key))}</span>` : "";
    where = `<div class="where suggested" id="doc-where"><div>Foldwise suggests <span class="path">${esc(folderLabel(f.key))}</span>` +
      `${proposal ? ' <span class="muted">(a proposed new folder)</span>' : ""} ${sure}</div>` +
      (m.terms && m.terms.length ? `<div class="muted small">because of the words</div><div class="chips">${m.terms.map((t) => `<span class="chip">${esc(t)}</span>`).join("")}</div>` : "") +
      '<div class="buttons">' +
      (proposal ? `<button id="not-in-btn" data-proposal="${esc(f.id)}">Doesn’t belong here</button>`
        : `<button id="accept-place-btn" class="primary" data-folder="${f.id}">File it here</button>`) +
      "</div></div>";
  } else if (m && m.placed) {
    where = '<div class="where suggested" id="doc-where">No folder fits it well yet. Use “Move to…” to file it: ' +
      "Foldwise learns from where you put it.</div>";
  } else {
    where = '<div class="where" id="doc-where">Not filed. Foldwise places it after the next recluster.</div>';
  }
  const text = doc.text.length > PREVIEW_CHARS ? `${doc.text.slice(0, PREVIEW_CHARS)}\n…` : doc.text;
  view.innerHTML =
    `<div class="doc-head"><h2 id="doc-title">${esc(doc.title)}</h2><div class="doc-actions">` +
    `<a class="btn" id="download-link" href="/api/documents/${doc.id}/file" download>Download original</a>` +
    '<button type="button" id="move-btn">Move to…</button></div></div>' +
    `<div class="doc-meta">${esc(kindOf(doc.media_type))} · ` +
    `<details class="details inline" id="doc-details"><summary>Details</summary>` +
    `<span class="file-name">${esc(doc.filename)}</span> · ${esc(doc.media_type)} · ${(doc.size / 1024).toFixed(1)} KB</details></div>` +
    scanNote(doc) +
    where +
    '<h3>Similar documents</h3><ul class="similar" id="similar"><li class="muted">Looking…</li></ul>' +
    `<h3>Text</h3><pre class="preview" id="doc-text">${esc(text)}</pre>`;
  $("#content").scrollTop = scroll;
  $("#move-btn").onclick = () => openMovePicker(id);
  const notIn = $("#not-in-btn");
  if (notIn) notIn.onclick = () => notInProposal(id, notIn.dataset.proposal);
  const acceptPlace = $("#accept-place-btn");
  if (acceptPlace) acceptPlace.onclick = () => moveDocument(id, Number(acceptPlace.dataset.folder));
  loadSimilar(id);
  if (doc.folder_id != null) loadFiledBy(id);
  if (READING.has(doc.text_status)) {
    // The worker is reading the scan: show its progress, then its text, without a reload.
    setTimeout(() => { if (state.openDoc === id) openDocument(id, { keepScroll: true }); }, 2000);
  }
}

/** Scans (docs/ocr.md): what OCR is doing or did, in a sentence; nothing for other files. */
const SCAN_STATES = {
  ocr_pending: () => "This is a scan. Foldwise will read its text shortly, then place it.",
  ocr_running: (d) => `Reading the scan: page ${d.ocr_pages_done + 1} of ${d.ocr_pages_total}.`,
  ocr_done: () => "Text read from the scan.",
  no_text_ocr_missing: () =>
    "No text: this is a scan, and text recognition (OCR) is not installed on the server. The original is kept.",
  ocr_failed: (d) => `No text: the scan could not be read${d.text_note ? ` (${d.text_note})` : ""}. The original is kept.`,
};
const READING = new Set(["ocr_pending", "ocr_running"]);

function scanNote(doc) {
  const say = SCAN_STATES[doc.text_status];
  return say ? `<p class="scan-note" id="doc-scan" role="status">${esc(say(doc))}</p>` : "";
}

const FILED_BY = {
  you: " — you put it there.",
  accepted: " — you accepted Foldwise’s proposed folder.",
  import: " — it came in this folder with your import.",
};

/** Say who filed it only when the record says so: the person, an accepted proposal, an import. */
export async function loadFiledBy(id) {
  try {
    const filing = await api("GET", `/ui/api/documents/${id}/filing`);
    const el = $("#doc-filed-by");
    if (state.openDoc === id && el) el.textContent = FILED_BY[filing.by] || ".";
  } catch (_) { /* the sentence reads well without it */ }
}

const KINDS = {
  "text/plain": "Text", "text/markdown": "Markdown text", "text/html": "Web page",
  "application/pdf": "PDF document", "message/rfc822": "E-mail",
  "application/vnd.openxmlformats-officedocument.wordprocessingml.document": "Word document",
  "image/png": "Scanned image", "image/jpeg": "Scanned image", "image/tiff": "Scanned image",
};

/** A file type as a person names it. */
export function kindOf(mediaType) {
  return KINDS[(mediaType || "").split(";")[0]] || "Document";
}

/** Redraw what the main area shows after the tree changed (the same document or folder). */
export function refreshView() {
  if (!$("#doc-view").hidden && state.openDoc) openDocument(state.openDoc, { keepScroll: true });
  else if (!$("#inbox-view").hidden) renderInbox();
  else if (!$("#folder-view").hidden && state.openFolder) {
    if (state.tree.folders.has(state.openFolder)) openFolder(state.openFolder, { keepScroll: true });
    else if (state.openProposal) followProposal(state.openProposal);
    else showView("welcome");
  }
}

/** Proposal ids change with every tree version: the one the person was reading is replaced
 * by the new proposal holding most of its documents, or by a sentence saying it is gone. */
export function followProposal(shown) {
  const before = new Set(shown.docIds);
  let best = null;
  let shared = 0;
  for (const f of state.tree.folders.values()) {
    if (f.kind !== "proposed") continue;
    const n = allDocs(f).filter((d) => before.has(d.id)).length;
    if (n > shared) { best = f; shared = n; }
  }
  if (!best) {
    proposalGone(`The proposed folder “${shown.name}” is no longer proposed: after the tree was updated, ` +
      "its documents fit better in other places. Open a document to see where Foldwise suggests it now.");
    return;
  }
  state.selected = best.key;
  openFolder(best.key, { keepScroll: true });
  const same = best.name === shown.name;
  const note = document.createElement("p");
  note.className = "notice";
  note.id = "proposal-successor";
  note.textContent = `The tree was updated while you were reading this proposal. ` +
    (same ? `It is still proposed` : `“${shown.name}” is now proposed as “${best.name}”`) +
    `, with ${shared} of its ${before.size} documents.`;
  $("#folder-title").after(note);
}

/** The main area after the proposal it showed went away. */
export function proposalGone(sentence) {
  state.openProposal = null;
  state.openFolder = null;
  showView("folder-view");
  $("#folder-view").innerHTML = `<h2>Proposal closed</h2><p class="notice" id="proposal-gone">${esc(sentence)}</p>`;
}

/** Every document in a folder and its subfolders. */
export function allDocs(f) {
  return [...f.docs, ...f.children.flatMap(allDocs)];
}

/** The folder's contents in the main area; for a proposal, what it is and what to do. */
export function openFolder(key, { keepScroll = false } = {}) {
  const f = state.tree && state.tree.folders.get(key);
  if (!f) return;
  if (!keepScroll) $("#content").scrollTop = 0;
  state.openDoc = null;
  state.openFolder = key;
  state.openProposal = f.kind === "proposed"
    ? { key, name: f.name, docIds: allDocs(f).map((d) => d.id) } : null;
  saveView();
  const view = $("#folder-view");
  showView("folder-view");
  const rows = f.docs.map((d) => `<li data-doc="${d.id}" tabindex="0" class="${d.filed ? "" : "suggested"}">` +
    `<input type="checkbox" class="pick" data-pick="${d.id}"${state.multi.has(d.id) ? " checked" : ""} aria-label="Select ${esc(d.title)}">` +
    `<span class="icon doc"></span> <span class="title" title="${esc(d.title)}">${esc(d.title)}</span>` +
    (d.filed ? "" : ` <span class="conf">${d.confidence != null ? pct(d.confidence) : ""} suggested</span>`) + "</li>").join("");
  const subs = f.children.map((c) => `<li data-folder="${esc(c.key)}" tabindex="0"${c.kind === "proposed" ? ' class="proposed"' : ""}><span class="icon folder"></span> <span class="title" title="${esc(c.name)}">${esc(c.name)}</span>` +
    ` <span class="muted small">${c.total}</span></li>`).join("");
  let head = "";
  // A proposal with proposed subfolders can be accepted with them, or as one folder.
  const divided = hasProposedParts(f);
  if (f.kind === "proposed") {
    head = '<div class="where proposal-card" id="proposal-card"><div><strong>A new folder?</strong> ' +
      `Foldwise found ${f.total} documents that fit none of your folders well` +
      (f.parentKey ? ` inside <span class="path">${esc(folderLabel(f.parentKey))}</span>` : "") + ".</div>" +
      `<div class="chips">${f.terms.map((t) => `<span class="chip">${esc(t)}</span>`).join("")}</div>` +
      (f.nested
        ? '<div class="muted">A subfolder of the proposed folder above: accepting that one makes it a subfolder, rejecting it drops both.</div></div>'
        : '<div class="buttons"><button class="primary" id="proposal-accept">Accept</button>' +
          (divided ? '<button id="proposal-accept-one" title="One folder for all its documents, without the proposed subfolders">Accept as one folder</button>' : "") +
          '<button id="proposal-rename">Rename…</button><button class="danger" id="proposal-reject">Reject</button></div></div>');
  }
  view.innerHTML = `<h2 id="folder-title">${esc(f.kind === "proposed" ? f.name : folderLabel(key) || f.name)}</h2>` + head +
    (subs ? `<h3>Folders</h3><ul class="listing">${subs}</ul>` : "") +
    `<h3>Documents</h3>${rows ? `<ul class="listing">${rows}</ul>` : '<p class="muted">No documents directly in this folder.</p>'}`;
  if (f.kind === "proposed" && !f.nested) {
    $("#proposal-accept").onclick = () => acceptProposal(f);
    if (divided) $("#proposal-accept-one").onclick = () => acceptProposal(f, undefined, true);
    $("#proposal-reject").onclick = () => rejectProposal(f);
    $("#proposal-rename").onclick = () => {
      const node = $(`#tree [data-key="${CSS.escape(key)}"]`);
      if (node) startRename(f, node);
    };
  }
}

export async function loadSimilar(id) {
  const ul = $("#similar");
  try {
    const items = await api("GET", `/ui/api/documents/${id}/similar?limit=5`);
    if (state.openDoc !== id || !ul.isConnected) return;
    ul.innerHTML = items.length
      ? items.map((s) => `<li><a href="#" data-doc="${s.id}">${esc(s.title)}</a> <span class="muted small">${pct(s.similarity)}</span></li>`).join("")
      : '<li class="muted">None yet.</li>';
  } catch (err) {
    if (ul.isConnected) ul.innerHTML = `<li class="error">${esc(err.message)}</li>`;
  }
}

/* -------------------------------------------------------------- search */

/** "a / b" for a filed document, "suggested: a / b" for a placed one, else "unfiled". */
export function whereLabel(docId, folderId) {
  if (folderId != null) return `<span class="muted small">${esc(folderLabel(folderKey(folderId)))}</span>`;
  const d = state.tree && state.tree.docs.get(docId);
  const f = d && d.placed && state.tree.folders.get(d.folderKey);
  if (f && f.kind !== "unfiled") {
    return `<span class="conf small">suggested: ${esc(folderLabel(f.key))}</span>`;
  }
  return '<span class="muted small">unfiled</span>';
}

let searchTimer = null;

/** Search as the person types, a quarter second after the last key. */
export function onSearchInput(ev) {
  clearTimeout(searchTimer);
  searchTimer = setTimeout(() => runSearch(ev.target.value), 250);
}

export async function runSearch(q) {
  const view = $("#search-view");
  if (!q.trim()) { showView(state.openDoc ? "doc-view" : "welcome"); return; }
  showView("search-view");
  try {
    const res = await api("GET", `/api/search?q=${encodeURIComponent(q)}&limit=50`);
    if ($("#search").value !== q) return;
    const mark = (s) => esc(s).replace(/\[([^\]]*)\]/g, "<mark>$1</mark>");
    view.innerHTML = `<h2>Search: “${esc(q)}”</h2>` + (res.hits.length
      ? `<ul class="hits" id="search-results">${res.hits.map((h) =>
        `<li data-doc="${h.id}" tabindex="0"><div><strong>${esc(h.title)}</strong> ${whereLabel(h.id, h.folder_id)}</div>` +
        `<div class="snippet">${mark(h.snippet)}</div></li>`).join("")}</ul>`
      : '<p class="muted" id="search-empty">Nothing matches every word.</p>');
  } catch (err) {
    view.innerHTML = `<h2>Search</h2><p class="error" role="alert">${esc(err.message)}</p>`;
  }
}

/* ------------------------------------------------------ upload, import */

export function resultRow(name) {
  const tr = document.createElement("tr");
  tr.innerHTML = `<td>${esc(name)}</td><td class="status uploading">uploading…</td><td class="detail"></td>`;
  $("#upload-results tbody").append(tr);
  $("#upload-results").hidden = false;
  return {
    set(status, detail) {
      const s = tr.querySelector(".status");
      s.className = `status ${status}`;
      s.textContent = status;
      tr.querySelector(".detail").textContent = detail || "";
      tr.dataset.status = status;
    },
    /** An Open button for the document the row stored. */
    openable(docId) {
      const open = document.createElement("button");
      open.type = "button";
      open.className = "link";
      open.textContent = "Open";
      open.onclick = () => openDocument(docId);
      tr.querySelector(".detail").append(" ", open);
    },
  };
}

export async function uploadFiles(files) {
  if (!files.length) return;
  showView("upload-view");
  let changed = false;
  const added = [];
  const imports = [];
  for (const file of files) {
    const row = resultRow(file.name);
    const form = new FormData();
    form.append("file", file, file.name);
    try {
      if (/\.zip$/i.test(file.name)) {
        const r = await api("POST", "/api/import/zip", form);
        const skipped = r.skipped.length ? `; left out: ${r.skipped.join(", ")}` : "";
        row.set("imported", `${r.documents_created} documents in ${r.folders_created} new folders` +
          `${r.folders_reused ? ` (${r.folders_reused} existing)` : ""}` +
          `${r.duplicates ? `, ${r.duplicates} duplicates` : ""}${skipped}`);
        changed = true;
        const id = await latestCritique("import");
        if (id != null) imports.push(id);
      } else {
        const r = await api("POST", "/api/documents/upload", form);
        if (r.duplicate) row.set("duplicate", `already stored as “${r.document.title}”`);
        else {
          const scan = READING.has(r.document.text_status) ? "a scan: Foldwise reads it, then places it"
            : r.document.text_status === "no_text_ocr_missing" ? "a scan with no text: OCR is not installed"
              : "unfiled: Foldwise will place it";
          row.set("stored", `“${r.document.title}”, ${scan}`);
          row.openable(r.document.id);
          changed = true;
          added.push(r.document.id);
        }
      }
    } catch (err) {
      if (err.status === 401) { row.set("failed", "session expired"); break; }
      const rejected = [413, 415, 422].includes(err.status);
      row.set(rejected ? "rejected" : "failed", err.message);
    }
  }
  if (changed) {
    await refreshTree();
    startRecluster(true);
  }
  offerUploadUndo(added, imports);
}

/** Undo after adding: new documents are removed; an import's filing is undone (its documents
 * stay, unfiled, and the folders it made go once empty). */
function offerUploadUndo(added, imports) {
  if (added.length) {
    toast(`Added ${plural(added.length, "document")}`, "info", { label: "Undo", run: () => removeUploaded(added) });
  }
  for (const id of imports) {
    toast("Imported your folders", "info", { label: "Undo", run: () => undoCritique(id) });
  }
}

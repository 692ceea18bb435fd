/* Shared helpers and the page state (what is open, expanded, selected).
 */

export const $ = (sel, root = document) => root.querySelector(sel);
export const $$ = (sel, root = document) => Array.from(root.querySelectorAll(sel));
export const esc = (s) => String(s ?? "").replace(/[&<>"']/g, (c) => ({
  "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;",
}[c]));

export const POLL_MS = 500;
export const IDLE_CHECK_MS = 15000;
export const PREVIEW_CHARS = 4000;
export const STORE = "foldwise.view";

export const state = {
  tree: null,            // the model built by buildTree()
  version: null,         // extended tree version shown
  expanded: new Set(),   // keys of expanded folders
  seenProposals: new Set(), // proposals already revealed once
  selected: null,        // key of the selected node
  openDoc: null,         // id of the document in the panel
  job: null,             // the job being watched {id, state, ...}
  jobTimer: null,
  jobStream: null,       // EventSource of the followed job
  sessionLost: false,
  timings: null,         // of the last loadTree(), in ms (the speed test reads them)
  question: null,
  openFolder: null,      // key of the folder shown in the main area
  multi: new Set(),      // ids of the documents selected together (Ctrl/Shift-click, checkboxes)
  anchor: null,          // the document a Shift-click selects from
  openProposal: null,    // {key, name, docIds} of the proposal shown in the main area
  writes: 0,             // changes sent to the server and not answered yet
  writesSent: 0,         // changes sent so far (a tree read across one of them may predate it)
  treeWanted: false,     // a tree read was set aside for a change in flight; read again after it
};

export function pct(x) { return `${Math.round(100 * x)}%`; }

/** "1 document", "3 documents". */
export function plural(n, word) { return `${n} ${word}${n === 1 ? "" : "s"}`; }

/** A duration as a person says it: "about 40 seconds", "about 3 minutes". */
export function aboutDuration(seconds) {
  if (seconds < 10) return "a few seconds";
  if (seconds < 90) return `about ${Math.round(seconds / 10) * 10} seconds`;
  return `about ${Math.round(seconds / 60)} minutes`;
}

export function saveView() {
  try {
    sessionStorage.setItem(STORE, JSON.stringify({
      expanded: [...state.expanded], selected: state.selected, openDoc: state.openDoc,
      seen: [...state.seenProposals].slice(-500),
    }));
  } catch (_) { /* private mode: the view is simply not remembered */ }
}

export function restoreView() {
  try {
    const v = JSON.parse(sessionStorage.getItem(STORE) || "{}");
    state.expanded = new Set(v.expanded || []);
    state.selected = v.selected || null;
    state.openDoc = v.openDoc || null;
    state.seenProposals = new Set(v.seen || []);
  } catch (_) { /* ignore */ }
}

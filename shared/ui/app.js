/* Backlog Synthesizer review page. Plain JavaScript, no dependencies, no build step.
 *
 * Security: every string that comes from the API (model text, transcript text, titles, errors) is
 * inserted with textContent / text nodes through h() below; this file never assigns innerHTML.
 * Links to work items are only made for http(s) URLs. The function key is read from this page's
 * own ?code= and sent as the x-functions-key header.
 */
(function () {
  "use strict";

  const KEY = new URLSearchParams(window.location.search).get("code") || "";
  // "/api/ui" -> "/api": the API lives next to the page, whatever the route prefix is
  const API = window.location.pathname.replace(/\/ui\/?$/, "");
  const TERMINAL = new Set(["completed", "completed_with_errors", "failed"]);
  const READY = new Set(["completed", "completed_with_errors"]);
  // a run in one of these states can be run again (POST runs/{id}/retry)
  const RETRYABLE = new Set(["failed", "completed_with_errors"]);
  const RETRY_HINT = "Starts a new attempt from the same upload with the current settings; this run stays as it is.";
  const TAGS = {
    new: { icon: "+", label: "new" },
    extend: { icon: "↗", label: "extend" },
    gap: { icon: "◐", label: "gap" },
    conflict: { icon: "⚠", label: "conflict" },
    duplicate: { icon: "=", label: "duplicate" },
  };
  const CONFLICT_CHOICES = [
    ["keep_existing", "Keep the existing story (write nothing)"],
    ["replace", "Replace the existing story with the generated one"],
    ["both", "Keep both (create the generated story as well)"],
    ["skip", "Skip"],
  ];
  const PLAIN_CHOICES = [
    ["accept", "Accept"],
    ["skip", "Skip"],
  ];
  const POLL_MS = 1000;

  const state = {
    runId: null,
    run: null,
    review: null,
    decisions: {},
    previewed: null, // JSON of the decisions and review version the last dry run used
    reviewDoc: null, // the saved review (GET .../review-state): decisions and edits
    reviewEtag: null,
    saving: Promise.resolve(), // saves go one after another, each with the latest ETag
    editing: null, // the item id whose edit form is open
    pollTimer: null,
    loadToken: 0,
  };

  // ------------------------------------------------------------------------------------------
  // helpers

  function $(id) {
    return document.getElementById(id);
  }

  /** Create an element. Children that are not Nodes become text nodes: never parsed as HTML. */
  function h(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attrs || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (name === "class") node.className = value;
      else if (name.startsWith("on") && typeof value === "function") {
        node.addEventListener(name.slice(2), value);
      } else node.setAttribute(name, value === true ? "" : String(value));
    }
    for (const child of children.flat(Infinity)) {
      if (child === null || child === undefined || child === false) continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  }

  function clear(node) {
    while (node.firstChild) node.removeChild(node.firstChild);
    return node;
  }

  function say(id, text, kind) {
    const node = $(id);
    node.textContent = text || "";
    node.dataset.kind = kind || "info";
  }

  function safeUrl(url) {
    if (!url) return null;
    try {
      const parsed = new URL(String(url), window.location.href);
      return parsed.protocol === "http:" || parsed.protocol === "https:" ? parsed.href : null;
    } catch (err) {
      return null;
    }
  }

  async function api(path, options) {
    const opts = Object.assign({ cache: "no-store" }, options || {});
    opts.headers = Object.assign({}, opts.headers || {});
    if (KEY) opts.headers["x-functions-key"] = KEY;
    let response;
    try {
      response = await fetch(API + "/" + path, opts);
    } catch (err) {
      return { status: 0, ok: false, body: null, error: "The server cannot be reached." };
    }
    const text = await response.text();
    let body = null;
    try {
      body = text ? JSON.parse(text) : null;
    } catch (err) {
      body = text;
    }
    let error = null;
    if (!response.ok) {
      if (body && typeof body === "object" && body.error) error = String(body.error);
      else if (response.status === 401) error = "The function key is missing or wrong (add ?code=<key> to the address).";
      else error = "The server answered " + response.status + ".";
    }
    return { status: response.status, ok: response.ok, body: body, error: error };
  }

  function badge(tag) {
    const info = TAGS[tag] || { icon: "?", label: tag || "untagged" };
    return h("span", { class: "badge tag-" + (tag || "none") }, info.icon + " " + info.label);
  }

  function fmtDate(value) {
    if (!value) return "";
    const d = new Date(value);
    return isNaN(d.getTime()) ? String(value) : d.toLocaleString();
  }

  function pct(value) {
    return Math.round((Number(value) || 0) * 100) + "%";
  }

  // ------------------------------------------------------------------------------------------
  // upload and the list of runs

  async function upload(event) {
    event.preventDefault();
    const project = $("project").value.trim();
    const file = $("file").files[0];
    if (!/^[A-Za-z0-9][A-Za-z0-9_-]{0,62}$/.test(project)) {
      say("upload-status", "Enter a project: letters, digits, - and _ (up to 63).", "error");
      $("project").focus();
      return;
    }
    if (!file) {
      say("upload-status", "Choose a transcript file.", "error");
      $("file").focus();
      return;
    }
    $("upload-button").disabled = true;
    say("upload-status", "Uploading " + file.name + " …");
    const query = "runs?project=" + encodeURIComponent(project) + "&name=" + encodeURIComponent(file.name);
    const res = await api(query, {
      method: "POST",
      headers: { "Content-Type": file.type || "application/octet-stream" },
      body: file,
    });
    $("upload-button").disabled = false;
    if (!res.ok && !(res.body && res.body.run_id)) {
      say("upload-status", "Upload failed: " + res.error, "error");
      return;
    }
    const run = res.body;
    if (run.status === "failed") {
      say("upload-status", "The run failed: " + (run.failure_reason || "see the run"), "error");
    } else {
      say("upload-status", "Run " + run.run_id + " started.", "ok");
    }
    $("file").value = "";
    refreshRuns();
    openRun(run.run_id);
  }

  async function refreshRuns() {
    say("runs-status", "Loading runs …");
    const res = await api("runs?limit=50");
    const focused = document.activeElement && document.activeElement.closest("#runs-body") ? document.activeElement.getAttribute("data-run-id") : null;
    const body = clear($("runs-body"));
    if (!res.ok) {
      say("runs-status", "Runs could not be listed: " + res.error, "error");
      return;
    }
    const runs = res.body.runs || [];
    // the latest run's project as a suggestion, only into a field the user is not typing in
    const field = $("project");
    if (!field.value && runs.length && document.activeElement !== field) field.value = runs[0].project;
    for (const run of runs) {
      const current = run.run_id === state.runId;
      body.append(
        h(
          "tr",
          { class: current ? "current" : null, "aria-current": current ? "true" : null },
          h("td", {}, h("span", { class: "run-source" }, run.source_name), h("br"), h("code", { class: "muted" }, run.run_id)),
          h("td", {}, run.project),
          h("td", {}, run.status + (run.attempt > 1 ? " (attempt " + run.attempt + ")" : "")),
          h("td", {}, run.story_count == null ? "–" : String(run.story_count)),
          h("td", {}, fmtDate(run.created_at)),
          h(
            "td",
            {},
            h(
              "button",
              {
                type: "button",
                class: "open-run",
                "data-run-id": run.run_id,
                "aria-label": "Open run " + run.source_name + " (" + run.run_id + ")",
                onclick: () => openRun(run.run_id),
              },
              "Open"
            )
          )
        )
      );
    }
    if (focused) {
      const again = body.querySelector("button[data-run-id='" + focused + "']");
      if (again) again.focus(); // a refresh does not lose the keyboard user's place
    }
    say("runs-status", runs.length ? runs.length + " run(s)." : "No runs yet: upload a transcript.");
  }

  // ------------------------------------------------------------------------------------------
  // one run: live status, then the review bundle

  function openRun(runId) {
    if (window.location.hash !== "#run=" + runId) {
      window.location.hash = "run=" + runId; // hashchange loads it
    } else {
      loadRun(runId, true);
    }
  }

  function fromHash() {
    const match = /^#run=(run-[0-9a-f]{20})$/.exec(window.location.hash);
    if (match) loadRun(match[1], true);
  }

  async function loadRun(runId, focus) {
    const token = ++state.loadToken;
    if (state.pollTimer) clearTimeout(state.pollTimer);
    if (state.runId !== runId) {
      state.runId = runId;
      state.review = null;
      state.decisions = {};
      state.previewed = null;
      state.reviewDoc = null;
      state.reviewEtag = null;
      state.editing = null;
      for (const id of ["summary", "backlog", "write"]) $(id).hidden = true;
      clear($("tree"));
      clear($("plan"));
      clear($("results"));
      $("undo").hidden = true;
      state.lastWriteId = null;
      say("write-status", "");
    }
    $("run").hidden = false;
    $("run-heading").textContent = "Run " + runId;
    if (focus) $("run-heading").focus();
    for (const row of document.querySelectorAll("#runs-body tr")) {
      const current = row.querySelector("button[data-run-id='" + runId + "']") !== null;
      row.classList.toggle("current", current);
      if (current) row.setAttribute("aria-current", "true");
      else row.removeAttribute("aria-current");
    }
    await poll(runId, token);
  }

  async function poll(runId, token) {
    if (token !== state.loadToken) return;
    const res = await api("runs/" + encodeURIComponent(runId));
    if (token !== state.loadToken) return;
    if (!res.ok) {
      say("run-status", "Status unavailable: " + res.error, "error");
      if (res.status === 404 || res.status === 400) return;
      state.pollTimer = setTimeout(() => poll(runId, token), POLL_MS * 3);
      return;
    }
    const run = res.body;
    if (!state.run || state.run.run_id !== run.run_id || TERMINAL.has(run.status)) loadProject(run.project);
    state.run = run;
    showStatus(run);
    if (!TERMINAL.has(run.status)) {
      state.pollTimer = setTimeout(() => poll(runId, token), POLL_MS);
      return;
    }
    refreshRuns();
    if (run.status === "failed") return;
    await loadReview(runId, token);
  }

  function showStatus(run) {
    $("run-meta").textContent =
      run.source_name + " · project " + run.project + " · engine " + run.engine +
      (run.model ? " (" + run.model + ")" : "") + " · created " + fmtDate(run.created_at) +
      (run.retry_of ? " · attempt " + run.attempt + ", runs " + run.retry_of + " again" : "");
    showActions(run);
    const segs = run.segment_count == null ? "?" : run.segment_count;
    const stories = run.story_count == null ? "?" : run.story_count;
    let text = "Status: " + run.status.replace(/_/g, " ") + " (phase " + run.phase + "). Segments " +
      run.completed_segments + " of " + segs + ", stories tagged " + run.tagged_stories + " of " + stories + ".";
    if (run.error_count) text += " Errors: " + run.error_count + ".";
    if (run.status === "failed" && run.failure_reason) text += " Reason: " + run.failure_reason;
    say("run-status", text, run.status === "failed" ? "error" : READY.has(run.status) ? "ok" : "info");
    // what the reviewer must know before trusting or writing the run (text only)
    const warnings = run.warnings || [];
    const banner = $("run-warnings");
    banner.replaceChildren(...warnings.map((w) => h("p", { class: "warning", "data-code": w.code }, "⚠ ", w.message)));
    banner.hidden = warnings.length === 0;
    $("allow-empty").hidden = !warnings.some((w) => w.code === "empty_index");
    const progress = $("run-progress");
    const total = (run.segment_count || 0) + (run.story_count || 0);
    const done = (run.completed_segments || 0) + (run.tagged_stories || 0);
    if (TERMINAL.has(run.status)) {
      progress.max = 1;
      progress.value = 1;
    } else if (total) {
      progress.max = total;
      progress.value = done;
    } else {
      progress.removeAttribute("value"); // indeterminate
    }
    const errors = clear($("run-errors"));
    if (run.errors && run.errors.length) {
      errors.append(
        h("h3", {}, "Errors"),
        h("ul", {}, run.errors.map((e) => h("li", {}, e.phase + " " + e.unit_id + ": " + e.message + " (" + e.outcome + ")")))
      );
    }
  }

  /** "Run again" on a failed or completed_with_errors run; once it was run again, the same button
   * opens the newer attempt instead (the API would answer that attempt anyway). */
  function showActions(run) {
    const button = $("retry-run");
    $("run-actions").hidden = !RETRYABLE.has(run.status);
    if (run.retried_by) {
      button.textContent = "Open the newer attempt";
      button.dataset.next = run.retried_by;
      $("retry-hint").textContent = "This run was run again as " + run.retried_by + ".";
    } else {
      button.textContent = "Run again";
      delete button.dataset.next;
      $("retry-hint").textContent = RETRY_HINT;
    }
  }

  async function retryRun() {
    const runId = state.runId;
    const button = $("retry-run");
    if (!runId) return;
    if (button.dataset.next) {
      openRun(button.dataset.next);
      return;
    }
    button.disabled = true;
    say("run-status", "Starting a new attempt of " + runId + " …");
    const res = await api("runs/" + encodeURIComponent(runId) + "/retry", { method: "POST" });
    button.disabled = false;
    if (runId !== state.runId) return; // the reviewer opened another run meanwhile
    const next = res.body && typeof res.body === "object" && res.body.run_id ? res.body : null;
    if (!next) {
      say("run-status", "The run could not be started again: " + res.error, "error");
      return;
    }
    refreshRuns();
    openRun(next.run_id); // follow the new attempt: its live status, then its backlog
  }

  async function loadReview(runId, token) {
    const [res, saved] = await Promise.all([
      api("runs/" + encodeURIComponent(runId) + "/review"),
      api("runs/" + encodeURIComponent(runId) + "/review-state"),
    ]);
    if (token !== state.loadToken) return;
    if (!res.ok) {
      say("run-status", "The backlog could not be loaded: " + res.error, "error");
      return;
    }
    if (!saved.ok) {
      say("review-status", "The saved review could not be loaded: " + saved.error, "error");
      return;
    }
    state.review = res.body;
    state.reviewDoc = saved.body;
    state.reviewEtag = saved.body.etag || null;
    defaultDecisions();
    renderSummary();
    renderTree();
    showSaved();
    $("write").hidden = false;
    updateDecisionSummary();
    const last = state.review.write;
    if (last && last.write_id && (last.results || []).length) renderResults(last, "Last write");
  }

  // ------------------------------------------------------------------------------------------
  // summary and coverage

  function renderSummary() {
    const s = state.review.summary;
    const list = clear($("summary-list"));
    if (!s) {
      $("summary").hidden = true;
      return;
    }
    const rows = [
      ["Epics, features, stories", s.epic_count + ", " + s.feature_count + ", " + s.story_count],
      ["Tags", Object.entries(s.tag_distribution || {}).map(([t, n]) => t + " " + n).join(" · ")],
      ["Open questions", String(s.open_questions)],
      ["Constraint violations", String(s.constraint_violations)],
      ["Segments", s.segment_count + (s.skipped_segments ? " (" + s.skipped_segments + " skipped)" : "")],
    ];
    const cov = s.coverage;
    if (cov) {
      rows.push([
        "Coverage",
        cov.quoted_sentences + " of " + cov.requirement_sentences + " requirement sentences quoted by a story (" + pct(cov.share) + ")",
      ]);
    }
    const flags = (state.review.hygiene && state.review.hygiene.flags) || [];
    if (flags.length) {
      const secrets = flags.filter((f) => f.type === "secret").length;
      rows.push(["Hygiene", secrets + " secret(s) redacted, " + (flags.length - secrets) + " instruction-like span(s) treated as data; each is shown beside the story that quotes it"]);
    }
    for (const [term, value] of rows) list.append(h("dt", {}, term), h("dd", {}, value));
    // the requirement sentences no story quotes: what the reviewer still has to place
    const missed = (cov && cov.unquoted) || [];
    if (missed.length) {
      const n = missed.length + " requirement sentence" + (missed.length === 1 ? "" : "s");
      const placed = missed.filter((u) => u.taken_by).length;
      const since = placed ? " (" + placed + " placed in the review since)" : "";
      list.append(
        h("dt", {}, "Not in any story"),
        h("dd", { id: "unquoted" }, h("details", {},
          h("summary", {}, n + " no story of the run quotes" + since + ": add each to a story, make a story of it, or leave it out"),
          h("ul", { class: "quotes unquoted" }, missed.map(unquotedItem))))
      );
    }
    const outside = (state.review.hygiene && state.review.hygiene.outside) || [];
    if (outside.length) {
      list.append(h("dt", {}, "Flags outside any story"), h("dd", { id: "hygiene-outside" }, outside.map((f) => hygieneFlag(f, "the transcript"))));
    }
    const meter = h("meter", { min: "0", max: "1", value: String(cov ? cov.share : 0), "aria-label": "Coverage" });
    list.append(h("dt", { class: "visually-hidden" }, "Coverage meter"), h("dd", {}, meter));
    $("summary").hidden = false;
  }

  /** A sentence no story quoted: add it to a story, or make a new story of it (the offline
   * drafter's title filled in); once placed, where it went and the way back. */
  function unquotedItem(u) {
    const li = quoteItem(u);
    const key = u.start + "-" + u.end;
    const span = { start: u.start, end: u.end };
    if (u.taken_by) {
      const story = allStories().find((n) => n.item.item_id === u.taken_by);
      li.append(
        h("span", { class: "hint placed" }, " In the story “" + (story ? story.item.title : u.taken_by) + "” (" + u.taken_by + "). "),
        h("button", { type: "button", class: "small secondary", id: "unplace-" + key, onclick: () => {
          saveReview((doc) => { takeBack(doc, span); }, { focus: "#unquoted > details > summary", message: "Sentence taken back" });
        } }, "Take it back")
      );
      return li;
    }
    const stories = allStories().map((n) => n.item);
    const features = allFeatures();
    const controls = [];
    if (stories.length) {
      // the story that quotes what was said nearest to the sentence comes first
      const target = h("select", { id: "place-target-" + key }, stories.map((s) => h("option", { value: s.item_id, selected: s.item_id === u.nearest_story }, s.title + " (" + s.item_id + ")")));
      controls.push(h("div", { class: "field place" },
        h("label", { for: target.id }, "Add it to the story"),
        target,
        h("button", { type: "button", class: "small", id: "place-" + key, onclick: () => {
          const into = target.value;
          saveReview((doc) => {
            const edit = storyEdit(doc, into);
            edit.added_quotes = [...(edit.added_quotes || []), span];
          }, { focus: "#edit-button-" + into, message: "Sentence added to the story" });
        } }, "Add")));
    }
    if (features.length) {
      const own = features.find((f) => f.segment_id === u.segment_id);
      const title = h("input", { type: "text", id: "new-title-" + key, maxlength: "255", value: (u.draft && u.draft.title) || "" });
      const feature = h("select", { id: "new-feature-" + key }, features.map((f) => h("option", { value: f.item_id, selected: own && f.item_id === own.item_id }, f.title + " (" + f.item_id + ")")));
      controls.push(h("fieldset", { class: "new-story" },
        h("legend", {}, "Or make a story of it"),
        field("Its title", title),
        field("Under the feature", feature),
        h("div", { class: "actions" }, h("button", { type: "button", class: "small", id: "new-story-" + key, onclick: () => {
          const text = newStoryTitle(title);
          if (!text) return;
          const fid = feature.value;
          let made = null;
          saveReview((doc) => {
            doc.stories = doc.stories || {};
            let n = 1;
            while (doc.stories[fid + "-n" + n]) n += 1;
            made = fid + "-n" + n;
            const edit = { feature_id: fid, title: text, added_quotes: [span] };
            // the draft's description and criteria go with the draft's title, not with another
            if (u.draft && text === u.draft.title) {
              if (u.draft.description) edit.description = u.draft.description;
              if ((u.draft.acceptance_criteria || []).length) edit.acceptance_criteria = u.draft.acceptance_criteria;
            }
            doc.stories[made] = edit;
          }, { message: "Story made of the sentence" }).then(() => {
            const button = made && document.querySelector("#edit-button-" + made);
            if (button) button.focus();
          });
        } }, "Make a story"))));
    }
    li.append(h("details", { class: "place-controls" }, h("summary", { id: "place-open-" + key }, "Add it to a story, or make a story of it"), controls));
    return li;
  }

  /** The review without this added sentence; a story made only of it goes too. */
  function takeBack(doc, span) {
    for (const [id, edit] of Object.entries(doc.stories || {})) {
      if (!edit.added_quotes) continue;
      edit.added_quotes = edit.added_quotes.filter((q) => q.start !== span.start || q.end !== span.end);
      if (edit.added_quotes.length) continue;
      delete edit.added_quotes;
      if (madeInReview(id)) {
        delete doc.stories[id];
        if (doc.decisions) delete doc.decisions[id];
      } else if (!Object.keys(edit).length) delete doc.stories[id];
    }
  }

  /** The title typed for a new story (split off or made of a sentence); "" with the reason
   * said and the focus back in the field when it is empty. */
  function newStoryTitle(input) {
    const text = input.value.trim();
    if (!text) {
      say("review-status", "The new story needs a title.", "error");
      input.focus();
    }
    return text;
  }

  function madeInReview(id) {
    const info = state.review && state.review.stories[id];
    return Boolean(info && info.added_in_review);
  }

  // ------------------------------------------------------------------------------------------
  // the backlog tree

  function storyTag(node) {
    return node.tag ? node.tag.decision_tag : node.item.assigned_tag;
  }

  function defaultDecisions() {
    state.decisions = {};
    for (const node of allStories()) {
      const tag = storyTag(node);
      // unresolved until the reviewer decides: conflicts and tags the tagging is unsure of
      if (tag === "conflict" || (node.tag && node.tag.needs_review)) continue;
      // extend / gap of another run's story not written yet: nothing in ADO to act on
      if (pendingTarget(node.item.item_id) && tag !== "duplicate" && tag !== "new") continue;
      state.decisions[node.item.item_id] = tag === "duplicate" ? "skip" : "accept";
    }
    const saved = (state.reviewDoc && state.reviewDoc.decisions) || {};
    const present = new Set(allStories().map((n) => n.item.item_id));
    for (const [id, value] of Object.entries(saved)) if (present.has(id)) state.decisions[id] = value;
  }

  function allStories() {
    const tree = state.review && state.review.tree;
    if (!tree) return [];
    const out = [];
    for (const epic of tree.epics) for (const f of epic.features) out.push(...f.stories);
    for (const parent of tree.existing_parents) {
      for (const f of parent.features) out.push(...f.stories);
      out.push(...parent.stories);
    }
    for (const node of tree.unparented) {
      if (node.stories) out.push(...node.stories);
      else out.push(node);
    }
    return out;
  }

  function existing(id) {
    return state.review.existing[String(id)] || null;
  }

  // the pending story (another run's, reviewed, not yet written) a story was tagged against
  function pendingTarget(storyId) {
    const info = state.review && state.review.stories[storyId];
    return info && info.also_in && info.also_in.length ? info.also_in[0] : null;
  }

  function relatedLabel(id) {
    const other = existing(id);
    if (id < 0 && other && other.pending) return "story " + other.pending.story_id + " of run " + other.pending.run_id + " (not yet written)";
    return "#" + id;
  }

  function alsoIn(info) {
    return (info.also_in || []).map((p) =>
      h(
        "p",
        { class: "also-in" },
        "Also in run ",
        h("a", { href: "#run=" + p.run_id }, p.run_id),
        p.source_name ? " (" + p.source_name + ")" : "",
        ", story " + p.story_id + ": “" + (p.title || "") + "” (not yet written). Write that run first, or decide here."
      )
    );
  }

  // a project at a glance (GET /api/projects/{project}): its runs and what each wrote, its index,
  // the last sync and the stories reviewed but not yet written
  async function loadProject(project) {
    const section = $("project-view");
    const res = await api("projects/" + encodeURIComponent(project));
    if (!res.ok) {
      section.hidden = true;
      return;
    }
    const view = res.body;
    const idx = view.index || {};
    const sync = view.sync;
    $("project-heading").textContent = "Project " + view.project;
    const lines = [
      "Index: " + (idx.error ? "unavailable (" + idx.error + ")" : idx.ado_items + " Azure DevOps items, " + idx.pending_stories + " pending stories, " + idx.architecture_chunks + " architecture chunks") + ".",
      "Last sync: " + (sync ? sync.last_sync_id + ", " + sync.last_status + (sync.last_completed_at ? " (last completed " + fmtDate(sync.last_completed_at) + ")" : "") + (sync.last_report ? ": " + sync.last_report.added + " added, " + sync.last_report.updated + " updated, " + sync.last_report.deleted + " deleted" : "") : "never") + ".",
    ];
    const runs = (view.runs || []).map((r) => {
      const w = r.write;
      const wrote = w ? "wrote: " + w.created_ids.length + " created, " + w.modified_ids.length + " modified" + (w.created_ids.length ? " (#" + w.created_ids.join(", #") + ")" : "") : "not written";
      return h("li", {}, fmtDate(r.created_at) + " · ", h("a", { href: "#run=" + r.run_id }, r.source_name || r.run_id), " · " + r.status + " · " + wrote + (r.pending ? " · " + r.pending + " pending" : ""));
    });
    const pending = (view.pending || []).map((p) => h("li", {}, "“" + (p.title || "") + "” (" + p.story_id + ", run ", h("a", { href: "#run=" + p.run_id }, p.run_id), ")"));
    clear($("project-body")).append(
      ...lines.map((t) => h("p", { class: "meta" }, t)),
      h("h3", {}, "Runs"),
      runs.length ? h("ul", { class: "project-runs" }, runs) : h("p", {}, "No runs yet."),
      h("h3", {}, "Pending stories (reviewed, not yet written)"),
      pending.length ? h("ul", { class: "project-pending" }, pending) : h("p", {}, "None.")
    );
    section.hidden = false;
  }

  function renderTree() {
    const tree = state.review.tree;
    const root = clear($("tree"));
    if (!tree) {
      root.append(h("p", {}, "No backlog yet."));
      return;
    }
    const top = h("ul", { class: "tree" });
    for (const epic of tree.epics) {
      top.append(
        h(
          "li",
          { class: "node epic" },
          headed("h3", "Epic", epic.item),
          itemWarnings(epic.item),
          questions(epic.item),
          h("ul", { class: "children" }, epic.features.map(featureNode))
        )
      );
    }
    for (const parent of tree.existing_parents) {
      const known = existing(parent.work_item_id);
      top.append(
        h(
          "li",
          { class: "node existing-parent" },
          h(
            "h3",
            {},
            h("span", { class: "kind" }, "Existing #" + parent.work_item_id),
            " ",
            h("span", { class: "item-title" }, known && known.title ? known.title : "")
          ),
          h("ul", { class: "children" }, parent.features.map(featureNode), parent.stories.map(storyNode))
        )
      );
    }
    if (tree.unparented.length) {
      top.append(
        h(
          "li",
          { class: "node unparented" },
          h("h3", {}, h("span", { class: "kind" }, "Without a parent")),
          h("ul", { class: "children" }, tree.unparented.map((n) => (n.stories ? featureNode(n) : storyNode(n))))
        )
      );
    }
    root.append(top);
    const questionsList = openQuestionStories();
    if (questionsList) root.append(questionsList);
    $("backlog").hidden = false;
  }

  function featureNode(node) {
    return h(
      "li",
      { class: "node feature" },
      headed("h4", "Feature", node.item),
      itemWarnings(node.item),
      questions(node.item),
      h("ul", { class: "children" }, node.stories.map(storyNode))
    );
  }

  /** An item's own warnings (drafting, merging, revised decisions), text only. */
  function itemWarnings(item) {
    const warnings = item.warnings || [];
    if (!warnings.length) return null;
    return warnings.map((w) => h("p", { class: "warning item-warning" }, "⚠ ", w));
  }

  /** A hygiene flag: a redacted secret (its value is never shown) or an instruction-like span. */
  function hygieneFlag(flag, where) {
    const kinds = (flag.kinds || []).map((k) => String(k).replace(/_/g, " ")).join(", ");
    if (flag.type === "secret") {
      return h(
        "p",
        { class: "warning hygiene-flag", "data-flag": "secret" },
        "🔒 A secret (" + kinds + ") was redacted from " + where + " (transcript line " + flag.line + "); only the placeholder was used."
      );
    }
    return h(
      "p",
      { class: "warning hygiene-flag", "data-flag": "instruction" },
      "⚠ Instruction-like text in " + where + " (" + kinds + ", line " + flag.line + "), treated as meeting content, never followed: ",
      h("q", {}, flag.text || "")
    );
  }

  function questions(item) {
    const qs = item.open_questions || [];
    if (!qs.length) return null;
    return h(
      "div",
      { class: "questions" },
      h("p", { class: "label" }, "Open questions"),
      h("ul", {}, qs.map((q) => h("li", {}, "? ", q.question)))
    );
  }

  function storyNode(node) {
    const item = node.item;
    const tag = storyTag(node);
    const info = state.review.stories[item.item_id] || {};
    const headingId = "title-" + item.item_id;
    const record = node.tag;
    const children = [
      h(
        "h5",
        { id: headingId },
        badge(tag),
        " ",
        h("span", { class: "story-title" }, item.title),
        " ",
        h("span", { class: "muted" }, "(" + item.item_id + ")")
      ),
      storyEditor(item, info),
    ];
    if (record) {
      const related = (record.related_story_ids || []).map(relatedLabel).join(", ");
      children.push(
        h(
          "p",
          { class: "reason" },
          "Tagged " + tag + (related ? " against " + related : "") + " (max similarity " +
            Number(record.max_similarity || 0).toFixed(2) +
            (record.confidence != null ? ", confidence " + Math.round(record.confidence * 100) + "%" : "") +
            "): ",
          record.reasoning_excerpt || "",
          record.tagging_failed ? " Tagging failed; tagged new by default." : ""
        )
      );
      if (record.needs_review) {
        const alt = record.model_tag ? " The model said " + record.model_tag + "." : "";
        children.push(
          h("p", { class: "warning needs-review" }, "⚠ Needs your decision: ", (record.review_reasons || []).join("; "), alt)
        );
      }
    }
    if (item.description) children.push(h("p", { class: "description" }, item.description));
    if (item.acceptance_criteria && item.acceptance_criteria.length) {
      children.push(
        h("p", { class: "label" }, "Acceptance criteria"),
        h("ol", { class: "acs story-acs" }, item.acceptance_criteria.map((ac) => h("li", {}, ac)))
      );
    }
    children.push(editedNote(item, info));
    children.push(itemWarnings(item));
    for (const flag of info.hygiene || []) children.push(hygieneFlag(flag, "this story's quotes"));
    if (item.constraint_violation) {
      children.push(
        h("p", { class: "warning" }, "⚠ Architecture constraint: ", (item.constraint_notes || []).join("; ") || "violates an architecture constraint")
      );
    }
    children.push(questions(item));
    children.push(sourceDetails(item, info));
    children.push(alsoIn(info));
    if (info.compare_with != null) children.push(diffDetails(item, info));
    children.push(decisionControls(item, tag, headingId));
    children.push(h("p", { class: "planned", id: "planned-" + item.item_id, hidden: true }));
    return h(
      "li",
      { class: "node story-node" },
      h(
        "article",
        { class: "story tag-border-" + tag, id: "story-" + item.item_id, "data-story-id": item.item_id, "data-tag": tag, "aria-labelledby": headingId },
        children
      )
    );
  }

  // ------------------------------------------------------------------------------------------
  // editing: every change is saved at once in the run's review (PUT .../review-state with the
  // ETag last read); a stale save (someone else saved in between) is explained and reloaded

  function showSaved(message) {
    const doc = state.reviewDoc;
    let text = doc && doc.version
      ? "Review saved: version " + doc.version + (doc.saved_by ? " by " + doc.saved_by : "") + (doc.saved_at ? ", " + fmtDate(doc.saved_at) : "") + "."
      : "Nothing edited or decided yet: every change you make here is saved for this run.";
    if (message) text = message + ". " + text;
    say("review-status", text, message ? "ok" : "info");
  }

  function storyEdit(doc, id) {
    doc.stories = doc.stories || {};
    doc.stories[id] = doc.stories[id] || {};
    return doc.stories[id];
  }

  /** Save the review with ``change`` applied to the latest saved copy (saves never overlap). */
  function saveReview(change, opts) {
    const runId = state.runId;
    const options = opts || {};
    state.saving = state.saving.then(async () => {
      if (runId !== state.runId || !state.reviewDoc) return;
      const doc = JSON.parse(JSON.stringify(state.reviewDoc));
      doc.decisions = doc.decisions || {};
      if (change) change(doc);
      else Object.assign(doc.decisions, explicitDecisions());
      const headers = { "Content-Type": "application/json" };
      if (state.reviewEtag) headers["If-Match"] = state.reviewEtag;
      say("review-status", "Saving …");
      const res = await api("runs/" + encodeURIComponent(runId) + "/review-state", {
        method: "PUT",
        headers: headers,
        body: JSON.stringify(doc),
      });
      if (runId !== state.runId) return;
      if (res.status === 409 && res.body && res.body.code === "stale_review") {
        const current = res.body.current || {};
        await reloadReview();
        say(
          "review-status",
          "Not saved: someone else saved this review since you loaded it (version " + (current.version || "?") +
            (current.saved_by ? " by " + current.saved_by : "") + "). Their version is shown now; make your change again.",
          "error"
        );
        $("review-status").focus();
        return;
      }
      if (!res.ok) {
        const problems = res.body && Array.isArray(res.body.problems) ? " (" + res.body.problems.join("; ") + ")" : "";
        say("review-status", "Not saved: " + res.error + problems, "error");
        return;
      }
      state.reviewDoc = res.body;
      state.reviewEtag = res.body.etag || null;
      if (options.rerender !== false) await reloadReview(options.focus);
      showSaved(options.message || "Saved");
      updateDecisionSummary();
    });
    return state.saving;
  }

  /** The decisions the reviewer made on this page (defaults are not saved as decisions). */
  function explicitDecisions() {
    return state.touched ? Object.fromEntries([...state.touched].map((id) => [id, state.decisions[id]])) : {};
  }

  /** The backlog again, with the saved review applied by the server; the focus goes to ``focus``. */
  async function reloadReview(focus) {
    const runId = state.runId;
    const [res, saved] = await Promise.all([
      api("runs/" + encodeURIComponent(runId) + "/review"),
      api("runs/" + encodeURIComponent(runId) + "/review-state"),
    ]);
    if (runId !== state.runId || !res.ok || !saved.ok) return;
    state.review = res.body;
    state.reviewDoc = saved.body;
    state.reviewEtag = saved.body.etag || null;
    state.touched = new Set();
    state.editing = null;
    defaultDecisions();
    renderSummary();
    renderTree();
    updateDecisionSummary();
    showSaved();
    const target = focus ? document.querySelector(focus) : null;
    if (target) target.focus();
  }

  function allFeatures() {
    const tree = state.review && state.review.tree;
    if (!tree) return [];
    const out = [];
    for (const epic of tree.epics) out.push(...epic.features);
    for (const parent of tree.existing_parents) out.push(...parent.features);
    for (const node of tree.unparented) if (node.stories) out.push(node);
    return out.map((f) => f.item);
  }

  function field(label, control) {
    return h("div", { class: "field" }, h("label", { for: control.id }, label), control);
  }

  /** The Edit button and its form for an epic's or a feature's title. */
  function titleEditor(item, kind) {
    const id = item.item_id;
    const input = h("input", { type: "text", id: "edit-title-" + id, value: item.title, maxlength: "255", required: true });
    const form = h(
      "form",
      {
        class: "editor", id: "edit-" + id, hidden: true,
        onsubmit: (event) => {
          event.preventDefault();
          const title = input.value.trim();
          if (!title) return say("review-status", "A title cannot be empty.", "error");
          saveReview((doc) => {
            const key = kind === "Epic" ? "epics" : "features";
            doc[key] = doc[key] || {};
            doc[key][id] = { title: title };
          }, { focus: "#edit-button-" + id, message: kind + " renamed" });
        },
      },
      field(kind + " title", input),
      h("div", { class: "actions" }, h("button", { type: "submit" }, "Save the title"), h("button", { type: "button", class: "secondary", onclick: () => toggleEditor(id, false) }, "Cancel"))
    );
    return [editButton(id, "Rename " + kind.toLowerCase() + " " + item.title, "Rename"), form];
  }

  /** An epic's or a feature's heading with its Rename button, and the rename form. */
  function headed(tag, kind, item) {
    const [button, form] = titleEditor(item, kind);
    return [h(tag, {}, h("span", { class: "kind" }, kind), " ", h("span", { class: "item-title" }, item.title), " ", button), form];
  }

  function editButton(id, label, text) {
    return h("button", { type: "button", class: "small edit-button", id: "edit-button-" + id, "aria-expanded": "false", "aria-controls": "edit-" + id, "aria-label": label, onclick: () => toggleEditor(id) }, text || "Edit");
  }

  function toggleEditor(id, open) {
    const form = $("edit-" + id);
    const button = $("edit-button-" + id);
    if (!form || !button) return;
    const show = open === undefined ? form.hidden : open;
    form.hidden = !show;
    button.setAttribute("aria-expanded", show ? "true" : "false");
    if (show) {
      const first = form.querySelector("input, textarea, select");
      if (first) first.focus();
    } else button.focus();
  }

  /** The story's Edit button and form: title, description, criteria, its feature; merge, split,
   * open question. */
  function storyEditor(item, info) {
    const id = item.item_id;
    const title = h("input", { type: "text", id: "edit-title-" + id, value: item.title, maxlength: "255", required: true });
    const description = h("textarea", { id: "edit-description-" + id, rows: "3" }, item.description || "");
    const list = h("ol", { class: "ac-editor", id: "edit-acs-" + id });
    const relabel = () => {
      [...list.children].forEach((li, i) => li.querySelector("input").setAttribute("aria-label", "Acceptance criterion " + (i + 1)));
    };
    const acRow = (text) => {
      const input = h("input", { type: "text", class: "ac-input", value: text });
      const li = h("li", {}, input);
      li.append(
        h("button", { type: "button", class: "small secondary", "aria-label": "Move this criterion up", onclick: () => {
          if (li.previousElementSibling) list.insertBefore(li, li.previousElementSibling);
          relabel();
          li.querySelector("button").focus();
        } }, "↑"),
        h("button", { type: "button", class: "small secondary", "aria-label": "Move this criterion down", onclick: () => {
          if (li.nextElementSibling) list.insertBefore(li.nextElementSibling, li);
          relabel();
          li.querySelectorAll("button")[1].focus();
        } }, "↓"),
        h("button", { type: "button", class: "small secondary", "aria-label": "Remove this criterion", onclick: () => {
          const next = li.nextElementSibling || li.previousElementSibling;
          li.remove();
          relabel();
          (next ? next.querySelector("input") : add).focus();
        } }, "Remove")
      );
      return li;
    };
    for (const ac of item.acceptance_criteria || []) list.append(acRow(ac));
    relabel();
    const add = h("button", { type: "button", class: "small secondary", id: "edit-add-ac-" + id, onclick: () => {
      const li = acRow("");
      list.append(li);
      relabel();
      li.querySelector("input").focus();
    } }, "Add a criterion");
    const features = allFeatures();
    const feature = h(
      "select",
      { id: "edit-feature-" + id },
      features.map((f) => h("option", { value: f.item_id, selected: f.item_id === item.feature_id }, f.title + " (" + f.item_id + ")"))
    );
    const save = (event) => {
      event.preventDefault();
      const newTitle = title.value.trim();
      if (!newTitle) {
        say("review-status", "A story needs a title.", "error");
        title.focus();
        return;
      }
      const acs = [...list.querySelectorAll("input.ac-input")].map((i) => i.value.trim()).filter((t) => t);
      saveReview((doc) => {
        const edit = storyEdit(doc, id);
        if (newTitle !== item.title) edit.title = newTitle;
        if (description.value !== (item.description || "")) edit.description = description.value;
        if (JSON.stringify(acs) !== JSON.stringify(item.acceptance_criteria || [])) edit.acceptance_criteria = acs;
        if (features.length && feature.value && feature.value !== item.feature_id) edit.feature_id = feature.value;
      }, { focus: "#edit-button-" + id, message: "Story saved" });
    };
    const form = h(
      "form",
      { class: "editor", id: "edit-" + id, hidden: true, onsubmit: save, "aria-label": "Edit " + item.title },
      field("Title", title),
      field("Description", description),
      h("fieldset", { class: "ac-fieldset" }, h("legend", {}, "Acceptance criteria"), list, add),
      features.length > 1 ? field("Feature", feature) : null,
      h("div", { class: "actions" }, h("button", { type: "submit", id: "edit-save-" + id }, "Save the story"), h("button", { type: "button", class: "secondary", onclick: () => toggleEditor(id, false) }, "Cancel")),
      moreActions(item, info)
    );
    return [editButton(id, "Edit story " + item.title), form];
  }

  function moreActions(item, info) {
    const id = item.item_id;
    const others = allStories().map((n) => n.item).filter((s) => s.item_id !== id);
    const target = h("select", { id: "merge-target-" + id }, others.map((s) => h("option", { value: s.item_id }, s.title + " (" + s.item_id + ")")));
    const merge = others.length
      ? h(
          "div",
          { class: "field merge" },
          h("label", { for: target.id }, "Merge this story into"),
          target,
          h("button", { type: "button", class: "small", id: "merge-" + id, onclick: () => {
            const into = target.value;
            saveReview((doc) => { storyEdit(doc, id).merged_into = into; }, { focus: "#edit-button-" + into, message: "Stories merged" });
          } }, "Merge")
        )
      : null;
    // split: the criteria and quotes that move to a new story
    const splitTitle = h("input", { type: "text", id: "split-title-" + id, maxlength: "255" });
    const acBoxes = (item.acceptance_criteria || []).map((ac, i) => {
      const box = h("input", { type: "checkbox", id: "split-ac-" + id + "-" + i, value: String(i) });
      return h("div", { class: "choice" }, box, h("label", { for: box.id }, ac));
    });
    // quote indexes count in the generated story's quotes: offered while no split took any yet
    const splitBefore = Object.values((state.reviewDoc && state.reviewDoc.stories) || {}).some((e) => e.split_from === id);
    const quoteBoxes = (splitBefore ? [] : info.quotes || []).map((q, i) => {
      const box = h("input", { type: "checkbox", id: "split-quote-" + id + "-" + i, value: String(i) });
      return h("div", { class: "choice" }, box, h("label", { for: box.id }, "“" + q.text + "”"));
    });
    const split = h(
      "fieldset",
      { class: "split" },
      h("legend", {}, "Split off a new story"),
      field("The new story's title", splitTitle),
      acBoxes.length ? h("p", { class: "label" }, "Criteria that move to it") : null,
      acBoxes,
      quoteBoxes.length > 1 ? h("p", { class: "label" }, "Quotes that move to it") : null,
      quoteBoxes.length > 1 ? quoteBoxes : null,
      h("div", { class: "actions" }, h("button", { type: "button", class: "small", id: "split-" + id, onclick: () => {
        const newTitle = newStoryTitle(splitTitle);
        if (!newTitle) return;
        const moved = new Set(acBoxes.map((d) => d.querySelector("input")).filter((b) => b.checked).map((b) => Number(b.value)));
        const quotes = quoteBoxes.length > 1 ? quoteBoxes.map((d) => d.querySelector("input")).filter((b) => b.checked).map((b) => Number(b.value)) : [];
        const acs = item.acceptance_criteria || [];
        saveReview((doc) => {
          doc.stories = doc.stories || {};
          let n = 1;
          while (doc.stories[id + "-x" + n]) n += 1;
          doc.stories[id + "-x" + n] = { split_from: id, title: newTitle, acceptance_criteria: acs.filter((_, i) => moved.has(i)), quotes: quotes };
          if (moved.size) storyEdit(doc, id).acceptance_criteria = acs.filter((_, i) => !moved.has(i));
        }, { focus: "#edit-button-" + id, message: "Story split" });
      } }, "Split"))
    );
    const question = h("button", { type: "button", class: "small secondary", id: "open-question-" + id, onclick: () => {
      saveReview((doc) => { storyEdit(doc, id).open_question = true; }, { focus: "#open-questions-heading", message: "Made an open question" });
    } }, "Make it an open question (not written)");
    return h("div", { class: "more-actions" }, merge, split, h("div", { class: "actions" }, question));
  }

  /** What the saved review changed on this story: the original text, merged stories; undo. */
  function editedNote(item, info) {
    const id = item.item_id;
    const doc = state.reviewDoc || {};
    const edit = (doc.stories || {})[id] || {};
    const parts = [];
    const merged = Object.entries(doc.stories || {}).filter(([, e]) => e.merged_into === id).map(([sid]) => sid);
    if (info.original) {
      const o = info.original;
      parts.push(
        h(
          "details",
          { class: "original" },
          h("summary", {}, "Edited: the generated text"),
          h("p", {}, h("span", { class: "label" }, "Title: "), o.title || ""),
          o.description ? h("p", { class: "prewrap" }, o.description) : null,
          (o.acceptance_criteria || []).length ? h("ol", { class: "acs" }, o.acceptance_criteria.map((ac) => h("li", {}, ac))) : null,
          h("button", { type: "button", class: "small secondary", id: "undo-edit-" + id, onclick: () => {
            saveReview((d) => {
              const e = storyEdit(d, id);
              for (const key of ["title", "description", "acceptance_criteria", "feature_id"]) delete e[key];
            }, { focus: "#edit-button-" + id, message: "Edits undone" });
          } }, "Undo my edits")
        )
      );
    }
    if (edit.split_from) {
      parts.push(h("p", { class: "hint split-note" }, "Split from " + edit.split_from + ". ",
        h("button", { type: "button", class: "small secondary", onclick: () => {
          saveReview((d) => { delete d.stories[id]; }, { focus: "#edit-button-" + edit.split_from, message: "Split undone" });
        } }, "Undo the split")));
    }
    if (info.added_in_review) {
      parts.push(h("p", { class: "hint added-note" }, "Made in the review from a sentence no story quoted; it was not compared with the existing backlog. ",
        h("button", { type: "button", class: "small secondary", id: "remove-added-" + id, onclick: () => {
          saveReview((d) => { delete d.stories[id]; if (d.decisions) delete d.decisions[id]; }, { focus: "#unquoted > details > summary", message: "Story removed" });
        } }, "Remove this story")));
    } else if ((edit.added_quotes || []).length) {
      const n = edit.added_quotes.length;
      parts.push(h("p", { class: "hint added-note" }, n + " sentence" + (n === 1 ? "" : "s") + " no story quoted added in the review. ",
        h("button", { type: "button", class: "small secondary", id: "unadd-" + id, onclick: () => {
          saveReview((d) => { delete storyEdit(d, id).added_quotes; if (!Object.keys(d.stories[id]).length) delete d.stories[id]; }, { focus: "#edit-button-" + id, message: "Added sentences taken back" });
        } }, "Take them back")));
    }
    for (const sid of merged) {
      parts.push(h("p", { class: "hint merge-note" }, "Merged into this story: " + sid + " (its quotes and criteria are here). ",
        h("button", { type: "button", class: "small secondary", onclick: () => {
          saveReview((d) => { delete storyEdit(d, sid).merged_into; }, { focus: "#edit-button-" + id, message: "Merge undone" });
        } }, "Undo the merge of " + sid)));
    }
    return parts;
  }

  /** Stories the reviewer made open questions: listed, with the way back. */
  function openQuestionStories() {
    const list = state.review.open_question_stories || [];
    if (!list.length) return null;
    return h(
      "section",
      { class: "open-question-stories", "aria-labelledby": "open-questions-heading" },
      h("h3", { id: "open-questions-heading", tabindex: "-1" }, "Stories turned into open questions (not written)"),
      h("ul", {}, list.map((q) => h("li", {}, "? ", q.title, " ",
        h("button", { type: "button", class: "small secondary", onclick: () => {
          saveReview((d) => { delete storyEdit(d, q.story_id).open_question; }, { focus: "#edit-button-" + q.story_id, message: "A story again" });
        } }, "Make it a story again"))))
    );
  }

  function sourceDetails(item, info) {
    const segment = (state.review.segments || []).find((s) => s.segment_id === item.segment_id);
    const quotes = info.quotes || [];
    const elsewhere = quotes.filter((q) => q.segment_id !== item.segment_id);
    const summary = h(
      "summary",
      {},
      "Source: " + quotes.length + " quote" + (quotes.length === 1 ? "" : "s") +
        (segment ? " in segment " + segment.segment_order : "") +
        (elsewhere.length ? " and " + elsewhere.length + " from other segments" : "")
    );
    const body = [h("ul", { class: "quotes" }, quotes.map(quoteItem))];
    if (segment) body.push(highlighted(segment.text, quotes.filter((q) => q.segment_id === item.segment_id)));
    const superseded = info.superseded || [];
    if (superseded.length) {
      body.push(
        h("p", { class: "label" }, "Superseded (revised later in the meeting)"),
        h("ul", { class: "quotes superseded" }, superseded.map(quoteItem))
      );
    }
    return h("details", { class: "source" }, summary, body);
  }

  /** One quote: the words, then who said it and when (text only). */
  function quoteItem(q) {
    const who = [q.speaker, q.timecode].filter((x) => x).join(", ");
    return h("li", {}, h("q", {}, q.text), who ? h("span", { class: "muted said-by" }, " (" + who + ")") : null);
  }

  /** The segment text with the quotes in <mark>; text only, quotes sorted and merged. */
  function highlighted(text, quotes) {
    const spans = quotes
      .filter((q) => q.segment_start != null && q.segment_end != null)
      .map((q) => [q.segment_start, q.segment_end])
      .sort((a, b) => a[0] - b[0]);
    const merged = [];
    for (const span of spans) {
      const last = merged[merged.length - 1];
      if (last && span[0] <= last[1]) last[1] = Math.max(last[1], span[1]);
      else merged.push(span.slice());
    }
    const block = h("blockquote", { class: "segment" });
    let pos = 0;
    for (const [start, end] of merged) {
      if (start > pos) block.append(document.createTextNode(text.slice(pos, start)));
      block.append(h("mark", {}, h("span", { class: "visually-hidden" }, "[quoted] "), text.slice(start, end)));
      pos = end;
    }
    if (pos < text.length) block.append(document.createTextNode(text.slice(pos)));
    return block;
  }

  function diffDetails(item, info) {
    const other = existing(info.compare_with) || { work_item_id: info.compare_with, title: "", description: "", acceptance_criteria: [], found: false };
    const url = safeUrl(other.url);
    const added = (info.generated_acs || []).filter((ac) => ac.added).length;
    const summary = h(
      "summary",
      {},
      (other.pending ? "Compare with " + relatedLabel(other.work_item_id) : "Compare with existing #" + other.work_item_id) + (other.title ? ": " + other.title : "") +
        " (" + added + " acceptance criteri" + (added === 1 ? "on" : "a") + " added)"
    );
    const existingAcs = h(
      "ul",
      { class: "acs" },
      (info.existing_acs || []).map((ac) =>
        h("li", { class: ac.kept ? "kept" : "only-existing" }, ac.kept ? "" : h("span", { class: "marker" }, "Not in generated: "), ac.text)
      )
    );
    const generatedAcs = h(
      "ul",
      { class: "acs" },
      (info.generated_acs || []).map((ac) =>
        ac.added
          ? h("li", { class: "added" }, h("ins", {}, h("span", { class: "marker" }, "Added: "), ac.text))
          : h("li", { class: "kept" }, ac.text)
      )
    );
    const table = h(
      "table",
      { class: "diff" },
      h("caption", {}, "Existing work item #" + other.work_item_id + " beside the generated story"),
      h(
        "thead",
        {},
        h("tr", {}, h("th", { scope: "col" }, "Field"), h("th", { scope: "col" }, "Existing #" + other.work_item_id), h("th", { scope: "col" }, "Generated"))
      ),
      h(
        "tbody",
        {},
        h("tr", {}, h("th", { scope: "row" }, "Title"), h("td", {}, other.title || "(unknown)"), h("td", {}, item.title)),
        h("tr", {}, h("th", { scope: "row" }, "Description"), h("td", { class: "prewrap" }, other.description || "–"), h("td", { class: "prewrap" }, item.description || "–")),
        h("tr", {}, h("th", { scope: "row" }, "Acceptance criteria"), h("td", {}, existingAcs), h("td", {}, generatedAcs))
      )
    );
    const body = [table];
    if (!other.found) body.push(h("p", { class: "hint" }, "This work item is not in the loaded backlog any more; only its id and title are known."));
    if (url) body.push(h("p", {}, h("a", { href: url, target: "_blank", rel: "noopener noreferrer" }, "Open #" + other.work_item_id + " in Azure DevOps")));
    return h("details", { class: "diff-details" }, summary, body);
  }

  function decisionControls(item, tag, headingId) {
    // keep / replace / both need an item in Azure DevOps: another run's unwritten story is not one
    const choices = tag === "conflict" && !pendingTarget(item.item_id) ? CONFLICT_CHOICES : PLAIN_CHOICES;
    const name = "decision-" + item.item_id;
    const current = state.decisions[item.item_id];
    const legendId = "legend-" + item.item_id;
    const unsure = pendingTarget(item.item_id)
      ? "Its counterpart is another run's story, not yet written: accept creates it as a new story."
      : tag === "conflict" ? "Unresolved conflict: choose how to resolve it." : "The tagging is unsure: choose an action.";
    const status = h("span", { class: "decision-state", id: "state-" + item.item_id }, current ? "" : unsure);
    const fieldset = h(
      "fieldset",
      { class: "decision", "aria-describedby": "state-" + item.item_id },
      h("legend", { id: legendId }, tag === "conflict" ? "Resolve the conflict" : "Decision"),
      choices.map(([value, label]) => {
        const id = name + "-" + value;
        return h(
          "div",
          { class: "choice" },
          h("input", {
            type: "radio",
            id: id,
            name: name,
            value: value,
            checked: current === value,
            "aria-describedby": headingId,
            onchange: () => setDecision(item.item_id, value),
          }),
          h("label", { for: id }, label)
        );
      }),
      status
    );
    return fieldset;
  }

  function setDecision(storyId, value) {
    state.decisions[storyId] = value;
    state.touched = state.touched || new Set();
    state.touched.add(storyId);
    const status = $("state-" + storyId);
    if (status) status.textContent = "";
    updateDecisionSummary();
    saveReview(null, { rerender: false, message: "Decision saved" });
  }

  function unresolved() {
    return allStories().filter(
      (n) => (storyTag(n) === "conflict" || (n.tag && n.tag.needs_review) || (pendingTarget(n.item.item_id) && !["duplicate", "new"].includes(storyTag(n)))) && !state.decisions[n.item.item_id]
    );
  }

  function updateDecisionSummary() {
    const stories = allStories();
    const counts = {};
    for (const value of Object.values(state.decisions)) counts[value] = (counts[value] || 0) + 1;
    const pending = unresolved();
    const open = pending.filter((n) => storyTag(n) === "conflict").length;
    const unsure = pending.length - open;
    const parts = Object.entries(counts).map(([k, n]) => k.replace("_", " ") + " " + n);
    $("decision-summary").textContent =
      stories.length + " stories: " + (parts.join(", ") || "no decisions") +
      (open ? ". " + open + " unresolved conflict" + (open === 1 ? "" : "s") + " (not written until resolved)" : "") +
      (unsure ? ". " + unsure + " unsure tag" + (unsure === 1 ? "" : "s") + " to decide (not written until decided)" : "") +
      ".";
    const fresh = state.previewed !== null && state.previewed === previewKey(state.decisions);
    $("write-button").disabled = !fresh;
    if (state.previewed !== null && !fresh) {
      say("write-status", "The decisions or the stories changed since the preview: preview again before writing.");
    }
  }

  /** What a preview depends on: the decisions sent and the saved edits (not their version: a
   * saved decision alone does not make the preview stale). */
  function previewKey(decisions) {
    const doc = state.reviewDoc || {};
    return JSON.stringify({ decisions: decisions, epics: doc.epics || {}, features: doc.features || {}, stories: doc.stories || {} });
  }

  // ------------------------------------------------------------------------------------------
  // dry run and write

  async function submitWrite(dryRun) {
    const runId = state.runId;
    if (!runId) return;
    await state.saving; // the edits being saved are part of what is previewed or written
    const decisions = Object.assign({}, state.decisions);
    const button = dryRun ? $("dry-run") : $("write-button");
    $("dry-run").disabled = true;
    $("write-button").disabled = true;
    say("write-status", dryRun ? "Preparing the preview …" : "Writing to Azure DevOps …");
    const res = await api("runs/" + encodeURIComponent(runId) + "/write", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({
        dry_run: dryRun,
        decisions: decisions,
        allow_empty_backlog: $("allow-empty-backlog").checked,
      }),
    });
    $("dry-run").disabled = false;
    if (runId !== state.runId) return;
    if (!res.ok) {
      let text = (dryRun ? "The preview failed: " : "The write failed: ") + res.error;
      const problems = res.body && Array.isArray(res.body.problems) ? res.body.problems : [];
      if (problems.length) text += " (" + problems.join("; ") + ")";
      say("write-status", text, "error");
      updateDecisionSummary();
      button.focus();
      return;
    }
    if (dryRun) {
      state.previewed = previewKey(decisions);
      renderPlan(res.body);
      updateDecisionSummary();
      let text = "Preview ready: " + countsText(res.body.counts) + ". Nothing was written yet.";
      if (res.body.checked_against_ado === false) text += " Azure DevOps was not checked (not configured): items already there are not recognised.";
      if (res.body.ado_error) text += " Checking Azure DevOps stopped early: " + res.body.ado_error;
      say("write-status", text, "ok");
    } else {
      state.previewed = null;
      clear($("plan")); // the results replace the preview
      renderResults(res.body, "Write results");
      updateDecisionSummary();
      const failed = (res.body.results || []).filter((r) => r.status === "failed" || r.error).length;
      say("write-status", "Write finished: " + countsText(res.body.counts) + (failed ? ". " + failed + " item(s) failed." : "."), failed ? "error" : "ok");
    }
  }

  function countsText(counts) {
    if (!counts) return "no counts";
    const parts = Object.entries(counts).filter(([, n]) => typeof n === "number").map(([k, n]) => k.replace(/_/g, " ") + " " + n);
    return parts.join(", ") || "nothing to do";
  }

  function parentCell(r, titles) {
    if (r.parent_ref == null) return "";
    const ref = String(r.parent_ref);
    if (ref.startsWith("ado:")) return "#" + ref.slice(4) + " (existing)";
    return titles.has(ref) ? titles.get(ref) : ref;
  }

  function rowsTable(id, caption, rows, withResult) {
    const titles = new Map(rows.map((r) => [String(r.item_id), r.title]));
    const columns = [
      ["Item", (r) => h("code", {}, r.item_id)],
      ["Type", (r) => r.type],
      ["Title", (r) => r.title],
      ["Tag / decision", (r) => [r.tag, r.decision ? r.decision.replace(/_/g, " ") : null].filter(Boolean).join(" / ")],
      ["Action", (r) => (r.action || "").replace(/_/g, " ")],
      ["Status", (r) => r.status || ""],
      ["Azure DevOps id", (r) => adoCell(r)],
      ["Parent", (r) => parentCell(r, titles)],
      ["Existing", (r) => (r.existing_id != null ? "#" + r.existing_id : "")],
      ["Reason", (r) => [r.reason, r.error ? "Error: " + r.error : null].filter(Boolean).join(" · ")],
    ];
    return h(
      "div",
      { class: "table-wrap" },
      h(
        "table",
        { id: id, class: "plan" },
        h("caption", {}, caption),
        h("thead", {}, h("tr", {}, columns.map(([name]) => h("th", { scope: "col" }, name)))),
        h(
          "tbody",
          {},
          rows.map((r) =>
            h(
              "tr",
              { "data-item-id": r.item_id, "data-action": r.action, "data-status": r.status || null },
              columns.map(([, get]) => {
                const value = get(r);
                return h("td", {}, value instanceof Node ? value : value == null ? "" : String(value));
              })
            )
          )
        )
      )
    );
  }

  function adoCell(r) {
    if (r.ado_id == null) return "";
    const url = safeUrl(r.url);
    return url ? h("a", { href: url, target: "_blank", rel: "noopener noreferrer" }, "#" + r.ado_id) : "#" + r.ado_id;
  }

  function markStories(rows, withResult) {
    for (const node of document.querySelectorAll("p.planned")) {
      node.hidden = true;
      node.textContent = "";
    }
    for (const r of rows) {
      const node = $("planned-" + r.item_id);
      if (!node) continue;
      let text = (withResult ? "Written: " : "Planned: ") + (r.action || "").replace(/_/g, " ");
      if (r.status) text += " (" + r.status + (r.ado_id != null ? ", #" + r.ado_id : "") + ")";
      if (r.reason) text += " – " + r.reason;
      if (r.error) text += " – error: " + r.error;
      node.textContent = text;
      node.hidden = false;
    }
  }

  function renderPlan(body) {
    const rows = body.plan || body.results || [];
    const target = clear($("plan"));
    target.append(h("h3", {}, "Preview"), h("p", { class: "meta" }, countsText(body.counts)), rowsTable("plan-table", "What the write would do", rows, false));
    markStories(rows, false);
  }

  function renderResults(body, title) {
    const rows = body.results || body.plan || [];
    state.lastWriteId = body.write_id || null;
    $("undo").hidden = !state.lastWriteId;
    $("undo-button").disabled = true;
    say("undo-status", "");
    clear($("undo-results"));
    const target = clear($("results"));
    const when = body.finished_at || body.completed_at || body.written_at || body.created_at;
    target.append(
      h("h3", {}, title),
      h("p", { class: "meta" }, countsText(body.counts) + (when ? " · " + fmtDate(when) : "")),
      rowsTable("results-table", title + " from Azure DevOps", rows, true)
    );
    markStories(rows, true);
  }

  /** Undo the latest write: a preview (dry run) first, then the rollback of that same write. */
  async function undoWrite(dryRun) {
    const runId = state.runId;
    const writeId = state.lastWriteId;
    if (!runId || !writeId) return;
    $("undo-preview").disabled = true;
    $("undo-button").disabled = true;
    say("undo-status", dryRun ? "Preparing the preview …" : "Undoing write " + writeId + " …");
    const res = await api("runs/" + encodeURIComponent(runId) + "/rollback", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ write_id: writeId, dry_run: dryRun }),
    });
    $("undo-preview").disabled = false;
    if (runId !== state.runId) return;
    if (!res.ok) {
      say("undo-status", (dryRun ? "The preview failed: " : "The undo failed: ") + res.error, "error");
      return;
    }
    const rows = res.body.results || [];
    const columns = [
      ["Item", (r) => h("code", {}, r.item_id)],
      ["Title", (r) => r.title],
      ["Azure DevOps id", (r) => (r.ado_id != null ? "#" + r.ado_id : "")],
      ["Action", (r) => r.action],
      ["Status", (r) => r.status.replace(/_/g, " ")],
      ["Reason", (r) => [r.reason, r.error].filter(Boolean).join(" · ")],
    ];
    clear($("undo-results")).append(
      h(
        "div",
        { class: "table-wrap" },
        h(
          "table",
          { id: "undo-table", class: "plan" },
          h("caption", {}, dryRun ? "What undoing " + writeId + " would do" : "Undoing " + writeId),
          h("thead", {}, h("tr", {}, columns.map(([name]) => h("th", { scope: "col" }, name)))),
          h("tbody", {}, rows.map((r) => h("tr", { "data-item-id": r.item_id, "data-status": r.status }, columns.map(([, get]) => h("td", {}, get(r) || "")))))
        )
      )
    );
    const text = countsText(Object.fromEntries(Object.entries(res.body.counts || {}).filter(([, n]) => n)));
    if (dryRun) {
      $("undo-button").disabled = false;
      say("undo-status", "Preview ready: " + text + ". Nothing was changed yet.", "ok");
    } else {
      const left = (res.body.counts || {}).changed_since_write || 0;
      say("undo-status", "Undone: " + text + (left ? ". " + left + " item(s) changed in Azure DevOps since were left alone." : "."), left ? "error" : "ok");
    }
  }

  /** The edited backlog as a file (GET .../export): fetched with the key, saved by the browser. */
  async function exportRun(format) {
    const runId = state.runId;
    if (!runId) return;
    const headers = KEY ? { "x-functions-key": KEY } : {};
    let response;
    try {
      response = await fetch(API + "/runs/" + encodeURIComponent(runId) + "/export?format=" + format, { cache: "no-store", headers: headers });
    } catch (err) {
      say("write-status", "The export failed: the server cannot be reached.", "error");
      return;
    }
    if (!response.ok) {
      say("write-status", "The export failed: the server answered " + response.status + ".", "error");
      return;
    }
    const url = URL.createObjectURL(await response.blob());
    const link = h("a", { href: url, download: runId + "." + format, hidden: true });
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10000);
    say("write-status", "Exported " + runId + "." + format + " with your edits.", "ok");
  }

  // ------------------------------------------------------------------------------------------

  function init() {
    if (!KEY) $("key-warning").hidden = false;
    $("upload-form").addEventListener("submit", upload);
    $("refresh-runs").addEventListener("click", refreshRuns);
    $("dry-run").addEventListener("click", () => submitWrite(true));
    $("write-button").addEventListener("click", () => submitWrite(false));
    $("export-csv").addEventListener("click", () => exportRun("csv"));
    $("export-md").addEventListener("click", () => exportRun("md"));
    $("undo-preview").addEventListener("click", () => undoWrite(true));
    $("undo-button").addEventListener("click", () => undoWrite(false));
    $("retry-run").addEventListener("click", retryRun);
    window.addEventListener("hashchange", fromHash);
    refreshRuns();
    fromHash();
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();

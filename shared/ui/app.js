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
    previewed: null, // JSON of the decisions the last successful dry run used
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
    if (!$("project").value && runs.length) $("project").value = runs[0].project;
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
      for (const id of ["summary", "backlog", "write"]) $(id).hidden = true;
      clear($("tree"));
      clear($("plan"));
      clear($("results"));
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
    const res = await api("runs/" + encodeURIComponent(runId) + "/review");
    if (token !== state.loadToken) return;
    if (!res.ok) {
      say("run-status", "The backlog could not be loaded: " + res.error, "error");
      return;
    }
    state.review = res.body;
    defaultDecisions();
    renderSummary();
    renderTree();
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
    for (const [term, value] of rows) list.append(h("dt", {}, term), h("dd", {}, value));
    const meter = h("meter", { min: "0", max: "1", value: String(cov ? cov.share : 0), "aria-label": "Coverage" });
    list.append(h("dt", { class: "visually-hidden" }, "Coverage meter"), h("dd", {}, meter));
    $("summary").hidden = false;
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
      state.decisions[node.item.item_id] = tag === "duplicate" ? "skip" : "accept";
    }
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
          h("h3", {}, h("span", { class: "kind" }, "Epic"), " ", h("span", { class: "item-title" }, epic.item.title)),
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
    $("backlog").hidden = false;
  }

  function featureNode(node) {
    return h(
      "li",
      { class: "node feature" },
      h("h4", {}, h("span", { class: "kind" }, "Feature"), " ", h("span", { class: "item-title" }, node.item.title)),
      questions(node.item),
      h("ul", { class: "children" }, node.stories.map(storyNode))
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
    ];
    if (record) {
      const related = (record.related_story_ids || []).map((id) => "#" + id).join(", ");
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
        h("ol", { class: "acs" }, item.acceptance_criteria.map((ac) => h("li", {}, ac)))
      );
    }
    for (const warning of item.warnings || []) {
      children.push(h("p", { class: "warning item-warning" }, "⚠ ", warning));
    }
    if (item.constraint_violation) {
      children.push(
        h("p", { class: "warning" }, "⚠ Architecture constraint: ", (item.constraint_notes || []).join("; ") || "violates an architecture constraint")
      );
    }
    children.push(questions(item));
    children.push(sourceDetails(item, info));
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
      "Compare with existing #" + other.work_item_id + (other.title ? ": " + other.title : "") +
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
    const choices = tag === "conflict" ? CONFLICT_CHOICES : PLAIN_CHOICES;
    const name = "decision-" + item.item_id;
    const current = state.decisions[item.item_id];
    const legendId = "legend-" + item.item_id;
    const unsure = tag === "conflict" ? "Unresolved conflict: choose how to resolve it." : "The tagging is unsure: choose an action.";
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
    const status = $("state-" + storyId);
    if (status) status.textContent = "";
    updateDecisionSummary();
  }

  function unresolved() {
    return allStories().filter(
      (n) => (storyTag(n) === "conflict" || (n.tag && n.tag.needs_review)) && !state.decisions[n.item.item_id]
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
    const fresh = state.previewed !== null && state.previewed === JSON.stringify(state.decisions);
    $("write-button").disabled = !fresh;
    if (state.previewed !== null && !fresh) {
      say("write-status", "The decisions changed since the preview: preview again before writing.");
    }
  }

  // ------------------------------------------------------------------------------------------
  // dry run and write

  async function submitWrite(dryRun) {
    const runId = state.runId;
    if (!runId) return;
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
      state.previewed = JSON.stringify(decisions);
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
    const target = clear($("results"));
    const when = body.finished_at || body.completed_at || body.written_at || body.created_at;
    target.append(
      h("h3", {}, title),
      h("p", { class: "meta" }, countsText(body.counts) + (when ? " · " + fmtDate(when) : "")),
      rowsTable("results-table", title + " from Azure DevOps", rows, true)
    );
    markStories(rows, true);
  }

  // ------------------------------------------------------------------------------------------

  function init() {
    if (!KEY) $("key-warning").hidden = false;
    $("upload-form").addEventListener("submit", upload);
    $("refresh-runs").addEventListener("click", refreshRuns);
    $("dry-run").addEventListener("click", () => submitWrite(true));
    $("write-button").addEventListener("click", () => submitWrite(false));
    $("retry-run").addEventListener("click", retryRun);
    window.addEventListener("hashchange", fromHash);
    refreshRuns();
    fromHash();
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();

// wavecd UI: live updates over the application event stream, and the few
// actions (sync, refresh, rollback, diff) that call the JSON API.
"use strict";

(function () {
  const page = document.body.dataset.page;
  const live = document.getElementById("live-status");

  function debounce(fn, ms) {
    let t;
    return function () { clearTimeout(t); t = setTimeout(fn, ms); };
  }

  function toast(text, bad) {
    const el = document.getElementById("toast");
    if (!el) return;
    el.textContent = text;
    el.className = bad ? "bad" : "";
    el.hidden = false;
    clearTimeout(el._t);
    el._t = setTimeout(function () { el.hidden = true; }, 4000);
  }

  async function api(method, path, body) {
    const resp = await fetch(path, {
      method: method, credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-Requested-With": "wavecd" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const data = await resp.json().catch(function () { return {}; });
    if (resp.status === 401) { location.href = "/login?next=" + encodeURIComponent(location.pathname); }
    if (!resp.ok) { throw new Error(data.message || resp.statusText); }
    return data;
  }

  async function fetchHTML(url) {
    const resp = await fetch(url, { credentials: "same-origin", headers: { "X-Requested-With": "wavecd" } });
    if (resp.status === 401) { location.href = "/login?next=" + encodeURIComponent(location.pathname); return null; }
    return resp.text();
  }

  // stream opens the event stream; onChange runs (debounced) after events.
  // It returns a function that closes the stream for good.
  function stream(query, onChange) {
    let es, closed = false;
    const changed = debounce(onChange, 150);
    function open() {
      if (closed) return;
      es = new EventSource("/api/v1/stream/applications" + (query ? "?" + query : ""));
      es.onopen = function () { if (live) live.classList.add("on"); };
      es.onmessage = changed;
      es.onerror = function () {
        if (live) live.classList.remove("on");
        es.close();
        setTimeout(open, 2000);
      };
    }
    open();
    return function () { closed = true; es.close(); };
  }

  // throttled runs fn at most every ms and never twice at once; a call
  // while it runs runs it once more after.
  function throttled(fn, ms) {
    let running = false, again = false, last = 0;
    async function run() {
      if (running) { again = true; return; }
      const wait = last + ms - Date.now();
      if (wait > 0) { running = true; await new Promise(function (r) { setTimeout(r, wait); }); running = false; }
      running = true;
      last = Date.now();
      try { await fn(); } finally {
        running = false;
        if (again) { again = false; run(); }
      }
    }
    return run;
  }

  // keepState carries what the user was doing across a re-render of box:
  // the focused node of a picture, open tables, scrolled pictures.
  function keepState(box, render) {
    const active = document.activeElement;
    const node = active && active.closest ? active.closest("[data-node]") : null;
    const focusSel = node ? '[data-node="' + CSS.escape(node.dataset.node) + '"]' : (active && active.id && box.contains(active) ? "#" + CSS.escape(active.id) : null);
    const open = Array.from(box.querySelectorAll("details[open]")).map(function (d) { return d.parentElement && d.parentElement.id; });
    const scroll = Array.from(box.querySelectorAll(".picture")).map(function (p) { return [p.id, p.scrollLeft, p.scrollTop]; });
    render();
    open.forEach(function (id) { const p = id && document.getElementById(id); const d = p && p.querySelector("details"); if (d) d.open = true; });
    scroll.forEach(function (s) { const p = s[0] && document.getElementById(s[0]); if (p) { p.scrollLeft = s[1]; p.scrollTop = s[2]; } });
    if (focusSel) { const f = box.querySelector(focusSel); if (f) f.focus({ preventScroll: true }); }
  }

  // graphKeys moves the focus between the nodes of a graph with the
  // arrow keys: left and right to the nearest node of the next column,
  // up and down within the column.
  function graphKeys(ev) {
    const node = ev.target.closest && ev.target.closest(".wavecd-graph [data-node]");
    if (!node) return;
    const moves = { ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, -1], ArrowDown: [0, 1] };
    const m = moves[ev.key];
    if (!m) return;
    const svg = node.ownerSVGElement || node.closest("svg");
    const col = Number(node.dataset.col) + m[0], row = Number(node.dataset.row) + m[1];
    let next = null;
    if (m[0] === 0) {
      next = svg.querySelector('[data-col="' + col + '"][data-row="' + row + '"]');
    } else {
      const y = node.getBBox().y;
      let best = Infinity;
      svg.querySelectorAll('[data-col="' + col + '"]').forEach(function (n) {
        const d = Math.abs(n.getBBox().y - y);
        if (d < best) { best = d; next = n; }
      });
    }
    if (next) { ev.preventDefault(); next.focus(); }
  }

  function appsPage() {
    const tiles = document.getElementById("tiles");
    const query = tiles.dataset.query;
    stream("", throttled(async function () {
      const html = await fetchHTML("/applications?partial=1" + (query ? "&" + query : ""));
      if (html !== null) tiles.innerHTML = html;
    }, 400));
    document.querySelectorAll("#filters select").forEach(function (s) {
      s.addEventListener("change", function () { s.form.submit(); });
    });
  }

  function appPage() {
    const name = document.body.dataset.app;
    // An app outside the control namespace is named by ?appNamespace=.
    const appNS = document.body.dataset.appNamespace;
    function withNS(query) {
      if (!appNS) return query;
      const ns = "appNamespace=" + encodeURIComponent(appNS);
      return query ? query + "&" + ns : ns;
    }
    function appPath(suffix, query) {
      const q = withNS(query || "");
      return "/applications/" + encodeURIComponent(name) + suffix + (q ? "?" + q : "");
    }
    const liveBox = document.getElementById("app-live");
    const diffPanel = document.getElementById("diff-panel");
    const diffBody = document.getElementById("diff-body");
    let diffView = "unified";
    let lastSync = liveBox.querySelector(".app-live").dataset.sync;

    async function reloadDiff() {
      const html = await fetchHTML(appPath("/diff", "view=" + diffView));
      if (html !== null) diffBody.innerHTML = html;
    }
    // The page's own query (resources view, unfolded apps) stays on reloads.
    const params = new URLSearchParams(location.search);
    params.set("partial", "1");
    let shown = null;
    const reload = throttled(async function () {
      const html = await fetchHTML("/applications/" + encodeURIComponent(name) + "?" + params.toString());
      if (html === null || html === shown) return;
      shown = html;
      keepState(liveBox, function () { liveBox.innerHTML = html; });
      const box = liveBox.querySelector(".app-live");
      const sync = box.dataset.sync;
      if (sync !== lastSync && !diffPanel.hidden) reloadDiff();
      lastSync = sync;
      watch(box.dataset.parent === "true");
    }, 400);
    // A parent app's page follows every app (its children change its
    // pictures); any other page follows its own app.
    let close = null, watchingAll = null;
    function watch(all) {
      if (all === watchingAll) return;
      if (close) close();
      watchingAll = all;
      close = stream(withNS(all ? "" : "name=" + encodeURIComponent(name)), reload);
    }
    watch(liveBox.querySelector(".app-live").dataset.parent === "true");
    setInterval(reload, 10000); // pods and replica sets change without an app event
    liveBox.addEventListener("keydown", graphKeys);

    // Buttons inside the live part are re-rendered: delegate their clicks.
    liveBox.addEventListener("click", async function (ev) {
      const t = ev.target.closest("button");
      if (!t) return;
      if (t.id === "sync-button") openSync();
      if (t.id === "diff-button") { diffPanel.hidden = false; diffBody.textContent = "Loading…"; reloadDiff(); diffPanel.scrollIntoView(); }
      if (t.id === "refresh-button") {
        t.disabled = true;
        try { await api("GET", "/api/v1" + appPath("", "refresh=normal")); toast("Refreshed"); }
        catch (e) { toast(e.message, true); }
        reload();
        if (!diffPanel.hidden) reloadDiff();
      }
      if (t.classList.contains("rollback")) openRollback(t.dataset.id, t.dataset.rev);
    });

    document.querySelectorAll("#diff-panel .seg button[data-view]").forEach(function (b) {
      b.addEventListener("click", function () {
        diffView = b.dataset.view;
        document.querySelectorAll("#diff-panel .seg button").forEach(function (o) { o.classList.toggle("active", o === b); });
        reloadDiff();
      });
    });
    document.getElementById("diff-close").addEventListener("click", function () { diffPanel.hidden = true; });

    const syncDialog = document.getElementById("sync-dialog");
    const syncError = document.getElementById("sync-error");
    function boxes() { return syncDialog.querySelectorAll("input[name=resource]"); }
    function openSync() { syncError.hidden = true; syncDialog.showModal(); }
    document.getElementById("sync-all").addEventListener("click", function () { boxes().forEach(function (b) { b.checked = true; }); });
    document.getElementById("sync-none").addEventListener("click", function () { boxes().forEach(function (b) { b.checked = false; }); });
    document.getElementById("sync-oos").addEventListener("click", function () { boxes().forEach(function (b) { b.checked = b.dataset.sync !== "Synced"; }); });
    document.getElementById("sync-submit").addEventListener("click", async function (ev) {
      ev.preventDefault();
      const all = Array.from(boxes());
      const picked = all.filter(function (b) { return b.checked; });
      if (all.length > 0 && picked.length === 0) { syncError.textContent = "Select at least one resource."; syncError.hidden = false; return; }
      const body = {
        prune: document.getElementById("sync-prune").checked,
        dryRun: document.getElementById("sync-dry-run").checked,
      };
      if (picked.length < all.length) {
        body.resources = picked.map(function (b) {
          return { group: b.dataset.group, kind: b.dataset.kind, namespace: b.dataset.namespace, name: b.dataset.name };
        });
      }
      try {
        await api("POST", "/api/v1" + appPath("/sync"), body);
        syncDialog.close();
        toast(body.dryRun ? "Dry run started" : "Sync started");
        reload();
      } catch (e) { syncError.textContent = e.message; syncError.hidden = false; }
    });

    const rbDialog = document.getElementById("rollback-dialog");
    const rbError = document.getElementById("rollback-error");
    let rbID = 0;
    function openRollback(id, rev) {
      rbID = Number(id);
      document.getElementById("rollback-id").textContent = id;
      document.getElementById("rollback-rev").textContent = rev;
      rbError.hidden = true;
      rbDialog.showModal();
    }
    document.getElementById("rollback-submit").addEventListener("click", async function (ev) {
      ev.preventDefault();
      try {
        await api("PUT", "/api/v1" + appPath("/rollback"),
          { id: rbID, prune: document.getElementById("rollback-prune").checked });
        rbDialog.close();
        toast("Rollback started");
        reload();
      } catch (e) { rbError.textContent = e.message; rbError.hidden = false; }
    });
  }

  if (page === "apps") appsPage();
  if (page === "app") appPage();
})();

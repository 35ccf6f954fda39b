// Keeps a page's #live part current: when the server's event stream names a version other than
// the one the page shows (data-version), it fetches the page again and swaps the part in, so a
// spectator sees a new turn without reloading. Also counts the time left down. No build step.
"use strict";
(function () {
  const started = Date.now();
  function tick() {
    for (const el of document.querySelectorAll(".countdown[data-seconds]")) {
      const total = parseInt(el.dataset.seconds, 10);
      if (isNaN(total) || total < 0) continue;
      const base = parseInt(el.dataset.base || started, 10);
      el.dataset.base = base;
      const left = Math.max(0, total - Math.floor((Date.now() - base) / 1000));
      const h = Math.floor(left / 3600), m = Math.floor((left % 3600) / 60), s = left % 60;
      el.textContent = h ? `${h} h ${String(m).padStart(2, "0")} min` : m ? `${m} min ${String(s).padStart(2, "0")} s` : `${s} s`;
    }
  }
  // One fetch at a time; a change heard during a fetch fetches once more after it, so an
  // older answer can never land after a newer one.
  let running = null;
  let again = false;
  async function fetchLive() {
    do {
      again = false;
      const response = await fetch(location.pathname, { headers: { Accept: "text/html" }, credentials: "same-origin" });
      if (!response.ok) return;
      const fresh = new DOMParser().parseFromString(await response.text(), "text/html").getElementById("live");
      const live = document.getElementById("live");
      if (!fresh || !live) return;
      live.replaceWith(document.adoptNode(fresh));
      document.dispatchEvent(new CustomEvent("live:replaced"));
      tick();
    } while (again);
  }
  async function refresh() {
    if (running) { again = true; return running; }
    running = fetchLive();
    try { await running; } finally { running = null; }
  }
  window.taeRefresh = refresh;
  document.addEventListener("DOMContentLoaded", function () {
    const live = document.getElementById("live");
    setInterval(tick, 1000);
    tick();
    if (!live || !live.dataset.events || !window.EventSource) return;
    const source = new EventSource(live.dataset.events);
    function heard(event) {
      let version = null;
      try { version = JSON.parse(event.data).version; } catch (e) { version = null; }
      const shown = document.getElementById("live");
      if (!version || !shown || shown.dataset.version !== version) refresh();
    }
    source.addEventListener("hello", heard);
    source.addEventListener("change", heard);
  });
})();

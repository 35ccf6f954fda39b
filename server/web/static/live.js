// Every page's script (no build step):
// * keeps the page's #live part current: when the server's event stream names a version other
//   than the one the page shows (data-version), it fetches the page again and swaps the part in,
//   so a spectator sees a new turn without reloading;
// * shows every deadline (<time class="deadline">) as a local date and time and counts it down;
// * zooms and pans the galaxy map (.map-view), and keeps its zoom and place across a refresh,
//   so that nothing moves under the reader's finger;
// * drops the notices of a turn once the turn has ended;
// * on the home page (data-refresh: seconds), fetches the page again every few seconds, so that
//   a game's "Your turn" badge comes and goes as its turns end.
"use strict";
(function () {
  // -- deadlines: the server writes UTC and the seconds left; the reader sees local time -------

  // the same words as server.views.deadline.in_words
  function inWords(left) {
    const d = Math.floor(left / 86400), h = Math.floor((left % 86400) / 3600);
    const m = Math.floor((left % 3600) / 60), s = left % 60;
    if (d) return h ? `${d} d ${h} h` : `${d} d`;
    if (h) return m ? `${h} h ${m} min` : `${h} h`;
    if (m) return s ? `${m} min ${s} s` : `${m} min`;
    return `${s} s`;
  }
  const localTime = new Intl.DateTimeFormat(undefined, {
    weekday: "short", day: "numeric", month: "short", year: "numeric",
    hour: "2-digit", minute: "2-digit", timeZoneName: "short",
  });

  function tick() {
    const now = Date.now();
    for (const el of document.querySelectorAll("time.deadline[data-seconds]")) {
      const total = parseInt(el.dataset.seconds, 10);
      if (isNaN(total) || total < 0) continue;
      if (!el.dataset.base) {
        el.dataset.base = String(now);
        const when = el.querySelector(".when");
        const date = new Date(el.getAttribute("datetime"));
        if (when && !isNaN(date.getTime())) {
          when.textContent = localTime.format(date);
          el.title = "in your time zone; the server said " + el.getAttribute("datetime");
        }
      }
      const left = Math.max(0, total - Math.floor((now - parseInt(el.dataset.base, 10)) / 1000));
      const countdown = el.querySelector(".countdown");
      if (countdown) countdown.textContent = left > 0 ? "in " + inWords(left) : "now";
    }
  }

  // -- the map: zoom (cell sizes in CSS pixels; "fit" shows it whole) and pan ----------------

  const CELL = 20; // the SVG's units per system (server.views.web.mapsvg.CELL)
  const SIZES = [32, 44, 64, 96]; // 44: the smallest comfortable tap target
  const TAP = 44;
  const map = { size: null, scroll: null, chosen: false }; // null: fit

  function units(svg) {
    const box = svg.viewBox.baseVal;
    return box && box.width ? box.width : 0;
  }

  function fitSize(view, svg) {
    return (view.clientWidth / units(svg)) * CELL;
  }

  // A zoomed map keeps its row and column numbers at the edges of what it shows.
  function keepAxes(view) {
    const svg = view.querySelector("svg.galaxy");
    const rows = svg && svg.querySelector(".axis-rows");
    const columns = svg && svg.querySelector(".axis-columns");
    if (!rows || !columns) return;
    const box = svg.viewBox.baseVal;
    const scale = svg.getBoundingClientRect().width / box.width || 1;
    const dx = Math.max(0, view.scrollLeft / scale);
    const shown = (view.scrollTop + view.clientHeight) / scale; // from the top of the picture
    const dy = shown < box.height - 0.5 ? shown - box.height : 0;
    rows.setAttribute("transform", `translate(${dx.toFixed(2)} 0)`);
    columns.setAttribute("transform", `translate(0 ${dy.toFixed(2)})`);
  }

  function apply(view) {
    const svg = view.querySelector("svg.galaxy");
    if (!svg || !units(svg)) return;
    if (map.size === null || map.size <= fitSize(view, svg)) {
      svg.style.width = "";
      view.classList.remove("zoomed");
    } else {
      svg.style.width = Math.round((units(svg) / CELL) * map.size) + "px";
      view.classList.add("zoomed");
    }
    keepAxes(view);
  }

  function zoom(view, how) {
    const svg = view.querySelector("svg.galaxy");
    if (!svg) return;
    const fit = fitSize(view, svg);
    const current = map.size === null || map.size <= fit ? fit : map.size;
    // keep the middle of what is shown in the middle
    const cx = (view.scrollLeft + view.clientWidth / 2) / Math.max(1, view.scrollWidth);
    const cy = (view.scrollTop + view.clientHeight / 2) / Math.max(1, view.scrollHeight);
    if (how === "fit") map.size = null;
    else if (how === "in") map.size = SIZES.find((s) => s > current + 0.5) || SIZES[SIZES.length - 1];
    else {
      const smaller = SIZES.filter((s) => s < current - 0.5 && s > fit);
      map.size = smaller.length ? smaller[smaller.length - 1] : null;
    }
    map.chosen = true;
    apply(view);
    view.scrollLeft = cx * view.scrollWidth - view.clientWidth / 2;
    view.scrollTop = cy * view.scrollHeight - view.clientHeight / 2;
    keepAxes(view);
  }

  function setUpMaps(root) {
    for (const view of root.querySelectorAll(".map-view")) {
      const tools = view.previousElementSibling;
      if (tools && tools.classList.contains("map-tools")) tools.hidden = false;
      const svg = view.querySelector("svg.galaxy");
      // On a touch screen the player's map starts with tap-sized systems (it pans).
      if (!map.chosen && svg && view.querySelector(".map.clickable") &&
          window.matchMedia("(pointer: coarse)").matches && fitSize(view, svg) < TAP) {
        map.size = TAP;
      }
      apply(view);
      if (map.scroll) { view.scrollLeft = map.scroll[0]; view.scrollTop = map.scroll[1]; }
      keepAxes(view);
    }
  }

  document.addEventListener("click", function (event) {
    const button = event.target.closest(".map-tools .zoom");
    if (!button) return;
    const view = button.parentElement.nextElementSibling;
    if (view && view.classList.contains("map-view")) zoom(view, button.dataset.zoom);
  });
  document.addEventListener("scroll", function (event) {
    if (event.target.classList && event.target.classList.contains("map-view")) {
      map.scroll = [event.target.scrollLeft, event.target.scrollTop];
      keepAxes(event.target);
    }
  }, true);
  window.addEventListener("resize", function () {
    for (const view of document.querySelectorAll(".map-view")) apply(view);
  });

  // -- the live part -----------------------------------------------------------------------

  // Where the map's view is in the window, if any of it is on the screen.
  function mapTop() {
    const view = document.querySelector("#live .map-view");
    if (!view) return null;
    const r = view.getBoundingClientRect();
    return r.bottom > 0 && r.top < window.innerHeight ? r.top : null;
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
      const before = live.dataset.turn, after = fresh.dataset.turn;
      const top = mapTop();
      const adopted = document.adoptNode(fresh);
      live.replaceWith(adopted);
      setUpMaps(adopted);  // zoomed and scrolled as the old map was, before anything is painted
      // a map on the screen stays where it was, whatever grew or shrank above it
      const moved = top === null ? null : mapTop();
      if (moved !== null) window.scrollBy(0, moved - top);
      const turnEnded = before !== undefined && before !== after;
      if (turnEnded) {
        const notices = document.getElementById("notices");
        if (notices) notices.replaceChildren();
      }
      document.dispatchEvent(new CustomEvent("live:replaced", { detail: { turnEnded } }));
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
    setUpMaps(document);
    const live = document.getElementById("live");
    setInterval(tick, 1000);
    tick();
    // the home page spans many games: it asks again every few seconds (no stream per game)
    const every = live ? parseInt(live.dataset.refresh || "0", 10) : 0;
    if (every > 0) setInterval(function () { if (!document.hidden) refresh(); }, every * 1000);
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

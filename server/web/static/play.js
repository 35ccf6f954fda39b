// The player page: choose a fleet, then click or tap a system, or move over the map with the
// arrow keys and press Enter. The server probes the order at once and shows why it is refused;
// only an order it accepts is inserted. The answer appears at the foot of the window (nothing
// moves) and is read out (aria-live); it goes away with the turn it belongs to. Forms marked
// .ajax are sent without leaving the page; without JavaScript they post and come back as usual.
"use strict";
(function () {
  const CELL = 20; // the SVG's units per system (server.views.web.mapsvg.CELL)
  let chosenFleet = null;
  let cursor = null; // [x, y] of the keyboard's cursor on the map
  let mapHadFocus = false;
  let hideTimer = null;

  // -- the answer at the foot of the window ------------------------------------------------

  function notice(text, kind) {
    const el = document.getElementById("notice");
    if (!el) return;
    const live = document.getElementById("live");
    el.querySelector(".text").textContent = text;
    el.className = "notice toast " + (kind || "");
    el.dataset.turn = live ? live.dataset.turn : "";
    el.hidden = !text;
    clearTimeout(hideTimer);
    if (kind === "ok") hideTimer = setTimeout(function () { el.hidden = true; }, 8000);
  }

  async function post(url, form) {
    const body = new URLSearchParams(new FormData(form));
    const response = await fetch(url, {
      method: "POST", body, credentials: "same-origin",
      headers: { Accept: "application/json" },
    });
    let answer = null;
    try { answer = await response.json(); } catch (e) { answer = null; }
    if (!answer) return { ok: false, message: "The server did not answer (" + response.status + ")." };
    if (answer.error) return { ok: false, message: answer.error.message, code: answer.error.code };
    return { ok: true, message: answer.message };
  }

  async function submitOrder(form) {
    const probe = await post(form.dataset.probe, form);
    if (!probe.ok) { notice("Refused: " + probe.message, "error"); return; }
    const placed = await post(form.action, form);
    if (!placed.ok) { notice("Refused: " + placed.message, "error"); return; }
    notice(placed.message, "ok");
    await window.taeRefresh();
  }

  // -- the map: systems by their coordinates, the cursor -----------------------------------

  function theMap() { return document.querySelector(".map.clickable"); }

  function systemsOf(mapEl) {
    const svg = mapEl.querySelector("svg.galaxy");
    const rows = parseInt(svg.dataset.rows, 10);
    const found = new Map();
    for (const g of svg.querySelectorAll("g.sys")) {
      const rect = g.querySelector("rect.cell");
      const x = Math.round(rect.x.baseVal.value / CELL);
      const y = rows - 1 - Math.round(rect.y.baseVal.value / CELL);
      found.set(x + "," + y, g);
    }
    return { svg, rows, columns: parseInt(svg.dataset.columns, 10), found };
  }

  function systemName(g) {
    return g.querySelector("title").textContent.split(" · ")[0].replace(/^System /, "");
  }

  function drawCursor(announce) {
    const mapEl = theMap();
    if (!mapEl || !cursor) return;
    const { svg, rows, found } = systemsOf(mapEl);
    let mark = svg.querySelector("rect.cursor");
    if (!mark) {
      mark = document.createElementNS("http://www.w3.org/2000/svg", "rect");
      mark.setAttribute("class", "cursor");
      mark.setAttribute("width", CELL - 2);
      mark.setAttribute("height", CELL - 2);
      svg.appendChild(mark);
    }
    mark.setAttribute("x", cursor[0] * CELL + 1);
    mark.setAttribute("y", (rows - 1 - cursor[1]) * CELL + 1);
    const g = found.get(cursor[0] + "," + cursor[1]);
    if (g && announce) {
      document.getElementById("cursor-text").textContent = g.querySelector("title").textContent;
      g.scrollIntoView({ block: "nearest", inline: "nearest" });
    }
  }

  function moveCursor(dx, dy) {
    const mapEl = theMap();
    const { rows, columns, found } = systemsOf(mapEl);
    if (!cursor) cursor = [Math.floor(columns / 2), Math.floor(rows / 2)];
    let [x, y] = cursor;
    // step over holes of a map that is not a rectangle
    for (let i = 0; i < Math.max(rows, columns); i++) {
      x += dx; y += dy;
      if (x < 0 || y < 0 || x >= columns || y >= rows) return drawCursor(true);
      if (found.has(x + "," + y)) break;
    }
    cursor = [x, y];
    drawCursor(true);
  }

  function choose(g) {
    const form = document.getElementById("order-form");
    if (!form) return;
    if (!form.elements.fleet || !form.elements.fleet.value) {
      notice("Choose a fleet first, then a system.", "error");
      return;
    }
    form.elements.target.value = g.dataset.id;
    form.elements.system.value = systemName(g);
    for (const el of document.querySelectorAll(".sys.chosen")) el.classList.remove("chosen");
    g.classList.add("chosen");
    submitOrder(form);
  }

  function restore(event) {
    if (event.detail && event.detail.turnEnded) {
      const el = document.getElementById("notice");
      if (el) el.hidden = true;
    }
    if (chosenFleet !== null) {
      const radio = document.querySelector(`input[name=fleet][form=order-form][value="${chosenFleet}"]`);
      if (radio && !radio.disabled) radio.checked = true;
    }
    const mapEl = theMap();
    if (!mapEl) return;
    drawCursor(false);
    if (mapHadFocus) mapEl.focus({ preventScroll: true });
  }

  document.addEventListener("input", function (event) {
    if (event.target.matches("#order-form input[name=system]")) event.target.form.elements.target.value = "";
  });

  document.addEventListener("change", function (event) {
    if (event.target.matches("input[name=fleet][form=order-form]")) chosenFleet = event.target.value;
  });

  document.addEventListener("focusin", function (event) {
    mapHadFocus = !!event.target.closest(".map.clickable");
    // from the keyboard (not a click or a tap, which must not move the map under the finger):
    // the cursor appears and says where it is
    if (event.target.matches(".map.clickable:focus-visible") && !cursor) moveCursor(0, 0);
  });
  document.addEventListener("focusout", function (event) {
    if (event.target.matches(".map.clickable") && !event.relatedTarget) return; // the map is being replaced
    if (!event.relatedTarget || !event.relatedTarget.closest(".map.clickable")) mapHadFocus = false;
  });

  const STEPS = { ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, 1], ArrowDown: [0, -1] };
  document.addEventListener("keydown", function (event) {
    const mapEl = event.target.closest(".map.clickable");
    if (!mapEl) return;
    if (STEPS[event.key]) {
      event.preventDefault();
      moveCursor(...STEPS[event.key]);
    } else if ((event.key === "Enter" || event.key === " ") && cursor) {
      event.preventDefault();
      const g = systemsOf(mapEl).found.get(cursor[0] + "," + cursor[1]);
      if (g) choose(g);
    }
  });

  document.addEventListener("click", function (event) {
    if (event.target.closest("#notice .close")) { document.getElementById("notice").hidden = true; return; }
    const g = event.target.closest(".map.clickable .sys");
    if (!g) return;
    const { rows } = systemsOf(theMap());
    const rect = g.querySelector("rect.cell");
    cursor = [Math.round(rect.x.baseVal.value / CELL), rows - 1 - Math.round(rect.y.baseVal.value / CELL)];
    drawCursor(false);
    choose(g);
  });

  document.addEventListener("submit", async function (event) {
    const form = event.target;
    if (!form.classList.contains("ajax")) return;
    event.preventDefault();
    if (form.id === "order-form") { await submitOrder(form); return; }
    const result = await post(form.action, form);
    notice(result.ok ? result.message : "Refused: " + result.message, result.ok ? "ok" : "error");
    if (result.ok) await window.taeRefresh();
  });

  document.addEventListener("live:replaced", restore);
})();

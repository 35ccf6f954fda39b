// The player page: choose a fleet, click a system; the server probes the order at once and
// shows why it is refused, and only an order it accepts is inserted. Forms marked .ajax are
// sent without leaving the page; without JavaScript they post and come back as usual.
"use strict";
(function () {
  let chosenFleet = null;

  function notice(text, kind) {
    const el = document.getElementById("notice");
    el.textContent = text;
    el.className = "notice " + (kind || "");
    el.hidden = !text;
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

  function restore() {
    if (chosenFleet === null) return;
    const radio = document.querySelector(`#order-form input[name=fleet][value="${chosenFleet}"]`);
    if (radio && !radio.disabled) radio.checked = true;
  }

  document.addEventListener("input", function (event) {
    if (event.target.matches("#order-form input[name=system]")) event.target.form.elements.target.value = "";
  });

  document.addEventListener("change", function (event) {
    if (event.target.matches("#order-form input[name=fleet]")) chosenFleet = event.target.value;
  });

  document.addEventListener("click", function (event) {
    const system = event.target.closest(".map.clickable .sys");
    if (!system) return;
    const form = document.getElementById("order-form");
    if (!form) return;
    if (!form.querySelector("input[name=fleet]:checked")) { notice("Choose a fleet first, then click a system.", "error"); return; }
    form.elements.target.value = system.dataset.id;
    form.elements.system.value = system.querySelector("title").textContent.split(" · ")[0].replace(/^System /, "");
    for (const el of document.querySelectorAll(".sys.chosen")) el.classList.remove("chosen");
    system.classList.add("chosen");
    submitOrder(form);
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

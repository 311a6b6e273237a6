// The operation page follows its occurrence: it polls /console/ops/<id>/progress (the same
// document and progress lines `vnfm ... --wait` reads) with a backoff from 0.5 s to 2 s, redraws
// the progress list and the state, and reloads the page once the occurrence stops (the server
// then renders its error and the buttons this viewer may use). No other script runs on any page.
"use strict";

(function () {
  const list = document.getElementById("progress");
  if (!list || list.dataset.final === "yes") {
    return;
  }
  const url = "/console/ops/" + encodeURIComponent(list.dataset.op) + "/progress";
  const state = document.getElementById("state");
  const since = document.getElementById("since");
  let delay = 500;

  function line(event) {
    const item = document.createElement("li");
    const time = document.createElement("time");
    time.textContent = String(event.time || "").slice(11, 19);
    item.append(time, " ");
    if (event.stage) {
      const stage = document.createElement("span");
      stage.className = "stage";
      stage.textContent = event.stage;
      item.append(stage, " ");
    }
    item.append(String(event.message || ""));
    return item;
  }

  async function poll() {
    try {
      const resp = await fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } });
      if (resp.status === 401) {
        window.location.assign("/console/login");
        return;
      }
      if (resp.ok) {
        const p = await resp.json();
        list.replaceChildren(...p.events.map(line));
        state.textContent = p.state;
        state.className = "badge " + p.state;
        since.textContent = p.since || "";
        list.dataset.state = p.state;
        if (p.final) {
          window.location.reload();
          return;
        }
      }
    } catch (err) {
      // the server restarting: keep polling
    }
    delay = Math.min(delay * 1.5, 2000);
    window.setTimeout(poll, delay);
  }

  window.setTimeout(poll, delay);
})();

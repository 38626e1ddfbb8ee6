// The facilitator's page: start games, hand out seat links, see who is to answer, read along.
"use strict";

(() => {
  const { api, el, renderEvents, whereNow, gameTitle, startedAt } = WG;
  const token = WG.readToken("wargraph.facilitator");
  const $ = (id) => document.getElementById(id);
  const POLL_MS = 2000;
  let scenarios = [];
  let selected = new URLSearchParams(location.hash.slice(1)).get("game");
  let transcriptFor = null;

  function showError(err) {
    $("connection").textContent = err ? err.message : "";
  }

  function select(threadId) {
    selected = threadId;
    history.replaceState(null, "", location.pathname + "#game=" + threadId);
    transcriptFor = null;
    refreshGame();
    refreshGames();
  }

  // --- new game -------------------------------------------------------------------------------

  function currentScenario() {
    return scenarios.find((s) => s.name === $("scenario").value);
  }

  function renderSeats() {
    const sc = currentScenario();
    const box = $("seats");
    box.replaceChildren();
    if (!sc) return;
    const options = sc.options || [];
    // A family with options of its own (Diplomacy: the last year) counts its game in them, not
    // in rounds (its 200 "rounds" are only a cap): offer those instead of the rounds field.
    const extent = options.length
      ? options.filter((o) => o.value !== null).map((o) => o.label + " " + o.value).join(" · ")
      : sc.rounds + " rounds";
    $("scenario-info").textContent = sc.title + " · " + sc.family + (extent ? " · " + extent : "") + (sc.served ? "" : " · not served here");
    $("rounds").placeholder = String(sc.rounds);
    $("rounds").value = "";
    $("rounds-field").hidden = options.length > 0;
    renderOptions(options);
    $("family-options-field").hidden = options.length === 0;
    $("family-options-legend").textContent = "Options of a " + sc.family + " game";
    for (const s of sc.seats) {
      const id = "seat-" + s.seat;
      const label = s.seat === sc.control ? s.seat + " (umpire)" : s.seat;
      box.append(
        el("label", { class: "check", for: id },
          el("input", { type: "checkbox", id, value: s.seat, checked: s.kind === "human" }),
          " " + label)
      );
    }
  }

  // The family's options (from Family.play_options), each prefilled with the scenario's value.
  function renderOptions(options) {
    const box = $("family-options");
    box.replaceChildren();
    options.forEach((o, i) => {
      const id = "option-" + i;
      const numeric = typeof o.value === "number";
      const input = el("input", {
        id, "data-key": o.key, type: numeric ? "number" : "text", step: numeric ? 1 : null,
        placeholder: o.metavar, spellcheck: "false",
      });
      if (o.value !== null && o.value !== undefined) input.value = String(o.value);
      input.dataset.initial = input.value;
      box.append(el("div", { class: "field narrow option" },
        el("label", { for: id, text: o.label.replace(/^./, (c) => c.toUpperCase()) }), input,
        el("div", { class: "hint", text: o.flag })));
    });
  }

  function chosenOptions() {
    const out = {};
    for (const input of $("family-options").querySelectorAll("input[data-key]")) {
      const value = input.value.trim();
      if (value === "" || value === input.dataset.initial) continue; // the scenario's own
      out[input.dataset.key] = input.type === "number" && !Number.isNaN(Number(value)) ? Number(value) : value;
    }
    return out;
  }

  async function loadScenarios() {
    const data = await api(token, "/wargraph/scenarios");
    scenarios = data.scenarios.filter((s) => !s.error);
    const pick = $("scenario");
    pick.replaceChildren();
    for (const s of scenarios) {
      pick.append(el("option", { value: s.name, disabled: !s.served, text: s.name + " — " + s.title }));
    }
    const preferred = scenarios.find((s) => s.name === "azuristan_crimsonia" && s.served) || scenarios.find((s) => s.served);
    if (preferred) pick.value = preferred.name;
    renderSeats();
  }

  async function startGame(ev) {
    ev.preventDefault();
    $("new-error").textContent = "";
    const humans = [...$("seats").querySelectorAll("input:checked")].map((i) => i.value);
    const body = {
      scenario: $("scenario").value,
      humans,
      model: $("model").value.trim() || "embedded",
      seed: Number($("seed").value || 0),
      review: $("review").checked,
    };
    if ($("rounds").value && !$("rounds-field").hidden) body.rounds = Number($("rounds").value);
    const options = chosenOptions();
    if (Object.keys(options).length) body.options = options;
    $("start").disabled = true;
    try {
      const game = await api(token, "/wargraph/graphs", { method: "POST", body });
      select(game.thread_id);
    } catch (err) {
      $("new-error").textContent = err.message;
    } finally {
      $("start").disabled = false;
    }
  }

  // --- games and the selected game ---------------------------------------------------------------

  // Thread ids are time-ordered (their first digits are the start time): the last ones differ.
  function shortId(threadId) {
    return "…" + threadId.slice(-8);
  }

  function gameStatus(g) {
    if (g.status === "idle") return g.done ? "over" : "idle";
    return { interrupted: "waiting", busy: "running" }[g.status] || g.status;
  }

  async function refreshGames() {
    const data = await api(token, "/wargraph/graphs");
    const body = $("games");
    body.replaceChildren();
    for (const g of data.games) {
      // Games of one scenario share a title: the short id, start time and phase tell them apart.
      const row = el("tr", { class: g.thread_id === selected ? "selected" : "", "data-thread": g.thread_id, onclick: () => select(g.thread_id) },
        el("td", {},
          el("a", { href: "#game=" + g.thread_id, text: gameTitle(g.title, g.moment) }),
          el("div", { class: "hint game-id", title: g.thread_id, text: shortId(g.thread_id) })),
        el("td", { class: "started", title: g.created_at, text: startedAt(g.created_at) }),
        el("td", { class: "now", text: whereNow(g) }),
        el("td", {}, el("span", { class: "pill small status-" + g.status, text: gameStatus(g) })),
        el("td", { class: "waiting-for", text: (g.waiting_for || []).join(", ") || "—" })
      );
      body.append(row);
    }
  }

  function linkCell(link) {
    if (!link) return el("td", { class: "muted", text: "—" });
    const input = el("input", { class: "link", readonly: true, value: link, "aria-label": "seat link" });
    const copy = el("button", {
      type: "button",
      class: "small",
      text: "Copy",
      onclick: async () => {
        input.select();
        try {
          await navigator.clipboard.writeText(link);
          copy.textContent = "Copied";
        } catch (err) {
          copy.textContent = "Select + copy";
        }
      },
    });
    return el("td", { class: "link-cell" }, input, copy, el("a", { href: link, target: "_blank", rel: "noopener noreferrer", text: "Open" }));
  }

  // What a seat is doing now, from the game's status and the seat's open question.
  function seatNow(g, s) {
    const person = s.human || s.review;
    if (s.waiting) return { state: "to-answer", short: "to answer", text: "to answer: " + s.task };
    if (g.status === "over") return { state: "done", short: "done", text: "done: the game is over" };
    if (g.status === "error") return { state: "error", short: "stopped", text: "stopped: the game has an error" };
    if (g.status === "held") return { state: "held", short: "held", text: "held: played from the command line" };
    if (g.status === "starting") return { state: "idle", short: "setting up", text: "the game is being set up" };
    if (person && g.waiting_for.length) {
      return { state: "done-phase", short: "answered", text: "answered; waiting for " + g.waiting_for.join(", ") };
    }
    if (g.status === "running") {
      return person ? { state: "idle", short: "waiting", text: "waiting: the game is moving on" }
        : { state: "playing", short: "AI at work", text: "AI at work (or waiting its turn)" };
    }
    return { state: "idle", short: person ? "waiting" : "AI", text: person ? "no question now" : "AI: answered" };
  }

  async function refreshGame() {
    if (!selected) return;
    const g = await api(token, "/wargraph/graphs/" + encodeURIComponent(selected));
    $("game-heading").textContent = gameTitle(g.title, g.moment) || "Game";
    const waiting = g.waiting_for.length ? " · waiting for " + g.waiting_for.join(", ") : "";
    const when = whereNow(g) + (g.moment ? " (" + g.moment + ")" : " · " + (g.phase || "setup"));
    $("game-info").textContent = g.family + " · game " + shortId(g.thread_id) + " · started " +
      startedAt(g.created_at) + " · " + when + waiting + (g.error ? " · error: " + g.error : "");
    $("game-view").href = "/view#token=" + encodeURIComponent(token) + "&thread=" + encodeURIComponent(selected);
    $("game-view").hidden = false;
    $("deadline-form").hidden = g.status === "over";
    clock.show(g.deadline);
    $("status").textContent = g.status;
    $("status").className = "pill status-" + g.status;
    const rows = $("seat-rows");
    rows.replaceChildren();
    const glance = $("seat-glance");
    glance.replaceChildren();
    for (const s of g.seats) {
      const now = seatNow(g, s);
      glance.append(el("li", { class: "seat-chip seat-" + now.state, "data-seat": s.seat, title: now.text },
        el("strong", { text: s.seat }), " " + now.short));
      rows.append(
        el("tr", { "data-seat": s.seat, class: s.waiting ? "waiting" : "" },
          el("td", { text: s.seat }),
          el("td", { text: s.human ? "a person" : s.review ? "AI, reviewed by a person" : "AI" }),
          el("td", { class: "seat-now", text: now.text }),
          linkCell(s.link)
        )
      );
    }
    if (transcriptFor !== selected) {
      $("transcript").dataset.count = "";
      transcriptFor = selected;
    }
    renderEvents($("transcript"), g.events, null);
  }

  // --- the phase deadline -------------------------------------------------------------------

  const clock = WG.deadlineClock($("deadline-now"));

  async function changeDeadline(body) {
    if (!selected) return;
    $("deadline-error").textContent = "";
    try {
      const done = await api(token, "/wargraph/graphs/" + encodeURIComponent(selected) + "/deadline", { method: "POST", body });
      clock.show(done.deadline);
    } catch (err) {
      $("deadline-error").textContent = err.message;
    }
  }

  async function poll() {
    try {
      await refreshGame();
      showError(null);
    } catch (err) {
      showError(err);
      if (err.status === 401 || err.status === 403) return;
    }
    setTimeout(poll, POLL_MS);
  }

  async function pollGames() {
    try {
      await refreshGames();
    } catch (err) {
      showError(err);
      if (err.status === 401 || err.status === 403) return;
    }
    setTimeout(pollGames, POLL_MS * 3);
  }

  async function init() {
    if (!token) {
      showError(new Error("No facilitator token: open the link `wargraph serve` printed."));
      return;
    }
    $("scenario").addEventListener("change", renderSeats);
    $("new-game").addEventListener("submit", startGame);
    $("deadline-form").addEventListener("submit", (ev) => {
      ev.preventDefault();
      changeDeadline({ minutes: Number($("deadline-minutes").value || 0) });
    });
    $("deadline-extend").addEventListener("click", () => changeDeadline({ extend: 5 }));
    $("deadline-clear").addEventListener("click", () => changeDeadline({ minutes: 0 }));
    try {
      await loadScenarios();
    } catch (err) {
      showError(err);
      return;
    }
    pollGames();
    poll();
  }

  init();
})();

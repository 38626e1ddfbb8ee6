// The player's page: one seat's view, its open question, the answer form. Polls the server.
"use strict";

(() => {
  const { api, el, renderEvents, buildForm } = WG;
  const token = WG.readToken("wargraph.seat");
  const $ = (id) => document.getElementById(id);
  const POLL_MS = 1500;

  let seat = null;
  const clock = WG.deadlineClock($("clock"));
  let shownKey = null; // the interrupt whose form is on screen (kept while the player types)
  const submitted = new Set(); // interrupts answered from this page, waiting for the game
  let form = null;
  let busy = false;

  function setStatus(state) {
    const pill = $("status");
    pill.textContent = state.status.replace("_", " ");
    pill.className = "pill status-" + state.status;
    $("status-message").textContent = state.message;
    const rounds = state.rounds ? " of " + state.rounds : "";
    // a family's own name for the moment (Diplomacy: Spring 1901 movement, S1901M) says more
    // than "round 1 of 200"
    if (state.moment) {
      const words = WG.phaseWords(state.moment);
      $("round").textContent = words === state.moment ? words : words + " (" + state.moment + ")";
    } else $("round").textContent = state.round ? "Round " + state.round + rounds : "";
  }

  function renderQuestion(state) {
    const box = $("question");
    const q = state.questions[0];
    if (!q) {
      if (shownKey !== null || !box.dataset.idle) {
        shownKey = null;
        form = null;
        box.replaceChildren(el("p", { class: "idle", text: state.status === "over" ? "No more questions: the game is over." : "No question for you right now." }));
        box.dataset.idle = "1";
        drawOrders();
      }
      return;
    }
    delete box.dataset.idle;
    if (submitted.has(q.key)) {
      if (shownKey !== q.key + ":sent") {
        shownKey = q.key + ":sent";
        form = null;
        box.replaceChildren(el("p", { class: "sent", text: "Answer sent; the game is taking it in…" }));
      }
      return;
    }
    if (shownKey === q.key) return; // same question: leave the player's typing alone
    shownKey = q.key;
    const prefill = q.task === "review" && q.draft ? reviewPrefill(q) : null;
    form = buildForm(q.schema, prefill);
    const error = q.error ? el("div", { class: "error", role: "alert", text: "Your last answer was not accepted: " + q.error }) : null;
    const draft = q.task === "review" && q.draft ? el("blockquote", { class: "draft", text: draftText(q.draft) }) : null;
    const instructions = q.instructions
      ? el("details", { class: "instructions" }, el("summary", { text: "Instructions for this seat" }), el("pre", { text: q.instructions }))
      : null;
    const notes = q.memory ? el("details", { class: "notes" }, el("summary", { text: "Your private notes" }), el("pre", { text: q.memory })) : null;
    const button = el("button", { type: "submit", id: "submit", text: "Submit answer" });
    const formNode = el(
      "form",
      { id: "answer-form", "data-ask": q.ask_id, onsubmit: (ev) => submit(ev, q, button) },
      form.choices ? el("p", { class: "hint", text: "Each field starts on what happens if you give no order (a unit holds, a build is waived). Choose another, or “Other” to type one." }) : null,
      form.fields,
      el("div", { class: "form-error", id: "form-error", role: "alert" }),
      button
    );
    keepDraft(formNode, draftKey(state, q));
    const { lead, sections } = questionParts(q.question);
    const parts = [
      el("div", { class: "task", text: (q.round !== undefined && q.round !== null ? "Round " + q.round + " · " : "") + q.task }),
      ...lead.map((text) => el("p", { class: "question-text", text: WG.reflow(text) })),
      ...sections.map((sec) => el("details", { class: "reference" }, el("summary", { text: sec.title }), el("pre", { text: sec.body }))),
      draft,
      error,
      instructions,
      notes,
      formNode,
    ];
    box.replaceChildren(...parts.filter((p) => p));
    formNode.addEventListener("change", drawOrders);
    formNode.addEventListener("input", drawOrders);
    drawOrders();
  }

  // --- press: the seat's messages as conversations, one per counterpart ----------------------

  let pressCount = null;

  // Who a message is a conversation with, from this seat's side: "Everyone" for public press,
  // else the other seats of its audience (the author among them when it is not this seat).
  function counterpart(e, me) {
    const audience = e.audience || [];
    if (audience.includes("*")) return "Everyone";
    const others = [...new Set([e.author, ...audience])].filter((a) => a && a !== me);
    return others.length ? others.sort().join(", ") : "Notes to yourself";
  }

  function renderPress(events, me) {
    const messages = events.filter((e) => e.kind === "message");
    if (pressCount === messages.length) return;
    pressCount = messages.length;
    const talks = new Map();
    for (const e of messages) {
      const who = counterpart(e, me);
      if (!talks.has(who)) talks.set(who, []);
      talks.get(who).push(e);
    }
    const open = new Set([...$("press").querySelectorAll("details[open]")].map((d) => d.dataset.with));
    const first = pressCount > 0 && open.size === 0;
    const nodes = [...talks.entries()].map(([who, said], i) => {
      const last = said[said.length - 1];
      const bubbles = said.map((e) => el("li", { class: "bubble" + (e.author === me ? " mine" : "") },
        el("div", { class: "bubble-head", text: (e.author === me ? "you" : e.author) + " · round " + e.round }),
        el("div", { class: "bubble-text", text: WG.reflow(e.text) })));
      return el("details", { class: "talk", "data-with": who, open: open.has(who) || (first && i === 0) },
        el("summary", {}, el("strong", { text: who }), " · " + said.length + (said.length === 1 ? " message" : " messages") +
          (last.author === me ? "" : " · last from " + last.author)),
        el("ol", { class: "conversation" }, ...bubbles));
    });
    $("press").replaceChildren(...nodes);
    $("press-panel").hidden = nodes.length === 0;
  }

  // --- drafts: what a person typed or chose survives a reload (this browser only) ----------

  const DRAFTS = "wargraph.draft.";

  function draftKey(state, q) {
    return DRAFTS + state.thread_id + "|" + state.seat + "|" + q.ask_id;
  }

  function formValues(formNode) {
    const values = {};
    for (const f of formNode.elements) {
      if (!f.name || f.type === "submit" || f.type === "button") continue;
      values[f.name] = f.type === "checkbox" ? f.checked : f.value;
    }
    return values;
  }

  // Restore a kept draft into the form (each field by name; rows beyond the first are added
  // as needed), then keep each change. A draft of another question of this seat is dropped.
  function keepDraft(formNode, key) {
    const mine = key.slice(0, key.lastIndexOf("|") + 1);
    for (let i = localStorage.length - 1; i >= 0; i--) {
      const other = localStorage.key(i);
      if (other && other.startsWith(mine) && other !== key) localStorage.removeItem(other);
    }
    let saved = null;
    try {
      saved = JSON.parse(localStorage.getItem(key) || "null");
    } catch (err) {
      saved = null;
    }
    if (saved && typeof saved === "object") {
      for (const [name, value] of Object.entries(saved)) {
        let f = formNode.elements.namedItem(name);
        const row = /^(.+)\.(\d+)\./.exec(name);
        while (!f && row) { // a list's row n: add rows until it exists (or none can be added)
          const more = formNode.querySelector("#field-" + CSS.escape(row[1]) + " > button");
          if (!more || more.hidden) break;
          more.click();
          f = formNode.elements.namedItem(name);
        }
        if (!f || f instanceof RadioNodeList) continue;
        if (f.type === "checkbox") f.checked = Boolean(value);
        else f.value = String(value);
        f.dispatchEvent(new Event("change", { bubbles: true }));
      }
    }
    const save = () => localStorage.setItem(key, JSON.stringify(formValues(formNode)));
    formNode.addEventListener("input", save);
    formNode.addEventListener("change", save);
  }

  function dropDraft(state, q) {
    localStorage.removeItem(draftKey(state, q));
  }

  // A question may carry reference blocks written for a model ("# Your units" with each unit's
  // legal orders in notation): headed blocks fold away under their heading, the rest is the
  // question itself. A question without headings is shown whole.
  function questionParts(text) {
    const lead = [];
    const sections = [];
    for (const chunk of String(text || "").split(/\n\s*\n/)) {
      const m = chunk.match(/^# (.+)\n([\s\S]*)$/);
      if (m) sections.push({ title: m[1].trim(), body: m[2] });
      else if (chunk.trim()) lead.push(chunk);
    }
    return { lead, sections };
  }

  // --- the seat's world: the family's panels (a map, tables), fetched when they change -------

  let worldKey = null;
  let orderMap = null; // the arrows over the phase's map (WG.orderOverlay), when it has one
  let worldBusy = false;
  const blobs = [];

  const SAFE_COLOR = /^(#[0-9a-fA-F]{3,8}|[a-zA-Z]{3,20})$/;

  function svgPanel(p) {
    const url = URL.createObjectURL(new Blob([p.svg], { type: "image/svg+xml" }));
    blobs.push(url);
    const img = el("img", { src: url, alt: p.title, class: "map" });
    const open = el("a", { href: url, target: "_blank", rel: "noopener", class: "hint", text: "Open the map full size" });
    if (p.folded) return el("details", { class: "panel" }, el("summary", { text: p.title }), img, open);
    // the phase being played: the orders being chosen are drawn over it
    const box = el("div", { class: "map-box" }, img);
    if (!orderMap) orderMap = WG.orderOverlay(p.svg, box);
    return el("figure", { class: "panel" }, el("figcaption", { text: p.title }), box, open);
  }

  // The orders on the form, as the game writes them (the typed ones with their unit in front).
  function chosenOrders() {
    const form = document.getElementById("answer-form");
    if (!form) return [];
    const orders = [];
    for (const box of form.querySelectorAll(".choice-box")) {
      const select = box.querySelector("select.choice");
      const typed = box.querySelector(".typed input");
      if (select && !select.value.startsWith("\u0000")) orders.push(select.value);
      else if (typed && typed.value.trim()) {
        const text = typed.value.trim().toUpperCase();
        orders.push(/^[AF] /.test(text) ? text : select.name + " " + text);
      }
    }
    return orders;
  }

  function drawOrders() {
    if (orderMap) orderMap.draw(chosenOrders());
  }

  function tablePanel(p) {
    const head = el("tr", {}, ...(p.columns || []).map((c) => el("th", { text: c })));
    const rows = (p.rows || []).map((row) => {
      const first = String(row[0] ?? "");
      const mine = p.highlight && first.split(" ")[0] === p.highlight;
      const cells = row.map((cell, i) => {
        const td = el("td", { text: String(cell ?? "") });
        const color = i === 0 && p.colors ? p.colors[first.split(" ")[0]] : null;
        if (color && SAFE_COLOR.test(color)) {
          const swatch = el("span", { class: "swatch", "aria-hidden": "true" });
          swatch.style.background = color; // CSSOM, not an inline style attribute
          td.prepend(swatch);
        }
        return td;
      });
      return el("tr", { class: mine ? "mine" : "" }, ...cells);
    });
    return el("div", { class: "panel" },
      el("h3", { text: p.title }),
      el("table", { class: "world-table" }, el("thead", {}, head), el("tbody", {}, ...rows)),
      p.note ? el("p", { class: "hint", text: p.note }) : null);
  }

  function renderWorld(panels) {
    while (blobs.length) URL.revokeObjectURL(blobs.pop());
    orderMap = null;
    const nodes = panels.map((p) => {
      if (p.kind === "svg" && typeof p.svg === "string") return svgPanel(p);
      if (p.kind === "table") return tablePanel(p);
      return el("div", { class: "panel" }, el("h3", { text: p.title }), el("pre", { text: String(p.text ?? "") }));
    });
    $("world").replaceChildren(...nodes);
    $("world-panel").hidden = nodes.length === 0;
  }

  async function refreshWorld(key) {
    if (key === worldKey || worldBusy) return;
    if (!key) {
      worldKey = null;
      renderWorld([]);
      return;
    }
    worldBusy = true;
    try {
      const world = await api(token, "/wargraph/seat/world");
      worldKey = world.key;
      renderWorld(world.panels || []);
      drawOrders();
    } catch (err) {
      $("connection").textContent = "The board could not be loaded: " + err.message;
    } finally {
      worldBusy = false;
    }
  }

  function draftText(draft) {
    const first = Object.values(draft).find((v) => typeof v === "string");
    return first || JSON.stringify(draft);
  }

  function reviewPrefill(q) {
    return { accept: true, text: draftText(q.draft) };
  }

  async function submit(ev, q, button) {
    ev.preventDefault();
    let answer;
    try {
      answer = form.read();
    } catch (err) {
      $("form-error").textContent = err.message;
      return;
    }
    button.disabled = true;
    button.textContent = "Sending…";
    $("form-error").textContent = "";
    try {
      submitted.add(q.key);
      const state = await api(token, "/wargraph/seat/answer", { method: "POST", body: { ask_id: q.ask_id, answer } });
      dropDraft(state, q);
      render(state);
    } catch (err) {
      submitted.delete(q.key);
      button.disabled = false;
      button.textContent = "Submit answer";
      $("form-error").textContent = err.message;
    }
  }

  function render(state) {
    seat = state.seat;
    const title = WG.gameTitle(state.title, state.moment) || "wargraph";
    $("title").textContent = title;
    $("who").textContent = "Your seat: " + state.seat;
    // the phase in the tab's title: a person with many tabs sees where each game stands
    document.title = state.seat + " · " + title + (state.moment ? " · " + WG.phaseWords(state.moment) : "");
    setStatus(state);
    $("deadline").hidden = !state.deadline;
    $("deadline-rule").textContent = state.deadline ? state.deadline.when_it_passes : "";
    clock.show(state.deadline);
    renderEvents($("events"), state.events, seat);
    renderPress(state.events, seat);
    renderQuestion(state);
    refreshWorld(state.world || null);
  }

  async function poll() {
    if (busy) return;
    busy = true;
    try {
      render(await api(token, "/wargraph/seat"));
      $("connection").textContent = "";
    } catch (err) {
      $("connection").textContent = err.status === 401 || err.status === 403 ? err.message : "Connection problem: " + err.message;
      if (err.status === 401 || err.status === 403 || err.status === 404) return; // stop polling
    } finally {
      busy = false;
    }
    setTimeout(poll, POLL_MS);
  }

  if (!token) {
    $("connection").textContent = "No seat token: open the link the facilitator gave you.";
  } else {
    poll();
  }
})();

// The game view: one page that shows, phase by phase, what each seat was shown, what it answered
// and who knew what. Every text from the game is data: it is only ever put in the page with
// textContent (never innerHTML), and maps are shown as <img> (an image cannot run script).
"use strict";
(function () {
  const $ = (id) => document.getElementById(id);
  const state = { data: null, phase: 0, seats: new Set(), tab: "phases", pick: null, prompts: false };

  function el(tag, cls, text) {
    const n = document.createElement(tag);
    if (cls) n.className = cls;
    if (text !== undefined && text !== null) n.textContent = String(text);
    return n;
  }

  // --- the data: gzip + base64 inline (a file) or fetched behind the facilitator's token ------

  async function gunzip(b64) {
    const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
    const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    return JSON.parse(await new Response(stream).text());
  }

  function fragment() {
    const out = {};
    for (const part of location.hash.replace(/^#/, "").split("&")) {
      const i = part.indexOf("=");
      if (i > 0) out[decodeURIComponent(part.slice(0, i))] = decodeURIComponent(part.slice(i + 1));
    }
    return out;
  }

  async function load() {
    const node = $("wg-data");
    const enc = node.dataset.encoding;
    if (enc === "gzip-b64") return gunzip(node.textContent.trim());
    if (enc === "served") {
      const f = fragment();
      if (!f.token || !f.thread) throw new Error("open this page with the link the server printed (#token=…&thread=…)");
      const resp = await fetch("/wargraph/graphs/" + encodeURIComponent(f.thread) + "/view-data", {
        headers: { Authorization: "Bearer " + f.token },
        cache: "no-store",
      });
      if (!resp.ok) throw new Error("the server answered " + resp.status + ": " + (await resp.text()).slice(0, 200));
      const body = await resp.json();
      return gunzip(body.data);
    }
    throw new Error("this page holds no game data");
  }

  // --- helpers over the payload ----------------------------------------------------------------

  const text = (ids) => (ids || []).map((i) => state.data.L[i]).join("\n");
  // a phase's short name in tables: its round (and the family's name for it) and its step
  const tag = (p) => (p.round === 0 ? "setup" : p.group.replace(/^Round /, "R") + " · " + p.short);
  const phaseOf = (i) => state.data.phases[i];
  const seatVisible = (s) => state.seats.has(s);

  function sees(seat, ev) {
    const aud = ev.audience || ["*"];
    if (aud.includes("*")) return true;
    const groups = state.data.groups[seat] || [seat];
    return aud.some((a) => groups.includes(a));
  }

  function audienceLabel(ev) {
    const aud = ev.audience || ["*"];
    return aud.includes("*") ? "everyone" : "to " + aud.join(", ");
  }

  // --- header, timeline, filters ------------------------------------------------------------------

  function header() {
    const d = state.data;
    $("notice").textContent = "";
    $("title").textContent = d.title;
    document.title = d.title + " — wargraph view";
    const bits = [d.family, "thread " + d.thread, d.done ? "finished" : "not finished"];
    if (d.model_calls) bits.push(d.model_calls + (d.model_calls === 1 ? " model call" : " model calls"));
    $("subtitle").textContent = bits.join(" · ");
    if (d.error) notice("The game ended in error: " + d.error);
    if (d.trace_note) notice(d.trace_note);
  }

  function notice(msg) {
    $("notice").appendChild(el("div", "", msg));
  }

  function timeline() {
    const list = $("timeline");
    list.textContent = "";
    const q = $("phase-filter").value.trim().toLowerCase();
    let round = null;
    state.data.phases.forEach((p, i) => {
      if (q && !p.label.toLowerCase().includes(q)) return;
      if (p.round !== round) {
        round = p.round;
        list.appendChild(el("li", "round-mark", p.round === 0 ? "Setup" : p.group || "Round " + p.round));
      }
      const li = el("li", "tl" + (i === state.phase ? " on" : ""));
      const b = el("button", "tl-btn", p.short || p.label);
      b.type = "button";
      b.dataset.phase = String(i);
      b.title = p.label;
      b.addEventListener("click", () => go(i));
      li.appendChild(b);
      const n = p.counts || {};
      li.appendChild(el("span", "tl-n", (n.events || 0) + "·" + (n.calls || 0)));
      list.appendChild(li);
    });
    const on = list.querySelector(".tl.on");
    if (on) on.scrollIntoView({ block: "nearest" });
  }

  function seatFilter() {
    const box = $("seat-filter");
    box.textContent = "";
    for (const s of state.data.seats) {
      const lab = el("label", "seat-box");
      const cb = el("input");
      cb.type = "checkbox";
      cb.checked = seatVisible(s);
      cb.dataset.seat = s;
      cb.addEventListener("change", () => {
        if (cb.checked) state.seats.add(s);
        else state.seats.delete(s);
        render();
      });
      lab.appendChild(cb);
      lab.appendChild(el("span", "", s));
      box.appendChild(lab);
    }
  }

  // --- one phase ----------------------------------------------------------------------------------

  function phaseHead(p) {
    const head = $("phase-head");
    head.textContent = "";
    const row = el("div", "ph-row");
    row.appendChild(el("h2", "", p.label));
    const nav = el("span", "ph-nav");
    const prev = el("button", "", "← previous");
    prev.type = "button";
    prev.disabled = state.phase === 0;
    prev.addEventListener("click", () => go(state.phase - 1));
    const next = el("button", "", "next →");
    next.type = "button";
    next.disabled = state.phase >= state.data.phases.length - 1;
    next.addEventListener("click", () => go(state.phase + 1));
    const all = el("button", "", state.prompts ? "fold prompts" : "open prompts");
    all.type = "button";
    all.id = "toggle-prompts";
    all.addEventListener("click", togglePrompts);
    nav.append(prev, next, all);
    row.appendChild(nav);
    head.appendChild(row);
    if (p.replay) {
      const r = el("div", "replay");
      r.appendChild(el("span", "lbl", "Fork at the start of this round: "));
      const code = el("code", "replay-cmd", p.replay);
      r.appendChild(code);
      const copy = el("button", "copy", "copy");
      copy.type = "button";
      copy.addEventListener("click", () => {
        if (navigator.clipboard) navigator.clipboard.writeText(p.replay).catch(() => {});
        copy.textContent = "copied";
      });
      r.appendChild(copy);
      head.appendChild(r);
    }
  }

  function panels(p) {
    const box = $("panels");
    box.textContent = "";
    for (const panel of state.data.panels[String(state.phase)] || []) {
      const card = el("div", "panel panel-" + panel.kind);
      card.appendChild(el("h3", "", panel.title || ""));
      if (panel.kind === "svg") {
        const img = el("img", "map");
        img.alt = panel.title || "map";
        img.src = "data:image/svg+xml;charset=utf-8," + encodeURIComponent(text(panel.svg));
        card.appendChild(img);
      } else if (panel.kind === "table") {
        card.appendChild(table(panel.columns || [], panel.rows || []));
      } else if (panel.kind === "text") {
        card.appendChild(el("div", "pre", text(panel.text)));
      }
      if (panel.note) card.appendChild(el("p", "hint", panel.note));
      box.appendChild(card);
    }
  }

  function table(columns, rows) {
    const t = el("table", "grid");
    const tr = el("tr");
    for (const c of columns) tr.appendChild(el("th", "", c));
    const thead = el("thead");
    thead.appendChild(tr);
    t.appendChild(thead);
    const body = el("tbody");
    for (const r of rows) {
      const row = el("tr");
      r.forEach((c, i) => row.appendChild(el(i === 0 ? "th" : "td", "", c)));
      body.appendChild(row);
    }
    t.appendChild(body);
    return t;
  }

  function eventNode(ev, viewer) {
    const box = el("div", "event kind-" + ev.kind + ((ev.audience || ["*"]).includes("*") ? "" : " private"));
    box.dataset.event = String(ev.i);
    if (state.pick === ev.i) box.classList.add("picked");
    const head = el("div", "event-head");
    head.appendChild(el("span", "event-kind", ev.kind));
    let who = ev.author;
    if (viewer && ev.author !== viewer) who = "from " + ev.author;
    head.appendChild(el("span", "", who));
    head.appendChild(el("span", "event-audience", audienceLabel(ev)));
    const knew = el("button", "knew-btn", "who knew?");
    knew.type = "button";
    knew.addEventListener("click", (e) => {
      e.stopPropagation();
      pick(ev.i);
    });
    head.appendChild(knew);
    box.appendChild(head);
    box.appendChild(el("div", "event-text", text(ev.text)));
    if (ev.cut) box.appendChild(el("div", "event-cut hint", ev.cut));  // never a silent cut
    if (ev.trail && ev.trail.length) {
      // a secretary's verdict: every proposal it was given, and why it sent one back
      const ol = el("ol", "trail");
      for (const [proposal, reasons, source] of ev.trail) {
        const li = el("li", reasons.length && text(reasons) ? "sent-back" : "accepted");
        li.appendChild(el("div", "lbl", "proposal" + (source ? " (" + source + ")" : "")));
        li.appendChild(el("div", "pre small", text(proposal)));
        if (text(reasons)) li.appendChild(el("div", "reasons", text(reasons)));
        ol.appendChild(li);
      }
      box.appendChild(ol);
    }
    return box;
  }

  const SECRETARY = new Set(["verdict", "rejection", "revision", "secretary", "amend", "amended"]);
  const DIARY = new Set(["diary", "diary_digest", "summary", "note"]);

  function seatColumn(seat, p, evs, calls) {
    const col = el("div", "seat");
    col.dataset.seat = seat;
    const head = el("div", "seat-head");
    head.appendChild(el("h2", "", seat));
    if (state.pick !== null) {
      const ev = state.data.events[state.pick];
      const seen = ev.seen && ev.seen[seat];
      const could = sees(seat, ev);
      const mark = seen !== undefined ? "had it in its prompt" : could ? "could see it (not in a prompt)" : "did not know";
      head.appendChild(el("span", "know " + (seen !== undefined ? "yes" : could ? "could" : "no"), mark));
    }
    col.appendChild(head);

    const mine = calls.filter((c) => c.role === seat);
    const shown = el("div", "block");
    if (mine.length) {
      shown.appendChild(el("h3", "", "Shown (" + mine.length + " call" + (mine.length === 1 ? "" : "s") + ")"));
      for (const c of mine) shown.appendChild(callNode(c));
    } else if (state.data.calls.length) shown.appendChild(el("p", "hint", "not asked in this phase"));
    col.appendChild(shown);

    const own = evs.filter((e) => e.author === seat && !DIARY.has(e.kind) && e.kind !== "message");
    const secretary = evs.filter((e) => SECRETARY.has(e.kind) && e.author !== seat && sees(seat, e) && !(e.audience || []).includes("*"));
    const msgs = evs.filter((e) => e.kind === "message" && (e.author === seat || (sees(seat, e) && !(e.audience || []).includes("*"))));
    const diary = evs.filter((e) => DIARY.has(e.kind) && (e.author === seat || (e.audience || []).includes(seat)));
    const other = evs.filter(
      (e) => e.author !== seat && !(e.audience || ["*"]).includes("*") && sees(seat, e) &&
        !SECRETARY.has(e.kind) && e.kind !== "message" && !DIARY.has(e.kind)
    );
    section(col, "Answer", own, seat, null);
    const refusals = mine.filter((c) => ["rejected", "fallback", "fault", "corrected"].includes(c.ev));
    if (secretary.length || refusals.length) {
      const b = el("div", "block");
      b.appendChild(el("h3", "", "Secretary, refusals and corrections"));
      for (const c of refusals) {
        const r = el("div", "refusal ev-" + c.ev);
        const label = { rejected: "answer refused", corrected: "answer corrected" }[c.ev] || c.ev;
        r.appendChild(el("span", "event-kind", label));
        r.appendChild(el("div", "event-text", c.reason || ""));
        b.appendChild(r);
      }
      for (const e of secretary) b.appendChild(eventNode(e, seat));
      col.appendChild(b);
    }
    if (msgs.length) {
      const b = el("div", "block");
      b.appendChild(el("h3", "", "Messages"));
      const pairs = new Map();
      for (const e of msgs) {
        const other = e.author === seat ? (e.audience || []).filter((a) => a !== seat).join(", ") || "?" : e.author;
        if (!pairs.has(other)) pairs.set(other, []);
        pairs.get(other).push(e);
      }
      for (const [other, list] of pairs) {
        const th = el("div", "thread");
        th.appendChild(el("div", "thread-head", seat + " ↔ " + other));
        for (const e of list) {
          const n = eventNode(e, seat);
          n.classList.add(e.author === seat ? "sent" : "received");
          th.appendChild(n);
        }
        b.appendChild(th);
      }
      col.appendChild(b);
    }
    section(col, "Diary", diary, seat, null);
    section(col, "Also told", other, seat, null);
    return col;
  }

  function section(col, title, evs, seat, empty) {
    if (!evs.length && empty === null) return;
    const b = el("div", "block");
    b.appendChild(el("h3", "", title));
    if (!evs.length) b.appendChild(el("p", "hint", empty));
    for (const e of evs) b.appendChild(eventNode(e, seat));
    col.appendChild(b);
  }

  function callNode(c) {
    const box = el("div", "call ev-" + c.ev);
    const meta = [c.task || c.node || "call"];
    if (c.model) meta.push(c.model);
    if (c.attempt && c.attempt > 1) meta.push("re-asked (attempt " + c.attempt + ")");
    if (c.ev !== "call" && c.ev !== c.model) meta.push(c.ev); // not "scripted · scripted"
    if (c.pt || c.ct) meta.push((c.pt || 0) + "+" + (c.ct || 0) + " tokens");
    if (c.lat) meta.push(c.lat.toFixed(2) + " s");
    box.appendChild(el("div", "call-meta", meta.join(" · ")));
    if (!c.msgs.length) {
      // a correction or a scripted answer: no prompt was sent, so none is offered
      if (c.out && c.out.length) {
        box.appendChild(el("div", "lbl", c.ev === "corrected" ? "recorded as" : "answer"));
        box.appendChild(el("div", "answer", text(c.out)));
      }
      return box;
    }
    const det = el("details", "prompt");
    det.appendChild(el("summary", "", "prompt (" + c.size + " characters)"));
    // the prompt is drawn only when opened: a long game has thousands of them
    const draw = () => {
      if (det.dataset.drawn) return;
      det.dataset.drawn = "1";
      for (const m of c.msgs) {
        det.appendChild(el("div", "msg-role", m[0]));
        const pre = el("div", "msg");
        for (const line of text(m[1]).split("\n")) {
          pre.appendChild(el("div", line.startsWith(">") ? "ln quoted" : "ln", line || " "));
        }
        det.appendChild(pre);
      }
    };
    det.addEventListener("toggle", () => det.open && draw());
    if (state.prompts) {
      draw();
      det.open = true;
    }
    box.appendChild(det);
    if (c.out && c.out.length) {
      box.appendChild(el("div", "lbl", "model's answer"));
      box.appendChild(el("div", "answer", text(c.out)));
    }
    return box;
  }

  function togglePrompts() {
    state.prompts = !state.prompts;
    render();
  }

  function knowing() {
    const box = $("knowing");
    box.textContent = "";
    if (state.pick === null) {
      box.hidden = true;
      return;
    }
    box.hidden = false;
    const ev = state.data.events[state.pick];
    const p = phaseOf(ev.p);
    box.appendChild(el("strong", "", "Who knew: " + ev.kind + " by " + ev.author + " (" + p.label + ", " + audienceLabel(ev) + ")"));
    box.appendChild(el("div", "event-text", text(ev.text).slice(0, 400)));
    const ul = el("ul", "knew-list");
    for (const s of state.data.seats) {
      const seen = ev.seen ? ev.seen[s] : undefined;
      let line;
      if (seen !== undefined) line = s + ": in its prompt from " + phaseOf(state.data.calls[seen].p).label;
      else if (sees(s, ev)) line = s + ": in its audience, never in a prompt";
      else line = s + ": did not know";
      const li = el("li", seen !== undefined ? "yes" : sees(s, ev) ? "could" : "no", line);
      if (seen !== undefined) {
        const b = el("button", "go", "go");
        b.type = "button";
        b.addEventListener("click", () => go(state.data.calls[seen].p));
        li.appendChild(b);
      }
      ul.appendChild(li);
    }
    box.appendChild(ul);
    const clear = el("button", "", "clear (Esc)");
    clear.type = "button";
    clear.addEventListener("click", () => pick(null));
    box.appendChild(clear);
  }

  function pick(i) {
    state.pick = i;
    render();
  }

  function renderPhase() {
    const d = state.data;
    const p = phaseOf(state.phase);
    phaseHead(p);
    knowing();
    panels(p);
    const evs = p.events.map((i) => d.events[i]);
    const calls = p.calls.map((i) => d.calls[i]);
    const pub = evs.filter((e) => (e.audience || ["*"]).includes("*") || !d.seats.some((s) => sees(s, e)));
    const tableBox = $("table-events");
    tableBox.textContent = "";
    if (pub.length) {
      tableBox.appendChild(el("h3", "", "At the table (everyone saw these)"));
      for (const e of pub) tableBox.appendChild(eventNode(e, null));
    }
    const seats = $("seats");
    seats.textContent = "";
    const shown = d.seats.filter(seatVisible);
    seats.style.setProperty("--cols", String(Math.max(1, shown.length)));
    const idle = [];
    for (const s of shown) {
      const priv = evs.filter((e) => !(e.audience || ["*"]).includes("*") && (e.author === s || sees(s, e)));
      const own = evs.filter((e) => (e.audience || ["*"]).includes("*") && e.author === s);
      const mine = own.concat(priv).sort((a, b) => a.i - b.i);
      // a seat with nothing in this phase is named in one line, not given an empty column
      // (unless an event is picked: every seat then says whether it knew)
      if (!mine.length && !calls.some((c) => c.role === s) && state.pick === null) idle.push(s);
      else seats.appendChild(seatColumn(s, p, mine, calls));
    }
    const rest = $("idle-seats");
    rest.textContent = idle.length ? "Nothing in this phase for: " + idle.join(", ") : "";
    if (!shown.length) seats.appendChild(el("p", "hint", "no seat ticked: tick seats on the left"));
  }

  // --- who knew what: every private event against every seat ---------------------------------------

  function renderKnew() {
    const pane = $("pane-knew");
    pane.textContent = "";
    const d = state.data;
    pane.appendChild(el("h2", "", "Who knew what"));
    pane.appendChild(el("p", "hint",
      "Each private event (not addressed to everyone) and, per seat: ● it was in a prompt of that seat, ○ it was in the seat's audience but never in a prompt, – the seat never knew. Click a row to open its phase."));
    const seats = d.seats.filter(seatVisible);
    const t = el("table", "grid knew");
    const hr = el("tr");
    for (const h of ["phase", "event", "author", "to"].concat(seats)) hr.appendChild(el("th", "", h));
    const thead = el("thead");
    thead.appendChild(hr);
    t.appendChild(thead);
    const body = el("tbody");
    const q = $("phase-filter").value.trim().toLowerCase();
    let n = 0;
    for (const ev of d.events) {
      if ((ev.audience || ["*"]).includes("*")) continue;
      const p = phaseOf(ev.p);
      if (q && !p.label.toLowerCase().includes(q)) continue;
      if (++n > 2000) break;
      const tr = el("tr", "row");
      tr.appendChild(el("td", "", tag(p)));
      tr.appendChild(el("td", "clip", ev.kind + ": " + text(ev.text).slice(0, 90)));
      tr.appendChild(el("td", "", ev.author));
      tr.appendChild(el("td", "", (ev.audience || []).join(", ")));
      for (const s of seats) {
        const seen = ev.seen && ev.seen[s] !== undefined;
        tr.appendChild(el("td", "mark " + (seen ? "yes" : sees(s, ev) ? "could" : "no"), seen ? "●" : sees(s, ev) ? "○" : "–"));
      }
      tr.addEventListener("click", () => {
        state.pick = ev.i;
        state.phase = ev.p;
        tab("phases");
      });
      body.appendChild(tr);
    }
    t.appendChild(body);
    pane.appendChild(t);
    if (n > 2000) pane.appendChild(el("p", "hint", "first 2000 shown: filter by phase to see others"));
  }

  // --- costs ----------------------------------------------------------------------------------------

  function renderCosts() {
    const pane = $("pane-costs");
    pane.textContent = "";
    const d = state.data;
    pane.appendChild(el("h2", "", "Costs per seat"));
    const rows = Object.entries(d.costs).map(([seat, c]) => [
      seat, c.calls, c.prompt_tokens, c.completion_tokens, c.latency_s.toFixed(2), c.reasked, c.fallbacks, c.faults, c.other_answers || 0, (c.models || []).join(", "),
    ]);
    pane.appendChild(table(["seat", "model calls", "prompt tokens", "completion tokens", "seconds", "re-asked", "fallbacks", "faults", "answers not from a model", "models"], rows));
    if ((d.coverage || []).length) {
      // what each seat's views showed of the texts given to it: no cut in a view is silent
      pane.appendChild(el("h2", "", "View coverage"));
      const pair = (x) => x[0] + " (" + x[1] + " chars)";
      const coverRows = d.coverage.map((c) => [
        c.seat, c.profile, c.asks, pair([c.items, c.chars]),
        c.share === null ? "" : (100 * c.share).toFixed(1) + "%",
        pair(c.shortened), pair(c.dropped),
      ]);
      const ct = table(["seat", "profile", "asks", "texts in its views", "shown whole", "shortened", "left out"], coverRows);
      ct.id = "coverage";
      pane.appendChild(ct);
      pane.appendChild(el("p", "hint", "shown whole: the share of the characters of the texts given to a seat's views (messages, plans, diary entries, goals) that its prompts showed as written"));
    }
    pane.appendChild(el("h2", "", "Every call"));
    const shown = d.calls.filter((c) => seatVisible(c.role) || !d.seats.includes(c.role));
    const callRows = shown.slice(0, 5000).map((c) => [
      tag(phaseOf(c.p)), c.role, c.task || "", c.model || "", c.ev,
      c.attempt || "", c.pt || 0, c.ct || 0, c.lat ? c.lat.toFixed(2) : "",
    ]);
    const t = table(["phase", "seat", "task", "model", "kind", "attempt", "prompt tokens", "completion tokens", "seconds"], callRows);
    t.classList.add("calls");
    pane.appendChild(t);
    if (shown.length > 5000) pane.appendChild(el("p", "hint", "first 5000 calls shown"));
  }

  // --- navigation -----------------------------------------------------------------------------------

  function tab(name) {
    state.tab = name;
    for (const b of document.querySelectorAll(".tab")) b.classList.toggle("on", b.dataset.tab === name);
    for (const t of ["phases", "knew", "costs"]) $("pane-" + t).hidden = t !== name;
    render();
  }

  function go(i) {
    if (i < 0 || i >= state.data.phases.length) return;
    state.phase = i;
    if (state.tab !== "phases") tab("phases");
    else render();
    const f = fragment();
    if (!f.token) history.replaceState(null, "", "#phase=" + encodeURIComponent(state.data.phases[i].key));
  }

  function render() {
    timeline();
    if (state.tab === "phases") renderPhase();
    else if (state.tab === "knew") renderKnew();
    else renderCosts();
  }

  function keys(e) {
    if (e.target && (e.target.tagName === "INPUT" || e.target.tagName === "TEXTAREA")) {
      if (e.key === "Escape") e.target.blur();
      return;
    }
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    const k = e.key;
    if (k === "ArrowRight" || k === "j") go(state.phase + 1);
    else if (k === "ArrowLeft" || k === "k") go(state.phase - 1);
    else if (k === "Home") go(0);
    else if (k === "End") go(state.data.phases.length - 1);
    else if (k === "/") {
      e.preventDefault();
      $("phase-filter").focus();
    } else if (k === "p") togglePrompts();
    else if (k === "1") tab("phases");
    else if (k === "2") tab("knew");
    else if (k === "3") tab("costs");
    else if (k === "Escape") pick(null);
    else return;
    e.preventDefault();
  }

  async function main() {
    try {
      state.data = await load();
    } catch (err) {
      notice("Cannot show this game: " + err.message);
      return;
    }
    const d = state.data;
    d.seats.forEach((s) => state.seats.add(s));
    const want = fragment().phase;
    const at = d.phases.findIndex((p) => p.key === want);
    state.phase = at >= 0 ? at : Math.min(d.start || 0, d.phases.length - 1);
    header();
    seatFilter();
    for (const b of document.querySelectorAll(".tab")) b.addEventListener("click", () => tab(b.dataset.tab));
    $("phase-filter").addEventListener("input", () => (state.tab === "knew" ? render() : timeline()));
    document.addEventListener("keydown", keys);
    const live = $("wg-data").dataset.encoding === "served" && !d.done;
    if (d.phases.length) render();
    else waiting(live);
    document.body.dataset.ready = "1";
    if (live) setTimeout(follow, LIVE_MS); // a game just started is followed until it has phases
  }

  // A game with no phase yet: said once; a live one is shown as soon as its first phase is.
  function waiting(live) {
    $("notice").textContent = "";
    notice(live ? "This game has no phases yet; the page shows them as they come." : "This game has no phases.");
  }

  // A live game (served): read it again every few seconds; stay on the phase being read, or
  // move on with the game when its last phase was shown.
  const LIVE_MS = 5000;
  async function follow() {
    let fresh;
    try {
      fresh = await load();
    } catch (err) {
      setTimeout(follow, LIVE_MS * 2);
      return;
    }
    const old = state.data;
    const atEnd = state.phase >= old.phases.length - 1;
    const key = old.phases[state.phase] && old.phases[state.phase].key;
    state.data = fresh;
    if (fresh.seats.some((s) => !old.seats.includes(s))) {
      for (const s of fresh.seats) if (!old.seats.includes(s)) state.seats.add(s);
      seatFilter(); // a game read before its setup had no seats yet
    }
    header();
    if (!fresh.phases.length) {
      if (!fresh.done) setTimeout(follow, LIVE_MS);
      return;
    }
    if (!old.phases.length) $("notice").textContent = "";
    const at = fresh.phases.findIndex((p) => p.key === key);
    state.phase = atEnd ? fresh.phases.length - 1 : Math.max(0, at);
    if (state.pick !== null && state.pick >= fresh.events.length) state.pick = null;
    render();
    if (!fresh.done) setTimeout(follow, LIVE_MS);
  }

  main();
})();

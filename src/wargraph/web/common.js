// Shared helpers of the wargraph pages: the token, the API, safe DOM building, events, forms.
// Everything from the game is inserted as text (textContent), never as HTML: other players'
// messages and scenario text are data.
"use strict";

const WG = (() => {
  function readToken(storageKey) {
    // The link carries the token in its #fragment (never sent to the server in the URL). Keep it
    // for this tab only and take it out of the address bar.
    const params = new URLSearchParams(location.hash.slice(1));
    const fromLink = params.get("token");
    if (fromLink) {
      sessionStorage.setItem(storageKey, fromLink);
      params.delete("token");
      const rest = params.toString();
      history.replaceState(null, "", location.pathname + (rest ? "#" + rest : ""));
    }
    return sessionStorage.getItem(storageKey);
  }

  async function api(token, path, options = {}) {
    const init = {
      method: options.method || "GET",
      headers: { Authorization: "Bearer " + token },
      cache: "no-store",
    };
    if (options.body !== undefined) {
      init.headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(options.body);
    }
    let response;
    try {
      response = await fetch(path, init);
    } catch (err) {
      throw new Error("cannot reach the game server (" + err.message + ")");
    }
    let data = null;
    try {
      data = await response.json();
    } catch (err) {
      data = null;
    }
    if (!response.ok) {
      const detail = data && data.detail ? data.detail : "HTTP " + response.status;
      const error = new Error(typeof detail === "string" ? detail : JSON.stringify(detail));
      error.status = response.status;
      throw error;
    }
    return data;
  }

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (key === "class") node.className = value;
      else if (key === "text") node.textContent = value;
      else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
      else if (value === true) node.setAttribute(key, "");
      else node.setAttribute(key, String(value));
    }
    for (const child of children.flat()) {
      if (child === null || child === undefined || child === false) continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  }

  // Scenario files wrap long lines; a line that goes on in lower case continues the sentence.
  function reflow(text) {
    return String(text || "").replace(/\n(?=[a-z])/g, " ");
  }

  function audienceLabel(audience, me) {
    if (!audience || audience.includes("*")) return "everyone";
    const names = audience.map((a) => (a === me ? "you" : a));
    if (names.length === 1 && names[0] === "you") return "only you";
    return names.join(", ");
  }

  const KIND_NAMES = {
    setting: "Setting",
    brief: "Your brief",
    plan: "Plan",
    proposal: "Proposal",
    narration: "What happened",
    inject: "News",
    message: "Message",
    summary: "Summary",
    answer: "Debrief",
    verdict: "Verdict",
    order: "Orders",
  };

  function renderEvents(list, events, me) {
    // Rebuild only when the record grew: it is append-only.
    if (list.dataset.count === String(events.length)) return false;
    list.replaceChildren();
    let round = null;
    for (const e of events) {
      if (e.round !== round) {
        round = e.round;
        list.append(el("li", { class: "round-mark", text: round === 0 ? "Before the game" : "Round " + round }));
      }
      const kind = e.kind === "brief" && !me ? "Brief" : KIND_NAMES[e.kind] || e.kind;
      const aud = audienceLabel(e.audience, me);
      list.append(
        el(
          "li",
          { class: "event kind-" + e.kind + (aud === "everyone" ? "" : " private"), "data-id": e.id },
          el(
            "div",
            { class: "event-head" },
            el("span", { class: "event-kind", text: kind }),
            el("span", { class: "event-author", text: e.author === me ? "you" : e.author }),
            el("span", { class: "event-audience", text: "seen by " + aud })
          ),
          el("div", { class: "event-text", text: reflow(e.text) })
        )
      );
    }
    list.dataset.count = String(events.length);
    list.scrollTop = list.scrollHeight; // the newest entry in view
    return true;
  }

  function fieldLabel(name) {
    return name.replace(/_/g, " ").replace(/^./, (c) => c.toUpperCase());
  }

  function plainType(spec) {
    if (spec.enum) return "enum";
    if (spec.type) return spec.type;
    const options = spec.anyOf || spec.oneOf;
    if (options) {
      const real = options.filter((o) => o.type !== "null");
      if (real.length === 1) return plainType(real[0]);
    }
    return "json";
  }

  const SHORT_TEXT = 100;

  // A one-line text input. Enter goes to the next field rather than sending the whole form: a
  // person writing one order per unit presses Enter after each.
  function oneLine(id, name, maxlength) {
    return el("input", {
      id, name, type: "text", maxlength,
      onkeydown: (ev) => {
        if (ev.key !== "Enter" || ev.isComposing) return;
        ev.preventDefault();
        const form = ev.target.form;
        // the fields a person sees (a unit's "type an order" box is hidden until chosen)
        const fields = form ? [...form.elements].filter((f) => !f.disabled && f.offsetParent !== null) : [];
        const next = fields[fields.indexOf(ev.target) + 1];
        if (next) next.focus();
      },
    });
  }

  // One input for a scalar spec (enum, boolean, number, text); null for anything else.
  // `read()` gives the value, or undefined when the person left it empty.
  function scalarInput(id, name, spec, initial, type, rows) {
    let input;
    let read;
    if (type === "enum") {
      input = el("select", { id, name });
      input.append(el("option", { value: "", text: "— choose —" }));
      for (const option of spec.enum) {
        // "" (none, e.g. no evidence) is what "— choose —" already stands for
        if (option !== "") input.append(el("option", { value: option, text: option }));
      }
      if (initial !== undefined && initial !== null) input.value = initial;
      read = () => input.value || undefined;
    } else if (type === "boolean") {
      input = el("input", { id, name, type: "checkbox" });
      input.checked = initial === undefined ? false : Boolean(initial);
      read = () => input.checked;
    } else if (type === "integer" || type === "number") {
      input = el("input", {
        id, name, type: "number",
        min: spec.minimum, max: spec.maximum, step: type === "integer" ? 1 : "any",
      });
      if (initial !== undefined && initial !== null) input.value = initial;
      read = () => (input.value === "" ? undefined : Number(input.value));
    } else if (type === "string") {
      // a short text (an order, a name) is one line; longer text gets a box
      input = spec.maxLength !== undefined && spec.maxLength <= SHORT_TEXT
        ? oneLine(id, name, spec.maxLength)
        : el("textarea", { id, name, rows, maxlength: spec.maxLength });
      if (initial !== undefined && initial !== null) input.value = initial;
      read = () => (input.value.trim() === "" ? undefined : input.value);
    } else {
      return null;
    }
    return { input, read };
  }

  const SCALARS = new Set(["enum", "boolean", "integer", "number", "string"]);
  const TYPED = "\u0000typed"; // the select's "type an order" entry (no real choice is this)

  // A text field that lists its likely answers (`x-choices`: value, label, group; e.g. a
  // Diplomacy unit's legal orders): a select grouped by kind, the default or first choice
  // preselected, and a last entry that opens a one-line text input for anything else. Under
  // the select, the choice as the game writes it (A PAR - BUR), so a person learns the notation.
  function choiceInput(id, name, spec, initial) {
    const choices = spec["x-choices"];
    const select = el("select", { id, name, class: "choice" });
    let group = null;
    let groupName = null;
    for (const c of choices) {
      if (c.group !== groupName) {
        groupName = c.group;
        group = groupName ? el("optgroup", { label: groupName }) : select;
        if (group !== select) select.append(group);
      }
      group.append(el("option", { value: c.value, text: c.label, title: c.value }));
    }
    select.append(el("option", { value: TYPED, text: "Other: type an order…" }));
    const typed = oneLine(id + "-typed", name + ".typed", spec.maxLength);
    typed.setAttribute("aria-label", fieldLabel(name) + ": your own order");
    if (spec.description) typed.placeholder = spec.description;
    const typedBox = el("div", { class: "typed", hidden: true }, typed,
      spec.description ? el("div", { class: "hint", text: spec.description }) : null);
    const notation = el("div", { class: "notation hint", "aria-live": "polite" });
    const known = new Set(choices.map((c) => c.value));
    if (!initial && known.has(spec["x-preset"])) initial = spec["x-preset"];
    if (initial && known.has(initial)) select.value = initial;
    else if (initial) {
      select.value = TYPED;
      typed.value = initial;
    }
    function sync() {
      const own = select.value === TYPED;
      typedBox.hidden = !own;
      notation.textContent = own ? "" : select.value;
      if (own && document.activeElement === select) typed.focus();
    }
    select.addEventListener("change", sync);
    sync();
    const box = el("div", { class: "choice-box" }, select, notation, typedBox);
    const read = () => {
      if (select.value !== TYPED) return select.value;
      return typed.value.trim() === "" ? undefined : typed.value;
    };
    return { input: box, read };
  }

  function unwrap(spec) {
    const options = spec.anyOf || spec.oneOf;
    const real = options ? options.filter((o) => o.type !== "null") : [];
    return real.length === 1 ? unwrap(real[0]) : spec;
  }

  // The item of an array a person can fill in row by row: a flat object of scalars, or a scalar.
  function rowItem(spec) {
    const list = unwrap(spec);
    const items = list.type === "array" && list.items ? unwrap(list.items) : null;
    if (!items) return null;
    if (items.properties) {
      const flat = Object.values(items.properties).every((p) => SCALARS.has(plainType(p)));
      return flat ? { kind: "object", items } : null;
    }
    return SCALARS.has(plainType(items)) ? { kind: "scalar", items } : null;
  }

  // An array as numbered rows (up to maxItems; "Add" shows one more). A row left empty is not
  // sent; a row half filled is an error naming the row and the field.
  function listInput(id, name, spec, initial, item) {
    const list = unwrap(spec);
    const most = Number.isInteger(list.maxItems) ? list.maxItems : 10;
    const box = el("div", { class: "rows", id });
    const rows = [];
    const given = Array.isArray(initial) ? initial : [];
    const one = fieldLabel(name).replace(/s$/, ""); // "Messages" -> "Message 1", "Message 2"
    function addRow(value) {
      const n = rows.length + 1;
      const rowId = id + "-" + n;
      const row = el("fieldset", { class: "list-row", "data-row": n });
      row.append(el("legend", { text: one + " " + n }));
      const parts = [];
      if (item.kind === "object") {
        const wanted = new Set(item.items.required || []);
        const line = el("div", { class: "row" });
        for (const [sub, subSpec] of Object.entries(item.items.properties)) {
          const type = plainType(subSpec);
          const made = scalarInput(rowId + "-" + sub, name + "." + n + "." + sub, subSpec,
            value ? value[sub] : subSpec.default, type, 3);
          line.append(el("div", { class: "field field-" + type + (type === "string" ? "" : " narrow") },
            el("label", { for: rowId + "-" + sub, text: fieldLabel(sub) }), made.input));
          parts.push([sub, made.read, wanted.has(sub), type]);
        }
        row.append(line);
      } else {
        const type = plainType(item.items);
        const made = scalarInput(rowId, name + "." + n, item.items, value, type, 2);
        row.append(made.input);
        parts.push([null, made.read, true, type]);
      }
      rows.push(parts);
      box.insertBefore(row, more);
      more.hidden = rows.length >= most;
    }
    const more = el("button", {
      type: "button", class: "small secondary", text: "Add another", onclick: () => addRow(undefined),
    });
    box.append(more);
    const start = Math.min(most, Math.max(1, given.length, list.minItems || 0));
    for (let i = 0; i < start; i++) addRow(given[i]);
    function read() {
      const values = [];
      rows.forEach((parts, i) => {
        const got = parts.map(([sub, reader, wanted, type]) => [sub, reader(), wanted, type]);
        // a checkbox always reads a value: a row counts as empty when nothing else is filled
        const filled = got.filter(([, v, , type]) => v !== undefined && type !== "boolean");
        if (filled.length === 0) return;
        if (parts[0][0] === null) {
          values.push(got[0][1]);
          return;
        }
        const answer = {};
        for (const [sub, v, wanted] of got) {
          if (v !== undefined) answer[sub] = v;
          else if (wanted) {
            throw new Error(one + " " + (i + 1) + ": " + fieldLabel(sub).toLowerCase() + " is required");
          }
        }
        values.push(answer);
      });
      return values.length ? values : undefined;
    }
    return { input: box, read };
  }

  // A form for a JSON schema: enums as selects, text as text areas, numbers, checkboxes, lists
  // of those (or of flat objects of those) as rows; anything else as JSON. `read()` returns the
  // answer object or throws with a message.
  function buildForm(schema, prefill) {
    const props = (schema && schema.properties) || {};
    const required = new Set((schema && schema.required) || []);
    const readers = [];
    const fields = [];
    let anyChoices = false;
    for (const [name, spec] of Object.entries(props)) {
      const id = "field-" + name;
      let type = plainType(spec);
      const initial = prefill && name in prefill ? prefill[name] : spec.default;
      const choices = Array.isArray(spec["x-choices"]) && spec["x-choices"].length > 0;
      let made = choices ? choiceInput(id, name, spec, initial) : scalarInput(id, name, spec, initial, type, 6);
      if (choices) {
        type = "choice";
        anyChoices = true;
      }
      const item = made ? null : rowItem(spec);
      if (item) {
        made = listInput(id, name, spec, initial, item);
        type = "list";
      }
      if (!made) {
        const input = el("textarea", { id, name, rows: 6, class: "json", placeholder: "JSON" });
        if (initial !== undefined) input.value = JSON.stringify(initial, null, 2);
        made = {
          input,
          read: () => {
            if (input.value.trim() === "") return undefined;
            try {
              return JSON.parse(input.value);
            } catch (err) {
              throw new Error(fieldLabel(name) + ": not valid JSON (" + err.message + ")");
            }
          },
        };
      }
      readers.push([name, made.read]);
      // a choice field shows its description beside its own text entry
      const hint = spec.description && !choices ? el("div", { class: "hint", text: spec.description }) : null;
      // "(optional)" only where leaving the field empty is a real choice: a preselected
      // default (send, Neutral, a unit's hold) is an answer already
      const given = choices || (spec.default !== undefined && spec.default !== "" && !Array.isArray(spec.default));
      const label = (typeof spec["x-label"] === "string" ? spec["x-label"] : fieldLabel(name)) +
        (required.has(name) || given ? "" : " (optional)");
      fields.push(
        el(
          "div",
          { class: "field field-" + type },
          type === "list" ? el("div", { class: "label", text: label }) : el("label", { for: id, text: label }),
          hint,
          made.input
        )
      );
    }
    function read() {
      const answer = {};
      for (const [name, reader] of readers) {
        const value = reader();
        if (value !== undefined) answer[name] = value;
        else if (required.has(name)) throw new Error(fieldLabel(name) + " is required");
      }
      return answer;
    }
    return { fields, read, choices: anyChoices };
  }

  // A family's name for where the game stands, in words where the page knows its notation
  // (Diplomacy's engine phase S1901M: "Spring 1901 movement"); else as the family gives it.
  const SEASONS = { S: "Spring", F: "Fall", W: "Winter" };
  const PHASE_KINDS = { M: "movement", R: "retreats", A: "adjustments" };
  function phaseWords(moment) {
    const m = /^([SFW])(\d{4})([MRA])$/.exec(String(moment || ""));
    return m ? SEASONS[m[1]] + " " + m[2] + " " + PHASE_KINDS[m[3]] : String(moment || "");
  }

  // Where a game stands: its phase in words, else its round ("round 2 of 5").
  function whereNow(g) {
    if (g.moment) return phaseWords(g.moment);
    if (!g.round) return g.done ? "" : "setting up";
    return "round " + g.round + (g.rounds ? " of " + g.rounds : "");
  }

  // A scenario's title may name its opening moment ("Diplomacy, Spring 1901"), which later
  // phases contradict: with a phase known, the title goes without it.
  function gameTitle(title, moment) {
    const bare = String(title || "");
    if (!moment) return bare;
    return bare.replace(/,?\s*(Spring|Summer|Autumn|Fall|Winter)\s+\d{3,4}$/, "") || bare;
  }

  // "14:05" today, else "28 Nov 14:05": when a game was started, in the reader's time.
  function startedAt(iso) {
    const when = new Date(iso);
    if (Number.isNaN(when.getTime())) return "";
    const time = when.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
    if (when.toDateString() === new Date().toDateString()) return time;
    return when.toLocaleDateString([], { day: "numeric", month: "short" }) + " " + time;
  }

  // A phase deadline's clock in `node`, ticking each second from the server's seconds_left
  // (not from this computer's clock, which may be off). `show(deadline)` with the payload's
  // deadline (or null: none); `onChange(state)` hears "none", "running" or "passed".
  function deadlineClock(node, onChange) {
    let end = null;
    let phase = "";
    let timer = null;
    let state = "none";
    function tick() {
      if (end === null) {
        node.textContent = "";
        node.dataset.state = "none";
      } else {
        const left = Math.max(0, Math.round((end - performance.now()) / 1000));
        const mm = Math.floor(left / 60);
        const ss = String(left % 60).padStart(2, "0");
        node.dataset.state = left > 0 ? "running" : "passed";
        node.textContent = left > 0 ? mm + ":" + ss + " left for " + phaseWords(phase) : "Time is up for " + phaseWords(phase);
      }
      if (node.dataset.state !== state) {
        state = node.dataset.state;
        if (onChange) onChange(state);
      }
    }
    function show(deadline) {
      if (deadline && typeof deadline.seconds_left === "number") {
        end = performance.now() + deadline.seconds_left * 1000;
        phase = deadline.phase || "";
        if (!timer) timer = setInterval(tick, 1000);
      } else {
        end = null;
        if (timer) clearInterval(timer);
        timer = null;
      }
      tick();
    }
    return { show };
  }

  return {
    readToken, api, el, renderEvents, buildForm, audienceLabel, fieldLabel, reflow,
    phaseWords, whereNow, gameTitle, startedAt, deadlineClock,
  };
})();

// Orders drawn over a Diplomacy map as a person chooses them: arrows for moves, retreats and
// convoys, dashed lines for supports, a ring for a hold, a square for a build, a cross for a
// disband. The map is the engine's SVG shown as an image (none of its scripts run); its text is
// only read here for where each province's label and each unit stand.
"use strict";

WG.orderOverlay = (() => {
  const NS = "http://www.w3.org/2000/svg";
  const UNIT = 40; // the engine draws a unit as a 40 x 40 symbol from its x, y

  // Where each place is in the map's own coordinates: a unit's centre, else its label.
  function places(svgText) {
    const doc = new DOMParser().parseFromString(svgText, "image/svg+xml");
    const root = doc.documentElement;
    if (!root || root.nodeName !== "svg") return null;
    const at = {};
    for (const t of doc.getElementsByTagName("text")) {
      const name = (t.textContent || "").trim().toUpperCase();
      const x = Number(t.getAttribute("x"));
      const y = Number(t.getAttribute("y"));
      if (/^[A-Z]{3}$/.test(name) && Number.isFinite(x) && Number.isFinite(y)) at[name] = [x + 16, y - 8]; // a label starts at x on its baseline
    }
    const units = {};
    for (const u of doc.getElementsByTagName("use")) {
      const m = /^unit_([A-Z]{3})/.exec(u.getAttribute("id") || "");
      const x = Number(u.getAttribute("x"));
      const y = Number(u.getAttribute("y"));
      if (m && Number.isFinite(x) && Number.isFinite(y)) units[m[1]] = [x + UNIT / 2, y + UNIT / 2];
    }
    return { at, units, viewBox: root.getAttribute("viewBox") || "0 0 1835 1360" };
  }

  function node(tag, attrs) {
    const n = document.createElementNS(NS, tag);
    for (const [k, v] of Object.entries(attrs)) n.setAttribute(k, String(v));
    return n;
  }

  // One order in notation, as shapes: {kind, from, to, via} with province codes (coasts off).
  function parse(order) {
    const words = String(order || "").toUpperCase().trim().split(/\s+/);
    if (words.length < 2 || !/^[AF]$/.test(words[0])) return null;
    const place = (w) => (w || "").split("/")[0];
    const unit = place(words[1]);
    const verb = words[2];
    if (verb === "-" || verb === "R") return { kind: verb === "-" ? "move" : "retreat", from: unit, to: place(words[3]) };
    if (verb === "H") return { kind: "hold", from: unit };
    if (verb === "B") return { kind: "build", from: unit };
    if (verb === "D") return { kind: "disband", from: unit };
    if (verb === "S" || verb === "C") {
      const other = place(words[4]);
      const to = words[5] === "-" ? place(words[6]) : null;
      return { kind: verb === "S" ? "support" : "convoy", from: unit, via: other, to };
    }
    return null;
  }

  function make(svgText, box) {
    const map = places(svgText);
    if (!map) return null;
    const layer = node("svg", { viewBox: map.viewBox, preserveAspectRatio: "xMinYMin meet", class: "orders-layer", "aria-hidden": "true" });
    const defs = node("defs", {});
    const head = node("marker", { id: "order-head", viewBox: "0 0 10 10", refX: 8, refY: 5, markerWidth: 5, markerHeight: 5, orient: "auto-start-reverse" });
    head.append(node("path", { d: "M0,0 L10,5 L0,10 z", fill: "#111" }));
    defs.append(head);
    layer.append(defs);
    const drawn = node("g", { class: "orders" });
    layer.append(drawn);
    box.append(layer);
    const where = (p) => map.units[p] || map.at[p];

    function line(a, b, attrs) {
      if (!a || !b) return;
      // stop short of the target so the arrowhead does not cover its label
      const dx = b[0] - a[0];
      const dy = b[1] - a[1];
      const len = Math.hypot(dx, dy) || 1;
      const cut = Math.min(18, len / 3);
      drawn.append(node("line", {
        x1: a[0], y1: a[1], x2: b[0] - (dx / len) * cut, y2: b[1] - (dy / len) * cut,
        stroke: "#111", "stroke-width": 6, "stroke-linecap": "round", ...attrs,
      }));
    }

    function draw(orders) {
      drawn.replaceChildren();
      const shown = [];
      for (const order of orders) {
        const o = parse(order);
        if (!o || !where(o.from)) continue;
        const from = where(o.from);
        if (o.kind === "move" || o.kind === "retreat") {
          line(from, where(o.to), { "marker-end": "url(#order-head)", stroke: o.kind === "retreat" ? "#8a1c1c" : "#111" });
        } else if (o.kind === "support" || o.kind === "convoy") {
          // to the middle of the move it helps (or to the unit it holds up)
          const a = where(o.via);
          const b = o.to ? where(o.to) : null;
          const target = a && b ? [(a[0] + b[0]) / 2, (a[1] + b[1]) / 2] : a;
          line(from, target, { "stroke-dasharray": o.kind === "support" ? "14 10" : "3 10", "marker-end": "url(#order-head)" });
        } else if (o.kind === "hold") {
          drawn.append(node("circle", { cx: from[0], cy: from[1], r: 26, fill: "none", stroke: "#111", "stroke-width": 5 }));
        } else if (o.kind === "build") {
          drawn.append(node("rect", { x: from[0] - 24, y: from[1] - 24, width: 48, height: 48, fill: "none", stroke: "#1f7a3f", "stroke-width": 6 }));
        } else if (o.kind === "disband") {
          line([from[0] - 20, from[1] - 20], [from[0] + 20, from[1] + 20], { stroke: "#a3211f" });
          line([from[0] + 20, from[1] - 20], [from[0] - 20, from[1] + 20], { stroke: "#a3211f" });
        }
        shown.push(order);
      }
      layer.dataset.orders = shown.join("; "); // what is drawn, in notation (tests read it)
    }

    return { draw };
  }

  return make;
})();

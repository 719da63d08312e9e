"use strict";
(function () {
const D = JSON.parse(document.getElementById("report-data").textContent);
const NS = document.getElementById("svg-ns").namespaceURI;
const M = D.messages, N = M.length, PAGE = D.pageSize || 50;
const PAGES = Math.max(1, Math.ceil(N / PAGE));
const CP = 100;  // a state is kept every CP messages; others are rebuilt from the diffs
const COLORS = ["#0969da", "#cf222e", "#1a7f37", "#8250df", "#bf8700", "#1b7c83", "#953800"];
const $ = (id) => document.getElementById(id);
const plural = (n, word, many) => n + " " + (n === 1 ? word : many || word + "s");
// A message is named as everywhere in gmtags: its number and the file's line (or entry).
const where = (i) => "message " + i + (M[i] && M[i].l != null ? " (" + D.unit + " " + M[i].l
  + ")" : "");

function el(tag, cls, text) {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined && text !== null) node.textContent = String(text);
  return node;
}
function svg(tag, attrs, text) {
  const node = document.createElementNS(NS, tag);
  for (const key in attrs) node.setAttribute(key, String(attrs[key]));
  if (text !== undefined) node.textContent = String(text);
  return node;
}

// State: per character the bag (stack order and counts), purse, pools, conditions; the place.
function emptyState() {
  return {chars: D.characters.map(() => ({order: [], counts: {}, purse: "", pools: [],
    cond: []})), place: null};
}
function apply(st, d) {
  if (!d) return st;
  const out = {chars: st.chars.slice(), place: st.place};
  const touch = (k) => {
    if (out.chars[k] === st.chars[k]) out.chars[k] = Object.assign({}, st.chars[k]);
    return out.chars[k];
  };
  for (const k in d.b || {}) {
    const c = touch(k), counts = Object.assign({}, c.counts), order = c.order.slice();
    for (const [id, n] of d.b[k].s) {
      if (n === 0) { delete counts[id]; continue; }
      if (!(id in counts)) order.push(id);
      counts[id] = n;
    }
    c.counts = counts;
    c.order = d.b[k].o ? d.b[k].o.slice() : order.filter((id) => id in counts);
  }
  for (const k in d.p || {}) touch(k).purse = d.p[k];
  for (const k in d.l || {}) touch(k).pools = d.l[k];
  for (const k in d.c || {}) touch(k).cond = d.c[k];
  if ("pl" in d) out.place = d.pl;
  return out;
}
const START = apply(emptyState(), D.start);
const kept = new Map([[-1, START]]);
function stateAfter(i) {
  if (i < 0) return START;
  let from = Math.floor((i + 1) / CP) * CP - 1;
  while (!kept.has(from)) from -= CP;
  let st = kept.get(from);
  for (let j = from + 1; j <= i; j++) {
    st = apply(st, M[j].d);
    if ((j + 1) % CP === 0) kept.set(j, st);
  }
  return st;
}
function placeText(place) {
  if (!place) return "No place";
  return place[0] + (place[1] ? " (" + place[1] + ")" : "") + ", day " + place[2];
}

// The chat, one page at a time.
let page = -1, selected = -1;
function textWithTags(text, marks) {
  // marks: [raw tag, class] in text order; each is found after the ones before it.
  const box = el("div", "text");
  const spans = [];
  for (const [raw, cls] of marks) {
    let at = text.indexOf(raw);
    while (at >= 0 && spans.some((s) => at < s[1] && at + raw.length > s[0])) {
      at = text.indexOf(raw, at + 1);
    }
    if (at >= 0 && raw) spans.push([at, at + raw.length, cls]);
  }
  spans.sort((x, y) => x[0] - y[0]);
  let pos = 0;
  for (const [start, end, cls] of spans) {
    box.appendChild(document.createTextNode(text.slice(pos, start)));
    const mark = el("mark", "tag " + cls, text.slice(start, end));
    if (cls === "uncounted") mark.title = "not counted: only GM replies the player sees are";
    box.appendChild(mark);
    pos = end;
  }
  box.appendChild(document.createTextNode(text.slice(pos)));
  return box;
}
function changeLine(before, d) {
  const parts = [];
  for (const k in (d && d.b) || {}) {
    for (const [id, n] of d.b[k].s) {
      const was = before.chars[k].counts[id] || 0, diff = n - was;
      if (!diff) continue;
      const span = el("span", diff > 0 ? "up" : "down",
        (diff > 0 ? "+" : "−") + D.stacks[id][0] + " ×" + Math.abs(diff) + " ("
        + D.characters[k] + ")");
      parts.push(span);
    }
  }
  if (d && "pl" in d && d.pl) parts.push(el("span", "", "→ " + placeText(d.pl)));
  if (!parts.length) return null;
  const line = el("div", "changes");
  parts.forEach((p, n) => { if (n) line.append(" · "); line.appendChild(p); });
  return line;
}
// A tag's repairs as one badge: "repaired: curly-quotes ×4"; each one in its tooltip and,
// on a click, listed under it.
function repairs(found) {
  const counts = new Map();
  for (const [code] of found) counts.set(code, (counts.get(code) || 0) + 1);
  const label = [...counts].map(([code, n]) => code + (n > 1 ? " ×" + n : "")).join(", ");
  const box = el("details", "repairs");
  const summary = el("summary", "badge diag", "repaired: " + label);
  summary.title = found.map(([, text]) => text).join("\n");
  box.appendChild(summary);
  const list = el("ul", "repair-list");
  for (const [code, text] of found) list.appendChild(el("li", "", code + ": " + text));
  box.appendChild(list);
  return box;
}
function renderMessage(i, before) {
  const m = M[i];
  const box = el("article", "msg role-" + m.r + (m.h ? " hidden" : "")
    + (i === selected ? " selected" : ""));
  box.id = "m" + i;
  box.dataset.index = i;
  const head = el("div", "head");
  head.append(el("span", "", where(i)), el("span", "", "session " + (m.s + 1)),
    el("span", "", m.r + (m.n ? " · " + m.n : "")));
  if (m.h) head.appendChild(el("span", "badge flag", "hidden: not counted"));
  if (m.u) {
    head.appendChild(el("span", "badge flag uncounted",
      (m.u.length === 1 ? "tag" : m.u.length + " tags") + " not counted (" + m.r + ")"));
  }
  box.appendChild(head);
  const marks = m.r === "gm" && m.a ? m.a.map((a) => [a.q, a.ok ? "ok" : "refused"])
    : (m.u || []).map((raw) => [raw, "uncounted"]);
  if (m.t) box.appendChild(textWithTags(m.t, marks));
  if (m.e) box.appendChild(el("pre", "event", m.e));
  if (m.a) {
    const list = el("ul", "answers");
    for (const a of m.a) {
      const li = el("li", a.ok ? "answer ok" : "answer refused");
      li.title = a.q;
      li.appendChild(el("span", "badge " + (a.ok ? "ok" : "refused"), a.k));
      if (!a.ok) li.appendChild(el("span", "reason", a.why || "refused"));
      li.appendChild(el("span", "answer-text", a.x));
      if (a.n) li.appendChild(el("span", "badge flag", "ignored: " + a.n.join(", ")));
      if (a.r) li.appendChild(repairs(a.r));
      list.appendChild(li);
    }
    box.appendChild(list);
  }
  for (const [code, text] of m.g || []) {
    const line = el("div", "diagnostic");
    line.append(el("span", "badge diag", code), el("span", "", text));
    box.appendChild(line);
  }
  const changes = changeLine(before, m.d);
  if (changes) box.appendChild(changes);
  if (m.w) {
    const more = el("details", "swipes");
    more.appendChild(el("summary", "", plural(m.w.length, "other swipe")
      + ", not selected"));
    more.addEventListener("toggle", () => {
      if (more.dataset.filled) return;
      more.dataset.filled = "1";
      for (const [n, text] of m.w) more.appendChild(el("pre", "", "swipe " + n + ": " + text));
    });
    box.appendChild(more);
  }
  return box;
}
function renderPager(box) {
  box.textContent = "";
  const go = (label, to) => {
    const b = el("button", "", label);
    b.type = "button";
    b.disabled = to < 0 || to >= PAGES || to === page;
    b.addEventListener("click", () => showPage(to));
    return b;
  };
  box.append(go("« first", 0), go("‹ prev", page - 1),
    el("span", "", "page " + (page + 1) + " of " + PAGES + " · messages " + (page * PAGE)
      + "–" + (Math.min(N, page * PAGE + PAGE) - 1) + " of " + N),
    go("next ›", page + 1), go("last »", PAGES - 1));
  const jump = el("input");
  jump.type = "number"; jump.min = 0; jump.max = Math.max(0, N - 1);
  jump.placeholder = "message #";
  jump.addEventListener("change", () => {
    const i = Number(jump.value);
    if (Number.isInteger(i) && i >= 0 && i < N) select(i, true);
  });
  box.appendChild(jump);
}
function showPage(p) {
  page = Math.max(0, Math.min(PAGES - 1, p));
  const list = $("messages"), frag = document.createDocumentFragment();
  const from = page * PAGE, to = Math.min(N, from + PAGE);
  let st = stateAfter(from - 1);
  for (let i = from; i < to; i++) {
    frag.appendChild(renderMessage(i, st));
    st = apply(st, M[i].d);
  }
  list.textContent = "";
  list.appendChild(frag);
  renderPager($("pager-top"));
  renderPager($("pager-bottom"));
}
function select(i, scroll) {
  if (Math.floor(i / PAGE) !== page) showPage(Math.floor(i / PAGE));
  const old = $("m" + selected);
  if (old) old.classList.remove("selected");
  selected = i;
  const box = $("m" + i);
  if (box) {
    box.classList.add("selected");
    if (scroll) box.scrollIntoView({block: "center"});
  }
  renderState(i);
  try { history.replaceState(null, "", "#m" + i); } catch (e) { /* a sandboxed file view */ }
}

// The state panel: the party after the selected message, changes since the one before.
function renderState(i) {
  const before = stateAfter(i - 1), after = stateAfter(i), panel = $("state");
  panel.textContent = "";
  panel.dataset.message = i;
  panel.appendChild(el("h2", "", i < 0 ? "Party at the start" : "Party after " + where(i)));
  const place = el("p", "line place" + (before.place !== after.place ? " changed" : ""),
    placeText(after.place));
  panel.appendChild(place);
  after.chars.forEach((c, k) => {
    const was = before.chars[k], sec = el("section", "character");
    sec.dataset.character = D.characters[k];
    sec.appendChild(el("h3", "", D.characters[k]));
    sec.appendChild(el("p", "line purse" + (was.purse !== c.purse ? " changed" : ""), c.purse));
    if (c.pools.length) {
      sec.appendChild(el("p", "line pools" + (was.pools !== c.pools ? " changed" : ""),
        c.pools.join(" · ")));
    }
    sec.appendChild(el("p", "line conditions" + (was.cond !== c.cond ? " changed" : ""),
      c.cond.length ? "Conditions: " + c.cond.join(", ") : "No conditions"));
    const table = el("table", "bag"), body = el("tbody");
    const row = (id, count, cls, old) => {
      const tr = el("tr", cls + " kind-" + D.stacks[id][1]);
      tr.dataset.stack = D.stacks[id][0];
      const cell = el("td", "stack-count");
      if (old !== null) cell.appendChild(el("span", "was", old + "→"));
      cell.append(String(count));
      tr.append(el("td", "stack-name", D.stacks[id][0]), cell);
      body.appendChild(tr);
    };
    for (const id of c.order) {
      const old = was.counts[id];
      if (old === undefined) row(id, c.counts[id], "added", null);
      else if (old !== c.counts[id]) row(id, c.counts[id], "changed", old);
      else row(id, c.counts[id], "", null);
    }
    for (const id of was.order) if (!(id in c.counts)) row(id, 0, "removed", was.counts[id]);
    if (!body.children.length) body.appendChild(el("tr", "empty")).appendChild(
      el("td", "", "empty bag"));
    table.appendChild(body);
    sec.appendChild(table);
    panel.appendChild(sec);
  });
}

// Charts, drawn as inline SVG the first time the Charts tab opens.
let drawn = false;
function heading(box, text) { box.appendChild(el("h2", "", text)); }
function jumpLink(i) {
  const a = el("a", "", String(i));
  a.title = where(i);
  a.addEventListener("click", () => { showTab("chat"); select(i, true); });
  return a;
}
// Charts are as wide as the page (their box, measured when the tab opens) and drawn at that
// size, so text stays 11px; axes carry round-numbered ticks with light grid lines.
function chartWidth(box) {
  return Math.max(420, Math.floor(box.getBoundingClientRect().width) || 760);
}
function ticks(top, most) {
  // Whole round steps (1, 2 or 5 × 10^k) from 0 to the first at or above top, at most about
  // `most` of them: every value charted is a count of messages, coins or checks.
  const raw = Math.max(top, 1) / Math.max(1, most);
  const power = Math.pow(10, Math.max(0, Math.floor(Math.log10(raw))));
  const step = [1, 2, 5, 10].map((f) => f * power).find((s) => s >= raw);
  const out = [];
  for (let n = 0; n <= Math.ceil(top / step); n++) out.push(n * step);
  return out;
}
function count(v) { return v.toLocaleString("en"); }
function drawWorth(box) {
  heading(box, "Coin worth per character");
  const series = D.charts.worth;
  if (!series.length) { box.appendChild(el("p", "empty", "Nobody held coins.")); return; }
  D.families.forEach((family, f) => {
    const mine = series.filter((s) => s.family === f);
    if (!mine.length) return;
    const W = chartWidth(box), H = 280, L = 64, T = 16, B = 40;
    const names = Math.max(...mine.map((s) => s.who.length));
    const R = Math.min(220, 34 + names * 7);
    const highest = Math.max(1, ...mine.flatMap((s) => s.points.map((p) => p[1])));
    const ys = ticks(highest, 5), top = ys[ys.length - 1];
    const xs = ticks(Math.max(1, N - 1), Math.max(2, Math.floor((W - L - R) / 90)))
      .filter((v) => v <= N - 1);
    const x = (i) => L + Math.max(0, i) / Math.max(1, N - 1) * (W - L - R);
    const y = (v) => T + (1 - v / top) * (H - T - B);
    const chart = svg("svg", {viewBox: "0 0 " + W + " " + H, width: W, height: H,
      role: "img", "aria-label": family.label + " worth per character, by message"});
    for (const v of ys) {
      chart.appendChild(svg("line", {x1: L, y1: y(v), x2: W - R, y2: y(v),
        stroke: v ? "#eaeef2" : "#999"}));
      chart.appendChild(svg("text", {x: L - 6, y: y(v) + 4, "text-anchor": "end"}, count(v)));
    }
    chart.appendChild(svg("line", {x1: L, y1: T, x2: L, y2: y(0), stroke: "#999"}));
    for (const v of xs) {
      chart.appendChild(svg("line", {x1: x(v), y1: y(0), x2: x(v), y2: y(0) + 4,
        stroke: "#999"}));
      chart.appendChild(svg("text", {x: x(v), y: y(0) + 16, "text-anchor": "middle"},
        count(v)));
    }
    chart.appendChild(svg("text", {x: (L + W - R) / 2, y: H - 6, "text-anchor": "middle",
      class: "axis-title"}, "message"));
    chart.appendChild(svg("text", {x: 14, y: (T + y(0)) / 2, "text-anchor": "middle",
      transform: "rotate(-90 14 " + (T + y(0)) / 2 + ")", class: "axis-title"},
      family.unit));
    mine.forEach((s, n) => {
      const color = COLORS[n % COLORS.length];
      let d = "M" + x(s.points[0][0]) + " " + y(s.points[0][1]);
      for (const [i, v] of s.points.slice(1)) d += " H" + x(i) + " V" + y(v);
      d += " H" + x(N - 1);
      const path = svg("path", {d: d, fill: "none", stroke: color, "stroke-width": 2});
      path.appendChild(svg("title", {}, s.who + ": " + family.label));
      chart.appendChild(path);
      chart.appendChild(svg("rect", {x: W - R + 12, y: T + n * 18, width: 10, height: 10,
        fill: color}));
      chart.appendChild(svg("text", {x: W - R + 26, y: T + n * 18 + 9}, s.who));
    });
    box.appendChild(el("h3", "", family.label + " (in " + family.unit + ")"));
    box.appendChild(chart);
  });
}
function bars(box, rows, colors, labels) {
  const W = chartWidth(box), ROW = 22, T = 4, B = 34;
  const L = Math.min(260, 16 + Math.max(...rows.map((r) => r[0].length)) * 7), R = 200;
  const H = T + rows.length * ROW + B;
  const highest = Math.max(1, ...rows.map((r) => r[1].reduce((a, b) => a + b, 0)));
  const xs = ticks(highest, Math.max(2, Math.floor((W - L - R) / 80))), top = xs[xs.length - 1];
  const x = (v) => L + v / top * (W - L - R), bottom = T + rows.length * ROW;
  const chart = svg("svg", {viewBox: "0 0 " + W + " " + H, width: W, height: H, role: "img"});
  for (const v of xs) {
    chart.appendChild(svg("line", {x1: x(v), y1: T, x2: x(v), y2: bottom,
      stroke: v ? "#eaeef2" : "#999"}));
    chart.appendChild(svg("text", {x: x(v), y: bottom + 14, "text-anchor": "middle"}, count(v)));
  }
  chart.appendChild(svg("text", {x: (L + W - R) / 2, y: H - 4, "text-anchor": "middle",
    class: "axis-title"}, labels.length > 1 ? "checks" : labels[0]));
  rows.forEach(([name, parts], n) => {
    const y = T + n * ROW;
    chart.appendChild(svg("text", {x: L - 6, y: y + 14, "text-anchor": "end"}, name));
    let at = L;
    parts.forEach((v, p) => {
      if (!v) return;
      const w = v / top * (W - L - R);
      const rect = svg("rect", {x: at, y: y + 2, width: Math.max(1, w), height: ROW - 6,
        fill: colors[p]});
      rect.appendChild(svg("title", {}, name + ": " + v + " " + labels[p]));
      chart.appendChild(rect);
      at += w;
    });
    chart.appendChild(svg("text", {x: at + 4, y: y + 14},
      parts.map((v, p) => v ? v + " " + labels[p] : "").filter(Boolean).join(", ")));
  });
  return chart;
}
function drawChecks(box) {
  heading(box, "Check outcomes by skill");
  const checks = D.charts.checks;
  if (!checks.length) { box.appendChild(el("p", "empty", "No checks were answered.")); return; }
  const by = new Map();
  for (const c of checks) {
    const row = by.get(c.skill) || [0, 0, 0];
    row[c.success === true ? 0 : c.success === false ? 1 : 2] += 1;
    by.set(c.skill, row);
  }
  const rows = [...by.entries()].sort((a, b) => a[0] < b[0] ? -1 : 1);
  box.appendChild(bars(box, rows, ["#1a7f37", "#cf222e", "#8c959f"],
    ["success", "failure", "no result"]));
  const more = el("details");
  more.appendChild(el("summary", "", checks.length === 1 ? "The dice of the one check"
    : "The dice of all " + checks.length + " checks"));
  more.addEventListener("toggle", () => {
    if (more.dataset.filled) return;
    more.dataset.filled = "1";
    const table = el("table"), head = el("tr");
    for (const h of ["message", "who", "skill", "dice", "total", "dc", "result"]) {
      head.appendChild(el("th", "", h));
    }
    table.appendChild(head);
    for (const c of checks) {
      const tr = el("tr"), cell = el("td");
      cell.appendChild(jumpLink(c.m));
      const result = c.outcome || (c.success === true ? "success"
        : c.success === false ? "failure" : "—");
      tr.append(cell, el("td", "", c.who), el("td", "", c.skill),
        el("td", "", JSON.stringify(c.rolls)), el("td", "", c.total ?? "—"),
        el("td", "", c.dc ?? "—"), el("td", "", result));
      tr.title = c.x;
      table.appendChild(tr);
    }
    more.appendChild(table);
  });
  box.appendChild(more);
}
function drawLoot(box) {
  heading(box, "Loot drops by table");
  if (!D.charts.loot.length) { box.appendChild(el("p", "empty", "No loot was rolled.")); return; }
  for (const t of D.charts.loot) {
    box.appendChild(el("h3", "", t.table + " — rolled " + plural(t.rolls, "time")));
    if (!t.drops.length) { box.appendChild(el("p", "empty", "Nothing dropped.")); continue; }
    box.appendChild(bars(box, t.drops.map(([name, n]) => [name, [n]]), ["#8250df"],
      ["dropped"]));
  }
}
// Fights: per round the order, each attack's dice against the defence and the hit points
// after it (one fold-out per fight, filled when opened: a long fight has many rounds).
function signed(n) { return n < 0 ? "− " + -n : "+ " + n; }
function fightRound(r) {
  const box = el("div", "round");
  box.dataset.round = r.round;
  const head = el("h4", "", "Round " + r.round + " · message ");
  head.appendChild(jumpLink(r.m));
  box.appendChild(head);
  box.appendChild(el("p", "order", "Order: " + r.order.map(([name, , init]) =>
    name + " " + init).join(", ")));
  const table = el("table"), top = el("tr");
  for (const h of ["attack", "weapon", "dice", "modifier", "total", "defence", "result",
    "damage dice", "damage", "hp after"]) top.appendChild(el("th", "", h));
  table.appendChild(top);
  for (const a of r.attacks) {
    const tr = el("tr", a.why ? "refused" : a.result);
    tr.title = a.x;
    tr.appendChild(el("td", "", a.who + " → " + a.target));
    if (a.why) {
      const cell = el("td", "reason", a.why);
      cell.colSpan = 9;
      tr.appendChild(cell);
    } else {
      const dice = (a.dice || []).map((t) => "(" + t.join("+") + ")").join(" + ");
      tr.append(el("td", "", a.weapon), el("td", "", (a.rolls || []).join(", ")),
        el("td", "", signed(a.mod)), el("td", "", a.total), el("td", "", a.def),
        el("td", "result", a.result), el("td", "", dice || "—"), el("td", "", a.dmg),
        el("td", "", a.hp + "/" + a.hpMax));
    }
    table.appendChild(tr);
  }
  box.appendChild(table);
  box.appendChild(el("p", "hp", "Hit points after: " + r.hp.map(([name, now, most]) =>
    name + " " + (now === null || now === undefined ? "?" : now + "/" + most)).join(" · ")));
  return box;
}
function drawFights(box) {
  heading(box, "Fights");
  const fights = D.charts.fights || [];
  if (!fights.length) { box.appendChild(el("p", "empty", "No fight was fought.")); return; }
  fights.forEach((f, n) => {
    const more = el("details", "fight");
    more.dataset.fight = n;
    more.appendChild(el("summary", "", "Fight " + (n + 1) + ": from "
      + (f.start < 0 ? "before the chat" : where(f.start))
      + (f.end !== null ? " to " + where(f.end) + ", " + f.outcome : ", still on")
      + " · " + plural(f.rounds.length, "round")));
    more.addEventListener("toggle", () => {
      if (more.dataset.filled) return;
      more.dataset.filled = "1";
      const frag = document.createDocumentFragment();
      for (const r of f.rounds) frag.appendChild(fightRound(r));
      if (!f.rounds.length) frag.appendChild(el("p", "empty", "No attack was answered."));
      more.appendChild(frag);
    });
    box.appendChild(more);
  });
}
function showTab(name) {
  $("view-chat").hidden = name !== "chat";
  $("view-charts").hidden = name !== "charts";
  $("tab-chat").classList.toggle("active", name === "chat");
  $("tab-charts").classList.toggle("active", name === "charts");
  if (name === "charts" && !drawn) {
    drawn = true;
    drawWorth($("chart-worth"));
    drawChecks($("chart-checks"));
    drawLoot($("chart-loot"));
    drawFights($("chart-fights"));
  }
}

$("subtitle").textContent = D.ruleset + " · " + N + " messages · "
  + M.filter((m) => m.r === "gm" && !m.h).length + " visible GM replies";
$("tab-chat").addEventListener("click", () => showTab("chat"));
$("tab-charts").addEventListener("click", () => showTab("charts"));
$("messages").addEventListener("click", (event) => {
  if (event.target.closest("summary, details pre, a, input, button")) return;
  const box = event.target.closest(".msg");
  if (box) select(Number(box.dataset.index), false);
});
const wanted = /^#m(\d+)$/.exec(location.hash);
const first = wanted && Number(wanted[1]) < N ? Number(wanted[1]) : -1;
showPage(first >= 0 ? Math.floor(first / PAGE) : 0);
if (first >= 0) select(first, true); else renderState(-1);
document.body.dataset.ready = "1";
performance.mark("report-ready");
requestAnimationFrame(() => setTimeout(() => performance.mark("report-painted"), 0));
})();

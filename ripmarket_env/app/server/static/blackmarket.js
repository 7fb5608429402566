// Black Market: play against the bots. Plain JavaScript, no build step.
// Talks to /api/black-market/games (ripmarket_env/app/server/app.py, the routes every game has). The seat token
// goes in the X-Seat-Token header (never in a URL); an action names the decision_number it
// answers. The current game's id and token sit in sessionStorage, so a reload resumes it.
"use strict";

const STORE = "blackmarket.game";
const SPEED = "blackmarket.speed";
const HAND_TEXT = {
  red: "Three Red buy a Red Point Card (or a Dual one). Two Red pay a flip or a rotation when you hold no Flip card.",
  black: "Three Black buy a Black Point Card (or a Dual one). Two Black pay a flip or a rotation when you hold no Flip card.",
  flip: "Pays one flip or rotation of a map card.",
};

const $ = (id) => document.getElementById(id);
let bots = [];
let game = null; // {id, token}
let view = null;
let busy = false;
let log = [];
let recordUrl = null;

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "class") node.className = v;
    else if (k === "text") node.textContent = v;
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else if (k === "dataset") Object.assign(node.dataset, v);
    else node.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat()) {
    if (c !== null && c !== undefined && c !== false) node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return node;
}

function levelClass(level) {
  const word = (level || "").split(":")[0].toLowerCase();
  return `level lv-${word}`;
}

function setStatus(s) { document.body.dataset.status = s; }
function setBusy(b) { busy = b; document.body.classList.toggle("busy", b); }
function sleep(ms) { return new Promise((r) => setTimeout(r, ms)); }
function speed() { return Number(localStorage.getItem(SPEED) ?? 800); }

function showError(msg) {
  const e = $("error");
  e.textContent = msg || "";
  e.hidden = !msg;
}

async function call(method, url, body) {
  const headers = { "Content-Type": "application/json" };
  if (game && game.token) headers["X-Seat-Token"] = game.token;
  const r = await fetch(url, { method, headers, body: body ? JSON.stringify(body) : undefined });
  const j = await r.json().catch(() => ({}));
  if (!r.ok) {
    const err = new Error(j.detail || `HTTP ${r.status}`);
    err.status = r.status;
    throw err;
  }
  return j;
}

// ------------------------------------------------------------------ card text: hover and tap
function tip(node, name, text, meta) {
  node.classList.add("has-tip");
  node.dataset.tipName = name;
  node.dataset.tipText = text;
  if (meta) node.dataset.tipMeta = meta;
  return node;
}

function showTip(holder) {
  const t = $("tip");
  t.replaceChildren(
    el("div", { class: "tip-name", text: holder.dataset.tipName }),
    el("div", { class: "tip-text", text: holder.dataset.tipText }),
    holder.dataset.tipMeta ? el("div", { class: "tip-meta", text: holder.dataset.tipMeta }) : null);
  t.hidden = false;
  const r = holder.getBoundingClientRect();
  const w = Math.min(280, window.innerWidth - 16);
  t.style.width = `${w}px`;
  t.style.left = `${Math.max(8, Math.min(window.innerWidth - w - 8, r.left + r.width / 2 - w / 2))}px`;
  const h = t.offsetHeight;
  let top = r.top - h - 8;
  if (top < 8) top = Math.min(window.innerHeight - h - 8, r.bottom + 8);
  t.style.top = `${Math.max(8, top)}px`;
}

function hideTip() { $("tip").hidden = true; }

function wireTips() {
  document.addEventListener("pointerover", (ev) => {
    const h = ev.target.closest(".has-tip");
    if (ev.pointerType === "mouse" && h) showTip(h);
  });
  document.addEventListener("pointerout", (ev) => {
    if (ev.pointerType === "mouse" && ev.target.closest(".has-tip") && !ev.relatedTarget?.closest?.(".has-tip")) hideTip();
  });
  document.addEventListener("click", (ev) => {  // a tap (or a click) on a card shows its text too
    const h = ev.target.closest(".has-tip");
    if (h) showTip(h);
    else if (!ev.target.closest("#tip")) hideTip();
  });
  window.addEventListener("scroll", hideTip, { passive: true });
}

function pointCardTip(node, card, extra) {
  const what = card.effect || card.text || `No effect: worth ${card.points} point${card.points === 1 ? "" : "s"}.`;
  const meta = [`${card.colour[0].toUpperCase()}${card.colour.slice(1)}`, `${card.points} pt`, extra].filter(Boolean).join(" · ");
  return tip(node, card.name, what, meta);
}

// ------------------------------------------------------------------ setup
function seatLabel(q, you, players, mode) {
  const side = "AB"[q % 2];
  if (q === you) return `player ${q} (side ${side}): you`;
  const mate = mode === "teams" && q % 2 === you % 2 ? ", your teammate" : "";
  return `player ${q} (side ${side}${mate})`;
}

function buildSetup() {
  const players = Number($("players").value);
  const seatSel = $("seat");
  const keep = Math.min(Number(seatSel.value || 0), players - 1);
  seatSel.replaceChildren(...Array.from({ length: players }, (_, q) =>
    el("option", { value: q, text: `player ${q} (side ${"AB"[q % 2]})` })));
  seatSel.value = String(keep);
  const you = keep;
  const mode = $("mode").value;
  const defaults = ["bm-builder", "bm-denier", "bm-rusher"];
  const box = $("opponents");
  const old = [...box.querySelectorAll("select")].map((s) => s.value);
  box.replaceChildren();
  let k = 0;
  for (let q = 0; q < players; q++) {
    if (q === you) {
      box.append(el("div", { class: "opp you" }, el("span", { class: "you-tag", text: seatLabel(q, you, players, mode) })));
      continue;
    }
    const sel = el("select", { "aria-label": `bot for player ${q}`, dataset: { seat: q } },
      bots.map((b) => el("option", { value: b.name, text: `${b.name} (${b.level})` })));
    sel.value = old[k] || defaults[k % defaults.length];
    box.append(el("label", { class: "opp" }, seatLabel(q, you, players, mode), sel));
    k += 1;
  }
}

async function startGame(ev) {
  ev.preventDefault();
  showError("");
  const opponents = [...$("opponents").querySelectorAll("select")].map((s) => s.value);
  const body = { players: Number($("players").value), seat: Number($("seat").value), rules: { mode: $("mode").value }, opponents };
  const seed = $("seed").value.trim();
  if (seed !== "") body.seed = Number(seed);
  $("start").disabled = true;
  const started = performance.now();
  $("loading").hidden = false;
  $("loading-text").textContent = "Dealing the cards…";
  $("loading-detail").textContent = "";
  setStatus("loading");
  let polling = true;
  (async () => {  // what the server loads while the game is set up
    try {
      const st = await fetch(`/api/black-market/status?bots=${encodeURIComponent(opponents.join(","))}`).then((r) => r.json());
      while (polling && st.stage) {
        $("loading-text").textContent = st.stage;
        $("loading-detail").textContent = `${((performance.now() - started) / 1000).toFixed(0)} s so far`;
        $("status").textContent = st.stage;
        await sleep(500);
      }
    } catch (e) { /* the game's own answer reports any failure */ }
  })();
  try {
    game = null;
    const v = await call("POST", "/api/black-market/games", body);
    game = { id: v.game_id, token: v.seat_token };
    sessionStorage.setItem(STORE, JSON.stringify(game));
    log = [];
    polling = false;
    $("loading").hidden = true;
    $("status").textContent = "";
    await show(v);
  } catch (e) {
    polling = false;
    $("loading").hidden = true;
    showError(e.message);
    setStatus("setup");
  } finally {
    $("start").disabled = false;
  }
}

// ------------------------------------------------------------------ rendering
function seatNode(v, s) {
  const cls = ["bm-seat"];
  if (s.is_you) cls.push("you");
  if (s.deciding) cls.push("deciding");
  const owned = s.owned.map((c) => pointCardTip(el("span", {
    class: `bm-chip bm-card-chip ${c.spent ? "spent" : ""}`,
    style: `background:${c.colour === "red" ? "#b83232" : c.colour === "black" ? "#34343c" : "#6d3f9a"}`,
    text: `${c.name}${c.count > 1 ? " ×" + c.count : ""}`,
  }), c, c.spent ? "spent (its effect is used up)" : "owned"));
  return el("div", { class: cls.join(" "), dataset: { seat: s.seat } },
    el("div", { class: "bm-seat-head" },
      el("span", { class: "side-tag", text: s.side }),
      el("span", { class: "bm-seat-name", text: s.name }),
      el("span", { class: "bm-seat-bot", text: s.is_you ? "you" : s.controller }),
      s.is_you ? null : el("span", { class: levelClass(s.level), title: s.level, text: s.level.split(":")[0] })),
    el("div", { class: "bm-seat-stats" },
      el("span", {}, el("b", { text: s.points }), " pt"),
      el("span", { class: "bm-hand-size" }, el("b", { text: s.hand_count }), " in hand"),
      s.turn_player ? el("span", { class: "bm-turn", text: "● their turn" }) : null),
    owned.length ? el("div", { class: "bm-owned" }, owned) : null);
}

function mapSlot(v, m, hot) {
  const far = m.faces !== v.your_side;
  const arrow = (pos) => el("div", {
    class: `bm-arrow${m.faces_you ? " mine" : ""}`,
    text: m.empty || pos !== (far ? "top" : "bottom") ? "" : far ? "▲" : "▼",
  });
  let card;
  if (m.empty) card = el("div", { class: "bm-card empty", text: "empty" });
  else if (!m.card) {
    card = tip(el("div", { class: "bm-card unseen", text: "?" }), "Unseen card",
      "A face-down card nobody has seen yet.", `faces side ${m.faces}${m.faces_you ? " (yours)" : ""}`);
  } else {
    const c = m.card;
    card = pointCardTip(el("div", { class: `bm-card ${c.colour}${m.face_down ? " down" : ""}` },
      el("span", { class: "bm-colour", text: c.colour }),
      el("span", { class: "bm-points", text: c.points }),
      el("span", { class: "bm-name", text: c.name }),
      c.effect ? el("span", { class: "bm-star", text: "★" }) : el("span", { class: "bm-star", text: "" })),
    c, `${m.face_down ? "face-down" : "face-up"} · faces side ${m.faces}${m.faces_you ? " (yours)" : " (the other side)"}`);
  }
  return el("div", { class: `bm-slot${hot.has(m.slot) ? " hot" : ""}`, dataset: { slot: m.slot } },
    el("div", { class: "bm-slot-no", text: `slot ${m.slot}` }), arrow("top"), card, arrow("bottom"));
}

const PIPS = { 1: [4], 2: [0, 8], 3: [0, 4, 8], 4: [0, 2, 6, 8], 5: [0, 2, 4, 6, 8], 6: [0, 2, 3, 5, 6, 8] };
function die(d) {
  const cells = Array.from({ length: 9 }, (_, i) => el("span", { class: PIPS[d.value].includes(i) ? "pip-dot" : "" }));
  return el("div", { class: `die${d.used ? " used" : ""}`, role: "img",
    "aria-label": `die showing ${d.value}${d.used ? ", used" : ""}`, title: `${d.value}${d.used ? " (used)" : ""}` }, cells);
}

function handNode(v) {
  const kinds = [["red", "Red"], ["black", "Black"], ["flip", "Flip"]];
  const total = kinds.reduce((n, [k]) => n + v.hand[k], 0);
  return [
    ...kinds.map(([k, name]) => tip(el("div", { class: `bm-hand-card ${k}${v.hand[k] ? "" : " none"}`, dataset: { kind: k } },
      el("span", { class: "bm-hand-name", text: name }),
      el("span", { class: "bm-hand-count", text: `×${v.hand[k]}` })), `${name} Hand Card`, HAND_TEXT[k], `you hold ${v.hand[k]}`)),
    el("span", { class: "bm-hand-total", text: `${total} cards · you ${v.seats[v.seat].points} pt · side ${v.your_side} ${v.sides[v.your_side]} pt` }),
  ];
}

function render(v, interactive) {
  view = v;
  document.body.dataset.decision = String(v.decision_number);
  $("setup").hidden = true;
  $("game").hidden = false;
  $("new-game").hidden = false;
  const near = v.seats.filter((s) => s.side === v.your_side);
  const far = v.seats.filter((s) => s.side !== v.your_side);
  $("seats-near").replaceChildren(...near.map((s) => seatNode(v, s)));
  $("seats-far").replaceChildren(...far.map((s) => seatNode(v, s)));
  const hot = new Set();
  $("map").replaceChildren(...v.map.map((m) => mapSlot(v, m, hot)));
  const owner = v.seats[v.dice_of];
  $("dice").replaceChildren(...[
    v.dice.length && owner ? el("span", { class: "bm-dice-who", text: owner.is_you ? "your dice" : `${owner.name}'s dice` }) : null,
    ...v.dice.map(die)].filter(Boolean));
  const target = v.mode === "teams" ? `first side to ${v.target}` : `first player to ${v.target}`;
  $("decks").replaceChildren(
    el("span", { class: "bm-score", text: `Side A ${v.sides.A} pt · Side B ${v.sides.B} pt` }),
    el("span", { text: `${target} · turn ${v.turn}` }),
    el("span", { text: `Point deck ${v.decks.point} · Hand deck ${v.decks.hand} · discard ${v.decks.discard}` }));
  $("hand").replaceChildren(...handNode(v));
  const p = $("prompt");
  p.className = `prompt ${v.over ? "over" : interactive && v.your_turn ? "your_turn" : ""}`;
  p.textContent = v.over ? `Game over: ${v.result.end}` : interactive ? v.prompt : "The bots are playing…";
  const box = $("choices");
  box.replaceChildren(...(interactive ? v.choices : []).map((c) => el("button", {
    type: "button", class: "choice", dataset: { action: c.action, slot: c.slot ?? "" },
    onclick: () => answer(c.action),
    onmouseenter: () => highlight(c.slot), onmouseleave: () => highlight(null),
  }, el("span", { class: "num", text: c.number <= 9 ? c.number : "·" }), el("span", { text: c.text }))));
  const dock = document.querySelector(".bm-dock");
  if (dock) document.documentElement.style.setProperty("--dock-h", `${dock.offsetHeight + 12}px`);
}

function highlight(slot) {
  document.querySelectorAll(".bm-slot").forEach((n) => n.classList.toggle("hot", slot !== null && Number(n.dataset.slot) === slot));
}

function addLog(moves) {
  const ol = $("log");
  for (const m of moves) {
    const head = m.seat >= 0 ? `${m.who}: ${m.action}` : null;
    const li = el("li", { class: `log-entry${m.who === "you" ? " mine" : ""}` },
      head ? el("b", { text: head }) : null, m.events.length ? el("div", { text: m.events.join(" · ") }) : null);
    ol.append(li);
    log.push(m);
  }
  while (ol.children.length > 200) ol.firstChild.remove();
  const box = ol.closest(".bm-side");  // the log scrolls in its own panel, never the page
  if (box) box.scrollTop = box.scrollHeight;
}

// The bots' moves, one at a time, each with a short result line.
async function playBack(v) {
  const moves = v.recent.filter((m) => m.seat >= 0 && m.seat !== v.seat);
  const banner = $("banner");
  for (const m of moves) {
    const wait = speed();
    if (wait <= 0) break;
    const result = m.events.filter((t) => !/^turn \d+:/.test(t)).slice(0, 3).join(" · ");
    banner.className = "banner move";
    banner.replaceChildren(el("div", {},
      el("div", { class: "banner-move", text: `${m.who}: ${m.action}` }),
      result ? el("div", { class: "banner-result", text: result }) : null));
    banner.hidden = false;
    await sleep(wait);
  }
  banner.hidden = true;
}

async function show(v) {
  setBusy(true);
  setStatus("animating");
  render(v, false);
  addLog(v.recent);
  await playBack(v);
  render(v, true);
  setBusy(false);
  if (v.over) await showResult(v);
  setStatus(v.over ? "over" : "your_turn");
  document.activeElement?.blur?.();
}

async function answer(action) {
  if (busy || !view || view.over) return;
  setBusy(true);
  document.querySelectorAll("#choices button").forEach((b) => { b.disabled = true; });
  hideTip();
  try {
    const v = await call("POST", `/api/black-market/games/${game.id}/actions`, { action, decision_number: view.decision_number });
    await show(v);
  } catch (e) {
    showError(e.message);
    setBusy(false);
    document.querySelectorAll("#choices button").forEach((b) => { b.disabled = false; });
  }
}

async function showResult(v) {
  const r = v.result;
  const mine = r.standings.find((s) => s.seat === v.seat);
  const title = r.you_won ? (v.mode === "teams" ? "Your side wins!" : "You win!")
    : (v.mode === "teams" ? "Your side loses" : `You finish ${ordinal(mine.place)}`);
  if (recordUrl) URL.revokeObjectURL(recordUrl);
  recordUrl = null;
  try {
    const r2 = await fetch(`/api/black-market/games/${game.id}/record`, { headers: { "X-Seat-Token": game.token } });
    if (r2.ok) recordUrl = URL.createObjectURL(await r2.blob());
  } catch (e) { /* the end screen works without the record */ }
  const rows = r.standings.map((s) => el("tr", { class: `${s.winner ? "winner" : ""}${s.seat === v.seat ? " mine" : ""}` },
    el("td", { class: "place", text: ordinal(s.place) }),
    el("td", { text: s.seat === v.seat ? `${s.name} (you)` : s.name }),
    el("td", {}, s.seat === v.seat ? "you" : s.controller, s.level ? el("span", { class: levelClass(s.level), text: s.level.split(":")[0] }) : null),
    el("td", { text: s.side }),
    el("td", { class: "num", text: `${s.points} pt` })));
  const box = $("result");
  box.className = `result-overlay${r.you_won ? "" : " lost"}`;
  box.replaceChildren(el("div", { class: "result-card" },
    el("h2", { id: "result-title", text: title }),
    el("p", { class: "result-sub", text: `Game over after ${r.turns} turns: ${r.end}. Side A ${r.sides.A} pt, side B ${r.sides.B} pt.` }),
    el("table", { class: "standings" },
      el("thead", {}, el("tr", {}, ["Place", "Player", "Played by", "Side", "Points"].map((h) => el("th", { text: h })))),
      el("tbody", {}, rows)),
    el("div", { class: "result-actions" },
      el("button", { type: "button", class: "primary", text: "New game", onclick: newGame }),
      recordUrl ? el("a", { class: "button", href: recordUrl, download: `black-market-${game.id}.jsonl`, text: "Download the record" }) : null,
      el("button", { type: "button", class: "ghost-button", text: "See the table", onclick: () => { box.hidden = true; } }))));
  box.hidden = false;
}

function ordinal(n) { return `${n}${n === 1 ? "st" : n === 2 ? "nd" : n === 3 ? "rd" : "th"}`; }

function newGame() {
  sessionStorage.removeItem(STORE);
  game = null;
  view = null;
  $("result").hidden = true;
  $("game").hidden = true;
  $("setup").hidden = false;
  $("new-game").hidden = true;
  $("log").replaceChildren();
  setStatus("setup");
}

// ------------------------------------------------------------------ start
async function boot() {
  wireTips();
  const sp = $("speed");
  sp.value = String(speed());
  sp.addEventListener("change", () => localStorage.setItem(SPEED, sp.value));
  $("players").addEventListener("change", buildSetup);
  $("seat").addEventListener("change", buildSetup);
  $("mode").addEventListener("change", buildSetup);
  $("setup-form").addEventListener("submit", startGame);
  $("new-game").addEventListener("click", newGame);
  document.addEventListener("keydown", (ev) => {
    if (ev.key === "Escape") { hideTip(); $("banner").hidden = true; return; }
    if (!view || view.over || busy || !/^[1-9]$/.test(ev.key) || ev.target.closest?.("input, select")) return;
    const c = view.choices[Number(ev.key) - 1];
    if (c) { ev.preventDefault(); answer(c.action); }
  });
  try {
    bots = (await call("GET", "/api/black-market/bots")).bots;
  } catch (e) {
    showError(`the bots could not be listed: ${e.message}`);
  }
  buildSetup();
  const saved = sessionStorage.getItem(STORE);
  if (saved) {
    try {
      game = JSON.parse(saved);
      await show(await call("GET", `/api/black-market/games/${game.id}`));
      return;
    } catch (e) {
      sessionStorage.removeItem(STORE);
      game = null;
    }
  }
  setStatus("setup");
}

boot();

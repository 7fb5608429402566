// The generic page: any registered game against the bots, drawn from the game's table
// description (ripmarket_env/core/table.py) that GET /api/{game}/games/{id} returns under
// "table". The game id is the page's path (/toy); the seat token is kept in sessionStorage
// (per tab), so a reload resumes the same game.
//
// A game's own drawing: its plugin (GameSpec.web, games/<pkg>/web/table.js, served at
// /plugins/{game}.js and loaded before the first draw) registers hooks with
//   RipmarketTable.register(gameId, {seat(box, seat, view), zone(panel, zone, view),
//     card(el, card, view, where), choice(button, choice, view), move(li, line, view),
//     render(root, view), css: "..."})
// Each hook is called after the generic page has drawn that piece and may add to it or
// redraw it; `where` is "table" or "hand"; `render` runs last with the page's root. A hook
// that throws is logged and the generic drawing stays.
window.RipmarketTable = window.RipmarketTable || {
  plugins: {},
  register(gameId, hooks) { this.plugins[gameId] = hooks || {}; },
};
(() => {
  "use strict";
  const game = decodeURIComponent(location.pathname.split("/").filter(Boolean)[0] || "");
  const api = `/api/${encodeURIComponent(game)}`;
  const KEY = `ripmarket.generic.${game}`;
  const $ = (id) => document.getElementById(id);
  let view = null;
  let busy = false;

  function plugin() { return window.RipmarketTable.plugins[game] || {}; }

  function hook(name, ...args) {
    const fn = plugin()[name];
    if (typeof fn !== "function") return;
    try { fn(...args); } catch (e) { console.error(`the ${game} table plugin's ${name} hook failed`, e); }
  }

  function loadPlugin() {
    return new Promise((done) => {
      const s = document.createElement("script");
      s.src = `/plugins/${encodeURIComponent(game)}.js`;
      s.onload = s.onerror = () => {
        const css = plugin().css;
        if (css) { const st = document.createElement("style"); st.textContent = css; document.head.append(st); }
        done();
      };
      document.head.append(s);
    });
  }

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }

  function saved() {
    try { return JSON.parse(sessionStorage.getItem(KEY) || "null"); } catch (e) { return null; }
  }

  function setStatus(status, text) {
    document.body.dataset.status = status;
    $("status").textContent = text || "";
  }

  function showError(text) {
    $("error").textContent = text || "";
    $("error").hidden = !text;
  }

  async function call(method, path, body) {
    const s = saved();
    const headers = {};
    if (s && s.token) headers["X-Seat-Token"] = s.token;
    if (body !== undefined) headers["Content-Type"] = "application/json";
    const r = await fetch(api + path, {method, headers, body: body === undefined ? undefined : JSON.stringify(body)});
    let data = null;
    if (r.status !== 204) { try { data = await r.json(); } catch (e) { data = null; } }
    return {ok: r.ok, status: r.status, data};
  }

  function setBusy(b) {
    busy = b;
    document.body.classList.toggle("busy", b);
    $("rematch").disabled = b;
    $("new-game").disabled = b;
  }

  async function newGame() {
    if (busy) return;
    setBusy(true);
    showError("");
    setStatus("loading", "Starting a game...");
    try {
      const s = saved();
      if (s && s.id) await call("DELETE", `/games/${encodeURIComponent(s.id)}`);  // end the previous game
      sessionStorage.removeItem(KEY);
      const r = await call("POST", "/games", {});
      if (!r.ok) { setStatus("error", ""); showError((r.data && r.data.detail) || `could not start a game (${r.status})`); return; }
      sessionStorage.setItem(KEY, JSON.stringify({id: r.data.game_id, token: r.data.seat_token}));
      render(r.data);
    } catch (e) {
      setStatus("error", ""); showError(`the server did not answer: ${e}`);
    } finally { setBusy(false); }
  }

  async function resume() {
    const s = saved();
    if (!s || !s.id) return newGame();
    setBusy(true);
    try {
      const r = await call("GET", `/games/${encodeURIComponent(s.id)}`);
      if (r.ok) { render(r.data); return; }
      sessionStorage.removeItem(KEY);  // gone, expired or not ours: start afresh
    } catch (e) {
      setStatus("error", ""); showError(`the server did not answer: ${e}`); return;
    } finally { setBusy(false); }
    return newGame();
  }

  async function act(action) {
    if (busy || !view || !view.your_turn) return;
    const s = saved();
    setBusy(true);
    showError("");
    try {
      const r = await call("POST", `/games/${encodeURIComponent(s.id)}/actions`,
                           {action, decision_number: view.decision_number});
      if (r.ok) { render(r.data); return; }
      showError((r.data && r.data.detail) || `the action was refused (${r.status})`);
      const again = await call("GET", `/games/${encodeURIComponent(s.id)}`);
      if (again.ok) render(again.data);
    } catch (e) {
      showError(`the server did not answer: ${e}`);
    } finally { setBusy(false); }
  }

  function seatLabel(v, q) {
    if (q === v.seat) return "you";
    const bot = (v.controllers || [])[q] || "";
    const level = (v.levels || [])[q] || "";
    return level ? `${bot}, ${level}` : bot;
  }

  function render(v) {
    view = v;
    document.body.dataset.gameId = v.game_id;
    document.body.dataset.decision = v.decision_number;
    const t = v.table || {};
    document.title = `${t.title || game} - play against the bots`;
    $("title").textContent = t.title || game;

    const seats = $("seats");
    seats.replaceChildren();
    for (const s of t.seats || []) {
      const box = el("div", "gseat" + (s.deciding ? " deciding" : "") + (s.you ? " you" : ""));
      box.dataset.seat = s.seat;
      box.append(el("div", "gname", `${s.name} (${seatLabel(v, s.seat)})${s.deciding ? " - deciding" : ""}`));
      const counters = el("div", "counters");
      for (const [k, val] of Object.entries(s.counters || {})) counters.append(el("span", "", `${k}: ${val}`));
      box.append(counters);
      if ((s.flags || []).length) box.append(el("div", "flags", s.flags.join(", ")));
      hook("seat", box, s, v);
      seats.append(box);
    }

    const zones = $("zones");
    zones.replaceChildren();
    for (const z of t.table || []) {
      const p = el("div", "panel zone");
      p.append(el("h2", "", z.name));
      const cards = el("div", "cards");
      for (const c of z.cards || []) {
        const card = el("span", "gcard", (c.slot !== null && c.slot !== undefined ? `${c.slot}. ` : "") + c.text);
        hook("card", card, c, v, "table");
        cards.append(card);
      }
      if (!(z.cards || []).length) cards.append(el("span", "muted", "none"));
      p.append(cards);
      hook("zone", p, z, v);
      zones.append(p);
    }

    $("info").replaceChildren(...(t.info || []).map((line) => el("li", "", line)));
    $("info-panel").hidden = !(t.info || []).length;

    const hand = $("hand");
    hand.replaceChildren();
    for (const c of t.hand || []) {
      const card = el("span", "gcard");
      if (c.count > 1) card.append(el("span", "count", `${c.count}x`));
      card.append(document.createTextNode(c.name + (c.text && c.text !== c.name ? `: ${c.text}` : "")));
      if (c.zone && c.zone !== "hand") card.append(el("span", "zone-tag", c.zone));
      hook("card", card, c, v, "hand");
      hand.append(card);
    }
    $("hand-panel").hidden = !(t.hand || []).length;  // a game that describes no hand shows none

    const moves = $("moves");
    moves.replaceChildren();
    for (const m of v.recent || []) {
      const li = el("li", m.seat === v.seat ? "mine" : "", `${m.who}: ${m.text}`);
      hook("move", li, m, v);
      moves.append(li);
    }
    if (!(v.recent || []).length) moves.append(el("li", "muted", "nothing yet"));

    const choices = $("choices");
    choices.replaceChildren();
    const mine = v.your_turn ? (t.choices || []) : [];
    mine.forEach((c, i) => {
      const b = el("button", "gchoice");
      b.type = "button";
      b.dataset.action = c.action;
      b.append(el("span", "key", i < 9 ? String(i + 1) : ""), document.createTextNode(c.text));
      b.addEventListener("click", () => act(c.action));
      hook("choice", b, c, v);
      choices.append(b);
    });
    $("prompt").textContent = v.over ? "" : (v.your_turn ? (t.prompt || "Your decision") + " (keys 1-9)" : "The bots are playing...");
    $("ask").hidden = !!v.over;

    const end = $("end");
    end.hidden = !v.over;
    if (v.over && v.result) {
      const r = v.result;
      $("endline").textContent = (r.you_won ? "You won!" : "You lost.") + (r.end ? ` ${r.end}` : "");
      const rows = $("standings");
      rows.replaceChildren();
      for (const s of r.standings || []) {
        const tr = el("tr", s.winner ? "won" : "");
        tr.append(el("td", "", s.place_text || s.place), el("td", "", s.name), el("td", "", s.how || ""));
        rows.append(tr);
      }
    }
    const turn = t.turn !== null && t.turn !== undefined ? `${t.turn_word || "turn"} ${t.turn}` : "";
    setStatus(v.over ? "over" : (v.your_turn ? "your_turn" : "waiting"),
              [v.over ? "Game over" : (v.your_turn ? "Your decision" : "Bots to play"), turn,
               v.practice ? "practice" : ""].filter(Boolean).join(" - "));
    hook("render", $("game"), v);
  }

  document.addEventListener("keydown", (e) => {
    if (e.ctrlKey || e.metaKey || e.altKey || !view || !view.your_turn) return;
    if (!/^[1-9]$/.test(e.key)) return;
    const c = (view.table.choices || [])[Number(e.key) - 1];
    if (c) { e.preventDefault(); act(c.action); }
  });
  $("rematch").addEventListener("click", newGame);
  $("new-game").addEventListener("click", newGame);
  loadPlugin().then(resume);
})();

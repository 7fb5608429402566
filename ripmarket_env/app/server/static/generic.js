// The generic page: any registered game against the bots, drawn from the game's table
// description (ripmarket_env/core/table.py) that GET /api/{game}/games/{id} returns under
// "table". The game id is the page's path (/toy); the seat token is kept in sessionStorage
// (per tab), so a reload resumes the same game. A tab without a game shows the set-up screen
// (player count, your seat, a bot per other seat, the game's rule variants, a practice seed),
// built from GET /api/{game}/bots.
//
// A game's own drawing: its plugin (GameSpec.web, games/<pkg>/web/table.js, served at
// /plugins/{game}.js and loaded before the first draw) registers hooks with
//   RipmarketTable.register(gameId, {seat(box, seat, view), zone(panel, zone, view),
//     card(el, card, view, where), choice(button, choice, view), move(li, line, view),
//     render(root, view), css: "..."})
// Each hook is called after the generic page has drawn that piece and may add to it or
// redraw it; `where` is "table" or "hand"; `render` runs last with the page's root (#game).
// A hook that throws is logged and the generic drawing stays.
window.RipmarketTable = window.RipmarketTable || {
  plugins: {},
  register(gameId, hooks) { this.plugins[gameId] = hooks || {}; },
};
(() => {
  "use strict";
  const game = decodeURIComponent(location.pathname.split("/").filter(Boolean)[0] || "");
  const api = `/api/${encodeURIComponent(game)}`;
  const KEY = `ripmarket.generic.${game}`;        // {id, token} of this tab's game
  const SETTINGS = `${KEY}.settings`;             // the create body of this tab's last game (the rematch's)
  const KEYS = "1234567890abcdefghijklmnopqrstuvwxyz";  // the key of each choice, in order
  const $ = (id) => document.getElementById(id);
  let view = null;
  let busy = false;
  let options = null;     // GET /bots: the set-up screen's choices
  let serverPoll = null;

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

  function load(key) {
    try { return JSON.parse(sessionStorage.getItem(key) || "null"); } catch (e) { return null; }
  }
  const saved = () => load(KEY);

  function setStatus(status, text) {
    document.body.dataset.status = status;
    $("status").textContent = text || "";
  }

  function showError(text) {
    $("error").textContent = text || "";
    $("error").hidden = !text;
  }

  // The games this browser started, of every game (localStorage, shared by its tabs): a start
  // refused for too many live games (429) offers to end them, so a person who closed a tab
  // or lost its game is never locked out by their own games.
  const MINE = "ripmarket.my-games";
  function myGames() {
    try { return JSON.parse(localStorage.getItem(MINE) || "[]").filter((g) => g && g.id && g.game); } catch (e) { return []; }
  }
  function rememberGame(g) {
    try { localStorage.setItem(MINE, JSON.stringify([...myGames().filter((x) => x.id !== g.id), g].slice(-32))); } catch (e) { /* private mode */ }
  }
  function forgetGame(id) {
    try { localStorage.setItem(MINE, JSON.stringify(myGames().filter((x) => x.id !== id))); } catch (e) { /* private mode */ }
  }
  async function endMyGames() {
    for (const g of myGames()) {
      try {
        await fetch(`/api/${encodeURIComponent(g.game)}/games/${encodeURIComponent(g.id)}`,
                    {method: "DELETE", headers: {"X-Seat-Token": g.token}});
      } catch (e) { /* already gone */ }
      forgetGame(g.id);
    }
  }
  function offerEndGames(body) {
    const button = el("button", "primary", "End my previous games and start");
    button.type = "button";
    button.id = "end-previous";
    button.addEventListener("click", async () => {
      button.disabled = true;
      await endMyGames();
      startGame(body);
    });
    $("error").append(" ", button);
  }

  function detail(r, what) {
    return (r.data && r.data.detail) || `${what} (HTTP ${r.status})`;
  }

  // A request that got no answer at all (the server stopped, the network dropped), in a
  // player's words; what the browser said goes to the console.
  function unreachable(e, doing) {
    console.warn(`no answer from the server while ${doing}`, e);
    return `Cannot reach the server while ${doing}: it may have stopped, or the connection dropped. ` +
           "Nothing is lost: a game in play is kept on the server. Try again once it is back, or reload the page.";
  }

  // This page's id, new at every load: its requests of the game and its away beacon carry
  // it, so the server can tell a reload's late beacon (from the page before) from a tab that
  // really went away.
  const PAGE_ID = (window.crypto && crypto.randomUUID) ? crypto.randomUUID()
    : `${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`;

  async function call(method, path, body) {
    const s = saved();
    const headers = {};
    if (s && s.token && path.startsWith("/games/")) {
      headers["X-Seat-Token"] = s.token;
      headers["X-Page-Id"] = PAGE_ID;
    }
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
    $("start").disabled = b || !options;
  }

  // Which screen shows: the set-up form, the loading panel, or the game.
  function screen(which) {
    $("setup").hidden = which !== "setup";
    $("loading").hidden = which !== "loading";
    $("setup-area").hidden = which === "game";
    $("game").hidden = which !== "game";
    document.body.classList.toggle("playing", which === "game");
  }

  // ------------------------------------------------------------------ set-up screen
  const label = (name) => name.replace(/_/g, " ");

  function option(value, text, title) {
    const o = el("option", "", text);
    o.value = String(value);
    if (title) o.title = title;
    return o;
  }

  function botText(b) {
    return b.level ? `${b.name} - ${b.level}` : b.name;
  }

  // The player counts, seats, opponents and variants; `keep`: the values to select where
  // they are still allowed (the last game's settings, or the form's own before a change).
  function buildSetup(keep) {
    const o = options;
    const players = $("players");
    const counts = o.player_counts;
    const p = counts.includes(Number(keep.players)) ? Number(keep.players) : o.default_players;
    players.replaceChildren(...counts.map((n) => option(n, `${n} players`)));
    players.value = String(p);

    const seat = Math.min(Math.max(Number(keep.seat) || 0, 0), p - 1);
    $("seat").replaceChildren(...Array.from({length: p}, (_, q) => option(q, `seat ${q}`)));
    $("seat").value = String(seat);

    const lineup = o.lineups[String(p)] || [];
    const wanted = keep.opponents || [];
    const box = $("opponents");
    box.replaceChildren();
    let k = 0;
    for (let q = 0; q < p; q++) {
      if (q === seat) continue;
      const lab = el("label", "opp", `seat ${q}`);
      const sel = el("select");
      sel.dataset.seat = q;
      sel.setAttribute("aria-label", `the bot at seat ${q}`);
      for (const b of o.bots) sel.append(option(b.name, botText(b), b.description));
      const pick = wanted.length ? wanted[k % wanted.length] : lineup[k];
      sel.value = o.bots.some((b) => b.name === pick) ? pick : (lineup[k] || o.bots[0].name);
      lab.append(sel);
      box.append(lab);
      k++;
    }

    const fields = Object.entries(o.setup_fields || {});
    $("variants").hidden = !fields.length;
    const rules = keep.rules || {};
    const allowedHere = o.setup_values[String(p)] || {};
    const defaults = o.setup_defaults[String(p)] || {};
    const row = $("variant-fields");
    row.replaceChildren();
    for (const [name, frag] of fields) {
      const lab = el("label", "", label(name));
      lab.title = frag.description || "";
      const def = defaults[name];
      const defText = def === null || def === undefined ? "rulebook" : (typeof def === "boolean" ? (def ? "yes" : "no") : def);
      let values = null;
      if (frag.enum) values = frag.enum;
      else if (frag.type === "boolean") values = [true, false];
      else if (frag.type === "integer" && frag.maximum - frag.minimum <= 24) {
        values = Array.from({length: frag.maximum - frag.minimum + 1}, (_, i) => frag.minimum + i);
      }
      if (allowedHere[name]) values = (values || allowedHere[name]).filter((v) => allowedHere[name].includes(v));
      let input;
      if (values) {
        input = el("select");
        input.append(option("", `default (${defText})`));
        for (const v of values) input.append(option(String(v), typeof v === "boolean" ? (v ? "yes" : "no") : String(v)));
        const want = rules[name] === undefined ? "" : String(rules[name]);
        input.value = [...input.options].some((x) => x.value === want) ? want : "";
        input.disabled = values.length <= 1;
      } else {
        input = el("input");
        input.type = "number";
        input.min = frag.minimum; input.max = frag.maximum; input.step = 1;
        input.placeholder = `default (${defText})`;
        if (rules[name] !== undefined) input.value = String(rules[name]);
      }
      input.id = `rule-${name}`;
      input.dataset.rule = name;
      input.dataset.type = frag.enum ? "enum" : frag.type;
      lab.append(input);
      if (frag.description) lab.append(el("span", "hint", frag.description));
      row.append(lab);
    }
    if (keep.seed !== undefined && keep.seed !== null) $("seed").value = String(keep.seed);
  }

  // The create body the form states (the fields left at their default are left out).
  function settingsFromForm() {
    const body = {players: Number($("players").value), seat: Number($("seat").value),
                  opponents: [...$("opponents").querySelectorAll("select")].map((s) => s.value)};
    const rules = {};
    for (const input of $("variant-fields").querySelectorAll("[data-rule]")) {
      if (input.value === "" || input.disabled) continue;
      const type = input.dataset.type;
      rules[input.dataset.rule] = type === "boolean" ? input.value === "true" : (type === "integer" ? Number(input.value) : input.value);
    }
    if (Object.keys(rules).length) body.rules = rules;
    const seed = $("seed").value.trim();
    if (seed !== "") body.seed = Number(seed);
    return body;
  }

  function showSetup() {
    view = null;
    document.body.removeAttribute("data-game-id");
    document.body.removeAttribute("data-decision");
    screen("setup");
    setStatus(options ? "setup" : "loading", options ? "Set up a game" : "Loading...");
    if (options) watchServer();
  }

  // What the server is loading for this game (the warm-up after it starts), said on the
  // set-up screen until it is ready; a game may be started meanwhile (it then waits).
  function watchServer() {
    if (serverPoll) return;
    const tick = async () => {
      let s = null;
      try { s = (await call("GET", "/status")).data; } catch (e) { s = null; }
      const line = $("server-line");
      const waiting = !!(s && s.stage) && document.body.dataset.status === "setup";
      line.hidden = !waiting;
      if (waiting) line.textContent = `The server is getting ready: ${s.stage}. You can start now; the game waits for it.`;
      serverPoll = waiting ? setTimeout(tick, 1000) : null;
    };
    serverPoll = setTimeout(tick, 0);
  }

  async function loadOptions() {
    for (let attempt = 0; ; attempt++) {
      try {
        const r = await call("GET", "/bots");
        if (r.ok) { options = r.data; return true; }
        showError(detail(r, "could not read the game's set-up"));
        return false;
      } catch (e) {
        if (attempt >= 4) { showError(unreachable(e, "reading the game's set-up")); return false; }
        await new Promise((ok) => setTimeout(ok, 500 * (attempt + 1)));
      }
    }
  }

  // The set-up's options read and the form built: only now may Start be tapped.
  async function ready() {
    if (!(await loadOptions())) return false;
    if (options.title) {
      $("title").textContent = options.title;
      $("setup-title").textContent = `Set up a game of ${options.title}`;
    }
    buildSetup(load(SETTINGS) || {});
    $("start").textContent = "Start game";
    $("start").disabled = busy;
    return true;
  }

  // ------------------------------------------------------------------ cold start
  // While a game is being made: what the server is loading for it (GET /status), polled.
  function startLoading(body) {
    screen("loading");
    setStatus("loading", "Starting a game...");
    $("loading-text").textContent = "Dealing the cards...";
    $("loading-parts").replaceChildren();
    let stopped = false;
    const bots = [...new Set(body.opponents || [])].join(",");
    const tick = async () => {
      if (stopped) return;
      try {
        const r = await call("GET", `/status?bots=${encodeURIComponent(bots)}`);
        if (stopped || !r.ok) return;
        const s = r.data;
        const mine = (s.parts || []).filter((p) => p.game === game && (p.name.endsWith(" engine") || bots.split(",").includes(p.name)));
        $("loading-text").textContent = s.stage
          ? (s.stage.includes("so far") ? s.stage : `${s.stage}${s.elapsed ? ` - ${Math.round(s.elapsed)} s so far` : ""}`)
          : (mine.every((p) => p.ready) ? "Dealing the cards..." : `Loading ${mine.filter((p) => !p.ready).map((p) => p.what).join(", ")}...`);
        $("loading-parts").replaceChildren(...mine.map((p) => {
          const now = !p.ready && !!s.stage && s.stage.includes(p.what);
          return el("li", p.ready ? "ready" : (now ? "now" : ""), `${p.what}: ${p.ready ? "ready" : (now ? "loading" : "waiting")}`);
        }));
      } catch (e) { /* the status is only for the words shown */ }
      if (!stopped) setTimeout(tick, 400);
    };
    tick();
    return () => { stopped = true; };
  }

  // ------------------------------------------------------------------ games
  async function startGame(body) {
    if (busy) return;
    setBusy(true);
    showError("");
    const stop = startLoading(body);
    try {
      const r = await call("POST", "/games", body);
      if (!r.ok) {  // refused (too many games, a setting the game refuses): say why, keep the form
        showSetup();
        showError(detail(r, "the server refused to start a game"));
        if (r.status === 429 && myGames().length) offerEndGames(body);
        return;
      }
      sessionStorage.setItem(KEY, JSON.stringify({id: r.data.game_id, token: r.data.seat_token}));
      rememberGame({game, id: r.data.game_id, token: r.data.seat_token});
      sessionStorage.setItem(SETTINGS, JSON.stringify(body));
      screen("game");
      render(r.data);
    } catch (e) {
      showSetup();
      showError(unreachable(e, "starting a game"));
    } finally { stop(); setBusy(false); }
  }

  // End this tab's game on the server (an unfinished one is abandoned), forget it.
  async function endSaved() {
    const s = saved();
    if (s && s.id) {
      try { await call("DELETE", `/games/${encodeURIComponent(s.id)}`); } catch (e) { /* gone anyway */ }
      forgetGame(s.id);
    }
    sessionStorage.removeItem(KEY);
  }

  async function newGame() {
    if (busy) return;
    setBusy(true);
    showError("");
    try { await endSaved(); } finally { setBusy(false); }
    if (!options && !(await ready())) { screen("setup"); setStatus("error", ""); return; }
    buildSetup(load(SETTINGS) || {});
    showSetup();
  }

  async function rematch() {
    if (busy) return;
    setBusy(true);
    try { await endSaved(); } finally { setBusy(false); }
    const settings = load(SETTINGS) || {};
    if (options) buildSetup(settings);  // the form a refused rematch goes back to
    startGame(settings);
  }

  async function resume() {
    const s = saved();
    if (s && s.id) {
      setBusy(true);
      setStatus("loading", "Resuming your game...");
      try {
        const r = await call("GET", `/games/${encodeURIComponent(s.id)}`);
        if (r.ok) { screen("game"); render(r.data); return; }
        sessionStorage.removeItem(KEY);  // gone, expired or not ours: set up another
      } catch (e) {
        setStatus("error", ""); showError(unreachable(e, "resuming your game")); return;
      } finally { setBusy(false); }
    }
    showSetup();
  }

  async function act(action, text) {
    if (busy || !view || !view.your_turn) return;
    const s = saved();
    setBusy(true);
    showError("");
    for (const b of $("choices").querySelectorAll("button")) b.disabled = true;
    // Never a stale "your decision": from here the bots play until yours comes back.
    const v0 = view.decision_number;
    setStatus("waiting", "Bots to play");
    $("prompt").textContent = `You chose: ${text}. The bots are playing...`;
    try {
      const r = await call("POST", `/games/${encodeURIComponent(s.id)}/actions`,
                           {action, decision_number: view.decision_number});
      if (r.ok) { render(r.data); return; }
      // Refused: read the game again and say why in a player's words (the API's own
      // reason goes to the console).
      console.warn("the server refused the choice:", detail(r, `HTTP ${r.status}`));
      const again = await call("GET", `/games/${encodeURIComponent(s.id)}`);
      if (again.ok) {
        render(again.data);
        if (again.data.over) showError("This game is already over (it was played on in another tab or window?): here is its result.");
        else if (again.data.decision_number !== v0) {
          showError("That choice came too late: the game had moved on (it is open in another tab or window?). Here is where it stands now.");
        } else showError(`The server did not take that choice: ${detail(r, "refused")}`);
        return;
      }
      if (![403, 404, 410].includes(again.status)) {  // the server is in trouble: keep the game
        showError(`The server could not take that choice or show the game now (HTTP ${again.status}). ` +
                  "Nothing is lost: try again, or reload the page.");
        if (view) render(view);
        return;
      }
      // The game is gone (ended and expired, removed, or not this tab's any more).
      forgetGame(s.id);
      sessionStorage.removeItem(KEY);
      showSetup();
      showError("This game is no longer on the server (it ended a while ago, or was removed). Start a new game.");
    } catch (e) {
      showError(unreachable(e, "sending your choice"));
      if (view) render(view);
    } finally { setBusy(false); }
  }

  // ------------------------------------------------------------------ drawing
  function seatLabel(v, q) {
    if (q === v.seat) return "you";
    const bot = (v.controllers || [])[q] || "";
    const level = ((v.levels || [])[q] || "").split(":")[0];
    return level ? `${bot}, ${level}` : bot;
  }

  const keyOf = (i) => KEYS[i] || "";

  function keysHint(n) {  // "key 1", "keys 1-4", "keys 1-9, 0", "keys 1-9, 0, a-c"
    if (n === 1) return "key 1";
    const parts = [`1-${Math.min(n, 9)}`];
    if (n >= 10) parts.push("0");
    if (n === 11) parts.push("a");
    if (n > 11) parts.push(`a-${keyOf(Math.min(n, KEYS.length) - 1)}`);
    return `keys ${parts.join(", ")}`;
  }

  // The card a choice's ref names: {zone, slot} of a table zone, or zone "hand" and the
  // index of a card of your hand.
  function refCard(t, ref) {
    if (ref.zone === "hand") {
      const c = (t.hand || [])[ref.slot];
      return c ? {where: "hand", text: c.text && c.text !== c.name ? `${c.name}: ${c.text}` : c.name} : null;
    }
    const z = (t.table || []).find((x) => x.name === ref.zone);
    const c = z && (z.cards || []).find((x) => x.slot === ref.slot);
    return c ? {where: `${z.name} ${c.slot}`, text: c.text} : null;
  }

  function refSelector(ref) {
    const esc = (x) => String(x).replace(/["\\]/g, "\\$&");
    return ref.zone === "hand" ? `#hand .gcard[data-index="${esc(ref.slot)}"]`
      : `#zones .gcard[data-zone="${esc(ref.zone)}"][data-slot="${esc(ref.slot)}"]`;
  }

  function focusRefs(c, on) {
    for (const ref of c.refs || []) {
      const card = document.querySelector(refSelector(ref));
      if (card) card.classList.toggle("ref-focus", on);
    }
  }

  // The cue under a choices box that scrolls: how many choices are out of its view.
  function updateMore() {
    const box = $("choices");
    const more = $("choices-more");
    const buttons = [...box.querySelectorAll("button")];
    if (box.scrollHeight <= box.clientHeight + 1 || !buttons.length) { more.hidden = true; return; }
    const top = box.getBoundingClientRect().top, bottom = box.getBoundingClientRect().bottom;
    const below = buttons.filter((b) => b.getBoundingClientRect().bottom > bottom + 1).length;
    const above = buttons.filter((b) => b.getBoundingClientRect().top < top - 1).length;
    const parts = [];
    if (below) parts.push(`${below} more below \u2193`);
    if (above) parts.push(`${above} more above \u2191`);
    more.textContent = parts.join(", ");  // short: one line on a phone, under the choices
    more.title = "scroll the choices";
    more.hidden = !parts.length;
    const hand = $("hand-panel");
    const hidden = hand.scrollHeight > hand.clientHeight + 1 && hand.scrollTop + hand.clientHeight < hand.scrollHeight - 1;
    $("hand-title").textContent = hidden ? "Your hand (more below \u2193)" : "Your hand";
  }

  function drawMoves(v) {
    const moves = $("moves");
    moves.replaceChildren();
    let group = null, heading = undefined;
    for (const m of v.recent || []) {
      if (!group || m.turn !== heading) {
        heading = m.turn;
        group = el("div", "turn-group");
        if (m.turn !== null && m.turn !== undefined) {
          const word = m.turn_word || (v.table && v.table.turn_word) || "turn";
          group.append(el("h3", "", `${word[0].toUpperCase()}${word.slice(1)} ${m.turn}`));
        }
        group.append(el("ul"));
        moves.append(group);
      }
      const mine = m.seat === v.seat;
      const li = el("li", mine ? "mine" : "", moveText(m, v));
      if (mine) li.title = "your move";
      hook("move", li, m, v);
      group.lastChild.append(li);
    }
    if (!(v.recent || []).length) moves.append(el("p", "muted", "nothing yet"));
  }

  // A story line as read: its mover named once. A line that already begins with the mover's
  // label is shown as it is; one that begins with the seat's bare name ("player 2 rolls")
  // gets the label in its place for a bot ("player 2 (bm-rusher) rolls") and "(you)" after
  // the name for your own seat ("player 0 (you) draws"); any other line is "who: text".
  function moveText(m, v) {
    const text = String(m.text || "");
    const who = String(m.who || "");
    if (!who || m.seat === undefined || m.seat < 0 || text.toLowerCase().startsWith(who.toLowerCase())) return text;
    const seat = ((v.table && v.table.seats) || [])[m.seat];
    const name = seat && seat.name;
    if (name && text.startsWith(name + " ")) return (m.seat === v.seat ? `${name} (you)` : who) + text.slice(name.length);
    return `${who}: ${text}`;
  }

  function render(v) {
    view = v;
    document.body.dataset.gameId = v.game_id;
    document.body.dataset.decision = v.decision_number;
    const t = v.table || {};
    document.title = `${t.title || game} - play against the bots`;
    $("title").textContent = t.title || game;
    const mine = v.your_turn ? (t.choices || []) : [];

    const seats = $("seats");
    seats.replaceChildren();
    for (const s of t.seats || []) {
      const box = el("div", "gseat" + (s.deciding ? " deciding" : "") + (s.you ? " you" : ""));
      box.dataset.seat = s.seat;
      const doing = s.deciding ? (s.you ? " - your decision" : " - deciding") : "";
      box.append(el("div", "gname", `${s.name} (${seatLabel(v, s.seat)})${doing}`));
      const counters = el("div", "counters");
      for (const [k, val] of Object.entries(s.counters || {})) counters.append(el("span", "", `${k}: ${val}`));
      box.append(counters);
      if ((s.flags || []).length) box.append(el("div", "flags", s.flags.join(", ")));
      hook("seat", box, s, v);
      seats.append(box);
    }

    const referenced = new Set(mine.flatMap((c) => (c.refs || []).map(refSelector)));
    const zones = $("zones");
    zones.replaceChildren();
    for (const z of t.table || []) {
      const p = el("div", "panel zone");
      p.append(el("h2", "", z.name));
      const cards = el("div", "cards");
      for (const c of z.cards || []) {
        const card = el("span", "gcard", (c.slot !== null && c.slot !== undefined ? `${c.slot}. ` : "") + c.text);
        card.dataset.zone = z.name;
        if (c.slot !== null && c.slot !== undefined) card.dataset.slot = c.slot;
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
    (t.hand || []).forEach((c, i) => {
      const card = el("span", "gcard");
      card.dataset.index = i;
      if (c.count > 1) card.append(el("span", "count", `${c.count}x`));
      card.append(document.createTextNode(c.name + (c.text && c.text !== c.name ? `: ${c.text}` : "")));
      if (c.zone && c.zone !== "hand") card.append(el("span", "zone-tag", c.zone));
      hook("card", card, c, v, "hand");
      hand.append(card);
    });
    // a game that describes no hand shows none; at the end the result takes the room
    $("hand-panel").hidden = !(t.hand || []).length || !!v.over;
    for (const sel of referenced) for (const card of document.querySelectorAll(sel)) card.classList.add("referenced");

    drawMoves(v);

    const choices = $("choices");
    choices.replaceChildren();
    mine.forEach((c, i) => {
      const b = el("button", "gchoice");
      b.type = "button";
      b.dataset.action = c.action;
      b.append(el("span", "key", keyOf(i)), document.createTextNode(c.text));
      for (const ref of c.refs || []) {
        const card = refCard(t, ref);
        if (!card) continue;
        const span = el("span", "ref");
        span.append(el("span", "ref-where", card.where), document.createTextNode(card.text));
        b.append(span);
      }
      b.addEventListener("click", () => act(c.action, c.text));
      b.addEventListener("pointerenter", () => focusRefs(c, true));
      b.addEventListener("pointerleave", () => focusRefs(c, false));
      b.addEventListener("focus", () => focusRefs(c, true));
      b.addEventListener("blur", () => focusRefs(c, false));
      hook("choice", b, c, v);
      choices.append(b);
    });
    choices.scrollTop = 0;
    const prompt = $("prompt");
    prompt.replaceChildren();
    if (v.over) prompt.textContent = "";
    else if (v.your_turn) {
      prompt.append(document.createTextNode(t.prompt || "Your decision"));
      if (mine.length) prompt.append(el("span", "keys-hint", keysHint(mine.length)));
    } else prompt.textContent = "The bots are playing...";
    $("ask").hidden = !!v.over;

    const end = $("end");
    end.hidden = !v.over;
    if (v.over && v.result) {
      const r = v.result;
      $("endline").textContent = (r.you_won ? "You won!" : "You lost.") + (r.end ? ` ${r.end[0].toUpperCase()}${r.end.slice(1)}` : "");
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
    updateMore();
    requestAnimationFrame(updateMore);  // again once a plugin's drawing has settled
  }

  // ------------------------------------------------------------------ input
  document.addEventListener("keydown", (e) => {
    if (e.ctrlKey || e.metaKey || e.altKey || !view || !view.your_turn || busy) return;
    if (e.target && e.target.closest && e.target.closest("input, select, textarea")) return;
    if (String(e.key).length !== 1) return;
    const i = KEYS.indexOf(e.key.toLowerCase());
    if (i < 0) return;
    const buttons = $("choices").querySelectorAll("button");
    const c = (view.table.choices || [])[i];
    if (c && buttons[i]) { e.preventDefault(); act(c.action, c.text); }
  });
  $("choices").addEventListener("scroll", updateMore, {passive: true});
  $("hand-panel").addEventListener("scroll", updateMore, {passive: true});
  window.addEventListener("resize", updateMore);
  $("players").addEventListener("change", () => buildSetup({...settingsFromForm(), opponents: null}));
  $("seat").addEventListener("change", () => buildSetup(settingsFromForm()));
  $("setup-form").addEventListener("submit", (e) => { e.preventDefault(); startGame(settingsFromForm()); });
  // A closed tab's game stops counting soon: when the page goes away (closed, reloaded, left)
  // it tells the server (a beacon: it cannot set headers, so the seat token is in its body).
  // Unless this tab comes back within the grace (a reload resumes at once, and any request
  // of the game clears the mark), the server ends the game and frees its slot. The beacon
  // names this page: one that arrives after a reload's new page has asked is ignored.
  window.addEventListener("pagehide", () => {
    const s = saved();
    if (!s || !s.id || (view && view.over) || !navigator.sendBeacon) return;
    try {
      navigator.sendBeacon(`${api}/games/${encodeURIComponent(s.id)}/away`,
                           JSON.stringify({seat_token: s.token, page: PAGE_ID}));
    } catch (e) { /* the game then ends by its idle timeout */ }
  });
  // Back from the browser's page cache (no reload): say so by reading the game again.
  window.addEventListener("pageshow", (e) => { if (e.persisted && saved() && saved().id) resume(); });
  $("rematch").addEventListener("click", rematch);
  $("new-game").addEventListener("click", newGame);

  (async () => {
    setStatus("loading", "Loading...");
    if (!(saved() && saved().id)) screen("setup");  // the form shows at once, Start says "Loading..."
    const [, ok] = await Promise.all([loadPlugin(), ready()]);
    if (!ok && !(saved() && saved().id)) { setStatus("error", ""); return; }
    await resume();
  })();
})();

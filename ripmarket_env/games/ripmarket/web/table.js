// R.I.P. Market's page plugin (GameSpec.web; docs/SERVER.md "A game's page plugin"). The
// generic page draws the table description; this adds what R.I.P. Market's table shows at a
// glance, from the description's public `extra` (games/ripmarket/table.py):
//  * each seat: an HP bar out of the start HP, Ghost styling, the card it played this round
//    (face up, or a card back when face-down and not yours) with its target, what it took
//    from the deck or the Market, and the Shadow cards (curses, blessings) attached to it;
//  * the Market cards with their value, name and text, each with its slot (data-slot);
//  * a panel above the Market with the active rule (the card that set it and its effect) and
//    the latest round's result; it sits in the page's flow, never over the Market;
//  * a hand card whose text a choice reads out is drawn by its name alone while you decide
//    (on a phone every hand card; a tap shows its text);
//  * the Market cards your choices name (their `refs`) are marked, and a choice marks the
//    card or seat it names while it is pointed at or focused.
(() => {
  "use strict";
  const el = (tag, cls, text) => {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  };
  const seatName = (view, q) => {
    const s = ((view.table || {}).seats || [])[q];
    return q === view.seat ? "you" : (s ? s.name : `player_${q}`);
  };
  const extraOf = (view) => (view.table && view.table.extra) || {};
  const PHONE = window.matchMedia("(max-width: 600px)");

  function cardFace(card, cls) {
    const face = el("div", "rip-card " + (cls || ""));
    if (!card || card.face_down && !card.name) {
      face.classList.add("rip-back");
      face.append(el("span", "rip-name", "face-down card"));
      return face;
    }
    face.append(el("span", "rip-value", card.value), el("span", "rip-name", card.name));
    if (card.face_down) face.append(el("span", "rip-tag", "face-down"));
    face.title = card.text || "";
    return face;
  }

  function refsOf(choice) { return Array.isArray(choice.refs) ? choice.refs : []; }

  function referenced(ref) {
    if (ref.zone === "seats") return document.querySelector(`#seats .gseat[data-seat="${ref.slot}"]`);
    return document.querySelector(`#zones .zone[data-zone="${CSS.escape(ref.zone)}"] .gcard[data-slot="${ref.slot}"]`);
  }

  RipmarketTable.register("ripmarket", {
    css: `
      .gseat.rip-ghost { background: var(--ghost-bg); border-style: dashed; }
      .rip-hp { display: flex; flex-wrap: wrap; align-items: center; gap: .2em .5em; margin: .2em 0; font-size: 12.5px; }
      .rip-hp .bar { flex: 1 1 40px; min-width: 30px; max-width: 120px; height: 8px; border-radius: 4px; background: #3b2a2a;
                     overflow: hidden; }
      .rip-hp .fill { display: block; height: 100%; background: var(--hp); }
      .rip-hp .rip-counts { color: var(--muted); }
      .rip-played, .rip-took { display: inline-flex; flex-wrap: wrap; align-items: center; gap: .3em; min-width: 0; }
      .rip-ghost .rip-hp .fill { background: var(--ghost); }
      .rip-ghostmark { color: var(--ghost); font-weight: 600; font-size: 12px; }
      .rip-row { display: flex; flex-wrap: wrap; align-items: center; gap: .2em .6em; margin-top: .2em; font-size: 12.5px;
                 color: var(--muted); min-width: 0; }
      .rip-card { display: inline-flex; align-items: baseline; gap: .35em; max-width: 100%; background: var(--card);
                  color: var(--card-text); border-radius: 5px; padding: .1em .45em; font-size: 12.5px; overflow-wrap: anywhere; }
      .rip-card.rip-back { background: repeating-linear-gradient(45deg, #3d3357, #3d3357 4px, #4a4068 4px, #4a4068 8px);
                           color: #ddd6f5; }
      .rip-card .rip-value { font-weight: 700; }
      .rip-card .rip-tag { font-size: 11px; color: #6b6455; }
      .rip-shadow { border-radius: 5px; padding: .1em .45em; font-size: 12px; color: #fff; overflow-wrap: anywhere; }
      .rip-shadow.curse { background: var(--curse); }
      .rip-shadow.blessing { background: var(--blessing); }
      .zone[data-zone="Market"] .gcard .rip-value { font-weight: 700; margin-right: .25em; }
      .zone[data-zone="Market"] .gcard .rip-name { font-weight: 600; }
      .zone[data-zone="Market"] .gcard .rip-text { display: block; font-size: 12px; color: #4a4434; }
      .rip-ref { outline: 3px solid var(--legal); outline-offset: 1px; }
      .gcard.rip-referable { box-shadow: 0 0 0 2px var(--legal); }
      #hand .gcard.rip-brief { cursor: pointer; }
      #hand .gcard.rip-brief .rip-text { display: none; }
      #hand .gcard.rip-brief.rip-open .rip-text { display: inline; }
      @media (max-width: 600px) {
        /* R.I.P. Market's choices read out whole cards: a little tighter on a phone */
        #seats .gseat { padding: .35em .5em; }
        #seats .gseat .gname { font-size: 13px; }
        #choices button { font-size: 13px; padding: .4em .6em; min-height: 36px; }
        .rip-hp .bar { max-width: 60px; }
        /* the cards say what they are: played, then "+" what was taken */
        .rip-row .rip-label { display: none; }
        .rip-took::before { content: "+"; }
        .rip-row { font-size: 12px; }
      }
      #rip-rule { border-left: 4px solid var(--gold); }
      #rip-rule .rip-rule-name { font-weight: 600; }
      #rip-rule ul { margin: .3em 0 0; padding-left: 1.1em; overflow-wrap: anywhere; }
    `,

    seat(box, seat, view) {
      const x = (extraOf(view).seats || [])[seat.seat];
      if (!x) return;
      const max = extraOf(view).max_hp || 1;
      box.classList.toggle("rip-ghost", !x.alive);
      box.dataset.hp = x.hp;
      box.dataset.alive = x.alive ? "1" : "0";
      // one line: the HP bar, then the hand and Shadow hand sizes (the generic counters' other facts
      // are drawn below as cards)
      const hp = el("div", "rip-hp");
      const bar = el("span", "bar");
      const fill = el("span", "fill");
      fill.style.width = `${Math.max(0, Math.min(1, x.hp / max)) * 100}%`;
      bar.append(fill);
      hp.append(el("span", "rip-hp-text", `HP ${x.hp}/${max}`), bar);
      const c = seat.counters || {};
      hp.append(el("span", "rip-counts", `hand ${c.hand} · shadow ${c.shadow}`));
      const counters = box.querySelector(".counters");
      if (counters) counters.replaceWith(hp); else box.append(hp);
      if (x.played || x.took) {
        const row = el("div", "rip-row");
        if (x.played) {
          const played = el("span", "rip-played");
          played.append(el("span", "rip-label", "played"), cardFace(x.played));
          if (x.target !== null && x.target !== undefined) played.append(el("span", "", `→ ${seatName(view, x.target)}`));
          row.append(played);
        }
        if (x.took) {
          const took = el("span", "rip-took");
          took.append(el("span", "rip-label", "took:"));
          if (x.took === "deck") took.append(el("span", "rip-deck", "deck"));
          if (x.took_card) took.append(cardFace(x.took_card));
          row.append(took);
        }
        box.append(row);
      }
      if ((x.haunted_by || []).length) {
        const row = el("div", "rip-row rip-haunts");
        row.append(el("span", "rip-label", "haunted by"));
        for (const h of x.haunted_by) {
          const chip = el("span", `rip-shadow ${h.family}`, `${h.name} (${h.family})`);
          chip.title = h.text;
          row.append(chip);
        }
        box.append(row);
      }
    },

    zone(panel, zone, view) {
      panel.dataset.zone = zone.name;
      if (zone.name !== "Market") return;
      const market = extraOf(view).market || [];
      panel.querySelectorAll(".gcard").forEach((card, i) => {
        const c = market[i];
        card.dataset.slot = String((zone.cards[i] || {}).slot ?? i);
        if (!c) return;
        card.replaceChildren(el("span", "rip-slot", `${c.slot}. `), el("span", "rip-value", c.value),
                             el("span", "rip-name", c.name), el("span", "rip-text", c.text));
      });
    },

    card(card, c, view, where) {
      if (where === "table" && c.slot !== null && c.slot !== undefined) card.dataset.slot = String(c.slot);
      // a hand card whose text a choice already reads out ("Play Backstab (3): ...") is drawn by
      // its name alone while you decide, so your hand and your choices fit a phone together
      // (on a phone, every hand card while you decide: a tap shows its text)
      const readOut = () => ((view.table || {}).choices || []).some((ch) => ch.text.includes(`${c.name}: ${c.text}`));
      if (where === "hand" && view.your_turn && c.text && (PHONE.matches || readOut())) {
        const text = el("span", "rip-text", `: ${c.text}`);
        card.replaceChildren(...(c.count > 1 ? [el("span", "count", `${c.count}x`)] : []), el("span", "rip-name", c.name), text);
        if (c.zone && c.zone !== "hand") card.append(el("span", "zone-tag", c.zone));
        card.classList.add("rip-brief");
        card.addEventListener("click", () => card.classList.toggle("rip-open"));
      }
    },

    choice(button, choice, view) {
      const refs = refsOf(choice);
      if (!refs.length) return;
      button.dataset.refs = JSON.stringify(refs);
      const mark = (on) => refs.forEach((r) => { const t = referenced(r); if (t) t.classList.toggle("rip-ref", on); });
      button.addEventListener("pointerenter", () => mark(true));
      button.addEventListener("pointerleave", () => mark(false));
      button.addEventListener("focus", () => mark(true));
      button.addEventListener("blur", () => mark(false));
    },

    render(root, view) {
      const x = extraOf(view);
      let panel = document.getElementById("rip-rule");
      if (!panel) {
        panel = el("div", "panel");
        panel.id = "rip-rule";
        const board = document.getElementById("board") || root;
        board.prepend(panel);
      }
      panel.replaceChildren(el("h2", "", "Rule card"));
      const rule = x.rule || {name: "none", text: ""};
      panel.append(el("div", "rip-rule-name", rule.name === "none" ? "No rule change" : (rule.card ? `${rule.card}: ${rule.name}` : rule.name)),
                   el("div", "muted", rule.text));
      if (x.epilogue) panel.append(el("div", "rip-ghostmark", "Epilogue: the Ghosts haunt the last player"));
      const last = x.last_round;
      if (last && (last.lines || []).length) {
        panel.append(el("h2", "", `Round ${last.round} result`));
        if (last.rule && last.rule.name !== "none") panel.append(el("div", "muted", `Rule: ${last.rule.text}`));
        const ul = el("ul", "rip-round");
        for (const line of last.lines) ul.append(el("li", `rip-${line.kind}`, line.text));
        panel.append(ul);
      }
      // the Market cards and seats your choices name are marked on the board
      if (view.your_turn) {
        for (const c of (view.table.choices || [])) {
          for (const r of refsOf(c)) { const t = referenced(r); if (t) t.classList.add("rip-referable"); }
        }
      }
    },
  });
})();

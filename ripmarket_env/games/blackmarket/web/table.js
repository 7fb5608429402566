// Black Market's page plugin (GameSpec.web): what its table shows beyond the generic
// drawing of its description (games/blackmarket/table.py). The text of every card, seat and
// choice is the description's; this adds only the look of the table:
//  - each Map card coloured by its colour (red, black, dual), dimmed when face-down, marked
//    when it faces your side (from the description's extra.map: public faces only);
//  - the dice drawn as dice (pips) above the Map, used ones dimmed (extra.dice);
//  - the hand (three kinds of card at most) kept above the choices, so it stays in view;
//  - the Map slot a choice acts on (its refs) lit while the choice is hovered or focused.
(() => {
  "use strict";
  const PIPS = {1: [4], 2: [0, 8], 3: [0, 4, 8], 4: [0, 2, 6, 8], 5: [0, 2, 4, 6, 8], 6: [0, 2, 3, 5, 6, 8]};
  RipmarketTable.register("black-market", {
    css: `
      .bm-card { border-left: 6px solid #8a8577; }
      .bm-card.bm-red { border-left-color: #c0392b; }
      .bm-card.bm-black { border-left-color: #2b2b33; }
      .bm-card.bm-dual { border-left-color: #7d4fb0; }
      .bm-card.bm-down { opacity: .78; border-style: dashed; border-top: 0; border-right: 0; border-bottom: 0; }
      .bm-card.bm-yours::after { content: " \\25BC"; color: #2e7d32; font-weight: 700; }
      .bm-card.bm-hot { outline: 3px solid var(--legal); outline-offset: 1px; }
      .bm-dice { display: flex; align-items: center; gap: .5em; flex-wrap: wrap; margin: 0 0 .5em; }
      .bm-die { display: inline-grid; grid-template: repeat(3, 6px) / repeat(3, 6px); gap: 2px; padding: 4px;
                background: var(--card); border-radius: 5px; }
      .bm-die span { border-radius: 50%; }
      .bm-die span.bm-pip { background: var(--card-text); }
      .bm-die.used { opacity: .35; }
      .bm-dice .who { color: var(--muted); font-size: 13px; }
      /* Three kinds of Hand Card make a short hand: it stays in view above the choices. */
      #dock > #end { order: -2; }
      #dock > #hand-panel { order: -1; }
    `,
    card(el, card, view, where) {
      if (where !== "table") return;
      const face = ((view.table.extra || {}).map || [])[card.slot - 1];
      if (!face) return;
      el.dataset.slot = card.slot;
      el.classList.add("bm-card");
      if (face.colour) el.classList.add(`bm-${face.colour}`);
      if (face.face_down) el.classList.add("bm-down");
      if (face.yours) el.classList.add("bm-yours");
    },
    zone(panel, zone, view) {
      const extra = view.table.extra || {};
      if (zone.name !== "Map" || !(extra.dice || []).length) return;
      const row = document.createElement("div");
      row.className = "bm-dice";
      row.setAttribute("aria-label", "the dice");
      const who = document.createElement("span");
      who.className = "who";
      who.textContent = extra.dice_of === view.seat ? "your dice" : `dice of player ${extra.dice_of}`;
      row.append(who);
      for (const d of extra.dice) {
        const die = document.createElement("span");
        die.className = "bm-die" + (d.used ? " used" : "");
        die.dataset.value = d.value;
        die.setAttribute("role", "img");
        die.setAttribute("aria-label", `die showing ${d.value}${d.used ? ", used" : ""}`);
        die.title = `${d.value}${d.used ? " (used)" : ""}`;
        for (let i = 0; i < 9; i++) {
          const cell = document.createElement("span");
          if ((PIPS[d.value] || []).includes(i)) cell.className = "bm-pip";
          die.append(cell);
        }
        row.append(die);
      }
      panel.querySelector("h2").after(row);
    },
    choice(button, choice) {
      const slots = (choice.refs || []).filter((r) => r.zone === "Map").map((r) => String(r.slot));
      if (!slots.length) return;
      const light = (on) => document.querySelectorAll("#zones .bm-card").forEach((c) => {
        c.classList.toggle("bm-hot", on && slots.includes(c.dataset.slot));
      });
      button.addEventListener("mouseenter", () => light(true));
      button.addEventListener("focus", () => light(true));
      button.addEventListener("mouseleave", () => light(false));
      button.addEventListener("blur", () => light(false));
    },
  });
})();

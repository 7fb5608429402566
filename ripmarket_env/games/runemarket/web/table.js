// The Rune Market's page plugin (GameSpec.web): where its table differs from the generic
// drawing. Everything it shows is in the view already (the table description of
// games/runemarket/table.py); it only draws it the game's way:
// - a card, a Shelter and a Market slot take the colour of their Runes (Red, Blue);
//   a Shelter with a Bandit on it is marked;
// - a Number card in your hand shows its value large, beside its use;
// - a block decision (a bot attacks you, RM-5.7) is asked under a red prompt;
// - every story line of the game names what moved in its own words ("the Bandit of P0
//   leaves P3's Shelter"), so it is shown alone, with a capital; the draws that end a
//   turn are dimmed.
RipmarketTable.register("rune-market", {
  css: [
    ".gcard.rm-red { border-left: 5px solid #c0392b; }",
    ".gcard.rm-blue { border-left: 5px solid #2e6fd1; }",
    ".gcard.rm-bandit { outline: 2px dashed #8e2f2f; outline-offset: -2px; }",
    ".gcard .rm-value { display: inline-block; min-width: 1.5em; font-size: 18px; font-weight: 700;",
    "  margin-right: .35em; text-align: center; }",
    "#prompt.rm-block { color: #fff; background: #8e2f2f; border-radius: 6px; padding: .4em .6em; }",
    "#moves li.rm-minor { opacity: .65; }",
  ].join("\n"),
  card(el, card, view, where) {
    const text = where === "hand" ? card.name : card.text;
    const colour = /^(\d+ )?(P\d+ )?Red\b/.test(text) ? "rm-red" : (/^(\d+ )?(P\d+ )?Blue\b/.test(text) ? "rm-blue" : "");
    if (colour) el.classList.add(colour);
    if (where === "table" && / Bandit of P\d+/.test(card.text)) el.classList.add("rm-bandit");
    const number = where === "hand" ? /^Number (\d+)$/.exec(card.name) : null;
    if (number) {
      const big = document.createElement("span");
      big.className = "rm-value";
      big.textContent = number[1];
      el.prepend(big);
    }
  },
  move(li, line) {
    const text = line.text || "";
    li.textContent = text.charAt(0).toUpperCase() + text.slice(1);
    if (line.minor) li.classList.add("rm-minor");
  },
  render(root, view) {
    const prompt = document.getElementById("prompt");
    if (prompt) prompt.classList.toggle("rm-block", !!view.your_turn && (view.table || {}).phase === "defend");
  },
});

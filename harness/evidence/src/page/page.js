(function () {
  "use strict";
  // Everything shown from the data is written with textContent, never as markup.
  var data = JSON.parse(document.getElementById("data").textContent);
  var panel = document.getElementById("drilldown");
  var body = document.getElementById("dd-body");
  var title = document.getElementById("dd-title");
  var GLYPH = { pass: "\u2713", fail: "\u2717", not_exercised: "!", not_applicable: "\u2298", not_implemented: "\u2205", out_of_scope: "\u25cb" };
  var CHANGE = { regression: "regression", fix: "fix", added: "added", removed: "removed", other: "other move" };
  var columns = new Map();
  data.columns.forEach(function (c) { columns.set(c.id, c.label); });
  var buttons = new Map();
  document.querySelectorAll("[data-cell]").forEach(function (b) { buttons.set(b.getAttribute("data-cell"), b); });
  var selected = null;
  var filter = { family: null, column: null };

  function own(object, key) { return object !== null && typeof object === "object" && Object.prototype.hasOwnProperty.call(object, key); }

  function el(tag, className, text) {
    var e = document.createElement(tag);
    if (className) { e.className = className; }
    if (text !== undefined && text !== null) { e.textContent = String(text); }
    return e;
  }

  function section(heading) {
    var s = el("section");
    s.appendChild(el("h3", null, heading));
    body.appendChild(s);
    return s;
  }

  function kv(parent, rows) {
    var dl = el("dl", "kv");
    rows.forEach(function (row) {
      dl.appendChild(el("dt", null, row[0]));
      var dd = el("dd");
      if (row[1] instanceof Node) { dd.appendChild(row[1]); } else { dd.textContent = String(row[1]); }
      dl.appendChild(dd);
    });
    parent.appendChild(dl);
  }

  function tags(list) {
    if (!list || !list.length) { return el("span", "none-text", "none"); }
    var s = el("span", "tags");
    list.forEach(function (t) { s.appendChild(el("span", "tag", t)); });
    return s;
  }

  function badge(status, label) {
    return el("span", "badge s-" + status, (GLYPH[status] || "") + " " + label);
  }

  function statusWords(status) { return String(status).replace(/_/g, " "); }

  function miniTable(parent, head, rows) {
    var table = el("table", "mini");
    var tr = el("tr");
    head.forEach(function (h) { tr.appendChild(el("th", null, h)); });
    var thead = el("thead");
    thead.appendChild(tr);
    table.appendChild(thead);
    var tbody = el("tbody");
    rows.forEach(function (cells) {
      var row = el("tr");
      cells.forEach(function (c) {
        var td = el("td", c && c.json ? "json" : null);
        td.textContent = c && c.json ? c.json : (c === null || c === undefined ? "\u2014" : String(c));
        row.appendChild(td);
      });
      tbody.appendChild(row);
    });
    table.appendChild(tbody);
    parent.appendChild(table);
  }

  function showStatus(cell, row) {
    var line = el("div", "dd-status");
    line.appendChild(badge(cell.status, cell.label));
    var where = (columns.get(cell.column) || cell.column) + " \u00b7 " + statusWords(row ? row.family : "");
    line.appendChild(el("span", "where", where));
    body.appendChild(line);
    body.appendChild(cell.detail ? el("p", "detail", cell.detail) : el("p", "none-text", "The manifest states no detail for this cell."));
  }

  function showRow(row) {
    if (!row) { return; }
    var s = section("The row");
    var rows = [["Invariant", row.invariant], ["Expected", row.expectedOutcome], ["Condition", row.condition], ["Kind", row.kind]];
    kv(s, rows);
    if (own(row, "turnExpectation")) {
      var ending = section("The ending the row grades");
      kv(ending, Object.keys(row.turnExpectation).map(function (k) {
        return [k, el("code", null, JSON.stringify(row.turnExpectation[k]))];
      }));
    }
  }

  function showFinding(cell) {
    var s = section("Finding");
    kv(s, [
      ["Reason codes", tags(cell.reasonCodes)],
      ["Refused by", tags(cell.refusedBy)],
      ["Causes", tags(cell.causes)],
      ["Declared", cell.declared],
      ["Attempted", cell.attempted],
      ["Driver-issued", tags(cell.driverIssued)],
      ["Not applicable", cell.notApplicable],
      ["Record usable", cell.recordUsable ? "yes" : "no"],
      ["Record gaps", tags(cell.recordGaps)],
      ["Turns", cell.turns === 0 ? "0 (decided without running)" : cell.turns]
    ]);
  }

  function viewText(view) {
    if (!view) { return "absent"; }
    var text = statusWords(view.status);
    if (view.reasonCodes && view.reasonCodes.length) { text += " [" + view.reasonCodes.join(", ") + "]"; }
    if (view.refusedBy && view.refusedBy.length) { text += " by " + view.refusedBy.join(", "); }
    if (view.causes && view.causes.length) { text += " cause " + view.causes.join(", "); }
    return text;
  }

  function showMoved(cell) {
    if (!own(cell, "moved")) { return; }
    var s = section("Moved against " + (data.against || "the other run"));
    kv(s, [["Change", CHANGE[cell.moved.change] || cell.moved.change], ["Before", viewText(cell.moved.before)], ["After", viewText(cell.moved.after)]]);
  }

  function yesNo(value) { return value === undefined ? null : (value ? "yes" : "no"); }

  // One column per turn, one row per field the source has.
  var TURN_FIELDS = [
    ["Status", function (t) { return t.status; }],
    ["Code", function (t) { return t.code; }],
    ["Ended by", function (t) { return t.endedBy; }],
    ["Decisions", function (t) { return t.decisions + " (" + t.denied + " denied)"; }],
    ["Operations", function (t) { return t.operations + " (" + t.refused + " refused, " + t.failed + " failed)"; }],
    ["Tool calls", function (t) { return t.toolCalls; }],
    ["Tokens in / out", function (t) {
      if (t.inputTokens === undefined && t.outputTokens === undefined) { return undefined; }
      return (t.inputTokens === undefined ? "\u2014" : t.inputTokens) + " / " + (t.outputTokens === undefined ? "\u2014" : t.outputTokens);
    }],
    ["Elapsed (ms)", function (t) { return t.elapsedMs; }],
    ["Events", function (t) { return t.events; }],
    ["Retryable", function (t) { return yesNo(t.retryable); }],
    ["Prompt hash", function (t) { return t.promptStated ? "stated" : "none"; }],
    ["Asked a human", function (t) { return yesNo(t.escalationAsked); }]
  ];

  function showRecords(cell) {
    var s = section("Records");
    var turns = cell.records;
    if (!turns || !turns.length) {
      var why = cell.turns === 0 ? "No record: the cell was decided without running."
        : !data.records ? "No records: the input is a manifest and no golden folder was found."
        : "No record summary for this cell.";
      s.appendChild(el("p", "none-text", why));
      return;
    }
    s.appendChild(el("p", "caption", "Each turn in short, " + data.records + "."));
    var rows = [];
    TURN_FIELDS.forEach(function (field) {
      var values = turns.map(field[1]);
      if (values.some(function (v) { return v !== undefined; })) { rows.push([field[0]].concat(values)); }
    });
    miniTable(s, ["Turn"].concat(turns.map(function (t) { return t.turn; })), rows);
  }

  function showGolden(cell) {
    var s = section("Golden file");
    var g = cell.golden || { state: "no_folder" };
    if (g.state === "matches") {
      s.appendChild(el("p", "ok-line", "\u2713 matches its golden file"));
      s.appendChild(el("code", null, g.path));
    } else if (g.state === "differs") {
      s.appendChild(el("p", "warn-line", "differs from its golden file in " + g.fields.length + " field(s)"));
      s.appendChild(el("p", "caption", g.path));
      miniTable(s, ["Field", "Golden file", "This manifest"], g.fields.map(function (f) {
        return [f.field, { json: f.golden === undefined ? "absent" : f.golden }, { json: f.manifest === undefined ? "absent" : f.manifest }];
      }));
    } else if (g.state === "missing") {
      s.appendChild(el("p", "none-text", g.declared ? "No golden file: a cell decided without running has none." : "No golden file at " + g.path + "."));
    } else if (g.state === "unreadable") {
      s.appendChild(el("p", "warn-line", "The golden file " + g.path + " cannot be read: " + g.detail));
    } else {
      s.appendChild(el("p", "none-text", "No golden folder under --root: nothing to compare with."));
    }
  }

  // A cell run more than once (`--repeat`): its pass rate and every run.
  function showRepeats(cell) {
    if (!own(cell, "repeats")) { return; }
    var r = cell.repeats;
    var s = section("Repeats");
    s.appendChild(el("p", null, r.passes + " of " + r.runs + " runs passed; 95 % interval " +
      r.interval[0] + " to " + r.interval[1] + "; pass^" + r.runs + " " + (r.passAll ? "yes" : "no") +
      ", pass@" + r.runs + " " + (r.passAny ? "yes" : "no")));
    miniTable(s, ["Run", "Status"], r.statuses.map(function (status, i) { return [i + 1, status]; }));
  }

  function open(key) {
    if (!own(data.cells, key)) { return; }
    var cell = data.cells[key];
    var row = data.rows[cell.case + "/" + cell.condition];
    while (body.firstChild) { body.removeChild(body.firstChild); }
    title.textContent = key;
    showStatus(cell, row);
    showRepeats(cell);
    showRow(row);
    showFinding(cell);
    showMoved(cell);
    showRecords(cell);
    showGolden(cell);
    if (selected) { selected.classList.remove("sel"); }
    selected = buttons.get(key) || null;
    if (selected) { selected.classList.add("sel"); }
    panel.hidden = false;
    panel.scrollTop = 0;
    panel.focus({ preventScroll: true });
    try { history.replaceState(null, "", "#cell=" + encodeURIComponent(key)); } catch (e) { /* a page opened from a file may refuse */ }
  }

  function close() {
    panel.hidden = true;
    if (selected) { selected.focus({ preventScroll: true }); }
    try { history.replaceState(null, "", "#"); } catch (e) { /* as above */ }
  }

  function applyFilter(family, column) {
    filter = { family: family, column: column };
    document.querySelectorAll("#cells tbody[data-family]").forEach(function (tb) {
      tb.hidden = family !== null && tb.getAttribute("data-family") !== family;
    });
    document.querySelectorAll("#cells [data-column]").forEach(function (c) {
      c.hidden = column !== null && c.getAttribute("data-column") !== column;
    });
    var shown = 0;
    document.querySelectorAll("[data-square]").forEach(function (sq) {
      var on = sq.getAttribute("data-family") === family && sq.getAttribute("data-column") === column;
      sq.classList.toggle("selected", on);
      sq.setAttribute("aria-pressed", on ? "true" : "false");
    });
    buttons.forEach(function (b) { if (b.offsetParent !== null) { shown += 1; } });
    var bar = document.getElementById("filter");
    bar.hidden = family === null;
    document.getElementById("filter-text").textContent = family === null ? ""
      : "Showing " + statusWords(family) + " \u00d7 " + (columns.get(column) || column) + " (" + shown + " cells)";
  }

  document.addEventListener("click", function (event) {
    var t = event.target;
    if (!(t instanceof Element)) { return; }
    var target = t.closest("[data-cell]");
    if (target) { open(target.getAttribute("data-cell")); return; }
    target = t.closest("[data-goto]");
    if (target) {
      var key = target.getAttribute("data-goto");
      applyFilter(null, null);
      if (buttons.has(key)) { buttons.get(key).scrollIntoView({ block: "center" }); }
      open(key);
      return;
    }
    target = t.closest("[data-square]");
    if (target) {
      var family = target.getAttribute("data-family");
      var column = target.getAttribute("data-column");
      var again = filter.family === family && filter.column === column;
      applyFilter(again ? null : family, again ? null : column);
      if (!again) { document.getElementById("table").scrollIntoView({ block: "start" }); }
      return;
    }
    if (t.closest("#filter-clear")) { applyFilter(null, null); return; }
    if (t.closest("#dd-close")) { close(); }
  });

  document.addEventListener("keydown", function (event) {
    if (event.key === "Escape" && !panel.hidden) { close(); }
  });

  if (location.hash.indexOf("#cell=") === 0) {
    try { open(decodeURIComponent(location.hash.slice(6))); } catch (e) { /* not a key */ }
  }
}());

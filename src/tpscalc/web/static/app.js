// Progressive enhancement: when a control changes, fetch the same page with the new query and
// swap the results block in place. Without JavaScript the form is an ordinary GET form.
(function () {
  "use strict";
  var form = document.getElementById("controls");
  var results = document.getElementById("results");
  if (form && results && form.dataset.static) { staticSearch(form, results); return; }
  if (!form || !results || !window.fetch || !window.URLSearchParams) { return; }
  var pending = null;
  var timer = null;

  function query() {
    var params = new URLSearchParams();
    new FormData(form).forEach(function (value, key) {
      // A field whose value is its default (data-default) stays out of the address.
      var field = form.elements[key];
      var fallback = field && field.dataset ? field.dataset.default : undefined;
      if (value !== "" && value !== fallback) { params.append(key, value); }
    });
    return params;
  }

  function update() {
    var params = query();
    var shown = params.toString();
    params.set("partial", "1");
    if (pending) { pending.abort(); }
    pending = new AbortController();
    results.setAttribute("aria-busy", "true");
    fetch(form.getAttribute("action").split("?")[0] + "?" + params.toString(),
          { signal: pending.signal, headers: { "Accept": "text/html" } })
      .then(function (response) {
        if (!response.ok) { throw new Error("HTTP " + response.status); }
        return response.text();
      })
      .then(function (html) {
        var doc = new DOMParser().parseFromString(html, "text/html");
        var fresh = doc.getElementById("results");
        results.innerHTML = fresh ? fresh.innerHTML : doc.body.innerHTML;
        results.removeAttribute("aria-busy");
        history.replaceState(null, "", location.pathname + (shown ? "?" + shown : ""));
      })
      .catch(function (err) {
        if (err.name !== "AbortError") { form.submit(); }
      });
  }

  form.addEventListener("change", update);
  form.addEventListener("input", function (event) {
    if (event.target.type === "search" || event.target.type === "number") {
      clearTimeout(timer);
      timer = setTimeout(update, 300);
    }
  });
  form.addEventListener("submit", function (event) { event.preventDefault(); update(); });
  form.classList.add("live");

  // A static export has no server to ask. The page holds the table's first rows; every row is
  // in a data file (static_data.py) that this loads to page through and search all of them.
  // Without JavaScript the form stays hidden (it could do nothing) and a note says how many
  // rows the first page shows; should the data not load, the search filters the rows shown.
  function staticSearch(form, results) {
    var input = form.querySelector("input[type=search]");
    var table = results.querySelector("table[data-rows]");
    var visible = results.querySelectorAll("tbody tr");
    function filterShown() {
      var words = input.value.toLowerCase().split(/\s+/).filter(Boolean);
      Array.prototype.forEach.call(visible, function (row) {
        var text = row.textContent.toLowerCase();
        row.hidden = !words.every(function (w) { return text.indexOf(w) >= 0; });
      });
    }
    var search = filterShown;
    form.hidden = false;
    input.addEventListener("input", function () { search(); });
    form.addEventListener("submit", function (event) { event.preventDefault(); search(); });
    if (!table) { return; }
    var pending = 2;
    function loaded() {
      pending -= 1;
      var data = window.tpscalcData || {};
      if (pending === 0 && data.dict && data.rows) {
        search = staticTable(table, input, data.dict, data.rows);
        search();
      }
    }
    [table.dataset.dictionary, table.dataset.rows].forEach(function (src) {
      var tag = document.createElement("script");
      tag.src = src;
      tag.onload = loaded;
      document.head.appendChild(tag);
    });
  }

  // Renders the rows of `data` into `table`, a page at a time, as the server renders them.
  function staticTable(table, input, dict, data) {
    var words = dict.words;
    var perPage = parseInt(table.dataset.perPage, 10) || 50;
    var kind = data.kind;
    var body = table.tBodies[0];
    var page = 1;
    var chosen = data.rows;
    function esc(text) {
      return String(text).replace(/[&<>"']/g, function (c) {
        return { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c];
      });
    }
    function num(text) {  // the server's "1,234.5" in the page language's marks
      if (text === null || text === undefined) { return "—"; }
      return text.replace(/[,.]/g, function (c) {
        return c === "," ? dict.separators[0] : dict.separators[1];
      });
    }
    function speed(d) {
      if (!d) { return "—"; }
      var html = "<strong>" + esc(num(d[0])) + '</strong> <span class="unit">tok/s</span>\n' +
        '<span class="range">' + esc(num(d[1])) + "–" + esc(num(d[2])) + " · " +
        esc(words.confidence[d[3]]) + "</span>\n";
      if (d.length > 4) {
        html += '<span class="measured">' + esc(words.measured) + ": " + esc(num(d[4])) +
          "</span>";
      }
      return html;
    }
    function fit(index, shortBy) {
      var html = '<span class="fit fit-' + esc(words.fits[index]) + '">' + esc(words.fit[index]) +
        "</span>\n";
      if (shortBy) {
        html += '<span class="short">' + esc(words.short.replace("%(gib)s", num(shortBy))) +
          "</span>";
      }
      return html;
    }
    function quality(q) {  // [KLD or null, words by place], as the server's quality line
      if (!q) { return ""; }
      return ' <span class="quality">' + (q[0] ? "KLD " + esc(num(q[0])) + " · " : "") +
        esc(words.quality[q[1]]) + "</span>";
    }
    function modelRow(r) {  // a card: [card, decode, needs, quant, fit, short by, prompt, quality]
      var c = dict.cards[r[0]];
      return '<tr class="fit-' + esc(words.fits[r[4]]) + '">\n  <td>' + speed(r[1]) + "</td>\n" +
        '  <td><a href="../cards/' + esc(c[0]) + '.html">' + esc(c[1]) +
        '</a> <span class="vendor">' + esc(c[2]) + "</span></td>\n" +
        '  <td class="n">' + esc(c[3]) + '</td><td class="n">' + esc(c[4]) + "</td>\n" +
        "  <td>" + esc(c[5]) + '</td><td class="n">' + esc(num(r[2])) + "</td>\n" +
        "  <td>" + esc(r[3] || "—") + quality(r[7]) + "</td><td>" + fit(r[4], r[5]) + "</td>\n" +
        '  <td class="n">' + esc(num(r[6])) + "</td>\n</tr>";
    }
    function cardRow(r) {  // a model: [model, decode, needs, approximated, quant, fit, short, prompt,
      // quality]
      var m = dict.models[r[0]];
      return '<tr class="fit-' + esc(words.fits[r[5]]) + '">\n  <td>' + speed(r[1]) + "</td>\n" +
        '  <td><a href="../models/' + esc(m[0]) + '.html">' + esc(m[1]) +
        '</a> <span class="vendor">' + esc(m[2]) + "</span></td>\n" +
        '  <td class="n">' + esc(m[3]) + "</td><td>" + esc(m[4]) + "</td>\n" +
        '  <td class="n">' + esc(num(r[2])) + (r[3] ? ' <abbr title="' +
        esc(words.approximated) + '">≈</abbr>' : "") + "</td>\n" +
        "  <td>" + esc(r[4] || "—") + quality(r[8]) + "</td><td>" + fit(r[5], r[6]) + "</td>\n" +
        '  <td class="n">' + esc(num(r[7])) + "</td>\n</tr>";
    }
    function text(r) {
      var who = kind === "model" ? dict.cards[r[0]] : dict.models[r[0]];
      return (who[1] + " " + who[2] + " " + (kind === "model" ? r[3] : r[4])).toLowerCase();
    }
    var texts = data.rows.map(text);
    var columns = table.tHead.rows[0].cells.length;
    var nav = document.createElement("nav");
    nav.className = "pager";
    nav.setAttribute("aria-label", words.pages);
    var previous = document.createElement("button");
    var where = document.createElement("span");
    var next = document.createElement("button");
    previous.type = next.type = "button";
    previous.textContent = "‹ " + words.previous;
    next.textContent = words.next + " ›";
    where.className = "where";
    nav.appendChild(previous); nav.appendChild(where); nav.appendChild(next);
    table.parentNode.parentNode.insertBefore(nav, table.parentNode.nextSibling);
    var note = table.parentNode.parentNode.querySelector(".static-more");
    if (note) { note.hidden = true; }
    function show() {
      var pages = Math.max(1, Math.ceil(chosen.length / perPage));
      page = Math.min(Math.max(page, 1), pages);
      var rows = chosen.slice((page - 1) * perPage, page * perPage);
      body.innerHTML = rows.length ? rows.map(kind === "model" ? modelRow : cardRow).join("\n")
        : '<tr><td colspan="' + columns + '">' +
          esc(kind === "model" ? words.no_card : words.no_model) + "</td></tr>";
      where.textContent = words.page.replace("%(page)s", num(String(page)))
        .replace("%(pages)s", num(String(pages)));
      previous.disabled = page <= 1;
      next.disabled = page >= pages;
      nav.hidden = pages <= 1;
    }
    previous.addEventListener("click", function () { page -= 1; show(); });
    next.addEventListener("click", function () { page += 1; show(); });
    return function search() {
      var needles = input.value.toLowerCase().split(/\s+/).filter(Boolean);
      chosen = data.rows.filter(function (r, i) {
        return needles.every(function (w) { return texts[i].indexOf(w) >= 0; });
      });
      page = 1;
      show();
    };
  }
}());

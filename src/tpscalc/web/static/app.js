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

  // A static export has no server to ask: the search hides the table rows it does not match.
  // The form stays hidden without JavaScript, where it could do nothing.
  function staticSearch(form, results) {
    var input = form.querySelector("input[type=search]");
    var rows = results.querySelectorAll("tbody tr");
    function filter() {
      var words = input.value.toLowerCase().split(/\s+/).filter(Boolean);
      Array.prototype.forEach.call(rows, function (row) {
        var text = row.textContent.toLowerCase();
        row.hidden = !words.every(function (w) { return text.indexOf(w) >= 0; });
      });
    }
    form.hidden = false;
    input.addEventListener("input", filter);
    form.addEventListener("submit", function (event) { event.preventDefault(); filter(); });
  }
}());

// Renders every chart on the page: each `.chart` box has its Vega-Lite spec in the
// <script type="application/json"> element right after it. Expressions run through
// vega-interpreter, so no code is generated at run time and the page's
// Content-Security-Policy needs no 'unsafe-eval'. Errors are shown as plain text.
(function () {
  "use strict";

  function showError(box, message) {
    var note = document.createElement("p");
    note.className = "chart-error";
    note.textContent = "Chart not drawn: " + message;
    box.replaceChildren(note);
  }

  function draw(box) {
    var source = box.nextElementSibling;
    if (!source || source.type !== "application/json") {
      showError(box, "its data is missing");
      return;
    }
    var spec;
    try {
      spec = JSON.parse(source.textContent);
    } catch (err) {
      showError(box, "its data is not valid JSON");
      return;
    }
    if (typeof vegaEmbed !== "function" || typeof vegaInterpreter !== "object") {
      showError(box, "the chart library did not load");
      return;
    }
    if (spec.data && Array.isArray(spec.data.values) && spec.data.values.length === 0) {
      var empty = document.createElement("p");
      empty.className = "chart-empty";
      empty.textContent = "Nothing to draw.";
      box.replaceChildren(empty);
      return;
    }
    vegaEmbed(box, spec, {
      renderer: "svg",
      actions: false,
      // No <style> element injected (by vega-embed or its tooltip): the app's CSP has
      // style-src 'self', so the styles live in the page's style sheet instead.
      defaultStyle: false,
      tooltip: { disableDefaultStyle: true },
      ast: true,
      expr: vegaInterpreter.expressionInterpreter,
    }).catch(function (err) {
      showError(box, String((err && err.message) || err));
    });
  }

  // A link to a turn inside a closed <details> opens it, so the turn can be seen.
  function openTarget() {
    var id;
    try {
      id = decodeURIComponent(window.location.hash.slice(1));
    } catch (err) {
      return; // a malformed %-escape in the address names no element
    }
    var target = id ? document.getElementById(id) : null;
    for (var node = target; node; node = node.parentElement) {
      if (node.tagName === "DETAILS") {
        node.open = true;
      }
    }
    if (target) {
      target.scrollIntoView();
    }
  }

  function start() {
    document.querySelectorAll(".chart").forEach(draw);
    openTarget();
    window.addEventListener("hashchange", openTarget);
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();

/*! Tender's card field: runs inside the iframe on Tender's origin (CONTRACT §14). The number,
 * expiry and CVC stay in this frame; they leave it only in the tokenising request to this same
 * origin. The page around it gets the PaymentMethod (brand, last four digits), never the number.
 */
(function () {
  "use strict";
  var params = new URLSearchParams(location.search);
  var key = params.get("key") || "";
  var number = document.getElementById("number");
  var expiry = document.getElementById("expiry");
  var cvc = document.getElementById("cvc");
  var inputs = [number, expiry, cvc];
  var parentOrigin = null;

  function digits(s) {
    return s.replace(/\D/g, "");
  }

  function brand(d) {
    if (/^4/.test(d)) return "visa";
    if (/^(5[1-5]|2[2-7])/.test(d)) return "mastercard";
    if (/^3[47]/.test(d)) return "amex";
    if (/^(6011|65)/.test(d)) return "discover";
    return "unknown";
  }

  function luhn(d) {
    var sum = 0;
    for (var i = 0; i < d.length; i++) {
      var n = +d[d.length - 1 - i];
      if (i % 2) n = n * 2 > 9 ? n * 2 - 9 : n * 2;
      sum += n;
    }
    return sum % 10 === 0;
  }

  function problem(code, message) {
    return { type: "validation_error", code: code, message: message };
  }

  /** What the fields hold now: the card, and the first thing wrong with it. */
  function read() {
    var d = digits(number.value), e = digits(expiry.value), c = digits(cvc.value);
    var full = brand(d) === "amex" ? 15 : 16;
    var month = +e.slice(0, 2), year = 2000 + +e.slice(2, 4);
    var now = new Date();
    var err = null;
    if (d.length >= full && !luhn(d)) err = problem("invalid_number", "Your card number is invalid.");
    else if (e.length >= 2 && (month < 1 || month > 12)) err = problem("invalid_expiry_month", "Your card's expiration date is invalid.");
    else if (e.length === 4 && (year < now.getFullYear() || (year === now.getFullYear() && month < now.getMonth() + 1)))
      err = problem("invalid_expiry_year_past", "Your card's expiration year is in the past.");
    var missing = null;
    if (d.length < full) missing = problem("incomplete_number", "Your card number is incomplete.");
    else if (e.length < 4) missing = problem("incomplete_expiry", "Your card's expiration date is incomplete.");
    else if (c.length < 3) missing = problem("incomplete_cvc", "Your card's security code is incomplete.");
    return {
      number: d, month: month, year: year, cvc: c, brand: brand(d), error: err, missing: missing,
      empty: !d && !e && !c, complete: !err && !missing,
    };
  }

  function send(message) {
    message.tender = 1;
    if (parentOrigin) window.parent.postMessage(message, parentOrigin);
  }

  function changed() {
    var s = read();
    number.classList.toggle("bad", !!(s.error && s.error.code === "invalid_number"));
    expiry.classList.toggle("bad", !!(s.error && s.error.code !== "invalid_number"));
    send({ kind: "change", empty: s.empty, complete: s.complete, brand: s.brand, error: s.error || undefined });
  }

  number.addEventListener("input", function () {
    number.value = digits(number.value).slice(0, 19).replace(/(\d{4})(?=\d)/g, "$1 ");
    changed();
  });
  expiry.addEventListener("input", function () {
    var e = digits(expiry.value).slice(0, 4);
    expiry.value = e.length > 2 ? e.slice(0, 2) + " / " + e.slice(2) : e;
    changed();
  });
  cvc.addEventListener("input", function () {
    cvc.value = digits(cvc.value).slice(0, 4);
    changed();
  });

  /** The shop's style for the text, from a short list of properties with plain values. */
  (function style(raw) {
    var base;
    try {
      base = (JSON.parse(raw || "{}") || {}).base || {};
    } catch (e) {
      return;
    }
    var allowed = { color: "color", fontSize: "fontSize", fontFamily: "fontFamily", fontWeight: "fontWeight" };
    Object.keys(allowed).forEach(function (k) {
      var v = base[k];
      if (typeof v === "string" && /^[\w\s#.,%'"()-]{1,80}$/.test(v)) {
        inputs.forEach(function (i) {
          i.style[allowed[k]] = v;
        });
      }
    });
  })(params.get("style"));

  function tokenize(id) {
    var s = read();
    if (s.error || s.missing) {
      send({ kind: "result", id: id, body: { error: s.error || s.missing } });
      return;
    }
    var body = new URLSearchParams();
    body.append("type", "card");
    body.append("card[number]", s.number);
    body.append("card[exp_month]", String(s.month));
    body.append("card[exp_year]", String(s.year));
    body.append("card[cvc]", s.cvc);
    fetch("/v1/payment_methods", {
      method: "POST",
      headers: { Authorization: "Bearer " + key, "Content-Type": "application/x-www-form-urlencoded" },
      body: body.toString(),
    })
      .then(function (r) {
        return r.json();
      })
      .then(
        function (b) {
          send({ kind: "result", id: id, body: b });
        },
        function () {
          send({ kind: "result", id: id, body: { error: { type: "api_connection_error", message: "Tender could not be reached." } } });
        }
      );
  }

  // Only the page that framed this field talks to it; its origin is fixed by its first word.
  window.addEventListener("message", function (e) {
    if (e.source !== window.parent) return;
    var m = e.data;
    if (!m || m.tender !== 1) return;
    if (m.kind === "hello") {
      if (!parentOrigin) parentOrigin = e.origin;
      if (e.origin === parentOrigin) send({ kind: "ready" });
      return;
    }
    if (e.origin !== parentOrigin) return;
    if (m.kind === "tokenize") tokenize(m.id);
    else if (m.kind === "focus") number.focus();
    else if (m.kind === "clear") {
      inputs.forEach(function (i) {
        i.value = "";
      });
      changed();
    }
  });
})();

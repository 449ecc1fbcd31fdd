/*! tender.js 1.0.0: Tender's browser library (CONTRACT §14). No dependencies; no third-party code.
 * The card field is an iframe from Tender's origin: this page never sees the card number.
 *   const tender = Tender("pk_test_…", {apiBase: "https://pay.example.com"});
 *   const card = tender.elements().create("card"); card.mount("#card");
 *   const {paymentIntent, error} = await tender.confirmCardPayment(secret, {payment_method: {card}});
 */
(function (global) {
  "use strict";
  var VERSION = "1.0.0";
  var script = document.currentScript;
  var served = script && script.src ? new URL(script.src).origin : global.location.origin;

  function error(type, code, message) {
    return { error: { type: type, code: code, message: message } };
  }

  function formBody(fields, prefix, out) {
    out = out || new URLSearchParams();
    Object.keys(fields || {}).forEach(function (k) {
      var v = fields[k], name = prefix ? prefix + "[" + k + "]" : k;
      if (v === undefined || v === null) return;
      if (typeof v === "object") formBody(v, name, out);
      else out.append(name, String(v));
    });
    return out;
  }

  /** Tender(publishableKey, {apiBase}): apiBase is the service's origin, without /v1. */
  function Tender(key, options) {
    if (!(this instanceof Tender)) return new Tender(key, options);
    if (typeof key !== "string" || !/^pk_(test|live)_\w+$/.test(key)) {
      throw new Error("Tender: give a publishable key (pk_test_… or pk_live_…), never a secret key");
    }
    var base = String((options && options.apiBase) || served).replace(/\/+$/, "");
    this._key = key;
    this._base = base;
    this._origin = new URL(base).origin;
  }
  Tender.version = VERSION;

  /** One call to the API with the publishable key: the parsed body, or {error}. */
  Tender.prototype._api = function (method, path, fields) {
    var init = { method: method, headers: { Authorization: "Bearer " + this._key } };
    var url = this._base + path;
    if (method === "GET") url += "?" + formBody(fields).toString();
    else {
      init.headers["Content-Type"] = "application/x-www-form-urlencoded";
      init.body = formBody(fields).toString();
    }
    return fetch(url, init).then(
      function (r) {
        return r.json().catch(function () {
          return error("api_error", "unreadable_response", "Tender answered " + r.status + ".");
        });
      },
      function () {
        return error("api_connection_error", "connection_failed", "Tender could not be reached.");
      }
    );
  };

  Tender.prototype.elements = function () {
    var tender = this;
    return {
      create: function (type, options) {
        if (type !== "card") throw new Error('Tender: the only element is "card"');
        return new CardElement(tender, options || {});
      },
    };
  };

  /** {type: "card", card} → {paymentMethod} or {error}. `billing_details` is taken and not
   * sent: Tender keeps no billing details on a PaymentMethod. */
  Tender.prototype.createPaymentMethod = function (data) {
    data = data || {};
    if (data.type && data.type !== "card") {
      return Promise.resolve(error("invalid_request_error", "parameter_invalid", "Only card payment methods are made here."));
    }
    if (!(data.card instanceof CardElement)) {
      return Promise.resolve(error("invalid_request_error", "parameter_missing", "Give the mounted card element as card."));
    }
    return data.card._tokenize().then(function (pm) {
      return pm.error ? { error: pm.error } : { paymentMethod: pm };
    });
  };

  /** (clientSecret, {payment_method: {card} | "pm_…"}) → {paymentIntent} or {error}. */
  Tender.prototype.confirmCardPayment = function (secret, data) {
    return this._confirm("payment_intents", "paymentIntent", "last_payment_error", secret, data);
  };

  /** (clientSecret, {payment_method: {card} | "pm_…"}) → {setupIntent} or {error}. */
  Tender.prototype.confirmCardSetup = function (secret, data) {
    return this._confirm("setup_intents", "setupIntent", "last_setup_error", secret, data);
  };

  Tender.prototype._confirm = function (collection, name, lastError, secret, data) {
    var tender = this;
    var id = typeof secret === "string" ? secret.split("_secret_")[0] : "";
    if (!id || id === secret) {
      return Promise.resolve(error("invalid_request_error", "parameter_invalid", "That is not a client secret."));
    }
    data = data || {};
    var fields = { client_secret: secret };
    var pm = data.payment_method;
    var ready = Promise.resolve(null);
    if (typeof pm === "string") fields.payment_method = pm;
    else if (pm && pm.card instanceof CardElement) ready = pm.card._tokenize();
    if (data.setup_future_usage) fields.setup_future_usage = data.setup_future_usage;
    return ready
      .then(function (made) {
        if (made && made.error) return { error: made.error };
        if (made) fields.payment_method = made.id;
        return tender._api("POST", "/v1/" + collection + "/" + id + "/confirm", fields);
      })
      .then(function (intent) {
        if (intent.error) return intent;
        var action = intent.status === "requires_action" && intent.next_action;
        if (action && action.redirect_to_url) {
          return tender._authenticate(collection, id, secret, action.redirect_to_url.url);
        }
        return intent;
      })
      .then(function (intent) {
        if (intent.error) return { error: intent.error };
        var out = {};
        if (intent.status === "requires_payment_method" && intent[lastError]) {
          out.error = Object.assign({ type: "card_error" }, intent[lastError]);
          out.error[collection === "payment_intents" ? "payment_intent" : "setup_intent"] = intent;
          return out;
        }
        out[name] = intent;
        return out;
      });
  };

  /** Tender's 3-D Secure page over this one; resolves with the intent once it has moved on. */
  Tender.prototype._authenticate = function (collection, id, secret, url) {
    var tender = this;
    return new Promise(function (resolve) {
      var cover = document.createElement("div");
      cover.style.cssText =
        "position:fixed;inset:0;z-index:2147483647;background:rgba(20,20,40,.55);display:flex;align-items:center;justify-content:center";
      var frame = document.createElement("iframe");
      frame.title = "Confirm your payment";
      frame.style.cssText = "border:0;border-radius:12px;background:#fff;width:min(420px,94vw);height:min(520px,90vh)";
      var close = document.createElement("button");
      close.type = "button";
      close.textContent = "×";
      close.setAttribute("aria-label", "Close");
      close.style.cssText =
        "position:absolute;top:12px;right:16px;font:28px/1 system-ui;color:#fff;background:none;border:0;cursor:pointer";
      cover.appendChild(frame);
      cover.appendChild(close);
      var loads = 0;
      function finish(result) {
        if (cover.parentNode) cover.parentNode.removeChild(cover);
        resolve(result);
      }
      function check() {
        return tender._api("GET", "/v1/" + collection + "/" + id, { client_secret: secret });
      }
      // Each load after the first is the page's answer to the customer's choice.
      frame.addEventListener("load", function () {
        if (++loads < 2) return;
        check().then(function (intent) {
          if (intent.error || intent.status !== "requires_action") finish(intent);
        });
      });
      close.addEventListener("click", function () {
        check().then(function (intent) {
          if (intent.error || intent.status !== "requires_action") return finish(intent);
          finish(error("invalid_request_error", "payment_intent_authentication_failure",
            "The customer closed the authentication window before finishing."));
        });
      });
      frame.src = url;
      document.body.appendChild(cover);
    });
  };

  /** The card field: an iframe from Tender's origin holding the number, expiry and CVC. */
  function CardElement(tender, options) {
    this._tender = tender;
    this._options = options;
    this._frame = null;
    this._ready = null;
    this._calls = {};
    this._next = 1;
    this._handlers = {};
    this._receive = this._receive.bind(this);
  }

  CardElement.prototype.mount = function (target) {
    var host = typeof target === "string" ? document.querySelector(target) : target;
    if (!host) throw new Error("Tender: nothing to mount the card field on (" + target + ")");
    if (this._frame) this.unmount();
    var element = this;
    var query = "key=" + encodeURIComponent(this._tender._key);
    if (this._options.style) query += "&style=" + encodeURIComponent(JSON.stringify(this._options.style));
    var frame = document.createElement("iframe");
    frame.title = "Secure card input";
    frame.setAttribute("scrolling", "no");
    frame.style.cssText = "border:0;width:100%;height:46px;display:block;background:transparent;color-scheme:normal";
    this._ready = new Promise(function (resolve) {
      element._readyNow = resolve;
    });
    frame.addEventListener("load", function () {
      frame.contentWindow.postMessage({ tender: 1, kind: "hello" }, element._tender._origin);
    });
    frame.src = this._tender._base + "/v1/elements/card?" + query;
    global.addEventListener("message", this._receive);
    host.appendChild(frame);
    this._frame = frame;
  };

  CardElement.prototype.unmount = function () {
    global.removeEventListener("message", this._receive);
    if (this._frame && this._frame.parentNode) this._frame.parentNode.removeChild(this._frame);
    this._frame = null;
  };
  CardElement.prototype.destroy = CardElement.prototype.unmount;

  /** on("ready" | "change", handler); change gives {elementType, empty, complete, brand, error}. */
  CardElement.prototype.on = function (event, handler) {
    (this._handlers[event] = this._handlers[event] || []).push(handler);
    return this;
  };

  CardElement.prototype.clear = function () {
    this._send({ kind: "clear" });
  };
  CardElement.prototype.focus = function () {
    this._send({ kind: "focus" });
  };

  CardElement.prototype._emit = function (event, value) {
    (this._handlers[event] || []).forEach(function (h) {
      h(value);
    });
  };

  CardElement.prototype._send = function (message) {
    message.tender = 1;
    if (this._frame) this._frame.contentWindow.postMessage(message, this._tender._origin);
  };

  CardElement.prototype._receive = function (e) {
    if (!this._frame || e.source !== this._frame.contentWindow || e.origin !== this._tender._origin) return;
    var m = e.data;
    if (!m || m.tender !== 1) return;
    if (m.kind === "ready") {
      this._readyNow();
      this._emit("ready", { elementType: "card" });
    } else if (m.kind === "change") {
      this._emit("change", { elementType: "card", empty: m.empty, complete: m.complete, brand: m.brand, error: m.error });
    } else if (m.kind === "result" && this._calls[m.id]) {
      this._calls[m.id](m.body);
      delete this._calls[m.id];
    }
  };

  /** The frame turns what the customer typed into a PaymentMethod: its body, or {error}. */
  CardElement.prototype._tokenize = function () {
    var element = this;
    if (!this._frame) {
      return Promise.resolve(error("invalid_request_error", "element_not_mounted", "Mount the card field first."));
    }
    var late = new Promise(function (resolve) {
      setTimeout(resolve, 15000, false);
    });
    var loaded = this._ready.then(function () {
      return true;
    });
    return Promise.race([loaded, late]).then(function (ok) {
      if (!ok) return error("api_connection_error", "card_field_not_loaded", "The card field did not load.");
      return new Promise(function (resolve) {
        var id = element._next++;
        element._calls[id] = function (body) {
          resolve(body.error ? { error: body.error } : body);
        };
        element._send({ kind: "tokenize", id: id });
      });
    });
  };

  global.Tender = Tender;
})(window);

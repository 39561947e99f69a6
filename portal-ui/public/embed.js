/* global window, document, CustomEvent */
/*
 * Emporia checkout embed: opens a checkout link in an overlay iframe on your page.
 *
 *   <script src="https://billing.example.com/portal/embed.js" defer></script>
 *   <a href="https://billing.example.com/checkout/polar_c_…" data-emporia-checkout>Buy</a>
 *
 * The checkout must have been created with `embed_origin` set to your page's origin. The page in the
 * iframe posts `{type: 'POLAR_CHECKOUT', event}` messages (loaded, confirmed, success), re-dispatched
 * on the link as `emporia:checkout:<event>` DOM events; `EmporiaCheckout.open(url)` does the same from
 * code and returns an object with `on(event, fn)` and `close()`.
 */
(function () {
  'use strict';
  if (window.EmporiaCheckout) return;
  var TYPE = 'POLAR_CHECKOUT';

  function open(url, source) {
    var target = new URL(url, window.location.href);
    var listeners = {};
    var confirmed = false;
    var backdrop = document.createElement('div');
    backdrop.setAttribute('data-emporia-checkout-overlay', '');
    backdrop.style.cssText =
      'position:fixed;inset:0;z-index:2147483647;background:rgba(15,23,42,.55);display:flex;align-items:center;justify-content:center;';
    var frame = document.createElement('iframe');
    frame.src = target.href;
    frame.title = 'Checkout';
    frame.allow = 'payment; clipboard-write';
    frame.style.cssText =
      'width:min(960px,100vw);height:min(900px,100vh);border:0;border-radius:12px;background:#fff;box-shadow:0 20px 60px rgba(0,0,0,.35);';
    var close = document.createElement('button');
    close.type = 'button';
    close.textContent = '×';
    close.setAttribute('aria-label', 'Close checkout');
    close.style.cssText =
      'position:absolute;top:12px;right:16px;font:28px/1 system-ui,sans-serif;color:#fff;background:none;border:0;cursor:pointer;';
    backdrop.appendChild(frame);
    backdrop.appendChild(close);

    function emit(event, data) {
      (listeners[event] || []).forEach(function (fn) {
        fn(data);
      });
      if (source) source.dispatchEvent(new CustomEvent('emporia:checkout:' + event, { detail: data, bubbles: true }));
    }
    function onMessage(e) {
      if (e.origin !== target.origin || e.source !== frame.contentWindow) return;
      var data = e.data;
      if (!data || data.type !== TYPE) return;
      if (data.event === 'confirmed') confirmed = true;
      if (data.event === 'close') return api.close();
      emit(data.event, data);
      if (data.event === 'success' && data.redirect && data.successURL) window.location.href = data.successURL;
    }
    function onKey(e) {
      if (e.key === 'Escape' && !confirmed) api.close();
    }
    var api = {
      on: function (event, fn) {
        (listeners[event] = listeners[event] || []).push(fn);
        return api;
      },
      close: function () {
        if (!backdrop.parentNode) return;
        window.removeEventListener('message', onMessage);
        document.removeEventListener('keydown', onKey);
        backdrop.parentNode.removeChild(backdrop);
        emit('close', { event: 'close' });
      },
    };
    close.addEventListener('click', function () {
      api.close();
    });
    window.addEventListener('message', onMessage);
    document.addEventListener('keydown', onKey);
    document.body.appendChild(backdrop);
    frame.focus();
    return api;
  }

  document.addEventListener('click', function (e) {
    var link = e.target && e.target.closest ? e.target.closest('[data-emporia-checkout]') : null;
    if (!link) return;
    var href = link.getAttribute('href') || link.getAttribute('data-emporia-checkout');
    if (!href) return;
    e.preventDefault();
    open(href, link);
  });

  window.EmporiaCheckout = { open: open };
})();

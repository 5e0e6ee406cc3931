// theme.js — the reader's colour theme, applied before the first paint: loaded
// in <head> without `defer`, before the stylesheet (the Content-Security-Policy
// allows no inline script). A theme chosen with the header's button ("light" or
// "dark" in localStorage under kb-theme) becomes <html data-theme>, which
// style.css prefers to the system's setting; nothing stored follows the system.
// It also marks <html class="js">, so that controls that need a script (the
// theme button) show only when scripts run. page.js owns the button.
(function () {
  'use strict';
  var root = document.documentElement;
  root.classList.add('js');
  try {
    var theme = window.localStorage.getItem('kb-theme');
    if (theme === 'light' || theme === 'dark') root.setAttribute('data-theme', theme);
  } catch (e) {
    // Storage refused (privacy settings, a sandbox): the system's theme it is.
  }
})();

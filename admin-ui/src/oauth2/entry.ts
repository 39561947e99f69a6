/**
 * The OpenID configuration's authorization endpoint is `/dashboard/oauth2/authorize?…` (a real path a
 * third-party app can link to): turn it into the console's hash route before the app starts.
 */
if (/\/dashboard\/oauth2\/authorize\/?$/.test(window.location.pathname)) {
  window.history.replaceState(null, '', `/dashboard/#/oauth2/authorize${window.location.search}`);
}
export {};

// Waytrack through the shop's own origin (docs/first-party.md), as a Cloudflare Worker on the
// route `SHOP/wt/*` with the variable WAYTRACK_ORIGIN (e.g. https://waytrack.example.com). The
// page then loads https://SHOP/wt/tag.js, the tag sends its clicks to
// https://SHOP/wt/v1/track/click, and Waytrack answers them with lasting first-party cookies
// (_wt_vid, _fbc, _fbp, _ttp). Only the standard Workers runtime API is used;
// server/test/e2e/first-party-proxies.test.ts runs this very file in Node.

const PREFIX = '/wt';
// Only the tag and its tracking endpoints; nothing else of Waytrack answers on the shop's domain.
const PATHS = new Set(['/tag.js', '/v1/track/click', '/v1/track/identify']);

export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    const path = url.pathname.startsWith(`${PREFIX}/`) ? url.pathname.slice(PREFIX.length) : '';
    if (!PATHS.has(path)) return new Response('Not found', { status: 404 });
    const headers = new Headers(request.headers);
    // The shop's own cookies (sessions, carts) stay with the shop: the tag's ids travel in the body.
    headers.delete('cookie');
    // Waytrack's own name, from the URL fetched.
    headers.delete('host');
    // The host the browser asked: Waytrack sets cookies only when it is the store's domain (or a
    // subdomain) and the page is on it. Replaces any Forwarded header the client sent.
    headers.set('forwarded', `host=${url.host};proto=${url.protocol.slice(0, -1)}`);
    // The visitor's address (used by Waytrack with TRUST_PROXY=true).
    const ip = request.headers.get('cf-connecting-ip');
    if (ip) headers.set('x-forwarded-for', ip);
    else headers.delete('x-forwarded-for');
    const body = request.method === 'GET' || request.method === 'HEAD' ? undefined : await request.arrayBuffer();
    // Waytrack's answer as it is, Set-Cookie included.
    return fetch(new URL(path + url.search, env.WAYTRACK_ORIGIN), {
      method: request.method,
      headers,
      body,
      redirect: 'manual',
    });
  },
};

/**
 * The API reference at /docs, served whole by the service itself: no CDN script, no third-party
 * code that could change under us or see the admin's token. A small page that renders
 * /openapi.json (grouped by tag, with each operation's permission code, request and response
 * schemas) and can send a request with a pasted token. Its script and style are served from
 * /docs/ beside it, so a strict Content-Security-Policy (self only) holds. A login helper at the
 * top shows the captcha as an image, logs in and fills the token field that "Send" uses; any
 * response holding an image data URL (the captcha) is shown as the image too.
 */
export const DOCS_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Edge Admin API</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/docs/docs.css">
<script src="/docs/docs.js" defer></script>
</head>
<body>
<header>
  <h1>Edge Admin API</h1>
  <p>Rendered from <a href="/openapi.json">/openapi.json</a>. Every response is the envelope {status, msg, data, traceId}.</p>
  <form id="login" class="bar login">
    <input id="login-name" placeholder="Login name" value="admin" autocomplete="username" aria-label="Login name">
    <input id="login-password" type="password" placeholder="Password" autocomplete="current-password" aria-label="Password">
    <span id="captcha" class="captcha" hidden>
      <button type="button" id="captcha-new" title="Show another code"><img id="captcha-img" alt="Verification code (click for another)"></button>
      <input id="captcha-code" placeholder="Code in the picture" autocomplete="off" aria-label="Verification code">
    </span>
    <button type="submit" id="login-submit">Log in</button>
    <button type="button" id="logout" hidden>Log out</button>
    <span id="login-status" role="status"></span>
  </form>
  <div class="bar">
    <input id="filter" type="search" placeholder="Filter by path, summary or permission" autocomplete="off">
    <input id="token" type="password" placeholder="Bearer token for “Send” (filled by Log in; kept in this tab only)" autocomplete="off">
  </div>
</header>
<main id="ops"><p>Loading…</p></main>
</body>
</html>`;

/** Content-Security-Policy of the docs page and its assets: everything from this origin only. */
export const DOCS_CSP = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

export const DOCS_CSS = `
body{font:15px/1.45 system-ui,sans-serif;margin:0;color:#1b1f24;background:#f6f7f9}
header{background:#fff;border-bottom:1px solid #dde1e6;padding:16px 24px;position:sticky;top:0}
h1{margin:0 0 4px;font-size:22px} h2{margin:28px 0 8px;font-size:18px}
.bar{display:flex;gap:8px;margin-top:8px} .bar input{flex:1;padding:6px 8px;border:1px solid #c4c9d0;border-radius:4px}
main{padding:8px 24px 48px;max-width:1100px}
details{background:#fff;border:1px solid #dde1e6;border-radius:6px;margin:6px 0}
summary{cursor:pointer;padding:8px 12px;display:flex;gap:10px;align-items:baseline}
.m{font:600 12px monospace;text-transform:uppercase;padding:2px 6px;border-radius:3px;color:#fff;background:#3a6ea5}
.m.post{background:#2f8a4a} .p{font-family:monospace} .s{color:#555} .perm{margin-left:auto;font:12px monospace;color:#7a4b00}
.body{padding:4px 14px 12px;border-top:1px solid #eef0f3}
pre{background:#f3f4f6;padding:8px;overflow:auto;border-radius:4px;font-size:13px}
textarea{width:100%;min-height:90px;font:13px monospace} button{margin-top:6px;padding:4px 12px}
.login{align-items:center;flex-wrap:wrap} .login input{flex:0 1 180px} .login button{margin-top:0}
.captcha{display:inline-flex;gap:8px;align-items:center} .captcha[hidden]{display:none}
.captcha button{padding:0;border:1px solid #c4c9d0;background:#fff;cursor:pointer;line-height:0}
#login-status{color:#555} #login-status.error{color:#b00020}
img.shown{display:block;margin:6px 0;border:1px solid #dde1e6} img.shown[hidden]{display:none}
`;

export const DOCS_JS = `
'use strict';
(async () => {
  const main = document.getElementById('ops');
  const $ = (id) => document.getElementById(id);
  const el = (tag, cls, text) => { const e = document.createElement(tag); if (cls) e.className = cls; if (text !== undefined) e.textContent = text; return e; };
  /** The envelope of a call to this service: {status, msg, data} (a network failure as status 0). */
  const call = async (path, init) => {
    try { const res = await fetch(path, init); return await res.json(); }
    catch (e) { return { status: 0, msg: String(e), data: null }; }
  };

  // --- Login helper: the captcha as a picture, the token into the field "Send" uses -------------
  let codeKey = null;
  const status = (text, error) => { $('login-status').textContent = text; $('login-status').className = error ? 'error' : ''; };
  const loadCaptcha = async () => {
    const r = await call('/auth/captcha');
    if (r.status !== 200) { status(r.msg, true); return; }
    codeKey = r.data.codeKey;
    $('captcha').hidden = !r.data.enabled;
    $('captcha-code').value = '';
    if (r.data.enabled) $('captcha-img').src = r.data.image;
  };
  $('captcha-new').addEventListener('click', () => void loadCaptcha());
  $('login').addEventListener('submit', async (e) => {
    e.preventDefault();
    $('login-submit').disabled = true;
    const body = { loginName: $('login-name').value.trim(), password: $('login-password').value };
    if (codeKey) { body.codeKey = codeKey; body.securityCode = $('captcha-code').value.trim(); }
    const r = await call('/auth/login', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    $('login-submit').disabled = false;
    if (r.status === 200) {
      $('token').value = r.data.token;
      $('login-password').value = '';
      $('logout').hidden = false;
      $('captcha').hidden = true;
      codeKey = null;
      status('Logged in as ' + body.loginName + ': the token is filled in for “Send”.', false);
    } else {
      status(r.msg, true);
      // Right or wrong, the attempt used the code up.
      await loadCaptcha();
    }
  });
  $('logout').addEventListener('click', async () => {
    const token = $('token').value.trim();
    if (token) await call('/auth/logout', { method: 'POST', headers: { authorization: 'Bearer ' + token } });
    $('token').value = '';
    $('logout').hidden = true;
    status('Logged out.', false);
    await loadCaptcha();
  });
  void loadCaptcha();

  let doc;
  try {
    const res = await fetch('/openapi.json');
    doc = await res.json();
  } catch (e) {
    main.textContent = 'Could not load /openapi.json: ' + e;
    return;
  }
  const schemas = (doc.components && doc.components.schemas) || {};
  const resolve = (s, seen) => {
    if (!s || typeof s !== 'object') return s;
    if (s.$ref) {
      const name = s.$ref.split('/').pop();
      if (seen.includes(name)) return '<' + name + '>';
      return resolve(schemas[name], seen.concat(name));
    }
    if (Array.isArray(s)) return s.map((x) => resolve(x, seen));
    const out = {};
    for (const [k, v] of Object.entries(s)) out[k] = resolve(v, seen);
    return out;
  };
  const outline = (s, depth) => {
    s = resolve(s, []);
    if (!s || typeof s !== 'object') return String(s);
    if (depth > 6) return '…';
    const pad = '  '.repeat(depth);
    if (s.type === 'object' && s.properties) {
      const req = new Set(s.required || []);
      return '{\\n' + Object.entries(s.properties).map(([k, v]) => pad + '  ' + k + (req.has(k) ? '' : '?') + ': ' + outline(v, depth + 1)).join('\\n') + '\\n' + pad + '}';
    }
    if (s.type === 'array') return outline(s.items, depth) + '[]';
    const alts = s.anyOf || s.oneOf;
    if (alts) return alts.map((a) => outline(a, depth)).join(' | ');
    let t = Array.isArray(s.type) ? s.type.join(' | ') : (s.type || (s.enum ? 'enum' : s.const !== undefined ? JSON.stringify(s.const) : 'any'));
    if (s.enum) t = s.enum.map((x) => JSON.stringify(x)).join(' | ');
    return t + (s.description ? '  // ' + s.description : '');
  };
  const groups = new Map();
  for (const [path, ops] of Object.entries(doc.paths || {})) {
    for (const [method, op] of Object.entries(ops)) {
      if (typeof op !== 'object' || !op.responses) continue;
      const tag = (op.tags && op.tags[0]) || 'Other';
      if (!groups.has(tag)) groups.set(tag, []);
      groups.get(tag).push({ path, method, op });
    }
  }
  main.textContent = '';
  const entries = [];
  for (const [tag, list] of groups) {
    const h = el('h2', '', tag);
    main.append(h);
    for (const { path, method, op } of list) {
      const d = el('details');
      const sum = el('summary');
      sum.append(el('span', 'm ' + method, method), el('span', 'p', path), el('span', 's', op.summary || ''));
      if (op['x-permission']) sum.append(el('span', 'perm', op['x-permission']));
      d.append(sum);
      const body = el('div', 'body');
      if (op.description) body.append(el('p', '', op.description));
      const params = (op.parameters || []).map((p) => p.name + (p.required ? '' : '?') + ' (' + p.in + '): ' + outline(p.schema, 1));
      if (params.length) { body.append(el('h4', '', 'Parameters')); body.append(el('pre', '', params.join('\\n'))); }
      const reqSchema = op.requestBody && op.requestBody.content && Object.entries(op.requestBody.content)[0];
      if (reqSchema) { body.append(el('h4', '', 'Request body (' + reqSchema[0] + ')')); body.append(el('pre', '', outline(reqSchema[1].schema, 0))); }
      body.append(el('h4', '', 'Responses'));
      for (const [code, r] of Object.entries(op.responses)) {
        const c = r.content && r.content['application/json'];
        body.append(el('pre', '', code + ' ' + (r.description || '') + (c && code === '200' ? '\\n' + outline(c.schema, 0) : '')));
      }
      const tryIt = el('div');
      const input = el('textarea');
      input.placeholder = method === 'get' ? 'query string, e.g. id=1' : 'JSON body';
      const send = el('button', '', 'Send');
      const out = el('pre', '', '');
      const shot = el('img', 'shown');
      shot.alt = 'Image in the response';
      shot.hidden = true;
      send.addEventListener('click', async () => {
        const headers = {};
        const token = document.getElementById('token').value.trim();
        if (token) headers.authorization = 'Bearer ' + token;
        let url = path;
        const init = { method: method.toUpperCase(), headers };
        if (method === 'get') { if (input.value.trim()) url += '?' + input.value.trim(); }
        else if (!reqSchema || reqSchema[0] === 'application/json') { headers['content-type'] = 'application/json'; init.body = input.value.trim() || '{}'; }
        try {
          const res = await fetch(url, init);
          const text = await res.text();
          let shown = text;
          try { shown = JSON.stringify(JSON.parse(text), null, 2); } catch {}
          out.textContent = res.status + '\\n' + shown;
          // An image in the answer (the captcha's data URL) is shown as one, not only as text.
          const image = /"(data:image\\/(?:svg\\+xml|png|jpeg|gif|webp);base64,[A-Za-z0-9+\\/=]+)"/.exec(text);
          shot.hidden = !image;
          if (image) shot.src = image[1];
        } catch (e) { out.textContent = String(e); }
      });
      if (!reqSchema || reqSchema[0] === 'application/json') tryIt.append(input, send, out, shot);
      body.append(tryIt);
      d.append(body);
      main.append(d);
      entries.push({ d, h, text: (path + ' ' + (op.summary || '') + ' ' + (op['x-permission'] || '')).toLowerCase() });
    }
  }
  document.getElementById('filter').addEventListener('input', (e) => {
    const q = e.target.value.trim().toLowerCase();
    for (const x of entries) x.d.hidden = q !== '' && !x.text.includes(q);
  });
})();
`;

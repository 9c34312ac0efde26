// Example admin SPA: plain fetch against the Edge Admin API, no framework, no build step.
// Everything the server sends is shown with textContent, never parsed as HTML.
(() => {
  'use strict';

  const query = new URLSearchParams(location.search);
  // ?api=http://host:port picks the API; it must list this page's origin in CORS_ORIGINS.
  const API = (query.get('api') || 'http://127.0.0.1:3000').replace(/\/+$/, '');
  const PAGE_SIZE = Math.min(100, Math.max(1, Number(query.get('pageSize')) || 10));
  const TOKEN_KEY = 'edge-admin-token@' + API;

  const $ = (id) => document.getElementById(id);
  const show = (el, on) => {
    el.hidden = !on;
  };

  let codeKey = null;
  let captchaEnabled = false;
  let usersPage = 1;

  /** An API error: the envelope's msg, with the HTTP status beside it. */
  class ApiError extends Error {
    constructor(status, msg) {
      super(msg);
      this.status = status;
    }
  }

  const token = () => sessionStorage.getItem(TOKEN_KEY);

  // D1 read replication (README "Read replication"): the newest X-D1-Bookmark the API sent is sent
  // back with every request, so a read after a write sees the write. Bookmarks sort oldest first.
  // Without replication the API sends none and nothing is sent.
  const BOOKMARK_KEY = 'edge-admin-bookmark@' + API;
  const rememberBookmark = (res) => {
    const b = res.headers.get('X-D1-Bookmark');
    const old = sessionStorage.getItem(BOOKMARK_KEY);
    if (b && (!old || b > old)) sessionStorage.setItem(BOOKMARK_KEY, b);
  };

  /** Calls the API and unwraps the envelope {status, msg, data, traceId}; throws ApiError on failure. */
  async function api(path, { method = 'GET', json, form } = {}) {
    const headers = {};
    const t = token();
    if (t) headers.Authorization = 'Bearer ' + t;
    const bookmark = sessionStorage.getItem(BOOKMARK_KEY);
    if (bookmark) headers['X-D1-Bookmark'] = bookmark;
    let body;
    if (json !== undefined) {
      headers['Content-Type'] = 'application/json';
      body = JSON.stringify(json);
    } else if (form) {
      body = form; // the browser sets the multipart boundary
    }
    const res = await fetch(API + path, { method, headers, body });
    rememberBookmark(res);
    let envelope = null;
    try {
      envelope = await res.json();
    } catch {
      // not JSON: fall through to a generic message
    }
    if (!res.ok || !envelope || envelope.status !== 200) {
      const msg = envelope && typeof envelope.msg === 'string' ? envelope.msg : 'Request failed (HTTP ' + res.status + ')';
      if (res.status === 401 && t && !path.startsWith('/auth/')) {
        // The session ended elsewhere (logout, password reset, disabled account).
        sessionStorage.removeItem(TOKEN_KEY);
        void showLogin(msg);
      }
      throw new ApiError(res.status, msg);
    }
    return envelope.data;
  }

  function setView(view) {
    document.body.dataset.view = view;
    delete document.body.dataset.ready;
    show($('login-view'), view === 'login');
    show($('app-view'), view === 'app');
  }

  function showError(el, msg) {
    el.textContent = msg || '';
    show(el, Boolean(msg));
  }

  // --- login ------------------------------------------------------------------------------------

  async function loadCaptcha() {
    const img = $('captcha-img');
    try {
      const c = await api('/auth/captcha');
      captchaEnabled = c.enabled;
      codeKey = c.codeKey;
      show($('captcha-row'), c.enabled);
      $('security-code').required = c.enabled;
      $('security-code').value = '';
      if (c.enabled) img.src = c.image;
      else img.removeAttribute('src');
    } catch (e) {
      showError($('login-error'), e.message);
    }
  }

  async function showLogin(msg) {
    setView('login');
    showError($('login-error'), msg || '');
    $('password').value = '';
    await loadCaptcha();
  }

  async function onLogin(event) {
    event.preventDefault();
    const submit = $('login-submit');
    submit.disabled = true;
    showError($('login-error'), '');
    const body = { loginName: $('login-name').value.trim(), password: $('password').value };
    if (captchaEnabled && codeKey) {
      body.codeKey = codeKey;
      body.securityCode = $('security-code').value.trim();
    }
    try {
      const result = await api('/auth/login', { method: 'POST', json: body });
      sessionStorage.setItem(TOKEN_KEY, result.token);
      $('password').value = '';
      await showApp();
    } catch (e) {
      showError($('login-error'), e.message);
      // A code is single-use: right or wrong, the attempt consumed it.
      if (captchaEnabled) await loadCaptcha();
    } finally {
      submit.disabled = false;
    }
  }

  async function onLogout() {
    try {
      await api('/auth/logout', { method: 'POST' });
    } catch {
      // Already logged out on the server: forgetting the token is all that is left.
    }
    sessionStorage.removeItem(TOKEN_KEY);
    sessionStorage.removeItem(BOOKMARK_KEY);
    await showLogin('');
  }

  // --- logged in ----------------------------------------------------------------------------------

  function menuList(items) {
    const ul = document.createElement('ul');
    ul.className = 'tree';
    for (const m of items) ul.append(menuItem(m));
    return ul;
  }

  function menuItem(m) {
    const li = document.createElement('li');
    li.dataset.type = m.type;
    const label = document.createElement('span');
    label.className = 'menu-title';
    label.textContent = m.title;
    li.append(label);
    if (m.path) {
      const path = document.createElement('code');
      path.textContent = m.path;
      li.append(' ', path);
    }
    if (m.children && m.children.length) li.append(menuList(m.children));
    return li;
  }

  function cell(text) {
    const td = document.createElement('td');
    td.textContent = text == null ? '' : String(text);
    return td;
  }

  async function loadUsers(pageNo) {
    const note = $('users-note');
    try {
      const page = await api('/app/sysUser/page', { method: 'POST', json: { pageNo, pageSize: PAGE_SIZE } });
      usersPage = page.current;
      const rows = page.records.map((u) => {
        const tr = document.createElement('tr');
        tr.append(cell(u.id), cell(u.loginName), cell(u.nickName), cell(u.status), cell(u.createdAt.slice(0, 10)));
        return tr;
      });
      $('users-body').replaceChildren(...rows);
      $('users-page-info').textContent = 'Page ' + page.current + ' of ' + Math.max(1, page.pages) + ' (' + page.total + ' users)';
      $('users-prev').disabled = page.current <= 1;
      $('users-next').disabled = page.current >= page.pages;
      show($('users-table'), true);
      showError(note, '');
    } catch (e) {
      $('users-body').replaceChildren();
      $('users-prev').disabled = $('users-next').disabled = true;
      $('users-page-info').textContent = '';
      show($('users-table'), false);
      note.textContent = e.status === 404 ? 'This server has no user list.' : e.message;
      show(note, true);
    }
  }

  /** Signed urls are relative to the API and work without the Authorization header. */
  function showImage(record) {
    $('image-preview').src = API + record.url;
    $('image-caption').textContent = record.name + ' — ' + record.width + '×' + record.height;
    show($('image-figure'), true);
  }

  async function loadImage() {
    const note = $('image-note');
    showError(note, '');
    try {
      const page = await api('/app/sysImage/page', { method: 'POST', json: { pageNo: 1, pageSize: 1 } });
      show($('image-upload').parentElement, true);
      if (page.records.length) showImage(page.records[0]);
      else show($('image-figure'), false);
    } catch (e) {
      show($('image-figure'), false);
      // No image module on this server: offering an upload would only fail.
      show($('image-upload').parentElement, e.status !== 404);
      note.textContent = e.status === 404 ? 'This server has no image store.' : e.message;
      show(note, true);
    }
  }

  async function onUpload() {
    const input = $('image-upload');
    const file = input.files && input.files[0];
    if (!file) return;
    const form = new FormData();
    form.append('file', file, file.name);
    const note = $('image-note');
    try {
      showImage(await api('/app/sysImage/upload', { method: 'POST', form }));
      showError(note, '');
    } catch (e) {
      showError(note, e.message);
    } finally {
      input.value = '';
    }
  }

  async function showApp() {
    let info;
    try {
      info = await api('/app/sysLoginUser/getLoginUserInformation');
    } catch (e) {
      if (e.status !== 401) await showLogin(e.message);
      return;
    }
    $('nick-name').textContent = info.user.nickName;
    $('login-name-shown').textContent = info.user.loginName;
    $('role-codes').textContent = info.roles.length ? info.roles.join(', ') : '(none)';
    $('menu-tree').replaceChildren(...info.menus.map(menuItem));
    setView('app');
    await Promise.all([loadUsers(1), loadImage()]);
    document.body.dataset.ready = 'true';
  }

  // --- wiring -------------------------------------------------------------------------------------

  $('api-base').textContent = API;
  $('login-form').addEventListener('submit', onLogin);
  $('captcha-refresh').addEventListener('click', () => void loadCaptcha());
  $('logout').addEventListener('click', () => void onLogout());
  $('users-prev').addEventListener('click', () => void loadUsers(usersPage - 1));
  $('users-next').addEventListener('click', () => void loadUsers(usersPage + 1));
  $('image-upload').addEventListener('change', () => void onUpload());

  if (token()) void showApp();
  else void showLogin('');
})();

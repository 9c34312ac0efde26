// Example admin console: plain fetch against the Edge Admin API, no framework, no build step.
// The sidebar is the menu tree getLoginUserInformation returns; each menu's `component` picks the
// page below. Buttons appear only for the permission codes the user holds. Everything the server
// sends is shown with textContent, never parsed as HTML, except a notice's content: HTML the server
// sanitised, shown in a sandboxed frame that runs no script (htmlView). Labels and colours of
// status-like values come from the dictionaries (sysDict/all).
(() => {
  'use strict';

  const query = new URLSearchParams(location.search);
  // ?api=http://host:port picks the API; it must list this page's origin in CORS_ORIGINS.
  const API = (query.get('api') || 'http://127.0.0.1:3000').replace(/\/+$/, '');
  const PAGE_SIZE = Math.min(100, Math.max(1, Number(query.get('pageSize')) || 10));
  const TOKEN_KEY = 'edge-admin-token@' + API;
  // D1 read replication (docs/deploy-cloudflare.md): the newest X-D1-Bookmark the API sent goes
  // back with every request, so a read after a write sees the write. Bookmarks sort oldest first.
  const BOOKMARK_KEY = 'edge-admin-bookmark@' + API;

  const $ = (id) => document.getElementById(id);
  const show = (el, on) => {
    el.hidden = !on;
  };

  /** h('button', {class: 'x', onclick: f}, 'text', child…): an element; strings become text nodes. */
  function h(tag, attrs, ...children) {
    const el = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === undefined || v === null || v === false) continue;
      if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
      else if (k === 'class') el.className = v;
      else if (k in el && typeof v !== 'string') el[k] = v;
      else el.setAttribute(k, v === true ? '' : v);
    }
    for (const c of children.flat()) if (c !== null && c !== undefined && c !== false) el.append(c instanceof Node ? c : String(c));
    return el;
  }

  // --- API ----------------------------------------------------------------------------------------

  /** An API error: the envelope's msg, with the HTTP status beside it. */
  class ApiError extends Error {
    constructor(status, msg) {
      super(msg);
      this.status = status;
    }
  }

  const token = () => sessionStorage.getItem(TOKEN_KEY);
  const rememberBookmark = (res) => {
    const b = res.headers.get('X-D1-Bookmark');
    const old = sessionStorage.getItem(BOOKMARK_KEY);
    if (b && (!old || b > old)) sessionStorage.setItem(BOOKMARK_KEY, b);
  };

  /** fetch with the Bearer token and the bookmark; the raw Response. */
  async function request(path, { method = 'GET', json, form } = {}) {
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
    return res;
  }

  /** Calls the API and unwraps the envelope {status, msg, data, traceId}; throws ApiError on failure. */
  async function api(path, options = {}) {
    const res = await request(path, options);
    let envelope = null;
    try {
      envelope = await res.json();
    } catch {
      // not JSON: fall through to a generic message
    }
    if (!res.ok || !envelope || envelope.status !== 200) {
      const msg = envelope && typeof envelope.msg === 'string' ? envelope.msg : 'Request failed (HTTP ' + res.status + ')';
      if (res.status === 401 && token() && !path.startsWith('/auth/')) {
        // The session ended elsewhere (logout, forced logout, password reset, disabled account).
        sessionStorage.removeItem(TOKEN_KEY);
        void showLogin(msg);
      }
      if (res.status === 403 && msg.startsWith(MFA_REQUIRED)) requireSecondFactor();
      throw new ApiError(res.status, msg);
    }
    return envelope.data;
  }
  const post = (path, json) => api(path, { method: 'POST', json: json === undefined ? {} : json });

  // --- small helpers --------------------------------------------------------------------------------

  const when = (iso) => (iso ? iso.replace('T', ' ').slice(0, 19) : '');
  const bytes = (n) => (n < 1024 ? n + ' B' : n < 1048576 ? (n / 1024).toFixed(1) + ' KiB' : (n / 1048576).toFixed(1) + ' MiB');
  const pill = (text, kind) => h('span', { class: 'pill ' + (kind || text) }, text);

  const escapeAttr = (v) => String(v).replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

  /**
   * Rich text as the server sanitised and returned it (notices), in a sandboxed frame: nothing in
   * it runs script or reaches this page (or its token), its CSP loads images from the API only,
   * and links open in a new tab. Never fed with what was typed here: only with the server's answer.
   */
  function htmlView(html) {
    const apiOrigin = new URL(API).origin;
    const head =
      '<!doctype html><meta charset="utf-8">' +
      '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; img-src ' + escapeAttr(apiOrigin) + '; style-src \'unsafe-inline\'">' +
      '<base href="' + escapeAttr(apiOrigin) + '/" target="_blank">' +
      '<style>body{font:14px/1.45 system-ui,sans-serif;margin:8px;color:#1b1f24}img{max-width:100%}</style>';
    return h('iframe', { class: 'html-view', sandbox: 'allow-popups allow-popups-to-escape-sandbox', srcdoc: head + html, title: 'Content' });
  }

  let noticeTimer;
  /** A line under the header: what just happened (or what failed). */
  function notice(msg, error) {
    const el = $('notice');
    el.textContent = msg;
    el.className = 'notice' + (error ? ' error' : '');
    show(el, Boolean(msg));
    clearTimeout(noticeTimer);
    if (msg && !error) noticeTimer = setTimeout(() => show(el, false), 6000);
  }

  /** Runs a write; its error becomes the notice. Returns whether it succeeded. */
  async function attempt(fn, done) {
    try {
      await fn();
      if (done) notice(done);
      return true;
    } catch (e) {
      notice(e.message, true);
      return false;
    }
  }

  /** A tree (children arrays) as rows with their depth, in order. */
  function flatten(nodes, depth = 0, out = []) {
    for (const n of nodes) {
      out.push({ node: n, depth });
      if (n.children && n.children.length) flatten(n.children, depth + 1, out);
    }
    return out;
  }

  // --- dialog form ----------------------------------------------------------------------------------

  /**
   * A modal form. fields: {name, label, type: text|password|number|date|select|checkboxes|textarea|
   * checkbox|html (shown, not edited: see htmlView), value, options: [{value, label, depth}],
   * required, strings (checkboxes whose values stay strings)}. Resolves true once onSubmit(values) succeeded, false when cancelled; an ApiError it
   * throws is shown in the dialog, which stays open.
   */
  function openForm(title, fields, onSubmit, { ok = 'Save' } = {}) {
    const dialog = $('dialog');
    $('dialog-title').textContent = title;
    $('dialog-ok').textContent = ok;
    showError($('dialog-error'), '');
    const inputs = new Map();
    const rows = fields.map((f) => {
      let input;
      if (f.type === 'select') {
        input = h('select', { name: f.name }, ...f.options.map((o) => h('option', { value: String(o.value), selected: String(o.value) === String(f.value ?? '') }, '\u2003'.repeat(o.depth || 0) + o.label)));
      } else if (f.type === 'checkboxes') {
        const key = f.strings ? String : Number;
        const chosen = new Set((f.value || []).map(key));
        input = h(
          'div',
          { class: 'checks', 'data-name': f.name },
          ...f.options.map((o) =>
            h('label', { class: 'check', style: 'padding-left:' + 1.2 * (o.depth || 0) + 'em' }, h('input', { type: 'checkbox', value: String(o.value), checked: chosen.has(key(o.value)) }), ' ', o.label),
          ),
        );
      } else if (f.type === 'checkbox') {
        input = h('input', { type: 'checkbox', name: f.name, checked: Boolean(f.value) });
      } else if (f.type === 'html') {
        input = htmlView(f.value);
      } else if (f.type === 'textarea') {
        input = h('textarea', { name: f.name, rows: 6, readOnly: Boolean(f.readOnly) }, f.value ?? '');
      } else {
        input = h('input', { name: f.name, type: f.type || 'text', value: f.value ?? '', required: Boolean(f.required), readOnly: Boolean(f.readOnly), autocomplete: 'off' });
      }
      inputs.set(f.name, { f, input });
      if (f.type === 'html') return h('div', { class: 'html-field' }, h('div', { class: 'html-label' }, f.label), input);
      return f.type === 'checkbox' ? h('label', { class: 'check' }, input, ' ', f.label) : h('label', {}, f.label, input);
    });
    $('dialog-body').replaceChildren(...rows);
    const read = () => {
      const values = {};
      for (const [name, { f, input }] of inputs) {
        if (f.readOnly || f.type === 'html') continue;
        if (f.type === 'checkboxes') values[name] = [...input.querySelectorAll('input:checked')].map((c) => (f.strings ? c.value : Number(c.value)));
        else if (f.type === 'checkbox') values[name] = input.checked;
        else if (f.type === 'number') values[name] = input.value === '' ? undefined : Number(input.value);
        else if (f.type === 'select' && f.numeric) values[name] = input.value === '' ? null : Number(input.value);
        else values[name] = f.optional && input.value.trim() === '' ? null : input.value;
      }
      return values;
    };
    return new Promise((resolve) => {
      const close = (result) => {
        $('dialog-form').onsubmit = null;
        $('dialog-cancel').onclick = null;
        dialog.onclose = null;
        if (dialog.open) dialog.close();
        resolve(result);
      };
      $('dialog-form').onsubmit = async (e) => {
        e.preventDefault();
        $('dialog-ok').disabled = true;
        try {
          await onSubmit(read());
          close(true);
        } catch (err) {
          showError($('dialog-error'), err.message);
        } finally {
          $('dialog-ok').disabled = false;
        }
      };
      $('dialog-cancel').onclick = () => close(false);
      dialog.onclose = () => close(false);
      dialog.showModal();
      const first = dialog.querySelector('input:not([readonly]):not([type=checkbox]), select, textarea');
      if (first) first.focus();
    });
  }

  // --- tables and paged lists ---------------------------------------------------------------------

  /**
   * A table of `rows`. columns: [{title, cell(row) → text or Node}]; actions(row) → buttons;
   * selectable: a checkbox per row, read with table.selected().
   */
  function table(columns, rows, { actions, selectable, empty = 'Nothing here yet.' } = {}) {
    const checks = [];
    const head = h('tr', {}, selectable ? h('th', { class: 'sel' }) : null, ...columns.map((c) => h('th', {}, c.title)), actions ? h('th', {}, '') : null);
    const body = rows.map((row) => {
      const check = selectable ? h('input', { type: 'checkbox', 'aria-label': 'Select' }) : null;
      if (check) checks.push({ check, row });
      const cells = columns.map((c) => {
        const v = c.cell(row);
        return h('td', { class: c.class }, v === null || v === undefined ? '' : v);
      });
      return h('tr', {}, check ? h('td', { class: 'sel' }, check) : null, ...cells, actions ? h('td', { class: 'row-actions' }, ...actions(row)) : null);
    });
    if (!rows.length) body.push(h('tr', {}, h('td', { class: 'empty', colSpan: columns.length + (selectable ? 1 : 0) + (actions ? 1 : 0) }, empty)));
    const el = h('table', { class: 'data' }, h('thead', {}, head), h('tbody', {}, ...body));
    el.selected = () => checks.filter((c) => c.check.checked).map((c) => c.row);
    return el;
  }

  const button = (label, onclick, opts = {}) => h('button', { type: 'button', class: opts.class, onclick, title: opts.title }, label);

  /**
   * A page query (POST …/page) with a filter bar and a pager. filters: [{name, label, options:
   * [value or {value, label}], value (initial), numeric (sent as a number)}]; order: {sortField,
   * sortOrder} (else the endpoint's own); render(records) → the table. Returns {reload, table(),
   * filter(name) → its current value}.
   */
  function pagedList(container, { endpoint, filters = [], order = {}, toolbar = [], render }) {
    let pageNo = 1;
    let current = null;
    const inputs = filters.map((f) => {
      const el = f.options
        ? h(
            'select',
            { 'aria-label': f.label, 'data-filter': f.name },
            h('option', { value: '' }, f.label + ': any'),
            ...f.options.map((o) => (typeof o === 'object' ? h('option', { value: String(o.value) }, o.label) : h('option', { value: o }, o))),
          )
        : h('input', { type: 'search', placeholder: f.label, 'aria-label': f.label, 'data-filter': f.name });
      if (f.value !== undefined && f.value !== null) el.value = String(f.value);
      if (f.numeric) el.dataset.numeric = 'true';
      return el;
    });
    const search = () => {
      pageNo = 1;
      void load();
    };
    for (const i of inputs) i.addEventListener(i.tagName === 'SELECT' ? 'change' : 'keydown', (e) => (i.tagName === 'SELECT' || e.key === 'Enter') && search());
    const info = h('span', { class: 'muted page-info' });
    const prev = button('Previous', () => ((pageNo -= 1), void load()));
    const next = button('Next', () => ((pageNo += 1), void load()));
    const holder = h('div', { class: 'table-holder' });
    container.append(
      h('div', { class: 'toolbar' }, ...inputs, filters.length ? button('Search', search) : null, h('span', { class: 'grow' }), ...toolbar),
      holder,
      h('div', { class: 'pager' }, prev, info, next),
    );
    async function load() {
      const params = {};
      for (const i of inputs) if (i.value.trim()) params[i.dataset.filter] = i.dataset.numeric ? Number(i.value) : i.value.trim();
      try {
        const page = await post(endpoint, { ...order, pageNo, pageSize: PAGE_SIZE, params });
        pageNo = page.current;
        current = render(page.records);
        holder.replaceChildren(current);
        info.textContent = 'Page ' + page.current + ' of ' + Math.max(1, page.pages) + ' (' + page.total + ')';
        prev.disabled = page.current <= 1;
        next.disabled = page.current >= page.pages;
      } catch (e) {
        holder.replaceChildren(h('p', { class: 'error' }, e.message));
        prev.disabled = next.disabled = true;
        info.textContent = '';
      }
    }
    return { reload: load, table: () => current, filter: (name) => inputs.find((i) => i.dataset.filter === name)?.value ?? '' };
  }

  // --- pages ----------------------------------------------------------------------------------------

  let me = null;
  const can = (code) => me.permissions.includes('*') || me.permissions.includes(code);
  const statusToggle = (row, endpoint, code, reload, idField = 'id') =>
    can(code)
      ? button(row.status === 'enabled' ? 'Disable' : 'Enable', () =>
          attempt(() => post(endpoint, { [idField]: row.id, status: row.status === 'enabled' ? 'disabled' : 'enabled' }), 'Status changed.').then(reload),
        )
      : null;
  const deleteButton = (what, endpoint, code, ids, reload) =>
    can(code) ? button('Delete', () => confirm('Delete ' + what + '?') && attempt(() => post(endpoint, { ids }), 'Deleted.').then(reload), { class: 'danger' }) : null;

  // Dictionaries (sysDict/all, for every logged-in user): labels, tag colours and select options
  // of the values the API answers. Read afresh by each page that shows them, so a label edited on
  // the Dictionaries page shows on the next page opened.
  let dicts = {};
  async function loadDicts() {
    dicts = await api('/app/sysDict/all').catch(() => ({}));
  }
  const dictItem = (code, value) => (dicts[code] || []).find((i) => i.value === String(value));
  /** A value as its dictionary labels it, coloured by the item's tagType; the bare value without one. */
  function dictPill(code, value) {
    const item = dictItem(code, value);
    if (!item) return pill(String(value));
    return h('span', { class: 'pill tag-' + item.tagType + (item.cssClass ? ' ' + item.cssClass : ''), title: item.remark || undefined, 'data-value': item.value }, item.label);
  }
  /**
   * A dictionary's items as select options ("label (remark)"); `fallback` values when it has none.
   * A record's `current` value the dictionary lacks (its item disabled) stays offered, so saving
   * the form never changes it unasked.
   */
  const dictOptions = (code, fallback = [], current) => {
    const items = dicts[code] || [];
    const options = items.length
      ? items.map((i) => ({ value: i.value, label: i.remark && i.remark !== i.label ? i.label + ' (' + i.remark + ')' : i.label }))
      : fallback.map((v) => ({ value: v, label: v }));
    if (current !== undefined && current !== null && !options.some((o) => o.value === String(current))) options.push({ value: String(current), label: String(current) });
    return options;
  };
  const dictDefault = (code, fallback) => (dicts[code] || []).find((i) => i.isDefault)?.value ?? fallback;
  const STATUSES = ['enabled', 'disabled'];

  /** A link to another page of this console (with a query), or null when the user has no such page. */
  const pageLink = (path, query) => (routes.has(path) ? '#' + path + (query ? '?' + new URLSearchParams(query) : '') : null);

  /** Every record of a page query (for pickers), 100 a page (the most a page gives). */
  async function allRecords(endpoint, body = {}) {
    const records = [];
    for (let pageNo = 1; ; pageNo++) {
      const page = await post(endpoint, { ...body, pageNo, pageSize: 100 });
      records.push(...page.records);
      if (page.current >= page.pages) return records;
    }
  }

  async function orgOptions() {
    const tree = await api('/app/sysOrg/tree').catch(() => []);
    return [{ value: '', label: '(none)' }, ...flatten(tree).map(({ node, depth }) => ({ value: node.id, label: node.name, depth }))];
  }
  async function roleOptions() {
    const roles = await api('/app/sysRole/list').catch(() => []);
    return roles.map((r) => ({ value: r.id, label: r.name + ' (' + r.code + ')' }));
  }

  async function usersPage(main) {
    // Posts only for those who may list them: without the list, a user's posts are left as they are.
    const [orgs, roles, posts] = await Promise.all([orgOptions(), can('sys:user:grantRole') ? roleOptions() : [], can('sys:post:list') ? api('/app/sysPost/list').catch(() => null) : null]);
    const postName = new Map((posts || []).map((p) => [p.id, p.name]));
    // A post the user holds that the list lacks (disabled since) stays offered, ticked.
    const postOptions = (held) => [...postName].map(([value, label]) => ({ value, label })).concat(held.filter((id) => !postName.has(id)).map((id) => ({ value: id, label: 'post #' + id })));
    const userFields = (u) => [
      { name: 'nickName', label: 'Nick name', value: u?.nickName ?? '' },
      { name: 'email', label: 'Email', value: u?.email ?? '', optional: true },
      { name: 'phone', label: 'Phone', value: u?.phone ?? '', optional: true },
      { name: 'orgId', label: 'Organisation', type: 'select', numeric: true, options: orgs, value: u?.orgId ?? '' },
      ...(posts ? [{ name: 'postIds', label: 'Posts', type: 'checkboxes', options: postOptions(u?.postIds ?? []), value: u?.postIds ?? [] }] : []),
      { name: 'remark', label: 'Remark', value: u?.remark ?? '', optional: true },
    ];
    const list = pagedList(main, {
      endpoint: '/app/sysUser/page',
      filters: [
        { name: 'loginName', label: 'Login name starts with' },
        { name: 'nickName', label: 'Nick name contains' },
        { name: 'status', label: 'Status', options: ['enabled', 'disabled'] },
      ],
      toolbar: [
        can('sys:user:add') &&
          button('Add user', () =>
            openForm(
              'Add user',
              [
                { name: 'loginName', label: 'Login name', required: true },
                { name: 'password', label: 'Password', type: 'password', required: true },
                ...userFields(null),
                ...(roles.length ? [{ name: 'roleIds', label: 'Roles', type: 'checkboxes', options: roles, value: [] }] : []),
              ],
              (v) => post('/app/sysUser/add', v),
            ).then((done) => done && (notice('User added.'), list.reload())),
          { class: 'primary' }),
      ],
      render: (records) =>
        table(
          [
            { title: 'ID', cell: (u) => u.id },
            { title: 'Login name', cell: (u) => u.loginName },
            { title: 'Nick name', cell: (u) => u.nickName },
            { title: 'Organisation', cell: (u) => u.orgName },
            ...(posts ? [{ title: 'Posts', cell: (u) => (u.postIds || []).map((id) => postName.get(id) || '#' + id).join(', ') }] : []),
            { title: 'Status', cell: (u) => pill(u.status) },
            { title: 'Last login', cell: (u) => when(u.lastLoginAt) },
            { title: 'Created', cell: (u) => when(u.createdAt).slice(0, 10) },
          ],
          records,
          {
            actions: (u) => [
              can('sys:user:edit') &&
                button('Edit', () =>
                  openForm('Edit ' + u.loginName, userFields(u), (v) => post('/app/sysUser/edit', { id: u.id, version: u.version, ...v })).then(
                    (done) => done && (notice('User saved.'), list.reload()),
                  ),
                ),
              can('sys:user:grantRole') &&
                button('Roles', async () => {
                  const own = await api('/app/sysUser/ownRole?id=' + u.id).catch((e) => (notice(e.message, true), null));
                  if (!own) return;
                  const done = await openForm('Roles of ' + u.loginName, [{ name: 'roleIds', label: 'Roles', type: 'checkboxes', options: roles, value: own }], (v) =>
                    post('/app/sysUser/grantRole', { userId: u.id, roleIds: v.roleIds }),
                  );
                  if (done) notice('Roles granted.');
                }),
              can('sys:user:resetPassword') &&
                button('Reset password', () =>
                  openForm('New password for ' + u.loginName, [{ name: 'newPassword', label: 'New password', type: 'password', required: true }], (v) =>
                    post('/app/sysUser/resetPassword', { id: u.id, newPassword: v.newPassword }),
                  ).then((done) => done && notice('Password reset; the user must log in again.')),
                ),
              statusToggle(u, '/app/sysUser/changeStatus', 'sys:user:changeStatus', () => list.reload()),
              deleteButton('user ' + u.loginName, '/app/sysUser/delete', 'sys:user:delete', [u.id], () => list.reload()),
            ],
          },
        ),
    });
    await list.reload();
  }

  /** A page over a tree endpoint (organisations, menus): rows indented by depth. */
  async function treePage(main, { endpoint, columns, toolbar, actions }) {
    const holder = h('div', { class: 'table-holder' });
    main.append(h('div', { class: 'toolbar' }, h('span', { class: 'grow' }), ...toolbar(() => reload())), holder);
    async function reload() {
      try {
        const rows = flatten(await api(endpoint));
        holder.replaceChildren(table(columns, rows, { actions: (r) => actions(r.node, reload) }));
      } catch (e) {
        holder.replaceChildren(h('p', { class: 'error' }, e.message));
      }
    }
    await reload();
  }
  const indented = (text, depth) => h('span', { style: 'padding-left:' + 1.4 * depth + 'em' }, depth ? '└ ' : '', text);

  async function orgsPage(main) {
    const fields = (o, parents) => [
      { name: 'parentId', label: 'Parent', type: 'select', numeric: true, options: [{ value: 0, label: '(top level)' }, ...parents.slice(1)], value: o?.parentId ?? 0 },
      { name: 'name', label: 'Name', value: o?.name ?? '', required: true },
      { name: 'code', label: 'Code', value: o?.code ?? '', required: true },
      { name: 'sort', label: 'Sort', type: 'number', value: o?.sort ?? 0 },
      { name: 'remark', label: 'Remark', value: o?.remark ?? '', optional: true },
    ];
    const add = (parentId, reload) => async () => {
      const parents = await orgOptions();
      const done = await openForm('Add organisation', fields({ parentId }, parents), (v) => post('/app/sysOrg/add', v));
      if (done) notice('Organisation added.'), reload();
    };
    await treePage(main, {
      endpoint: '/app/sysOrg/tree',
      toolbar: (reload) => [can('sys:org:add') && button('Add organisation', add(0, reload), { class: 'primary' })],
      columns: [
        { title: 'Name', cell: (r) => indented(r.node.name, r.depth) },
        { title: 'Code', cell: (r) => r.node.code },
        { title: 'Sort', cell: (r) => r.node.sort },
        { title: 'Status', cell: (r) => pill(r.node.status) },
      ],
      actions: (o, reload) => [
        can('sys:org:add') && button('Add child', add(o.id, reload)),
        can('sys:org:edit') &&
          button('Edit', async () => {
            const done = await openForm('Edit ' + o.name, fields(o, await orgOptions()), (v) => post('/app/sysOrg/edit', { id: o.id, version: o.version, ...v }));
            if (done) notice('Organisation saved.'), reload();
          }),
        deleteButton('organisation ' + o.name, '/app/sysOrg/delete', 'sys:org:delete', [o.id], reload),
      ],
    });
  }

  const SCOPES = ['all', 'orgAndBelow', 'org', 'custom', 'self'];

  async function rolesPage(main) {
    const fields = (r) => [
      { name: 'name', label: 'Name', value: r?.name ?? '', required: true },
      { name: 'code', label: 'Code', value: r?.code ?? '', required: true },
      { name: 'sort', label: 'Sort', type: 'number', value: r?.sort ?? 0 },
      ...(can('sys:role:grantDataScope') ? [{ name: 'dataScope', label: 'Data scope', type: 'select', options: SCOPES.map((s) => ({ value: s, label: s })), value: r?.dataScope ?? 'self' }] : []),
      { name: 'remark', label: 'Remark', value: r?.remark ?? '', optional: true },
    ];
    const list = pagedList(main, {
      endpoint: '/app/sysRole/page',
      filters: [
        { name: 'name', label: 'Name contains' },
        { name: 'status', label: 'Status', options: ['enabled', 'disabled'] },
      ],
      toolbar: [
        can('sys:role:add') &&
          button('Add role', () => openForm('Add role', fields(null), (v) => post('/app/sysRole/add', v)).then((done) => done && (notice('Role added.'), list.reload())), {
            class: 'primary',
          }),
      ],
      render: (records) =>
        table(
          [
            { title: 'Name', cell: (r) => r.name },
            { title: 'Code', cell: (r) => h('code', {}, r.code) },
            { title: 'Data scope', cell: (r) => r.dataScope },
            { title: 'Sort', cell: (r) => r.sort },
            { title: 'Status', cell: (r) => pill(r.status) },
          ],
          records,
          {
            actions: (r) => [
              can('sys:role:edit') &&
                button('Edit', () =>
                  openForm('Edit ' + r.name, fields(r), (v) => post('/app/sysRole/edit', { id: r.id, version: r.version, ...v })).then((done) => done && (notice('Role saved.'), list.reload())),
                ),
              can('sys:role:grantMenu') && button('Menus', () => grantMenus(r)),
              statusToggle(r, '/app/sysRole/changeStatus', 'sys:role:changeStatus', () => list.reload()),
              deleteButton('role ' + r.name, '/app/sysRole/delete', 'sys:role:delete', [r.id], () => list.reload()),
            ],
          },
        ),
    });
    await list.reload();
  }

  /** The menu grants of a role: the whole menu tree (buttons included) as checkboxes. */
  async function grantMenus(role) {
    try {
      const [tree, own] = await Promise.all([api('/app/sysMenu/tree'), api('/app/sysRole/ownMenu?id=' + role.id)]);
      const options = flatten(tree).map(({ node, depth }) => ({ value: node.id, label: node.title + (node.permission ? '  [' + node.permission + ']' : ''), depth }));
      const done = await openForm('Menus of ' + role.name, [{ name: 'menuIds', label: 'Menus and buttons this role grants', type: 'checkboxes', options, value: own }], (v) =>
        post('/app/sysRole/grantMenu', { roleId: role.id, menuIds: v.menuIds }),
      );
      if (done) notice('Menus granted to ' + role.name + '.');
    } catch (e) {
      notice(e.message, true);
    }
  }

  const MENU_TYPES = ['directory', 'menu', 'button'];

  async function menusPage(main) {
    const fields = (m, parents) => [
      { name: 'parentId', label: 'Parent', type: 'select', numeric: true, options: [{ value: 0, label: '(top level)' }, ...parents], value: m?.parentId ?? 0 },
      { name: 'title', label: 'Title', value: m?.title ?? '', required: true },
      { name: 'type', label: 'Type', type: 'select', options: MENU_TYPES.map((t) => ({ value: t, label: t })), value: m?.type ?? 'menu' },
      { name: 'name', label: 'Route name', value: m?.name ?? '', optional: true },
      { name: 'path', label: 'Path', value: m?.path ?? '', optional: true },
      { name: 'component', label: 'Component', value: m?.component ?? '', optional: true },
      { name: 'icon', label: 'Icon', value: m?.icon ?? '', optional: true },
      ...(me.roles.includes('superAdmin') ? [{ name: 'permission', label: 'Permission code', value: m?.permission ?? '', optional: true }] : []),
      { name: 'sort', label: 'Sort', type: 'number', value: m?.sort ?? 0 },
      { name: 'hidden', label: 'Hidden (routed, not in the menu)', type: 'checkbox', value: m?.hidden },
    ];
    const parents = async () =>
      flatten(await api('/app/sysMenu/tree'))
        .filter(({ node }) => node.type !== 'button')
        .map(({ node, depth }) => ({ value: node.id, label: node.title, depth }));
    const add = (parentId, reload) => async () => {
      const done = await openForm('Add menu', fields({ parentId }, await parents()), (v) => post('/app/sysMenu/add', v));
      if (done) notice('Menu added.'), reload();
    };
    await treePage(main, {
      endpoint: '/app/sysMenu/tree',
      toolbar: (reload) => [can('sys:menu:add') && button('Add menu', add(0, reload), { class: 'primary' })],
      columns: [
        { title: 'Title', cell: (r) => indented(r.node.title, r.depth) },
        { title: 'Type', cell: (r) => r.node.type },
        { title: 'Path or code', cell: (r) => h('code', {}, r.node.permission || r.node.path || '') },
        { title: 'Route name', cell: (r) => r.node.name },
        { title: 'Sort', cell: (r) => r.node.sort },
        { title: 'Status', cell: (r) => pill(r.node.status) },
      ],
      actions: (m, reload) => [
        can('sys:menu:add') && m.type !== 'button' && button('Add child', add(m.id, reload)),
        can('sys:menu:edit') &&
          button('Edit', async () => {
            const done = await openForm('Edit ' + m.title, fields(m, await parents()), (v) => post('/app/sysMenu/edit', { id: m.id, version: m.version, ...v }));
            if (done) notice('Menu saved.'), reload();
          }),
        deleteButton('menu ' + m.title, '/app/sysMenu/delete', 'sys:menu:delete', [m.id], reload),
      ],
    });
  }

  /** Files and images: a paged list with an upload button. Signed urls work without the token. */
  function blobPage(kind) {
    const image = kind === 'image';
    const base = image ? '/app/sysImage' : '/app/sysFile';
    const code = (action) => (image ? 'sys:image:' : 'sys:file:') + action;
    return async (main) => {
      const upload = h('input', { type: 'file', accept: image ? 'image/png,image/jpeg,image/gif,image/webp' : undefined, hidden: true });
      const list = pagedList(main, {
        endpoint: base + '/page',
        filters: [{ name: 'name', label: 'Name contains' }],
        toolbar: [can(code('upload')) && h('label', { class: 'button primary' }, image ? 'Upload image' : 'Upload file', upload)],
        render: (records) =>
          table(
            [
              ...(image ? [{ title: 'Preview', cell: (r) => (r.url ? h('img', { class: 'thumb', src: API + r.url, alt: r.name }) : '') }] : []),
              { title: 'Name', cell: (r) => r.name },
              ...(image ? [{ title: 'Size (px)', cell: (r) => r.width + '×' + r.height }] : [{ title: 'Type', cell: (r) => r.contentType }]),
              { title: 'Size', cell: (r) => bytes(r.size) },
              { title: 'Uploaded', cell: (r) => when(r.createdAt) },
            ],
            records,
            {
              actions: (r) => [
                r.url && h('a', { class: 'button', href: API + r.url, target: '_blank', rel: 'noopener' }, image ? 'Open' : 'Download'),
                deleteButton(r.name, base + '/delete', code('delete'), [r.id], () => list.reload()),
              ],
            },
          ),
      });
      upload.addEventListener('change', async () => {
        const file = upload.files && upload.files[0];
        if (!file) return;
        const form = new FormData();
        form.append('file', file, file.name);
        await attempt(() => api(base + '/upload', { method: 'POST', form }), 'Uploaded ' + file.name + '.');
        upload.value = '';
        await list.reload();
      });
      await list.reload();
    };
  }

  /** The logs: filters (or async (query) → filters), selection, delete selected and clear. */
  function logPage({ endpoint, code, filters, columns, details, before }) {
    return async (main, query) => {
      if (before) await before();
      const list = pagedList(main, {
        endpoint: endpoint + '/page',
        filters: typeof filters === 'function' ? await filters(query) : filters,
        toolbar: [
          can(code + ':delete') &&
            button('Delete selected', async () => {
              const ids = (list.table()?.selected() || []).map((r) => r.id);
              if (!ids.length) return notice('Select rows first.', true);
              if (confirm('Delete ' + ids.length + ' row(s)?')) await attempt(() => post(endpoint + '/delete', { ids }), 'Deleted ' + ids.length + ' row(s).');
              await list.reload();
            }),
          can(code + ':clear') &&
            button('Clear all', async () => {
              if (confirm('Clear the whole log (the rows you can see)?')) await attempt(() => post(endpoint + '/clear'), 'Log cleared.');
              await list.reload();
            }, { class: 'danger' }),
        ],
        render: (records) => table(columns, records, { selectable: can(code + ':delete'), actions: details && ((r) => [details(r)]) }),
      });
      await list.reload();
    };
  }

  const loginLogPage = logPage({
    endpoint: '/app/sysLoginLog',
    code: 'sys:loginLog',
    filters: [
      { name: 'loginName', label: 'Login name starts with' },
      { name: 'status', label: 'Result', options: ['success', 'failure'] },
    ],
    columns: [
      { title: 'Time', cell: (r) => when(r.createdAt) },
      { title: 'Login name', cell: (r) => r.loginName },
      { title: 'Result', cell: (r) => pill(r.status) },
      { title: 'Message', cell: (r) => r.msg },
      { title: 'Address', cell: (r) => r.ip },
      { title: 'Browser', cell: (r) => r.browser + ' · ' + r.os },
    ],
  });

  const opLogPage = logPage({
    endpoint: '/app/sysOpLog',
    code: 'sys:opLog',
    filters: [
      { name: 'operatorName', label: 'Operator starts with' },
      { name: 'module', label: 'Module' },
    ],
    columns: [
      { title: 'Time', cell: (r) => when(r.createdAt) },
      { title: 'Operator', cell: (r) => r.operatorName },
      { title: 'Operation', cell: (r) => h('code', {}, r.module + '/' + r.action) },
      { title: 'Status', cell: (r) => pill(String(r.status), r.status < 400 ? 'success' : 'failure') },
      { title: 'ms', cell: (r) => r.durationMs, class: 'num' },
    ],
    details: (r) =>
      can('sys:opLog:detail') &&
      button('Details', async () => {
        try {
          const d = await api('/app/sysOpLog/detail?id=' + r.id);
          const lines = Object.entries(d).map(([k, v]) => k + ': ' + (typeof v === 'string' ? v : JSON.stringify(v)));
          await openForm('Operation ' + d.id, [{ name: 'detail', label: d.method + ' ' + d.path, type: 'textarea', value: lines.join('\n'), readOnly: true }], async () => true, { ok: 'Close' });
        } catch (e) {
          notice(e.message, true);
        }
      }),
  });

  async function onlinePage(main) {
    const list = pagedList(main, {
      endpoint: '/app/sysOnlineUser/page',
      filters: [{ name: 'loginName', label: 'Login name starts with' }],
      render: (records) =>
        table(
          [
            { title: 'Login name', cell: (s) => s.loginName },
            { title: 'Address', cell: (s) => s.ip },
            { title: 'Browser', cell: (s) => s.browser + ' · ' + s.os },
            { title: 'Logged in', cell: (s) => when(s.loginAt) },
            { title: 'Expires', cell: (s) => when(s.expiresAt) },
          ],
          records,
          {
            actions: (s) => [
              can('sys:online:forceLogout') &&
                button('Force logout', () => confirm('End the session of ' + s.loginName + '?') && attempt(() => post('/app/sysOnlineUser/forceLogout', { sessionIds: [s.sessionId] }), 'Session ended.').then(() => list.reload()), {
                  class: 'danger',
                }),
            ],
          },
        ),
    });
    await list.reload();
  }

  /** A backup archive needs the token, so it is fetched and handed to the browser as a file. */
  async function downloadBackup(b) {
    try {
      const res = await request('/app/sysBackup/download?id=' + b.id);
      if (!res.ok) throw new ApiError(res.status, ((await res.json().catch(() => null)) || {}).msg || 'Download failed (HTTP ' + res.status + ')');
      const url = URL.createObjectURL(await res.blob());
      const a = h('a', { href: url, download: b.name });
      document.body.append(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(url), 10_000);
    } catch (e) {
      notice(e.message, true);
    }
  }

  async function backupsPage(main) {
    const list = pagedList(main, {
      endpoint: '/app/sysBackup/page',
      filters: [{ name: 'status', label: 'Status', options: ['running', 'done', 'failed'] }],
      toolbar: [can('sys:backup:create') && button('Create backup', () => attempt(() => post('/app/sysBackup/create'), 'Backup created.').then(() => list.reload()), { class: 'primary' })],
      render: (records) =>
        table(
          [
            { title: 'Archive', cell: (b) => b.name },
            { title: 'Size', cell: (b) => (b.size ? bytes(b.size) : '') },
            { title: 'Status', cell: (b) => pill(b.status, b.status === 'done' ? 'success' : b.status === 'failed' ? 'failure' : '') },
            { title: 'Trigger', cell: (b) => b.trigger },
            { title: 'Created', cell: (b) => when(b.createdAt) },
          ],
          records,
          {
            actions: (b) => [
              can('sys:backup:download') && b.status === 'done' && button('Download', () => downloadBackup(b)),
              deleteButton('backup ' + b.name, '/app/sysBackup/delete', 'sys:backup:delete', [b.id], () => list.reload()),
            ],
          },
        ),
    });
    await list.reload();
  }

  // --- standard modules: posts, dictionaries, parameters, notices, jobs ------------------------------

  async function postsPage(main) {
    await loadDicts();
    const fields = (p) => [
      { name: 'code', label: 'Code', value: p?.code ?? '', required: true },
      { name: 'name', label: 'Name', value: p?.name ?? '', required: true },
      { name: 'sort', label: 'Sort', type: 'number', value: p?.sort ?? 0 },
      { name: 'status', label: 'Status', type: 'select', options: dictOptions('sys_normal_disable', STATUSES, p?.status), value: p?.status ?? dictDefault('sys_normal_disable', 'enabled') },
      { name: 'remark', label: 'Remark', value: p?.remark ?? '', optional: true },
    ];
    const list = pagedList(main, {
      endpoint: '/app/sysPost/page',
      order: { sortField: 'sort', sortOrder: 'asc' },
      filters: [
        { name: 'code', label: 'Code contains' },
        { name: 'name', label: 'Name contains' },
        { name: 'status', label: 'Status', options: dictOptions('sys_normal_disable', STATUSES) },
      ],
      toolbar: [
        can('sys:post:add') &&
          button('Add post', () => openForm('Add post', fields(null), (v) => post('/app/sysPost/add', v)).then((done) => done && (notice('Post added.'), list.reload())), { class: 'primary' }),
      ],
      render: (records) =>
        table(
          [
            { title: 'Code', cell: (p) => h('code', {}, p.code) },
            { title: 'Name', cell: (p) => p.name },
            { title: 'Sort', cell: (p) => p.sort, class: 'num' },
            { title: 'Status', cell: (p) => dictPill('sys_normal_disable', p.status) },
            { title: 'Remark', cell: (p) => p.remark },
            { title: 'Created', cell: (p) => when(p.createdAt).slice(0, 10) },
          ],
          records,
          {
            actions: (p) => [
              can('sys:post:edit') &&
                button('Edit', () =>
                  openForm('Edit ' + p.name, fields(p), (v) => post('/app/sysPost/edit', { id: p.id, version: p.version, ...v })).then((done) => done && (notice('Post saved.'), list.reload())),
                ),
              deleteButton('post ' + p.name, '/app/sysPost/delete', 'sys:post:delete', [p.id], () => list.reload()),
            ],
          },
        ),
    });
    await list.reload();
  }

  /** Dictionary types; each opens its items (the hidden "Dictionary items" page). */
  async function dictTypesPage(main) {
    await loadDicts();
    const fields = (t) => [
      { name: 'name', label: 'Name', value: t?.name ?? '', required: true },
      { name: 'code', label: 'Code (a-z, 0-9, _)', value: t?.code ?? '', required: true },
      { name: 'status', label: 'Status', type: 'select', options: dictOptions('sys_normal_disable', STATUSES, t?.status), value: t?.status ?? dictDefault('sys_normal_disable', 'enabled') },
      { name: 'remark', label: 'Remark', value: t?.remark ?? '', optional: true },
    ];
    const list = pagedList(main, {
      endpoint: '/app/sysDictType/page',
      filters: [
        { name: 'name', label: 'Name contains' },
        { name: 'code', label: 'Code contains' },
        { name: 'status', label: 'Status', options: dictOptions('sys_normal_disable', STATUSES) },
      ],
      toolbar: [
        can('sys:dictType:add') &&
          button('Add type', () => openForm('Add dictionary type', fields(null), (v) => post('/app/sysDictType/add', v)).then((done) => done && (notice('Dictionary type added.'), list.reload())), {
            class: 'primary',
          }),
      ],
      render: (records) =>
        table(
          [
            { title: 'Name', cell: (t) => t.name },
            { title: 'Code', cell: (t) => h('code', {}, t.code) },
            { title: 'Status', cell: (t) => dictPill('sys_normal_disable', t.status) },
            { title: 'Remark', cell: (t) => t.remark },
            { title: 'Updated', cell: (t) => when(t.updatedAt) },
          ],
          records,
          {
            actions: (t) => {
              const items = can('sys:dictData:page') && pageLink('/system/dict/data', { type: t.code });
              return [
                items && h('a', { class: 'button', href: items }, 'Items'),
                can('sys:dictType:edit') &&
                  button('Edit', () =>
                    openForm('Edit ' + t.name, fields(t), (v) => post('/app/sysDictType/edit', { id: t.id, version: t.version, ...v })).then(
                      (done) => done && (notice('Dictionary type saved.'), list.reload()),
                    ),
                  ),
                deleteButton('dictionary type ' + t.code + ' with its items', '/app/sysDictType/delete', 'sys:dictType:delete', [t.id], () => list.reload()),
              ];
            },
          },
        ),
    });
    await list.reload();
  }

  const TAG_TYPES = ['default', 'primary', 'success', 'info', 'warning', 'danger'];

  /** The items of one dictionary type (?type=code), or of all; opened from the Dictionaries page. */
  async function dictItemsPage(main, query) {
    await loadDicts();
    // Every type, disabled ones included, when the user may list them; else the enabled ones.
    const types = can('sys:dictType:page')
      ? (await allRecords('/app/sysDictType/page', { sortField: 'code', sortOrder: 'asc' })).map((t) => ({ value: t.code, label: t.name + ' (' + t.code + ')' }))
      : Object.keys(dicts).map((code) => ({ value: code, label: code }));
    const fields = (d) => [
      { name: 'typeCode', label: 'Type', type: 'select', options: types, value: d?.typeCode ?? '' },
      { name: 'label', label: 'Label', value: d?.label ?? '', required: true },
      { name: 'value', label: 'Value', value: d?.value ?? '', required: true },
      { name: 'sort', label: 'Sort', type: 'number', value: d?.sort ?? 0 },
      { name: 'tagType', label: 'Tag colour', type: 'select', options: TAG_TYPES.map((t) => ({ value: t, label: t })), value: d?.tagType ?? 'default' },
      { name: 'cssClass', label: 'CSS class', value: d?.cssClass ?? '', optional: true },
      { name: 'status', label: 'Status', type: 'select', options: dictOptions('sys_normal_disable', STATUSES, d?.status), value: d?.status ?? dictDefault('sys_normal_disable', 'enabled') },
      { name: 'remark', label: 'Remark', value: d?.remark ?? '', optional: true },
      { name: 'isDefault', label: 'Default of its type', type: 'checkbox', value: d?.isDefault },
    ];
    const back = pageLink('/system/dict');
    const list = pagedList(main, {
      endpoint: '/app/sysDictData/page',
      order: { sortField: 'sort', sortOrder: 'asc' },
      filters: [
        { name: 'typeCode', label: 'Type', options: types, value: query.get('type') },
        { name: 'label', label: 'Label contains' },
        { name: 'status', label: 'Status', options: dictOptions('sys_normal_disable', STATUSES) },
      ],
      toolbar: [
        back && h('a', { class: 'button', href: back }, '← Dictionaries'),
        can('sys:dictData:add') &&
          button(
            'Add item',
            () =>
              openForm('Add dictionary item', fields({ typeCode: list.filter('typeCode') }), (v) => post('/app/sysDictData/add', v)).then(
                (done) => done && (notice('Dictionary item added.'), list.reload()),
              ),
            { class: 'primary' },
          ),
      ],
      render: (records) =>
        table(
          [
            { title: 'Type', cell: (d) => h('code', {}, d.typeCode) },
            // The label as pages show it: in its tag colour.
            { title: 'Label', cell: (d) => h('span', { class: 'pill tag-' + d.tagType }, d.label) },
            { title: 'Value', cell: (d) => h('code', {}, d.value) },
            { title: 'Sort', cell: (d) => d.sort, class: 'num' },
            { title: 'Default', cell: (d) => dictPill('sys_yes_no', d.isDefault) },
            { title: 'Status', cell: (d) => dictPill('sys_normal_disable', d.status) },
            { title: 'Remark', cell: (d) => d.remark },
          ],
          records,
          {
            actions: (d) => [
              can('sys:dictData:edit') &&
                button('Edit', () =>
                  openForm('Edit ' + d.label, fields(d), (v) => post('/app/sysDictData/edit', { id: d.id, version: d.version, ...v })).then(
                    (done) => done && (notice('Dictionary item saved.'), list.reload()),
                  ),
                ),
              deleteButton('item ' + d.label, '/app/sysDictData/delete', 'sys:dictData:delete', [d.id], () => list.reload()),
            ],
          },
        ),
    });
    await list.reload();
  }

  /** System parameters. Built-in ones keep their key and cannot be deleted (the server says so too). */
  async function configPage(main) {
    await loadDicts();
    const fields = (c) => [
      { name: 'name', label: 'Name', value: c?.name ?? '', required: true },
      { name: 'key', label: 'Key', value: c?.key ?? '', required: true, readOnly: c?.type === 'builtIn' },
      { name: 'value', label: 'Value', value: c?.value ?? '' },
      { name: 'remark', label: 'Remark', value: c?.remark ?? '', optional: true },
    ];
    const list = pagedList(main, {
      endpoint: '/app/sysConfig/page',
      filters: [
        { name: 'name', label: 'Name contains' },
        { name: 'key', label: 'Key contains' },
        { name: 'type', label: 'Built in', options: dictOptions('sys_config_type', ['builtIn', 'custom']) },
      ],
      toolbar: [
        can('sys:config:add') &&
          button('Add parameter', () => openForm('Add parameter', fields(null), (v) => post('/app/sysConfig/add', v)).then((done) => done && (notice('Parameter added.'), list.reload())), {
            class: 'primary',
          }),
      ],
      render: (records) =>
        table(
          [
            { title: 'Name', cell: (c) => c.name },
            { title: 'Key', cell: (c) => h('code', {}, c.key) },
            { title: 'Value', cell: (c) => (c.value === '' ? h('span', { class: 'muted' }, '(empty: the configuration decides)') : c.value), class: 'wrap' },
            { title: 'Built in', cell: (c) => dictPill('sys_config_type', c.type) },
            { title: 'Remark', cell: (c) => c.remark, class: 'wrap' },
            { title: 'Updated', cell: (c) => when(c.updatedAt) },
          ],
          records,
          {
            actions: (c) => [
              can('sys:config:edit') &&
                button('Edit', () =>
                  openForm('Edit ' + c.key, fields(c), (v) => post('/app/sysConfig/edit', { id: c.id, version: c.version, ...v })).then((done) => done && (notice('Parameter saved.'), list.reload())),
                ),
              c.type !== 'builtIn' && deleteButton('parameter ' + c.key, '/app/sysConfig/delete', 'sys:config:delete', [c.id], () => list.reload()),
            ],
          },
        ),
    });
    await list.reload();
  }

  const NOTICE_TYPES = ['notice', 'announcement'];
  const NOTICE_STATUSES = ['draft', 'published', 'closed'];

  /** Notices: content is HTML, edited as source; shown only as the server sanitised it (htmlView). */
  async function noticesPage(main) {
    await loadDicts();
    const fields = (n) => [
      { name: 'title', label: 'Title', value: n?.title ?? '', required: true },
      { name: 'type', label: 'Type', type: 'select', options: dictOptions('sys_notice_type', NOTICE_TYPES, n?.type), value: n?.type ?? dictDefault('sys_notice_type', 'notice') },
      { name: 'status', label: 'Status', type: 'select', options: dictOptions('sys_notice_status', NOTICE_STATUSES, n?.status), value: n?.status ?? dictDefault('sys_notice_status', 'draft') },
      { name: 'content', label: 'Content (HTML; the server removes scripts, handlers and outside resources)', type: 'textarea', value: n?.content ?? '' },
    ];
    const saved = (msg) => (done) => done && (notice(msg), list.reload(), refreshLatest());
    const list = pagedList(main, {
      endpoint: '/app/sysNotice/page',
      filters: [
        { name: 'title', label: 'Title contains' },
        { name: 'type', label: 'Type', options: dictOptions('sys_notice_type', NOTICE_TYPES) },
        { name: 'status', label: 'Status', options: dictOptions('sys_notice_status', NOTICE_STATUSES) },
      ],
      toolbar: [can('sys:notice:add') && button('Add notice', () => openForm('Add notice', fields(null), (v) => post('/app/sysNotice/add', v)).then(saved('Notice added.')), { class: 'primary' })],
      render: (records) =>
        table(
          [
            { title: 'Title', cell: (n) => n.title },
            { title: 'Type', cell: (n) => dictPill('sys_notice_type', n.type) },
            { title: 'Status', cell: (n) => dictPill('sys_notice_status', n.status) },
            { title: 'Author', cell: (n) => n.createdByName },
            { title: 'Updated', cell: (n) => when(n.updatedAt) },
          ],
          records,
          {
            actions: (n) => [
              button('View', () => openForm(n.title, [{ type: 'html', name: 'content', label: 'By ' + n.createdByName + ', ' + when(n.updatedAt), value: n.content }], async () => true, { ok: 'Close' })),
              can('sys:notice:edit') && button('Edit', () => openForm('Edit ' + n.title, fields(n), (v) => post('/app/sysNotice/edit', { id: n.id, version: n.version, ...v })).then(saved('Notice saved.'))),
              deleteButton('notice ' + n.title, '/app/sysNotice/delete', 'sys:notice:delete', [n.id], () => (list.reload(), refreshLatest())),
            ],
          },
        ),
    });
    await list.reload();
  }

  const MISFIRE = [
    { value: 'fire', label: 'fire (run once for the missed due times)' },
    { value: 'skip', label: 'skip (wait for the next due time)' },
  ];

  /** Scheduled jobs: the schedule is editable, the handler is the service's code (not editable). */
  async function jobsPage(main) {
    await loadDicts();
    const fields = (j) => [
      { name: 'cron', label: 'Cron (5 fields, UTC: minute hour day-of-month month day-of-week)', value: j.cron, required: true },
      { name: 'misfirePolicy', label: 'Missed due times', type: 'select', options: MISFIRE, value: j.misfirePolicy },
      { name: 'concurrent', label: 'Runs may overlap', type: 'checkbox', value: j.concurrent },
    ];
    const list = pagedList(main, {
      endpoint: '/app/sysJob/page',
      order: { sortField: 'id', sortOrder: 'asc' },
      filters: [
        { name: 'name', label: 'Name or handler contains' },
        { name: 'status', label: 'Status', options: dictOptions('sys_job_status', STATUSES) },
      ],
      render: (records) =>
        table(
          [
            { title: 'Job (handler)', cell: (j) => [j.name, h('br'), h('code', { class: 'muted' }, j.handler)] },
            { title: 'Cron (UTC)', cell: (j) => h('code', {}, j.cron), class: 'nowrap' },
            { title: 'Status', cell: (j) => [dictPill('sys_job_status', j.status), j.running ? ' ' : null, j.running ? pill('running', 'info') : null], class: 'nowrap' },
            { title: 'Last run', cell: (j) => when(j.lastRunAt).slice(0, 16), class: 'nowrap' },
            { title: 'Next run', cell: (j) => when(j.nextRunAt).slice(0, 16), class: 'nowrap' },
          ],
          records,
          {
            actions: (j) => {
              const log = pageLink('/system/jobLog', { jobId: j.id });
              return [
                can('sys:job:run') &&
                  button('Run now', async () => {
                    try {
                      const run = await post('/app/sysJob/run', { id: j.id });
                      notice(j.name + ': ' + run.status + ' in ' + run.durationMs + ' ms: ' + run.message, run.status !== 'success');
                    } catch (e) {
                      notice(e.message, true);
                    }
                    await list.reload();
                  }),
                statusToggle(j, '/app/sysJob/changeStatus', 'sys:job:changeStatus', () => list.reload()),
                can('sys:job:edit') &&
                  button('Edit', () =>
                    openForm('Schedule of ' + j.name, fields(j), (v) => post('/app/sysJob/edit', { id: j.id, version: j.version, ...v })).then((done) => done && (notice('Job saved.'), list.reload())),
                  ),
                log && h('a', { class: 'button', href: log }, 'Log'),
              ];
            },
          },
        ),
    });
    await list.reload();
  }

  /** One row of a log shown whole (the job log has no detail call: its rows carry everything). */
  const rowDetails = (title, r) =>
    openForm(title, [{ name: 'detail', label: 'Fields', type: 'textarea', readOnly: true, value: Object.entries(r).map(([k, v]) => k + ': ' + (typeof v === 'string' ? v : JSON.stringify(v))).join('\n') }], async () => true, {
      ok: 'Close',
    });

  const jobLogPage = logPage({
    endpoint: '/app/sysJobLog',
    code: 'sys:jobLog',
    before: loadDicts,
    // ?jobId= (the Jobs page's Log button) preselects the job.
    filters: async (query) => {
      const jobs = can('sys:job:page') ? await allRecords('/app/sysJob/page', { sortField: 'id', sortOrder: 'asc' }).catch(() => []) : [];
      return [
        jobs.length ? { name: 'jobId', label: 'Job', numeric: true, options: jobs.map((j) => ({ value: j.id, label: j.name })), value: query.get('jobId') } : null,
        { name: 'status', label: 'Result', options: dictOptions('sys_common_status', ['success', 'failure']) },
        { name: 'createdFrom', label: 'Started from (YYYY-MM-DD)' },
        { name: 'createdTo', label: 'Started before (YYYY-MM-DD)' },
      ].filter(Boolean);
    },
    columns: [
      { title: 'Started', cell: (r) => when(r.startedAt) },
      { title: 'Job', cell: (r) => r.jobName },
      { title: 'Result', cell: (r) => dictPill('sys_common_status', r.status) },
      { title: 'Message', cell: (r) => r.message, class: 'wrap' },
      { title: 'ms', cell: (r) => r.durationMs, class: 'num' },
    ],
    details: (r) => button('Details', () => rowDetails('Run ' + r.id + ' of ' + r.jobName, r)),
  });

  // --- API keys ---------------------------------------------------------------------------------------

  /** Codes no key may carry (the server refuses them too: docs/api-keys.md). */
  const keyMayCarry = (code) =>
    !/^sys:apiKey:/.test(code) && !/mfa/i.test(code) && !['sys:role:add', 'sys:role:edit', 'sys:role:delete', 'sys:role:changeStatus', 'sys:role:grantMenu', 'sys:role:grantDataScope', 'sys:user:grantRole'].includes(code);

  /** The codes this user may give a key: their own (a super admin's `*`: every button of the menu tree). */
  async function ownCodes() {
    const held = me.permissions.includes('*')
      ? flatten(await api('/app/sysMenu/tree').catch(() => []))
          .map(({ node }) => node.permission)
          .filter(Boolean)
      : me.permissions;
    return [...new Set(held)].filter(keyMayCarry).sort();
  }

  /**
   * The secret of a new key, shown this once (the server stores only its hash), with a Copy button.
   * Resolves when the dialog is closed; the secret is then dropped from the page.
   */
  function showSecretOnce(secret) {
    const dialog = $('secret-dialog');
    const input = $('secret-value');
    input.value = secret;
    $('secret-copied').textContent = '';
    $('secret-copy').onclick = async () => {
      input.select();
      try {
        await navigator.clipboard.writeText(secret);
        $('secret-copied').textContent = 'Copied to the clipboard.';
      } catch {
        // No clipboard permission (an insecure origin, a denied prompt): the text stays selected.
        $('secret-copied').textContent = document.execCommand && document.execCommand('copy') ? 'Copied to the clipboard.' : 'Selected: press Ctrl+C (⌘C) to copy.';
      }
    };
    return new Promise((resolve) => {
      dialog.onclose = () => {
        dialog.onclose = null;
        input.value = '';
        resolve();
      };
      dialog.showModal();
      input.select();
    });
  }

  /** Own keys, or with sys:apiKey:page the keys of users in scope; add (secret shown once), revoke. */
  async function apiKeysPage(main) {
    const all = can('sys:apiKey:page');
    const codes = can('sys:apiKey:add') ? await ownCodes() : [];
    const addKey = () =>
      openForm(
        'Add API key',
        [
          { name: 'name', label: 'Name', required: true },
          { name: 'expiresOn', label: 'Expires on (empty: in 90 days)', type: 'date', optional: true },
          { name: 'allowedIps', label: 'Allowed addresses (CIDR, one a line; empty: any)', type: 'textarea', value: '' },
          { name: 'codes', label: 'Permission codes (from your own)', type: 'checkboxes', strings: true, options: codes.map((c) => ({ value: c, label: c })), value: [] },
        ],
        async (v) => {
          const body = { name: v.name, codes: v.codes };
          if (v.expiresOn) body.expiresAt = v.expiresOn + 'T00:00:00Z';
          const ips = v.allowedIps.split(/[\s,]+/).filter(Boolean);
          if (ips.length) body.allowedIps = ips;
          const created = await post('/app/sysApiKey/add', body);
          // After the form has closed: the secret in a dialog of its own.
          setTimeout(() => void showSecretOnce(created.secret).then(() => list.reload()), 0);
        },
        { ok: 'Create key' },
      ).then((done) => done && notice('API key added.'));
    const list = pagedList(main, {
      endpoint: '/app/sysApiKey/page',
      filters: [
        { name: 'name', label: 'Name contains' },
        { name: 'status', label: 'Status', options: ['active', 'revoked', 'expired'], value: 'active' },
      ],
      toolbar: [can('sys:apiKey:add') && button('Add API key', addKey, { class: 'primary' })],
      render: (records) =>
        table(
          [
            { title: 'Name', cell: (k) => k.name },
            ...(all ? [{ title: 'Owner', cell: (k) => k.loginName }] : []),
            { title: 'Codes', cell: (k) => h('span', {}, ...k.codes.flatMap((c, i) => [i ? ' ' : '', h('code', {}, c)])), class: 'wrap' },
            { title: 'Addresses', cell: (k) => (k.allowedIps.length ? k.allowedIps.join(', ') : 'any') },
            { title: 'Status', cell: (k) => pill(k.status, k.status === 'active' ? 'enabled' : 'disabled') },
            { title: 'Expires', cell: (k) => when(k.expiresAt).slice(0, 10) },
            { title: 'Last used', cell: (k) => (k.lastUsedAt ? when(k.lastUsedAt) + ' from ' + k.lastUsedIp : 'never') },
          ],
          records,
          {
            actions: (k) => [
              k.status === 'active' &&
                (k.userId === me.user.id || can('sys:apiKey:revoke')) &&
                button('Revoke', () => confirm('Revoke the API key "' + k.name + '"? Scripts using it stop working at once.') && attempt(() => post('/app/sysApiKey/revoke', { ids: [k.id] }), 'API key revoked.').then(() => list.reload()), { class: 'danger' }),
            ],
            empty: 'No API keys.',
          },
        ),
    });
    await list.reload();
  }

  /** A menu's `component` (seeded by the migrations) → the page that shows it. */
  const PAGES = {
    'user/UserList': usersPage,
    'user/OrgList': orgsPage,
    'permission/RoleList': rolesPage,
    'permission/MenuList': menusPage,
    'system/FileList': blobPage('file'),
    'system/ImageList': blobPage('image'),
    'system/LoginLog': loginLogPage,
    'system/OpLog': opLogPage,
    'system/OnlineUser': onlinePage,
    'system/BackupList': backupsPage,
    'user/PostList': postsPage,
    'system/DictList': dictTypesPage,
    'system/DictData': dictItemsPage,
    'system/ConfigList': configPage,
    'system/NoticeList': noticesPage,
    'system/JobList': jobsPage,
    'system/JobLog': jobLogPage,
    'system/ApiKeyList': apiKeysPage,
  };

  // --- latest notices: every logged-in user, whatever their codes ----------------------------------

  let latest = null;
  /** The header's Notices button with how many published notices this user has not marked read. */
  async function refreshLatest() {
    try {
      latest = await api('/app/sysNotice/latest?limit=10');
      $('unread').textContent = String(latest.unread);
      show($('unread'), latest.unread > 0);
      show($('latest'), true);
    } catch {
      latest = null;
      show($('latest'), false);
    }
  }

  /** The newest published notices, unread ones first marked; "Mark as read" marks those shown. */
  async function showLatest() {
    await refreshLatest();
    if (!latest) return;
    if (!latest.records.length) return notice('No published notices.');
    const unread = latest.records.filter((n) => !n.read).map((n) => n.id);
    const fields = latest.records.map((n) => ({
      name: 'notice' + n.id,
      type: 'html',
      label: (n.read ? '' : 'New · ') + n.title + ' — ' + n.createdByName + ', ' + when(n.updatedAt),
      value: n.content,
    }));
    const done = await openForm('Notices', fields, () => unread.length && post('/app/sysNotice/markRead', { ids: unread }), { ok: unread.length ? 'Mark as read' : 'Close' });
    if (done && unread.length) await refreshLatest();
  }

  // --- shell: sidebar and routing ---------------------------------------------------------------------

  /** Every menu with a path, hidden ones included (routed, not in the sidebar: dictionary items). */
  let routes = new Map();
  /** The first entry of the sidebar: where the console opens. */
  let home = null;

  function sidebar(menus) {
    routes = new Map();
    home = null;
    const walk = (items) => {
      for (const m of items) {
        if (m.type === 'menu' && m.path) routes.set(m.path, m);
        if (m.children) walk(m.children);
      }
    };
    walk(menus);
    const list = (items) =>
      h(
        'ul',
        {},
        ...items
          .filter((m) => m.type !== 'button' && !m.hidden)
          .map((m) => {
            if (m.type === 'menu' && m.path) {
              home = home || m;
              return h('li', {}, h('a', { href: '#' + m.path, 'data-path': m.path }, m.title));
            }
            return h('li', { class: 'group' }, h('span', { class: 'group-title' }, m.title), m.children && m.children.length ? list(m.children) : null);
          }),
      );
    $('sidebar').replaceChildren(list(menus));
  }

  let routeRun = 0;
  /** #path or #path?query: the page of that menu, given the query (e.g. #/system/dict/data?type=…). */
  async function route() {
    const hash = location.hash.slice(1);
    const q = hash.indexOf('?');
    const path = decodeURIComponent(q < 0 ? hash : hash.slice(0, q));
    const pageQuery = new URLSearchParams(q < 0 ? '' : hash.slice(q + 1));
    if (path === ACCOUNT_PATH || mfaPending) return accountRoute(path);
    const menu = routes.get(path) || home;
    if (!menu) {
      $('page').replaceChildren(h('p', { class: 'muted' }, 'Your roles grant no pages.'));
      return;
    }
    if (menu.path !== path) {
      location.replace('#' + menu.path);
      return;
    }
    for (const a of $('sidebar').querySelectorAll('a')) a.classList.toggle('active', a.dataset.path === menu.path);
    $('page-title').textContent = menu.title;
    notice('');
    const run = ++routeRun;
    const main = h('div', {});
    $('page').replaceChildren(main);
    delete document.body.dataset.ready;
    const render = PAGES[menu.component];
    try {
      if (render) await render(main, pageQuery);
      else main.append(h('p', { class: 'muted' }, 'This example has no page for ' + (menu.component || menu.path) + '.'));
    } catch (e) {
      main.append(h('p', { class: 'error' }, e.message));
    }
    // For tests and scripts: the page has rendered its first data.
    if (run === routeRun) document.body.dataset.ready = menu.path;
  }

  // --- second factor: WebAuthn JSON, the login's second step, My account ---------------------------
  // docs/second-factor.md. The server speaks WebAuthn's JSON forms (base64url strings); the
  // browser's own parse…FromJSON / toJSON are used where it has them, else the same by hand.

  const MFA_REQUIRED = 'Second factor required';
  const ACCOUNT_PATH = '/account';
  /** The session is restricted (a role requires a second factor, the user has none): My account only. */
  let mfaPending = false;

  const fromB64u = (s) => Uint8Array.from(atob(s.replace(/-/g, '+').replace(/_/g, '/')), (c) => c.charCodeAt(0));
  const toB64u = (buf) => btoa(String.fromCharCode(...new Uint8Array(buf))).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
  const withIds = (list) => (list || []).map((c) => ({ ...c, id: fromB64u(c.id) }));

  /** Creation options (JSON, as …/passkey/options answers) for navigator.credentials.create(). */
  function creationOptions(json) {
    if (PublicKeyCredential.parseCreationOptionsFromJSON) return PublicKeyCredential.parseCreationOptionsFromJSON(json);
    return { ...json, challenge: fromB64u(json.challenge), user: { ...json.user, id: fromB64u(json.user.id) }, excludeCredentials: withIds(json.excludeCredentials) };
  }
  /** Request options (JSON, as /auth/login/passkeyOptions answers) for navigator.credentials.get(). */
  function requestOptions(json) {
    if (PublicKeyCredential.parseRequestOptionsFromJSON) return PublicKeyCredential.parseRequestOptionsFromJSON(json);
    return { ...json, challenge: fromB64u(json.challenge), allowCredentials: withIds(json.allowCredentials) };
  }
  /** A PublicKeyCredential as the JSON the server reads (PublicKeyCredential.toJSON()); nulls left out. */
  function credentialJSON(cred) {
    let out;
    if (typeof cred.toJSON === 'function') out = cred.toJSON();
    else {
      const r = cred.response;
      const response = { clientDataJSON: toB64u(r.clientDataJSON) };
      if (r.attestationObject) {
        response.attestationObject = toB64u(r.attestationObject);
        if (r.getTransports) response.transports = r.getTransports();
      } else {
        response.authenticatorData = toB64u(r.authenticatorData);
        response.signature = toB64u(r.signature);
        if (r.userHandle) response.userHandle = toB64u(r.userHandle);
      }
      out = { id: cred.id, rawId: toB64u(cred.rawId), type: cred.type, response, clientExtensionResults: cred.getClientExtensionResults(), authenticatorAttachment: cred.authenticatorAttachment };
    }
    if (out.authenticatorAttachment == null) delete out.authenticatorAttachment;
    if (out.response && out.response.userHandle == null) delete out.response.userHandle;
    return out;
  }
  const hasWebAuthn = () => typeof window.PublicKeyCredential === 'function' && Boolean(navigator.credentials);

  // The second login step: after a right password, /auth/login answered {mfa: true, challenge, methods}.
  let factor = null; // { challenge, methods, recovery: typing a recovery code }

  function showFactorStep(answer) {
    factor = { challenge: answer.challenge, methods: answer.methods, recovery: !answer.methods.includes('totp') };
    show($('login-form'), false);
    show($('factor-form'), true);
    show($('factor-passkey'), answer.methods.includes('passkey') && hasWebAuthn());
    showError($('factor-error'), '');
    $('factor-code').value = '';
    $('factor-recovery').value = '';
    factorMode();
  }

  function hideFactorStep() {
    factor = null;
    show($('factor-form'), false);
    show($('login-form'), true);
  }

  /** Code or recovery code (the switch); a passkey-only account starts with the recovery code. */
  function factorMode() {
    const recovery = factor.recovery;
    const hasTotp = factor.methods.includes('totp');
    const hasRecovery = factor.methods.includes('recovery');
    show($('factor-code-row'), !recovery);
    show($('factor-recovery-row'), recovery);
    show($('factor-submit'), !recovery ? hasTotp : hasRecovery);
    $('factor-code').required = !recovery;
    $('factor-recovery').required = recovery;
    show($('factor-switch'), hasTotp && hasRecovery);
    $('factor-switch').textContent = recovery ? 'Use the authenticator app' : 'Use a recovery code';
    $('factor-hint').textContent = recovery
      ? 'Type one of the recovery codes you saved when you set up the second factor. Each works once.'
      : hasTotp
        ? 'Type the 6-digit code your authenticator app shows for this account.'
        : 'Use your passkey.';
    (recovery ? $('factor-recovery') : $('factor-code')).focus();
  }

  /** POST /auth/login/verify with one factor; the session starts. */
  async function verifyFactor(proof) {
    const submit = $('factor-submit');
    submit.disabled = $('factor-passkey').disabled = true;
    showError($('factor-error'), '');
    try {
      const result = await api('/auth/login/verify', { method: 'POST', json: { challenge: factor.challenge, ...proof } });
      sessionStorage.setItem(TOKEN_KEY, result.token);
      hideFactorStep();
      await showApp();
      if (result.recoveryCodesLeft !== null && result.recoveryCodesLeft !== undefined) {
        const left = result.recoveryCodesLeft;
        notice('Signed in with a recovery code: ' + left + ' recovery code' + (left === 1 ? '' : 's') + ' left.' + (left <= 3 ? ' Make new ones under My account.' : ''), left <= 3);
      }
    } catch (e) {
      // An expired or used challenge cannot be retried, a disabled account not at all: back to the password.
      if (e.message.startsWith('challenge:') || e.status === 403) return showLogin(e.message);
      showError($('factor-error'), e.message);
    } finally {
      submit.disabled = $('factor-passkey').disabled = false;
    }
  }

  async function onFactorPasskey() {
    showError($('factor-error'), '');
    let assertion;
    try {
      const options = await api('/auth/login/passkeyOptions', { method: 'POST', json: { challenge: factor.challenge } });
      assertion = await navigator.credentials.get({ publicKey: requestOptions(options) });
    } catch (e) {
      showError($('factor-error'), e.name === 'NotAllowedError' ? 'The passkey was not used (cancelled or timed out).' : e.message);
      return;
    }
    await verifyFactor({ passkey: credentialJSON(assertion) });
  }

  function wireFactorStep() {
    $('factor-form').addEventListener('submit', (e) => {
      e.preventDefault();
      void verifyFactor(factor.recovery ? { recoveryCode: $('factor-recovery').value.trim() } : { code: $('factor-code').value.trim() });
    });
    $('factor-switch').addEventListener('click', () => {
      factor.recovery = !factor.recovery;
      showError($('factor-error'), '');
      factorMode();
    });
    $('factor-passkey').addEventListener('click', () => void onFactorPasskey());
    $('factor-cancel').addEventListener('click', () => void showLogin(''));
  }

  // A restricted session: every operation but My account answers 403 "Second factor required".

  /** After login: is this session restricted? (…/mfa/status: required, and no factor yet). */
  async function checkSecondFactor() {
    const status = await api('/app/sysLoginUser/mfa/status').catch(() => null);
    mfaPending = Boolean(status && status.required && !status.totp && !status.passkeys.length);
  }

  function requireSecondFactor() {
    if (!me) return;
    mfaPending = true;
    if (location.hash !== '#' + ACCOUNT_PATH) location.hash = '#' + ACCOUNT_PATH;
    else void route();
  }

  // --- My account: the second factor ----------------------------------------------------------------

  async function accountRoute(path) {
    if (path !== ACCOUNT_PATH) {
      location.replace('#' + ACCOUNT_PATH);
      return;
    }
    for (const a of $('sidebar').querySelectorAll('a')) a.classList.remove('active');
    $('page-title').textContent = 'My account';
    notice('');
    const run = ++routeRun;
    const main = h('div', {});
    $('page').replaceChildren(main);
    delete document.body.dataset.ready;
    try {
      await accountPage(main);
    } catch (e) {
      main.append(h('p', { class: 'error' }, e.message));
    }
    if (run === routeRun) document.body.dataset.ready = ACCOUNT_PATH;
  }

  /** Recovery codes, shown this once, with a copy button. */
  function recoveryBox(codes) {
    const copy = () =>
      navigator.clipboard.writeText(codes.join('\n')).then(
        () => notice('Recovery codes copied.'),
        () => notice('Copying failed: select the codes and copy them by hand.', true),
      );
    return h(
      'div',
      { class: 'recovery', id: 'recovery-box' },
      h('p', {}, h('strong', {}, 'Your recovery codes. '), 'Each works once instead of a code, for example when the phone is lost. They are shown this once: store them somewhere safe, offline.'),
      h('ol', { class: 'recovery-codes' }, ...codes.map((c) => h('li', {}, c))),
      h('div', { class: 'toolbar' }, button('Copy', copy, { class: 'primary' })),
    );
  }

  /** The "Second factor" section: status, TOTP enrolment, recovery codes, TOTP off, passkeys. */
  async function accountPage(main, shown) {
    const status = await api('/app/sysLoginUser/mfa/status');
    const hasFactor = status.totp || status.passkeys.length > 0;
    if (mfaPending && hasFactor) {
      // Enrolled: the same session works normally from now on.
      mfaPending = false;
      notice('Second factor active: your account is fully usable.');
    }
    const redraw = (codes) => {
      main.replaceChildren();
      return accountPage(main, codes).catch((e) => main.append(h('p', { class: 'error' }, e.message)));
    };
    const section = h('section', { class: 'mfa', id: 'mfa' }, h('h2', {}, 'Second factor'));
    main.append(section);
    if (mfaPending)
      section.append(
        h('p', { class: 'notice error', id: 'mfa-required' }, 'Your role requires a second factor. Set one up below: until then everything else is refused.'),
      );
    section.append(
      h(
        'p',
        { id: 'mfa-status' },
        'Authenticator app: ',
        h('strong', {}, status.totp ? 'on' : 'off'),
        ' · Passkeys: ',
        h('strong', {}, String(status.passkeys.length)),
        ' · Recovery codes left: ',
        h('strong', {}, String(status.recoveryCodesLeft)),
        status.required ? ' · required by your role' : '',
      ),
    );
    if (shown) section.append(recoveryBox(shown));

    // Authenticator app (TOTP)
    if (!status.totp) {
      const enrol = h('div', { class: 'enrol', id: 'totp-enrol' });
      const start = async () => {
        const s = await post('/app/sysLoginUser/mfa/totp/start');
        const code = h('input', { id: 'totp-confirm-code', inputmode: 'numeric', maxlength: 7, autocomplete: 'one-time-code', 'aria-label': 'Code' });
        const error = h('p', { class: 'error', role: 'alert', hidden: true });
        const confirmCode = async () => {
          try {
            const r = await post('/app/sysLoginUser/mfa/totp/confirm', { code: code.value.trim() });
            await redraw(r.recoveryCodes);
          } catch (e) {
            showError(error, e.message);
          }
        };
        code.addEventListener('keydown', (e) => e.key === 'Enter' && void confirmCode());
        enrol.replaceChildren(
          h('p', {}, 'Scan this code with an authenticator app (or type the secret), then type the 6 digits it shows.'),
          h('img', { class: 'qr', src: s.qrSvg, alt: 'QR code of ' + s.otpauthUri }),
          h('p', {}, 'Secret: ', h('code', { id: 'totp-secret' }, s.secret)),
          h('label', {}, 'Code ', code),
          error,
          button('Confirm', () => void confirmCode(), { class: 'primary' }),
        );
        code.focus();
      };
      enrol.append(button('Set up an authenticator app', () => void attempt(start)));
      section.append(h('h3', {}, 'Authenticator app'), enrol);
    } else {
      section.append(
        h('h3', {}, 'Authenticator app'),
        h(
          'div',
          { class: 'toolbar' },
          button('New recovery codes', async () => {
            let codes = null;
            const done = await openForm('New recovery codes', [{ name: 'code', label: 'Code from your authenticator app', required: true }], async (v) => {
              codes = (await post('/app/sysLoginUser/mfa/recoveryCodes', { code: v.code.trim() })).recoveryCodes;
            }, { ok: 'Make new codes' });
            if (done) await redraw(codes);
          }),
          button('Turn off', async () => {
            const done = await openForm(
              'Turn off the authenticator app',
              [
                { name: 'password', label: 'Password', type: 'password', required: true },
                { name: 'code', label: 'Code from your authenticator app', required: true },
              ],
              (v) => post('/app/sysLoginUser/mfa/totp/disable', { password: v.password, code: v.code.trim() }),
              { ok: 'Turn off' },
            );
            if (done) {
              await redraw();
              notice('Authenticator app turned off.');
            }
          }, { class: 'danger' }),
        ),
      );
    }

    // Passkeys
    const addPasskey = async () => {
      let codes = null;
      const done = await openForm('Add a passkey', [{ name: 'name', label: 'Name (e.g. YubiKey)' }], async (v) => {
        const options = await post('/app/sysLoginUser/mfa/passkey/options');
        let cred;
        try {
          cred = await navigator.credentials.create({ publicKey: creationOptions(options) });
        } catch (e) {
          throw new Error(e.name === 'NotAllowedError' ? 'The passkey was not created (cancelled or timed out).' : e.message);
        }
        const r = await post('/app/sysLoginUser/mfa/passkey/register', { response: credentialJSON(cred), ...(v.name.trim() ? { name: v.name.trim() } : {}) });
        codes = r.recoveryCodes;
      }, { ok: 'Create passkey' });
      if (done) {
        await redraw(codes || undefined);
        notice('Passkey added.');
      }
    };
    section.append(
      h('h3', {}, 'Passkeys'),
      table(
        [
          { title: 'Name', cell: (p) => p.name },
          { title: 'Added', cell: (p) => when(p.createdAt) },
          { title: 'Last used', cell: (p) => when(p.lastUsedAt) || 'never' },
        ],
        status.passkeys,
        {
          empty: 'No passkeys.',
          actions: (p) => [
            button('Remove', async () => {
              if (!confirm('Remove the passkey ' + p.name + '?')) return;
              if (await attempt(() => post('/app/sysLoginUser/mfa/passkey/delete', { id: p.id }))) {
                await redraw();
                notice('Passkey removed.');
              }
            }, { class: 'danger' }),
          ],
        },
      ),
      hasWebAuthn() ? h('div', { class: 'toolbar' }, button('Add a passkey', () => void addPasskey())) : h('p', { class: 'muted' }, 'This browser has no passkey support.'),
    );
  }

  // --- login ------------------------------------------------------------------------------------

  let codeKey = null;
  let captchaEnabled = false;

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
    if ($('dialog').open) $('dialog').close();
    setView('login');
    hideFactorStep();
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
      $('password').value = '';
      if (result.mfa) return showFactorStep(result);
      sessionStorage.setItem(TOKEN_KEY, result.token);
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
    me = null;
    await showLogin('');
  }

  async function showApp() {
    try {
      me = await api('/app/sysLoginUser/getLoginUserInformation');
    } catch (e) {
      if (e.status !== 401) await showLogin(e.message);
      return;
    }
    $('nick-name').textContent = me.user.nickName;
    $('login-name-shown').textContent = me.user.loginName;
    $('role-codes').textContent = me.roles.length ? me.roles.join(', ') : '(no roles)';
    sidebar(me.menus);
    await checkSecondFactor();
    setView('app');
    void refreshLatest();
    await route();
  }

  // --- wiring -------------------------------------------------------------------------------------

  $('api-base').textContent = API;
  $('login-form').addEventListener('submit', onLogin);
  $('captcha-refresh').addEventListener('click', () => void loadCaptcha());
  $('logout').addEventListener('click', () => void onLogout());
  $('latest').addEventListener('click', () => void showLatest());
  wireFactorStep();
  window.addEventListener('hashchange', () => me && void route());

  if (token()) void showApp();
  else void showLogin('');
})();

// Example admin console: plain fetch against the Edge Admin API, no framework, no build step.
// The sidebar is the menu tree getLoginUserInformation returns; each menu's `component` picks the
// page below. Buttons appear only for the permission codes the user holds. Everything the server
// sends is shown with textContent, never parsed as HTML.
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
      throw new ApiError(res.status, msg);
    }
    return envelope.data;
  }
  const post = (path, json) => api(path, { method: 'POST', json: json === undefined ? {} : json });

  // --- small helpers --------------------------------------------------------------------------------

  const when = (iso) => (iso ? iso.replace('T', ' ').slice(0, 19) : '');
  const bytes = (n) => (n < 1024 ? n + ' B' : n < 1048576 ? (n / 1024).toFixed(1) + ' KiB' : (n / 1048576).toFixed(1) + ' MiB');
  const pill = (text, kind) => h('span', { class: 'pill ' + (kind || text) }, text);

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
   * A modal form. fields: {name, label, type: text|password|number|select|checkboxes|textarea|
   * checkbox, value, options: [{value, label, depth}], required}. Resolves true once onSubmit(values)
   * succeeded, false when cancelled; an ApiError it throws is shown in the dialog, which stays open.
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
        const chosen = new Set((f.value || []).map(Number));
        input = h(
          'div',
          { class: 'checks', 'data-name': f.name },
          ...f.options.map((o) =>
            h('label', { class: 'check', style: 'padding-left:' + 1.2 * (o.depth || 0) + 'em' }, h('input', { type: 'checkbox', value: String(o.value), checked: chosen.has(Number(o.value)) }), ' ', o.label),
          ),
        );
      } else if (f.type === 'checkbox') {
        input = h('input', { type: 'checkbox', name: f.name, checked: Boolean(f.value) });
      } else if (f.type === 'textarea') {
        input = h('textarea', { name: f.name, rows: 6, readOnly: Boolean(f.readOnly) }, f.value ?? '');
      } else {
        input = h('input', { name: f.name, type: f.type || 'text', value: f.value ?? '', required: Boolean(f.required), readOnly: Boolean(f.readOnly), autocomplete: 'off' });
      }
      inputs.set(f.name, { f, input });
      return f.type === 'checkbox' ? h('label', { class: 'check' }, input, ' ', f.label) : h('label', {}, f.label, input);
    });
    $('dialog-body').replaceChildren(...rows);
    const read = () => {
      const values = {};
      for (const [name, { f, input }] of inputs) {
        if (f.readOnly) continue;
        if (f.type === 'checkboxes') values[name] = [...input.querySelectorAll('input:checked')].map((c) => Number(c.value));
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
   * A page query (POST …/page) with a filter bar and a pager. filters: [{name, label, type, options}];
   * render(records) → the table. Returns {reload, table()}.
   */
  function pagedList(container, { endpoint, filters = [], toolbar = [], render }) {
    let pageNo = 1;
    let current = null;
    const inputs = filters.map((f) =>
      f.options
        ? h('select', { 'aria-label': f.label, 'data-filter': f.name }, h('option', { value: '' }, f.label + ': any'), ...f.options.map((o) => h('option', { value: o }, o)))
        : h('input', { type: 'search', placeholder: f.label, 'aria-label': f.label, 'data-filter': f.name }),
    );
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
      for (const i of inputs) if (i.value.trim()) params[i.dataset.filter] = i.value.trim();
      try {
        const page = await post(endpoint, { pageNo, pageSize: PAGE_SIZE, params });
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
    return { reload: load, table: () => current };
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

  async function orgOptions() {
    const tree = await api('/app/sysOrg/tree').catch(() => []);
    return [{ value: '', label: '(none)' }, ...flatten(tree).map(({ node, depth }) => ({ value: node.id, label: node.name, depth }))];
  }
  async function roleOptions() {
    const roles = await api('/app/sysRole/list').catch(() => []);
    return roles.map((r) => ({ value: r.id, label: r.name + ' (' + r.code + ')' }));
  }

  async function usersPage(main) {
    const [orgs, roles] = await Promise.all([orgOptions(), can('sys:user:grantRole') ? roleOptions() : []]);
    const userFields = (u) => [
      { name: 'nickName', label: 'Nick name', value: u?.nickName ?? '' },
      { name: 'email', label: 'Email', value: u?.email ?? '', optional: true },
      { name: 'phone', label: 'Phone', value: u?.phone ?? '', optional: true },
      { name: 'orgId', label: 'Organisation', type: 'select', numeric: true, options: orgs, value: u?.orgId ?? '' },
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

  /** The two logs: filters, selection, delete selected and clear. */
  function logPage({ endpoint, code, filters, columns, details }) {
    return async (main) => {
      const list = pagedList(main, {
        endpoint: endpoint + '/page',
        filters,
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
  };

  // --- shell: sidebar and routing ---------------------------------------------------------------------

  let routes = new Map();

  function sidebar(menus) {
    routes = new Map();
    const list = (items) =>
      h(
        'ul',
        {},
        ...items
          .filter((m) => m.type !== 'button' && !m.hidden)
          .map((m) => {
            if (m.type === 'menu' && m.path) {
              routes.set(m.path, m);
              return h('li', {}, h('a', { href: '#' + m.path, 'data-path': m.path }, m.title));
            }
            return h('li', { class: 'group' }, h('span', { class: 'group-title' }, m.title), m.children && m.children.length ? list(m.children) : null);
          }),
      );
    $('sidebar').replaceChildren(list(menus));
  }

  let routeRun = 0;
  async function route() {
    const path = decodeURIComponent(location.hash.slice(1));
    const menu = routes.get(path) || routes.values().next().value;
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
      if (render) await render(main);
      else main.append(h('p', { class: 'muted' }, 'This example has no page for ' + (menu.component || menu.path) + '.'));
    } catch (e) {
      main.append(h('p', { class: 'error' }, e.message));
    }
    // For tests and scripts: the page has rendered its first data.
    if (run === routeRun) document.body.dataset.ready = menu.path;
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
    setView('app');
    await route();
  }

  // --- wiring -------------------------------------------------------------------------------------

  $('api-base').textContent = API;
  $('login-form').addEventListener('submit', onLogin);
  $('captcha-refresh').addEventListener('click', () => void loadCaptcha());
  $('logout').addEventListener('click', () => void onLogout());
  window.addEventListener('hashchange', () => me && void route());

  if (token()) void showApp();
  else void showLogin('');
})();

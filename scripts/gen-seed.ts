// One-off generator for the menu seed in migrations/0001_init.sql; kept so the seed can be
// regenerated when the catalogue grows (a new migration then inserts only the new rows).
const tree = [
  { title: 'User management', path: '/user', icon: 'user', pages: [
    { title: 'Users', path: '/user/list', component: 'user/UserList', code: 'sys:user', actions: ['page', 'detail', 'add', 'edit', 'delete', 'changeStatus', 'resetPassword', 'grantRole', 'ownRole'] },
  ] },
  { title: 'Permission management', path: '/permission', icon: 'lock', pages: [
    { title: 'Roles', path: '/permission/role', component: 'permission/RoleList', code: 'sys:role', actions: ['page', 'list', 'detail', 'add', 'edit', 'delete', 'changeStatus', 'grantMenu', 'ownMenu'] },
    { title: 'Menus', path: '/permission/menu', component: 'permission/MenuList', code: 'sys:menu', actions: ['tree', 'detail', 'add', 'edit', 'delete'] },
  ] },
  { title: 'System management', path: '/system', icon: 'setting', pages: [
    { title: 'Files', path: '/system/file', component: 'system/FileList', code: 'sys:file', actions: ['upload', 'page', 'detail', 'delete', 'download'] },
    { title: 'Images', path: '/system/image', component: 'system/ImageList', code: 'sys:image', actions: ['upload', 'page', 'detail', 'delete', 'preview'] },
    { title: 'Login log', path: '/system/loginLog', component: 'system/LoginLog', code: 'sys:loginLog', actions: ['page', 'delete', 'clear'] },
    { title: 'Operation log', path: '/system/opLog', component: 'system/OpLog', code: 'sys:opLog', actions: ['page', 'detail', 'delete', 'clear'] },
    { title: 'Online users', path: '/system/online', component: 'system/OnlineUser', code: 'sys:online', actions: ['page', 'forceLogout'] },
  ] },
];
const q = (s: string | null) => (s === null ? 'NULL' : `'${s.replaceAll("'", "''")}'`);
const rows: string[] = [];
let id = 0;
tree.forEach((dir, di) => {
  const dirId = ++id;
  rows.push(`(${dirId}, 0, ${q(dir.title)}, 'directory', ${q(dir.path)}, NULL, ${q(dir.icon)}, NULL, ${di + 1})`);
  dir.pages.forEach((page, pi) => {
    const pageId = ++id;
    rows.push(`(${pageId}, ${dirId}, ${q(page.title)}, 'menu', ${q(page.path)}, ${q(page.component)}, NULL, NULL, ${pi + 1})`);
    page.actions.forEach((action, ai) => {
      rows.push(`(${++id}, ${pageId}, ${q(`${page.title}: ${action}`)}, 'button', NULL, NULL, NULL, ${q(`${page.code}:${action}`)}, ${ai + 1})`);
    });
  });
});
console.log(
  'INSERT INTO menus (id, parent_id, title, type, path, component, icon, permission, sort) VALUES\n  ' +
    rows.join(',\n  ') + ';',
);

import { sql, type Selectable } from 'kysely';
import type { Ports } from '../../core/ports.ts';
import type { MenusTable } from '../../db/schema.ts';
import { badRequest, conflict, forbidden, notFound } from '../../core/errors.ts';
import { isoNow } from '../../core/time.ts';
import { buildTree } from '../../core/tree.ts';
import { prepare, qb } from '../../db/compile.ts';
import { idList } from '../../db/id-list.ts';
import type { Runner } from '../../db/runner.ts';
import { menuCodesHeldGuard } from '../../access/held.ts';
import type { Menu, MenuAddInput, MenuEditInput, MenuNode } from './menus.schemas.ts';

type MenuRow = Selectable<MenusTable>;

const COLUMNS = [
  'id', 'parent_id', 'title', 'type', 'path', 'component', 'icon', 'permission',
  'sort', 'hidden', 'status', 'version', 'created_at', 'updated_at', 'name', 'keep_alive',
] as const;

/** The route name shown for a menu: its own, or `Menu<id>` for a directory or menu without one. */
export const routeName = (r: { id: number; type: string; name: string | null }) => r.name ?? (r.type === 'button' ? null : `Menu${r.id}`);

const nameTaken = (name: string) => `name: '${name}' is already the route name of another menu`;

function toMenu(r: MenuRow): Menu {
  return {
    id: r.id,
    parentId: r.parent_id,
    title: r.title,
    type: r.type,
    path: r.path,
    component: r.component,
    icon: r.icon,
    permission: r.permission,
    sort: r.sort,
    hidden: r.hidden === 1,
    name: routeName(r),
    keepAlive: r.keep_alive === 1,
    status: r.status,
    version: r.version,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

/** The editable part of a menu, after defaults and `''` → null. */
interface MenuValues {
  parentId: number;
  title: string;
  type: Menu['type'];
  path: string | null;
  component: string | null;
  icon: string | null;
  permission: string | null;
  sort: number;
  hidden: boolean;
  name: string | null;
  keepAlive: boolean;
  status: Menu['status'];
}

const orNull = (v: string | null | undefined) => (v === undefined || v === null || v === '' ? null : v);

// Guards, written as SQL so they hold inside the write itself (D1 has no interactive transactions,
// and two concurrent moves must not build a cycle together).

/** The parent is the root or an existing non-button menu. */
const parentOk = (parentId: number) =>
  sql<boolean>`(${parentId} = 0 OR EXISTS (SELECT 1 FROM menus p WHERE p.id = ${parentId} AND p.type <> 'button'))`;

/** `id` is not `parentId` nor one of its ancestors, so hanging `id` under `parentId` makes no cycle. */
const notAncestor = (id: number, parentId: number) =>
  sql<boolean>`NOT EXISTS (WITH RECURSIVE anc(mid) AS (SELECT ${parentId} UNION SELECT m.parent_id FROM menus m JOIN anc ON m.id = anc.mid WHERE m.parent_id <> 0) SELECT 1 FROM anc WHERE anc.mid = ${id})`;

const noChildren = (id: number) => sql<boolean>`NOT EXISTS (SELECT 1 FROM menus c WHERE c.parent_id = ${id})`;

/** A taken route name (unique index menus_name) is a 409 naming it. */
const uniqueName = (name: string | null) => (name !== null ? { unique: nameTaken(name) } : {});

/** A menu by id, and the whole table in tree order: compiled once, bound per request. */
const MENU_BY_ID = prepare<{ id: number }>((p) => qb.selectFrom('menus').select(COLUMNS).where('id', '=', p.id));
const ALL_MENUS = prepare<Record<string, never>>(() => qb.selectFrom('menus').select(COLUMNS).orderBy('sort').orderBy('id'));

function loadRow(run: Runner, id: number) {
  return run.first<MenuRow>(MENU_BY_ID.bind({ id }));
}

export async function menuTree(run: Runner): Promise<MenuNode[]> {
  const rows = await run.rows<MenuRow>(ALL_MENUS.bind({}));
  return buildTree(rows.map(toMenu)) as MenuNode[];
}

export async function menuDetail(run: Runner, id: number): Promise<Menu> {
  const row = await loadRow(run, id);
  if (!row) throw notFound(`Menu ${id} not found`);
  return toMenu(row);
}

/** Rules on the record as it would be stored; each failure names its field. */
async function assertValid(run: Runner, v: MenuValues, self?: { id: number; type: Menu['type']; parentId: number }, opts: { reads?: boolean } = {}) {
  if (v.type === 'button' && !v.permission) throw badRequest('permission: is required for a button (buttons exist to carry a code)');
  // `Menu<id>` is what an unnamed menu is called; only that menu may store it.
  const reserved = v.name ? /^menu(\d+)$/i.exec(v.name) : null;
  if (reserved && Number(reserved[1]) !== self?.id) throw badRequest(`name: ${v.name} is reserved for the menu with id ${reserved[1]}`);
  // Without reads: the rules below are conditions of the write itself (parentOk, notAncestor,
  // noChildren); when it writes nothing, the caller runs this again with reads to say why.
  if (opts.reads === false) return;
  if (self && v.type === 'button' && self.type !== 'button') {
    const child = await run.first(qb.selectFrom('menus').select('id').where('parent_id', '=', self.id).compile());
    if (child) throw badRequest('type: a menu with children cannot become a button');
  }
  if (v.parentId === 0) return;
  if (self && v.parentId === self.id) throw badRequest('parentId: a menu cannot be its own parent');
  const parent = await run.first<{ id: number; type: string }>(qb.selectFrom('menus').select(['id', 'type']).where('id', '=', v.parentId).compile());
  if (!parent) throw badRequest(`parentId: menu ${v.parentId} does not exist`);
  if (parent.type === 'button') throw badRequest('parentId: a button cannot have children');
  if (self && self.parentId !== v.parentId) {
    const rows = await run.rows(sql`SELECT 1 AS one WHERE NOT ${notAncestor(self.id, v.parentId)}`.compile(qb));
    if (rows.length) throw badRequest('parentId: a menu cannot be moved under itself or one of its descendants');
  }
}

/**
 * Rule: only a super admin may set or change a menu's permission code. Otherwise sys:menu:edit
 * could re-label a button its holder has as, say, sys:user:grantRole, and sys:menu:add could
 * create codes for roles to pass around.
 */
const ONLY_SUPER_PERMISSION = 'permission: Only a super administrator can set or change the permission code of a menu';

export async function addMenu(deps: Ports, run: Runner, input: MenuAddInput): Promise<Menu> {
  const auth = await run.caller();
  const v: MenuValues = {
    parentId: input.parentId ?? 0,
    title: input.title,
    type: input.type,
    path: orNull(input.path),
    component: orNull(input.component),
    icon: orNull(input.icon),
    permission: orNull(input.permission),
    sort: input.sort ?? 0,
    hidden: input.hidden ?? false,
    name: orNull(input.name),
    keepAlive: input.keepAlive ?? false,
    status: input.status ?? 'enabled',
  };
  if (v.permission !== null && !auth.isSuperAdmin) throw forbidden(ONLY_SUPER_PERMISSION);
  await assertValid(run, v, undefined, { reads: false });
  const now = isoNow(deps.clock);
  // INSERT … SELECT … WHERE: the parent check is part of the write, so a parent deleted or turned
  // into a button meanwhile cannot end up with an orphan or a child.
  const row = await run.write({
    batch: [
      sql`INSERT INTO menus
      (parent_id, title, type, path, component, icon, permission, sort, hidden, name, keep_alive, status, version, created_at, updated_at)
    SELECT ${v.parentId}, ${v.title}, ${v.type}, ${v.path}, ${v.component}, ${v.icon}, ${v.permission},
      ${v.sort}, ${v.hidden ? 1 : 0}, ${v.name}, ${v.keepAlive ? 1 : 0}, ${v.status}, 1, ${now}, ${now}
    WHERE ${parentOk(v.parentId)}
    RETURNING ${sql.join(COLUMNS.map((c) => sql.ref(c)))}`.compile(qb),
    ],
    errors: uniqueName(v.name),
    finish: ([inserted]) => inserted?.rows[0] as MenuRow | undefined,
  });
  if (row === undefined) {
    await assertValid(run, v);
    throw conflict('parentId: the parent menu changed meanwhile; reload and try again');
  }
  // The new record comes back from the INSERT itself (RETURNING): no read after it.
  return toMenu(row);
}

/**
 * `version: 'current'` is for a front end whose form sends none (the vben dialect): the version
 * this edit reads is the one its write requires, so a change made in between is still never
 * overwritten unseen (409), at the same two round trips as a versioned edit.
 */
export async function editMenu(deps: Ports, run: Runner, given: Omit<MenuEditInput, 'version'> & { version: number | 'current' }): Promise<Menu> {
  const cur = await loadRow(run, given.id);
  const auth = await run.caller();
  if (!cur) throw notFound(`Menu ${given.id} not found`);
  const stale = () => conflict('version: the menu was changed by someone else; reload and try again');
  if (given.version !== 'current' && cur.version !== given.version) throw stale();
  const input = { ...given, version: cur.version };
  const old = toMenu(cur);
  const v: MenuValues = {
    parentId: input.parentId ?? old.parentId,
    title: input.title ?? old.title,
    type: input.type ?? old.type,
    path: input.path === undefined ? old.path : orNull(input.path),
    component: input.component === undefined ? old.component : orNull(input.component),
    icon: input.icon === undefined ? old.icon : orNull(input.icon),
    permission: input.permission === undefined ? old.permission : orNull(input.permission),
    sort: input.sort ?? old.sort,
    hidden: input.hidden ?? old.hidden,
    name: input.name === undefined ? cur.name : orNull(input.name),
    keepAlive: input.keepAlive ?? old.keepAlive,
    status: input.status ?? old.status,
  };
  // The update below is conditional on the version read here, so `old.permission` is what it replaces.
  if (v.permission !== old.permission && !auth.isSuperAdmin) throw forbidden(ONLY_SUPER_PERMISSION);
  const self = { id: old.id, type: old.type, parentId: old.parentId };
  await assertValid(run, v, self, { reads: false });
  const update = qb
    .updateTable('menus')
    .set((eb) => ({
      parent_id: v.parentId,
      title: v.title,
      type: v.type,
      path: v.path,
      component: v.component,
      icon: v.icon,
      permission: v.permission,
      sort: v.sort,
      hidden: v.hidden ? 1 : 0,
      name: v.name,
      keep_alive: v.keepAlive ? 1 : 0,
      status: v.status,
      version: eb('version', '+', 1),
      updated_at: isoNow(deps.clock),
    }))
    .where('id', '=', input.id)
    .where('version', '=', input.version)
    .where(parentOk(v.parentId))
    .where(notAncestor(input.id, v.parentId))
    .$if(v.type === 'button', (q) => q.where(noChildren(input.id)))
    .returning(COLUMNS)
    .compile();
  // "Menus carry codes": before the update, the code the menu carries (a non-super admin cannot
  // change it: before = after) is one the caller holds right now; a disabled menu's code nobody holds.
  const updated = await run.write({
    batch: [...menuCodesHeldGuard(auth, idList([input.id])), update],
    errors: uniqueName(v.name),
    finish: (results) => results.at(-1)?.rows[0] as MenuRow | undefined,
  });
  if (updated === undefined) {
    // Lost a race: say why, as the checks above would have.
    const now = await loadRow(run, input.id);
    if (!now) throw notFound(`Menu ${input.id} not found`);
    if (now.version !== input.version) throw stale();
    await assertValid(run, v, { ...self, parentId: -1 });
    throw stale();
  }
  // The record comes back from the UPDATE itself (RETURNING): no read after it.
  return toMenu(updated);
}

/**
 * Deletes menus and their grants in one atomic write. All ids must exist (404 otherwise), and a
 * menu whose children are not deleted with it is refused (400), so no orphan ever appears.
 */
export async function deleteMenus(run: Runner, ids: number[]): Promise<void> {
  const auth = await run.caller();
  const diagnose = async () => {
    const found = new Set((await run.rows<{ id: number }>(qb.selectFrom('menus').select('id').where('id', 'in', idList(ids)).compile())).map((r) => r.id));
    const missing = ids.find((id) => !found.has(id));
    if (missing !== undefined) throw notFound(`Menu ${missing} not found`);
    const child = await run.first<{ id: number; parent_id: number }>(
      qb
        .selectFrom('menus')
        .select(['id', 'parent_id'])
        .where('parent_id', 'in', idList(ids))
        .where('id', 'not in', idList(ids))
        .orderBy('id')
        .limit(1)
        .compile(),
    );
    if (child) throw badRequest(`ids: menu ${child.parent_id} has children (e.g. menu ${child.id}); delete or move them first`);
  };
  // No read before the write: its condition enforces what diagnose tests, and diagnose runs only
  // when the write deleted less than asked, to say why.
  // Each list is ONE bound parameter (idList): D1 refuses statements with over 100.
  const list = idList(ids);
  const guard = sql<boolean>`((SELECT count(*) FROM menus WHERE id IN ${list}) = ${ids.length}
    AND NOT EXISTS (SELECT 1 FROM menus c WHERE c.parent_id IN ${list} AND c.id NOT IN ${list}))`;
  const deleted = await run.write({
    batch: [
      // "Menus carry codes": every code among the menus is one the caller holds (before the deletes).
      ...menuCodesHeldGuard(auth, list),
      qb.deleteFrom('role_menu').where('menu_id', 'in', list).where(guard).compile(),
      qb.deleteFrom('menus').where('id', 'in', list).where(guard).returning('id').compile(),
    ],
    // Rows returned, not numAffectedRows: on D1 that includes what the menus' version trigger wrote (0018).
    finish: (results) => results.at(-1)?.rows.length ?? 0,
  });
  if (deleted !== ids.length) {
    await diagnose();
    throw conflict('ids: the menus changed meanwhile; reload and try again');
  }
}

import { sql, type CompiledQuery, type RawBuilder, type Selectable } from 'kysely';
import type { Ports } from '../../core/ports.ts';
import type { OrgsTable } from '../../db/schema.ts';
import type { Caller } from '../../core/caller.ts';
import { badRequest, conflict, forbidden, notFound } from '../../core/errors.ts';
import { guardStatement } from '../../db/guards.ts';
import { isoNow } from '../../core/time.ts';
import { buildTree } from '../../core/tree.ts';
import { prepare, qb } from '../../db/compile.ts';
import { idList } from '../../db/id-list.ts';
import { lastRow, writeOf } from '../../db/plan.ts';
import type { Runner } from '../../db/runner.ts';
import { callerScope, orgInScope, scopeAll, scopeOrgs } from '../../access/data-scope.ts';
import type { Org, OrgAddInput, OrgEditInput, OrgNode } from './orgs.schemas.ts';

type OrgRow = Selectable<OrgsTable>;

const COLUMNS = ['id', 'parent_id', 'name', 'code', 'sort', 'status', 'remark', 'version', 'created_at', 'updated_at'] as const;

function toOrg(r: OrgRow): Org {
  return {
    id: r.id,
    parentId: r.parent_id,
    name: r.name,
    code: r.code,
    sort: r.sort,
    status: r.status,
    remark: r.remark,
    version: r.version,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

const codeTaken = (code: string) => `code: '${code}' is already taken`;
const NOT_FOUND = (id: number) => `Organisation ${id} not found`;
const PARENT_OUTSIDE = 'parentId: outside your data scope (you can only place organisations under one you see)';
const ROOT_OUTSIDE = 'parentId: only a caller whose data scope is `all` can add or move an organisation to the root';

/** Who sees: the caller's id, and whether they are known to be a super admin (then: everything). */
interface Viewer {
  userId: number;
  isSuperAdmin: boolean;
}
const viewerOf = (run: Runner): Viewer => ({ userId: run.userId, isSuperAdmin: run.knownSuper });

/** Organisation `org` (SQL value) is visible to the caller: `all`, or in their scope. */
const visible = (auth: Viewer, org: RawBuilder<unknown> | number) =>
  auth.isSuperAdmin ? sql<boolean>`1` : sql<boolean>`(${scopeAll(auth.userId)} OR ${orgInScope(auth.userId, sql`${org}`)})`;

/** Guard: `parentId` is a place the caller may put an organisation (the root needs scope `all`). */
function parentGuard(auth: Caller, parentId: number): CompiledQuery[] {
  if (auth.isSuperAdmin) return [];
  const broken = parentId === 0 ? sql`NOT ${scopeAll(auth.userId)}` : sql`NOT ${visible(auth, parentId)}`;
  return [guardStatement('outside_authority', broken)];
}

// Compiled once, bound per request: an organisation by id (for anyone, or if `caller` sees it), and
// the tree (everything, or what `caller` sees; the scope as SQL, so the read travels with the auth row).
const ORG_BY_ID = prepare<{ id: number }>((p) => qb.selectFrom('orgs').select(COLUMNS).where('id', '=', p.id));
const ORG_IN_SCOPE = prepare<{ id: number; caller: number }>((p) =>
  qb.selectFrom('orgs').select(COLUMNS).where('id', '=', p.id).where(visible({ userId: p.caller, isSuperAdmin: false }, sql.ref('orgs.id'))),
);
const ALL_ORGS = prepare<Record<string, never>>(() => qb.selectFrom('orgs').select(COLUMNS).orderBy('sort').orderBy('id'));
const ORGS_IN_SCOPE = prepare<{ caller: number }>((p) =>
  qb
    .selectFrom('orgs')
    .select(COLUMNS)
    .where(sql<boolean>`(${scopeAll(p.caller)} OR orgs.id IN ${scopeOrgs(p.caller)})`)
    .orderBy('sort')
    .orderBy('id'),
);

function findVisible(run: Runner, auth: Viewer, id: number): Promise<OrgRow | undefined> {
  return run.first<OrgRow>(auth.isSuperAdmin ? ORG_BY_ID.bind({ id }) : ORG_IN_SCOPE.bind({ id, caller: auth.userId }));
}

/** The organisations in the caller's scope, as a forest (an org whose parent is hidden is a root). */
export async function orgTree(run: Runner): Promise<OrgNode[]> {
  const rows = await run.rows<OrgRow>(run.knownSuper ? ALL_ORGS.bind({}) : ORGS_IN_SCOPE.bind({ caller: run.userId }));
  return buildTree(rows.map(toOrg)) as OrgNode[];
}

export async function orgDetail(run: Runner, id: number): Promise<Org> {
  const row = await findVisible(run, viewerOf(run), id);
  if (!row) throw notFound(NOT_FOUND(id));
  return toOrg(row);
}

/** Why a parent is refused, checked before the write for a clear answer (the write re-checks). */
async function assertParent(run: Runner, auth: Caller, parentId: number) {
  if (parentId === 0) {
    if (!auth.isSuperAdmin && !(await callerScope(run)).all) throw forbidden(ROOT_OUTSIDE);
    return;
  }
  const exists = await run.first(qb.selectFrom('orgs').select('id').where('id', '=', parentId).compile());
  if (!exists) throw badRequest(`parentId: organisation ${parentId} does not exist`);
  if (!(await findVisible(run, auth, parentId))) throw forbidden(PARENT_OUTSIDE);
}

/** Closure rows for a new org `self` (an SQL value) under `parentId`: itself, and the parent's ancestors. */
function closureInsert(self: RawBuilder<unknown>, parentId: number): CompiledQuery {
  return sql`INSERT INTO org_closure (ancestor_id, descendant_id, depth)
    SELECT ${self}, ${self}, 0 WHERE ${self} IS NOT NULL
    UNION ALL SELECT p.ancestor_id, ${self}, p.depth + 1 FROM org_closure p WHERE p.descendant_id = ${parentId} AND ${self} IS NOT NULL`.compile(qb);
}

/**
 * Adds an organisation under `parentId` (0 = root). The parent must exist and be in the caller's
 * scope (403; the root only for scope `all`); the code is unique (409). One batch: the row, its
 * closure rows, and the scope guard evaluated at write time.
 */
export async function addOrg(deps: Ports, run: Runner, input: OrgAddInput): Promise<Org> {
  const auth = await run.caller();
  const parentId = input.parentId ?? 0;
  // No read before the batch: the parent rule is its guard (and the insert's condition), a taken
  // code its unique index (409), and the new row is read back by its last statement. assertParent
  // runs only to explain a refusal, or a parent gone missing (the insert then wrote nothing).
  const now = isoNow(deps.clock);
  const parentOk = sql<boolean>`(${parentId} = 0 OR EXISTS (SELECT 1 FROM orgs p WHERE p.id = ${parentId}))`;
  const newId = sql`(SELECT n.id FROM orgs n WHERE n.code = ${input.code} COLLATE NOCASE)`;
  const row = await run.write({
    batch: [
      ...parentGuard(auth, parentId),
      sql`INSERT INTO orgs (parent_id, name, code, sort, status, remark, version, created_at, updated_at)
        SELECT ${parentId}, ${input.name}, ${input.code}, ${input.sort ?? 0}, ${input.status ?? 'enabled'}, ${input.remark ?? null}, 1, ${now}, ${now}
        WHERE ${parentOk}`.compile(qb),
      closureInsert(newId, parentId),
      qb.selectFrom('orgs').select(COLUMNS).where(sql<boolean>`code = ${input.code} COLLATE NOCASE`).compile(),
    ],
    errors: { unique: codeTaken(input.code), messages: { outside_authority: parentId === 0 ? ROOT_OUTSIDE : PARENT_OUTSIDE } },
    explain: () => assertParent(run, auth, parentId),
    finish: (results) => lastRow<OrgRow>(results),
  });
  if (!row) {
    await assertParent(run, auth, parentId);
    throw conflict('parentId: the parent organisation changed meanwhile; reload and try again');
  }
  return toOrg(row);
}

/**
 * Partial update under the version check. A move needs the new parent in scope (403), never under
 * the org itself or a descendant (400, also checked inside the write so two crossing moves cannot
 * build a cycle together); the closure rows of the moved subtree are rewritten in the same batch.
 */
export async function editOrg(deps: Ports, run: Runner, input: OrgEditInput): Promise<Org> {
  const auth = await run.caller();
  const stale = 'version: the organisation was changed by someone else; reload and try again';
  // The current row is read first only for a move or a new code (the checks compare with it);
  // otherwise scope and version are guards of the batch, which reads its answer back, and the
  // read runs only to explain a refusal (the plan's explain): 2 round trips with auth.
  const readFirst = input.parentId !== undefined || input.code !== undefined;
  const current = async () => {
    const cur = await findVisible(run, auth, input.id);
    if (!cur) throw notFound(NOT_FOUND(input.id));
    if (cur.version !== input.version) throw conflict(stale);
    return cur;
  };
  const cur = readFirst ? await current() : undefined;
  const parentId = input.parentId ?? cur?.parent_id;
  const moving = cur !== undefined && parentId !== undefined && parentId !== cur.parent_id;
  if (moving && parentId !== undefined) {
    if (parentId === input.id) throw badRequest('parentId: an organisation cannot be its own parent');
    const under = await run.first(
      qb.selectFrom('org_closure').select('depth').where('ancestor_id', '=', input.id).where('descendant_id', '=', parentId).compile(),
    );
    if (under) throw badRequest('parentId: an organisation cannot be moved under itself or one of its descendants');
    await assertParent(run, auth, parentId);
  }
  if (cur && input.code !== undefined && input.code.toLowerCase() !== cur.code.toLowerCase()) {
    const taken = await run.first(qb.selectFrom('orgs').select('id').where(sql<boolean>`code = ${input.code} COLLATE NOCASE`).compile());
    if (taken) throw conflict(codeTaken(input.code));
  }
  const set: Record<string, unknown> = parentId === undefined ? {} : { parent_id: parentId };
  if (input.name !== undefined) set.name = input.name;
  if (input.code !== undefined) set.code = input.code;
  if (input.sort !== undefined) set.sort = input.sort;
  if (input.status !== undefined) set.status = input.status;
  if (input.remark !== undefined) set.remark = input.remark;
  const id = input.id;
  const queries: CompiledQuery[] = [];
  if (!auth.isSuperAdmin) queries.push(guardStatement('out_of_scope', sql`NOT ${visible(auth, id)}`));
  if (moving) queries.push(...parentGuard(auth, parentId));
  queries.push(guardStatement('stale_version', sql`NOT EXISTS (SELECT 1 FROM orgs WHERE id = ${id} AND version = ${input.version})`));
  if (moving) {
    queries.push(
      guardStatement('org_cycle', sql`EXISTS (SELECT 1 FROM org_closure WHERE ancestor_id = ${id} AND descendant_id = ${parentId})`),
      // The new parent must exist: else the org would hang under nothing.
      guardStatement('out_of_scope', sql`${parentId} <> 0 AND NOT EXISTS (SELECT 1 FROM orgs WHERE id = ${parentId})`),
    );
  }
  queries.push(
    qb
      .updateTable('orgs')
      .set((eb) => ({ ...set, version: eb('version', '+', 1), updated_at: isoNow(deps.clock) }))
      .where('id', '=', id)
      .compile(),
  );
  if (moving) {
    const subtree = sql`(SELECT descendant_id FROM org_closure WHERE ancestor_id = ${id})`;
    // Cut the subtree from its old ancestors, then hang it under the new parent's ancestors.
    queries.push(sql`DELETE FROM org_closure WHERE descendant_id IN ${subtree} AND ancestor_id NOT IN ${subtree}`.compile(qb));
    if (parentId !== 0) {
      queries.push(
        sql`INSERT INTO org_closure (ancestor_id, descendant_id, depth)
          SELECT p.ancestor_id, c.descendant_id, p.depth + c.depth + 1
          FROM org_closure p, org_closure c WHERE p.descendant_id = ${parentId} AND c.ancestor_id = ${id}`.compile(qb),
      );
    }
  }
  // The answer, read back by the batch itself.
  queries.push(qb.selectFrom('orgs').select(COLUMNS).where('id', '=', id).where(visible(auth, sql.ref('orgs.id'))).compile());
  const row = await run.write({
    batch: queries,
    errors: {
      unique: codeTaken(input.code ?? ''),
      messages: {
        stale_version: stale,
        out_of_scope: moving ? `parentId: organisation ${parentId} does not exist` : NOT_FOUND(id),
        outside_authority: parentId === 0 ? ROOT_OUTSIDE : PARENT_OUTSIDE,
      },
    },
    explain: readFirst ? undefined : current,
    finish: (results) => lastRow<OrgRow>(results),
  });
  if (!row) throw notFound(NOT_FOUND(id));
  return toOrg(row);
}

/**
 * Deletes organisations, all or nothing: every id must exist in the caller's scope (404 otherwise,
 * as for an unknown id), and none may keep children outside the request or users (400). Custom
 * scopes that listed a deleted org lose it.
 */
export async function deleteOrgs(run: Runner, ids: number[]): Promise<void> {
  const auth = await run.caller();
  const list = idList(ids);
  const diagnose = async () => {
    for (const id of ids) if (!(await findVisible(run, auth, id))) return notFound(NOT_FOUND(id));
    const child = await run.first<{ id: number; parent_id: number }>(
      qb.selectFrom('orgs').select(['id', 'parent_id']).where('parent_id', 'in', list).where('id', 'not in', idList(ids)).orderBy('id').limit(1).compile(),
    );
    if (child) return badRequest(`ids: organisation ${child.parent_id} has children (e.g. ${child.id}); delete or move them first`);
    const user = await run.first<{ id: number; org_id: number }>(
      qb.selectFrom('users').select(['id', 'org_id']).where('org_id', 'in', idList(ids)).orderBy('id').limit(1).compile(),
    );
    if (user) return badRequest(`ids: organisation ${user.org_id} still has users (e.g. user ${user.id}); move them first`);
    return undefined;
  };
  // The batch's guards enforce every rule diagnose tests: it runs only to explain a refusal.
  const explain = async () => {
    const early = await diagnose();
    if (early) throw early;
  };
  await run.write(
    writeOf(
      [
        guardStatement('out_of_scope', sql`(SELECT count(*) FROM orgs o WHERE o.id IN ${list} AND ${visible(auth, sql.ref('o.id'))}) <> ${ids.length}`),
        guardStatement(
          'org_in_use',
          sql`EXISTS (SELECT 1 FROM orgs c WHERE c.parent_id IN ${list} AND c.id NOT IN ${list}) OR EXISTS (SELECT 1 FROM users u WHERE u.org_id IN ${list})`,
        ),
        qb.deleteFrom('role_scope_org').where('org_id', 'in', list).compile(),
        qb.deleteFrom('org_closure').where((eb) => eb.or([eb('descendant_id', 'in', list), eb('ancestor_id', 'in', list)])).compile(),
        qb.deleteFrom('orgs').where('id', 'in', list).compile(),
      ],
      {
        messages: {
          out_of_scope: 'ids: an organisation was removed meanwhile; reload and try again',
          org_in_use: 'ids: an organisation gained children or users meanwhile; reload and try again',
        },
      },
      explain,
    ),
  );
}

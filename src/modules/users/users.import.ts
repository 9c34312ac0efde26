import { sql, type CompiledQuery } from 'kysely';
import { z } from '@hono/zod-openapi';
import type { Caller } from '../../core/caller.ts';
import { parseCsv } from '../../core/csv.ts';
import { AppError, badRequest } from '../../core/errors.ts';
import { assertPasswordAllowed } from '../../core/password-policy.ts';
import type { Ports } from '../../core/ports.ts';
import { SUPER_ADMIN_ROLE } from '../../core/permissions.ts';
import { isoNow } from '../../core/time.ts';
import { readSheet } from '../../core/xlsx-read.ts';
import { qb } from '../../db/compile.ts';
import type { Runner } from '../../db/runner.ts';
import { holdsStatement, heldBy, heldMenuIds, holdsGuard, changedRolesHeldGuard } from '../../access/held.ts';
import { orgInScope, scopeAll, userInScope } from '../../access/data-scope.ts';
import { roleAuthorityGuard, rolesOutsideAuthority, userAuthorityGuard, usersOutsideAuthority, userScopeGuard, userStaysInScopeGuard } from '../../access/containment.ts';
import { lastSuperAdminGuard, superAdminOnly } from '../../access/super-admin.ts';
import { BUILT_IN, initialPassword } from '../config/index.ts';
import { LoginNameSchema, selfProfileFields } from './user.model.ts';
import { ONLY_SUPER, USER_OUTSIDE } from './users.service.ts';

/*
 * sysUser/import (contract: "Standard modules", Import): users from an XLSX or CSV file, all or
 * nothing. Every row is judged under the rules of add/edit before anything is written (dry run or
 * not): one read plan resolves the login names, organisation, role and post codes of the whole
 * file with what the caller may do with each (scope, authority, the super-admin rail), and every
 * row that breaks a rule gets its error (row, column, message). With no error and no dry run, ONE
 * write batch (a transaction on Bun, one DB.batch() on D1) inserts and updates every row, set-based
 * (the rows travel as JSON, IMPORT_CHUNK rows per statement, so no statement binds more than a few
 * values), headed and followed by the same guards add and edit use: a grant or a move racing the
 * import refuses it whole.
 */

/** Data rows a file may hold (the header aside). */
export const IMPORT_MAX_ROWS = 5000;
/** The file's size limit (413 beyond). */
export const IMPORT_MAX_BYTES = 5 * 1024 * 1024;
/** Rows per statement of the write batch (their JSON is one bound value). */
const IMPORT_CHUNK = 500;
/** Errors listed in the answer at most (`failed` counts them all). */
const ERRORS_SHOWN = 1000;

/** The template's columns: header, field, and how a cell becomes the field. `*`: required. */
export const IMPORT_COLUMNS = [
  { header: 'Login name*', field: 'loginName' },
  { header: 'Nick name', field: 'nickName' },
  { header: 'Email', field: 'email' },
  { header: 'Phone', field: 'phone' },
  { header: 'Status', field: 'status' },
  { header: 'Organisation code', field: 'orgCode' },
  { header: 'Roles', field: 'roleCodes' },
  { header: 'Posts', field: 'postCodes' },
  { header: 'Remark', field: 'remark' },
] as const;
type Field = (typeof IMPORT_COLUMNS)[number]['field'];

/** Columns of the users export that an import reads past (so an exported file imports back). */
const EXPORT_ONLY = new Set(['id', 'organisation', 'lastloginat', 'lastloginip', 'createdat']);
const norm = (h: string) => h.toLowerCase().replace(/[\s*_-]/g, '');
const COLUMN_OF = new Map<string, Field>(IMPORT_COLUMNS.flatMap((c) => [[norm(c.header), c.field] as const, [norm(c.field), c.field] as const]));

export const ImportErrorSchema = z
  .object({
    row: z.number().int().openapi({ description: 'Row of the sheet (1 = the header row)' }),
    column: z.string().nullable().openapi({ description: 'Header of the column at fault (null: the row as a whole)' }),
    msg: z.string(),
  })
  .openapi('UserImportError');
export const ImportResultSchema = z
  .object({
    created: z.number().int().openapi({ description: 'Users created (a dry run: that would be)' }),
    updated: z.number().int().openapi({ description: 'Users updated (a dry run: that would be)' }),
    failed: z.number().int().openapi({ description: 'Rows refused; any refusal writes nothing' }),
    errors: z.array(ImportErrorSchema).openapi({ description: `Per-row errors, at most ${ERRORS_SHOWN}` }),
  })
  .openapi('UserImportResult');
export type ImportResult = z.infer<typeof ImportResultSchema>;
type RowError = z.infer<typeof ImportErrorSchema>;

export interface ImportInput {
  bytes: Uint8Array;
  updateSupport: boolean;
  dryRun: boolean;
}

/** A row as read: its sheet row number and the cells of the columns it has. */
interface Parsed {
  row: number;
  loginName: string;
  nickName?: string;
  email?: string | null;
  phone?: string | null;
  status?: 'enabled' | 'disabled';
  orgCode?: string;
  roleCodes?: string[];
  postCodes?: string[];
  remark?: string | null;
}

/** The file as rows of text: an .xlsx by its zip signature, otherwise CSV. 413/400 from the readers. */
async function rowsOf(bytes: Uint8Array): Promise<string[][]> {
  const limits = { maxBytes: IMPORT_MAX_BYTES, maxRows: IMPORT_MAX_ROWS + 1, maxColumns: 50 };
  const zip = bytes[0] === 0x50 && bytes[1] === 0x4b && bytes[2] === 0x03 && bytes[3] === 0x04;
  const ole = bytes[0] === 0xd0 && bytes[1] === 0xcf && bytes[2] === 0x11 && bytes[3] === 0xe0;
  return zip || ole ? readSheet(bytes, limits) : parseCsv(bytes, limits);
}

const STATUS_WORDS: Record<string, 'enabled' | 'disabled'> = { enabled: 'enabled', disabled: 'disabled', '正常': 'enabled', '停用': 'disabled' };
const codesOf = (text: string) => [...new Set(text.split(/[,，;；\s]+/).map((s) => s.trim()).filter(Boolean))];

const fieldSchemas = {
  loginName: LoginNameSchema,
  nickName: selfProfileFields.nickName.unwrap(),
  email: selfProfileFields.email.unwrap().unwrap(),
  phone: selfProfileFields.phone.unwrap().unwrap(),
  remark: z.string().trim().max(255, 'must be at most 255 characters'),
};

/** The header row's columns and every data row checked field by field (errors: row, column, message). */
function parseRows(rows: string[][], errors: RowError[]): Parsed[] {
  const header = rows[0] ?? [];
  const fields: (Field | undefined)[] = [];
  for (const [i, h] of header.entries()) {
    const key = norm(h);
    const f = COLUMN_OF.get(key);
    if (!f && key !== '' && !EXPORT_ONLY.has(key)) throw badRequest(`file: unknown column "${h.slice(0, 40)}" (row 1, column ${i + 1}); download the template for the columns`);
    if (f && fields.includes(f)) throw badRequest(`file: the column "${h.slice(0, 40)}" appears twice`);
    fields.push(f);
  }
  if (!fields.includes('loginName')) throw badRequest('file: the header row (row 1) has no "Login name" column; download the template');
  if (rows.length < 2) throw badRequest('file: no rows to import below the header');
  const headerOf = (f: Field) => IMPORT_COLUMNS.find((c) => c.field === f)!.header.replace('*', '');
  const out: Parsed[] = [];
  const seen = new Map<string, number>();
  for (let r = 1; r < rows.length; r++) {
    const cells = rows[r]!;
    const row = r + 1;
    if (cells.every((c) => c.trim() === '')) continue;
    const p: Partial<Parsed> & { row: number } = { row };
    let ok = true;
    const fail = (f: Field | null, msg: string) => {
      errors.push({ row, column: f ? headerOf(f) : null, msg });
      ok = false;
    };
    fields.forEach((f, i) => {
      if (!f) return;
      const text = (cells[i] ?? '').trim();
      if (text === '' && f !== 'loginName') return; // empty: the default (add) or unchanged (update)
      if (f === 'status') {
        const s = STATUS_WORDS[text.toLowerCase()] ?? STATUS_WORDS[text];
        return s ? void (p.status = s) : fail(f, "must be 'enabled' or 'disabled' (正常 / 停用)");
      }
      if (f === 'orgCode') return void (p.orgCode = text);
      if (f === 'roleCodes' || f === 'postCodes') return void (p[f] = codesOf(text));
      const checked = fieldSchemas[f].safeParse(text);
      if (!checked.success) return fail(f, checked.error.issues[0]?.message ?? 'is not valid');
      (p as Record<string, unknown>)[f] = checked.data;
    });
    if (ok) {
      const key = p.loginName!.toLowerCase();
      const first = seen.get(key);
      if (first !== undefined) fail('loginName', `'${p.loginName}' is already on row ${first}`);
      else seen.set(key, row);
    }
    if (ok) out.push(p as Parsed);
  }
  return out;
}

interface Existing {
  login_name: string;
  id: number;
  visible: number;
  super_: number;
  outside: number;
}
interface Coded {
  code: string;
  id: number;
  ok: number;
  super_?: number;
}

const json = (v: unknown) => JSON.stringify(v);
const inList = (list: readonly string[]) => sql<string>`(SELECT value FROM json_each(${json(list)}))`;

/**
 * One read plan (the caller's auth statement at its head while unjudged): the users the file names
 * and what the caller may do to each, the organisations, roles and posts its codes name and whether
 * the caller may use each, and the codes the caller holds for fields doing another operation's job.
 */
async function resolve(run: Runner, auth: Caller, rows: Parsed[]) {
  const me = auth.userId;
  const su = auth.isSuperAdmin;
  const names = rows.map((r) => r.loginName);
  const orgCodes = [...new Set(rows.flatMap((r) => (r.orgCode ? [r.orgCode] : [])))];
  const roleCodes = [...new Set(rows.flatMap((r) => r.roleCodes ?? []))];
  const postCodes = [...new Set(rows.flatMap((r) => r.postCodes ?? []))];
  const yes = sql<number>`1`;
  const reads = [
    holdsStatement(me, 'sys:user:grantRole'),
    holdsStatement(me, 'sys:user:changeStatus'),
    sql`SELECT ${su ? yes : scopeAll(me)} AS all_`.compile(qb),
    // Login names compare case-insensitively (the users_login_name NOCASE index).
    sql`SELECT u.login_name, u.id,
        ${su ? yes : userInScope(me, sql.ref('u.id'), sql.ref('u.org_id'))} AS visible,
        EXISTS (SELECT 1 FROM user_role ur JOIN roles r ON r.id = ur.role_id WHERE ur.user_id = u.id AND r.code = ${SUPER_ADMIN_ROLE}) AS super_,
        ${su ? sql`0` : usersOutsideAuthority(me, sql`(u.id)`)} AS outside
      FROM users u WHERE u.login_name COLLATE NOCASE IN ${inList(names)}`.compile(qb),
    sql`SELECT o.code, o.id, ${su ? yes : sql`(${scopeAll(me)} OR ${orgInScope(me, sql.ref('o.id'))})`} AS ok FROM orgs o WHERE o.code IN ${inList(orgCodes)}`.compile(qb),
    sql`SELECT r.code, r.id, r.code = ${SUPER_ADMIN_ROLE} AS super_,
        ${su ? yes : sql`NOT (${rolesOutsideAuthority(me, sql`(r.id)`)} OR EXISTS (SELECT 1 FROM role_menu grm WHERE grm.role_id = r.id AND grm.menu_id NOT IN ${heldMenuIds(me)}))`} AS ok
      FROM roles r WHERE r.code IN ${inList(roleCodes)}`.compile(qb),
    sql`SELECT p.code, p.id, 1 AS ok FROM posts p WHERE p.code COLLATE NOCASE IN ${inList(postCodes)}`.compile(qb),
  ];
  const [grant, status, all, users, orgs, roles, posts] = await run.read({ reads, finish: (r) => r });
  const byCode = (rs: unknown[] | undefined, nocase = false) => new Map((rs as Coded[]).map((r) => [nocase ? r.code.toLowerCase() : r.code, r]));
  return {
    mayGrant: su || heldBy(grant),
    mayChangeStatus: su || heldBy(status),
    scopeAll: su || (all?.[0] as { all_: number } | undefined)?.all_ === 1,
    users: new Map((users as Existing[]).map((u) => [u.login_name.toLowerCase(), u])),
    orgs: byCode(orgs),
    roles: byCode(roles),
    posts: byCode(posts, true),
  };
}

/** A row ready to write: a new user, or the id of the one it updates; ids resolved. */
interface Planned {
  row: Parsed;
  id?: number;
  orgId?: number | null;
  roleIds?: number[];
  postIds?: number[];
}

/** Judges every row under add/edit's rules; the planned rows (only meaningful when no error). */
function judge(auth: Caller, rows: Parsed[], found: Awaited<ReturnType<typeof resolve>>, updateSupport: boolean, errors: RowError[]): Planned[] {
  const planned: Planned[] = [];
  for (const row of rows) {
    const errs: RowError[] = [];
    const fail = (column: string | null, msg: string) => errs.push({ row: row.row, column, msg });
    const existing = found.users.get(row.loginName.toLowerCase());
    const plan: Planned = { row };
    if (existing) {
      if (!updateSupport) fail('Login name', `'${row.loginName}' already exists (turn updateSupport on to update existing users)`);
      else if (!existing.visible) fail('Login name', `'${row.loginName}' is already taken`);
      else if (existing.id === auth.userId) fail('Login name', 'you cannot import over your own account; edit it in your profile');
      else if (existing.super_ && !auth.isSuperAdmin) fail('Login name', ONLY_SUPER.edit);
      else if (existing.outside) fail('Login name', USER_OUTSIDE);
      plan.id = existing.id;
      if (row.status !== undefined && !found.mayChangeStatus) fail('Status', 'changing the status through import also requires the permission sys:user:changeStatus');
    }
    if (row.orgCode !== undefined) {
      const org = found.orgs.get(row.orgCode);
      if (!org) fail('Organisation code', `no organisation has the code '${row.orgCode}'`);
      else if (!org.ok) fail('Organisation code', `organisation '${row.orgCode}' is outside your data scope`);
      else plan.orgId = org.id;
    } else if (!existing && !found.scopeAll) {
      fail('Organisation code', 'a user without an organisation would be outside your data scope; give an organisation you see');
    }
    if (row.roleCodes !== undefined) {
      if (!found.mayGrant) fail('Roles', 'granting roles through import also requires the permission sys:user:grantRole');
      const ids: number[] = [];
      for (const code of row.roleCodes) {
        const role = found.roles.get(code);
        if (!role) fail('Roles', `no role has the code '${code}'`);
        else if (role.super_ && !auth.isSuperAdmin) fail('Roles', ONLY_SUPER.add);
        else if (!role.ok) fail('Roles', `you can only grant roles whose menus, codes and data scope you hold yourself; not allowed: '${code}'`);
        else ids.push(role.id);
      }
      plan.roleIds = ids;
    }
    if (row.postCodes !== undefined) {
      const ids: number[] = [];
      for (const code of row.postCodes) {
        const post = found.posts.get(code.toLowerCase());
        if (!post) fail('Posts', `no post has the code '${code}'`);
        else ids.push(post.id);
      }
      plan.postIds = ids;
    }
    errors.push(...errs);
    if (errs.length === 0) planned.push(plan);
  }
  return planned;
}

const chunks = <T>(list: readonly T[]) => Array.from({ length: Math.ceil(list.length / IMPORT_CHUNK) }, (_, i) => list.slice(i * IMPORT_CHUNK, (i + 1) * IMPORT_CHUNK));
const val = (field: string) => sql`json_extract(j.value, ${`$.${field}`})`;
/** An update's column: the row's value when it has one, else unchanged. */
const keep = (field: string, column: string) => sql`CASE WHEN json_type(j.value, ${`$.${field}`}) IS NULL THEN ${sql.ref(column)} ELSE ${val(field)} END`;

/** The one write batch of an import (see the file comment). */
function writeBatch(auth: Caller, planned: Planned[], hash: string, now: string): CompiledQuery[] {
  const added = planned.filter((p) => p.id === undefined);
  const updated = planned.filter((p) => p.id !== undefined);
  const updatedIds = updated.map((p) => p.id!);
  const roleIds = [...new Set(planned.flatMap((p) => p.roleIds ?? []))];
  const names = json(planned.map((p) => p.row.loginName));
  const touched = sql`(SELECT tu.id FROM users tu WHERE tu.login_name COLLATE NOCASE IN (SELECT value FROM json_each(${names})))`;
  const anyStatus = updated.some((p) => p.row.status !== undefined);
  const anyRoles = roleIds.length > 0 || planned.some((p) => p.roleIds !== undefined);
  const batch: CompiledQuery[] = [
    ...(anyRoles ? holdsGuard(auth, 'sys:user:grantRole') : []),
    ...(anyStatus ? holdsGuard(auth, 'sys:user:changeStatus') : []),
    ...superAdminOnly(auth, { roleIds, userIds: updatedIds }),
    ...(roleIds.length > 0 ? [...changedRolesHeldGuard(auth, sql`NULL`, roleIds), ...roleAuthorityGuard(auth, sql`(SELECT value FROM json_each(${json(roleIds)}))`)] : []),
  ];
  if (updatedIds.length > 0) batch.push(...userScopeGuard(auth, updatedIds), ...userAuthorityGuard(auth, sql`(SELECT value FROM json_each(${json(updatedIds)}))`));
  const record = (p: Planned) => ({
    id: p.id,
    loginName: p.row.loginName,
    nickName: p.row.nickName,
    email: p.row.email,
    phone: p.row.phone,
    remark: p.row.remark,
    status: p.row.status,
    orgId: p.orgId,
    roleIds: p.roleIds,
    postIds: p.postIds,
  });
  for (const part of chunks(added)) {
    batch.push(sql`INSERT INTO users (login_name, password_hash, nick_name, email, phone, remark, org_id, status, created_at, updated_at)
      SELECT ${val('loginName')}, ${hash}, coalesce(${val('nickName')}, ${val('loginName')}), ${val('email')}, ${val('phone')}, ${val('remark')},
        ${val('orgId')}, coalesce(${val('status')}, 'enabled'), ${now}, ${now}
      FROM json_each(${json(part.map(record))}) j`.compile(qb));
  }
  for (const part of chunks(updated)) {
    const rows = json(part.map(record));
    batch.push(sql`UPDATE users SET nick_name = ${keep('nickName', 'users.nick_name')}, email = ${keep('email', 'users.email')},
        phone = ${keep('phone', 'users.phone')}, remark = ${keep('remark', 'users.remark')}, org_id = ${keep('orgId', 'users.org_id')},
        status = ${keep('status', 'users.status')}, version = users.version + 1, updated_at = ${now}
      FROM json_each(${rows}) j WHERE users.id = ${val('id')}`.compile(qb));
    const disabled = json(part.filter((p) => p.row.status === 'disabled').map((p) => p.id));
    batch.push(sql`UPDATE sessions SET revoked_at = ${now} WHERE revoked_at IS NULL AND user_id IN (SELECT value FROM json_each(${disabled}))`.compile(qb));
    const regranted = json(part.filter((p) => p.roleIds !== undefined).map((p) => p.id));
    batch.push(sql`DELETE FROM user_role WHERE user_id IN (SELECT value FROM json_each(${regranted}))`.compile(qb));
    const reposted = json(part.filter((p) => p.postIds !== undefined).map((p) => p.id));
    batch.push(sql`DELETE FROM user_post WHERE user_id IN (SELECT value FROM json_each(${reposted}))`.compile(qb));
  }
  // Grants of every row that names them, found by login name (a new row's id is not known before the batch).
  for (const part of chunks(planned.filter((p) => p.roleIds?.length || p.postIds?.length))) {
    const rows = json(part.map((p) => ({ loginName: p.row.loginName, roleIds: p.roleIds ?? [], postIds: p.postIds ?? [] })));
    const grant = (table: 'user_role' | 'user_post', column: 'role_id' | 'post_id', field: string) =>
      sql`INSERT INTO ${sql.table(table)} (user_id, ${sql.ref(column)}) SELECT u.id, g.value FROM json_each(${rows}) j
        JOIN users u ON u.login_name = ${val('loginName')} COLLATE NOCASE, json_each(j.value, ${`$.${field}`}) g`.compile(qb);
    batch.push(grant('user_role', 'role_id', 'roleIds'), grant('user_post', 'post_id', 'postIds'));
  }
  if (updated.some((p) => p.row.status === 'disabled' || p.roleIds !== undefined)) batch.push(lastSuperAdminGuard());
  // After the writes: every user written is inside the caller's scope and authority.
  batch.push(...userStaysInScopeGuard(auth, touched), ...userAuthorityGuard(auth, touched));
  return batch;
}

/** sysUser/import: see the file comment. A file the readers refuse is a 4xx AppError (413 too large, 400 otherwise). */
export async function importUsers(deps: Ports, run: Runner, input: ImportInput): Promise<ImportResult> {
  const errors: RowError[] = [];
  const rows = parseRows(await rowsOf(input.bytes), errors);
  const auth = await run.caller();
  const found = await resolve(run, auth, rows);
  const planned = judge(auth, rows, found, input.updateSupport, errors);
  const added = planned.filter((p) => p.id === undefined);
  // New users get the initial password (sys.user.initPassword), under the password rule.
  let password: string | undefined;
  if (added.length > 0) {
    try {
      password = await initialPassword(deps, run);
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      throw badRequest(`New users get the initial password of the parameter ${BUILT_IN.initPassword}, which is empty: set it first`);
    }
    for (const p of added) {
      try {
        assertPasswordAllowed(password, p.row.loginName, deps.config.PASSWORD_MIN_LENGTH, `password (${BUILT_IN.initPassword})`);
      } catch (err) {
        if (!(err instanceof AppError)) throw err;
        errors.push({ row: p.row.row, column: null, msg: err.message });
      }
    }
  }
  errors.sort((a, b) => a.row - b.row);
  const failed = new Set(errors.map((e) => e.row)).size;
  const shown = errors.slice(0, ERRORS_SHOWN);
  if (failed > 0) return { created: 0, updated: 0, failed, errors: shown };
  const updated = planned.length - added.length;
  if (input.dryRun) return { created: added.length, updated, failed: 0, errors: [] };
  // One hash for the file: every new user starts from the same initial password (argon2 per row
  // would cost seconds per hundred rows); each is asked to change it like any added user.
  const hash = password === undefined ? '' : await deps.hasher.hash(password);
  await run.write({
    batch: writeBatch(auth, planned, hash, isoNow(deps.clock)),
    errors: {
      unique: 'file: a login name of the file was taken meanwhile; run the import again',
      messages: { out_of_scope: 'file: a user of the file left your data scope meanwhile; run the import again', outside_authority: USER_OUTSIDE, super_admin_only: ONLY_SUPER.edit },
    },
    finish: () => undefined,
  });
  return { created: added.length, updated, failed: 0, errors: [] };
}

/** The template's header row. */
export const importTemplateHeader = () => IMPORT_COLUMNS.map((c) => c.header);

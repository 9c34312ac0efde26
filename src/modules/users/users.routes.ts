import type { Context } from 'hono';
import { createRoute, z } from '@hono/zod-openapi';
import { idQuerySchema } from '../../core/pagination.ts';
import { guarded } from '../../http/guard.ts';
import { createRouter, errorResponse, jsonBody } from '../../http/router.ts';
import { UserSchema } from './user.model.ts';
import {
  AddUserRequest,
  ChangeStatusRequest,
  EditUserRequest,
  GrantRoleRequest,
  IdsRequest,
  ResetPasswordRequest,
  ResetMfaRequest,
  UserPage,
  UserPageRequest,
} from './users.schemas.ts';
import * as users from './users.service.ts';
import { ok, okResponse } from '../../http/respond.ts';
import { exportAnswer, exportRequestSchema, exportRoute, when, type ExportFormat } from '../export/index.ts';
import { UserPageParams } from './users.schemas.ts';
import { csvStream } from '../../core/csv.ts';
import { xlsxStream } from '../../core/xlsx-write.ts';
import { downloadHeaders, XLSX_TYPE } from '../export/index.ts';
import { readImportForm } from './import-form.ts';
import { IMPORT_MAX_BYTES, IMPORT_MAX_ROWS, ImportResultSchema, importTemplateHeader, importUsers } from './users.import.ts';

const tags = ['Users'];
const base = '/app/sysUser';
const notFound = { 404: errorResponse('No such user') };
const conflict = (what: string) => ({ 409: errorResponse(what) });
/** The super-admin rule, stated on every write it applies to. */
const SUPER_RULE =
  'Only a super administrator may grant or revoke the superAdmin role or act on a user who holds it; anyone else gets 403 ("Only a super administrator can …").';

const pageRoute = guarded(
  'sys:user:page',
  createRoute({
    method: 'post',
    path: `${base}/page`,
    tags,
    summary: 'Page of users (filters: loginName, nickName, phone, status, roleId, createdFrom, createdTo)',
    request: { body: jsonBody(UserPageRequest) },
    responses: okResponse('A page of users', UserPage),
  }),
);

const detailRoute = guarded(
  'sys:user:detail',
  createRoute({
    method: 'get',
    path: `${base}/detail`,
    tags,
    summary: 'One user',
    request: { query: idQuerySchema },
    responses: { ...okResponse('The user', UserSchema), ...notFound },
  }),
);

const addRoute = guarded(
  'sys:user:add',
  createRoute({
    method: 'post',
    path: `${base}/add`,
    tags,
    summary: 'Add a user (with optional roleIds, in one atomic write; login names are unique case-insensitively; superAdmin role: super admins only)',
    description: `${SUPER_RULE} Adding a user with the superAdmin role in \`roleIds\` is therefore 403 for others.`,
    request: { body: jsonBody(AddUserRequest) },
    responses: { ...okResponse('The new user', UserSchema), ...conflict('The login name is taken') },
  }),
  { oplog: true },
);

const editRoute = guarded(
  'sys:user:edit',
  createRoute({
    method: 'post',
    path: `${base}/edit`,
    tags,
    summary: 'Edit a user (partial; `version` must match, else 409; roleIds also needs sys:user:grantRole, status sys:user:changeStatus)',
    description: `Sending \`roleIds\` also requires \`sys:user:grantRole\`, sending \`status\` also \`sys:user:changeStatus\` (403 otherwise; super admins pass). ${SUPER_RULE}`,
    request: { body: jsonBody(EditUserRequest) },
    responses: { ...okResponse('The updated user', UserSchema), ...notFound, ...conflict('Stale version or login name taken') },
  }),
  { oplog: true },
);

const deleteRoute = guarded(
  'sys:user:delete',
  createRoute({
    method: 'post',
    path: `${base}/delete`,
    tags,
    summary: "Delete users with their role grants and sessions (never the caller's own account or the last super admin; a super admin only by a super admin)",
    description: SUPER_RULE,
    request: { body: jsonBody(IdsRequest) },
    responses: okResponse('Deleted (unknown ids are ignored)', z.null()),
  }),
  { oplog: true },
);

const changeStatusRoute = guarded(
  'sys:user:changeStatus',
  createRoute({
    method: 'post',
    path: `${base}/changeStatus`,
    tags,
    summary: "Enable or disable a user; disabling revokes the user's sessions (never oneself or the last super admin; a super admin only by a super admin)",
    description: SUPER_RULE,
    request: { body: jsonBody(ChangeStatusRequest) },
    responses: { ...okResponse('Changed', z.null()), ...notFound },
  }),
  { oplog: true },
);

const resetPasswordRoute = guarded(
  'sys:user:resetPassword',
  createRoute({
    method: 'post',
    path: `${base}/resetPassword`,
    tags,
    summary: "Set a user's password; revokes all of that user's sessions (a super admin's only by a super admin)",
    description: SUPER_RULE,
    request: { body: jsonBody(ResetPasswordRequest) },
    responses: { ...okResponse('Reset', z.null()), ...notFound },
  }),
  { oplog: true },
);

const resetMfaRoute = guarded(
  'sys:user:resetMfa',
  createRoute({
    method: 'post',
    path: `${base}/resetMfa`,
    tags,
    summary: "Remove a user's second factors (TOTP, passkeys, recovery codes); revokes all of that user's sessions",
    description: `${SUPER_RULE} Not for one's own account (400: use the own-account mfa routes).`,
    request: { body: jsonBody(ResetMfaRequest) },
    responses: { ...okResponse('Reset', z.null()), ...notFound },
  }),
  { oplog: true },
);

const grantRoleRoute = guarded(
  'sys:user:grantRole',
  createRoute({
    method: 'post',
    path: `${base}/grantRole`,
    tags,
    summary: "Replace a user's roles (an empty list revokes all; unknown role ids → 400; never strips the last super admin; the superAdmin role only by a super admin)",
    description: SUPER_RULE,
    request: { body: jsonBody(GrantRoleRequest) },
    responses: { ...okResponse('Granted', z.null()), ...notFound },
  }),
  { oplog: true },
);

const ownRoleRoute = guarded(
  'sys:user:ownRole',
  createRoute({
    method: 'get',
    path: `${base}/ownRole`,
    tags,
    summary: "The ids of a user's roles",
    request: { query: idQuerySchema },
    responses: { ...okResponse('Role ids', z.array(z.number().int())), ...notFound },
  }),
);

const exportUsersRoute = exportRoute('sys:user:export', base, tags, 'users', exportRequestSchema('UserExportRequest', UserPageParams));

const binary = z.string().openapi({ type: 'string', format: 'binary' });
const importTemplateRoute = guarded(
  'sys:user:import',
  createRoute({
    method: 'get',
    path: `${base}/importTemplate`,
    tags,
    summary: 'The import template: the header row sysUser/import reads (XLSX or CSV)',
    request: { query: z.strictObject({ format: z.enum(['xlsx', 'csv']).default('xlsx').openapi({ param: { name: 'format', in: 'query' } }) }) },
    responses: { 200: { description: 'The template (not an envelope)', content: { [XLSX_TYPE]: { schema: binary }, 'text/csv': { schema: binary } } } },
  }),
);
const importRoute = guarded(
  'sys:user:import',
  createRoute({
    method: 'post',
    path: `${base}/import`,
    tags,
    summary: 'Import users from an XLSX or CSV file, all or nothing (dryRun: only the per-row check)',
    description:
      `multipart/form-data: \`file\` (the template's columns; at most ${IMPORT_MAX_BYTES / 1024 / 1024} MiB or MAX_UPLOAD_BYTES if lower, and ${IMPORT_MAX_ROWS} rows), \`updateSupport\` ` +
      '(true: rows whose login name exists update that user; false: they are errors), `dryRun` (true: check only). Every row under the rules of ' +
      'add/edit, data scope and containment included; any error writes nothing and is listed with its row and column. New users get the ' +
      'initial password of sys.user.initPassword (400 while it is empty). ' + SUPER_RULE,
    request: {
      body: {
        required: true,
        content: {
          'multipart/form-data': {
            schema: {
              type: 'object',
              required: ['file'],
              properties: {
                file: { type: 'string', format: 'binary' },
                updateSupport: { type: 'string', enum: ['true', 'false'], default: 'false' },
                dryRun: { type: 'string', enum: ['true', 'false'], default: 'false' },
              },
            },
          },
        },
      } as never,
    },
    responses: { ...okResponse('What was (or, a dry run, would be) created and updated, and every row refused', ImportResultSchema), 413: errorResponse('The file is over its size limit') },
  }),
  { oplog: true },
);

/** The import template (the header row the import reads), as our route and the RuoYi dialect answer it. */
export async function importTemplateAnswer(c: Context, format: ExportFormat): Promise<Response> {
  await c.get('run').caller(); // the verdict before the file: a refusal answers without its headers
  const header = importTemplateHeader();
  const none = (async function* () {})();
  const body = format === 'csv' ? csvStream(header, none) : xlsxStream(header, none, { sheetName: 'users' });
  return new Response(body, { status: 200, headers: downloadHeaders(`users-import-template.${format}`, format) });
}

/** The users export, as our route and the RuoYi dialect answer it: the page's rows for `params`, in scope, these columns. */
export function exportUsers(c: Context, params: Parameters<typeof users.userFilter>[0], format: ExportFormat): Promise<Response> {
  return exportAnswer(c, {
    name: 'users',
    rows: users.userFilter(params),
    scope: users.USER_SCOPE,
    select: users.exportSelect,
    keys: ['users.id'],
    columns: [
      { header: 'ID', value: (r) => r.id },
      { header: 'Login name', value: (r) => r.login_name },
      { header: 'Nick name', value: (r) => r.nick_name },
      { header: 'Email', value: (r) => r.email },
      { header: 'Phone', value: (r) => r.phone },
      { header: 'Status', value: (r) => r.status, dict: 'sys_normal_disable' },
      { header: 'Organisation', value: (r) => r.org_name },
      { header: 'Organisation code', value: (r) => r.org_code },
      { header: 'Roles', value: (r) => r.role_codes },
      { header: 'Posts', value: (r) => r.post_codes },
      { header: 'Remark', value: (r) => r.remark },
      { header: 'Last login at', value: (r) => when(r.last_login_at) },
      { header: 'Last login IP', value: (r) => r.last_login_ip },
      { header: 'Created at', value: (r) => when(r.created_at) },
    ],
  }, format);
}

export const userRoutes = createRouter()
  .openapi(pageRoute, async (c) => ok(c, await users.pageUsers(c.get('deps'), c.get('run'), c.req.valid('json'))))
  .openapi(detailRoute, async (c) => ok(c, await users.userDetail(c.get('run'), c.req.valid('query').id)))
  .openapi(addRoute, async (c) => ok(c, await users.addUser(c.get('deps'), c.get('run'), c.req.valid('json'))))
  .openapi(editRoute, async (c) => ok(c, await users.editUser(c.get('deps'), c.get('run'), c.req.valid('json'))))
  .openapi(deleteRoute, async (c) => {
    await users.deleteUsers(c.get('run'), c.req.valid('json').ids);
    return ok(c, null);
  })
  .openapi(changeStatusRoute, async (c) => {
    await users.changeUserStatus(c.get('deps'), c.get('run'), c.req.valid('json'));
    return ok(c, null);
  })
  .openapi(resetPasswordRoute, async (c) => {
    await users.resetPassword(c.get('deps'), c.get('run'), c.req.valid('json'));
    return ok(c, null);
  })
  .openapi(resetMfaRoute, async (c) => {
    await users.resetMfa(c.get('deps'), c.get('run'), c.req.valid('json'));
    return ok(c, null);
  })
  .openapi(grantRoleRoute, async (c) => {
    await users.grantRoles(c.get('run'), c.req.valid('json'));
    return ok(c, null);
  })
  .openapi(ownRoleRoute, async (c) => ok(c, await users.ownRoles(c.get('run'), c.req.valid('query').id)))
  .openapi(importTemplateRoute, async (c) => (await importTemplateAnswer(c, c.req.valid('query').format)) as never)
  .openapi(importRoute, async (c) => {
    const form = await readImportForm(c.req.raw, Math.min(IMPORT_MAX_BYTES, c.get('deps').config.MAX_UPLOAD_BYTES));
    c.set('opParams', { file: form.fileName, size: form.bytes.byteLength, updateSupport: form.updateSupport, dryRun: form.dryRun });
    return ok(c, await importUsers(c.get('deps'), c.get('run'), form));
  })
  .openapi(exportUsersRoute, async (c) => {
    const { params, format } = c.req.valid('json');
    return (await exportUsers(c, params, format)) as never;
  });

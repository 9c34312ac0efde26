import { createRoute, z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { notFound } from '../../core/errors.ts';
import { idQuerySchema } from '../../core/pagination.ts';
import { guarded } from '../../http/guard.ts';
import { ok, okResponse } from '../../http/respond.ts';
import { createRouter, errorResponse, jsonBody } from '../../http/router.ts';
import { isSecretKey, readConfigValue } from './config-values.ts';
import { addConfig, configDetail, deleteConfigs, editConfig, pageConfigs } from './config.service.ts';
import { ConfigAddRequest, ConfigEditRequest, ConfigIdsRequest, ConfigPage, ConfigPageRequest, ConfigSchema, ConfigValueQuery } from './config.schemas.ts';
import { exportAnswer, exportRequestSchema, exportRoute, when, type ExportFormat } from '../export/index.ts';
import { ConfigPageParams } from './config.schemas.ts';
import { configFilter } from './config.service.ts';

const tags = ['Parameters'];
const base = '/app/sysConfig';
const notFoundAnswer = { 404: errorResponse('No such parameter') };
const conflictAnswer = { 409: errorResponse('The key is taken, or the version is stale') };
const BUILT_IN_NOTE =
  'Built-in parameters (type `builtIn`) are read by the service itself: `sys.account.captchaEnabled` (true|false; empty follows CAPTCHA_ENABLED), `sys.user.initPassword` (the password sysUser/add uses when none is sent; empty: a password is required), `sys.account.registerUser` (false: there is no self-registration). A value set here wins over the configuration from the next request on.';

const pageRoute = guarded(
  'sys:config:page',
  createRoute({ method: 'post', path: `${base}/page`, tags, summary: 'Page of system parameters', request: { body: jsonBody(ConfigPageRequest) }, responses: okResponse('A page of parameters', ConfigPage) }),
);
const detailRoute = guarded(
  'sys:config:detail',
  createRoute({ method: 'get', path: `${base}/detail`, tags, summary: 'One system parameter', request: { query: idQuerySchema }, responses: { ...okResponse('The parameter', ConfigSchema), ...notFoundAnswer } }),
);
const addRoute = guarded(
  'sys:config:add',
  createRoute({
    method: 'post',
    path: `${base}/add`,
    tags,
    summary: 'Add a custom system parameter (key unique: 409)',
    description: BUILT_IN_NOTE,
    request: { body: jsonBody(ConfigAddRequest) },
    responses: { ...okResponse('The new parameter', ConfigSchema), ...conflictAnswer },
  }),
  { oplog: true },
);
const editRoute = guarded(
  'sys:config:edit',
  createRoute({
    method: 'post',
    path: `${base}/edit`,
    tags,
    summary: 'Edit a system parameter (partial; `version` must match, else 409)',
    description: BUILT_IN_NOTE,
    request: { body: jsonBody(ConfigEditRequest) },
    responses: { ...okResponse('The updated parameter', ConfigSchema), ...notFoundAnswer, ...conflictAnswer },
  }),
  { oplog: true },
);
const deleteRoute = guarded(
  'sys:config:delete',
  createRoute({
    method: 'post',
    path: `${base}/delete`,
    tags,
    summary: 'Delete custom parameters (400 when one is built in: nothing is deleted; unknown ids are ignored)',
    request: { body: jsonBody(ConfigIdsRequest) },
    responses: okResponse('Deleted', z.null()),
  }),
  { oplog: true },
);
const valueRoute = guarded(
  null,
  createRoute({
    method: 'get',
    path: `${base}/value`,
    tags,
    summary: "A parameter's value by its key (any logged-in user)",
    description:
      'Served from a per-process cache that every parameter write invalidates on the next request. `sys.user.initPassword` only for holders of sys:user:add or sys:config:detail (403).',
    request: { query: ConfigValueQuery },
    responses: { ...okResponse('The value', z.string()), ...notFoundAnswer },
  }),
);

/** The op log keeps a secret parameter's value out: redacted until the key is known not to be secret. */
export function configAuditParams(c: Context, body: { key?: string | undefined; value?: string | undefined }) {
  const record = (hide: boolean) => c.set('opParams', hide && body.value !== undefined ? { ...body, value: '[REDACTED]' } : body);
  const secret = (key: string | undefined) => key !== undefined && isSecretKey(key);
  record(body.key === undefined || secret(body.key));
  // The row's key, once read (an edit that names no key).
  return (current: string) => record(secret(current) || secret(body.key));
}

const exportConfigsRoute = exportRoute('sys:config:export', base, tags, 'parameters', exportRequestSchema('ConfigExportRequest', ConfigPageParams));

/** The parameters export, as our route and the RuoYi dialect answer it: the page's rows for `params`, in scope, these columns. */
export function exportConfigs(c: Context, params: Parameters<typeof configFilter>[0], format: ExportFormat): Promise<Response> {
  return exportAnswer(c, {
    name: 'parameters',
    rows: configFilter(params),
    select: (q) => q.selectAll('configs'),
    keys: ['configs.id'],
    columns: [
      { header: 'ID', value: (r) => r.id },
      { header: 'Name', value: (r) => r.name },
      { header: 'Key', value: (r) => r.config_key },
      { header: 'Value', value: (r) => r.config_value },
      { header: 'Type', value: (r) => r.type, dict: 'sys_config_type' },
      { header: 'Remark', value: (r) => r.remark },
      { header: 'Created at', value: (r) => when(r.created_at) },
    ],
  }, format);
}

export const configRoutes = createRouter()
  .openapi(pageRoute, async (c) => ok(c, await pageConfigs(c.get('deps'), c.get('run'), c.req.valid('json'))))
  .openapi(detailRoute, async (c) => ok(c, await configDetail(c.get('run'), c.req.valid('query').id)))
  .openapi(addRoute, async (c) => {
    const body = c.req.valid('json');
    configAuditParams(c, body);
    return ok(c, await addConfig(c.get('deps'), c.get('run'), body));
  })
  .openapi(editRoute, async (c) => {
    const body = c.req.valid('json');
    return ok(c, await editConfig(c.get('deps'), c.get('run'), body, configAuditParams(c, body)));
  })
  .openapi(deleteRoute, async (c) => {
    await deleteConfigs(c.get('run'), c.req.valid('json').ids);
    return ok(c, null);
  })
  .openapi(valueRoute, async (c) => {
    const key = c.req.valid('query').key;
    const value = await readConfigValue(c.get('deps'), c.get('run'), key);
    if (value === undefined) throw notFound(`No parameter '${key}'`);
    return ok(c, value);
  })
  .openapi(exportConfigsRoute, async (c) => {
    const { params, format } = c.req.valid('json');
    return (await exportConfigs(c, params, format)) as never;
  });

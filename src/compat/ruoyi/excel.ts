import { Hono, type Context, type MiddlewareHandler } from 'hono';
import { badRequest } from '../../core/errors.ts';
import type { PermissionCode } from '../../core/permissions.ts';
import { exportConfigs } from '../../modules/config/index.ts';
import { exportDictData, exportDictTypes } from '../../modules/dict/index.ts';
import { exportJobLogs, exportJobs } from '../../modules/jobs/index.ts';
import { exportLoginLogs } from '../../modules/login-logs/index.ts';
import { exportOpLogs } from '../../modules/op-logs/index.ts';
import { exportPosts } from '../../modules/posts/index.ts';
import { exportRoles } from '../../modules/roles/index.ts';
import { exportUsers, IMPORT_MAX_BYTES, importTemplateAnswer, importUsers, readImportForm, type ImportResult } from '../../modules/users/index.ts';
import { configParams } from './config.ts';
import { dictDataParams, dictTypeParams } from './dict.ts';
import { parsed, read, write } from './guard.ts';
import { jobLogParams, jobParams, otherJobGroup } from './job.ts';
import { loginLogParams, opLogParams } from './logs.ts';
import { postParams } from './post.ts';
import { roleParams } from './role.ts';
import { userParams } from './user.ts';
import { ConfigPageRequest } from '../../modules/config/index.ts';
import { DictDataPageRequest, DictTypePageRequest } from '../../modules/dict/index.ts';
import { JobLogPageRequest, JobPageRequest } from '../../modules/jobs/index.ts';
import { LoginLogPageRequest } from '../../modules/login-logs/index.ts';
import { OpLogPageRequest } from '../../modules/op-logs/index.ts';
import { PostPageRequest } from '../../modules/posts/index.ts';
import { RolePageRequest } from '../../modules/roles/index.ts';
import { UserPageRequest } from '../../modules/users/index.ts';
import type { z } from 'zod';

/*
 * RuoYi's Excel buttons (its utils/request.js `download`, the ExcelImportDialog) on our
 * export/import module: the same plans, scope, containment and op log as our /app routes, in
 * the shapes RuoYi-Vue3 reads (docs/ruoyi.md, "Excel export and import").
 *
 * - Export: POST <page>/export, a form (application/x-www-form-urlencoded) of the page's query
 *   params, pageNum/pageSize included (ignored: everything the filter selects). The filter is
 *   mapped by the page's own mapping (the one its list uses) and checked by our page request's
 *   schema; the answer is our module's XLSX (RuoYi saves any non-JSON answer as `.xlsx`). A
 *   refusal is HTTP 200 JSON `{code, msg}` (respond.ts), which RuoYi shows as a message.
 * - Import template: our template, as XLSX.
 * - Import: multipart `file` + `?updateSupport=0|1` → our import, never a dry run (RuoYi has
 *   none): all or nothing. RuoYi shows `msg` as HTML in an alert on any HTTP 2xx whatever the
 *   code, so the report is put there, every piece of user data escaped.
 */

type Form = Record<string, string>;

/** The form RuoYi posts (urlencoded; an empty body is an empty form). Files have no place in it. */
async function formOf(c: Context): Promise<Form> {
  const type = c.req.header('content-type') ?? '';
  if (type !== '' && !/^application\/x-www-form-urlencoded\b/i.test(type) && !/^multipart\/form-data\b/i.test(type)) {
    throw badRequest('body: must be application/x-www-form-urlencoded (the page\'s query params)');
  }
  const body = type === '' ? {} : await c.req.parseBody();
  const out: Form = {};
  for (const [k, v] of Object.entries(body)) {
    if (typeof v !== 'string') throw badRequest(`${k}: must be text`);
    out[k] = v;
  }
  return out;
}

/** The export's filter through our page request's rules (unknown names, formats, ranges: 400). */
function paramsOf<S extends z.ZodType<{ params: unknown }>>(schema: S, params: unknown): z.infer<S>['params'] {
  return parsed(schema, { pageNo: 1, pageSize: 1, params }).params;
}

interface ExcelExport {
  path: string;
  code: PermissionCode;
  module: string;
  /** The answer for the page's form: our module's export of the mapped filter. */
  answer: (c: Context, form: Form) => Promise<Response>;
}

/** Our export of the mapped filter, which the op log keeps as our route would (`{params, format}`). */
function exporting<P>(c: Context, params: P, answer: (c: Context, params: P, format: 'xlsx') => Promise<Response>): Promise<Response> {
  c.set('opParams', { params, format: 'xlsx' });
  return answer(c, params, 'xlsx');
}

/** A filter that selects no row of ours (a job group not ours): said, not a file of nothing. */
async function nothing(c: Context, why: string): Promise<never> {
  await c.get('run').caller();
  throw badRequest(why);
}

/** RuoYi-Vue3's ten Excel exports (pages' handleExport) → our module exports. */
export const EXPORTS: readonly ExcelExport[] = [
  { path: '/system/user/export', code: 'sys:user:export', module: 'sysUser', answer: (c, f) => exporting(c, paramsOf(UserPageRequest, userParams(f)), exportUsers) },
  { path: '/system/role/export', code: 'sys:role:export', module: 'sysRole', answer: (c, f) => exporting(c, paramsOf(RolePageRequest, roleParams(f)), exportRoles) },
  { path: '/system/post/export', code: 'sys:post:export', module: 'sysPost', answer: (c, f) => exporting(c, paramsOf(PostPageRequest, postParams(f)), exportPosts) },
  { path: '/system/dict/type/export', code: 'sys:dictType:export', module: 'sysDictType', answer: (c, f) => exporting(c, paramsOf(DictTypePageRequest, dictTypeParams(f)), exportDictTypes) },
  { path: '/system/dict/data/export', code: 'sys:dictData:export', module: 'sysDictData', answer: (c, f) => exporting(c, paramsOf(DictDataPageRequest, dictDataParams(f)), exportDictData) },
  { path: '/system/config/export', code: 'sys:config:export', module: 'sysConfig', answer: (c, f) => exporting(c, paramsOf(ConfigPageRequest, configParams(f)), exportConfigs) },
  { path: '/monitor/logininfor/export', code: 'sys:loginLog:export', module: 'sysLoginLog', answer: (c, f) => exporting(c, paramsOf(LoginLogPageRequest, loginLogParams(f)), exportLoginLogs) },
  { path: '/monitor/operlog/export', code: 'sys:opLog:export', module: 'sysOpLog', answer: (c, f) => exporting(c, paramsOf(OpLogPageRequest, opLogParams(f)), exportOpLogs) },
  {
    path: '/monitor/job/export',
    code: 'sys:job:export',
    module: 'sysJob',
    answer: (c, f) => {
      const params = paramsOf(JobPageRequest, jobParams(f));
      return otherJobGroup(f) ? nothing(c, "jobGroup: the service's jobs are all in SYSTEM; no job to export") : exporting(c, params, exportJobs);
    },
  },
  {
    path: '/monitor/jobLog/export',
    code: 'sys:jobLog:export',
    module: 'sysJobLog',
    answer: async (c, f) => {
      const filter = await jobLogParams(c, f);
      if (!filter) return nothing(c, 'jobName, jobGroup: no job of this server has that name and group; no run to export');
      return exporting(c, paramsOf(JobLogPageRequest, filter.params), exportJobLogs);
    },
  },
];

/**
 * Text for RuoYi's alert with `dangerouslyUseHTMLString` (element content, never an attribute):
 * our messages and the file's cells are shown, never run as markup.
 */
export const escapeHtml = (s: string) => s.replace(/[&<>]/g, (ch) => `&#${ch.charCodeAt(0)};`);

/** The import's report as RuoYi's upload dialog shows it (`msg`, HTML, one line a row). */
export function importReport(r: ImportResult): { code: number; msg: string } {
  if (r.failed === 0) {
    const total = r.created + r.updated;
    return { code: 200, msg: `恭喜您，数据已全部导入成功！共 ${total} 条：新增 ${r.created} 条，更新 ${r.updated} 条。` };
  }
  const lines = r.errors.map((e, i) => `<br/>${i + 1}、第 ${e.row} 行${e.column ? `「${escapeHtml(e.column)}」` : ''}：${escapeHtml(e.msg)}`);
  const more = r.errors.length < r.failed ? '<br/>……' : '';
  return { code: 500, msg: `很抱歉，导入失败！共 ${r.failed} 行数据有误，没有导入任何数据，错误如下：${lines.join('')}${more}` };
}

/**
 * Around the import: a refusal's message (a file the readers refuse, a missing parameter, a
 * 403) is shown by RuoYi's dialog as HTML too: escaped here, before respond.ts wraps it.
 */
const escapedRefusal: MiddlewareHandler = async (c, next) => {
  await next();
  if (c.res.status < 400 || !(c.res.headers.get('content-type') ?? '').includes('json')) return;
  const body = (await c.res.clone().json().catch(() => undefined)) as Record<string, unknown> | undefined;
  if (!body || typeof body.msg !== 'string') return;
  const { status } = c.res;
  const headers = new Headers(c.res.headers);
  headers.delete('content-length');
  c.res = undefined as unknown as Response;
  c.res = new Response(JSON.stringify({ ...body, msg: escapeHtml(body.msg) }), { status, headers });
};

/** The import's path under the prefix: its body is read under the import's own limit, not the JSON one (app.ts). */
export const RUOYI_IMPORT_PATH = '/system/user/importData';

function updateSupportOf(v: string | undefined): boolean {
  if (v === undefined || v === '' || v === '0' || v === 'false') return false;
  if (v === '1' || v === 'true') return true;
  throw badRequest("updateSupport: must be 0 or 1");
}

export const excelRoutes = EXPORTS.reduce(
  (app, e) =>
    app.post(e.path, ...write(e.code, e.module, 'export'), async (c) => {
      const form = await formOf(c);
      c.set('opParams', form); // what was sent, until it is mapped (a refused filter is logged as sent)
      return e.answer(c, form);
    }),
  new Hono(),
)
  .post('/system/user/importTemplate', ...read('sys:user:import'), (c) => importTemplateAnswer(c, 'xlsx'))
  .post(RUOYI_IMPORT_PATH, escapedRefusal, ...write('sys:user:import', 'sysUser', 'import'), async (c) => {
    const updateSupport = updateSupportOf(c.req.query('updateSupport'));
    const form = await readImportForm(c.req.raw, Math.min(IMPORT_MAX_BYTES, c.get('deps').config.MAX_UPLOAD_BYTES));
    c.set('opParams', { file: form.fileName, size: form.bytes.byteLength, updateSupport, dryRun: false });
    const result = await importUsers(c.get('deps'), c.get('run'), { bytes: form.bytes, updateSupport, dryRun: false });
    const { code, msg } = importReport(result);
    return c.json({ code, msg }, 200);
  });

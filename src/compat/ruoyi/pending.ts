import { Hono, type Context } from 'hono';
import { AppError } from '../../core/errors.ts';
import { read } from './guard.ts';

/**
 * RuoYi's Excel exports, the user import and its template: our export/import module is being
 * built (contract: "Export" and "Import"); until it is on this server these answer a documented
 * code 501 in RuoYi's envelope (docs/ruoyi.md, "Pending"), which RuoYi shows as the message of
 * its download (HTTP 200 + JSON) or of its import dialog. No second exporter lives here: the
 * dialect will map these paths onto that module's services when it lands.
 */
export const EXPORT_PATHS = [
  '/system/user/export', '/system/role/export', '/system/post/export', '/system/dict/type/export', '/system/dict/data/export',
  '/system/config/export', '/monitor/logininfor/export', '/monitor/operlog/export', '/monitor/job/export', '/monitor/jobLog/export',
] as const;

const pending = (what: string) => async (c: Context) => {
  await c.get('run').caller();
  throw new AppError('NOT_IMPLEMENTED', `${what} arrives with the export/import module, which this server does not have yet`);
};

export const pendingRoutes = EXPORT_PATHS.reduce((app, path) => app.post(path, ...read(null), pending('Excel export')), new Hono())
  .post('/system/user/importTemplate', ...read(null), pending('The import template'))
  .post('/system/user/importData', ...read(null), pending('User import'));

import { Hono } from 'hono';
import { AppError, badRequest } from '../../core/errors.ts';
import { clearLoginLogs, deleteLoginLogs, LoginLogPageRequest, pageLoginLogs } from '../../modules/login-logs/index.ts';
import { clearOpLogs, deleteOpLogs, OpLogPageRequest, pageOpLogs } from '../../modules/op-logs/index.ts';
import { parsed, read, write } from './guard.ts';
import { ajax, table } from './respond.ts';
import { dateRangeOf, defined, dictFilter, idListOf, pageOf, ruoyiTime, sortOrderOf, text } from './values.ts';

type LoginLog = Awaited<ReturnType<typeof pageLoginLogs>>['records'][number];
type OpLog = Awaited<ReturnType<typeof pageOpLogs>>['records'][number];

export function ruoyiLoginLog(r: LoginLog) {
  return {
    infoId: r.id,
    userName: r.loginName,
    ipaddr: r.ip,
    loginLocation: [r.country, r.city].filter(Boolean).join(' '),
    browser: r.browser,
    os: r.os,
    status: r.status === 'success' ? '0' : '1',
    msg: r.msg,
    loginTime: ruoyiTime(r.createdAt),
  };
}

/**
 * RuoYi's business types (sys_oper_type) ↔ our actions: 1 add, 2 edit, 3 delete, 4 grant,
 * 5 export, 6 import, 7 force logout, 9 clear, 0 other.
 */
const BUSINESS: Record<string, number> = {
  add: 1, edit: 2, changeStatus: 2, resetPassword: 2, updateInfo: 2, updatePassword: 2, delete: 3,
  grantRole: 4, grantMenu: 4, grantDataScope: 4, export: 5, import: 6, forceLogout: 7, clear: 9,
};
/** The action a business-type filter selects (the first of its kind above). */
const ACTION_OF: Record<string, string> = { '1': 'add', '2': 'edit', '3': 'delete', '4': 'grantRole', '5': 'export', '6': 'import', '7': 'forceLogout', '9': 'clear' };
export const businessType = (action: string) => BUSINESS[action] ?? 0;

export function ruoyiOpLog(r: OpLog) {
  return {
    operId: r.id,
    title: r.module,
    businessType: businessType(r.action),
    method: `${r.module}.${r.action}`,
    requestMethod: r.method,
    operatorType: 1,
    operName: r.operatorName ?? '',
    deptName: '',
    operUrl: r.path,
    operIp: r.ip,
    operLocation: '',
    operParam: r.params,
    jsonResult: '',
    status: r.status < 400 ? 0 : 1,
    errorMsg: r.errorMsg ?? '',
    operTime: ruoyiTime(r.createdAt),
    costTime: r.durationMs,
  };
}

const LOGIN_SORT: Record<string, 'createdAt' | 'loginName'> = { loginTime: 'createdAt', userName: 'loginName' };
const OP_SORT: Record<string, 'createdAt' | 'operatorName' | 'durationMs'> = { operTime: 'createdAt', operName: 'operatorName', costTime: 'durationMs' };

function sortOf<T extends string>(map: Record<string, T>, column: string | undefined, isAsc: string | undefined) {
  if (!column) return {};
  const field = map[column];
  if (!field) throw badRequest(`orderByColumn: must be one of ${Object.keys(map).join(', ')}`);
  return defined({ sortField: field, sortOrder: sortOrderOf(isAsc) });
}

/** The login log page's filter (its list and its export): status through sys_common_status. */
export const loginLogParams = (q: Record<string, string>) =>
  defined({ loginName: text(q.userName), ip: text(q.ipaddr), status: dictFilter('sys_common_status', q.status, 'status'), ...dateRangeOf(q) });

/** The operation log page's filter (its list and its export). */
export function opLogParams(q: Record<string, string>) {
  if (text(q.operIp)) throw badRequest('operIp: searching the operation log by address is not supported');
  const status = text(q.status) === undefined ? undefined : q.status === '0' ? 200 : 'bad';
  if (status === 'bad') throw badRequest("status: only '0' (success) can be searched for here");
  const action = text(q.businessType) === undefined ? undefined : ACTION_OF[q.businessType!];
  if (text(q.businessType) !== undefined && !action) throw badRequest('businessType: not one this server records');
  return defined({ module: text(q.title), action, operatorName: text(q.operName), status, ...dateRangeOf(q) });
}

export const logRoutes = new Hono()
  // 登录日志 (api/monitor/logininfor.js)
  .get('/monitor/logininfor/list', ...read('sys:loginLog:page'), async (c) => {
    const q = c.req.query();
    const { pageNo, pageSize } = pageOf(q, c.get('deps').config.PAGE_SIZE_MAX);
    const req = parsed(LoginLogPageRequest, { pageNo, pageSize, ...sortOf(LOGIN_SORT, text(q.orderByColumn), q.isAsc), params: loginLogParams(q) });
    const page = await pageLoginLogs(c.get('deps'), c.get('run'), req);
    return table(c, page.records.map(ruoyiLoginLog), page.total);
  })
  .delete('/monitor/logininfor/clean', ...write('sys:loginLog:clear', 'sysLoginLog', 'clear'), async (c) => {
    await clearLoginLogs(c.get('run'));
    return ajax(c);
  })
  .get('/monitor/logininfor/unlock/:names', ...read('sys:loginLog:delete'), () => {
    // Ours: a locked name unlocks by itself when its 10 minutes are over; there is no early unlock.
    throw new AppError('NOT_IMPLEMENTED', 'Unlocking is not supported: a locked account unlocks by itself 10 minutes after its last failed attempt');
  })
  .delete('/monitor/logininfor/:ids{[0-9,]+}', ...write('sys:loginLog:delete', 'sysLoginLog', 'delete'), async (c) => {
    const ids = idListOf(c.req.param('ids'), 'infoIds');
    c.set('opParams', { ids });
    await deleteLoginLogs(c.get('run'), ids);
    return ajax(c);
  })
  // 操作日志 (api/monitor/operlog.js): the detail dialog shows the listed row, so rows carry everything.
  .get('/monitor/operlog/list', ...read('sys:opLog:page'), async (c) => {
    const q = c.req.query();
    const { pageNo, pageSize } = pageOf(q, c.get('deps').config.PAGE_SIZE_MAX);
    const req = parsed(OpLogPageRequest, { pageNo, pageSize, ...sortOf(OP_SORT, text(q.orderByColumn), q.isAsc), params: opLogParams(q) });
    const page = await pageOpLogs(c.get('deps'), c.get('run'), req);
    return table(c, page.records.map(ruoyiOpLog), page.total);
  })
  .delete('/monitor/operlog/clean', ...write('sys:opLog:clear', 'sysOpLog', 'clear'), async (c) => {
    await clearOpLogs(c.get('run'));
    return ajax(c);
  })
  .delete('/monitor/operlog/:ids{[0-9,]+}', ...write('sys:opLog:delete', 'sysOpLog', 'delete'), async (c) => {
    const ids = idListOf(c.req.param('ids'), 'operIds');
    c.set('opParams', { ids });
    await deleteOpLogs(c.get('run'), ids);
    return ajax(c);
  });

import type { Context, MiddlewareHandler } from 'hono';

/**
 * RuoYi's answer shapes (AjaxResult, TableDataInfo) and its one rule for failures: every JSON
 * answer is HTTP 200 with the outcome in `code` (docs/ruoyi.md, "Answers"). The client shows the
 * body's `msg` for code 500 (and 501), its own fixed text for 401/403/404, and treats only code
 * 401 as "session expired"; a non-2xx status shows "系统接口NNN异常" and never the message.
 */

export const OK_MSG = '操作成功';

/** `{code: 200, msg, ...fields}`: RuoYi puts many answers' fields at the top level (token, user, roles…). */
export function ajax(c: Context, fields: Record<string, unknown> = {}, msg = OK_MSG) {
  return c.json({ code: 200, msg, ...fields }, 200);
}

/** `{code: 200, msg, data}` */
export function ajaxData(c: Context, data: unknown, fields: Record<string, unknown> = {}) {
  return ajax(c, { data, ...fields });
}

/** TableDataInfo: `{code: 200, msg, total, rows}` (no `data`). */
export function table(c: Context, rows: unknown[], total: number) {
  return c.json({ code: 200, msg: '查询成功', total, rows }, 200);
}

/**
 * Our status → RuoYi's code: 401 stays 401 (the client's re-login box), 501 stays 501 (shown as a
 * notification with our message); every other refusal is 500 so the client shows our message
 * (for 403/404 it would show its own fixed text and hide which rule refused).
 */
export function ruoyiCode(status: number): number {
  if (status === 401 || status === 501) return status;
  return 500;
}

/**
 * Outermost middleware of the dialect: the routes answer with our statuses and envelopes (so the
 * op-log recorder and the logs see the real outcome); this turns a failure into RuoYi's HTTP 200
 * `{code, msg, traceId}`. `loginLike` paths never answer 401: on the login page a 401 would open
 * "登录状态已过期" (wrong password, wrong captcha, locked out are all code 500).
 */
export function ruoyiAnswers(prefix: string, loginLike: ReadonlySet<string>): MiddlewareHandler {
  return async (c, next) => {
    await next();
    const res = c.res;
    // Tokens and the caller's profile, like ours (app.ts NO_STORE): never in a browser or proxy cache.
    res.headers.set('Cache-Control', 'no-store');
    if (res.status < 400) return;
    const type = res.headers.get('content-type') ?? '';
    let msg = 'Request failed';
    let traceId: string | undefined;
    if (type.includes('json')) {
      const body = (await res.clone().json().catch(() => ({}))) as { msg?: unknown; traceId?: unknown };
      if (typeof body.msg === 'string') msg = body.msg;
      if (typeof body.traceId === 'string') traceId = body.traceId;
    }
    const path = c.req.path.slice(prefix.length);
    const code = loginLike.has(path) && res.status === 401 ? 500 : ruoyiCode(res.status);
    const retry = res.headers.get('retry-after');
    c.res = undefined as unknown as Response;
    c.res = c.json({ code, msg, ...(traceId ? { traceId } : {}) }, 200, retry ? { 'Retry-After': retry } : {});
  };
}

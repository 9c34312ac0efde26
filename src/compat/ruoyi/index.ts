// The RuoYi-Vue3 dialect (issue 28, docs/ruoyi.md): RuoYi's requests and answers mapped onto our
// modules' services, mounted under RUOYI_API_PREFIX. One file per RuoYi API area; RuoYi's Excel
// exports and the user import go to our export/import module (excel.ts).
import { Hono } from 'hono';
import { notFound } from '../../core/errors.ts';
import { deptRoutes } from './dept.ts';
import { dictRoutes } from './dict.ts';
import { configRoutes } from './config.ts';
import { noticeRoutes } from './notice.ts';
import { postRoutes } from './post.ts';
import { jobRoutes } from './job.ts';
import { excelRoutes } from './excel.ts';
import { javaOnlyRoutes } from './java-only.ts';
import { LOGIN_LIKE, loginRoutes } from './login.ts';
import { logRoutes } from './logs.ts';
import { menuRoutes } from './menu.ts';
import { monitorRoutes } from './monitor.ts';
import { ruoyiAnswers } from './respond.ts';
import { roleRoutes } from './role.ts';
import { userRoutes } from './user.ts';

export { applyRuoyiMenuPreset, ruoyiMenuPresetSql } from './menu-preset.ts';
export { RUOYI_IMPORT_PATH } from './excel.ts';

/** The dialect's routes, to be mounted at `prefix` (app.ts). */
export function ruoyiDialect(prefix: string) {
  return new Hono()
    .use('*', ruoyiAnswers(prefix, LOGIN_LIKE))
    .route('/', loginRoutes)
    .route('/', userRoutes)
    .route('/', roleRoutes)
    .route('/', menuRoutes)
    .route('/', deptRoutes)
    .route('/', logRoutes)
    .route('/', monitorRoutes)
    .route('/', excelRoutes)
    .route('/', postRoutes)
    .route('/', dictRoutes)
    .route('/', configRoutes)
    .route('/', noticeRoutes)
    .route('/', jobRoutes)
    .route('/', javaOnlyRoutes)
    .all('*', (c) => {
      throw notFound(`No RuoYi API ${c.req.method} ${c.req.path.slice(prefix.length, 200)} on this server (docs/ruoyi.md lists what is supported)`);
    });
}

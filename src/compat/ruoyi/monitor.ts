import { Hono } from 'hono';
import { badRequest } from '../../core/errors.ts';
import { qb } from '../../db/compile.ts';
import { forceLogout, OnlinePageRequest, pageOnline } from '../../modules/online/index.ts';
import { parsed, read, write } from './guard.ts';
import { ajax, ajaxData, table } from './respond.ts';
import { defined, text } from './values.ts';

const MiB = 1024 * 1024;
const GiB = 1024 * MiB;
const round2 = (n: number) => Math.round(n * 100) / 100;

/**
 * RuoYi's server page (`data.{cpu, mem, jvm, sys, sysFiles}`) filled with what our runtime knows
 * of itself (Ports.runtimeStats on servers; Workers know little). The page opens a locking overlay
 * and closes it only on success, so this always answers 200 with whatever figures there are
 * (docs/ruoyi.md): "jvm" holds the JavaScript runtime's heap.
 */
export function serverFigures(stats: ReturnType<NonNullable<import('../../core/ports.ts').Ports['runtimeStats']>> | undefined, now: number) {
  const s = stats ?? { runtime: typeof navigator !== 'undefined' ? navigator.userAgent : 'unknown' };
  const cpus = s.cpus ?? (typeof navigator !== 'undefined' ? (navigator.hardwareConcurrency ?? 0) : 0);
  const load = s.load1 !== undefined && cpus > 0 ? Math.min(100, round2((s.load1 / cpus) * 100)) : 0;
  const memTotal = s.memTotal ?? 0;
  const memUsed = memTotal && s.memFree !== undefined ? memTotal - s.memFree : 0;
  const heapTotal = s.heapTotal ?? 0;
  const heapUsed = s.heapUsed ?? 0;
  const started = s.startedAt ?? now;
  const up = Math.max(0, Math.round((now - started) / 1000));
  const runTime = `${Math.floor(up / 86400)}天${Math.floor((up % 86400) / 3600)}小时${Math.floor((up % 3600) / 60)}分钟`;
  return {
    cpu: { cpuNum: cpus, total: 100, sys: 0, used: load, wait: 0, free: round2(100 - load) },
    mem: { total: round2(memTotal / GiB), used: round2(memUsed / GiB), free: round2((memTotal - memUsed) / GiB), usage: memTotal ? round2((memUsed / memTotal) * 100) : 0 },
    jvm: {
      total: round2(heapTotal / MiB),
      max: round2(heapTotal / MiB),
      free: round2((heapTotal - heapUsed) / MiB),
      usage: heapTotal ? round2((heapUsed / heapTotal) * 100) : 0,
      used: round2(heapUsed / MiB),
      version: s.runtime,
      home: s.cwd ?? '',
      name: s.runtime,
      startTime: new Date(started).toISOString().slice(0, 19).replace('T', ' '),
      runTime,
      inputArgs: '',
    },
    sys: { computerName: s.hostname ?? '', computerIp: '', osName: s.platform ?? '', osArch: s.arch ?? '', userDir: s.cwd ?? '' },
    sysFiles: [],
  };
}

export const monitorRoutes = new Hono()
  // 在线用户: every session at once (the client pages in the browser), up to PAGE_SIZE_MAX.
  .get('/monitor/online/list', ...read('sys:online:page'), async (c) => {
    const q = c.req.query();
    const req = parsed(OnlinePageRequest, { pageNo: 1, pageSize: c.get('deps').config.PAGE_SIZE_MAX, params: defined({ loginName: text(q.userName), ip: text(q.ipaddr) }) });
    const page = await pageOnline(c.get('deps'), c.get('run'), req);
    const rows = page.records.map((s) => ({
      tokenId: s.sessionId,
      userName: s.loginName,
      deptName: '',
      ipaddr: s.ip,
      loginLocation: '',
      browser: s.browser,
      os: s.os,
      loginTime: Date.parse(s.loginAt),
    }));
    return table(c, rows, page.total);
  })
  .delete('/monitor/online/:tokenId', ...write('sys:online:forceLogout', 'sysOnlineUser', 'forceLogout'), async (c) => {
    const tokenId = c.req.param('tokenId');
    if (!/^[0-9a-f-]{36}$/i.test(tokenId)) throw badRequest('tokenId: must be a session id');
    c.set('opParams', { sessionIds: [tokenId] });
    await forceLogout(c.get('deps'), c.get('run'), [tokenId]);
    return ajax(c);
  })
  // 服务监控
  .get('/monitor/server', ...read('sys:monitor:server'), async (c) => {
    const deps = c.get('deps');
    await c.get('run').caller(); // the verdict first: figures only for those who hold the code
    return ajaxData(c, serverFigures(deps.runtimeStats?.(), deps.clock.now()));
  })
  // 缓存监控 / 缓存列表: no Redis here. Our caches live in each process, kept right by the
  // cache_versions counters (docs/request-path.md); the pages show those.
  .get('/monitor/cache', ...read('sys:monitor:cache'), async (c) => {
    const rows = await c.get('run').rows<{ name: string; n: number }>(qb.selectFrom('cache_versions').select(['name', 'n']).orderBy('name').compile());
    return ajaxData(c, {
      info: { redis_version: 'none (in-process caches)', redis_mode: 'standalone', tcp_port: '-', connected_clients: '-', uptime_in_days: '-', used_memory_human: '-', used_cpu_user_children: '-', maxmemory_human: '-', aof_enabled: 'no', rdb_last_bgsave_status: '-', instantaneous_input_kbps: '-', instantaneous_output_kbps: '-' },
      dbSize: rows.length,
      commandStats: rows.map((r) => ({ name: r.name, value: String(r.n) })),
    });
  })
  .get('/monitor/cache/getNames', ...read('sys:monitor:cache'), async (c) => {
    const rows = await c.get('run').rows<{ name: string; n: number }>(qb.selectFrom('cache_versions').select(['name', 'n']).orderBy('name').compile());
    return ajaxData(c, rows.map((r) => ({ cacheName: r.name, cacheKey: '', cacheValue: '', remark: `version ${r.n}` })));
  })
  .get('/monitor/cache/getKeys/:name', ...read('sys:monitor:cache'), async (c) => {
    await c.get('run').caller();
    return ajaxData(c, []);
  })
  .get('/monitor/cache/getValue/:name/:key', ...read('sys:monitor:cache'), async (c) => {
    await c.get('run').caller();
    return ajaxData(c, { cacheName: c.req.param('name'), cacheKey: c.req.param('key'), cacheValue: '' });
  })
  .delete('/monitor/cache/:what{clearCacheName|clearCacheKey|clearCacheAll}/:name?', ...read('sys:monitor:cache'), async (c) => {
    // Nothing to clear: every process re-reads a cache on the first request after its version moved.
    await c.get('run').caller();
    return ajax(c, {}, 'Nothing to clear: these caches follow their versions and are never stale');
  });

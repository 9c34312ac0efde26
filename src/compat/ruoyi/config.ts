import { Hono } from 'hono';
import { badRequest } from '../../core/errors.ts';
import {
  addConfig,
  BUILT_IN,
  ConfigAddRequest,
  configAuditParams,
  configDetail,
  ConfigEditRequest,
  ConfigPageRequest,
  deleteConfigs,
  editConfig,
  pageConfigs,
  readConfigValue,
  type ConfigRecord,
} from '../../modules/config/index.ts';
import { parsed, read, write } from './guard.ts';
import { ajax, ajaxData, table } from './respond.ts';
import { body } from './user.ts';
import { defined, idListOf, idOf, ourDictValue, pageOf, ruoyiDictValue, ruoyiTime, text, textOrNull } from './values.ts';

/**
 * 参数设置 (RuoYi's api/system/config.js) on our parameters (modules/config): RuoYi's
 * `configType` 'Y' (built in) / 'N' is our `type`, through the sys_yes_no pair of DICT_VALUES
 * ('Y' ↔ true): built in is "yes". Our rules stay ours: a built-in parameter keeps its key,
 * takes only the values its behaviour reads and cannot be deleted; the type is never set by a
 * request (RuoYi's form offers it: a change is refused with a message, not silently dropped).
 */

const typeToRuoyi = (t: ConfigRecord['type']) => ruoyiDictValue('sys_yes_no', t === 'builtIn' ? 'true' : 'false');
function typeFromRuoyi(v: unknown): ConfigRecord['type'] | undefined {
  if (v === undefined || v === '' || v === null) return undefined;
  const ours = ourDictValue('sys_yes_no', String(v));
  if (ours === 'true') return 'builtIn';
  if (ours === 'false') return 'custom';
  throw badRequest("configType: must be 'Y' (built in) or 'N'");
}

export function ruoyiConfig(r: ConfigRecord) {
  return {
    configId: r.id,
    configName: r.name,
    configKey: r.key,
    configValue: r.value,
    configType: typeToRuoyi(r.type),
    remark: r.remark ?? '',
    createTime: ruoyiTime(r.createdAt),
    updateTime: ruoyiTime(r.updatedAt),
    version: r.version,
  };
}

function fields(b: Record<string, unknown>) {
  return defined({
    name: text(b.configName),
    key: text(b.configKey),
    value: b.configValue === undefined || b.configValue === null ? undefined : String(b.configValue),
    remark: b.remark === undefined ? undefined : textOrNull(b.remark),
  });
}

/** What the op log keeps of a RuoYi body before it is understood: never a parameter's value (it may be a secret). */
const unreadBody = (b: Record<string, unknown>) => ({ ...b, ...(b.configValue === undefined ? {} : { configValue: '[REDACTED]' }) });

/** The parameter page's filter (its list and its export). */
export const configParams = (q: Record<string, string>) => defined({ name: text(q.configName), key: text(q.configKey), type: typeFromRuoyi(q.configType) });

export const configRoutes = new Hono()
  .get('/system/config/list', ...read('sys:config:page'), async (c) => {
    const q = c.req.query();
    const { pageNo, pageSize } = pageOf(q, c.get('deps').config.PAGE_SIZE_MAX);
    const req = parsed(ConfigPageRequest, { pageNo, pageSize, params: configParams(q) });
    const page = await pageConfigs(c.get('deps'), c.get('run'), req);
    return table(c, page.records.map(ruoyiConfig), page.total);
  })
  // RuoYi reads the value from `msg`. Ours: any logged-in user; the initial password only for
  // holders of sys:user:add or sys:config:detail (the user page that pre-fills it needs the first).
  .get('/system/config/configKey/:key', ...read(null), async (c) => {
    const value = await readConfigValue(c.get('deps'), c.get('run'), c.req.param('key'));
    return ajax(c, {}, value ?? '');
  })
  // RuoYi's backend reloads its Redis copy; ours is versioned per write (nothing to refresh).
  .delete('/system/config/refreshCache', ...read(null), async (c) => {
    await c.get('run').caller();
    return ajax(c, {}, 'Nothing to refresh: parameters are re-read on the first request after any change');
  })
  .get('/system/config/:id{[0-9]+}', ...read('sys:config:detail'), async (c) => ajaxData(c, ruoyiConfig(await configDetail(c.get('run'), idOf(c.req.param('id'), 'configId')))))
  .post('/system/config', ...write('sys:config:add', 'sysConfig', 'add'), async (c) => {
    const b = await body(c);
    c.set('opParams', unreadBody(b));
    // RuoYi's form starts at 系统内置 = 'Y'. Built in are the keys the service reads, seeded with
    // it: a new parameter is custom whatever the form says (docs/ruoyi.md); only 'Y'/'N' are taken.
    typeFromRuoyi(b.configType);
    const input = parsed(ConfigAddRequest, fields(b));
    configAuditParams(c, input);
    await addConfig(c.get('deps'), c.get('run'), input);
    return ajax(c);
  })
  .put('/system/config', ...write('sys:config:edit', 'sysConfig', 'edit'), async (c) => {
    const b = await body(c);
    c.set('opParams', unreadBody(b));
    const input = parsed(ConfigEditRequest, { id: idOf(b.configId, 'configId'), version: typeof b.version === 'number' ? b.version : undefined, ...fields(b) });
    // The type is the system's: built in are exactly the keys the service reads (BUILT_IN; a
    // built-in one keeps its key, our edit refuses that). A form asking for another type is told.
    const type = typeFromRuoyi(b.configType);
    const key = (input.key ?? '').toLowerCase();
    const builtIn = Object.values(BUILT_IN).some((k) => k.toLowerCase() === key);
    if (type !== undefined && input.key !== undefined && type !== (builtIn ? 'builtIn' : 'custom')) {
      throw badRequest(`configType: set by the system: built in (Y) are the keys the service itself reads (${Object.values(BUILT_IN).join(', ')}), which keep their keys; every other parameter is custom (N)`);
    }
    await editConfig(c.get('deps'), c.get('run'), input, configAuditParams(c, input));
    return ajax(c);
  })
  .delete('/system/config/:ids{[0-9,]+}', ...write('sys:config:delete', 'sysConfig', 'delete'), async (c) => {
    const ids = idListOf(c.req.param('ids'), 'configIds');
    c.set('opParams', { ids });
    await deleteConfigs(c.get('run'), ids);
    return ajax(c);
  });

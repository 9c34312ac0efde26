import { Hono } from 'hono';
import { badRequest } from '../../core/errors.ts';
import {
  addDictData,
  addDictType,
  deleteDictData,
  deleteDictTypes,
  DictDataAddRequest,
  dictDataDetail,
  DictDataEditRequest,
  DictDataPageRequest,
  dictItems,
  DictTypeAddRequest,
  dictTypeDetail,
  DictTypeEditRequest,
  DictTypePageRequest,
  editDictData,
  editDictType,
  pageDictData,
  pageDictTypes,
  type DictData,
  type DictItem,
  type DictType,
} from '../../modules/dict/index.ts';
import { parsed, read, write } from './guard.ts';
import { ajax, ajaxData, table } from './respond.ts';
import { body } from './user.ts';
import { defined, fromRuoyiStatus, idListOf, idOf, ourDictValue, pageOf, ruoyiDictValue, ruoyiTime, statusFilter, text, textOrNull, toRuoyiStatus } from './values.ts';

/**
 * 字典管理 (RuoYi's api/system/dict/type.js and data.js) on our dictionaries (modules/dict):
 * types and items, and the items every page asks for (useDict → getDicts). Item values of the
 * seeded dictionaries RuoYi's pages compare go through values.ts's DICT_VALUES both ways.
 */

export function ruoyiDictType(t: DictType) {
  return { dictId: t.id, dictName: t.name, dictType: t.code, status: toRuoyiStatus(t.status), remark: t.remark ?? '', createTime: ruoyiTime(t.createdAt), version: t.version };
}

export function ruoyiDictData(d: DictData) {
  return {
    dictCode: d.id,
    dictSort: d.sort,
    dictLabel: d.label,
    dictValue: ruoyiDictValue(d.typeCode, d.value),
    dictType: d.typeCode,
    cssClass: d.cssClass ?? '',
    listClass: d.tagType,
    isDefault: d.isDefault ? 'Y' : 'N',
    status: toRuoyiStatus(d.status),
    remark: d.remark ?? '',
    createTime: ruoyiTime(d.createdAt),
    version: d.version,
  };
}

/** An enabled item as getDicts answers it (RuoYi's SysDictData of a cached type). */
function ruoyiItem(i: DictItem) {
  return {
    dictCode: i.id,
    dictSort: i.sort,
    dictLabel: i.label,
    dictValue: ruoyiDictValue(i.typeCode, i.value),
    dictType: i.typeCode,
    cssClass: i.cssClass ?? '',
    listClass: i.tagType,
    isDefault: i.isDefault ? 'Y' : 'N',
    status: '0',
    remark: i.remark ?? '',
  };
}

/**
 * Two dictionaries RuoYi's pages use describe values only the dialect makes: the operation log's
 * business type (logs.ts groups our actions into RuoYi's numbers) and the job group (our jobs have
 * none; the dialect answers 'SYSTEM'). Served from here while the database has no such type (an
 * administrator who adds one, with items, takes over); never stored by the dialect.
 */
type Own = readonly [value: string, label: string, listClass: DictItem['tagType']];
const DIALECT_DICTS: Record<string, readonly Own[]> = {
  sys_oper_type: [
    ['0', '其它', 'info'], ['1', '新增', 'info'], ['2', '修改', 'info'], ['3', '删除', 'danger'], ['4', '授权', 'primary'],
    ['5', '导出', 'warning'], ['6', '导入', 'warning'], ['7', '强退', 'danger'], ['9', '清空数据', 'danger'],
  ],
  sys_job_group: [['SYSTEM', '系统', 'default']],
};
export const dialectDict = (type: string) =>
  (DIALECT_DICTS[type] ?? []).map(([value, label, listClass], i) => ({ dictCode: 0, dictSort: i + 1, dictLabel: label, dictValue: value, dictType: type, cssClass: '', listClass, isDefault: 'N', status: '0', remark: '' }));

const isDefaultOf = (v: unknown) => (v === undefined || v === '' || v === null ? undefined : v === 'Y' ? true : v === 'N' ? false : 'bad');

/** RuoYi's item form → our item fields; the value of a mapped dictionary in ours. */
function dataFields(b: Record<string, unknown>) {
  const typeCode = text(b.dictType);
  const isDefault = isDefaultOf(b.isDefault);
  if (isDefault === 'bad') throw badRequest("isDefault: must be 'Y' or 'N'");
  return defined({
    typeCode,
    label: text(b.dictLabel),
    value: typeof b.dictValue === 'string' && typeCode ? ourDictValue(typeCode, b.dictValue.trim()) : (b.dictValue as unknown),
    sort: b.dictSort === undefined || b.dictSort === '' || b.dictSort === null ? undefined : Number(b.dictSort),
    status: b.status === undefined || b.status === '' ? undefined : fromRuoyiStatus(b.status),
    tagType: text(b.listClass) ?? (b.listClass === undefined ? undefined : 'default'),
    cssClass: b.cssClass === undefined ? undefined : textOrNull(b.cssClass),
    isDefault,
    remark: b.remark === undefined ? undefined : textOrNull(b.remark),
  });
}

function typeFields(b: Record<string, unknown>) {
  return defined({
    name: text(b.dictName),
    code: text(b.dictType),
    status: b.status === undefined || b.status === '' ? undefined : fromRuoyiStatus(b.status),
    remark: b.remark === undefined ? undefined : textOrNull(b.remark),
  });
}

const versionOf = (b: Record<string, unknown>) => {
  if (typeof b.version !== 'number') throw badRequest('version: missing; reload the record and try again');
  return b.version;
};

/** The dictionary type page's filter (its list and its export). */
export const dictTypeParams = (q: Record<string, string>) => defined({ name: text(q.dictName), code: text(q.dictType), status: statusFilter(q.status) });
/** The dictionary items page's filter (its list and its export). */
export const dictDataParams = (q: Record<string, string>) => defined({ typeCode: text(q.dictType), label: text(q.dictLabel), status: statusFilter(q.status) });

export const dictRoutes = new Hono()
  // ---- types ----
  .get('/system/dict/type/list', ...read('sys:dictType:page'), async (c) => {
    const q = c.req.query();
    const { pageNo, pageSize } = pageOf(q, c.get('deps').config.PAGE_SIZE_MAX);
    const req = parsed(DictTypePageRequest, { pageNo, pageSize, params: dictTypeParams(q) });
    const page = await pageDictTypes(c.get('deps'), c.get('run'), req);
    return table(c, page.records.map(ruoyiDictType), page.total);
  })
  // The type picker of the items page: every type (up to PAGE_SIZE_MAX).
  .get('/system/dict/type/optionselect', ...read('sys:dictType:page'), async (c) => {
    const req = parsed(DictTypePageRequest, { pageNo: 1, pageSize: c.get('deps').config.PAGE_SIZE_MAX, sortField: 'id', sortOrder: 'asc', params: {} });
    const page = await pageDictTypes(c.get('deps'), c.get('run'), req);
    return ajaxData(c, page.records.map(ruoyiDictType));
  })
  // RuoYi's backend reloads its Redis copy; ours is versioned per write (nothing to refresh).
  .delete('/system/dict/type/refreshCache', ...read(null), async (c) => {
    await c.get('run').caller();
    return ajax(c, {}, 'Nothing to refresh: dictionaries are re-read on the first request after any change');
  })
  .get('/system/dict/type/:id{[0-9]+}', ...read('sys:dictType:detail'), async (c) => ajaxData(c, ruoyiDictType(await dictTypeDetail(c.get('run'), idOf(c.req.param('id'), 'dictId')))))
  .post('/system/dict/type', ...write('sys:dictType:add', 'sysDictType', 'add'), async (c) => {
    const input = parsed(DictTypeAddRequest, typeFields(await body(c)));
    c.set('opParams', input);
    await addDictType(c.get('deps'), c.get('run'), input);
    return ajax(c);
  })
  .put('/system/dict/type', ...write('sys:dictType:edit', 'sysDictType', 'edit'), async (c) => {
    const b = await body(c);
    const input = parsed(DictTypeEditRequest, { id: idOf(b.dictId, 'dictId'), version: versionOf(b), ...typeFields(b) });
    c.set('opParams', input);
    await editDictType(c.get('deps'), c.get('run'), input);
    return ajax(c);
  })
  .delete('/system/dict/type/:ids{[0-9,]+}', ...write('sys:dictType:delete', 'sysDictType', 'delete'), async (c) => {
    const ids = idListOf(c.req.param('ids'), 'dictIds');
    c.set('opParams', { ids });
    await deleteDictTypes(c.get('run'), ids);
    return ajax(c);
  })
  // ---- items ----
  // Every page's dictionaries (useDict): any logged-in user, as our sysDict/items.
  .get('/system/dict/data/type/:type', ...read(null), async (c) => {
    const type = c.req.param('type');
    const items = (await dictItems(c.get('deps'), c.get('run'), type)).data;
    return ajaxData(c, items.length || !(type in DIALECT_DICTS) ? items.map(ruoyiItem) : dialectDict(type));
  })
  .get('/system/dict/data/list', ...read('sys:dictData:page'), async (c) => {
    const q = c.req.query();
    const { pageNo, pageSize } = pageOf(q, c.get('deps').config.PAGE_SIZE_MAX);
    const req = parsed(DictDataPageRequest, {
      pageNo,
      pageSize,
      sortField: 'sort',
      sortOrder: 'asc',
      params: dictDataParams(q),
    });
    const page = await pageDictData(c.get('deps'), c.get('run'), req);
    return table(c, page.records.map(ruoyiDictData), page.total);
  })
  .get('/system/dict/data/:id{[0-9]+}', ...read('sys:dictData:detail'), async (c) => ajaxData(c, ruoyiDictData(await dictDataDetail(c.get('run'), idOf(c.req.param('id'), 'dictCode')))))
  .post('/system/dict/data', ...write('sys:dictData:add', 'sysDictData', 'add'), async (c) => {
    const input = parsed(DictDataAddRequest, dataFields(await body(c)));
    c.set('opParams', input);
    await addDictData(c.get('deps'), c.get('run'), input);
    return ajax(c);
  })
  .put('/system/dict/data', ...write('sys:dictData:edit', 'sysDictData', 'edit'), async (c) => {
    const b = await body(c);
    const input = parsed(DictDataEditRequest, { id: idOf(b.dictCode, 'dictCode'), version: versionOf(b), ...dataFields(b) });
    c.set('opParams', input);
    await editDictData(c.get('deps'), c.get('run'), input);
    return ajax(c);
  })
  .delete('/system/dict/data/:ids{[0-9,]+}', ...write('sys:dictData:delete', 'sysDictData', 'delete'), async (c) => {
    const ids = idListOf(c.req.param('ids'), 'dictCodes');
    c.set('opParams', { ids });
    await deleteDictData(c.get('run'), ids);
    return ajax(c);
  });

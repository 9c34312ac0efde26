import { createRoute, z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { etagMatches } from '../../core/etag.ts';
import { idQuerySchema } from '../../core/pagination.ts';
import { guarded } from '../../http/guard.ts';
import { ok, okResponse } from '../../http/respond.ts';
import { createRouter, errorResponse, jsonBody } from '../../http/router.ts';
import { addDictData, deleteDictData, dictDataDetail, editDictData, pageDictData } from './dict-data.service.ts';
import { allDicts, dictItems } from './dict-read.service.ts';
import { addDictType, deleteDictTypes, dictTypeDetail, editDictType, pageDictTypes } from './dict-types.service.ts';
import {
  DictAllSchema,
  DictDataAddRequest,
  DictDataEditRequest,
  DictDataIdsRequest,
  DictDataPage,
  DictDataPageRequest,
  DictDataSchema,
  DictItemSchema,
  DictItemsQuery,
  DictTypeAddRequest,
  DictTypeEditRequest,
  DictTypeIdsRequest,
  DictTypePage,
  DictTypePageRequest,
  DictTypeSchema,
} from './dict.schemas.ts';
import { exportAnswer, exportRequestSchema, exportRoute, when, type ExportFormat } from '../export/index.ts';
import { DictDataPageParams, DictTypePageParams } from './dict.schemas.ts';
import { dictTypeFilter } from './dict-types.service.ts';
import { dictDataFilter } from './dict-data.service.ts';

const tags = ['Dictionaries'];
const notFound = (what: string) => ({ 404: errorResponse(`No such ${what}`) });
const conflict = (what: string) => ({ 409: errorResponse(`${what}, or the version is stale`) });

// ---- sysDictType ----
const typeBase = '/app/sysDictType';
const typePage = guarded(
  'sys:dictType:page',
  createRoute({ method: 'post', path: `${typeBase}/page`, tags, summary: 'Page of dictionary types', request: { body: jsonBody(DictTypePageRequest) }, responses: okResponse('A page of types', DictTypePage) }),
);
const typeDetail = guarded(
  'sys:dictType:detail',
  createRoute({ method: 'get', path: `${typeBase}/detail`, tags, summary: 'One dictionary type', request: { query: idQuerySchema }, responses: { ...okResponse('The type', DictTypeSchema), ...notFound('dictionary type') } }),
);
const typeAdd = guarded(
  'sys:dictType:add',
  createRoute({ method: 'post', path: `${typeBase}/add`, tags, summary: 'Add a dictionary type (code unique: 409)', request: { body: jsonBody(DictTypeAddRequest) }, responses: { ...okResponse('The new type', DictTypeSchema), ...conflict('The code is taken') } }),
  { oplog: true },
);
const typeEdit = guarded(
  'sys:dictType:edit',
  createRoute({
    method: 'post',
    path: `${typeBase}/edit`,
    tags,
    summary: 'Edit a dictionary type (partial; `version` must match, else 409)',
    request: { body: jsonBody(DictTypeEditRequest) },
    responses: { ...okResponse('The updated type', DictTypeSchema), ...notFound('dictionary type'), ...conflict('The code is taken') },
  }),
  { oplog: true },
);
const typeDelete = guarded(
  'sys:dictType:delete',
  createRoute({ method: 'post', path: `${typeBase}/delete`, tags, summary: 'Delete dictionary types with their items (unknown ids are ignored)', request: { body: jsonBody(DictTypeIdsRequest) }, responses: okResponse('Deleted', z.null()) }),
  { oplog: true },
);

// ---- sysDictData ----
const dataBase = '/app/sysDictData';
const dataPage = guarded(
  'sys:dictData:page',
  createRoute({ method: 'post', path: `${dataBase}/page`, tags, summary: 'Page of dictionary items', request: { body: jsonBody(DictDataPageRequest) }, responses: okResponse('A page of items', DictDataPage) }),
);
const dataDetail = guarded(
  'sys:dictData:detail',
  createRoute({ method: 'get', path: `${dataBase}/detail`, tags, summary: 'One dictionary item', request: { query: idQuerySchema }, responses: { ...okResponse('The item', DictDataSchema), ...notFound('dictionary item') } }),
);
const dataAdd = guarded(
  'sys:dictData:add',
  createRoute({
    method: 'post',
    path: `${dataBase}/add`,
    tags,
    summary: 'Add an item to a dictionary type (400 for an unknown type; value unique within the type: 409)',
    request: { body: jsonBody(DictDataAddRequest) },
    responses: { ...okResponse('The new item', DictDataSchema), ...conflict('The value is taken in this type') },
  }),
  { oplog: true },
);
const dataEdit = guarded(
  'sys:dictData:edit',
  createRoute({
    method: 'post',
    path: `${dataBase}/edit`,
    tags,
    summary: 'Edit a dictionary item (partial; `version` must match, else 409)',
    request: { body: jsonBody(DictDataEditRequest) },
    responses: { ...okResponse('The updated item', DictDataSchema), ...notFound('dictionary item'), ...conflict('The value is taken in this type') },
  }),
  { oplog: true },
);
const dataDelete = guarded(
  'sys:dictData:delete',
  createRoute({ method: 'post', path: `${dataBase}/delete`, tags, summary: 'Delete dictionary items (unknown ids are ignored)', request: { body: jsonBody(DictDataIdsRequest) }, responses: okResponse('Deleted', z.null()) }),
  { oplog: true },
);

// ---- sysDict: every logged-in user ----
const ETAG_HEADERS = {
  ETag: { description: 'Weak validator of the data: send it back in If-None-Match for a 304.', schema: { type: 'string' as const, example: 'W/"3f786850e387550fdab836ed7e6dc881"' } },
  'Cache-Control': { description: '`no-store` (every JSON answer to a token): a client that keeps the items itself sends their ETag back in `If-None-Match`.', schema: { type: 'string' as const } },
};
const conditional = <T extends z.ZodType>(description: string, schema: T) => {
  const answer = okResponse(description, schema)[200];
  return {
    200: { ...answer, headers: ETAG_HEADERS },
    304: { description: 'Not modified: If-None-Match matched the ETag (the caller was judged all the same: a revoked token gets 401)', headers: ETAG_HEADERS },
  };
};
const DICT_NOTE =
  'Served from a per-process cache that every dictionary write invalidates on the next request (in every process and isolate). Answers with an ETag; a matching If-None-Match gets 304.';
const itemsRoute = guarded(
  null,
  createRoute({
    method: 'get',
    path: '/app/sysDict/items',
    tags,
    summary: 'The enabled items of one enabled dictionary type, by sort ([] for an unknown or disabled type)',
    description: DICT_NOTE,
    request: { query: DictItemsQuery },
    responses: conditional('The items', z.array(DictItemSchema)),
  }),
);
const allRoute = guarded(
  null,
  createRoute({
    method: 'get',
    path: '/app/sysDict/all',
    tags,
    summary: 'Every enabled dictionary type with its enabled items: { <typeCode>: items[] }',
    description: DICT_NOTE,
    responses: conditional('Every dictionary', DictAllSchema),
  }),
);

/** A cached read's answer: 304 when the client holds this ETag, else the envelope; both with the ETag. */
function answerConditionally<T>(c: Context, answer: { data: T; etag: string }) {
  c.header('ETag', answer.etag);
  c.header('Cache-Control', 'no-store');
  if (etagMatches(c.req.header('if-none-match'), answer.etag)) return c.body(null, 304);
  return ok(c, answer.data);
}

const typeExport = exportRoute('sys:dictType:export', typeBase, tags, 'dictionary types', exportRequestSchema('DictTypeExportRequest', DictTypePageParams));
const dataExport = exportRoute('sys:dictData:export', dataBase, tags, 'dictionary items', exportRequestSchema('DictDataExportRequest', DictDataPageParams));

/** The dictionary types export, as our route and the RuoYi dialect answer it: the page's rows for `params`, in scope, these columns. */
export function exportDictTypes(c: Context, params: Parameters<typeof dictTypeFilter>[0], format: ExportFormat): Promise<Response> {
  return exportAnswer(c, {
    name: 'dictionary-types',
    rows: dictTypeFilter(params),
    select: (q) => q.selectAll('dict_types'),
    keys: ['dict_types.id'],
    columns: [
      { header: 'ID', value: (r) => r.id },
      { header: 'Name', value: (r) => r.name },
      { header: 'Code', value: (r) => r.code },
      { header: 'Status', value: (r) => r.status, dict: 'sys_normal_disable' },
      { header: 'Remark', value: (r) => r.remark },
      { header: 'Created at', value: (r) => when(r.created_at) },
    ],
  }, format);
}

/** The dictionary items export, as our route and the RuoYi dialect answer it: the page's rows for `params`, in scope, these columns. */
export function exportDictData(c: Context, params: Parameters<typeof dictDataFilter>[0], format: ExportFormat): Promise<Response> {
  return exportAnswer(c, {
    name: 'dictionary-items',
    rows: dictDataFilter(params),
    select: (q) => q.selectAll('dict_data'),
    keys: ['dict_data.id'],
    columns: [
      { header: 'ID', value: (r) => r.id },
      { header: 'Type code', value: (r) => r.type_code },
      { header: 'Label', value: (r) => r.label },
      { header: 'Value', value: (r) => r.value },
      { header: 'Sort', value: (r) => r.sort },
      { header: 'Status', value: (r) => r.status, dict: 'sys_normal_disable' },
      { header: 'Tag type', value: (r) => r.tag_type },
      { header: 'CSS class', value: (r) => r.css_class },
      { header: 'Default', value: (r) => (r.is_default === 1 ? 'true' : 'false'), dict: 'sys_yes_no' },
      { header: 'Remark', value: (r) => r.remark },
      { header: 'Created at', value: (r) => when(r.created_at) },
    ],
  }, format);
}

export const dictRoutes = createRouter()
  .openapi(typePage, async (c) => ok(c, await pageDictTypes(c.get('deps'), c.get('run'), c.req.valid('json'))))
  .openapi(typeDetail, async (c) => ok(c, await dictTypeDetail(c.get('run'), c.req.valid('query').id)))
  .openapi(typeAdd, async (c) => ok(c, await addDictType(c.get('deps'), c.get('run'), c.req.valid('json'))))
  .openapi(typeEdit, async (c) => ok(c, await editDictType(c.get('deps'), c.get('run'), c.req.valid('json'))))
  .openapi(typeDelete, async (c) => {
    await deleteDictTypes(c.get('run'), c.req.valid('json').ids);
    return ok(c, null);
  })
  .openapi(dataPage, async (c) => ok(c, await pageDictData(c.get('deps'), c.get('run'), c.req.valid('json'))))
  .openapi(dataDetail, async (c) => ok(c, await dictDataDetail(c.get('run'), c.req.valid('query').id)))
  .openapi(dataAdd, async (c) => ok(c, await addDictData(c.get('deps'), c.get('run'), c.req.valid('json'))))
  .openapi(dataEdit, async (c) => ok(c, await editDictData(c.get('deps'), c.get('run'), c.req.valid('json'))))
  .openapi(dataDelete, async (c) => {
    await deleteDictData(c.get('run'), c.req.valid('json').ids);
    return ok(c, null);
  })
  .openapi(itemsRoute, async (c) => answerConditionally(c, await dictItems(c.get('deps'), c.get('run'), c.req.valid('query').code)))
  .openapi(allRoute, async (c) => answerConditionally(c, await allDicts(c.get('deps'), c.get('run'))))
  .openapi(typeExport, async (c) => {
    const { params, format } = c.req.valid('json');
    return (await exportDictTypes(c, params, format)) as never;
  })
  .openapi(dataExport, async (c) => {
    const { params, format } = c.req.valid('json');
    return (await exportDictData(c, params, format)) as never;
  });

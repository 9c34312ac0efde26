import { createRoute, z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { idQuerySchema } from '../../core/pagination.ts';
import { guarded } from '../../http/guard.ts';
import { ok, okResponse } from '../../http/respond.ts';
import { createRouter, errorResponse, jsonBody } from '../../http/router.ts';
import { addNotice, deleteNotices, editNotice, latestNotices, markNoticesRead, noticeDetail, pageNotices } from './notices.service.ts';
import {
  LatestQuery,
  NoticeAddRequest,
  NoticeEditRequest,
  NoticeIdsRequest,
  NoticeLatest,
  NoticeMarkReadRequest,
  NoticePage,
  NoticePageRequest,
  NoticeSchema,
} from './notices.schemas.ts';
import { exportAnswer, exportRequestSchema, exportRoute, when } from '../export/index.ts';
import { NoticePageParams } from './notices.schemas.ts';
import { noticeFilter, NOTICE_SCOPE } from './notices.service.ts';

const tags = ['Notices'];
const base = '/app/sysNotice';
const notFound = { 404: errorResponse('No such notice in your data scope') };
const SCOPE = "Only notices whose author is in the caller's data scope are visible (others answer 404 as if they did not exist).";
const SANITISED = 'The content is sanitised before it is stored: no script, event handler, `javascript:` URL or external resource survives.';

const pageRoute = guarded(
  'sys:notice:page',
  createRoute({ method: 'post', path: `${base}/page`, tags, summary: 'Page of notices', description: SCOPE, request: { body: jsonBody(NoticePageRequest) }, responses: okResponse('A page of notices', NoticePage) }),
);
const detailRoute = guarded(
  'sys:notice:detail',
  createRoute({ method: 'get', path: `${base}/detail`, tags, summary: 'One notice', description: SCOPE, request: { query: idQuerySchema }, responses: { ...okResponse('The notice', NoticeSchema), ...notFound } }),
);
const addRoute = guarded(
  'sys:notice:add',
  createRoute({ method: 'post', path: `${base}/add`, tags, summary: 'Add a notice (the caller is its author)', description: SANITISED, request: { body: jsonBody(NoticeAddRequest) }, responses: okResponse('The new notice', NoticeSchema) }),
  { oplog: true },
);
const editRoute = guarded(
  'sys:notice:edit',
  createRoute({
    method: 'post',
    path: `${base}/edit`,
    tags,
    summary: 'Edit a notice (partial; `version` must match, else 409)',
    description: `${SCOPE} ${SANITISED}`,
    request: { body: jsonBody(NoticeEditRequest) },
    responses: { ...okResponse('The updated notice', NoticeSchema), ...notFound, 409: errorResponse('The version is stale') },
  }),
  { oplog: true },
);
const deleteRoute = guarded(
  'sys:notice:delete',
  createRoute({
    method: 'post',
    path: `${base}/delete`,
    tags,
    summary: 'Delete notices with their read marks (unknown ids and ids outside your data scope are ignored)',
    request: { body: jsonBody(NoticeIdsRequest) },
    responses: okResponse('Deleted', z.null()),
  }),
  { oplog: true },
);
const latestRoute = guarded(
  null,
  createRoute({
    method: 'get',
    path: `${base}/latest`,
    tags,
    summary: "The latest published notices, newest first, with the caller's read marks and unread count (any logged-in user)",
    request: { query: LatestQuery },
    responses: okResponse('The latest notices', NoticeLatest),
  }),
);
const markReadRoute = guarded(
  null,
  createRoute({
    method: 'post',
    path: `${base}/markRead`,
    tags,
    summary: 'Mark published notices read for the caller (any logged-in user; other ids are ignored)',
    request: { body: jsonBody(NoticeMarkReadRequest) },
    responses: okResponse('Marked', z.null()),
  }),
  { oplog: true },
);

/** The op log keeps no raw HTML (it would be stored as sent): the content's length stands for it. */
export function noticeAuditParams<B extends { content?: string | undefined }>(c: Context, body: B): B {
  c.set('opParams', body.content === undefined ? body : { ...body, content: `<${body.content.length} characters of HTML>` });
  return body;
}

const exportNoticesRoute = exportRoute('sys:notice:export', base, tags, 'notices', exportRequestSchema('NoticeExportRequest', NoticePageParams));

export const noticeRoutes = createRouter()
  .openapi(pageRoute, async (c) => ok(c, await pageNotices(c.get('deps'), c.get('run'), c.req.valid('json'))))
  .openapi(detailRoute, async (c) => ok(c, await noticeDetail(c.get('run'), c.req.valid('query').id)))
  .openapi(addRoute, async (c) => ok(c, await addNotice(c.get('deps'), c.get('run'), noticeAuditParams(c, c.req.valid('json')))))
  .openapi(editRoute, async (c) => ok(c, await editNotice(c.get('deps'), c.get('run'), noticeAuditParams(c, c.req.valid('json')))))
  .openapi(deleteRoute, async (c) => {
    await deleteNotices(c.get('run'), c.req.valid('json').ids);
    return ok(c, null);
  })
  .openapi(latestRoute, async (c) => ok(c, await latestNotices(c.get('run'), c.req.valid('query').limit)))
  .openapi(markReadRoute, async (c) => {
    await markNoticesRead(c.get('deps'), c.get('run'), c.req.valid('json').ids);
    return ok(c, null);
  })
  .openapi(exportNoticesRoute, async (c) => {
    const { params, format } = c.req.valid('json');
    return (await exportAnswer(c, {
      name: 'notices',
      rows: noticeFilter(params),
      scope: NOTICE_SCOPE,
      select: (q) => q.selectAll('notices'),
      keys: ['notices.id'],
      columns: [
        { header: 'ID', value: (r) => r.id },
        { header: 'Title', value: (r) => r.title },
        { header: 'Type', value: (r) => r.type, dict: 'sys_notice_type' },
        { header: 'Status', value: (r) => r.status, dict: 'sys_notice_status' },
        { header: 'Content (HTML)', value: (r) => r.content },
        { header: 'Created by', value: (r) => r.created_by_name },
        { header: 'Created at', value: (r) => when(r.created_at) },
        { header: 'Updated at', value: (r) => when(r.updated_at) },
      ],
    }, format)) as never;
  });

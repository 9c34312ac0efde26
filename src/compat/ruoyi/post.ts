import { Hono } from 'hono';
import { badRequest } from '../../core/errors.ts';
import { addPost, deletePosts, editPost, pagePosts, postDetail, PostAddRequest, PostEditRequest, PostPageRequest, type Post } from '../../modules/posts/index.ts';
import { parsed, read, write } from './guard.ts';
import { ajax, ajaxData, table } from './respond.ts';
import { body } from './user.ts';
import { defined, fromRuoyiStatus, idListOf, idOf, pageOf, ruoyiTime, statusFilter, text, textOrNull, toRuoyiStatus } from './values.ts';

/** 岗位管理 (RuoYi's api/system/post.js) on our posts (modules/posts). */

export function ruoyiPost(p: Post) {
  return { postId: p.id, postCode: p.code, postName: p.name, postSort: p.sort, status: toRuoyiStatus(p.status), remark: p.remark ?? '', createTime: ruoyiTime(p.createdAt), version: p.version };
}

function fields(b: Record<string, unknown>) {
  return defined({
    code: text(b.postCode),
    name: text(b.postName),
    sort: b.postSort === undefined || b.postSort === '' || b.postSort === null ? undefined : Number(b.postSort),
    status: b.status === undefined || b.status === '' ? undefined : fromRuoyiStatus(b.status),
    remark: b.remark === undefined ? undefined : textOrNull(b.remark),
  });
}

/** The post page's filter (its list and its export). */
export const postParams = (q: Record<string, string>) => defined({ code: text(q.postCode), name: text(q.postName), status: statusFilter(q.status) });

export const postRoutes = new Hono()
  .get('/system/post/list', ...read('sys:post:page'), async (c) => {
    const q = c.req.query();
    const { pageNo, pageSize } = pageOf(q, c.get('deps').config.PAGE_SIZE_MAX);
    const req = parsed(PostPageRequest, {
      pageNo,
      pageSize,
      sortField: 'sort',
      sortOrder: 'asc',
      params: postParams(q),
    });
    const page = await pagePosts(c.get('deps'), c.get('run'), req);
    return table(c, page.records.map(ruoyiPost), page.total);
  })
  .get('/system/post/:id{[0-9]+}', ...read('sys:post:detail'), async (c) => ajaxData(c, ruoyiPost(await postDetail(c.get('run'), idOf(c.req.param('id'), 'postId')))))
  .post('/system/post', ...write('sys:post:add', 'sysPost', 'add'), async (c) => {
    const input = parsed(PostAddRequest, fields(await body(c)));
    c.set('opParams', input);
    await addPost(c.get('deps'), c.get('run'), input);
    return ajax(c);
  })
  .put('/system/post', ...write('sys:post:edit', 'sysPost', 'edit'), async (c) => {
    const b = await body(c);
    if (typeof b.version !== 'number') throw badRequest('version: missing; reload the post and try again');
    const input = parsed(PostEditRequest, { id: idOf(b.postId, 'postId'), version: b.version, ...fields(b) });
    c.set('opParams', input);
    await editPost(c.get('deps'), c.get('run'), input);
    return ajax(c);
  })
  .delete('/system/post/:ids{[0-9,]+}', ...write('sys:post:delete', 'sysPost', 'delete'), async (c) => {
    const ids = idListOf(c.req.param('ids'), 'postIds');
    c.set('opParams', { ids });
    await deletePosts(c.get('run'), ids);
    return ajax(c);
  });

import { Hono } from 'hono';
import { AppError, badRequest } from '../../core/errors.ts';
import {
  addNotice,
  deleteNotices,
  editNotice,
  LATEST_MAX,
  latestNotices,
  markNoticesRead,
  NoticeAddRequest,
  noticeAuditParams,
  noticeDetail,
  NoticeEditRequest,
  NoticePageRequest,
  pageNotices,
  type Notice,
} from '../../modules/notices/index.ts';
import { pageUsers, UserPageRequest } from '../../modules/users/index.ts';
import { parsed, read, requireCode, write } from './guard.ts';
import { ajax, ajaxData, table } from './respond.ts';
import { body } from './user.ts';
import { defined, idListOf, idOf, ourDictValue, pageOf, ruoyiDictValue, ruoyiTime, text } from './values.ts';

/**
 * 通知公告 (RuoYi's api/system/notice.js) on our notices (modules/notices), and the header's bell
 * (listTop, markRead, markReadAll) on `latest` and `markRead`. Type and status go through the
 * sys_notice_type and sys_notice_status pairs of DICT_VALUES ('1'/'2', '0' published, '1' closed);
 * our `draft` has no RuoYi value and is served, and taken, as `draft` (the dictionary's 草稿 item
 * carries that value, so RuoYi's form offers it).
 */

export function ruoyiNotice(n: Notice & { read?: boolean }) {
  return {
    noticeId: n.id,
    noticeTitle: n.title,
    noticeType: ruoyiDictValue('sys_notice_type', n.type),
    noticeContent: n.content,
    status: ruoyiDictValue('sys_notice_status', n.status),
    createBy: n.createdByName,
    createTime: ruoyiTime(n.createdAt),
    updateTime: ruoyiTime(n.updatedAt),
    remark: '',
    version: n.version,
    ...(n.read === undefined ? {} : { isRead: n.read }),
  };
}

const typeOf = (v: unknown) => (v === undefined || v === '' || v === null ? undefined : ourDictValue('sys_notice_type', String(v)));
const statusOf = (v: unknown) => (v === undefined || v === '' || v === null ? undefined : ourDictValue('sys_notice_status', String(v)));

function fields(b: Record<string, unknown>) {
  return defined({
    title: text(b.noticeTitle),
    type: typeOf(b.noticeType),
    content: b.noticeContent === undefined || b.noticeContent === null ? undefined : String(b.noticeContent),
    status: statusOf(b.status),
  });
}

/** What the op log keeps of a body before it is understood: the content's length, never raw HTML (as ours). */
const unread = (b: Record<string, unknown>) => (typeof b.noticeContent === 'string' ? { ...b, noticeContent: `<${b.noticeContent.length} characters of HTML>` } : b);

export const noticeRoutes = new Hono()
  .get('/system/notice/list', ...read('sys:notice:page'), async (c) => {
    const q = c.req.query();
    const deps = c.get('deps');
    const run = c.get('run');
    const { pageNo, pageSize } = pageOf(q, deps.config.PAGE_SIZE_MAX);
    // RuoYi searches by the author's login name, ours by their id: the name is looked up among the
    // users the caller may see (a name they cannot see finds nothing, as the notices would not show).
    let createdBy: number | undefined;
    const author = text(q.createBy);
    if (author) {
      const users = await pageUsers(deps, run, parsed(UserPageRequest, { pageNo: 1, pageSize: 10, params: { loginName: author } }));
      const exact = users.records.find((u) => u.loginName.toLowerCase() === author.trim().toLowerCase());
      if (!exact) return table(c, [], 0);
      createdBy = exact.id;
    }
    const req = parsed(NoticePageRequest, { pageNo, pageSize, params: defined({ title: text(q.noticeTitle), type: typeOf(q.noticeType), status: statusOf(q.status), createdBy }) });
    const page = await pageNotices(deps, run, req);
    return table(c, page.records.map((n) => ruoyiNotice(n)), page.total);
  })
  // The header's bell, on every page: any logged-in user, as our latest.
  .get('/system/notice/listTop', ...read(null), async (c) => {
    const latest = await latestNotices(c.get('run'));
    return ajax(c, { data: latest.records.map(ruoyiNotice), unreadCount: latest.unread });
  })
  .post('/system/notice/markRead', ...write(null, 'sysNotice', 'markRead'), async (c) => {
    const ids = [idOf(c.req.query('noticeId'), 'noticeId')];
    c.set('opParams', { ids });
    await markNoticesRead(c.get('deps'), c.get('run'), ids);
    return ajax(c);
  })
  .post('/system/notice/markReadAll', ...write(null, 'sysNotice', 'markRead'), async (c) => {
    const ids = idListOf(c.req.query('ids') ?? '', 'ids');
    if (!ids.length) throw badRequest('ids: at least one notice id');
    c.set('opParams', { ids });
    await markNoticesRead(c.get('deps'), c.get('run'), ids);
    return ajax(c);
  })
  .get('/system/notice/readUsers/list', ...read('sys:notice:page'), async (c) => {
    await c.get('run').caller();
    throw new AppError('NOT_IMPLEMENTED', 'Who read a notice is not listed by this server: each user sees their own read marks only');
  })
  // The header's detail (any user, a published notice) and the notice page's edit form: a
  // published notice among the latest is everyone's; any other needs sys:notice:detail and the
  // author in the caller's scope, as our detail.
  .get('/system/notice/:id{[0-9]+}', ...read(null), async (c) => {
    const run = c.get('run');
    const id = idOf(c.req.param('id'), 'noticeId');
    const published = (await latestNotices(run, LATEST_MAX)).records.find((n) => n.id === id);
    if (published) return ajaxData(c, ruoyiNotice(published));
    await requireCode(run, 'sys:notice:detail', 'A notice that is not among the latest published');
    return ajaxData(c, ruoyiNotice(await noticeDetail(run, id)));
  })
  .post('/system/notice', ...write('sys:notice:add', 'sysNotice', 'add'), async (c) => {
    const b = await body(c);
    c.set('opParams', unread(b));
    const input = parsed(NoticeAddRequest, fields(b));
    await addNotice(c.get('deps'), c.get('run'), noticeAuditParams(c, input));
    return ajax(c);
  })
  .put('/system/notice', ...write('sys:notice:edit', 'sysNotice', 'edit'), async (c) => {
    const b = await body(c);
    c.set('opParams', unread(b));
    if (typeof b.version !== 'number') throw badRequest('version: missing; reload the notice and try again');
    const input = parsed(NoticeEditRequest, { id: idOf(b.noticeId, 'noticeId'), version: b.version, ...fields(b) });
    await editNotice(c.get('deps'), c.get('run'), noticeAuditParams(c, input));
    return ajax(c);
  })
  .delete('/system/notice/:ids{[0-9,]+}', ...write('sys:notice:delete', 'sysNotice', 'delete'), async (c) => {
    const ids = idListOf(c.req.param('ids'), 'noticeIds');
    c.set('opParams', { ids });
    await deleteNotices(c.get('run'), ids);
    return ajax(c);
  });

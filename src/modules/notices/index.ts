// What the app and other modules may use of notices: the routes, and the page's filter and data
// scope (an export selects the same rows as the page for the same params and caller).
export { noticeRoutes } from './notices.routes.ts';
export { noticeFilter, NOTICE_SCOPE } from './notices.service.ts';
export type { Notice } from './notices.schemas.ts';
// The RuoYi dialect (compat/ruoyi) maps RuoYi's notice page and header bell onto these services,
// with the same op-log stand-in for the HTML content as our routes (noticeAuditParams).
export { addNotice, deleteNotices, editNotice, latestNotices, markNoticesRead, noticeDetail, pageNotices } from './notices.service.ts';
export { noticeAuditParams } from './notices.routes.ts';
export { LATEST_MAX, NoticeAddRequest, NoticeEditRequest, NoticePageRequest } from './notices.schemas.ts';

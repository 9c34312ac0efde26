// What the app and other modules may use of notices: the routes, and the page's filter and data
// scope (an export selects the same rows as the page for the same params and caller).
export { noticeRoutes } from './notices.routes.ts';
export { noticeFilter, NOTICE_SCOPE } from './notices.service.ts';
export type { Notice } from './notices.schemas.ts';

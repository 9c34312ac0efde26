// What the app and other modules may use of posts: the routes, and the page filter (an export
// selects the same rows as the page for the same params).
export { postRoutes } from './posts.routes.ts';
export { postFilter } from './posts.service.ts';
export type { Post } from './posts.schemas.ts';
// The RuoYi dialect (compat/ruoyi) maps RuoYi's post page and the user form's picker onto these services.
export { addPost, deletePosts, editPost, listPosts, pagePosts, postDetail } from './posts.service.ts';
export { PostAddRequest, PostEditRequest, PostPageRequest } from './posts.schemas.ts';
export { exportPosts } from './posts.routes.ts';

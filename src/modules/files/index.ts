// What the app and other modules may use of files: the routes, the download header, the blob sweep.
export { fileRoutes, imageRoutes } from './files.routes.ts';
export { contentDisposition } from './file-name.ts';
export { cleanupBlobs } from './blob-refs.ts';
export type { FileRecord, ImageRecord } from './files.schemas.ts';

// What the app and the entries may use of backups: the routes, the scheduled run, the start-up repair.
export { backupRoutes } from './backups.routes.ts';
export { archivesOf, failInterruptedBackups, scheduledBackup } from './backups.service.ts';

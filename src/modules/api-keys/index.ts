// What the app may use of API keys: the routes and the record type (docs/api-keys.md). The key's
// check on every request lives in access/api-key-statement.ts and http/auth.ts.
export { apiKeyRoutes } from './api-keys.routes.ts';
export type { ApiKey } from './api-keys.schemas.ts';

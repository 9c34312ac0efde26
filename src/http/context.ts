import type { AuthUser } from '../core/caller.ts';
import type { Deps } from '../deps.ts';
import type { ClientOrigin } from './client.ts';

declare module 'hono' {
  interface ContextVariableMap {
    deps: Deps;
    /** Replaces the request body as the op-log params when the body is not JSON (uploads). */
    opParams: unknown;
    traceId: string;
    /** The caller's address and location, captured from the original request (captureClient). */
    client: ClientOrigin;
    auth: AuthUser;
    /** Set by the error mapper so the op-log recorder can store what the client was told. */
    errorMsg: string;
    /** Whether the caller holds the code the route declared (computed with authentication). */
    permitted: boolean;
  }
}

export type AppEnv = { Bindings: unknown };


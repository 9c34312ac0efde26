import type { Runner } from '../db/runner.ts';
import type { RequestPorts } from '../core/ports.ts';
import type { ClientOrigin } from './client.ts';

declare module 'hono' {
  interface ContextVariableMap {
    /** The app's ports (the same object for every request). */
    deps: RequestPorts;
    /** This request's database work and caller (db/runner.ts). */
    run: Runner;
    /** Replaces the request body as the op-log params when the body is not JSON (uploads). */
    opParams: unknown;
    traceId: string;
    /** The caller's address and location, captured from the original request (captureClient). */
    client: ClientOrigin;
    /** The op-log row's module and action when the path does not name them (the RuoYi dialect). */
    opAction: { module: string; action: string };
    /** The session a valid signed link names (http/auth.ts signedOr): its file read checks it is live. */
    linkSession: string;
    /** Module and action of the op-log row when the path is not `/app/<module>/<action>` (compat dialects). */
    opName: { module: string; action: string };
    /** Set by the error mapper so the op-log recorder can store what the client was told. */
    errorMsg: string;
  }
}

export type AppEnv = { Bindings: unknown };

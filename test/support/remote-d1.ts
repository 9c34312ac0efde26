import type { Miniflare } from 'miniflare';
import type { D1Database, D1PreparedStatement, D1Result, D1Value } from '../../src/adapters/workers/bindings.ts';

/**
 * A D1 binding of the tests' workerd, used from the test process through one HTTP request per
 * execution (a statement's all()/run(), or a whole batch), answered by EXECUTOR inside workerd with
 * the real D1 binding: the SQL still runs on workerd's D1 engine, with its limits and error texts.
 *
 * Why not Miniflare's `getD1Database()` proxy: every prepare() and bind() is a synchronous round
 * trip to workerd (a worker thread blocked in Atomics.wait), 15–50 ms each on a loaded 2-core
 * machine, and the stubs are freed by Node's garbage collector through a FinalizationRegistry: a
 * statement handed to batch() is unreachable while the request is in flight, so under load its
 * FREE can reach workerd first, which then fails an internal assertion (proxy.worker.ts
 * `heapValue !== undefined`, "AssertionError: false == true").
 *
 * Binary values cross as `{ $b: base64 }` both ways (ArrayBuffer in, ArrayBuffer out); an error is
 * rethrown with D1's message and its cause's message, which is all src/adapters/workers/d1-errors.ts
 * reads.
 */
export const EXECUTOR = `
const enc = (v) => v instanceof ArrayBuffer || ArrayBuffer.isView(v)
  ? { $b: btoa(String.fromCharCode(...new Uint8Array(v instanceof ArrayBuffer ? v : v.buffer))) }
  : Array.isArray(v) ? v.map(enc) : v && typeof v === 'object' ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, enc(x)])) : v;
const dec = (v) => v && typeof v === 'object' && typeof v.$b === 'string'
  ? Uint8Array.from(atob(v.$b), (c) => c.charCodeAt(0)).buffer : v;
export default {
  async fetch(request, env) {
    const { db, op, statements } = await request.json();
    const d1 = env[db];
    try {
      const prepared = statements.map((s) => d1.prepare(s.sql).bind(...s.params.map(dec)));
      const out = op === 'batch' ? await d1.batch(prepared) : [await prepared[0][op]()];
      return Response.json({ ok: enc(out) });
    } catch (e) {
      return Response.json({ error: String(e?.message ?? e), cause: e?.cause?.message === undefined ? null : String(e.cause.message) });
    }
  },
};
`;

type Wire = { sql: string; params: unknown[] };
const toWire = (v: D1Value | Uint8Array): unknown => {
  if (v instanceof ArrayBuffer) return { $b: Buffer.from(new Uint8Array(v)).toString('base64') };
  if (v instanceof Uint8Array) return { $b: Buffer.from(v).toString('base64') };
  return v;
};
const fromWire = (v: unknown): unknown => {
  if (Array.isArray(v)) return v.map(fromWire);
  if (v && typeof v === 'object') {
    const b = (v as { $b?: unknown }).$b;
    if (typeof b === 'string') {
      const bytes = Buffer.from(b, 'base64');
      return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
    }
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, fromWire(x)]));
  }
  return v;
};

class RemoteStatement implements D1PreparedStatement {
  readonly db: RemoteD1;
  readonly sql: string;
  readonly params: unknown[];
  constructor(db: RemoteD1, sql: string, params: unknown[]) {
    this.db = db;
    this.sql = sql;
    this.params = params;
  }
  bind(...values: D1Value[]): D1PreparedStatement {
    return new RemoteStatement(this.db, this.sql, values.map(toWire));
  }
  async all<T>(): Promise<D1Result<T>> {
    return (await this.db.send<T>('all', [this]))[0]!;
  }
  async run<T>(): Promise<D1Result<T>> {
    return (await this.db.send<T>('run', [this]))[0]!;
  }
}

class RemoteD1 implements D1Database {
  private readonly mf: Miniflare;
  private readonly binding: string;
  constructor(mf: Miniflare, binding: string) {
    this.mf = mf;
    this.binding = binding;
  }
  prepare(sql: string): D1PreparedStatement {
    return new RemoteStatement(this, sql, []);
  }
  batch<T>(statements: D1PreparedStatement[]): Promise<D1Result<T>[]> {
    return this.send<T>('batch', statements as RemoteStatement[]);
  }
  async send<T>(op: 'all' | 'run' | 'batch', statements: RemoteStatement[]): Promise<D1Result<T>[]> {
    const body: { db: string; op: string; statements: Wire[] } = { db: this.binding, op, statements: statements.map((s) => ({ sql: s.sql, params: s.params })) };
    const res = await this.mf.dispatchFetch('http://d1.test/', { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json' } });
    const answer = (await res.json()) as { ok?: unknown; error?: string; cause?: string | null };
    if (answer.error !== undefined) throw new Error(answer.error, answer.cause == null ? undefined : { cause: new Error(answer.cause) });
    return fromWire(answer.ok) as D1Result<T>[];
  }
}

/** The D1 database bound as `binding` in `mf`'s worker (whose script is EXECUTOR). */
export function remoteD1(mf: Miniflare, binding: string): D1Database {
  return new RemoteD1(mf, binding);
}

// Checks live responses against the served OpenAPI document: the status must be declared for the
// operation, the media type declared for that status, the JSON body valid against its schema
// (ajv, JSON Schema 2020-12 as OpenAPI 3.1 uses), and the headers the document knows about
// declared exactly where the server sends them, each valid against its schema.
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';

type Obj = Record<string, any>;

/** Response headers the document describes; any of them sent but undeclared is a failure. */
export const DESCRIBED_HEADERS = ['X-Trace-Id', 'Retry-After', 'ETag', 'Content-Disposition', 'Accept-Ranges', 'Content-Range'];

export interface Operation {
  path: string;
  method: string;
  op: Obj;
}

export function openApiChecker(doc: Obj) {
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
  addFormats(ajv);
  ajv.addFormat('binary', true);
  // The components are one schema resource, so `#/components/schemas/X` resolves inside it.
  ajv.addSchema({ $id: 'doc', components: doc.components });
  const cache = new Map<string, ValidateFunction>();
  const validator = (key: string, schema: Obj) => {
    let v = cache.get(key);
    if (!v) {
      const rebased = JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', '"doc#/components/'));
      v = ajv.compile(rebased);
      cache.set(key, v);
    }
    return v;
  };

  const operations: Operation[] = Object.entries(doc.paths as Record<string, Obj>).flatMap(([path, item]) =>
    Object.entries(item).map(([method, op]) => ({ path, method, op: op as Obj })),
  );
  const find = (method: string, path: string) => operations.find((o) => o.method === method.toLowerCase() && o.path === path);

  /** Every (operationId, status) seen, for the coverage check. */
  const seen = new Map<string, Set<number>>();

  /**
   * Validates one response; returns the problems (empty when it conforms). Reads the body from a
   * clone, so the caller can still read it.
   */
  async function check(method: string, url: string, res: Response): Promise<string[]> {
    const path = new URL(url).pathname;
    const o = find(method, path);
    if (!o) return [`${method} ${path}: no such operation in the document`];
    const id = o.op.operationId as string;
    const where = `${id} ${res.status}`;
    seen.set(id, (seen.get(id) ?? new Set()).add(res.status));
    const declared = o.op.responses[String(res.status)];
    if (!declared) return [`${where}: status not declared (declared: ${Object.keys(o.op.responses).join(', ')})`];
    const problems: string[] = [];

    const headers = (declared.headers ?? {}) as Obj;
    for (const name of DESCRIBED_HEADERS) {
      const value = res.headers.get(name);
      const decl = headers[name];
      if (value !== null && !decl) problems.push(`${where}: header ${name} sent but not declared`);
      if (value === null && decl) problems.push(`${where}: header ${name} declared but not sent`);
      if (value !== null && decl) {
        const schema = decl.$ref ? doc.components.headers[decl.$ref.split('/').pop()] .schema : decl.schema;
        const typed = schema?.type === 'integer' ? Number(value) : value;
        const v = validator(`header:${name}`, schema ?? {});
        if (!v(typed)) problems.push(`${where}: header ${name}=${value}: ${ajv.errorsText(v.errors)}`);
      }
    }

    const text = await res.clone().text();
    const content = (declared.content ?? {}) as Obj;
    if (text.length === 0 && res.status === 304) return problems;
    const type = (res.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
    const media = content[type] ?? content['*/*'];
    if (!media) {
      problems.push(`${where}: content type ${type || '(none)'} not declared (declared: ${Object.keys(content).join(', ') || 'none'})`);
      return problems;
    }
    if (type === 'application/json') {
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        return [...problems, `${where}: body is not JSON`];
      }
      const v = validator(`${id}:${res.status}:${type}`, media.schema ?? {});
      if (!v(body)) problems.push(`${where}: body does not match the schema: ${ajv.errorsText(v.errors)} — ${text.slice(0, 300)}`);
    }
    return problems;
  }

  return { operations, check, seen };
}

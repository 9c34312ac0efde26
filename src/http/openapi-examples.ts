/**
 * Realistic example values synthesised from a JSON schema of the OpenAPI document, so every
 * operation (including ones added later) gets a request and a response example without anyone
 * writing them by hand. A schema's own `example`/`default`/`enum` wins; otherwise the property
 * name picks a sample from the table below; otherwise the type and format do. The linters in
 * test/openapi-lint.test.ts validate every example against its schema.
 */

type Schema = Record<string, unknown>;
export type Resolve = (ref: string) => Schema | undefined;

/** Samples by property name: what an admin SPA would really send or receive. */
const BY_NAME: Record<string, unknown> = {
  loginName: 'alice',
  nickName: 'Alice Liddell',
  password: 'Correct-Horse-42',
  oldPassword: 'Correct-Horse-42',
  newPassword: 'Battery-Staple-97',
  email: 'alice@example.org',
  phone: '+44 20 7946 0958',
  avatar: '/avatars/alice.png',
  remark: 'Reviews the monthly reports',
  code: 'auditor',
  title: 'Users',
  path: '/system/user',
  component: 'system/user/index',
  icon: 'ant-design:user-outlined',
  permission: 'sys:user:page',
  ip: '203.0.113.7',
  lastLoginIp: '203.0.113.7',
  userAgent: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36',
  browser: 'Chrome 131',
  os: 'Windows 10',
  traceId: '0af7651916cd43dd8448eb211c80319c',
  token: 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIiwianRpIjoiNmQ3YiJ9.c2lnbmF0dXJl',
  sessionId: '6d7b5e0c-1f3a-4c1e-9d5a-2b8f0e4c7a91',
  codeKey: '3f2b1c9e-8a7d-4e6f-b5a4-c3d2e1f0a9b8',
  securityCode: 'K7PX',
  sha256: '9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08',
  contentType: 'application/pdf',
  extension: 'pdf',
  module: 'sysUser',
  action: 'add',
  method: 'POST',
  operatorName: 'admin',
  errorMsg: null,
  msg: 'SUCCESS',
  size: 48213,
  width: 640,
  height: 480,
  durationMs: 12,
  sort: 1,
  version: 3,
  total: 1,
  pages: 1,
  current: 1,
  pageNo: 1,
  pageSize: 10,
  expiresIn: 2592000,
  parentId: 0,
  orgName: 'Head office',
};

/**
 * Samples that depend on what is described (the schema's name): `name` is a file name for a file
 * and a role name for a role; an image is a PNG; an organisation has its own code; a captcha
 * expires in minutes. The first matching schema wins; then BY_NAME.
 */
const BY_SCHEMA: [RegExp, Record<string, unknown>][] = [
  [/image/i, { name: 'team-photo.png', extension: 'png', contentType: 'image/png' }],
  [/file/i, { name: 'report-2026-11.pdf' }],
  [/org/i, { name: 'Head office', code: 'hq', remark: 'Main site, London' }],
  [/backup/i, { name: 'backup-2026-11-22T020713Z.tar' }],
  [/role/i, { name: 'Auditor' }],
  [/menu/i, { name: 'Users' }],
  [/oplog/i, { path: '/app/sysUser/add' }],
  [/captcha/i, { image: 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAHgAAAAoCAYAAAA16j4lAAAA', expiresIn: 120 }],
];

const TIMESTAMP = '2026-11-22T02:07:13.000Z';

function sampleString(schema: Schema, name: string | undefined): unknown {
  switch (schema.format) {
    case 'date-time':
      return TIMESTAMP;
    case 'date':
      return '2026-11-22';
    case 'uuid':
      return '6d7b5e0c-1f3a-4c1e-9d5a-2b8f0e4c7a91';
    case 'email':
      return 'alice@example.org';
    case 'uri':
      return 'https://admin.example.org/';
    case 'binary':
      return '(binary)';
  }
  if (name && /At$/.test(name)) return TIMESTAMP;
  if (name && /^created(From|To)$/.test(name)) return name === 'createdFrom' ? '2026-11-01' : '2026-11-30';
  return name ? `${name} example` : 'text';
}

function integerFor(name: string | undefined, schema: Schema): number {
  const min = typeof schema.minimum === 'number' ? schema.minimum : undefined;
  if (name && /(^id$|Id$)/.test(name)) return name === 'id' ? 42 : 7;
  return min !== undefined && min > 1 ? min : 1;
}

/**
 * An example for `schema`. `context` names the schema being built (e.g. "SysImage") so that
 * `name` can be a file name for a file and a role name for a role; `depth` stops recursive trees.
 */
export function exampleFor(schema: Schema | undefined, resolve: Resolve, name?: string, context = '', depth = 0): unknown {
  if (!schema || depth > 12) return null;
  if (typeof schema.$ref === 'string') {
    const refName = schema.$ref.split('/').pop() ?? '';
    return exampleFor(resolve(schema.$ref), resolve, name, refName, depth + 1);
  }
  if (schema.example !== undefined) return schema.example;
  if (Array.isArray(schema.examples) && schema.examples.length) return schema.examples[0];
  if (schema.const !== undefined) return schema.const;
  if (Array.isArray(schema.enum)) return schema.enum[0];
  if (schema.default !== undefined) return schema.default;
  for (const key of ['anyOf', 'oneOf'] as const) {
    const options = schema[key] as Schema[] | undefined;
    if (options) {
      const pick = options.find((o) => o.type !== 'null') ?? options[0];
      return exampleFor(pick, resolve, name, context, depth + 1);
    }
  }
  if (Array.isArray(schema.allOf)) {
    // An extended schema (SysImage = SysFile + width/height) keeps its own, more specific context.
    const part = (s: Schema) =>
      typeof s.$ref === 'string' && context ? exampleFor(resolve(s.$ref), resolve, name, context, depth + 1) : exampleFor(s, resolve, name, context, depth + 1);
    return Object.assign({}, ...(schema.allOf as Schema[]).map(part));
  }
  const types = Array.isArray(schema.type) ? schema.type : [schema.type];
  const type = types.find((t) => t !== 'null') ?? types[0];
  const bySchema = name ? BY_SCHEMA.find(([re, samples]) => name in samples && re.test(context))?.[1] : undefined;
  if (name === 'name' && type === 'string' && !bySchema) return 'Example';
  const table = bySchema ?? BY_NAME;
  if (name && name in table && type !== 'object' && type !== 'array') {
    const v = table[name];
    if (v === null ? types.includes('null') : typeof v === (type === 'integer' ? 'number' : type)) return v;
  }
  switch (type) {
    case 'object': {
      const props = (schema.properties ?? {}) as Record<string, Schema>;
      const out: Record<string, unknown> = {};
      for (const [key, sub] of Object.entries(props)) {
        // A tree stops after two levels, with an empty children list.
        if (key === 'children' && depth > 6) out[key] = [];
        else out[key] = exampleFor(sub, resolve, key, context, depth + 1);
      }
      return out;
    }
    case 'array': {
      const items = schema.items as Schema | undefined;
      const min = typeof schema.minItems === 'number' ? schema.minItems : 0;
      if (!items) return [];
      if (name === 'ids' || name === 'roleIds' || name === 'menuIds' || name === 'scopeOrgIds') return [42, 43].slice(0, Math.max(min, 2));
      const one = exampleFor(items, resolve, name, context, depth + 1);
      return Array.from({ length: Math.max(1, min) }, () => one);
    }
    case 'integer':
      return integerFor(name, schema);
    case 'number':
      return integerFor(name, schema);
    case 'boolean':
      return name === 'hidden' ? false : true;
    case 'null':
      return null;
    case 'string':
      return sampleString(schema, name);
    default:
      return null;
  }
}

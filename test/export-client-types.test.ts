// The typed client (hc<AppType>) for export and import (issue 27, item 6), checked at compile time
// (`tsc --noEmit` in `npm test`) and at run time against an in-memory app.
import { describe, expect, test } from 'bun:test';
import type { InferRequestType, InferResponseType } from 'hono/client';
import { createClient, type Client } from '../src/client.ts';
import { readSheet } from '../src/core/xlsx-read.ts';
import { ADMIN_PASSWORD, makeTestApp } from './support/app.ts';

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
type Assert<T extends true> = T;

type UserExport = Client['app']['sysUser']['export']['$post'];
type JobLogExport = Client['app']['sysJobLog']['export']['$post'];
type Import = Client['app']['sysUser']['import']['$post'];
type Template = Client['app']['sysUser']['importTemplate']['$get'];

export type ExportFormat = Assert<Equal<InferRequestType<UserExport>['json']['format'], 'xlsx' | 'csv' | undefined>>;
export type ExportParams = Assert<Equal<NonNullable<InferRequestType<UserExport>['json']['params']>['loginName'], string | undefined>>;
export type JobLogParams = Assert<Equal<NonNullable<InferRequestType<JobLogExport>['json']['params']>['jobId'], number | undefined>>;
export type TemplateQuery = Assert<Equal<InferRequestType<Template>['query'], { format?: 'xlsx' | 'csv' | undefined }>>;
type ImportData = InferResponseType<Import, 200>['data'];
export type ImportShape = Assert<Equal<keyof ImportData, 'created' | 'updated' | 'failed' | 'errors'>>;
export type ImportError = Assert<Equal<ImportData['errors'][number], { row: number; column: string | null; msg: string }>>;

const t = await makeTestApp();
let token: string | null = null;
const client = createClient('http://api.test', () => token, ((input: RequestInfo | URL, init?: RequestInit) =>
  t.app.request(input instanceof Request ? input : String(input), init)) as typeof fetch);

describe('typed client: export and import', () => {
  test('an export and the import template through hc', async () => {
    const login = await client.auth.login.$post({ json: { loginName: 'admin', password: ADMIN_PASSWORD } });
    if (!login.ok) throw new Error('login failed');
    token = (await login.json()).data.token;
    const res = await client.app.sysUser.export.$post({ json: { params: { loginName: 'adm' }, format: 'xlsx' } });
    expect(res.status).toBe(200);
    const rows = await readSheet(new Uint8Array(await res.arrayBuffer()));
    expect(rows.slice(1).map((r) => r[1])).toEqual(['admin']);
    const template = await client.app.sysUser.importTemplate.$get({ query: { format: 'csv' } });
    expect(template.status).toBe(200);
    expect(new Uint8Array(await template.arrayBuffer()).slice(0, 3)).toEqual(new Uint8Array([0xef, 0xbb, 0xbf]));
  });
});

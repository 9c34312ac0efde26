// sysJob and sysJobLog through the typed client: the types are checked by `tsc --noEmit` in
// `npm test` (a drift from what is spelled out here fails it), then used against an in-memory app.
import { expect, test } from 'bun:test';
import type { InferRequestType, InferResponseType } from 'hono/client';
import { createClient, type Client } from '../src/client.ts';
import { makeTestApp } from './support/app.ts';

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
type Assert<T extends true> = T;
type Flat<T> = { [K in keyof T]: T[K] };
type ErrorEnvelope = { status: number; msg: string; data: null; traceId: string };

type JobShape = {
  id: number;
  name: string;
  handler: string;
  cron: string;
  status: 'enabled' | 'disabled';
  misfirePolicy: 'fire' | 'skip';
  concurrent: boolean;
  lastRunAt: string | null;
  nextRunAt: string | null;
  running: boolean;
  version: number;
  createdAt: string;
  updatedAt: string;
};
type JobLogShape = {
  id: number;
  jobId: number;
  jobName: string;
  status: 'success' | 'failure';
  message: string;
  startedAt: string;
  finishedAt: string;
  durationMs: number;
};

type Page = Client['app']['sysJob']['page']['$post'];
type Edit = Client['app']['sysJob']['edit']['$post'];
type Run = Client['app']['sysJob']['run']['$post'];
type LogPage = Client['app']['sysJobLog']['page']['$post'];

export type JobRecord = Assert<Equal<Flat<InferResponseType<Page, 200>['data']['records'][number]>, JobShape>>;
export type EditBody = Assert<
  Equal<
    Flat<InferRequestType<Edit>['json']>,
    { id: number; version: number; cron?: string | undefined; status?: 'enabled' | 'disabled' | undefined; misfirePolicy?: 'fire' | 'skip' | undefined; concurrent?: boolean | undefined }
  >
>;
export type RunAnswer = Assert<Equal<Flat<InferResponseType<Run, 200>['data']>, JobLogShape>>;
export type RunBusy = Assert<Equal<InferResponseType<Run, 409 | 501>, ErrorEnvelope>>;
export type LogParams = Assert<
  Equal<
    Flat<NonNullable<InferRequestType<LogPage>['json']['params']>>,
    { jobId?: number | undefined; status?: 'success' | 'failure' | undefined; createdFrom?: string | undefined; createdTo?: string | undefined }
  >
>;

test('the typed client pages, edits and runs jobs and reads their log', async () => {
  const t = await makeTestApp();
  const token = await t.login();
  const client = createClient('http://app.test', () => token, ((input: RequestInfo | URL, init?: RequestInit) => t.app.request(input, init)) as typeof fetch);
  const page = await client.app.sysJob.page.$post({ json: { params: { name: 'expired' } } });
  if (!page.ok) throw new Error(`page: ${page.status}`);
  const job = (await page.json()).data.records[0]!;
  expect(job.handler).toBe('expiredCleanup');
  const edit = await client.app.sysJob.edit.$post({ json: { id: job.id, version: job.version, cron: '*/5 * * * *' } });
  if (!edit.ok) throw new Error(`edit: ${edit.status}`);
  expect((await edit.json()).data.cron).toBe('*/5 * * * *');
  const run = await client.app.sysJob.run.$post({ json: { id: job.id } });
  if (!run.ok) throw new Error(`run: ${run.status}`);
  const ran = (await run.json()).data;
  expect(ran.status).toBe('success');
  const log = await client.app.sysJobLog.page.$post({ json: { params: { jobId: job.id } } });
  if (!log.ok) throw new Error(`log: ${log.status}`);
  expect((await log.json()).data.records.map((r) => r.id)).toEqual([ran.id]);
});

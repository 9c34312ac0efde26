import { z } from '@hono/zod-openapi';
import { cronError, normalizeCron } from '../../core/cron.ts';
import { dateRangeParams, idSchema, idsSchema, likeText, pageRequestSchema, pageResponseSchema } from '../../core/pagination.ts';
import { StatusSchema } from '../../core/schemas.ts';

export const MisfirePolicySchema = z
  .enum(['fire', 'skip'], { message: "must be 'fire' or 'skip'" })
  .openapi({ description: 'Due times missed while nothing ran (service down, job running): `fire` runs once at the next tick, `skip` waits for the next due time' });

/** A 5-field cron expression, checked field by field (core/cron.ts): 400 names the field and its range. */
const CronSchema = z
  .string({ message: 'must be a string' })
  .trim()
  .max(120, 'must be at most 120 characters')
  .transform(normalizeCron)
  .superRefine((expr, ctx) => {
    const why = cronError(expr);
    if (why) ctx.addIssue({ code: 'custom', message: why });
  })
  .openapi({ description: '5 fields, UTC: minute hour day-of-month month day-of-week', example: '*/10 * * * *' });

export const JobSchema = z
  .object({
    id: z.number().int(),
    name: z.string(),
    handler: z.string().openapi({ description: 'The code the job runs, registered by this name in the service (not editable)' }),
    cron: z.string(),
    status: StatusSchema,
    misfirePolicy: MisfirePolicySchema,
    concurrent: z.boolean().openapi({ description: 'false: one run at a time, across every process and isolate (run now answers 409 meanwhile)' }),
    lastRunAt: z.string().nullable().openapi({ description: 'When the last run started (a run now counts)' }),
    nextRunAt: z.string().nullable().openapi({ description: 'The next due time; null while disabled' }),
    running: z.boolean().openapi({ description: 'A run of this non-concurrent job holds it now' }),
    version: z.number().int(),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .openapi('Job');

export const JobPageParams = z
  .strictObject({
    name: likeText().optional().openapi({ description: 'Part of the name or of the handler' }),
    status: StatusSchema.optional(),
  })
  .openapi('JobPageParams');

export const JobPageRequest = pageRequestSchema('JobPageRequest', JobPageParams, ['id', 'name', 'lastRunAt', 'nextRunAt']);
export const JobPage = pageResponseSchema('JobPage', JobSchema);

export const JobEditRequest = z
  .strictObject({
    id: idSchema,
    version: z.number().int('must be an integer').min(1, 'must be at least 1'),
    cron: CronSchema.optional(),
    status: StatusSchema.optional(),
    misfirePolicy: MisfirePolicySchema.optional(),
    concurrent: z.boolean({ message: 'must be true or false' }).optional(),
  })
  .openapi('JobEditRequest', {
    description: 'Partial update; `version` must be the one read (stale → 409). `status` also needs sys:job:changeStatus. nextRunAt is recomputed.',
  });

export const JobStatusRequest = z.strictObject({ id: idSchema, status: StatusSchema }).openapi('JobStatusRequest');
export const JobRunRequest = z.strictObject({ id: idSchema }).openapi('JobRunRequest');

export const JobLogSchema = z
  .object({
    id: z.number().int(),
    jobId: z.number().int(),
    jobName: z.string(),
    status: z.enum(['success', 'failure']),
    message: z.string().openapi({ description: 'What the run did, or why it failed' }),
    startedAt: z.string(),
    finishedAt: z.string(),
    durationMs: z.number().int(),
  })
  .openapi('JobLog');

export const JobLogPageParams = z
  .strictObject({
    jobId: idSchema.optional(),
    status: z.enum(['success', 'failure'], { message: 'must be success or failure' }).optional(),
    ...dateRangeParams,
  })
  .openapi('JobLogPageParams', { description: 'createdFrom/createdTo bound the start of the run' });

export const JobLogPageRequest = pageRequestSchema('JobLogPageRequest', JobLogPageParams, ['startedAt', 'durationMs']);
export const JobLogPage = pageResponseSchema('JobLogPage', JobLogSchema);
export const JobLogDeleteRequest = z.strictObject({ ids: idsSchema }).openapi('JobLogDeleteRequest');

export type Job = z.infer<typeof JobSchema>;
export type JobLog = z.infer<typeof JobLogSchema>;
export type JobPageInput = z.infer<typeof JobPageRequest>;
export type JobEditInput = z.infer<typeof JobEditRequest>;
export type JobLogPageInput = z.infer<typeof JobLogPageRequest>;

import type { CompiledQuery, Selectable } from 'kysely';
import type { Ports } from '../../core/ports.ts';
import type { BackupsTable } from '../../db/schema.ts';
import { AppError, conflict, forbidden, notFound, storageFull } from '../../core/errors.ts';
import { errorFields } from '../../core/log.ts';
import { pageStatements } from '../../core/pagination.ts';
import type { BackupArchives, DbPorts } from '../../core/ports.ts';
import { isoNow } from '../../core/time.ts';
import { qb } from '../../db/compile.ts';
import { idList } from '../../db/id-list.ts';
import { resultsOf } from '../../db/plan.ts';
import { Runner } from '../../db/runner.ts';
import type { Backup, BackupPageInput } from './backups.schemas.ts';
import { scopeAllGuard, scopeAllOf, scopeAllStatement } from '../../access/data-scope.ts';
import { GUARD_RULES } from '../../db/guards.ts';

/**
 * "Backups hold every row" (password hashes included): besides their codes, the sysBackup
 * operations need a caller whose data scope is `all` (403 otherwise), on Workers too (before the
 * 501). Reads carry the check in their own plan (the answer is made only if it holds); writes
 * carry it as a guard at the head of their batch.
 */
const SCOPE_ALL_ONLY = GUARD_RULES.scope_all_only.message;

/** The plan's reads with the scope check first; its rows, or 403 if the caller's scope is not `all`. */
async function readWithScopeAll(run: Runner, reads: readonly { sql: string; parameters: readonly unknown[] }[]): Promise<unknown[][]> {
  return run.read({
    reads: [scopeAllStatement(run.userId), ...reads],
    finish: ([all, ...rows]) => {
      if (!scopeAllOf(all)) throw forbidden(SCOPE_ALL_ONLY);
      return rows;
    },
  });
}

/** On Workers there are no archives: D1 Time Travel keeps the database's history. */
export function archivesOf(deps: Ports): BackupArchives {
  if (!deps.backups) {
    throw new AppError(
      'NOT_IMPLEMENTED',
      'Backups are not taken by the service on Workers: D1 Time Travel keeps 30 days of history (wrangler d1 time-travel) and wrangler d1 export makes a copy; see docs/backup-and-restore.md',
    );
  }
  return deps.backups;
}

function toBackup(r: Selectable<BackupsTable>): Backup {
  return {
    id: r.id,
    name: r.name,
    size: r.size,
    sha256: r.sha256,
    status: r.status,
    trigger: r.trigger_type,
    createdBy: r.created_by,
    createdAt: r.created_at,
    finishedAt: r.finished_at,
    errorMsg: r.error_msg,
  };
}

export async function pageBackups(deps: Ports, run: Runner, req: BackupPageInput) {
  if (!deps.backups) {
    await readWithScopeAll(run, []);
    archivesOf(deps);
  }
  let filtered = qb.selectFrom('backups');
  if (req.params.status) filtered = filtered.where('status', '=', req.params.status);
  if (req.params.trigger) filtered = filtered.where('trigger_type', '=', req.params.trigger);
  const page = pageStatements(req, {
    maxPageSize: deps.config.PAGE_SIZE_MAX,
    filtered,
    select: (q) => q.selectAll(),
    sortColumns: { createdAt: 'created_at', size: 'size' },
    defaultSort: 'createdAt',
    idColumn: 'id',
    map: (r: Selectable<BackupsTable>) => toBackup(r),
  });
  return page.finish(await readWithScopeAll(run, page.statements));
}

/** `backup-20261123T170000Z-1a2b.tar`: sortable by time, unique by the random tail. */
function archiveName(createdAt: string, uuid: string) {
  return `backup-${createdAt.replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z')}-${uuid.slice(0, 8)}.tar`;
}

/**
 * Takes one backup now and waits for it: a `running` row first (the partial unique index refuses a
 * second one while it runs: 409), then the archive, then `done` with its size and checksum — or
 * `failed` with the reason (full storage answers 507, anything else 500).
 */
export async function createBackup(deps: Ports, run: Runner, trigger: 'manual' | 'scheduled'): Promise<Backup> {
  const auth = trigger === 'manual' ? await run.caller() : undefined;
  if (auth && !deps.backups) await readWithScopeAll(run, []);
  const archives = archivesOf(deps);
  const userId = auth?.userId ?? null;
  const createdAt = isoNow(deps.clock);
  const name = archiveName(createdAt, deps.ids.uuid());
  let id: number;
  try {
    const head = auth ? scopeAllGuard(auth) : [];
    const inserted = (
      await run.write(
        resultsOf([
          ...head,
          qb
          .insertInto('backups')
            .values({ name, status: 'running', trigger_type: trigger, created_by: userId, created_at: createdAt })
            .returning('id')
            .compile(),
        ]),
      )
    ).at(-1);
    id = (inserted!.rows[0] as { id: number }).id;
  } catch (e) {
    if (/UNIQUE constraint failed: backups\.status/.test(String((e as Error).message))) throw conflict('A backup is already running');
    throw e;
  }
  try {
    const made = await archives.create(name, createdAt);
    const [done] = await run.write(
      resultsOf([
        qb
          .updateTable('backups')
          .set({ status: 'done', size: made.size, sha256: made.sha256, finished_at: isoNow(deps.clock) })
          .where('id', '=', id)
          .returningAll()
          .compile(),
      ]),
    );
    return toBackup(done!.rows[0] as Selectable<BackupsTable>);
  } catch (e) {
    deps.log.log('error', 'backup failed', { name, ...errorFields(e) });
    const full = deps.classifyError?.(e) === 'full';
    const reason = full ? 'storage is full' : String((e as Error).message ?? e).split('\n')[0]!.slice(0, 300);
    await run
      .record([qb.updateTable('backups').set({ status: 'failed', finished_at: isoNow(deps.clock), error_msg: reason }).where('id', '=', id).compile()])
      .catch(() => undefined);
    await archives.remove(name).catch(() => undefined);
    if (full) throw storageFull('Storage is full: the backup was not written');
    throw new AppError('INTERNAL', 'The backup failed; its errorMsg says why');
  }
}

/** The archive of a finished backup, for download. */
export async function backupArchive(deps: Ports, run: Runner, id: number) {
  if (!deps.backups) await readWithScopeAll(run, []);
  const archives = archivesOf(deps);
  const [rows] = await readWithScopeAll(run, [qb.selectFrom('backups').selectAll().where('id', '=', id).where('status', '=', 'done').compile()]);
  const row = rows?.[0] as Selectable<BackupsTable> | undefined;
  const file = row && (await archives.open(row.name));
  if (!row || !file) throw notFound('Backup not found');
  return { name: row.name, ...file };
}

/** Deletes finished or failed backups with their archives (a running one is left alone). */
export async function deleteBackups(deps: Ports, run: Runner, ids: number[]) {
  const auth = await run.caller();
  if (!deps.backups) await readWithScopeAll(run, []);
  return dropBackups(deps, run, ids, scopeAllGuard(auth));
}

/** The delete itself, after `guards` (the caller's scope; none for the scheduler's retention). */
async function dropBackups(deps: Ports, run: Runner, ids: number[], guards: CompiledQuery[]) {
  const archives = archivesOf(deps);
  const deleted = (
    await run.write(resultsOf([...guards, qb.deleteFrom('backups').where('id', 'in', idList(ids)).where('status', '!=', 'running').returning('name').compile()]))
  ).at(-1);
  const rows = (deleted?.rows ?? []) as { name: string }[];
  for (const { name } of rows) await archives.remove(name);
  return rows.length;
}

/**
 * A scheduled backup (the job `backup`, modules/jobs; `run` has no caller: every statement runs as
 * the scheduler's), keeping the newest BACKUP_KEEP scheduled
 * ones (manual backups stay until deleted). Each run writes an op-log row as a manual one does.
 */
export async function scheduledBackup(deps: Ports, run: Runner) {
  const started = deps.clock.now();
  let status = 200;
  let errorMsg: string | null = null;
  let name = '';
  try {
    name = (await createBackup(deps, run, 'scheduled')).name;
    const old = await run.rows<{ id: number }>(
      qb
        .selectFrom('backups')
        .select('id')
        .where('trigger_type', '=', 'scheduled')
        .where('status', '!=', 'running')
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .limit(1000)
        .offset(deps.config.BACKUP_KEEP)
        .compile(),
    );
    if (old.length) await dropBackups(deps, run, old.map((r) => r.id), []);
  } catch (e) {
    status = e instanceof AppError ? e.status : 500;
    errorMsg = (e as Error).message;
  }
  const row = {
      module: 'sysBackup',
      action: 'create',
      method: 'SCHEDULE',
      path: '/app/sysBackup/create',
      operator_id: null,
      operator_name: null,
      ip: '',
      user_agent: 'scheduler',
      params: JSON.stringify({ trigger: 'scheduled', name }),
      status,
      error_msg: errorMsg,
      duration_ms: Math.max(0, Math.round(deps.clock.now() - started)),
      trace_id: deps.ids.uuid().replaceAll('-', ''),
      created_at: isoNow(deps.clock),
  };
  await run.record([qb.insertInto('op_log').values(row).compile()]).catch((e: unknown) => deps.log.log('error', 'op log write failed', errorFields(e)));
  return { status, name, errorMsg };
}

/** A backup left `running` by a crash or a kill can never finish: mark it failed at start-up. */
export async function failInterruptedBackups(deps: Ports & DbPorts) {
  if (!deps.backups) return;
  await new Runner(deps).record([
    qb
      .updateTable('backups')
      .set({ status: 'failed', finished_at: isoNow(deps.clock), error_msg: 'interrupted: the server stopped while it ran' })
      .where('status', '=', 'running')
      .compile(),
  ]);
}

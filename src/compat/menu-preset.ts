import { sql, type CompiledQuery, type RawBuilder } from 'kysely';
import type { DbPorts } from '../core/ports.ts';
import { qb } from '../db/compile.ts';
import { resultsOf } from '../db/plan.ts';
import { Runner } from '../db/runner.ts';

/**
 * What the menu presets (MENU_PRESET, `bun scripts/menu-preset.ts`) are built from: statements that
 * re-shape our seeded menus for one client's views. Pages are found by the buttons they hold (ids
 * differ between databases), so every button, and so every grant to a role, stays where it was;
 * nothing is deleted; every statement is written so that running the preset again changes nothing
 * more (an UPDATE to the values it already holds, an INSERT OR IGNORE keyed by the unique name).
 */

export type Parent = RawBuilder<unknown>;

/** The page menu holding the button with `code`. */
export const pageOf = (code: string) => sql`(SELECT parent_id FROM menus WHERE permission = ${code} AND type = 'button' LIMIT 1)`;
/** The directory or menu with route name `name`. */
export const named = (name: string) => sql`(SELECT id FROM menus WHERE name = ${name} COLLATE NOCASE AND type <> 'button')`;
/** The seeded top-level `/system` directory. */
export const SYSTEM_DIR = sql`(SELECT id FROM menus WHERE path IN ('/system') AND type = 'directory' AND parent_id = 0 ORDER BY id LIMIT 1)`;

export interface Page {
  /** A button code the page holds (how the page is found). */
  code: string;
  parent: Parent;
  title: string;
  path: string;
  component: string;
  icon: string;
  name: string;
  sort: number;
}

/**
 * Moves the page holding `code` under `parent` and gives it the client's view, icon and route name;
 * a page already so placed is left alone (its version stays).
 */
export function placePage(p: Page): CompiledQuery {
  return sql`UPDATE menus SET parent_id = ${p.parent}, title = ${p.title}, path = ${p.path}, component = ${p.component}, icon = ${p.icon},
    name = ${p.name}, sort = ${p.sort}, keep_alive = 1, hidden = 0, version = version + 1
    WHERE id = ${pageOf(p.code)} AND ${p.parent} IS NOT NULL
      AND (parent_id IS NOT ${p.parent} OR title IS NOT ${p.title} OR path IS NOT ${p.path} OR component IS NOT ${p.component} OR icon IS NOT ${p.icon}
        OR name IS NOT ${p.name} OR sort IS NOT ${p.sort} OR keep_alive <> 1 OR hidden <> 0)`.compile(qb);
}

export function addDirectory(parent: Parent, title: string, path: string, icon: string, name: string, sort: number): CompiledQuery {
  return sql`INSERT OR IGNORE INTO menus (parent_id, title, type, path, icon, sort, name)
    SELECT ${parent}, ${title}, 'directory', ${path}, ${icon}, ${sort}, ${name} WHERE ${parent} IS NOT NULL`.compile(qb);
}

/** A page without buttons of its own: shown to a super admin and to the roles granted it. */
export function addPage(parent: Parent, title: string, path: string, component: string, icon: string, name: string, sort: number, hidden = false): CompiledQuery {
  return sql`INSERT OR IGNORE INTO menus (parent_id, title, type, path, component, icon, sort, name, keep_alive, hidden)
    SELECT ${parent}, ${title}, 'menu', ${path}, ${component}, ${icon}, ${sort}, ${name}, 1, ${hidden ? 1 : 0} WHERE ${parent} IS NOT NULL`.compile(qb);
}

/** Takes the pages holding `codes` out of the sidebar (their buttons, codes and grants stay). */
export function hidePages(codes: readonly string[]): CompiledQuery[] {
  return codes.map((code) => sql`UPDATE menus SET hidden = 1 WHERE id = ${pageOf(code)}`.compile(qb));
}

/** Applies a preset's statements in one atomic batch (a transaction on Bun, a D1 batch on Workers). */
export async function applyPresetStatements(deps: DbPorts, statements: CompiledQuery[]): Promise<void> {
  await new Runner(deps).write(resultsOf(statements));
}

/** A preset as SQL text, for `wrangler d1 execute --file` on a D1 database. */
export function presetSqlText(statements: CompiledQuery[]): string {
  return statements
    .map((q) => {
      let i = 0;
      return `${q.sql.replace(/\?/g, () => literal(q.parameters[i++]))};`;
    })
    .join('\n');
}

function literal(v: unknown): string {
  if (v === null || v === undefined) return 'NULL';
  if (typeof v === 'number') return String(v);
  return `'${String(v).replace(/'/g, "''")}'`;
}

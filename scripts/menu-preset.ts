/*
 * bun scripts/menu-preset.ts ruoyi          applies the RuoYi-Vue3 menu preset to DATABASE_PATH
 * bun scripts/menu-preset.ts ruoyi --sql    prints it as SQL instead (for a D1 database:
 *     bun scripts/menu-preset.ts ruoyi --sql > preset.sql && npx wrangler d1 execute DB --remote --file preset.sql)
 *
 * For an existing database (a new one gets it at its first start with MENU_PRESET=ruoyi). It moves
 * and renames the seeded pages for RuoYi's views and hides those RuoYi has no view for; buttons
 * and grants stay (docs/ruoyi.md). Running it twice changes nothing more. The server may be running:
 * the change is one transaction, and every process sees it on its next request (menus version).
 * Exit codes: 0 applied or printed, 1 failed, 64 usage.
 */
import { existsSync } from 'node:fs';
import { parseConfig } from '../src/config.ts';
import { bunSqliteBinding, openSqlite } from '../src/adapters/bun/sqlite.ts';
import { applyRuoyiMenuPreset, ruoyiMenuPresetSql } from '../src/compat/ruoyi/index.ts';
import { readEach } from '../src/core/ports.ts';

const [preset, flag] = process.argv.slice(2);
if (preset !== 'ruoyi' || (flag !== undefined && flag !== '--sql')) {
  console.error('usage: bun scripts/menu-preset.ts ruoyi [--sql]');
  process.exit(64);
}
if (flag === '--sql') {
  console.log(ruoyiMenuPresetSql());
  process.exit(0);
}
const config = parseConfig(process.env);
if (!existsSync(config.DATABASE_PATH)) {
  console.error(`No database at ${config.DATABASE_PATH} (DATABASE_PATH): start the server once first, or set MENU_PRESET=ruoyi for its first start.`);
  process.exit(1);
}
const sqlite = openSqlite(config.DATABASE_PATH, { busyTimeoutMs: config.SQLITE_BUSY_TIMEOUT_MS });
const binding = bunSqliteBinding(sqlite);
await applyRuoyiMenuPreset({ read: binding.read, readMany: readEach(binding.read), atomic: binding.atomic });
sqlite.close();
console.log(`RuoYi menu preset applied to ${config.DATABASE_PATH}`);

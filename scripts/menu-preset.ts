/*
 * bun scripts/menu-preset.ts <ruoyi|vben>          applies a menu preset to DATABASE_PATH
 * bun scripts/menu-preset.ts <ruoyi|vben> --sql    prints it as SQL instead (for a D1 database:
 *     bun scripts/menu-preset.ts vben --sql > preset.sql && npx wrangler d1 execute DB --remote --file preset.sql)
 *
 * For an existing database (a new one gets it at its first start with MENU_PRESET=ruoyi or vben).
 * It moves and renames the seeded pages for the client's views and hides those it has no view for;
 * buttons and grants stay (docs/ruoyi.md, docs/vben.md). Running it twice changes nothing more.
 * The server may be running: the change is one transaction, and every process sees it on its next
 * request (menus version). Exit codes: 0 applied or printed, 1 failed, 64 usage.
 */
import { existsSync } from 'node:fs';
import { parseConfig } from '../src/config.ts';
import { bunSqliteBinding, openSqlite } from '../src/adapters/bun/sqlite.ts';
import { isMenuPreset, MENU_PRESETS } from '../src/compat/presets.ts';
import { readEach } from '../src/core/ports.ts';

const [preset, flag] = process.argv.slice(2);
if (!isMenuPreset(preset) || (flag !== undefined && flag !== '--sql')) {
  console.error(`usage: bun scripts/menu-preset.ts <${Object.keys(MENU_PRESETS).join('|')}> [--sql]`);
  process.exit(64);
}
if (flag === '--sql') {
  console.log(MENU_PRESETS[preset].sql());
  process.exit(0);
}
const config = parseConfig(process.env);
if (!existsSync(config.DATABASE_PATH)) {
  console.error(`No database at ${config.DATABASE_PATH} (DATABASE_PATH): start the server once first, or set MENU_PRESET=${preset} for its first start.`);
  process.exit(1);
}
const sqlite = openSqlite(config.DATABASE_PATH, { busyTimeoutMs: config.SQLITE_BUSY_TIMEOUT_MS });
const binding = bunSqliteBinding(sqlite);
await MENU_PRESETS[preset].apply({ read: binding.read, readMany: readEach(binding.read), atomic: binding.atomic });
sqlite.close();
console.log(`${MENU_PRESETS[preset].label} menu preset applied to ${config.DATABASE_PATH}`);

/**
 * The "part of" searches (users nickName, files name and contentType) answer exactly what a plain
 * `column LIKE '%text%' ESCAPE '\'` answers — same records, same order, same total — whichever
 * path the page takes (the page among the first PROBE_ROWS of the sort order: walked; not: every
 * match collected and sorted; deeper pages: the plain walk; the content-type walk over distinct
 * values or its fallback), on bun:sqlite and on D1. The oracle is
 * that plain LIKE run on the same database, plus a JS statement of the semantics docs/api.md gives
 * (ASCII letters case-insensitive, everything else literal, `%` and `_` included).
 */
import { describe, expect, test } from 'bun:test';
import { PROBE_ROWS } from '../src/core/pagination.ts';
import { CONTENT_TYPE_WALK } from '../src/modules/files/files.service.ts';
import { perRuntime, type AnyTestApp } from './support/app.ts';
import { upload } from './support/files.ts';
import { userWithCodes } from './support/rbac.ts';

let t: AnyTestApp;
let admin: string;

perRuntime((app, token) => {
  t = app;
  admin = token;
}, suite);

/** Tricky values, each on a few records. */
const TRICKY = ['100% sure', '100_percent', 'a_b%c', 'back\\slash', "O'Brien", 'say "hi"', 'Ärger', 'ärger', 'straße', 'STRASSE', '☃ snow', 'MiXeD CaSe', 'ab', 'x'];
/** Searches: short (1–2 characters), wildcards, quotes, backslash, unicode, case, none, every. */
const SEARCHES = ['%', '_', '\\', "'", '"', 'a', 'ab', 'A', 'ä', 'Ä', 'ß', 'ss', '☃', 'mixed case', 'MIXED', '0% s', '0_p', 'b%c', 'nothing-here', 'ember', 'Member 1', 'ember 12', 'ber 4'];
const BULK = PROBE_ROWS + 150;
const OLD = 300;

/** ASCII letters fold, nothing else does (SQLite's LIKE without ICU). */
const fold = (s: string) => s.replace(/[A-Z]/g, (c) => c.toLowerCase());
const contains = (value: string, text: string) => fold(value).includes(fold(text));

const escaped = (text: string) => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

async function page(path: string, body: Record<string, unknown>) {
  const r = await t.call('POST', path, { token: admin, body });
  expect(r.status).toBe(200);
  return r.data as { records: { id: number }[]; total: number; pages: number };
}

/** What the old `LIKE '%…%'` page answered: ids in order, and the total. */
async function plainLike(table: string, where: string, column: string, text: string, order: string, limit: number, offset: number, ...params: (string | number)[]) {
  const ids = await t.rows<{ id: number }>(
    `SELECT id FROM ${table} WHERE ${where} AND ${column} LIKE ? ESCAPE '\\' ORDER BY ${order} LIMIT ? OFFSET ?`,
    ...params, escaped(text), limit, offset,
  );
  const total = await t.row<{ n: number }>(`SELECT count(*) AS n FROM ${table} WHERE ${where} AND ${column} LIKE ? ESCAPE '\\'`, ...params, escaped(text));
  return { ids: ids.map((r) => r.id), total: total!.n };
}

function suite() {
  describe('users nickName', () => {
    test('seed: tricky nick names, more than PROBE_ROWS "Member n", the oldest users "Oldtimer n"', async () => {
      // Straight into the table (1,150 users through the API would take minutes on D1).
      await t.exec(
        `INSERT INTO users (login_name, password_hash, nick_name, status, created_at, updated_at)
         SELECT 'bulk' || value, 'x', 'Member ' || value, 'enabled',
                strftime('%Y-%m-%dT%H:%M:%fZ', '2026-01-01', '+' || (value % 97) || ' hours'), '2026-01-01T00:00:00.000Z'
         FROM json_each(?)`,
        JSON.stringify(Array.from({ length: BULK }, (_, i) => i + 1)),
      );
      await t.exec(
        `INSERT INTO users (login_name, password_hash, nick_name, status, created_at, updated_at)
         SELECT 'old' || value, 'x', 'Oldtimer ' || value, 'enabled', strftime('%Y-%m-%dT%H:%M:%fZ', '2020-01-01', '+' || value || ' minutes'), '2020-01-01T00:00:00.000Z'
         FROM json_each(?)`,
        JSON.stringify(Array.from({ length: OLD }, (_, i) => i + 1)),
      );
      for (const [i, nick] of TRICKY.entries()) {
        for (let k = 0; k < 3; k++) {
          await t.exec(
            `INSERT INTO users (login_name, password_hash, nick_name, status, created_at, updated_at) VALUES (?, 'x', ?, 'enabled', ?, ?)`,
            `tricky${i}_${k}`, nick, `2026-02-0${1 + k}T00:00:00.000Z`, '2026-01-01T00:00:00.000Z',
          );
        }
      }
      expect((await t.row<{ n: number }>('SELECT count(*) AS n FROM users'))!.n).toBeGreaterThan(BULK);
    });

    for (const text of SEARCHES) {
      test(`"${text}": same records, order and total as plain LIKE; matches the rule in docs/api.md`, async () => {
        const got = await page('/app/sysUser/page', { params: { nickName: text }, pageSize: 100 });
        const want = await plainLike('users', '1', 'nick_name', text, 'created_at DESC, id DESC', 100, 0);
        expect({ ids: got.records.map((r) => r.id), total: got.total }).toEqual(want);
        const all = await t.rows<{ id: number; nick_name: string | null }>('SELECT id, nick_name FROM users');
        expect(got.total).toBe(all.filter((u) => u.nick_name !== null && contains(u.nick_name, text)).length);
      });
    }

    test('page within the first PROBE_ROWS of the order or not, many or few matches, every sort both ways, deep pages, past the end', async () => {
      // Many matches everywhere; a few, spread; many, all at the oldest end.
      const texts = ['ember', 'ember 12', 'ldtimer'];
      const totals = new Map<string, number>();
      for (const text of texts) totals.set(text, (await plainLike('users', '1', 'nick_name', text, 'id', 1, 0)).total);
      expect(totals.get('ember')!).toBeGreaterThan(PROBE_ROWS);
      expect(totals.get('ember 12')!).toBeLessThan(200);
      expect(totals.get('ldtimer')).toBe(OLD);
      const sorts: [string, string][] = [['createdAt', 'created_at'], ['loginName', 'login_name'], ['nickName', 'nick_name'], ['id', 'id'], ['updatedAt', 'updated_at']];
      for (const text of texts) {
        for (const [field, column] of sorts) {
          for (const dir of ['asc', 'desc'] as const) {
            for (const pageNo of [1, 2]) {
              const got = await page('/app/sysUser/page', { params: { nickName: text }, sortField: field, sortOrder: dir, pageNo, pageSize: 7 });
              const want = await plainLike('users', '1', 'nick_name', text, `${column} ${dir}, id ${dir}`, 7, (pageNo - 1) * 7);
              expect({ text, field, dir, pageNo, ids: got.records.map((r) => r.id), total: got.total }).toEqual({ text, field, dir, pageNo, ...want });
            }
          }
        }
      }
      // Offset 1000 (the deferred join) inside the probe's reach, and a page beyond it (the plain walk).
      for (const [pageNo, pageSize] of [[51, 20], [101, 20], [21, 100]] as const) {
        for (const text of texts) {
          const got = await page('/app/sysUser/page', { params: { nickName: text }, pageNo, pageSize });
          const want = await plainLike('users', '1', 'nick_name', text, 'created_at DESC, id DESC', pageSize, (pageNo - 1) * pageSize);
          expect({ text, pageNo, ids: got.records.map((r) => r.id), total: got.total }).toEqual({ text, pageNo, ...want });
        }
      }
      // Past the end: no records, the total still right.
      for (const text of texts) {
        const past = await page('/app/sysUser/page', { params: { nickName: text }, pageNo: 19, pageSize: 100 });
        const want = await plainLike('users', '1', 'nick_name', text, 'created_at DESC, id DESC', 100, 1800);
        expect({ text, ids: past.records.map((r) => r.id), total: past.total }).toEqual({ text, ...want });
        const far = await page('/app/sysUser/page', { params: { nickName: text }, pageNo: 1000, pageSize: 100 });
        expect(far.records).toEqual([]);
        expect(far.total).toBe(totals.get(text)!);
      }
      // searchCount false: total 0, the same records.
      for (const text of texts) {
        const got = await page('/app/sysUser/page', { params: { nickName: text }, searchCount: false });
        expect(got.total).toBe(0);
        expect(got.records.map((r) => r.id)).toEqual((await plainLike('users', '1', 'nick_name', text, 'created_at DESC, id DESC', 10, 0)).ids);
      }
    });

    test('combined with other filters (status, loginName) the search still equals plain LIKE', async () => {
      await t.exec(`UPDATE users SET status = 'disabled' WHERE login_name LIKE 'bulk1%'`);
      const got = await page('/app/sysUser/page', { params: { nickName: 'ember', status: 'disabled' }, pageSize: 100 });
      const want = await plainLike('users', `status = 'disabled'`, 'nick_name', 'ember', 'created_at DESC, id DESC', 100, 0);
      expect({ ids: got.records.map((r) => r.id), total: got.total }).toEqual(want);
      const byName = await page('/app/sysUser/page', { params: { nickName: 'ember', loginName: 'bulk11' }, pageSize: 100 });
      const wantByName = await plainLike('users', `login_name LIKE 'bulk11%'`, 'nick_name', 'ember', 'created_at DESC, id DESC', 100, 0);
      expect({ ids: byName.records.map((r) => r.id), total: byName.total }).toEqual(wantByName);
    });

    test('every filter at once, a caller of scope "org": one statement D1 accepts (100 bound values, expression depth 100), same answer as plain LIKE', async () => {
      const org = await t.row<{ id: number }>(
        `INSERT INTO orgs (name, code, created_at, updated_at) VALUES ('Search org', 'search_org', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z') RETURNING id`,
      );
      await t.exec(`INSERT INTO org_closure (ancestor_id, descendant_id, depth) VALUES (?, ?, 0)`, org!.id, org!.id);
      await t.exec(`UPDATE users SET org_id = ? WHERE id % 3 = 0 AND login_name LIKE 'bulk%'`, org!.id);
      const reader = await userWithCodes(t, admin, ['sys:user:page']);
      await t.exec(`UPDATE users SET org_id = ? WHERE id = ?`, org!.id, reader.userId);
      await t.exec(`UPDATE roles SET data_scope = 'org' WHERE id = ?`, reader.roleId);
      const role = await t.row<{ id: number }>(
        `INSERT INTO roles (name, code, status, data_scope, created_at, updated_at) VALUES ('Searched', 'searched', 'enabled', 'all', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z') RETURNING id`,
      );
      await t.exec(`INSERT INTO user_role (user_id, role_id) SELECT id, ? FROM users WHERE id % 2 = 0 AND login_name LIKE 'bulk%'`, role!.id);
      const params = { nickName: 'ember 1', loginName: 'bulk1', status: 'enabled', roleId: role!.id, orgId: org!.id, createdFrom: '2025-01-01', createdTo: '2026-12-31' };
      const where = `status = 'enabled' AND login_name LIKE 'bulk1%' AND org_id = ${org!.id} AND EXISTS (SELECT 1 FROM user_role ur WHERE ur.user_id = users.id AND ur.role_id = ${role!.id})
        AND created_at >= '2025-01-01T00:00:00.000Z' AND created_at <= '2026-12-31T23:59:59.999Z'`;
      for (const token of [admin, reader.token]) {
        for (const [pageNo, pageSize] of [[1, 10], [2, 7], [1000, 10]] as const) {
          const r = await t.call('POST', '/app/sysUser/page', { token, body: { params, pageNo, pageSize } });
          expect(r.status).toBe(200);
          const want = await plainLike('users', where, 'nick_name', 'ember 1', 'created_at DESC, id DESC', pageSize, (pageNo - 1) * pageSize);
          expect({ pageNo, ids: r.data.records.map((x: { id: number }) => x.id), total: r.data.total }).toEqual({ pageNo, ...want });
        }
      }
    });

    test('an edit and a delete through the API show at once', async () => {
      const before = await page('/app/sysUser/page', { params: { nickName: 'Zebra-unique' } });
      expect(before.total).toBe(0);
      const added = await t.call('POST', '/app/sysUser/add', { token: admin, body: { loginName: 'searchedit', password: 'Search-Passw0rd-9', nickName: 'plain' } });
      expect(added.status).toBe(200);
      const id = added.data.id as number;
      const edited = await t.call('POST', '/app/sysUser/edit', { token: admin, body: { id, version: added.data.version, nickName: 'zebra-UNIQUE one' } });
      expect(edited.status).toBe(200);
      expect((await page('/app/sysUser/page', { params: { nickName: 'Zebra-unique' } })).records.map((r) => r.id)).toEqual([id]);
      expect((await page('/app/sysUser/page', { params: { nickName: 'plain' } })).records.map((r) => r.id)).not.toContain(id);
      expect((await t.call('POST', '/app/sysUser/delete', { token: admin, body: { ids: [id] } })).status).toBe(200);
      expect((await page('/app/sysUser/page', { params: { nickName: 'Zebra-unique' } })).total).toBe(0);
    });
  });

  describe('files name and contentType', () => {
    const kinds = async (kind: string) => (await t.row<{ n: number }>(`SELECT count(DISTINCT content_type) AS n FROM files WHERE kind = ?`, kind))!.n;

    test('seed: tricky names and types, more than PROBE_ROWS "report" files, a few images', async () => {
      const ids = JSON.stringify(Array.from({ length: BULK }, (_, i) => i + 1));
      await t.exec(`INSERT INTO blobs (sha256, size, ref_count, created_at) SELECT printf('%064x', value), 1, 1, '2026-01-01T00:00:00.000Z' FROM json_each(?)`, ids);
      await t.exec(
        `INSERT INTO files (kind, name, extension, content_type, size, sha256, created_by, created_at)
         SELECT 'file', 'report-' || value || '.pdf', 'pdf',
                CASE value % 3 WHEN 0 THEN 'application/pdf' WHEN 1 THEN 'text/plain' ELSE 'application/x-100%_sure' END,
                value, printf('%064x', value), 1, strftime('%Y-%m-%dT%H:%M:%fZ', '2026-01-01', '+' || (value % 89) || ' hours')
         FROM json_each(?)`,
        ids,
      );
      for (const [i, name] of TRICKY.entries()) {
        await t.exec(
          `INSERT INTO files (kind, name, extension, content_type, size, sha256, created_by, created_at) VALUES (?, ?, '', ?, 1, printf('%064x', 1), 1, ?)`,
          i % 4 === 0 ? 'image' : 'file', name, i % 2 ? 'Text/Weird_Type' : 'application/ärger', `2026-03-0${1 + (i % 9)}T00:00:00.000Z`,
        );
      }
      expect(await kinds('file')).toBeLessThan(CONTENT_TYPE_WALK);
    });

    const checkAll = async () => {
      for (const kind of ['file', 'image'] as const) {
        const path = kind === 'file' ? '/app/sysFile/page' : '/app/sysImage/page';
        for (const [param, column] of [['name', 'name'], ['contentType', 'content_type']] as const) {
          for (const text of [...SEARCHES, 'report', 'report-1', 'application/pdf', 'pdf', 'PDF', 'x-100%_', 'text/']) {
            const got = await page(path, { params: { [param]: text }, pageSize: 100 });
            const want = await plainLike('files', 'kind = ?', column, text, 'created_at DESC, id DESC', 100, 0, kind);
            expect({ kind, param, text, ids: got.records.map((r) => r.id), total: got.total }).toEqual({ kind, param, text, ...want });
          }
        }
      }
      // Both filters at once, sorted by size, page 2.
      const got = await page('/app/sysFile/page', { params: { name: 'report', contentType: 'pdf' }, sortField: 'size', sortOrder: 'asc', pageNo: 2, pageSize: 50 });
      const ids = await t.rows<{ id: number }>(
        `SELECT id FROM files WHERE kind = 'file' AND name LIKE '%report%' AND content_type LIKE '%pdf%' ORDER BY size ASC, id ASC LIMIT 50 OFFSET 50`,
      );
      expect(got.records.map((r) => r.id)).toEqual(ids.map((r) => r.id));
    };

    test(`few distinct content types (walked value by value): every search equals plain LIKE`, checkAll, 60_000);

    test(`more than ${CONTENT_TYPE_WALK} distinct content types (the fallback): every search still equals plain LIKE`, async () => {
      await t.exec(
        `INSERT INTO files (kind, name, extension, content_type, size, sha256, created_by, created_at)
         SELECT 'file', 'many-types-' || value, '', 'application/x-type' || value, 1, printf('%064x', 1), 1, '2026-04-01T00:00:00.000Z' FROM json_each(?)`,
        JSON.stringify(Array.from({ length: CONTENT_TYPE_WALK + 20 }, (_, i) => i + 1)),
      );
      expect(await kinds('file')).toBeGreaterThan(CONTENT_TYPE_WALK);
      await checkAll();
      const got = await page('/app/sysFile/page', { params: { contentType: 'x-type11' }, pageSize: 100 });
      expect(got.total).toBe(11); // x-type11 and x-type110..x-type119
    }, 60_000);

    test('every filter at once, a caller of scope "self", offset 1000: one statement within D1\'s 100 bound values, same answer as plain LIKE', async () => {
      const reader = await userWithCodes(t, admin, ['sys:file:page']);
      await t.exec(`UPDATE roles SET data_scope = 'self' WHERE id = ?`, reader.roleId);
      await t.exec(`UPDATE files SET created_by = ? WHERE id % 2 = 0`, reader.userId);
      const params = { name: 'report', contentType: 'application/pdf', extension: 'pdf', createdFrom: '2025-01-01', createdTo: '2026-12-31T00:00:00.000Z' };
      const where = `kind = 'file' AND created_by = ? AND extension = 'pdf' AND created_at >= '2025-01-01T00:00:00.000Z' AND created_at <= '2026-12-31T00:00:00.000Z' AND content_type LIKE '%application/pdf%'`;
      for (const [pageNo, pageSize] of [[1, 10], [3, 100], [101, 10], [1001, 1]] as const) {
        const r = await t.call('POST', '/app/sysFile/page', { token: reader.token, body: { params, pageNo, pageSize } });
        expect(r.status).toBe(200);
        const want = await plainLike('files', where, 'name', 'report', 'created_at DESC, id DESC', pageSize, (pageNo - 1) * pageSize, reader.userId);
        expect({ pageNo, ids: r.data.records.map((x: { id: number }) => x.id), total: r.data.total }).toEqual({ pageNo, ...want });
      }
    });

    test('a content type whose last record is deleted is no longer found; a new one is found at once', async () => {
      const up = await upload(t, 'sysFile', admin, { filename: 'one.bin', type: 'application/x-only-once', data: 'once' });
      expect(up.status).toBe(200);
      expect((await page('/app/sysFile/page', { params: { contentType: 'only-once' } })).records.map((r) => r.id)).toEqual([up.data.id]);
      expect((await t.call('POST', '/app/sysFile/delete', { token: admin, body: { ids: [up.data.id] } })).status).toBe(200);
      expect((await page('/app/sysFile/page', { params: { contentType: 'only-once' } })).total).toBe(0);
    });
  });
}

// The handwritten peer of `npm run bench -- core`: what a guarded read costs with no framework.
// A Bun server that verifies the bearer JWT with jose on every request (no cache), reads the
// user with ONE prepared SELECT by id from the same SQLite file, and answers the envelope. It
// checks no session, permission or scope: it is the floor a framework is measured against.
import { Database } from 'bun:sqlite';
import { jwtVerify } from 'jose';
import { createKeys } from '../src/core/keys.ts';

const port = Number(process.env.PEER_PORT ?? 3902);
const db = new Database(process.env.DATABASE_PATH!, { readonly: true });
db.run('PRAGMA busy_timeout = 5000');
const byId = db.prepare(
  `SELECT id, login_name AS loginName, nick_name AS nickName, email, phone, avatar, status, org_id AS orgId, remark,
     last_login_at AS lastLoginAt, last_login_ip AS lastLoginIp, created_at AS createdAt, updated_at AS updatedAt, version
   FROM users WHERE id = ?`,
);
const key = await createKeys(new TextEncoder().encode(process.env.JWT_SECRET!)).jwt();
const issuer = process.env.JWT_ISSUER ?? 'edge-admin';
const json = (status: number, msg: string, data: unknown) =>
  new Response(JSON.stringify({ status, msg, data, traceId: crypto.randomUUID().replaceAll('-', '') }), {
    status,
    headers: { 'Content-Type': 'application/json' },
  });

Bun.serve({
  port,
  hostname: '127.0.0.1',
  async fetch(req) {
    const token = req.headers.get('authorization')?.slice(7);
    if (!token) return json(401, 'Not logged in', null);
    try {
      await jwtVerify(token, key, { algorithms: ['HS256'], issuer });
    } catch {
      return json(401, 'Invalid token', null);
    }
    const id = Number(new URL(req.url).searchParams.get('id'));
    const row = byId.get(id);
    return row ? json(200, 'SUCCESS', row) : json(404, 'User not found', null);
  },
});
console.log(JSON.stringify({ msg: 'peer listening', port }));

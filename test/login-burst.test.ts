import { describe, expect, test } from 'bun:test';
import type { PasswordHasher } from '../src/core/ports.ts';
import { D1_START_MS, RUNTIMES, fastHasher, makeTestApp } from './support/app.ts';
import { barrier, concurrency } from './support/overlap.ts';

// The throttle under parallel bursts, on every runtime (D1 included: there the in-flight slot
// reservation is one conditional INSERT sent as its own D1 statement, and several logins really are
// in flight at once inside workerd). The password hash is where logins overlap, so the hasher's
// verify passes through a barrier: a test FAILS if the promised number of hashes never were in
// flight together, instead of quietly running one after another.
const PASSWORD = 'Burst-Account-Pass-31';
const statusCounts = (rs: { status: number }[]) => rs.reduce<Record<number, number>>((m, r) => ({ ...m, [r.status]: (m[r.status] ?? 0) + 1 }), {});

for (const runtime of RUNTIMES) {
  describe(`throttle under parallel bursts (${runtime})`, () => {
    const real = fastHasher();
    let beforeVerify: ((phc: string) => Promise<void>) | null = null;
    const hasher: PasswordHasher = { ...real, verify: async (h, p) => (beforeVerify && (await beforeVerify(h)), real.verify(h, p)) };
    const app = makeTestApp({ runtime, hasher });

    async function setup(loginName: string) {
      const t = await app;
      const admin = await t.login();
      const add = await t.call('POST', '/app/sysUser/add', { token: admin, body: { loginName, password: PASSWORD } });
      expect(add.status).toBe(200);
      const { password_hash: hash } = (await t.row<{ password_hash: string }>('SELECT password_hash FROM users WHERE id = ?', add.data.id))!;
      const login = (password: string, ip: string) => t.call('POST', '/auth/login', { body: { loginName, password }, headers: { 'x-test-ip': ip } });
      const inFlightSlots = async () => (await t.row<{ n: number }>(`SELECT count(*) AS n FROM rate_limits WHERE key LIKE 'pending:%'`))!.n;
      return { hash, login, inFlightSlots };
    }

    test(
      'eight parallel logins with the right password from one address all pass (five hashes really overlap)',
      async () => {
        const { hash, login, inFlightSlots } = await setup('shared-a');
        const meet = barrier(5);
        const peak = concurrency();
        beforeVerify = (h) => (h === hash ? peak.around(() => meet.arrive()) : Promise.resolve());
        try {
          const results = await Promise.all(Array.from({ length: 8 }, () => login(PASSWORD, '10.22.0.1')));
          expect(meet.missed).toBe(false);
          expect(peak.peak).toBe(5);
          expect(results.map((r) => r.status)).toEqual(Array(8).fill(200));
          expect(await inFlightSlots()).toBe(0);
        } finally {
          beforeVerify = null;
        }
      },
      D1_START_MS,
    );

    test('after four real failures, parallel right passwords still all pass', async () => {
      const { login } = await setup('shared-b');
      for (let i = 0; i < 4; i++) expect((await login(`typo-${i}-password`, '10.23.0.1')).status).toBe(401);
      const results = await Promise.all(Array.from({ length: 6 }, () => login(PASSWORD, '10.23.0.1')));
      expect(results.map((r) => r.status)).toEqual(Array(6).fill(200));
    });

    test('a parallel burst of 20 wrong passwords: exactly 5 are answered, 15 get 429, and five hashes really overlap', async () => {
      const { hash, login, inFlightSlots } = await setup('burst-a');
      const meet = barrier(5);
      const peak = concurrency();
      beforeVerify = (h) => (h === hash ? peak.around(() => meet.arrive()) : Promise.resolve());
      try {
        const results = await Promise.all(Array.from({ length: 20 }, (_, i) => login(`burst-guess-${i}`, `10.24.${i}.1`)));
        expect(meet.missed).toBe(false);
        expect(peak.peak).toBe(5);
        expect(statusCounts(results)).toEqual({ 401: 5, 429: 15 });
      } finally {
        beforeVerify = null;
      }
      expect((await login(PASSWORD, '10.24.99.1')).status).toBe(429);
      expect(await inFlightSlots()).toBe(0);
    });

    test('after four failures a parallel burst gets exactly one answer, the right password included', async () => {
      const { hash, login } = await setup('burst-b');
      for (let i = 0; i < 4; i++) expect((await login(`before-${i}-guess`, '10.25.0.1')).status).toBe(401);
      const peak = concurrency();
      beforeVerify = (h) => (h === hash ? peak.around(() => new Promise((ok) => setTimeout(ok, 5))) : Promise.resolve());
      try {
        const results = await Promise.all(Array.from({ length: 10 }, (_, i) => login(`burst-${i}-guess`, `10.25.${i}.2`)));
        expect(peak.peak).toBe(1);
        expect(statusCounts(results)).toEqual({ 401: 1, 429: 9 });
      } finally {
        beforeVerify = null;
      }
      expect((await login(PASSWORD, '10.25.9.9')).status).toBe(429);
    });
  });
}

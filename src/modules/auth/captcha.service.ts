import { sql } from 'kysely';
import type { Ports } from '../../core/ports.ts';
import { constantTimeEqual, hmacHex } from '../../core/keys.ts';
import { tooMany } from '../../core/errors.ts';
import { isoNow } from '../../core/time.ts';
import { qb } from '../../db/compile.ts';
import { resultsOf } from '../../db/plan.ts';
import type { Runner } from '../../db/runner.ts';
import { randomCaptchaText, renderCaptcha, type Rng } from './captcha-render.ts';
import { captchaPng } from './captcha-raster.ts';
import { hitQuery } from './rate-limit.ts';
import { captchaOnSql } from '../config/index.ts';

/** Crypto-strength randomness in [0,1) for the captcha text and its drawing, drawn in blocks. */
export function cryptoRng(): Rng {
  const block = new Uint32Array(64);
  let i = block.length;
  return () => {
    if (i === block.length) {
      crypto.getRandomValues(block);
      i = 0;
    }
    return block[i++]! / 2 ** 32;
  };
}

/** HMAC of the upper-cased answer, bound to its key; exported for tests that plant a known code. */
export const answerHash = async (deps: Ports, key: string, answer: string) =>
  hmacHex(await deps.keys.captcha(), `${key}:${answer.trim().toUpperCase()}`);

function base64(data: string | Uint8Array): string {
  const bytes = typeof data === 'string' ? new TextEncoder().encode(data) : data;
  let bin = '';
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin);
}

/** Whether the captcha is on now (the parameter sys.account.captchaEnabled, else CAPTCHA_ENABLED), as a statement's one row (`on_`). */
export const captchaStateQuery = (deps: Ports) => sql<{ on_: number }>`SELECT ${captchaOnSql(deps.config.CAPTCHA_ENABLED)} AS on_`.compile(qb);

/** The answer of captchaStateQuery's result. */
export const captchaOn = (result: { rows: unknown[] } | undefined) => (result?.rows[0] as { on_?: number } | undefined)?.on_ === 1;

/**
 * A new captcha: its row (the answer as an HMAC) and its picture, an SVG data URL, or with
 * `format: 'png'` a PNG one (the same picture as pixels, for clients that show raster images only).
 */
export async function issueCaptcha(deps: Ports, run: Runner, ip: string, format: 'svg' | 'png' = 'svg') {
  const rule = { limit: deps.config.CAPTCHA_PER_MINUTE, windowMs: 60_000 };
  // One batch: whether the captcha is on now, and this request counted only if it is.
  const on = sql`${captchaOnSql(deps.config.CAPTCHA_ENABLED)} = 1`;
  const [state, hit] = await run.record([captchaStateQuery(deps), hitQuery(deps.clock, `captcha:${ip}`, rule, { onlyWhen: on }).compile()]);
  if (!captchaOn(state)) return { codeKey: null, image: null, expiresIn: 0, enabled: false };
  const counted = hit?.rows[0] as { count: number; window_start: string };
  if (counted.count > rule.limit) {
    throw tooMany((Date.parse(counted.window_start) + rule.windowMs - deps.clock.now()) / 1000, 'Too many verification code requests, try again later');
  }
  const rng = cryptoRng();
  const text = randomCaptchaText(rng);
  const codeKey = deps.ids.uuid();
  const ttl = deps.config.CAPTCHA_TTL_SECONDS;
  const row = {
    key: codeKey,
    answer_hash: await answerHash(deps, codeKey, text),
    ip,
    expires_at: isoNow(deps.clock, ttl * 1000),
    created_at: isoNow(deps.clock),
  };
  await run.write(resultsOf([qb.insertInto('captchas').values(row).compile()]));
  const picture = renderCaptcha(text, rng);
  const image = format === 'png' ? `data:image/png;base64,${base64(captchaPng(picture.scene))}` : `data:image/svg+xml;base64,${base64(picture.svg)}`;
  return { codeKey, image, expiresIn: ttl, enabled: true };
}

/**
 * A captcha is consumed in one DELETE … RETURNING (consumeCaptchaQuery, in the login's first
 * batch), so of two parallel logins with one codeKey only one ever sees the row. Any attempt uses
 * it up, right or wrong.
 */
/** The statement that uses up captcha `codeKey` (it answers the row it removed), so it can join a batch. */
export function consumeCaptchaQuery(codeKey: string) {
  return qb.deleteFrom('captchas').where('key', '=', codeKey).returning(['answer_hash', 'expires_at']).compile();
}

/** Whether the row consumeCaptchaQuery removed was live and `answer` is its answer. */
export async function captchaMatches(deps: Ports, removed: unknown, codeKey: string, answer: string): Promise<boolean> {
  const row = removed as { answer_hash: string; expires_at: string } | undefined;
  if (!row || row.expires_at <= isoNow(deps.clock)) return false;
  return constantTimeEqual(row.answer_hash, await answerHash(deps, codeKey, answer));
}

import { Hono, type Context } from 'hono';
import { z } from 'zod';
import { AppError, badRequest, forbidden } from '../../core/errors.ts';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import { authenticate, verifyToken } from '../../http/auth.ts';
import { describeZodError } from '../../http/errors.ts';
import { ok } from '../../http/respond.ts';
import { login, loginClient, logout, logoutSession, recordRefusedLogin } from '../../modules/auth/index.ts';
import { loginUserInformation } from '../../modules/login-user/index.ts';
import { read } from './guard.ts';
import { homePathOf, toVbenRoutes } from './menu-routes.ts';
import { SECOND_FACTOR_ELSEWHERE } from '../messages.ts';

/**
 * vben's login form sends `{username, password}` plus what its own UI holds (`selectAccount`,
 * `captcha: true` from its client-side slider, which proves nothing to a server). Those are
 * ignored; our captcha, when on, is passed as `codeKey`/`securityCode` by a form that shows it.
 */
const VbenLogin = z.looseObject({
  username: z.string().trim().min(1, 'is required').max(64, 'must be at most 64 characters'),
  password: z.string().min(1, 'is required').max(128, 'must be at most 128 characters'),
  codeKey: z.string().nullish(),
  securityCode: z.string().nullish(),
});


/** POST auth/login → `{accessToken}` through our login (throttle, captcha, login log, session). */
async function vbenLogin(c: Context) {
  const deps = c.get('deps');
  const run = c.get('run');
  const raw: unknown = await c.req.json().catch(() => undefined);
  const parsed = VbenLogin.safeParse(raw);
  if (!parsed.success) {
    // A refused body is an attempt too (as on /auth/login): its login-log row, then the 400.
    const err = badRequest(describeZodError(parsed.error));
    const named = raw && typeof raw === 'object' ? (raw as { username?: unknown }).username : undefined;
    await recordRefusedLogin(c, typeof named === 'string' ? named.trim() : '', err.message);
    throw err;
  }
  const { username, password, codeKey, securityCode } = parsed.data;
  try {
    const result = await login(deps, run, { loginName: username, password, codeKey, securityCode }, loginClient(c));
    // vben's login form has no second step: an account with a second factor is refused in words
    // (its short-lived challenge simply expires), never answered with a null token.
    if (!result.token) throw forbidden(SECOND_FACTOR_ELSEWHERE);
    const { sessionId } = await verifyToken(c, result.token);
    setCookie(c, LOGOUT_COOKIE, sessionId, logoutCookieOptions(c, deps.config.TOKEN_TTL_SECONDS));
    return ok(c, { accessToken: result.token, expiresAt: result.expiresAt });
  } catch (err) {
    // A wrong name or password is 401 in our API; in vben any 401 means "session expired" (clear
    // the token, log out, redirect) and the login form would reset on top of it. 403 is what
    // vben's own backend answers here: the form just shows the message.
    if (err instanceof AppError && err.status === 401) throw forbidden(err.message);
    throw err;
  }
}

/**
 * vben's logout goes through its bare client, without the Authorization header (its own backend
 * finds the session by a cookie). So the login sets one cookie, which holds the session id and
 * nothing that authenticates: HttpOnly, SameSite=Lax (a page of another site cannot make the
 * browser send it), its Path the logout alone (no other request carries it), and living as long as
 * the session. No route reads it but logout. docs/vben.md, "Logout".
 */
const LOGOUT_COOKIE = 'vben_logout';
const SESSION_ID = /^[0-9a-f-]{32,40}$/i;
const logoutPath = (c: Context) => c.req.path.replace(/\/auth\/log(in|out)$/, '/auth/logout');
const logoutCookieOptions = (c: Context, maxAge?: number) => ({
  path: logoutPath(c),
  httpOnly: true,
  sameSite: 'Lax' as const,
  secure: new URL(c.req.url).protocol === 'https:',
  ...(maxAge === undefined ? {} : { maxAge }),
});

/**
 * POST auth/logout: with a valid token it revokes that session; without one, the session its
 * logout cookie names (see LOGOUT_COOKIE); the cookie is cleared. Always 200, never 401 (vben
 * ignores the answer, and a 401 here is how the old recipe looped).
 */
async function vbenLogout(c: Context) {
  const cookie = getCookie(c, LOGOUT_COOKIE);
  if (c.req.header('authorization')) {
    try {
      await authenticate(null, false)(c, async () => {
        await logout(c.get('deps'), c.get('run'));
      });
    } catch {
      // A token that is already revoked, expired or malformed: the session is over either way.
    }
  } else if (cookie && SESSION_ID.test(cookie)) {
    await logoutSession(c.get('deps'), c.get('run'), cookie);
  }
  if (cookie !== undefined) deleteCookie(c, LOGOUT_COOKIE, logoutCookieOptions(c));
  return ok(c, '');
}

export function coreRoutes() {
  return new Hono()
    .post('/auth/login', vbenLogin)
    .post('/auth/logout', vbenLogout)
    .post('/auth/refresh', () => {
      // We issue no refresh token (a session lives TOKEN_TTL_SECONDS, 30 days by default, and is
      // revocable at once): the honest answer is a refusal, which vben (enableRefreshToken on)
      // treats like an expired session: back to the login page, once.
      throw forbidden('This service issues no refresh token: log in again');
    })
    // The playground's header asks for a stored time zone on every page. We keep none per user:
    // null (vben then uses the browser's), no options to offer, and setting one is refused.
    .get('/timezone/getTimezone', ...read(null), (c) => ok(c, null))
    .get('/timezone/getTimezoneOptions', (c) => ok(c, []))
    .post('/timezone/setTimezone', () => {
      throw badRequest('timezone: this service keeps no time zone per user');
    })
    .get('/auth/codes', ...read(null), async (c) => {
      const info = await loginUserInformation(c.get('deps'), c.get('run'));
      return ok(c, info.permissions);
    })
    .get('/user/info', ...read(null), async (c) => {
      const { user, roles, menus } = await loginUserInformation(c.get('deps'), c.get('run'));
      const homePath = homePathOf(toVbenRoutes(menus));
      return ok(c, {
        userId: String(user.id),
        username: user.loginName,
        realName: user.nickName || user.loginName,
        avatar: user.avatar ?? '',
        roles,
        desc: user.remark ?? '',
        ...(homePath ? { homePath } : {}),
      });
    })
    .get('/menu/all', ...read(null), async (c) => {
      const info = await loginUserInformation(c.get('deps'), c.get('run'));
      return ok(c, toVbenRoutes(info.menus));
    });
}

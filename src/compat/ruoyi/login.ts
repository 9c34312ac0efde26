import { Hono, type Context } from 'hono';
import { AppError, badRequest } from '../../core/errors.ts';
import { describeZodError } from '../../http/errors.ts';
import { issueCaptcha, login, loginClient, LoginRequest, logout, recordRefusedLogin } from '../../modules/auth/index.ts';
import { loginUserInformation } from '../../modules/login-user/index.ts';
import { ruoyiCodes } from './codes.ts';
import { read } from './guard.ts';
import { ajax, ajaxData } from './respond.ts';
import { ruoyiRoutes } from './routers.ts';
import { ruoyiRoleKey, ruoyiUser } from './users-map.ts';
import { text } from './values.ts';
import { authenticate } from '../../http/auth.ts';
import { SECOND_FACTOR_ELSEWHERE } from '../messages.ts';

/** Paths whose failures are never code 401 (see respond.ts). */
export const LOGIN_LIKE = new Set(['/login', '/captchaImage', '/register', '/unlockscreen']);

export { SECOND_FACTOR_ELSEWHERE };

/** login, captcha, logout, getInfo, getRouters, register, unlockscreen (RuoYi's api/login.js and api/menu.js). */
export const loginRoutes = new Hono()
  .get('/captchaImage', async (c) => {
    // Ours, as a PNG: RuoYi shows `data:image/gif;base64,` + img, under which only a raster
    // image decodes. Same switch (sys.account.captchaEnabled, else CAPTCHA_ENABLED), same
    // issuance limit, same row, same check at login (code + uuid).
    const captcha = await issueCaptcha(c.get('deps'), c.get('run'), c.get('client').ip, 'png');
    if (!captcha.enabled) return ajax(c, { captchaEnabled: false });
    return ajax(c, { captchaEnabled: true, uuid: captcha.codeKey, img: captcha.image!.slice(captcha.image!.indexOf(',') + 1) });
  })
  .post('/login', async (c) => {
    const body = (await c.req.json().catch(() => ({}))) as Record<string, unknown>;
    const input = { loginName: body.username, password: body.password, codeKey: text(body.uuid) ?? null, securityCode: text(body.code) ?? null };
    const parsed = LoginRequest.safeParse(input);
    if (!parsed.success) {
      // A refused body is an attempt too (as on POST /auth/login): its login-log row, then the 400.
      const err = badRequest(describeZodError(parsed.error).replace(/^loginName/, 'username'));
      await recordRefusedLogin(c, typeof body.username === 'string' ? body.username.trim().slice(0, 64) : '', err.message);
      throw err;
    }
    const result = await login(c.get('deps'), c.get('run'), parsed.data, loginClient(c));
    // RuoYi-Vue3's login page has no second step: an account with a second factor is refused in
    // words (its short-lived challenge simply expires), never answered with a null token.
    if (!result.token) throw new AppError('FORBIDDEN', SECOND_FACTOR_ELSEWHERE);
    return ajax(c, { token: result.token });
  })
  .post('/logout', async (c) => {
    // Always 200: RuoYi calls it with an expired or revoked token too, and would otherwise loop
    // on its "session expired" box and never drop the token. A live session is revoked as ours is.
    try {
      await authenticate(null)(c, async () => {
        await logout(c.get('deps'), c.get('run'));
      });
    } catch {
      // the token was dead already: nothing to end
    }
    return ajax(c, {}, '退出成功');
  })
  .get('/getInfo', ...read(null), async (c) => {
    const info = await loginUserInformation(c.get('deps'), c.get('run'));
    const isSuper = c.get('run').knownSuper;
    return ajax(c, {
      user: { ...ruoyiUser(info.user), admin: isSuper, roles: [] },
      roles: info.roles.length ? info.roles.map(ruoyiRoleKey) : ['ROLE_DEFAULT'],
      permissions: ruoyiCodes(info.permissions),
      // Our password rules are the server's (PASSWORD_MIN_LENGTH and the policy); RuoYi's '0' = no
      // character-class rule in the client. No "initial password" or expiry tracking here.
      pwdChrtype: '0',
      isDefaultModifyPwd: false,
      isPasswordExpired: false,
    });
  })
  .get('/getRouters', ...read(null), async (c) => {
    const info = await loginUserInformation(c.get('deps'), c.get('run'));
    return ajaxData(c, ruoyiRoutes(info.menus));
  })
  .post('/register', () => {
    throw badRequest('Registration is off: accounts are created by an administrator');
  })
  .post('/unlockscreen', ...read(null), () => {
    throw new AppError('NOT_IMPLEMENTED', 'Unlocking the lock screen is not supported by this server: log out and log in again');
  });

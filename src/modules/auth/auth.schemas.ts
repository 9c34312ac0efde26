import { z } from '@hono/zod-openapi';
import { AuthenticationResponse, RecoveryCode, TotpCode } from '../mfa/index.ts';

export const CaptchaSchema = z
  .object({
    codeKey: z.string().uuid().nullable(),
    image: z.string().nullable().openapi({ description: 'data:image/svg+xml;base64,… (null when disabled)' }),
    expiresIn: z.number().int().openapi({ description: 'Seconds until the code expires' }),
    enabled: z.boolean(),
  })
  .openapi('Captcha');

export const LoginRequest = z
  .strictObject({
    loginName: z.string().trim().min(1, 'is required').max(64, 'must be at most 64 characters'),
    password: z.string().min(1, 'is required').max(128, 'must be at most 128 characters'),
    // Checked by the login only while the captcha is on; with it off they are ignored, whatever
    // they hold (login forms send "" or null).
    codeKey: z.string().nullish().openapi({ description: 'The codeKey of GET /auth/captcha (a UUID); ignored when the captcha is off' }),
    securityCode: z.string().nullish().openapi({ description: 'The characters in the captcha image; ignored when the captcha is off' }),
  })
  .openapi('LoginRequest');

export const LoginResult = z
  .object({
    token: z.string(),
    tokenType: z.literal('Bearer'),
    expiresIn: z.number().int(),
    expiresAt: z.string(),
  })
  .openapi('LoginResult');

/** The password was right and the user has a second factor: no session yet, a challenge for /auth/login/verify. */
export const LoginChallenge = z
  .object({
    mfa: z.literal(true),
    challenge: z.string().openapi({ description: 'Single use, valid 5 minutes: send it to /auth/login/verify with a factor' }),
    methods: z.array(z.enum(['totp', 'passkey', 'recovery'])).openapi({ description: 'The factors this account may verify with' }),
    token: z.null(),
  })
  .openapi('LoginChallenge');

/** /auth/login: a token, or (for an account with a second factor) a challenge. */
export const LoginAnswer = z.union([LoginResult, LoginChallenge]).openapi('LoginAnswer');

export const VerifyRequest = z
  .strictObject({
    challenge: z.string().trim().min(1, 'is required').max(512, 'must be at most 512 characters'),
    code: TotpCode.optional().openapi({ description: 'A current code of the authenticator app' }),
    recoveryCode: RecoveryCode.optional().openapi({ description: 'One of the recovery codes (single use)' }),
    passkey: AuthenticationResponse.optional().openapi({ description: 'The answer of navigator.credentials.get() to /auth/login/passkeyOptions' }),
  })
  .superRefine((v, ctx) => {
    const given = [v.code, v.recoveryCode, v.passkey].filter((x) => x !== undefined).length;
    if (given !== 1) ctx.addIssue({ code: 'custom', path: ['code'], message: 'send exactly one of code, recoveryCode or passkey' });
  })
  .openapi('LoginVerifyRequest', { example: { challenge: 'q83vEjRWeJAq83vEjRWeJAq83vEjRWeJAq.YWxpY2U', code: '123456' } });

export const VerifyResult = LoginResult.extend({
  factor: z.enum(['totp', 'passkey', 'recovery']),
  recoveryCodesLeft: z.number().int().nullable().openapi({ description: 'After a recovery code: how many unused ones remain (else null)' }),
}).openapi('LoginVerifyResult');

export const PasskeyOptionsRequest = z.strictObject({ challenge: z.string().trim().min(1, 'is required').max(512, 'must be at most 512 characters') }).openapi('LoginPasskeyOptionsRequest', { example: { challenge: 'q83vEjRWeJAq83vEjRWeJAq83vEjRWeJAq.YWxpY2U' } });

export type LoginInput = z.infer<typeof LoginRequest>;
export type VerifyInput = z.infer<typeof VerifyRequest>;

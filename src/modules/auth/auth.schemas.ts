import { z } from '@hono/zod-openapi';

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

export type LoginInput = z.infer<typeof LoginRequest>;

import { z } from '@hono/zod-openapi';
import { idSchema } from '../../core/pagination.ts';

/** A 6-digit code from an authenticator app (spaces allowed, "123 456"). */
export const TotpCode = z
  .string()
  .trim()
  .regex(/^\d{3}\s?\d{3}$/, 'must be the 6 digits the authenticator app shows')
  .openapi({ example: '123456' });

/** A recovery code as shown (`7kq2-mx9f-3hdw`); case, spaces and dashes do not matter. */
export const RecoveryCode = z.string().trim().min(12, 'must be a recovery code').max(32, 'must be a recovery code');

const b64url = z.string().max(65_536).regex(/^[A-Za-z0-9_-]*$/, 'must be base64url').openapi({ example: 'q83vEjRWeJA' });

/**
 * What the browser's PublicKeyCredential.toJSON() gives (WebAuthn Level 3). Loose objects: browsers
 * add fields over time (e.g. `response.publicKey`), and the library reads what it needs.
 */
export const RegistrationResponse = z
  .looseObject({
    id: b64url,
    rawId: b64url,
    type: z.literal('public-key'),
    response: z.looseObject({ clientDataJSON: b64url, attestationObject: b64url, transports: z.array(z.string().max(32)).max(16).optional() }),
    clientExtensionResults: z.record(z.string(), z.unknown()),
    authenticatorAttachment: z.string().max(32).optional(),
  })
  .openapi('PasskeyRegistrationResponse', { description: 'The JSON of navigator.credentials.create() (PublicKeyCredential.toJSON())' });

export const AuthenticationResponse = z
  .looseObject({
    id: b64url,
    rawId: b64url,
    type: z.literal('public-key'),
    response: z.looseObject({ clientDataJSON: b64url, authenticatorData: b64url, signature: b64url, userHandle: b64url.optional() }),
    clientExtensionResults: z.record(z.string(), z.unknown()),
    authenticatorAttachment: z.string().max(32).optional(),
  })
  .openapi('PasskeyAssertion', { description: 'The JSON of navigator.credentials.get() (PublicKeyCredential.toJSON())' });

export const TotpStart = z
  .object({
    secret: z.string().openapi({ description: 'Base32 secret, for typing into an app by hand' }),
    otpauthUri: z.string().openapi({ description: 'otpauth://totp/… (Key Uri Format)' }),
    qrSvg: z.string().openapi({ description: 'The URI as a QR code: data:image/svg+xml;base64,…' }),
  })
  .openapi('TotpStart');

export const RecoveryCodes = z
  .object({ recoveryCodes: z.array(z.string()).openapi({ description: '10 single-use codes, shown this once' }) })
  .openapi('RecoveryCodes');

export const CodeRequest = z.strictObject({ code: TotpCode }).openapi('TotpCodeRequest');
export const DisableTotpRequest = z
  .strictObject({ password: z.string().min(1, 'is required').max(128, 'must be at most 128 characters'), code: TotpCode })
  .openapi('DisableTotpRequest');

export const PasskeySchema = z
  .object({ id: z.number().int(), name: z.string(), createdAt: z.string(), lastUsedAt: z.string().nullable() })
  .openapi('Passkey');

export const MfaStatus = z
  .object({
    totp: z.boolean().openapi({ description: 'TOTP is active (confirmed)' }),
    passkeys: z.array(PasskeySchema),
    recoveryCodesLeft: z.number().int(),
    required: z.boolean().openapi({ description: 'One of the caller\'s enabled roles requires a second factor' }),
  })
  .openapi('MfaStatus');

export const RegisterPasskeyRequest = z
  .strictObject({ response: RegistrationResponse, name: z.string().trim().max(64, 'must be at most 64 characters').optional() })
  .openapi('RegisterPasskeyRequest');

export const RegisterPasskeyResult = z
  .object({
    passkey: PasskeySchema,
    recoveryCodes: z.array(z.string()).nullable().openapi({ description: 'New recovery codes when this is the account\'s first factor (shown once), else null' }),
  })
  .openapi('RegisterPasskeyResult');

export const DeletePasskeyRequest = z.strictObject({ id: idSchema }).openapi('DeletePasskeyRequest');

/** WebAuthn options as the browser's PublicKeyCredential.parseCreationOptionsFromJSON() takes them. */
export const PasskeyCreationOptions = z.looseObject({ challenge: z.string(), rp: z.looseObject({ id: z.string().optional(), name: z.string() }) }).openapi('PasskeyCreationOptions');
export const PasskeyRequestOptions = z.looseObject({ challenge: z.string(), rpId: z.string().optional() }).openapi('PasskeyRequestOptions');

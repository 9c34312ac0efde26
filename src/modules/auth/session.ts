import { SignJWT } from 'jose';
import type { Ports } from '../../core/ports.ts';

/** Signs the token of a session row; the row, not the token, decides whether it is still valid. */
export async function signSessionToken(deps: Ports, userId: number, sessionId: string) {
  const iat = Math.floor(deps.clock.now() / 1000);
  const exp = iat + deps.config.TOKEN_TTL_SECONDS;
  const token = await new SignJWT({})
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(String(userId))
    .setJti(sessionId)
    .setIssuer(deps.config.JWT_ISSUER)
    .setIssuedAt(iat)
    .setExpirationTime(exp)
    .sign(await deps.keys.jwt());
  return { token, iat, exp };
}

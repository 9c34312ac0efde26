import { badRequest } from './errors.ts';
import { COMMON_PASSWORDS } from './common-passwords.ts';

export const PASSWORD_MAX_LENGTH = 128;

/** A letter, digit, punctuation mark or symbol: something that shows when typed. */
const VISIBLE = /[\p{L}\p{N}\p{P}\p{S}]/u;

/** Throws a 400 naming the broken rule: length, equal to the login name, or a common password. */
export function assertPasswordAllowed(password: string, loginName: string, minLength: number, field = 'password') {
  const length = [...password].length;
  if (length < minLength) throw badRequest(`${field}: must be at least ${minLength} characters`);
  if (length > PASSWORD_MAX_LENGTH) throw badRequest(`${field}: must be at most ${PASSWORD_MAX_LENGTH} characters`);
  // Spaces, tabs and zero-width characters alone look like an empty field to the person typing.
  if (!VISIBLE.test(password)) throw badRequest(`${field}: must contain a visible character other than a space`);
  if (password.toLowerCase() === loginName.toLowerCase()) throw badRequest(`${field}: must not equal the login name`);
  if (COMMON_PASSWORDS.has(password.toLowerCase())) throw badRequest(`${field}: is too common, choose another`);
}

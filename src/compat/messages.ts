/**
 * Words shared by the compat dialects (src/compat/*): what a login page without a second step
 * answers for an account that needs one (docs/second-factor.md).
 */
export const SECOND_FACTOR_ELSEWHERE =
  'This account logs in with a second factor, which this login page cannot ask for: use a front end that supports it (see docs/second-factor.md)';

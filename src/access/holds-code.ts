/**
 * THE rule "user holds code" as SQL: the code's menu is enabled and granted to an enabled role of
 * the user. Binds the code (first `?`, unless `codeRef` gives it as SQL text), then whatever `userRef` binds. Shared by the per-request
 * auth statement (http/auth.ts) and callerHolds (modules/access), so the two can never disagree.
 * Parameters are written `+?` (see the auth statement for why).
 */
export function holdsCodeSql(userRef: string, codeRef = '+?'): string {
  return `EXISTS (SELECT 1 FROM menus m WHERE m.permission = ${codeRef} AND m.status = 'enabled'
          AND EXISTS (SELECT 1 FROM role_menu rm JOIN user_role ur ON ur.role_id = rm.role_id AND ur.user_id = ${userRef}
                      JOIN roles r ON r.id = rm.role_id AND r.status = 'enabled'
                      WHERE rm.menu_id = m.id))`;
}

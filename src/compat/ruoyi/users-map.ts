import type { User } from '../../modules/users/index.ts';
import { ruoyiTime, toRuoyiStatus } from './values.ts';

/** The super admin role's code, RuoYi's `admin` role key (v-hasRole="admin"). */
export const SUPER_ROLE_CODE = 'superAdmin';
export const ruoyiRoleKey = (code: string) => (code === SUPER_ROLE_CODE ? 'admin' : code);

/**
 * Our avatar → RuoYi's: the client loads a non-http(s) avatar as VITE_APP_BASE_API + avatar, a
 * path under the dialect, without a token; ours are paths on the native API (signed or guarded),
 * so only http(s) URLs are passed on and the rest shows RuoYi's default picture.
 */
export const ruoyiAvatar = (avatar: string | null) => (avatar && /^https?:\/\//i.test(avatar) ? avatar : '');

/** Our user → RuoYi's SysUser (`version` rides along so an edit can send it back). */
export function ruoyiUser(u: User) {
  return {
    userId: u.id,
    deptId: u.orgId,
    userName: u.loginName,
    nickName: u.nickName,
    email: u.email ?? '',
    phonenumber: u.phone ?? '',
    avatar: ruoyiAvatar(u.avatar),
    status: toRuoyiStatus(u.status),
    delFlag: '0',
    loginIp: u.lastLoginIp ?? '',
    loginDate: ruoyiTime(u.lastLoginAt),
    remark: u.remark ?? '',
    createTime: ruoyiTime(u.createdAt),
    updateTime: ruoyiTime(u.updatedAt),
    dept: u.orgId === null ? null : { deptId: u.orgId, deptName: u.orgName ?? '' },
    admin: u.id === 1,
    version: u.version,
  };
}

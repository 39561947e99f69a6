/**
 * The admin plugin's access control (SPEC section 6): the `admin` role holds every user and session
 * permission, the `user` role none; a user may hold comma-separated roles and any granting role
 * allows; users listed in ADMIN_USER_IDS are always allowed; no requested permission means denied.
 */
import type { Config } from '../../config.ts';

export const ADMIN_STATEMENTS = {
  user: ['create', 'list', 'set-role', 'ban', 'impersonate', 'delete', 'set-password'],
  session: ['list', 'revoke', 'delete'],
} as const;

const ROLE_GRANTS: Record<string, Record<string, readonly string[]>> = {
  admin: ADMIN_STATEMENTS,
  user: { user: [], session: [] },
};

export type Permissions = Record<string, readonly string[]>;

export function adminHasPermission(
  cfg: Pick<Config, 'ADMIN_USER_IDS'>,
  user: { id: string; role?: string | null },
  permissions: Permissions,
): boolean {
  if (user.id && cfg.ADMIN_USER_IDS.includes(user.id)) return true;
  const requested = Object.entries(permissions);
  if (!requested.length) return false;
  const roles = (user.role || 'user').split(',').map((r) => r.trim());
  return roles.some((role) => {
    const grants = ROLE_GRANTS[role];
    if (!grants) return false;
    return requested.every(([resource, actions]) => {
      const allowed = grants[resource];
      return !!allowed && actions.every((a) => allowed.includes(a));
    });
  });
}

/** Whether the user may use the admin section at all (list users). */
export function isAdmin(cfg: Pick<Config, 'ADMIN_USER_IDS'>, user: { id: string; role?: string | null }): boolean {
  return adminHasPermission(cfg, user, { user: ['list'] });
}

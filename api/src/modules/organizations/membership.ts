/**
 * Membership rules shared by the Better Auth organization plugin routes (/api/auth/organization/*) and
 * the seller API (/v1): roles and their permissions (SPEC section 6), lookups, and the camelCase read
 * models the plugin answers with.
 */
import type { EntityManager } from '../../kit/db.ts';
import type { User } from '../../auth/entities.ts';
import { Invitation, Member, Organization, Team } from './entities.ts';

export const ROLES = ['owner', 'admin', 'member'] as const;
export type Role = (typeof ROLES)[number];
export const CREATOR_ROLE: Role = 'owner';
/** Members per organization (also caps member lists). */
export const MEMBERSHIP_LIMIT = 100;
/** Pending invitations per organization. */
export const INVITATION_LIMIT = 100;
export const INVITATION_TTL_SECONDS = 48 * 3600;

type Statements = Partial<Record<'organization' | 'member' | 'invitation' | 'team', readonly string[]>>;

export const ROLE_PERMISSIONS: Record<Role, Statements> = {
  owner: {
    organization: ['update', 'delete'],
    member: ['create', 'update', 'delete'],
    invitation: ['create', 'cancel'],
    team: ['create', 'update', 'delete'],
  },
  admin: {
    organization: ['update'],
    member: ['create', 'update', 'delete'],
    invitation: ['create', 'cancel'],
    team: ['create', 'update', 'delete'],
  },
  member: { organization: [], member: [], invitation: [], team: [] },
};

export function parseRoles(role: string | string[]): string {
  return (Array.isArray(role) ? role : role.split(','))
    .map((r) => r.trim())
    .filter(Boolean)
    .join(',');
}

export function rolesOf(role: string): string[] {
  return role.split(',').map((r) => r.trim()).filter(Boolean);
}

export function isKnownRole(role: string): boolean {
  const roles = rolesOf(role);
  return roles.length > 0 && roles.every((r) => (ROLES as readonly string[]).includes(r));
}

export function hasRole(role: string, wanted: Role): boolean {
  return rolesOf(role).includes(wanted);
}

/**
 * Whether any of the comma-separated roles grants every requested action (resources combined with
 * AND, or with OR when `connector` says so). No requested permission means denied.
 */
export function hasPermission(
  role: string,
  request: Record<string, readonly string[]>,
  connector: 'AND' | 'OR' = 'AND',
): boolean {
  const entries = Object.entries(request);
  if (!entries.length) return false;
  return rolesOf(role).some((r) => {
    const statements = ROLE_PERMISSIONS[r as Role] as Record<string, readonly string[] | undefined> | undefined;
    if (!statements) return false;
    const granted = (resource: string, actions: readonly string[]) =>
      actions.every((a) => (statements[resource] ?? []).includes(a));
    return connector === 'OR'
      ? entries.some(([res, actions]) => granted(res, actions))
      : entries.every(([res, actions]) => granted(res, actions));
  });
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const isUuid = (v: unknown): v is string => typeof v === 'string' && UUID.test(v);

export async function findMember(em: EntityManager, organizationId: string, userId: string): Promise<Member | null> {
  if (!isUuid(organizationId)) return null;
  return em.findOne(Member, { organization: organizationId, user: userId }, { populate: ['user', 'organization'] });
}

/** Whether an invitation still counts as pending (status pending and not expired). */
export function isPending(i: Invitation, now = Date.now()): boolean {
  return i.status === 'pending' && i.expiresAt.getTime() > now;
}

export async function pendingInvitations(em: EntityManager, organizationId: string, email?: string): Promise<Invitation[]> {
  return em.find(Invitation, {
    organization: organizationId,
    status: 'pending',
    expiresAt: { $gt: new Date() },
    ...(email ? { email } : {}),
  });
}

/** Organizations a user belongs to. */
export async function organizationsOf(em: EntityManager, userId: string): Promise<Organization[]> {
  const members = await em.find(Member, { user: userId }, { populate: ['organization'], orderBy: { createdAt: 'asc' } });
  return members.map((m) => m.organization);
}

// ---- Better Auth read models -------------------------------------------------------------------

const hasMetadata = (o: Organization) => !!o.metadata && Object.keys(o.metadata).length > 0;

/**
 * The plugin's organization. Better Auth stores metadata as JSON text: it answers the parsed object
 * from create and update, and the stored text from reads (list, full organization, set-active, delete).
 */
export function baOrganization(o: Organization, metadata: 'object' | 'text') {
  return {
    id: o.id,
    name: o.name,
    slug: o.slug,
    logo: o.avatarUrl ?? null,
    createdAt: o.createdAt.toISOString(),
    metadata: hasMetadata(o) ? (metadata === 'object' ? o.metadata : JSON.stringify(o.metadata)) : metadata === 'object' ? undefined : null,
  };
}

export function baUser(u: User) {
  return { id: u.id, name: u.name, email: u.email, image: u.image ?? null };
}

export function baMember(m: Member, withUser = false) {
  return {
    id: m.id,
    organizationId: m.organization.id,
    userId: m.user.id,
    role: m.role,
    createdAt: m.createdAt.toISOString(),
    teamId: m.team?.id ?? null,
    ...(withUser ? { user: baUser(m.user) } : {}),
  };
}

export function baInvitation(i: Invitation) {
  return {
    id: i.id,
    organizationId: i.organization.id,
    email: i.email,
    role: i.role,
    status: i.status,
    teamId: i.team?.id ?? null,
    inviterId: i.inviter.id,
    expiresAt: i.expiresAt.toISOString(),
    createdAt: i.createdAt.toISOString(),
  };
}

export function baTeam(t: Team) {
  return {
    id: t.id,
    name: t.name,
    organizationId: t.organization.id,
    createdAt: t.createdAt.toISOString(),
    updatedAt: (t.modifiedAt ?? t.createdAt).toISOString(),
  };
}

/** The organization with its members (and users), invitations and teams. */
export async function fullOrganization(em: EntityManager, o: Organization) {
  const members = await em.find(
    Member,
    { organization: o.id },
    { populate: ['user'], orderBy: { createdAt: 'asc' }, limit: MEMBERSHIP_LIMIT },
  );
  const invitations = await em.find(Invitation, { organization: o.id }, { orderBy: { createdAt: 'asc' } });
  const teams = await em.find(Team, { organization: o.id }, { orderBy: { createdAt: 'asc' } });
  return {
    ...baOrganization(o, 'text'),
    members: members.map((m) => baMember(m, true)),
    invitations: invitations.map(baInvitation),
    teams: teams.map(baTeam),
  };
}

/**
 * Auth service errors: Better Auth's `{code, message}` bodies. The code is derived from the message the
 * way Better Auth does it (upper case, spaces to underscores, anything else dropped), so clients that
 * switch on `error.code` see the same values.
 */
export function codeOf(message: string): string {
  return message.toUpperCase().replace(/ /g, '_').replace(/[^A-Z0-9_]/g, '');
}

export class AuthError extends Error {
  constructor(
    public readonly status: number,
    message: string,
    public readonly code = codeOf(message),
    public readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

const e = (status: number, message: string, code?: string) => () => new AuthError(status, message, code);

/** The messages of the core and username catalogues (SPEC section 8). */
export const AUTH_ERRORS = {
  UNAUTHORIZED: e(401, 'Not authenticated', 'UNAUTHORIZED'),
  VALIDATION_BODY: e(400, 'Invalid body parameters', 'VALIDATION_ERROR'),
  VALIDATION_QUERY: e(400, 'Invalid query parameters', 'VALIDATION_ERROR'),
  NOT_FOUND: e(404, 'Not found', 'NOT_FOUND'),
  TOO_MANY_REQUESTS: e(429, 'Too many requests. Please try again later.', 'TOO_MANY_REQUESTS'),
  USER_NOT_FOUND: e(400, 'User not found'),
  FAILED_TO_CREATE_SESSION: e(500, 'Failed to create session'),
  FAILED_TO_GET_SESSION: e(400, 'Failed to get session'),
  INVALID_PASSWORD: e(400, 'Invalid password'),
  INVALID_EMAIL: e(400, 'Invalid email'),
  INVALID_EMAIL_OR_PASSWORD: e(401, 'Invalid email or password'),
  INVALID_TOKEN: e(400, 'invalid token'),
  EMAIL_NOT_VERIFIED: e(403, 'Email not verified'),
  PASSWORD_TOO_SHORT: e(400, 'Password too short'),
  PASSWORD_TOO_LONG: e(400, 'Password too long'),
  USER_ALREADY_EXISTS: e(422, 'User already exists'),
  EMAIL_CAN_NOT_BE_UPDATED: e(400, 'Email can not be updated'),
  CREDENTIAL_ACCOUNT_NOT_FOUND: e(400, 'Credential account not found'),
  SESSION_EXPIRED: e(400, 'Session expired. Re-authenticate to perform this action.'),
  SESSION_NOT_FOUND: e(400, 'Session not found'),
  SESSION_NOT_FRESH: e(403, 'Session is not fresh'),
  EMAIL_IS_THE_SAME: e(400, 'Email is the same'),
  COULDNT_UPDATE_EMAIL: e(400, "Couldn't update your email"),
  USER_ALREADY_HAS_PASSWORD: e(400, 'user already has a password'),
  UNABLE_TO_CREATE_VERIFICATION: e(500, 'Unable to create verification'),
  // Admin plugin: a banned user signing in.
  BANNED_USER: e(403, 'You have been banned from this application. Please contact support if you believe this is an error.', 'BANNED_USER'),
  // Username plugin.
  INVALID_USERNAME_OR_PASSWORD: e(401, 'invalid username or password'),
  USERNAME_EMAIL_NOT_VERIFIED: e(403, 'email not verified'),
  USERNAME_TOO_SHORT: e(422, 'username is too short'),
  USERNAME_TOO_LONG: e(422, 'username is too long'),
  USERNAME_INVALID: e(422, 'username is invalid'),
  USERNAME_TAKEN: e(422, 'username is already taken. please try another.'),
};

/** The two-factor plugin's messages. */
export const TWO_FACTOR_ERRORS = {
  OTP_NOT_ENABLED: e(400, 'OTP not enabled'),
  OTP_HAS_EXPIRED: e(400, 'OTP has expired'),
  TOTP_NOT_ENABLED: e(400, 'TOTP not enabled'),
  TWO_FACTOR_NOT_ENABLED: e(400, "Two factor isn't enabled"),
  BACKUP_CODES_NOT_ENABLED: e(400, "Backup codes aren't enabled"),
  INVALID_BACKUP_CODE: e(401, 'Invalid backup code'),
  INVALID_CODE: e(401, 'Invalid code'),
  TOO_MANY_ATTEMPTS_REQUEST_NEW_CODE: e(400, 'Too many attempts. Please request a new code.'),
  INVALID_TWO_FACTOR_COOKIE: e(401, 'Invalid two factor cookie'),
};

/** `Invalid {field}` (403) for untrusted redirect targets and origins. */
export const invalidField = (field: string) => new AuthError(403, `Invalid ${field}`);

/** The organization plugin's messages. */
export const ORG_ERRORS = {
  ORGANIZATION_ALREADY_EXISTS: e(400, 'Organization already exists'),
  NOT_ALLOWED_TO_CREATE: e(403, 'You are not allowed to create a new organization'),
  ORGANIZATION_LIMIT_REACHED: e(403, 'You have reached the maximum number of organizations'),
  ORGANIZATION_NOT_FOUND: e(400, 'Organization not found'),
  USER_IS_NOT_A_MEMBER: e(400, 'User is not a member of the organization'),
  NOT_A_MEMBER_FORBIDDEN: e(403, 'User is not a member of the organization'),
  NOT_ALLOWED_TO_UPDATE_ORGANIZATION: e(403, 'You are not allowed to update this organization'),
  NOT_ALLOWED_TO_DELETE_ORGANIZATION: e(403, 'You are not allowed to delete this organization'),
  NO_ACTIVE_ORGANIZATION: e(400, 'No active organization'),
  USER_IS_ALREADY_A_MEMBER: e(400, 'User is already a member of this organization'),
  MEMBER_NOT_FOUND: e(400, 'Member not found'),
  ROLE_NOT_FOUND: e(400, 'Role not found'),
  TEAM_NOT_FOUND: e(400, 'Team not found'),
  CANNOT_LEAVE_AS_ONLY_OWNER: e(400, 'You cannot leave the organization as the only owner'),
  NOT_ALLOWED_TO_DELETE_MEMBER: e(403, 'You are not allowed to delete this member'),
  NOT_ALLOWED_TO_UPDATE_MEMBER: e(403, 'You are not allowed to update this member'),
  NOT_ALLOWED_TO_INVITE: e(403, 'You are not allowed to invite users to this organization'),
  NOT_ALLOWED_TO_INVITE_WITH_ROLE: e(403, 'you are not allowed to invite user with this role'),
  USER_IS_ALREADY_INVITED: e(400, 'User is already invited to this organization'),
  INVITATION_NOT_FOUND: e(400, 'Invitation not found'),
  NOT_THE_RECIPIENT: e(403, 'You are not the recipient of the invitation'),
  NOT_ALLOWED_TO_CANCEL_INVITATION: e(403, 'You are not allowed to cancel this invitation'),
  INVITER_NO_LONGER_MEMBER: e(400, 'Inviter is no longer a member of the organization'),
  INVITATION_LIMIT_REACHED: e(403, 'Invitation limit reached'),
  EMAIL_VERIFICATION_REQUIRED: e(403, 'Email verification required before accepting or rejecting invitation'),
  UNABLE_TO_REMOVE_LAST_TEAM: e(400, 'Unable to remove last team'),
  MEMBERSHIP_LIMIT_REACHED: e(403, 'Organization membership limit reached'),
  NOT_ALLOWED_TO_CREATE_TEAMS: e(403, 'You are not allowed to create teams in this organization'),
  NOT_ALLOWED_TO_DELETE_TEAMS: e(403, 'You are not allowed to delete teams in this organization'),
  NOT_ALLOWED_TO_UPDATE_TEAM: e(403, 'You are not allowed to update this team'),
  SLUG_IS_TAKEN: e(400, 'slug is taken'),
};

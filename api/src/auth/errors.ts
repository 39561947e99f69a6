/** Auth service errors: Better Auth's `{code, message}` bodies, the code being the upper-snake message. */
export class AuthError extends Error {
  constructor(
    public readonly status: number,
    message: string,
    public readonly code = message.toUpperCase().replace(/[^A-Z0-9]+/g, '_').replace(/^_|_$/g, ''),
  ) {
    super(message);
  }
}

export const AUTH_ERRORS = {
  INVALID_EMAIL_OR_PASSWORD: () => new AuthError(401, 'Invalid email or password'),
  USER_ALREADY_EXISTS: () => new AuthError(422, 'User already exists'),
  INVALID_EMAIL: () => new AuthError(400, 'Invalid email'),
  PASSWORD_TOO_SHORT: () => new AuthError(400, 'Password too short'),
  PASSWORD_TOO_LONG: () => new AuthError(400, 'Password too long'),
  FAILED_TO_CREATE_SESSION: () => new AuthError(500, 'Failed to create session'),
  UNAUTHORIZED: () => new AuthError(401, 'Not authenticated', 'UNAUTHORIZED'),
};

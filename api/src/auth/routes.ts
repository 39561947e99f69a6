/** The auth service router (see routes/index.ts) and its read models, under their historical path. */
export { authRouter } from './routes/index.ts';
export { serializeSession, serializeUser } from './serialize.ts';
export { PASSWORD_MAX, PASSWORD_MIN } from './routes/shared.ts';

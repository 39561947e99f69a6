/** Every entity the ORM knows (see modules/index.ts). */
export { allEntities as entities } from './modules/index.ts';

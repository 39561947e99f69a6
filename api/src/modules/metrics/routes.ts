/** /v1 routes of this module (filled in by its issue). */
import type { RouteSpec } from '../../kit/routes.ts';

export const routes: RouteSpec[] = [];

/**
 * The route factories declare the same endpoint as the `route({...})` they replace: identical
 * OpenAPI operations (method, path, parameters, body, status, response), so adopting them never
 * changes the published document or the SDK contract.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod/v4';
import { buildOpenApi } from '../../api/src/kit/openapi.ts';
import { route } from '../../api/src/kit/routes.ts';
import { createRoute, deleteRoute, getByIdRoute, idParams, sellerAuth, updateRoute } from '../../api/src/kit/route-helpers.ts';

const thing = z.object({ id: z.uuid(), name: z.string() });
const body = z.object({ name: z.string().min(1) });
const auth = sellerAuth('things:write');
const base = { summary: 'A thing', tags: ['things'], auth };
const doc = (routes: Parameters<typeof buildOpenApi>[0]) => buildOpenApi(routes, { title: 't', version: '1', serverUrl: 'http://x' });
const noop = async () => ({});

describe('route factories', () => {
  it('declare the same OpenAPI operations as the hand-written routes', () => {
    const byHand = [
      route({ method: 'get', path: '/v1/things/:id', ...base, params: idParams, response: thing, handler: noop }),
      route({ method: 'post', path: '/v1/things/', ...base, body, status: 201, response: thing, handler: noop }),
      route({ method: 'patch', path: '/v1/things/:id', ...base, params: idParams, body, response: thing, handler: noop }),
      route({ method: 'delete', path: '/v1/things/:id', ...base, params: idParams, status: 204, handler: noop }),
    ];
    const byFactory = [
      getByIdRoute({ path: '/v1/things/:id', ...base, response: thing, read: noop }),
      createRoute({ path: '/v1/things/', ...base, body, response: thing, create: noop }),
      updateRoute({ path: '/v1/things/:id', ...base, body, response: thing, update: noop }),
      deleteRoute({ path: '/v1/things/:id', ...base, remove: noop }),
    ];
    const expected = JSON.stringify(doc(byHand));
    expect(JSON.stringify(doc(byFactory))).toBe(expected);
    expect(Object.keys(doc(byFactory).paths)).toEqual(['/v1/things/{id}', '/v1/things/']);
  });
});

/**
 * What the seller console needs to link a record to its Temporal runs (issue #21): the Temporal Web
 * UI's address (TEMPORAL_UI_URL), the namespace, URL templates of a run's page and of a visibility
 * query, and the search attributes runs carry. Workflow ids and queries per record: docs/operations.md.
 * Signed-in console users only (the Temporal UI has its own access control; this only says where it is).
 */
import { z } from 'zod/v4';
import { SEARCH_ATTRIBUTE_NAMES } from '../../kit/run-metadata.ts';
import { route, type RouteSpec } from '../../kit/routes.ts';

export const temporalLinksSchema = z.object({
  ui_url: z.string(),
  namespace: z.string(),
  /** Replace `{workflow_id}` (URL-encoded), e.g. `subscription:<id>`. */
  workflow_url_template: z.string(),
  /** Replace `{query}` (URL-encoded), e.g. `CustomerId = "<id>"`. */
  query_url_template: z.string(),
  search_attributes: z.array(z.string()),
});

export const routes: RouteSpec[] = [
  route({
    method: 'get',
    path: '/v1/operations/temporal',
    summary: 'Where the Temporal Web UI is and how to link a workflow run or a visibility query (console)',
    tags: ['operations'],
    auth: { kinds: ['user'] },
    response: temporalLinksSchema,
    async handler({ deps }) {
      const ui = deps.cfg.TEMPORAL_UI_URL.replace(/\/+$/, '');
      const ns = encodeURIComponent(deps.cfg.TEMPORAL_NAMESPACE);
      return {
        ui_url: ui,
        namespace: deps.cfg.TEMPORAL_NAMESPACE,
        workflow_url_template: `${ui}/namespaces/${ns}/workflows/{workflow_id}`,
        query_url_template: `${ui}/namespaces/${ns}/workflows?query={query}`,
        search_attributes: SEARCH_ATTRIBUTE_NAMES,
      };
    },
  }),
];

/**
 * What the seller console needs to link a record to its Temporal runs (issue #21): the Temporal Web
 * UI's address (TEMPORAL_UI_URL), the namespace, URL templates of a run's page and of a visibility
 * query, and the search attributes runs carry. Workflow ids and queries per record: docs/operations.md.
 * Scoped to the caller's organization (`?organization_id=`, a user's own; an organization token's is
 * its own): the visibility-query template finds only that organization's runs (`OrganizationId = "…"
 * AND (…)`), another organization is a 404, no credentials a 401. The run template links one run whose
 * id the console took from a record the API already scoped.
 */
import { z } from 'zod/v4';
import type { EntityManager } from '../../kit/db.ts';
import { ResourceNotFound, fieldError } from '../../kit/errors.ts';
import type { Principal } from '../../kit/principals.ts';
import { sellerAuth } from '../../kit/route-helpers.ts';
import { SEARCH_ATTRIBUTE_NAMES } from '../../kit/run-metadata.ts';
import { route, type RouteSpec } from '../../kit/routes.ts';
import { visibleOrganizationIds } from '../organizations/scope.ts';

export const temporalLinksSchema = z.object({
  organization_id: z.string(),
  ui_url: z.string(),
  namespace: z.string(),
  /** Replace `{workflow_id}` (URL-encoded), e.g. `subscription:<id>`. */
  workflow_url_template: z.string(),
  /** Replace `{query}` (URL-encoded), e.g. `CustomerId = "<id>"`; the link finds the organization's runs only. */
  query_url_template: z.string(),
  search_attributes: z.array(z.string()),
});

/** The one organization the links are for: the named one if the caller sees it (else 404), else the caller's only one. */
async function linkOrganization(em: EntityManager, principal: Principal, requested: string | undefined): Promise<string> {
  const ids = await visibleOrganizationIds(em, principal);
  if (requested) {
    if (!ids.includes(requested)) throw ResourceNotFound('Organization not found');
    return requested;
  }
  if (ids.length === 1) return ids[0]!;
  if (!ids.length) throw ResourceNotFound('Organization not found');
  throw fieldError(['query', 'organization_id'], 'Field required: the caller belongs to several organizations.', 'missing');
}

export const routes: RouteSpec[] = [
  route({
    method: 'get',
    path: '/v1/operations/temporal',
    summary: "Where the Temporal Web UI is and how to link a workflow run or a visibility query of the caller's organization (console)",
    tags: ['operations'],
    auth: sellerAuth('organizations:read'),
    query: z.object({ organization_id: z.uuid().optional() }),
    response: temporalLinksSchema,
    errors: [404],
    async handler({ deps, em, principal, query }) {
      const organizationId = await linkOrganization(em, principal, query.organization_id);
      const ui = deps.cfg.TEMPORAL_UI_URL.replace(/\/+$/, '');
      const ns = encodeURIComponent(deps.cfg.TEMPORAL_NAMESPACE);
      const scoped = (before: string, after: string) => `${encodeURIComponent(before)}{query}${encodeURIComponent(after)}`;
      return {
        organization_id: organizationId,
        ui_url: ui,
        namespace: deps.cfg.TEMPORAL_NAMESPACE,
        workflow_url_template: `${ui}/namespaces/${ns}/workflows/{workflow_id}`,
        query_url_template: `${ui}/namespaces/${ns}/workflows?query=${scoped(`OrganizationId = "${organizationId}" AND (`, ')')}`,
        search_attributes: SEARCH_ATTRIBUTE_NAMES,
      };
    },
  }),
];

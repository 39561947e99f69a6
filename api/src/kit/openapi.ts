/** The OpenAPI 3.1 document, generated from the route declarations' zod schemas (never by hand). */
import { z } from 'zod/v4';
import type { RouteSpec } from './routes.ts';

const errorSchema = {
  type: 'object',
  properties: { error: { type: 'string' }, detail: { type: 'string' } },
  required: ['error', 'detail'],
};
const validationErrorSchema = {
  type: 'object',
  properties: {
    error: { const: 'RequestValidationError' },
    detail: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          type: { type: 'string' },
          loc: { type: 'array', items: { anyOf: [{ type: 'string' }, { type: 'integer' }] } },
          msg: { type: 'string' },
          input: {},
        },
        required: ['type', 'loc', 'msg'],
      },
    },
  },
  required: ['error', 'detail'],
};

function schemaOf(schema: z.ZodType, io: 'input' | 'output'): Record<string, unknown> {
  const json = z.toJSONSchema(schema, { io, unrepresentable: 'any', target: 'draft-2020-12' }) as Record<string, unknown>;
  delete json.$schema;
  return tuples(json, io) as Record<string, unknown>;
}

/**
 * Tuples (`tax_id: [id, format]`) with their length (zod leaves it out, so `[]` looked valid). In
 * responses, an array of exactly n items of any of the item types: some response validators
 * (Schemathesis 4) mistake `prefixItems` there for an invalid schema. Emails: only zod's pattern.
 */
function tuples(node: unknown, io: 'input' | 'output'): unknown {
  if (Array.isArray(node)) return node.map((n) => tuples(n, io));
  if (!node || typeof node !== 'object') return node;
  const out = Object.fromEntries(Object.entries(node).map(([k, v]) => [k, tuples(v, io)])) as Record<string, unknown>;
  // zod's email check is its pattern, which accepts some addresses other `email` format checkers refuse.
  if (out.format === 'email' && typeof out.pattern === 'string') delete out.format;
  // zod closes output objects (`additionalProperties: false`); the members of an intersection each
  // describe part of one object, so they stay open (closed, no value could match both).
  if (io === 'output' && Array.isArray(out.allOf)) out.allOf = (out.allOf as unknown[]).map(open);
  if (Array.isArray(out.prefixItems) && out.items === undefined) {
    const items = out.prefixItems as unknown[];
    out.minItems = items.length;
    out.maxItems = items.length;
    if (io === 'output') {
      delete out.prefixItems;
      out.items = { anyOf: items };
    }
  }
  return out;
}

/** The schema without its top-level `additionalProperties: false` (in each alternative of a union too). */
function open(node: unknown): unknown {
  if (!node || typeof node !== 'object' || Array.isArray(node)) return node;
  const { additionalProperties, ...rest } = node as Record<string, unknown>;
  const out: Record<string, unknown> = additionalProperties === false ? rest : { ...rest, additionalProperties };
  if (additionalProperties === undefined) delete out.additionalProperties;
  for (const k of ['anyOf', 'oneOf'] as const) if (Array.isArray(out[k])) out[k] = (out[k] as unknown[]).map(open);
  return out;
}

function parametersOf(schema: z.ZodType | undefined, where: 'path' | 'query') {
  if (!schema) return [];
  const json = schemaOf(schema, 'input') as { properties?: Record<string, unknown>; required?: string[] };
  return Object.entries(json.properties ?? {}).map(([name, s]) => ({
    name,
    in: where,
    required: where === 'path' || (json.required ?? []).includes(name),
    schema: s,
  }));
}

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'Bad request',
  401: 'Unauthorized',
  403: 'Not permitted',
  404: 'Not found',
  409: 'Conflict',
  410: 'No longer available',
};

/** Which credentials a route takes, from its principal kinds (alternatives, any one suffices). */
function securityOf(auth: RouteSpec['auth']): Record<string, string[]>[] {
  if (auth === 'public') return [];
  const out: Record<string, string[]>[] = [];
  if (auth.kinds.includes('organization') || auth.kinds.includes('oauth2')) out.push({ access_token: [] });
  if (auth.kinds.includes('customer')) out.push({ customer_session: [] });
  if (auth.kinds.includes('user')) out.push({ session_cookie: [] });
  return out;
}

export function buildOpenApi(routes: RouteSpec[], info: { title: string; version: string; serverUrl: string }) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const r of routes) {
    const p = r.path.replace(/:([A-Za-z_]+)/g, '{$1}');
    const status = String(r.status ?? 200);
    const responses: Record<string, unknown> = {
      [status]:
        status === '204'
          ? { description: 'No content' }
          : {
              description: 'Success',
              ...(r.response ? { content: { 'application/json': { schema: schemaOf(r.response, 'output') } } } : {}),
            },
      '422': { description: 'Validation error', content: { 'application/json': { schema: validationErrorSchema } } },
    };
    const error = (description: string) => ({ description, content: { 'application/json': { schema: errorSchema } } });
    // Any route: a malformed JSON body (400), a body over the size limit (413), rate limiting (429).
    responses['400'] ??= error('Bad request');
    responses['413'] = error('Request body too large');
    responses['429'] = error('Too many requests');
    if (r.auth !== 'public') {
      responses['401'] = error('Unauthorized');
      responses['403'] = error('Credential not allowed here or scope missing');
    }
    if (r.path.includes(':')) responses['404'] = error('Not found');
    for (const code of r.errors ?? []) responses[String(code)] ??= error(ERROR_DESCRIPTIONS[code] ?? 'Error');
    paths[p] ??= {};
    paths[p][r.method] = {
      summary: r.summary,
      tags: r.tags,
      operationId: `${r.tags[0] ?? 'op'}:${r.method}:${r.path}`,
      parameters: [...parametersOf(r.params, 'path'), ...parametersOf(r.query, 'query')],
      ...(r.body
        ? {
            requestBody: {
              // A route whose every body field is optional also takes no body at all (read as `{}`).
              required: !r.body.safeParse({}).success,
              content: { 'application/json': { schema: schemaOf(r.body, 'input') } },
            },
          }
        : {}),
      responses,
      security: securityOf(r.auth),
      ...(r.auth === 'public' ? {} : { 'x-scopes': r.auth.scopes ?? [], 'x-principals': r.auth.kinds }),
    };
  }
  return {
    openapi: '3.1.0',
    info: { title: info.title, version: info.version },
    servers: [{ url: info.serverUrl }],
    components: {
      securitySchemes: {
        access_token: { type: 'http', scheme: 'bearer', description: 'Organization access token (`polar_oat_`) or OAuth2 access token' },
        customer_session: { type: 'http', scheme: 'bearer', description: 'Customer session token (`polar_cst_`)' },
        session_cookie: { type: 'apiKey', in: 'cookie', name: 'better-auth.session_token', description: 'A signed-in user\'s session' },
      },
    },
    security: [{ access_token: [] }],
    paths,
  };
}

export const DOCS_HTML = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Emporia API reference</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body{font:14px/1.5 system-ui,sans-serif;margin:0;color:#1b1b1f;background:#fafafa}
header{padding:16px 24px;background:#111827;color:#fff}header a{color:#93c5fd}
main{max-width:1100px;margin:0 auto;padding:16px 24px}
details{background:#fff;border:1px solid #e5e7eb;border-radius:6px;margin:6px 0}
summary{cursor:pointer;padding:8px 12px;font-family:ui-monospace,monospace}
.m{display:inline-block;min-width:60px;font-weight:700;text-transform:uppercase}
.get{color:#2563eb}.post{color:#059669}.patch{color:#d97706}.put{color:#7c3aed}.delete{color:#dc2626}
pre{background:#f3f4f6;padding:8px;overflow:auto;margin:0 12px 12px;border-radius:4px}
h2{margin-top:24px}
</style></head>
<body><header><strong>Emporia API reference</strong> · generated from <a href="/openapi.json">/openapi.json</a></header>
<main id="root">Loading…</main>
<script src="/docs.js"></script></body></html>`;

/** The docs page's script, served at /docs.js (the page's Content-Security-Policy allows no inline script). */
export const DOCS_SCRIPT = `fetch('/openapi.json').then(r=>r.json()).then(doc=>{
  const root=document.getElementById('root');root.textContent='';
  const byTag={};
  for(const [p,ops] of Object.entries(doc.paths))for(const [m,op] of Object.entries(ops))(byTag[op.tags[0]]??=[]).push([m,p,op]);
  for(const [tag,ops] of Object.entries(byTag)){
    const h=document.createElement('h2');h.textContent=tag;root.append(h);
    for(const [m,p,op] of ops){
      const d=document.createElement('details');const s=document.createElement('summary');
      const sp=document.createElement('span');sp.className='m '+m;sp.textContent=m;
      s.append(sp,' '+p+' — '+op.summary);d.append(s);
      const pre=document.createElement('pre');pre.textContent=JSON.stringify({parameters:op.parameters,requestBody:op.requestBody,responses:op.responses,scopes:op['x-scopes']},null,2);
      d.append(pre);root.append(d);
    }
  }
});
`;

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
  return json;
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
    if (r.auth !== 'public') {
      responses['401'] = { description: 'Unauthorized', content: { 'application/json': { schema: errorSchema } } };
    }
    if (r.path.includes(':')) {
      responses['404'] = { description: 'Not found', content: { 'application/json': { schema: errorSchema } } };
    }
    paths[p] ??= {};
    paths[p][r.method] = {
      summary: r.summary,
      tags: r.tags,
      operationId: `${r.tags[0] ?? 'op'}:${r.method}:${r.path}`,
      parameters: [...parametersOf(r.params, 'path'), ...parametersOf(r.query, 'query')],
      ...(r.body
        ? { requestBody: { required: true, content: { 'application/json': { schema: schemaOf(r.body, 'input') } } } }
        : {}),
      responses,
      ...(r.auth === 'public'
        ? { security: [] }
        : { 'x-scopes': r.auth.scopes ?? [], 'x-principals': r.auth.kinds }),
    };
  }
  return {
    openapi: '3.1.0',
    info: { title: info.title, version: info.version },
    servers: [{ url: info.serverUrl }],
    components: {
      securitySchemes: {
        access_token: { type: 'http', scheme: 'bearer', description: 'Organization access token, OAuth2 token or customer session token' },
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

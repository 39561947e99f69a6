/**
 * String length limits of the public API count characters (Unicode code points), as the OpenAPI
 * document's minLength and maxLength say (JSON Schema counts code points), as Polar's validation
 * counts them, and as PostgreSQL's varchar(n) stores them. zod counts UTF-16 units: "🚀" is 2 to
 * it, so a name of 200 emoji was refused by a limit of 255, and "E🚀" passed a minimum of 3.
 * `countCharacters` walks a route's schemas once and makes their string length checks count code
 * points; the checks keep their own messages and issue codes.
 */
import type { z } from 'zod/v4';

type Check = { _zod: { def: { check?: string; minimum?: number; maximum?: number; length?: number }; check: (payload: Payload) => void } };
type Payload = { value: unknown; issues: unknown[] };
type Def = Record<string, unknown> & { type?: string; checks?: Check[]; options?: unknown[]; items?: unknown[]; getter?: () => unknown };

const LENGTH_CHECKS = new Set(['min_length', 'max_length', 'length_equals']);
const CHILDREN = ['innerType', 'element', 'in', 'out', 'left', 'right', 'keyType', 'valueType', 'rest', 'catchall', 'schema'] as const;
const seen = new WeakSet<object>();

/** The code points of `s` (a lone surrogate counts as one). */
export function codePoints(s: string): number {
  let n = s.length;
  for (let i = 0; i < s.length - 1; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        n--;
        i++;
      }
    }
  }
  return n;
}

function countInCheck(check: Check): void {
  if (seen.has(check) || !LENGTH_CHECKS.has(check._zod.def.check ?? '')) return;
  seen.add(check);
  const units = check._zod.check;
  check._zod.check = (payload) => {
    if (typeof payload.value !== 'string') return units(payload);
    const n = codePoints(payload.value);
    if (n === payload.value.length) return units(payload);
    // The check as zod words it, on a string of as many units as the value has characters.
    units({ ...payload, value: 'x'.repeat(n) });
  };
}

export function countCharacters(schema: z.ZodType | undefined): void {
  if (!schema || seen.has(schema)) return;
  seen.add(schema);
  const def = (schema as unknown as { _zod: { def: Def } })._zod.def;
  if (def.type === 'string') for (const check of def.checks ?? []) countInCheck(check);
  for (const key of CHILDREN) if (def[key] && typeof def[key] === 'object') countCharacters(def[key] as z.ZodType);
  if (def.type === 'object') for (const child of Object.values(def.shape as Record<string, z.ZodType>)) countCharacters(child);
  for (const child of [...(def.options ?? []), ...(def.items ?? [])]) countCharacters(child as z.ZodType);
  if (def.type === 'lazy' && def.getter) countCharacters(def.getter() as z.ZodType);
}

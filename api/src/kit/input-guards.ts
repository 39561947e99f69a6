/**
 * Guards on untrusted input, applied once at the edge:
 * - JSON bodies nested deeper than MAX_JSON_DEPTH are refused while parsing (a 50,000-deep value would
 *   otherwise overflow validators and serializers);
 * - strings PostgreSQL cannot store (NUL, unpaired UTF-16 surrogates) are refused as 422 before any
 *   handler runs, in keys as well as values;
 * - values echoed in validation errors are bounded (`boundedInput`).
 */
export const MAX_JSON_DEPTH = 64;

/** The bytes of JSON's structure that a byte scanner of JSON text looks for. */
export const OPEN_BRACE = 0x7b;
export const OPEN_BRACKET = 0x5b;
export const CLOSE_BRACE = 0x7d;
export const CLOSE_BRACKET = 0x5d;
export const QUOTE = 0x22;
export const BACKSLASH = 0x5c;

/** Whether a JSON text nests objects/arrays deeper than `max` (scans the bytes; strings are skipped). */
export function jsonDepthExceeds(buf: Uint8Array, max = MAX_JSON_DEPTH): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < buf.length; i++) {
    const b = buf[i]!;
    if (inString) {
      if (b === BACKSLASH) i++;
      else if (b === QUOTE) inString = false;
    } else if (b === QUOTE) {
      inString = true;
    } else if (b === OPEN_BRACE || b === OPEN_BRACKET) {
      if (++depth > max) return true;
    } else if (b === CLOSE_BRACE || b === CLOSE_BRACKET) {
      depth--;
    }
  }
  return false;
}

/** The error body-parser's `verify` throws for a too-deep body; the error handler answers 422. */
export class JsonTooDeep extends Error {
  readonly type = 'entity.too.deep';
  readonly status = 422;
  constructor(readonly max = MAX_JSON_DEPTH) {
    super(`JSON nesting deeper than ${max} levels`);
  }
}

// NUL, a high surrogate not followed by a low one, or a low surrogate not preceded by a high one.
// eslint-disable-next-line no-control-regex -- NUL is exactly what this looks for
const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

const UNSTORABLE_ALL = new RegExp(UNSTORABLE.source, 'g');

export const isUnstorable = (s: string) => UNSTORABLE.test(s);
const storable = (s: string) => s.replace(UNSTORABLE_ALL, '\uFFFD');

/**
 * The location of the first string (key or value) PostgreSQL cannot store, or null. Walks at most
 * `maxDepth` levels (bodies are already bounded by MAX_JSON_DEPTH).
 */
export function findUnstorableString(value: unknown, maxDepth = MAX_JSON_DEPTH + 1): (string | number)[] | null {
  const stack: { v: unknown; loc: (string | number)[] }[] = [{ v: value, loc: [] }];
  while (stack.length) {
    const { v, loc } = stack.pop()!;
    if (typeof v === 'string') {
      if (isUnstorable(v)) return loc;
    } else if (v && typeof v === 'object' && loc.length < maxDepth) {
      if (Array.isArray(v)) {
        v.forEach((item, i) => stack.push({ v: item, loc: [...loc, i] }));
      } else {
        for (const [k, item] of Object.entries(v as Record<string, unknown>)) {
          if (isUnstorable(k)) return [...loc, boundedKey(k)];
          stack.push({ v: item, loc: [...loc, k] });
        }
      }
    }
  }
  return null;
}

const MAX_ECHO_STRING = 200;
const MAX_ECHO_ITEMS = 20;
const MAX_ECHO_DEPTH = 3;

const truncate = (s: string, max: number) => (s.length > max ? `${s.slice(0, max)}…` : s);

/** A key as an error location may show it: bounded and with unstorable characters replaced. */
export function boundedKey(k: string): string {
  return truncate(storable(k), 100);
}

/**
 * What a validation error may echo of an input: strings cut to 200 characters, at most 20 items or
 * keys per level and 3 levels (deeper values become "…"), unstorable characters replaced.
 */
export function boundedInput(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return truncate(storable(value), MAX_ECHO_STRING);
  if (value === null || typeof value !== 'object') return value;
  if (depth >= MAX_ECHO_DEPTH) return '…';
  if (Array.isArray(value)) {
    const items = value.slice(0, MAX_ECHO_ITEMS).map((v) => boundedInput(v, depth + 1));
    return value.length > MAX_ECHO_ITEMS ? [...items, '…'] : items;
  }
  const entries = Object.entries(value as Record<string, unknown>);
  const out: Record<string, unknown> = {};
  for (const [k, v] of entries.slice(0, MAX_ECHO_ITEMS)) out[boundedKey(k)] = boundedInput(v, depth + 1);
  if (entries.length > MAX_ECHO_ITEMS) out['…'] = `${entries.length - MAX_ECHO_ITEMS} more`;
  return out;
}

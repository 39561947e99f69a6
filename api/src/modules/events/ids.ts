/**
 * Event ids: UUIDs in the version 7 layout, the creation time in milliseconds first (48 bits), then
 * the version, 74 random bits and the variant. New rows then land at the right edge of the primary
 * key's btree instead of on random pages: about a third less PostgreSQL CPU per 1000 rows copied
 * (`bench/ingest-ids.ts`, docs/performance.md). 74 random bits per millisecond keep them unique and
 * unguessable; only the creation time is readable from an id.
 *
 * The random bits are those of `crypto.randomUUID()` (a version 4 UUID: 122 random bits from the
 * CSPRNG, drawn in bulk by Node's entropy cache) with its first 48 bits replaced by the time and its
 * version digit by 7; its variant bits are already the ones version 7 has. A `randomBytes(16)` per id
 * cost about 10 µs of CPU, 10 ms per batch of 1000 events.
 */
import { randomUUID } from 'node:crypto';

let prefixMs = -1;
let prefix = '';

export function timeOrderedId(ms = Date.now()): string {
  if (ms !== prefixMs) {
    const h = ms.toString(16).padStart(12, '0');
    prefix = `${h.slice(0, 8)}-${h.slice(8, 12)}-7`;
    prefixMs = ms;
  }
  // randomUUID(): xxxxxxxx-xxxx-4xxx-[89ab]xxx-xxxxxxxxxxxx; keep what follows the version digit.
  return prefix + randomUUID().slice(15);
}

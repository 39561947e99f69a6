/** Every setting the configuration accepts is documented for operators (docs/configuration.md). */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { configSchema } from '../../api/src/config.ts';

describe('docs/configuration.md', () => {
  it('names every environment variable the configuration reads', () => {
    const doc = readFileSync(new URL('../../docs/configuration.md', import.meta.url), 'utf8');
    const keys = Object.keys(configSchema.shape);
    expect(keys.length).toBeGreaterThan(40);
    expect(keys.filter((k) => !doc.includes(`\`${k}\``))).toEqual([]);
  });
});

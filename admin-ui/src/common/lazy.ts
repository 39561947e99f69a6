import { lazy, type ComponentType } from 'react';

/** A named export loaded on first use: one chunk per resource in the production build. */
export function lazyNamed<M extends Record<string, unknown>, K extends keyof M & string>(
  load: () => Promise<M>,
  name: K,
): ComponentType {
  return lazy(async () => ({ default: (await load())[name] as ComponentType }));
}

/**
 * The organization the console is working on. Every list is filtered by it and every create is made
 * in it (see dataProvider.ts); the app bar's switcher changes it. Kept in localStorage so a reload,
 * or a new tab, opens the same organization.
 */
const KEY = 'emporia.organization_id';
let current: string | null = readStored();
const listeners = new Set<(id: string | null) => void>();

function readStored(): string | null {
  try {
    return window.localStorage.getItem(KEY);
  } catch {
    return null;
  }
}

export function currentOrganizationId(): string | null {
  return current;
}

export function setCurrentOrganizationId(id: string | null): void {
  if (id === current) return;
  current = id;
  try {
    if (id) window.localStorage.setItem(KEY, id);
    else window.localStorage.removeItem(KEY);
  } catch {
    // private mode: the choice lasts for this page only
  }
  for (const l of listeners) l(id);
}

export function subscribeOrganization(listener: (id: string | null) => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

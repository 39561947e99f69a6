/** What every portal page shares: the organization, the customer session, and a data hook. */
import { createContext, useCallback, useContext, useEffect, useState } from 'react';
import { ApiError, errorMessage, request } from '../../api.ts';
import type { StoredSession } from '../../lib/session.ts';
import type { Organization, Product } from '../../lib/types.ts';

export interface PortalContextValue {
  slug: string;
  organization: Organization;
  products: Product[];
  session: StoredSession;
  /** The session is gone (401): back to sign-in. */
  expired: () => void;
  signOut: () => void;
  requestSignIn: () => void;
}

export const PortalContext = createContext<PortalContextValue | null>(null);

export function usePortal(): PortalContextValue {
  const ctx = useContext(PortalContext);
  if (!ctx) throw new Error('usePortal outside the portal');
  return ctx;
}

/** Calls the API with the session token; a 401 ends the session. */
export function usePortalApi() {
  const { session, expired } = usePortal();
  return useCallback(
    async <T,>(method: string, path: string, body?: unknown): Promise<T> => {
      try {
        return await request<T>(method, path, body, { token: session.token });
      } catch (e) {
        if (e instanceof ApiError && e.status === 401) expired();
        throw e;
      }
    },
    [session.token, expired],
  );
}

export function useResource<T>(path: string | null) {
  const call = usePortalApi();
  const [data, setData] = useState<T | null>(null);
  const [error, setError] = useState<ApiError | Error | null>(null);
  const [version, setVersion] = useState(0);
  useEffect(() => {
    if (!path) return;
    let stopped = false;
    call<T>('GET', path).then(
      (d) => !stopped && (setData(d), setError(null)),
      (e: unknown) => !stopped && setError(e instanceof Error ? e : new Error(errorMessage(e))),
    );
    return () => {
      stopped = true;
    };
  }, [path, call, version]);
  const reload = useCallback(() => setVersion((v) => v + 1), []);
  return { data, error, reload };
}

/** A checkout-scoped session cannot see (404) or change (403) anything beyond its purchase. */
export function isScopeError(e: unknown): boolean {
  return e instanceof ApiError && (e.status === 403 || e.status === 404);
}

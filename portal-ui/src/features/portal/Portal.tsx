/**
 * The customer portal (/portal/:slug/*), loaded on demand: sign-in by emailed code, then overview,
 * orders, subscriptions, usage, benefits, payment methods and profile. A checkout-scoped session (from a
 * checkout just paid) shows that purchase only and invites the buyer to sign in for everything else.
 */
import { useCallback, useEffect, useMemo, useState } from 'react';
import { NavLink, Route, Routes, useParams } from 'react-router';
import { ApiError, errorMessage, getJson } from '../../api.ts';
import { Alert, Loading, OrgBadge } from '../../components/ui.tsx';
import { getPortalSession, setPortalSession, takeTokenFromUrl, type StoredSession } from '../../lib/session.ts';
import type { Organization, Product } from '../../lib/types.ts';
import { PortalContext, type PortalContextValue } from './context.ts';
import { SignIn } from './SignIn.tsx';
import { UsagePage } from './UsagePage.tsx';
import { BenefitsPage, OrderPage, OrdersPage, Overview, PaymentMethodsPage, ProfilePage, SubscriptionsPage } from './pages.tsx';

export default function Portal() {
  const { slug } = useParams();
  if (!slug) return <NoOrganization />;
  return <OrganizationPortal slug={slug} />;
}

function NoOrganization() {
  return (
    <main className="page narrow">
      <h1>Customer portal</h1>
      <section className="card" aria-labelledby="sign-in-heading">
        <h2 id="sign-in-heading">Sign in to your customer portal</h2>
        <p>Here you can see your orders, subscriptions and benefits.</p>
        <p className="muted">
          To sign in, open the link from the email sent to you after your purchase, or go to the customer portal link of the seller you
          bought from: there you can sign in with your email address.
        </p>
      </section>
    </main>
  );
}

type OrgState = { kind: 'loading' } | { kind: 'error'; message: string } | { kind: 'ready'; organization: Organization; products: Product[] };

function OrganizationPortal({ slug }: { slug: string }) {
  const [org, setOrg] = useState<OrgState>({ kind: 'loading' });
  const [session, setSession] = useState<StoredSession | null>(() => {
    const fromUrl = takeTokenFromUrl();
    if (fromUrl) {
      const s: StoredSession = { token: fromUrl, scope: 'full' };
      setPortalSession(slug, s);
      return s;
    }
    return getPortalSession(slug);
  });
  const [notice, setNotice] = useState<string | null>(null);
  const [signingIn, setSigningIn] = useState(false);

  useEffect(() => {
    getJson<{ organization: Organization; products: Product[] }>(`/v1/customer-portal/organizations/${encodeURIComponent(slug)}`)
      .then((r) => setOrg({ kind: 'ready', organization: r.organization, products: r.products }))
      .catch((e: unknown) =>
        setOrg({ kind: 'error', message: e instanceof ApiError && e.status === 404 ? 'There is no seller at this address.' : errorMessage(e) }),
      );
  }, [slug]);

  const expired = useCallback(() => {
    setPortalSession(slug, null);
    setSession(null);
    setNotice('Your session has expired. Sign in again to continue.');
  }, [slug]);
  const signOut = useCallback(() => {
    setPortalSession(slug, null);
    setSession(null);
    setNotice('You are signed out.');
  }, [slug]);

  const ctx = useMemo<PortalContextValue | null>(
    () =>
      org.kind === 'ready' && session
        ? { slug, organization: org.organization, products: org.products, session, expired, signOut, requestSignIn: () => setSigningIn(true) }
        : null,
    [org, session, slug, expired, signOut],
  );

  useEffect(() => {
    if (org.kind === 'ready') document.title = `${org.organization.name} — Customer portal`;
  }, [org]);

  if (org.kind === 'loading') {
    return (
      <main className="page narrow">
        <h1>Customer portal</h1>
        <Loading />
      </main>
    );
  }
  if (org.kind === 'error') {
    return (
      <main className="page narrow">
        <h1>Customer portal</h1>
        <Alert>{org.message}</Alert>
      </main>
    );
  }

  const signedIn = (token: string, email: string) => {
    const s: StoredSession = { token, scope: 'full', email };
    setPortalSession(slug, s);
    setSession(s);
    setSigningIn(false);
    setNotice(null);
  };

  if (!session || signingIn) {
    return (
      <main className="page narrow">
        <header className="portal-header">
          <OrgBadge name={org.organization.name} avatarUrl={org.organization.avatar_url} />
        </header>
        <h1>Customer portal</h1>
        <SignIn
          organization={org.organization}
          initialEmail={session?.email}
          notice={notice}
          onSignedIn={signedIn}
          onCancel={session ? () => setSigningIn(false) : undefined}
        />
      </main>
    );
  }

  return (
    <PortalContext.Provider value={ctx}>
      <div className="portal">
        <header className="portal-header">
          <OrgBadge name={org.organization.name} avatarUrl={org.organization.avatar_url} />
          <button type="button" className="link" onClick={signOut}>
            Sign out
          </button>
        </header>
        <nav aria-label="Customer portal" className="portal-nav">
          <NavLink end to={`/portal/${slug}`}>
            Overview
          </NavLink>
          <NavLink to={`/portal/${slug}/orders`}>Orders</NavLink>
          <NavLink to={`/portal/${slug}/subscriptions`}>Subscriptions</NavLink>
          <NavLink to={`/portal/${slug}/usage`}>Usage</NavLink>
          <NavLink to={`/portal/${slug}/benefits`}>Benefits</NavLink>
          <NavLink to={`/portal/${slug}/payment-methods`}>Payment methods</NavLink>
          <NavLink to={`/portal/${slug}/profile`}>Profile</NavLink>
        </nav>
        <main className="portal-main">
          {session.scope === 'checkout' && (
            <Alert kind="info" title="You are seeing the purchase you just made">
              <p>Sign in to see all your purchases, manage subscriptions and payment methods.</p>
              <button type="button" className="primary" onClick={() => setSigningIn(true)}>
                Sign in to see all your purchases
              </button>
            </Alert>
          )}
          <Routes>
            <Route index element={<Overview />} />
            <Route path="orders" element={<OrdersPage />} />
            <Route path="orders/:orderId" element={<OrderPage />} />
            <Route path="subscriptions" element={<SubscriptionsPage />} />
            <Route path="usage" element={<UsagePage />} />
            <Route path="benefits" element={<BenefitsPage />} />
            <Route path="payment-methods" element={<PaymentMethodsPage />} />
            <Route path="profile" element={<ProfilePage />} />
            <Route path="*" element={<Alert>This page does not exist.</Alert>} />
          </Routes>
        </main>
      </div>
    </PortalContext.Provider>
  );
}

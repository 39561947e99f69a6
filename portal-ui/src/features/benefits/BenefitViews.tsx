/** How a granted benefit shows: license key with copy button (and activations), download buttons, notes. */
import { useEffect, useState } from 'react';
import { ApiError, errorMessage, getJson, request, type Page } from '../../api.ts';
import { Alert, CopyButton, Loading } from '../../components/ui.tsx';
import { portalConfig } from '../../lib/config.ts';
import { formatDate, formatDateTime } from '../../lib/format.ts';
import type { BenefitGrant, Downloadable, LicenseKey } from '../../lib/types.ts';
import { benefitLabel } from '../checkout/ProductSummary.tsx';

export function GrantView({ grant, token, manage }: { grant: BenefitGrant; token: string; manage?: boolean }) {
  const b = grant.benefit;
  return (
    <article className="grant" aria-label={benefitLabel(b)}>
      <h3>{benefitLabel(b)}</h3>
      {!grant.is_granted && !grant.is_revoked && (manage && needsAccount(grant) ? <ConnectAccount grant={grant} token={token} /> : <p className="muted">Being prepared…</p>)}
      {grant.is_revoked && <p className="muted">No longer available (revoked).</p>}
      {grant.is_granted && b.type === 'license_keys' && typeof grant.properties.license_key_id === 'string' && (
        <LicenseKeyView id={grant.properties.license_key_id} token={token} manage={manage} />
      )}
      {grant.is_granted && b.type === 'downloadables' && <DownloadsView benefitId={b.id} token={token} />}
      {grant.is_granted && b.type === 'custom' && typeof b.properties.note === 'string' && b.properties.note && (
        <p className="note">{b.properties.note}</p>
      )}
      {grant.is_granted && (b.type === 'github_repository' || b.type === 'discord') && <AccountView grant={grant} />}
    </article>
  );
}

function AccountView({ grant }: { grant: BenefitGrant }) {
  const github = grant.benefit.type === 'github_repository';
  const connected = typeof grant.properties.account_id === 'string' && grant.properties.account_id;
  const p = grant.benefit.properties;
  const target = github ? `${String(p.repository_owner ?? '')}/${String(p.repository_name ?? '')}` : 'the Discord server';
  if (connected) {
    return (
      <p>
        Access to <strong>{target}</strong> is granted to your {github ? 'GitHub' : 'Discord'} account
        {typeof grant.properties.account_username === 'string' ? ` ${grant.properties.account_username}` : ''}.
      </p>
    );
  }
  return <p className="muted">Access to <strong>{target}</strong> is being set up for your {github ? 'GitHub' : 'Discord'} account.</p>;
}

const PLATFORM = { github_repository: ['github', 'GitHub'], discord: ['discord', 'Discord'] } as const;

/** A GitHub or Discord grant (acts on the customer's account there). */
export const isAccountGrant = (grant: BenefitGrant) => grant.benefit.type === 'github_repository' || grant.benefit.type === 'discord';

/** A GitHub or Discord grant waiting for the customer's account. */
export const needsAccount = (grant: BenefitGrant) => isAccountGrant(grant) && !grant.properties.account_id;

/** Connects the account through the platform's OAuth app, coming back to this page. */
function ConnectAccount({ grant, token }: { grant: BenefitGrant; token: string }) {
  const [platform, name] = PLATFORM[grant.benefit.type as keyof typeof PLATFORM];
  const [available, setAvailable] = useState<boolean | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    portalConfig().then(
      (c) => setAvailable(c.oauth_platforms.includes(platform)),
      () => setAvailable(false),
    );
  }, [platform]);
  const p = grant.benefit.properties;
  const target = platform === 'github' ? `${String(p.repository_owner ?? '')}/${String(p.repository_name ?? '')}` : 'the Discord server';
  const connect = async () => {
    setBusy(true);
    setError(null);
    try {
      const back = `${window.location.origin}${window.location.pathname}`;
      const { url } = await getJson<{ url: string }>(
        `/v1/customer-portal/oauth-accounts/authorize?platform=${platform}&return_to=${encodeURIComponent(back)}`,
        // The answer sets the cookie binding the flow to this browser.
        { token, credentials: 'same-origin' },
      );
      window.location.assign(url);
    } catch (e) {
      setError(errorMessage(e));
      setBusy(false);
    }
  };
  return (
    <div className="connect-account">
      <p>
        Connect your {name} account to get access to <strong>{target}</strong>.
      </p>
      {error && <Alert>{error}</Alert>}
      {available === false ? (
        <p className="muted">Connecting a {name} account is not available here: contact the seller with your {name} username.</p>
      ) : (
        <button type="button" className="primary" disabled={busy || available === null} onClick={() => void connect()}>
          {busy ? 'Opening…' : `Connect ${name}`}
        </button>
      )}
    </div>
  );
}

export function LicenseKeyView({ id, token, manage }: { id: string; token: string; manage?: boolean | undefined }) {
  const [key, setKey] = useState<LicenseKey | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState<string | null>(null);
  const [version, setVersion] = useState(0);
  useEffect(() => {
    getJson<LicenseKey>(`/v1/customer-portal/license-keys/${id}`, { token })
      .then(setKey)
      .catch((e: unknown) => setError(errorMessage(e)));
  }, [id, token, version]);
  if (error) return <Alert>{error}</Alert>;
  if (!key) return <Loading label="Loading license key…" />;
  const deactivate = async (activationId: string) => {
    setBusy(activationId);
    try {
      await request('POST', '/v1/customer-portal/license-keys/deactivate', { key: key.key, organization_id: key.organization_id, activation_id: activationId });
      setVersion((v) => v + 1);
    } catch (e) {
      setError(errorMessage(e));
    } finally {
      setBusy(null);
    }
  };
  const activations = key.activations ?? [];
  return (
    <div className="license-key">
      <div className="key-row">
        <code className="key" aria-label="License key">
          {key.key}
        </code>
        <CopyButton value={key.key} label="Copy license key" />
      </div>
      <p className="muted small">
        Status: {key.status}
        {key.expires_at ? ` · Expires ${formatDate(key.expires_at)}` : ''}
        {key.limit_activations ? ` · ${activations.length} of ${key.limit_activations} activations used` : ''}
        {key.limit_usage ? ` · Usage ${key.usage} of ${key.limit_usage}` : ''}
      </p>
      {manage && activations.length > 0 && (
        <table className="table">
          <caption>Activations</caption>
          <thead>
            <tr>
              <th scope="col">Device</th>
              <th scope="col">Activated</th>
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {activations.map((a) => (
              <tr key={a.id}>
                <td>{a.label}</td>
                <td>{formatDateTime(a.created_at)}</td>
                <td>
                  <button type="button" className="small" onClick={() => void deactivate(a.id)} disabled={busy !== null} aria-label={`Deactivate ${a.label}`}>
                    {busy === a.id ? 'Deactivating…' : 'Deactivate'}
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}

export function DownloadsView({ benefitId, token }: { benefitId: string; token: string }) {
  const [files, setFiles] = useState<Downloadable[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    getJson<Page<Downloadable>>(`/v1/customer-portal/downloadables/?benefit_id=${benefitId}&limit=100`, { token })
      .then((p) => setFiles(p.items))
      .catch((e: unknown) => setError(e instanceof ApiError && e.status === 404 ? 'No files.' : errorMessage(e)));
  }, [benefitId, token]);
  if (error) return <Alert>{error}</Alert>;
  if (!files) return <Loading label="Loading files…" />;
  if (!files.length) return <p className="muted">No files yet.</p>;
  return (
    <ul className="downloads">
      {files.map((d) => (
        <li key={d.id}>
          <span>
            {d.file.name} <span className="muted small">({d.file.size_readable})</span>
          </span>
          <a className="button small" href={d.file.download.url} download={d.file.name} aria-label={`Download ${d.file.name}`}>
            Download
          </a>
        </li>
      ))}
    </ul>
  );
}

/** Small shared pieces: fields with labels and errors, alerts, the copy button, the spinner. */
import { useId, useState, type ReactNode } from 'react';

export function Field({
  label,
  error,
  hint,
  children,
  optional,
}: {
  label: string;
  error?: string | undefined;
  hint?: ReactNode;
  optional?: boolean;
  children: (props: { id: string; 'aria-invalid': boolean | undefined; 'aria-describedby': string | undefined }) => ReactNode;
}) {
  const id = useId();
  const described = [hint ? `${id}-hint` : null, error ? `${id}-error` : null].filter(Boolean).join(' ') || undefined;
  return (
    <div className={`field${error ? ' has-error' : ''}`}>
      <label htmlFor={id}>
        {label}
        {optional && <span className="muted"> (optional)</span>}
      </label>
      {children({ id, 'aria-invalid': error ? true : undefined, 'aria-describedby': described })}
      {hint && (
        <p className="hint" id={`${id}-hint`}>
          {hint}
        </p>
      )}
      {error && (
        <p className="field-error" id={`${id}-error`} role="alert">
          {error}
        </p>
      )}
    </div>
  );
}

export function Alert({ kind = 'error', children, title }: { kind?: 'error' | 'info' | 'warning' | 'success'; title?: string; children?: ReactNode }) {
  return (
    <div className={`notice ${kind}`} role={kind === 'error' ? 'alert' : 'status'}>
      {title && <p className="notice-title">{title}</p>}
      {children}
    </div>
  );
}

export function Loading({ label = 'Loading…' }: { label?: string }) {
  return (
    <p className="muted loading" role="status">
      <span className="spinner" aria-hidden="true" /> {label}
    </p>
  );
}

export function CopyButton({ value, label = 'Copy' }: { value: string; label?: string }) {
  const [copied, setCopied] = useState(false);
  return (
    <button
      type="button"
      className="small"
      onClick={() => {
        const done = () => {
          setCopied(true);
          setTimeout(() => setCopied(false), 2000);
        };
        if (navigator.clipboard?.writeText) navigator.clipboard.writeText(value).then(done, done);
        else done();
      }}
    >
      {copied ? 'Copied' : label}
      <span className="visually-hidden" aria-live="polite">
        {copied ? ' to clipboard' : ''}
      </span>
    </button>
  );
}

export function OrgBadge({ name, avatarUrl }: { name: string; avatarUrl: string | null | undefined }) {
  return (
    <span className="org">
      {avatarUrl ? (
        <img className="avatar" src={avatarUrl} alt="" width={32} height={32} />
      ) : (
        <span className="avatar placeholder" aria-hidden="true">
          {name.slice(0, 1).toUpperCase()}
        </span>
      )}
      <span className="org-name">{name}</span>
    </span>
  );
}

/**
 * The sandbox card form (number with brand detection and Luhn check, expiry, CVC) and the test mode
 * banner. `sandboxConfirmationToken` turns a test card into a confirmation token through
 * `POST /v1/sandbox/confirmation-tokens`.
 */
import { request } from '../api.ts';
import { BRAND_NAMES, cardBrand, digitsOf, expiryParts, formatCardNumber, formatExpiry, TEST_CARDS, type CardInput } from '../lib/card.ts';
import { Field } from './ui.tsx';

export function CardFields({
  value,
  onChange,
  errors,
  disabled,
}: {
  value: CardInput;
  onChange: (v: CardInput) => void;
  errors: Record<string, string>;
  disabled?: boolean;
}) {
  const brand = cardBrand(digitsOf(value.number));
  return (
    <fieldset className="card-fields" disabled={disabled}>
      <legend>Card</legend>
      <Field label="Card number" error={errors.card_number}>
        {(p) => (
          <div className="card-number">
            <input
              {...p}
              name="cardnumber"
              inputMode="numeric"
              autoComplete="cc-number"
              placeholder="1234 1234 1234 1234"
              value={value.number}
              onChange={(e) => onChange({ ...value, number: formatCardNumber(e.target.value) })}
            />
            <span className={`brand brand-${brand}`} aria-live="polite">
              {brand === 'unknown' ? '' : BRAND_NAMES[brand]}
            </span>
          </div>
        )}
      </Field>
      <div className="row">
        <Field label="Expiry date (MM / YY)" error={errors.card_expiry}>
          {(p) => (
            <input
              {...p}
              name="exp-date"
              inputMode="numeric"
              autoComplete="cc-exp"
              placeholder="MM / YY"
              value={value.expiry}
              onChange={(e) => {
                const raw = e.target.value;
                // Deleting the separator should delete a digit, not re-add " / ".
                const deleting = raw.length < value.expiry.length && value.expiry.endsWith(' / ') && !raw.includes('/');
                onChange({ ...value, expiry: deleting ? digitsOf(raw).slice(0, 1) : formatExpiry(raw) });
              }}
            />
          )}
        </Field>
        <Field label="Security code (CVC)" error={errors.card_cvc}>
          {(p) => (
            <input
              {...p}
              name="cvc"
              inputMode="numeric"
              autoComplete="cc-csc"
              placeholder={brand === 'amex' ? '4 digits' : '3 digits'}
              value={value.cvc}
              onChange={(e) => onChange({ ...value, cvc: digitsOf(e.target.value).slice(0, 4) })}
            />
          )}
        </Field>
      </div>
    </fieldset>
  );
}

export function TestModeBanner() {
  return (
    <section className="test-mode" aria-label="Test mode">
      <p>
        <strong>Test mode</strong> — no real card is charged. Use any future expiry date and any CVC with these test cards:
      </p>
      <ul>
        {TEST_CARDS.map((c) => (
          <li key={c.number}>
            <code>{c.number}</code> {c.outcome}
          </li>
        ))}
      </ul>
    </section>
  );
}

/** Field errors of the token endpoint (422 on card_number / exp_year / cvc) in the form's keys. */
export const CARD_ERROR_KEYS: Record<string, string> = {
  card_number: 'card_number',
  exp_month: 'card_expiry',
  exp_year: 'card_expiry',
  cvc: 'card_cvc',
};

export async function sandboxConfirmationToken(card: CardInput): Promise<string> {
  const token = await request<{ id: string }>('POST', '/v1/sandbox/confirmation-tokens', {
    card_number: digitsOf(card.number),
    ...expiryParts(card.expiry),
    cvc: card.cvc,
  });
  return token.id;
}

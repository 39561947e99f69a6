// Over 400 lines: one page whose buyer form, totals and card entry share the checkout's state.
/**
 * The hosted checkout (/checkout/:clientSecret): organization, product(s) and price, the buyer's
 * details, the seller's custom fields, a discount code, card entry, and totals exactly as the API
 * computes them (every change that affects money goes through the public update endpoint).
 */
import { lazy, Suspense, useCallback, useEffect, useMemo, useRef, useState, type FormEvent } from 'react';
import { useNavigate, useParams } from 'react-router';
import { ApiError, errorMessage, getJson, request } from '../../api.ts';
import { AddressFields, cleanAddress, guessCountry } from '../../components/AddressFields.tsx';
import { CARD_ERROR_KEYS, CardFields, sandboxConfirmationToken, TestModeBanner } from '../../components/CardFields.tsx';
import { Alert, Field, Loading, OrgBadge } from '../../components/ui.tsx';
import { emptyCard, validateCard, type CardInput } from '../../lib/card.ts';
import { postToParent } from '../../lib/embed.ts';
import { portalConfig, type PortalConfig } from '../../lib/config.ts';
import { formatMoney, formatRecurring, parseMajor, toMajorInput } from '../../lib/format.ts';
import { setCheckoutToken } from '../../lib/session.ts';
import type { Address, AttachedCustomField, Checkout, Price, Product } from '../../lib/types.ts';
import { PriceLabel, ProductSummary } from './ProductSummary.tsx';
import { checkoutTrial, TrialNote, TrialTerms, type CheckoutTrial } from './TrialTerms.tsx';
import type { StripeHandle } from './StripePayment.tsx';

const StripePayment = lazy(() => import('./StripePayment.tsx'));

export const GONE = 'This checkout does not exist or has expired.';

type Load = { kind: 'loading' } | { kind: 'gone'; detail: string | null } | { kind: 'ready'; checkout: Checkout; config: PortalConfig };

export function CheckoutPage() {
  const { clientSecret = '' } = useParams();
  const [load, setLoad] = useState<Load>({ kind: 'loading' });

  useEffect(() => {
    const controller = new AbortController();
    Promise.all([getJson<Checkout>(`/v1/checkouts/client/${encodeURIComponent(clientSecret)}`, { signal: controller.signal }), portalConfig()])
      .then(([checkout, config]) => setLoad({ kind: 'ready', checkout, config }))
      .catch((error: unknown) => {
        if (controller.signal.aborted) return;
        const expected = error instanceof ApiError && [404, 410].includes(error.status);
        setLoad({ kind: 'gone', detail: expected ? null : errorMessage(error) });
      });
    return () => controller.abort();
  }, [clientSecret]);

  useEffect(() => {
    if (load.kind === 'ready') {
      document.title = `Checkout — ${load.checkout.product.name}`;
      postToParent(load.checkout.embed_origin, { event: 'loaded' });
    }
  }, [load]);

  if (load.kind === 'loading') {
    return (
      <main className="page narrow">
        <h1>Checkout</h1>
        <Loading label="Loading checkout…" />
      </main>
    );
  }
  const expired = load.kind === 'ready' && (load.checkout.status === 'expired' || Date.parse(load.checkout.expires_at) <= Date.now());
  if (load.kind === 'gone' || expired) {
    return (
      <main className="page narrow">
        <h1>Checkout</h1>
        <Alert>
          <p>{GONE}</p>
          <p className="small">Go back to the seller’s site and start the purchase again.</p>
          {load.kind === 'gone' && load.detail && <p className="muted small">{load.detail}</p>}
        </Alert>
      </main>
    );
  }
  return <CheckoutForm initial={load.checkout} config={load.config} />;
}

/** The price of a product a buyer may pick: the non-archived ones. */
const livePrices = (p: Product) => p.prices.filter((x) => !x.is_archived);

type CustomValue = string | boolean;

function initialCustomValues(c: Checkout): Record<string, CustomValue> {
  const out: Record<string, CustomValue> = {};
  for (const a of c.attached_custom_fields) {
    const v = c.custom_field_data[a.custom_field.slug];
    out[a.custom_field.slug] = a.custom_field.type === 'checkbox' ? v === true : v == null ? '' : String(v);
  }
  return out;
}

/** Typed answers for the API: numbers as numbers, empty answers omitted. */
function customFieldData(fields: AttachedCustomField[], values: Record<string, CustomValue>) {
  const out: Record<string, string | number | boolean> = {};
  for (const { custom_field: f } of fields) {
    const v = values[f.slug];
    if (f.type === 'checkbox') out[f.slug] = v === true;
    else if (typeof v === 'string' && v.trim() !== '') out[f.slug] = f.type === 'number' ? Number(v) : v.trim();
  }
  return out;
}

function validateCustomFields(fields: AttachedCustomField[], values: Record<string, CustomValue>) {
  const errors: Record<string, string> = {};
  for (const { custom_field: f, required } of fields) {
    const key = `custom_field_data.${f.slug}`;
    const v = values[f.slug];
    const p = f.properties;
    if (f.type === 'checkbox') {
      if (required && v !== true) errors[key] = 'This box must be checked.';
      continue;
    }
    const s = typeof v === 'string' ? v.trim() : '';
    if (!s) {
      if (required) errors[key] = 'This field is required.';
      continue;
    }
    if (f.type === 'text') {
      if (p.min_length != null && s.length < p.min_length) errors[key] = `Enter at least ${p.min_length} characters.`;
      if (p.max_length != null && s.length > p.max_length) errors[key] = `Enter at most ${p.max_length} characters.`;
    }
    if (f.type === 'number') {
      const n = Number(s);
      if (!Number.isInteger(n)) errors[key] = 'Enter a whole number.';
      else if (p.ge != null && n < p.ge) errors[key] = `Enter a number of at least ${p.ge}.`;
      else if (p.le != null && n > p.le) errors[key] = `Enter a number of at most ${p.le}.`;
    }
  }
  return errors;
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

function CheckoutForm({ initial, config }: { initial: Checkout; config: PortalConfig }) {
  const navigate = useNavigate();
  const [checkout, setCheckout] = useState(initial);
  const secret = checkout.client_secret;
  const [email, setEmail] = useState(initial.customer_email ?? '');
  const [name, setName] = useState(initial.customer_name ?? '');
  const [address, setAddress] = useState<Address>(initial.customer_billing_address ?? { country: guessCountry() });
  const [taxId, setTaxId] = useState(initial.customer_tax_id ?? '');
  const [custom, setCustom] = useState(() => initialCustomValues(initial));
  const [card, setCard] = useState<CardInput>(emptyCard);
  const [discountCode, setDiscountCode] = useState('');
  const [amountInput, setAmountInput] = useState(() =>
    initial.product_price.amount_type === 'custom' && initial.amount != null ? toMajorInput(initial.amount, initial.currency ?? 'usd') : '',
  );
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [payError, setPayError] = useState<{ title?: string; message: string } | null>(null);
  const [updating, setUpdating] = useState(false);
  const [paying, setPaying] = useState(false);
  const [selectedPriceId, setSelectedPriceId] = useState(initial.product_price_id);
  useEffect(() => setSelectedPriceId(checkout.product_price_id), [checkout.product_price_id]);
  const stripeRef = useRef<StripeHandle | null>(null);
  const formRef = useRef<HTMLFormElement>(null);

  // PAYMENT_PROCESSOR=stripe: Stripe's Payment Element; the sandbox card form otherwise.
  const stripeMode = config.payment_processor === 'stripe';
  const publishableKey = stripeMode ? (config.stripe_publishable_key ?? checkout.payment_processor_metadata.publishable_key ?? null) : null;
  const currency = checkout.currency ?? priceCurrency(checkout.product_price) ?? 'usd';
  const price = checkout.product_price;
  const recurring = price.type === 'recurring' ? price.recurring_interval ?? checkout.product.recurring_interval : null;
  const fields = useMemo(() => [...checkout.attached_custom_fields].sort((a, b) => a.order - b.order), [checkout.attached_custom_fields]);
  const choices = useMemo(
    () => checkout.products.flatMap((p) => livePrices(p).map((price) => ({ product: p, price }))),
    [checkout.products],
  );

  /** Sends a change to the API and shows the checkout it answers (totals included). */
  const update = useCallback(
    async (patch: Record<string, unknown>, keys: string[]): Promise<boolean> => {
      setUpdating(true);
      try {
        const next = await request<Checkout>('PATCH', `/v1/checkouts/client/${encodeURIComponent(secret)}`, patch);
        setCheckout(next);
        setErrors((e) => Object.fromEntries(Object.entries(e).filter(([k]) => !keys.some((x) => k === x || k.startsWith(`${x}.`)))));
        return true;
      } catch (error) {
        if (error instanceof ApiError && error.status === 422) {
          const fe = error.fieldErrors;
          setErrors((e) => ({ ...e, ...(Object.keys(fe).length ? fe : { [keys[0]!]: error.message }) }));
        } else if (error instanceof ApiError && [403, 404, 410].includes(error.status)) {
          setPayError({ title: 'This checkout can no longer be changed', message: `${error.message} Reload the page, or start again from the seller’s site.` });
        } else {
          setPayError({ message: errorMessage(error) });
        }
        return false;
      } finally {
        setUpdating(false);
      }
    },
    [secret],
  );

  const onAmountBlur = () => {
    if (price.amount_type !== 'custom') return;
    const minor = parseMajor(amountInput, currency);
    const err = amountError(minor, price);
    if (err) {
      setErrors((e) => ({ ...e, amount: err }));
      return;
    }
    if (minor !== checkout.amount) void update({ amount: minor }, ['amount']);
    else setErrors((e) => ({ ...e, amount: '' }));
  };

  const applyDiscount = async () => {
    const code = discountCode.trim();
    if (!code) {
      setErrors((e) => ({ ...e, discount_code: 'Enter a discount code.' }));
      return;
    }
    if (await update({ discount_code: code }, ['discount_code'])) setDiscountCode('');
  };

  const onCountryChange = (a: Address) => {
    const countryChanged = a.country !== address.country;
    setAddress(a);
    // Tax may depend on the country: let the API recompute the totals.
    if (countryChanged) void update({ customer_billing_address: cleanAddress(a) }, ['customer_billing_address']);
  };

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    if (paying) return;
    setPayError(null);
    const formRequired = checkout.is_payment_form_required;
    const errs: Record<string, string> = {};
    if (!EMAIL.test(email.trim())) errs.customer_email = 'Enter a valid email address.';
    if (formRequired && !name.trim()) errs.customer_name = 'Enter the name on your card.';
    if (price.amount_type === 'custom') {
      const err = amountError(parseMajor(amountInput, currency), price);
      if (err) errs.amount = err;
    }
    Object.assign(errs, validateCustomFields(fields, custom));
    if (formRequired && !stripeMode) Object.assign(errs, validateCard(card));
    setErrors(errs);
    if (Object.values(errs).some(Boolean)) {
      requestAnimationFrame(() => formRef.current?.querySelector<HTMLElement>('[aria-invalid="true"]')?.focus());
      return;
    }

    setPaying(true);
    try {
      let confirmationTokenId: string | undefined;
      if (formRequired) {
        try {
          if (stripeMode) {
            if (!stripeRef.current) throw new Error('The card form is not ready: it could not be loaded from Stripe.');
            confirmationTokenId = await stripeRef.current.createToken({ name: name.trim(), email: email.trim(), address: cleanAddress(address) });
          } else {
            confirmationTokenId = await sandboxConfirmationToken(card);
          }
        } catch (error) {
          if (error instanceof ApiError && error.status === 422) {
            const fe = Object.fromEntries(Object.entries(error.fieldErrors).map(([k, v]) => [CARD_ERROR_KEYS[k] ?? k, v]));
            setErrors(fe);
          } else {
            setPayError({ title: 'Your card could not be used', message: errorMessage(error) });
          }
          return;
        }
      }
      const body: Record<string, unknown> = {
        customer_email: email.trim(),
        customer_name: name.trim() || null,
        custom_field_data: customFieldData(fields, custom),
        ...(formRequired || address.line1 || address.postal_code ? { customer_billing_address: cleanAddress(address) } : {}),
        ...(taxId.trim() ? { customer_tax_id: taxId.trim() } : {}),
        ...(price.amount_type === 'custom' ? { amount: parseMajor(amountInput, currency) } : {}),
        ...(confirmationTokenId ? { confirmation_token_id: confirmationTokenId } : {}),
      };
      const confirmed = await request<Checkout>('POST', `/v1/checkouts/client/${encodeURIComponent(secret)}/confirm`, body);
      if (confirmed.customer_session_token) setCheckoutToken(secret, confirmed.customer_session_token);
      postToParent(confirmed.embed_origin, { event: 'confirmed' });
      navigate(`/checkout/${encodeURIComponent(secret)}/confirmation`, { state: { checkout: confirmed } });
    } catch (error) {
      if (!(error instanceof ApiError)) setPayError({ message: errorMessage(error) });
      else if (error.status === 422) {
        const fe = error.fieldErrors;
        setErrors(fe);
        const unplaced = Object.entries(fe).filter(([k]) => !isShownField(k, fields));
        if (unplaced.length) setPayError({ title: 'Please check your details', message: unplaced.map(([, v]) => v).join(' ') });
        requestAnimationFrame(() => formRef.current?.querySelector<HTMLElement>('[aria-invalid="true"]')?.focus());
      } else if (error.code === 'PaymentError' || (error.status === 400 && !error.code)) {
        setPayError({ title: 'Payment failed', message: `${error.message} Try another card; nothing was charged.` });
      } else if (error.status === 409) {
        setPayError({
          title: 'This checkout is already being paid',
          message: 'A payment for this checkout is in progress, perhaps in another tab. Wait a moment, then reload this page to see whether it went through before trying again.',
        });
      } else if (error.status === 404 || error.status === 410) {
        setPayError({
          title: 'This checkout has expired',
          message: 'Nothing was charged. Go back to the seller’s site and start the purchase again.',
        });
      } else {
        setPayError({ title: 'The payment could not be completed', message: error.message });
      }
    } finally {
      setPaying(false);
    }
  };

  const alreadyPaid = checkout.status === 'confirmed' || checkout.status === 'succeeded';
  const total = checkout.total_amount ?? 0;
  const trial = checkoutTrial(checkout, recurring);
  const payLabel = trial
    ? 'Start trial'
    : !checkout.is_payment_required
    ? recurring
      ? 'Start subscription'
      : 'Get it for free'
    : recurring
      ? `Subscribe — ${formatRecurring(total, currency, recurring)}`
      : `Pay ${formatMoney(total, currency)}`;

  return (
    <main className="checkout-layout">
      <section className="checkout-summary" aria-labelledby="summary-heading">
        <OrgBadge name={checkout.organization.name} avatarUrl={checkout.organization.avatar_url} />
        <h1 id="summary-heading">{checkout.product.name}</h1>
        <ProductSummary product={checkout.product} />

        {choices.length > 1 && (
          <fieldset className="choices" disabled={updating || paying}>
            <legend>Choose an option</legend>
            {choices.map(({ product, price: pr }) => {
              const checked = pr.id === selectedPriceId;
              return (
                <label key={pr.id} className={`choice${checked ? ' selected' : ''}`}>
                  <input
                    type="radio"
                    name="price"
                    checked={checked}
                    onChange={() => {
                      setSelectedPriceId(pr.id); // at once; the totals follow the API's answer
                      void update({ product_id: product.id, product_price_id: pr.id }, ['product_price_id']).then((ok) => {
                        if (!ok) setSelectedPriceId(checkout.product_price_id);
                      });
                    }}
                  />
                  <span className="choice-name">{product.name}</span>
                  <span className="choice-price">
                    <PriceLabel price={pr} />
                  </span>
                </label>
              );
            })}
          </fieldset>
        )}

        {trial && recurring && <TrialTerms trial={trial} checkout={checkout} currency={currency} recurring={recurring} />}
        <Totals checkout={checkout} currency={currency} recurring={recurring} updating={updating} trial={trial} />
      </section>

      <section className="checkout-form">
        {!stripeMode && checkout.is_payment_form_required && <TestModeBanner />}
        {alreadyPaid ? (
          <Alert kind="info">
            <p>This checkout has already been paid.</p>
            <p>
              <a href={`/checkout/${encodeURIComponent(secret)}/confirmation`}>See your purchase</a>
            </p>
          </Alert>
        ) : (
          <form ref={formRef} onSubmit={submit} noValidate aria-label="Checkout">
            {price.amount_type === 'custom' && (
              <Field
                label={`Name a fair price (${currency.toUpperCase()})`}
                error={errors.amount}
                hint={amountHint(price, currency)}
              >
                {(p) => (
                  <input
                    {...p}
                    name="amount"
                    inputMode="decimal"
                    value={amountInput}
                    onChange={(e) => setAmountInput(e.target.value)}
                    onBlur={onAmountBlur}
                  />
                )}
              </Field>
            )}

            <Field label="Email" error={errors.customer_email} hint="Your receipt and sign-in codes go here.">
              {(p) => (
                <input {...p} type="email" name="email" autoComplete="email" required value={email} onChange={(e) => setEmail(e.target.value)} />
              )}
            </Field>

            {checkout.is_payment_form_required && (
              <Field label="Name on card" error={errors.customer_name}>
                {(p) => <input {...p} name="name" autoComplete="cc-name" required value={name} onChange={(e) => setName(e.target.value)} />}
              </Field>
            )}
            {!checkout.is_payment_form_required && (
              <Field label="Name" optional error={errors.customer_name}>
                {(p) => <input {...p} name="name" autoComplete="name" value={name} onChange={(e) => setName(e.target.value)} />}
              </Field>
            )}

            {fields.map((a) => (
              <CustomFieldInput
                key={a.custom_field_id}
                field={a}
                value={custom[a.custom_field.slug] ?? ''}
                error={errors[`custom_field_data.${a.custom_field.slug}`]}
                onChange={(v) => setCustom((c) => ({ ...c, [a.custom_field.slug]: v }))}
              />
            ))}

            {checkout.is_payment_form_required &&
              (stripeMode ? (
                publishableKey ? (
                  <Suspense fallback={<Loading label="Loading the card form…" />}>
                    <StripePayment publishableKey={publishableKey} checkout={checkout} handleRef={stripeRef} />
                  </Suspense>
                ) : (
                  <Alert>Card payments are not set up for this store yet (no Stripe publishable key). Please contact the seller.</Alert>
                )
              ) : (
                <CardFields value={card} onChange={setCard} errors={errors} disabled={paying} />
              ))}

            {checkout.is_payment_form_required && (
              <>
                <AddressFields value={address} onChange={onCountryChange} errors={errors} prefix="customer_billing_address" full={false} />
                <Field label="Tax ID" optional error={errors.customer_tax_id} hint="For a business purchase: your VAT or tax number.">
                  {(p) => <input {...p} name="tax-id" value={taxId} onChange={(e) => setTaxId(e.target.value)} onBlur={() => taxId.trim() && taxId.trim() !== checkout.customer_tax_id && void update({ customer_tax_id: taxId.trim(), customer_billing_address: cleanAddress(address) }, ['customer_tax_id'])} />}
                </Field>
              </>
            )}

            {checkout.allow_discount_codes && (
              <div className="discount">
                {checkout.discount ? (
                  <p className="applied">
                    Discount <strong>{checkout.discount.code ?? checkout.discount.name}</strong> applied.{' '}
                    <button type="button" className="link" onClick={() => void update({ discount_code: null }, ['discount_code'])} disabled={updating || paying}>
                      Remove discount
                    </button>
                  </p>
                ) : (
                  <Field label="Discount code" optional error={errors.discount_code}>
                    {(p) => (
                      <div className="inline">
                        <input
                          {...p}
                          name="discount-code"
                          value={discountCode}
                          onChange={(e) => setDiscountCode(e.target.value)}
                          onKeyDown={(e) => {
                            if (e.key === 'Enter') {
                              e.preventDefault();
                              void applyDiscount();
                            }
                          }}
                        />
                        <button type="button" onClick={() => void applyDiscount()} disabled={updating || paying}>
                          Apply
                        </button>
                      </div>
                    )}
                  </Field>
                )}
              </div>
            )}

            {payError && (
              <Alert title={payError.title}>
                <p>{payError.message}</p>
              </Alert>
            )}

            <button type="submit" className="primary pay" disabled={paying || updating} aria-busy={paying}>
              {paying ? 'Processing…' : payLabel}
            </button>
            {trial && recurring && <TrialNote trial={trial} currency={currency} recurring={recurring} />}
            {recurring && checkout.is_payment_required && (
              <p className="muted small">
                You will be charged {formatRecurring(total, currency, recurring)} until you cancel. Cancel any time from your customer portal.
              </p>
            )}
            <p className="muted small secure">Payments are processed securely. {checkout.organization.name} never sees your full card number.</p>
          </form>
        )}
      </section>
    </main>
  );
}

function priceCurrency(price: Price): string | null {
  return 'price_currency' in price ? price.price_currency : null;
}

function amountError(minor: number | null, price: Price): string | null {
  if (price.amount_type !== 'custom') return null;
  const cur = price.price_currency;
  if (minor === null) return 'Enter an amount.';
  if (price.minimum_amount != null && minor < price.minimum_amount) return `The amount must be at least ${formatMoney(price.minimum_amount, cur)}.`;
  if (price.maximum_amount != null && minor > price.maximum_amount) return `The amount must be at most ${formatMoney(price.maximum_amount, cur)}.`;
  if (minor < 0) return 'The amount cannot be negative.';
  return null;
}

function amountHint(price: Price, currency: string): string | undefined {
  if (price.amount_type !== 'custom') return undefined;
  const min = price.minimum_amount, max = price.maximum_amount;
  if (min != null && max != null) return `Between ${formatMoney(min, currency)} and ${formatMoney(max, currency)}.`;
  if (min != null) return `At least ${formatMoney(min, currency)}.`;
  if (max != null) return `At most ${formatMoney(max, currency)}.`;
  return undefined;
}

function isShownField(key: string, fields: AttachedCustomField[]): boolean {
  if (['customer_email', 'customer_name', 'amount', 'discount_code', 'customer_tax_id', 'card_number', 'card_expiry', 'card_cvc'].includes(key)) return true;
  if (key.startsWith('customer_billing_address')) return true;
  return fields.some((f) => key === `custom_field_data.${f.custom_field.slug}`);
}

function Totals({ checkout, currency, recurring, updating, trial }: { checkout: Checkout; currency: string; recurring: string | null; updating: boolean; trial: CheckoutTrial | null }) {
  const money = (n: number | null) => formatMoney(n ?? 0, currency);
  const d = checkout.discount;
  return (
    <dl className="totals" aria-label="Order total" aria-busy={updating}>
      <div>
        <dt>Subtotal</dt>
        <dd data-testid="checkout-subtotal">{money(checkout.subtotal_amount)}</dd>
      </div>
      {!!checkout.discount_amount && (
        <div className="discount-line">
          <dt>
            Discount{d ? ` (${d.code ?? d.name}${d.type === 'percentage' && d.basis_points != null ? `, ${d.basis_points / 100}%` : ''})` : ''}
          </dt>
          <dd data-testid="checkout-discount">−{money(checkout.discount_amount)}</dd>
        </div>
      )}
      <div>
        <dt>Tax</dt>
        <dd data-testid="checkout-tax">{money(checkout.tax_amount)}</dd>
      </div>
      {trial ? (
        <>
          {trial.firstCharge !== null && (
            <div>
              <dt>Total after trial</dt>
              <dd data-testid="checkout-after-trial">{money(trial.firstCharge)}</dd>
            </div>
          )}
          <div className="grand">
            <dt>Due today</dt>
            <dd data-testid="checkout-total">{money(0)}</dd>
          </div>
        </>
      ) : (
        <div className="grand">
          <dt>{recurring ? 'Total due today' : 'Total'}</dt>
          <dd data-testid="checkout-total">{money(checkout.total_amount)}</dd>
        </div>
      )}
      {recurring && d && d.duration !== 'forever' && !(trial && trial.firstCharge === null) && (
        <p className="muted small">
          The discount applies {d.duration === 'once' ? 'to the first payment' : `for ${d.duration_in_months ?? 1} months`}.
        </p>
      )}
    </dl>
  );
}

function CustomFieldInput({
  field,
  value,
  error,
  onChange,
}: {
  field: AttachedCustomField;
  value: string | boolean;
  error: string | undefined;
  onChange: (v: string | boolean) => void;
}) {
  const f = field.custom_field;
  const label = f.properties.form_label || f.name;
  const hint = f.properties.form_help_text ?? undefined;
  const placeholder = f.properties.form_placeholder ?? undefined;
  if (f.type === 'checkbox') {
    return (
      <div className={`field checkbox${error ? ' has-error' : ''}`}>
        <label>
          <input
            type="checkbox"
            name={f.slug}
            checked={value === true}
            aria-invalid={error ? true : undefined}
            required={field.required}
            onChange={(e) => onChange(e.target.checked)}
          />{' '}
          {label}
          {!field.required && <span className="muted"> (optional)</span>}
        </label>
        {hint && <p className="hint">{hint}</p>}
        {error && (
          <p className="field-error" role="alert">
            {error}
          </p>
        )}
      </div>
    );
  }
  return (
    <Field label={label} optional={!field.required} error={error} hint={hint}>
      {(p) => {
        const common = { ...p, name: f.slug, required: field.required, placeholder, value: String(value) };
        if (f.type === 'select') {
          return (
            <select {...common} onChange={(e) => onChange(e.target.value)}>
              <option value="">Choose…</option>
              {(f.properties.options ?? []).map((o) => (
                <option key={o.value} value={o.value}>
                  {o.label}
                </option>
              ))}
            </select>
          );
        }
        if (f.type === 'text' && f.properties.textarea) {
          return <textarea {...common} rows={3} maxLength={f.properties.max_length ?? undefined} onChange={(e) => onChange(e.target.value)} />;
        }
        if (f.type === 'number') {
          return <input {...common} type="number" step={1} min={f.properties.ge ?? undefined} max={f.properties.le ?? undefined} onChange={(e) => onChange(e.target.value)} />;
        }
        if (f.type === 'date') return <input {...common} type="date" onChange={(e) => onChange(e.target.value)} />;
        return <input {...common} type="text" maxLength={f.properties.max_length ?? undefined} onChange={(e) => onChange(e.target.value)} />;
      }}
    </Field>
  );
}

/** Billing address, country first; the other fields depend on the country. */
import { useMemo } from 'react';
import type { Address } from '../lib/types.ts';
import { countryName } from '../lib/format.ts';
import { Field } from './ui.tsx';

const COUNTRIES = (
  'AD AE AF AG AI AL AM AO AR AT AU AW AX AZ BA BB BD BE BF BG BH BI BJ BM BN BO BR BS BT BW BY BZ CA CD CF CG CH CI CK CL CM CN CO ' +
  'CR CV CW CY CZ DE DJ DK DM DO DZ EC EE EG ER ES ET FI FJ FK FM FO FR GA GB GD GE GF GG GH GI GL GM GN GP GQ GR GT GU GW GY HK HN ' +
  'HR HT HU ID IE IL IM IN IQ IS IT JE JM JO JP KE KG KH KI KM KN KR KW KY KZ LA LB LC LI LK LR LS LT LU LV LY MA MC MD ME MG MH MK ' +
  'ML MM MN MO MQ MR MS MT MU MV MW MX MY MZ NA NC NE NG NI NL NO NP NR NU NZ OM PA PE PF PG PH PK PL PM PR PS PT PW PY QA RE RO RS ' +
  'RW SA SB SC SE SG SH SI SK SL SM SN SO SR SS ST SV SX SZ TC TD TG TH TJ TL TM TN TO TR TT TV TW TZ UA UG US UY UZ VA VC VE VG VI ' +
  'VN VU WS XK YE YT ZA ZM ZW'
).split(' ');

/** Countries whose addresses need a state / province, with its label. */
const STATE_LABEL: Record<string, string> = { US: 'State', CA: 'Province', AU: 'State or territory', IN: 'State', BR: 'State', MX: 'State' };
const POSTAL_LABEL: Record<string, string> = { US: 'ZIP code', IN: 'PIN code', IE: 'Eircode' };
/** Countries without postal codes in everyday use. */
const NO_POSTAL = new Set(['AE', 'AG', 'AO', 'BS', 'BZ', 'CW', 'FJ', 'GH', 'HK', 'QA', 'TT', 'UG', 'ZW']);

export function guessCountry(): string {
  const lang = typeof navigator !== 'undefined' ? navigator.language : 'en-US';
  const region = /-([A-Z]{2})\b/.exec(lang)?.[1];
  return region && COUNTRIES.includes(region) ? region : 'US';
}

export function AddressFields({
  value,
  onChange,
  errors,
  prefix,
  full,
}: {
  value: Address;
  onChange: (a: Address) => void;
  errors: Record<string, string>;
  /** Key prefix of the errors, e.g. `customer_billing_address`. */
  prefix: string;
  /** Ask for street and city too (otherwise country and, where used, postal code / state). */
  full: boolean;
}) {
  const countries = useMemo(
    () => COUNTRIES.map((code) => ({ code, name: countryName(code) })).sort((a, b) => a.name.localeCompare(b.name)),
    [],
  );
  const c = value.country;
  const set = (k: keyof Address) => (e: { target: { value: string } }) => onChange({ ...value, [k]: e.target.value || null });
  const err = (k: string) => errors[`${prefix}.${k}`] ?? (k === 'country' ? errors[prefix] : undefined);
  return (
    <fieldset className="address">
      <legend>Billing address</legend>
      <Field label="Country" error={err('country')}>
        {(p) => (
          <select {...p} name="country" autoComplete="country" value={c} onChange={(e) => onChange({ country: e.target.value, line1: value.line1 ?? null, line2: value.line2 ?? null, city: value.city ?? null, postal_code: value.postal_code ?? null, state: null })} required>
            {countries.map((x) => (
              <option key={x.code} value={x.code}>
                {x.name}
              </option>
            ))}
          </select>
        )}
      </Field>
      {full && (
        <>
          <Field label="Address line 1" error={err('line1')}>
            {(p) => <input {...p} name="address-line1" autoComplete="address-line1" value={value.line1 ?? ''} onChange={set('line1')} />}
          </Field>
          <Field label="Address line 2" optional error={err('line2')}>
            {(p) => <input {...p} name="address-line2" autoComplete="address-line2" value={value.line2 ?? ''} onChange={set('line2')} />}
          </Field>
          <Field label="City" error={err('city')}>
            {(p) => <input {...p} name="city" autoComplete="address-level2" value={value.city ?? ''} onChange={set('city')} />}
          </Field>
        </>
      )}
      <div className="row">
        {!NO_POSTAL.has(c) && (
          <Field label={POSTAL_LABEL[c] ?? 'Postal code'} optional={!full && !STATE_LABEL[c]} error={err('postal_code')}>
            {(p) => <input {...p} name="postal-code" autoComplete="postal-code" value={value.postal_code ?? ''} onChange={set('postal_code')} />}
          </Field>
        )}
        {STATE_LABEL[c] && (
          <Field label={STATE_LABEL[c]} error={err('state')}>
            {(p) => <input {...p} name="state" autoComplete="address-level1" value={value.state ?? ''} onChange={set('state')} />}
          </Field>
        )}
      </div>
    </fieldset>
  );
}

/** The address as the API takes it: empty strings dropped. */
export function cleanAddress(a: Address): Address {
  const out: Address = { country: a.country };
  for (const k of ['line1', 'line2', 'city', 'postal_code', 'state'] as const) {
    const v = a[k]?.trim();
    if (v) out[k] = v;
  }
  return out;
}

/**
 * A free trial on a recurring product or a checkout link (`trial_interval` day/week/month/year and
 * `trial_interval_count` 1–1000, docs/billing.md "Trials"): the form inputs, the body fields and the
 * way lists and pages show it.
 */
import { NumberInput, SelectInput, maxValue, minValue, required, FormDataConsumer } from 'react-admin';

export type TrialInterval = 'day' | 'week' | 'month' | 'year';

export interface TrialFields {
  trial_interval?: TrialInterval | null;
  trial_interval_count?: number | null;
}

export interface TrialForm {
  trial_interval?: TrialInterval | 'none' | null;
  trial_interval_count?: number | null;
}

export const trialChoices = [
  { id: 'none', name: 'No trial' },
  { id: 'day', name: 'Days' },
  { id: 'week', name: 'Weeks' },
  { id: 'month', name: 'Months' },
  { id: 'year', name: 'Years' },
];

/** Form values → the API's fields: both null for no trial (also clears one on edit). */
export function trialToBody(d: TrialForm): { trial_interval: TrialInterval | null; trial_interval_count: number | null } {
  const interval = d.trial_interval && d.trial_interval !== 'none' ? d.trial_interval : null;
  return { trial_interval: interval, trial_interval_count: interval ? (d.trial_interval_count ?? null) : null };
}

/** API fields → form values. */
export const trialToForm = (t: TrialFields) => ({ trial_interval: t.trial_interval ?? 'none', trial_interval_count: t.trial_interval_count ?? null });

/** "14 days", "1 month", or "No trial". */
export function formatTrial(t: TrialFields, none = 'No trial'): string {
  if (!t.trial_interval || !t.trial_interval_count) return none;
  const n = t.trial_interval_count;
  return `${n} ${t.trial_interval}${n === 1 ? '' : 's'}`;
}

/** The trial's unit and length; the length only once a unit is chosen. `helperText` says what it does. */
export const TrialInputs = ({ helperText, noneLabel = 'No trial' }: { helperText: string; noneLabel?: string }) => (
  <>
    <SelectInput
      source="trial_interval"
      label="Free trial"
      choices={trialChoices.map((c) => (c.id === 'none' ? { ...c, name: noneLabel } : c))}
      defaultValue="none"
      helperText={helperText}
    />
    <FormDataConsumer<TrialForm>>
      {({ formData }) =>
        formData.trial_interval && formData.trial_interval !== 'none' ? (
          <NumberInput source="trial_interval_count" label="Trial length" min={1} max={1000} step={1} validate={[required(), minValue(1), maxValue(1000)]} />
        ) : null
      }
    </FormDataConsumer>
  </>
);

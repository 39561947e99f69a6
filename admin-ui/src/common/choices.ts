/** Choice lists shared by several resources (the API's enumerations, worded for people). */
export const recurringIntervals = [
  { id: 'none', name: 'One-time' },
  { id: 'month', name: 'Monthly' },
  { id: 'year', name: 'Yearly' },
];

export const currencies = ['usd', 'eur', 'gbp', 'cad', 'aud', 'chf', 'sek', 'nok', 'dkk', 'jpy', 'inr', 'brl'].map((c) => ({
  id: c,
  name: c.toUpperCase(),
}));

export const refundReasons = [
  { id: 'customer_request', name: 'Customer request' },
  { id: 'duplicate', name: 'Duplicate' },
  { id: 'fraudulent', name: 'Fraudulent' },
  { id: 'service_disruption', name: 'Service disruption' },
  { id: 'satisfaction_guarantee', name: 'Satisfaction guarantee' },
  { id: 'other', name: 'Other' },
];

export const cancellationReasons = [
  { id: 'customer_service', name: 'Customer service' },
  { id: 'low_quality', name: 'Low quality' },
  { id: 'missing_features', name: 'Missing features' },
  { id: 'switched_service', name: 'Switched service' },
  { id: 'too_complex', name: 'Too complex' },
  { id: 'too_expensive', name: 'Too expensive' },
  { id: 'unused', name: 'Unused' },
  { id: 'other', name: 'Other' },
];

export const benefitTypes = [
  { id: 'custom', name: 'Custom' },
  { id: 'license_keys', name: 'License keys' },
  { id: 'downloadables', name: 'File downloads' },
  { id: 'meter_credit', name: 'Meter credits' },
  { id: 'github_repository', name: 'GitHub repository access' },
  { id: 'discord', name: 'Discord role' },
];

export const benefitTypeName = (type: string) => benefitTypes.find((t) => t.id === type)?.name ?? type;

export const subscriptionStatuses = ['incomplete', 'incomplete_expired', 'trialing', 'active', 'past_due', 'canceled', 'unpaid'].map(
  (s) => ({ id: s, name: s.replace(/_/g, ' ') }),
);

export const humanize = (value: string | null | undefined) => (value ? value.replace(/_/g, ' ') : '—');

/** Trial lengths (no imports: entities read this). */
export const TRIAL_INTERVALS = ['day', 'week', 'month', 'year'] as const;
export type TrialInterval = (typeof TRIAL_INTERVALS)[number];

/** Every workflow's contract (inputs, results, activity interfaces), for the API and the worker. */
export type * from './benefits/contract.ts';
export type * from './checkouts/contract.ts';
export type * from './notifications/contract.ts';
export type * from './products/contract.ts';
export type * from './refunds/contract.ts';
export type * from './subscriptions/contract.ts';
export type * from './webhooks/contract.ts';

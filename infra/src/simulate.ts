/**
 * `npm run simulate -- --product <id> --months 12 [--usage events.csv] [--decline-at 3] [--country DE] [--discount <id>]`
 *
 * Prints a subscription's life of the product: every order (lines, discount, tax, total), every
 * charge, state change and mail, simulated on Temporal's time-skipping server with the real
 * workflows and pricing (simulate-engine.ts). The product is read from DATABASE_URL (the running
 * stack's database, read-only); everything the simulation writes goes to a scratch database.
 */
import { parseArgs } from 'node:util';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { loadConfig } from '../../api/src/config.ts';
import { formatReport, readUsageFile, simulate } from './simulate-engine.ts';

const { values } = parseArgs({
  options: {
    product: { type: 'string' },
    months: { type: 'string', default: '12' },
    usage: { type: 'string' },
    'decline-at': { type: 'string' },
    country: { type: 'string', default: 'US' },
    discount: { type: 'string' },
    json: { type: 'boolean', default: false },
  },
});
const fail = (msg: string): never => {
  console.error(`simulate: ${msg}`);
  process.exit(2);
};
if (!values.product) fail('--product <id> is required');
const months = Number(values.months);
if (!Number.isInteger(months) || months < 1 || months > 120) fail('--months must be an integer from 1 to 120');
const declineAt = values['decline-at'] != null ? Number(values['decline-at']) : null;
if (declineAt != null && (!Number.isInteger(declineAt) || declineAt < 1)) fail('--decline-at must be a renewal number ≥ 1');

// Temporal's own logs (the native core's included) stay quiet unless they are errors.
Runtime.install({ logger: new DefaultLogger('ERROR'), telemetryOptions: { logging: { filter: { core: 'ERROR', other: 'ERROR' }, forward: {} } } });
// Only the report goes to stdout (the scratch database's migration log goes to stderr).
const stdoutWrite = process.stdout.write.bind(process.stdout);
process.stdout.write = process.stderr.write.bind(process.stderr) as typeof process.stdout.write;
const report = await simulate({
  sourceUrl: loadConfig().DATABASE_URL,
  productId: values.product!,
  months,
  usage: values.usage ? readUsageFile(values.usage) : [],
  declineAt,
  country: values.country,
  discountId: values.discount ?? null,
  log: (line) => console.error(line),
});
process.stdout.write = stdoutWrite;
console.log(values.json ? JSON.stringify(report, null, 2) : formatReport(report));
process.exit(0);

/** Child process of log-lines.test.ts: the production logger writing `count` request lines, then `mode`. */
import { createLogger } from '../../api/src/kit/logger.ts';

const [mode, count] = [process.argv[2], Number(process.argv[3])];
const log = createLogger({ LOG_LEVEL: 'info', NODE_ENV: 'production' }, 'api');
for (let i = 0; i < count; i++) log.info({ requestId: `r${i}`, method: 'GET', path: '/v1/orders/', status: 200, durationMs: 1.5 }, 'request');
if (mode === 'exit') process.exit(0);
if (mode === 'throw') throw new Error('fails after logging');
// 'stay': keeps running, without logging again, until its stdin closes.
process.stdin.resume();
process.stdin.on('end', () => process.exit(0));

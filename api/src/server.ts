/** The API process: configuration, migrations, then HTTP on PORT. */
import { ConfigError, loadConfig } from './config.ts';
import { createDeps, closeDeps } from './deps.ts';
import { migrate } from './kit/db.ts';
import { createApp } from './app.ts';

let cfg;
try {
  cfg = loadConfig();
} catch (err) {
  if (err instanceof ConfigError) {
    console.error(err.message);
    process.exit(78);
  }
  throw err;
}
const deps = await createDeps(cfg, 'api');
const applied = await migrate(deps.orm);
if (applied.length) deps.log.info({ migrations: applied }, 'migrations applied');
const server = createApp(deps).listen(cfg.PORT, cfg.HOST, () => {
  deps.log.info({ url: cfg.PUBLIC_URL, port: cfg.PORT }, 'api listening');
});
// SIGTERM/SIGINT: stop accepting connections, let requests in flight finish (up to
// SHUTDOWN_GRACE_SECONDS; keep-alive connections are closed as they go idle), then close and exit 0.
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    deps.log.info({ signal }, 'api shutting down: finishing requests in flight');
    const idle = setInterval(() => server.closeIdleConnections(), 250);
    const force = setTimeout(() => {
      deps.log.warn('requests still in flight after SHUTDOWN_GRACE_SECONDS; closing their connections');
      server.closeAllConnections();
    }, cfg.SHUTDOWN_GRACE_SECONDS * 1000);
    server.close(() => {
      clearInterval(idle);
      clearTimeout(force);
      closeDeps(deps).then(
        () => process.exit(0),
        (err: unknown) => {
          deps.log.error({ err }, 'closing the API failed');
          process.exit(1);
        },
      );
    });
  });
}

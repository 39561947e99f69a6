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
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    server.close(() => void closeDeps(deps).then(() => process.exit(0)));
    setTimeout(() => process.exit(0), 5000).unref();
  });
}

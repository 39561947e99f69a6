/** Docker cannot run here, so docker-compose.yml is kept honest by reading it against the config module. */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { CONFIG_VARIABLES, DEFAULTS, loadConfig } from '../../api/src/config.ts';

type Service = { ports?: string[]; environment?: Record<string, string>; depends_on?: unknown };
const compose = parse(readFileSync(new URL('../../docker-compose.yml', import.meta.url), 'utf8'), { merge: true }) as {
  services: Record<string, Service>;
};
const hostPorts = (s: Service) => (s.ports ?? []).map((p) => Number(p.split(':')[0]));

describe('docker-compose.yml', () => {
  it('describes the whole stack', () => {
    expect(Object.keys(compose.services).sort()).toEqual(
      ['api', 'maildev', 'minio', 'postgres', 'temporal', 'temporal-ui', 'worker'].sort(),
    );
  });

  it('publishes the same ports as the embedded defaults', () => {
    expect(hostPorts(compose.services.postgres!)).toContain(DEFAULTS.PG_PORT);
    expect(hostPorts(compose.services.temporal!)).toContain(DEFAULTS.TEMPORAL_PORT);
    expect(hostPorts(compose.services['temporal-ui']!)).toContain(DEFAULTS.TEMPORAL_UI_PORT);
    expect(hostPorts(compose.services.minio!)).toContain(DEFAULTS.S3_PORT);
    expect(hostPorts(compose.services.maildev!)).toEqual(expect.arrayContaining([DEFAULTS.SMTP_PORT, DEFAULTS.MAIL_UI_PORT]));
    expect(hostPorts(compose.services.api!)).toContain(DEFAULTS.PORT);
  });

  it('gives the API and the worker only known, valid configuration', () => {
    for (const name of ['api', 'worker']) {
      const env = compose.services[name]!.environment!;
      const unknown = Object.keys(env).filter((k) => !CONFIG_VARIABLES.includes(k));
      expect(unknown, `${name} sets variables the config module does not know`).toEqual([]);
      const resolved = Object.fromEntries(
        Object.entries(env).map(([k, v]) => [k, String(v).replace(/\$\{SECRET[^}]*\}/, 'x'.repeat(40))]),
      );
      const cfg = loadConfig(resolved);
      expect(new URL(cfg.DATABASE_URL).hostname).toBe('postgres');
      expect(cfg.TEMPORAL_ADDRESS).toBe('temporal:7233');
      expect(new URL(cfg.S3_ENDPOINT).hostname).toBe('minio');
      expect(new URL(cfg.SMTP_URL).hostname).toBe('maildev');
    }
  });

  it('uses the credentials its services are started with', () => {
    const env = compose.services.api!.environment!;
    const minio = compose.services.minio!.environment!;
    expect(env.S3_ACCESS_KEY).toBe(minio.MINIO_ROOT_USER);
    expect(env.S3_SECRET_KEY).toBe(minio.MINIO_ROOT_PASSWORD);
    const pgEnv = compose.services.postgres!.environment!;
    expect(new URL(env.DATABASE_URL!).password).toBe(pgEnv.POSTGRES_PASSWORD);
    expect(new URL(env.DATABASE_URL!).pathname).toBe(`/${pgEnv.POSTGRES_DB}`);
  });
});

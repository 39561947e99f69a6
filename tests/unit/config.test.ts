import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../api/src/config.ts';

describe('configuration', () => {
  it('has embedded defaults for every variable', () => {
    const cfg = loadConfig({});
    expect(cfg.PORT).toBe(8000);
    expect(cfg.DATABASE_URL).toMatch(/^postgres:\/\/.*:5432\/emporia$/);
    expect(cfg.TEMPORAL_ADDRESS).toBe('127.0.0.1:7233');
    expect(cfg.SMTP_URL).toBe('smtp://127.0.0.1:1025');
  });

  it('names every wrong variable', () => {
    try {
      loadConfig({ PORT: 'eighty', DATABASE_URL: 'mysql://x@y/z', TEMPORAL_ADDRESS: 'nope' });
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      const vars = (err as ConfigError).problems.map((p) => p.variable).sort();
      expect(vars).toEqual(['DATABASE_URL', 'PORT', 'TEMPORAL_ADDRESS']);
      expect((err as Error).message).toMatch(/PORT: /);
    }
  });

  it('refuses the development secret in production', () => {
    expect(() => loadConfig({ NODE_ENV: 'production' })).toThrow(/SECRET: must be set in production/);
    expect(loadConfig({ NODE_ENV: 'production', SECRET: 'x'.repeat(40) }).NODE_ENV).toBe('production');
  });

  it('treats empty values as unset', () => {
    expect(loadConfig({ PORT: '' }).PORT).toBe(8000);
  });
});

describe('payment processor configuration', () => {
  it('defaults to the sandbox and requires a secret key for Stripe', () => {
    expect(loadConfig({}).PAYMENT_PROCESSOR).toBe('sandbox');
    expect(() => loadConfig({ PAYMENT_PROCESSOR: 'stripe' })).toThrow(/STRIPE_SECRET_KEY: is required/);
    expect(() => loadConfig({ PAYMENT_PROCESSOR: 'stripe', STRIPE_SECRET_KEY: 'pk_test_abc' })).toThrow(/STRIPE_SECRET_KEY/);
    expect(loadConfig({ PAYMENT_PROCESSOR: 'stripe', STRIPE_SECRET_KEY: 'sk_test_abc' }).PAYMENT_PROCESSOR).toBe('stripe');
  });
});

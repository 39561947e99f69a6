/** The Temporal client used by the API to start and signal workflows. */
import { Client, Connection } from '@temporalio/client';
import type { Config } from '../config.ts';

export async function connectTemporal(cfg: Pick<Config, 'TEMPORAL_ADDRESS' | 'TEMPORAL_NAMESPACE'>): Promise<Client> {
  const connection = await Connection.connect({ address: cfg.TEMPORAL_ADDRESS, connectTimeout: '10s' });
  return new Client({ connection, namespace: cfg.TEMPORAL_NAMESPACE });
}

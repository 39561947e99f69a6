/** The Temporal client used by the API to start and signal workflows. */
import * as grpc from '@grpc/grpc-js';
import { Client, Connection, defaultGrpcRetryOptions, makeGrpcRetryInterceptor } from '@temporalio/client';
import type { Config } from '../config.ts';

const closeStates = new WeakMap<Connection, { closed: boolean }>();

/**
 * A call that ends at once with CANCELLED, given to every attempt (first or retried) once the
 * connection is closed: the interceptor retries failed calls on a timer, and an attempt started on a
 * closed channel throws "Channel has been shut down" from that timer, where nothing can catch it.
 */
function cancelledCall(): NonNullable<ConstructorParameters<typeof grpc.InterceptingCall>[0]> {
  return {
    start(_metadata, listener) {
      // As grpc-js's own unary calls do, a null message before the status: the retry interceptor
      // keeps the first attempt's message callback and calls it on the final status.
      setImmediate(() => {
        listener?.onReceiveMessage?.(null);
        listener?.onReceiveStatus?.({ code: grpc.status.CANCELLED, details: 'The Temporal connection was closed', metadata: new grpc.Metadata() });
      });
    },
    cancelWithStatus() {},
    getPeer: () => '',
    sendMessageWithContext() {},
    sendMessage() {},
    startRead() {},
    halfClose() {},
    getAuthContext: () => null,
  };
}

export async function connectTemporal(cfg: Pick<Config, 'TEMPORAL_ADDRESS' | 'TEMPORAL_NAMESPACE'>): Promise<Client> {
  const state = { closed: false };
  // Inside the default retry interceptor, so every attempt (the retried ones too) passes through it.
  const stopWhenClosed: grpc.Interceptor = (options, nextCall) =>
    new grpc.InterceptingCall(state.closed ? cancelledCall() : nextCall(options));
  const connection = await Connection.connect({
    address: cfg.TEMPORAL_ADDRESS,
    connectTimeout: '10s',
    interceptors: [makeGrpcRetryInterceptor(defaultGrpcRetryOptions()), stopWhenClosed],
  });
  closeStates.set(connection, state);
  return new Client({ connection, namespace: cfg.TEMPORAL_NAMESPACE });
}

/** Closes the client's connection; calls still retrying end with CANCELLED instead of throwing later. */
export async function closeTemporal(client: Client): Promise<void> {
  const state = closeStates.get(client.connection as Connection);
  if (state) state.closed = true;
  await client.connection.close();
}

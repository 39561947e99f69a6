/** A plain HTTP forwarder on its own port, so a server's public URL can be known before it starts. */
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ForwardingProxy {
  port: number;
  /** Where requests go (set once the server is up). */
  target: string;
  close(): Promise<void>;
}

export async function forwardingProxy(): Promise<ForwardingProxy> {
  const proxy: ForwardingProxy = { port: 0, target: '', close: async () => {} };
  const server = createServer((req, res) => {
    const to = new URL(proxy.target);
    const upstream = request(
      { host: to.hostname, port: to.port, method: req.method, path: req.url, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.rawHeaders);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => res.writeHead(502).end());
    req.pipe(upstream);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  proxy.port = (server.address() as AddressInfo).port;
  proxy.close = () =>
    new Promise<void>((r) => {
      server.closeAllConnections();
      server.close(() => r());
    });
  return proxy;
}

import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createApp } from './app.ts';
import type { ApiDeps } from './deps.ts';

export interface RunningApi {
  server: Server;
  url: string;
  close(): Promise<void>;
}

/** Serves the API; port 0 picks a free port (tests). */
export async function startApi(deps: ApiDeps, host: string, port: number): Promise<RunningApi> {
  const app = createApp(deps);
  const server = app.listen(port, host);
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  const address = server.address() as AddressInfo;
  const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    server,
    url: `http://${shownHost === '0.0.0.0' ? '127.0.0.1' : shownHost}:${address.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

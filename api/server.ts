import http, { STATUS_CODES, type Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type { AddressInfo } from 'node:net';
import { createApp } from './app.ts';
import type { ApiDeps } from './deps.ts';
import { headersTooLarge } from './http/errors.ts';
import { startRowTextHelper } from './resources/market-makers/row-text-threads.ts';

/** A request line and headers (a long query string) up to this size are read; beyond it, 431. */
const MAX_HEADER_BYTES = 64 * 1024;

/**
 * A request Node could not parse gets the interface's error shape, not Node's empty answer.
 * What the client still sends is read and dropped until it has the answer, so the
 * connection ends cleanly instead of being reset under it.
 */
function answerClientError(err: NodeJS.ErrnoException, socket: Duplex): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const [status, detail] = err.code === 'HPE_HEADER_OVERFLOW' ? [headersTooLarge.status, headersTooLarge.detail] : [400, 'Bad request: the request could not be read.'];
  const body = JSON.stringify({ detail });
  socket.on('data', () => {});
  socket.resume();
  socket.end(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
  setTimeout(() => socket.destroy(), 5_000).unref();
}

export interface RunningApi {
  server: Server;
  url: string;
  close(): Promise<void>;
}

/** Serves the API; port 0 picks a free port (tests). */
export async function startApi(deps: ApiDeps, host: string, port: number): Promise<RunningApi> {
  const app = createApp(deps);
  // The market-maker answers' second core, ready before the first of them.
  startRowTextHelper();
  const server = http.createServer({ maxHeaderSize: MAX_HEADER_BYTES }, app.callback());
  server.on('clientError', answerClientError);
  server.listen(port, host);
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

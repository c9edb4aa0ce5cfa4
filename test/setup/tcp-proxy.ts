import net from 'node:net';

/** A TCP relay in front of the database: `cut()` is an outage (connections dropped, new ones refused), `restore()` its end. */
export interface TcpProxy {
  port: number;
  /** The database URL with its host and port replaced by the proxy's. */
  url(databaseUrl: string): string;
  cut(): Promise<void>;
  restore(): Promise<void>;
  close(): Promise<void>;
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const sockets = new Set<net.Socket>();
  let server: net.Server | undefined;
  let port = 0;
  const listen = async () => {
    if (server) return;
    server = net.createServer((client) => {
      const upstream = net.connect(target.port, target.host);
      for (const s of [client, upstream]) {
        sockets.add(s);
        s.on('close', () => sockets.delete(s));
        s.on('error', () => s.destroy());
      }
      client.pipe(upstream).pipe(client);
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
    await new Promise<void>((resolve) => server!.listen(port, '127.0.0.1', resolve));
    port = (server!.address() as net.AddressInfo).port;
  };
  const cut = async () => {
    const running = server;
    const closing = running ? new Promise((resolve) => running.close(resolve)) : Promise.resolve();
    for (const s of sockets) s.destroy();
    await closing;
    server = undefined;
  };
  await listen();
  return {
    port,
    url(databaseUrl) {
      const parsed = new URL(databaseUrl);
      parsed.hostname = '127.0.0.1';
      parsed.port = String(port);
      return parsed.toString();
    },
    cut,
    restore: listen,
    close: cut,
  };
}

import net from 'node:net';

/** A loopback port that was free a moment ago, for a gateway process started by the bench or the soak. */
export async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

import http from 'node:http';
import { once } from 'node:events';
import { AddressInfo } from 'node:net';

/** A loopback receiver of webhook deliveries, keeping each body as sent. */
export async function startReceiver() {
  const bodies: string[] = [];
  const receiver = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      bodies.push(Buffer.concat(chunks).toString('utf8'));
      res.writeHead(200).end();
    });
  });
  receiver.listen(0, '127.0.0.1');
  await once(receiver, 'listening');
  return {
    url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`,
    bodies,
    close: () => new Promise<void>((resolve) => receiver.close(() => resolve())),
  };
}

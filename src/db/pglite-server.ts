import net from 'node:net';
import type { PGlite } from '@electric-sql/pglite';

/**
 * Serves a PGlite database on a TCP port to ordinary PostgreSQL clients (the `pg` driver).
 *
 * PGlite runs one session. Many client connections share it safely only if each one has the database
 * to itself from its first message until PGlite says it is idle again: ReadyForQuery with status 'I'.
 * Until then (an extended-protocol exchange Parse/Bind/Execute/Sync, or a whole transaction) the other
 * connections' messages wait. pglite-socket keeps connections apart only inside transactions, so the
 * unnamed statements and portals of concurrent queries clobber each other; this server does not.
 */
export class PGliteServer {
  private readonly server: net.Server;
  private readonly waiting: Connection[] = [];
  /** Named statements prepared in the session, by any connection (their names are digests of their text). */
  private readonly prepared = new Set<string>();
  private owner: Connection | null = null;
  private running = false;
  private closing = false;

  constructor(
    private readonly db: PGlite,
    private readonly maxConnections: number,
  ) {
    this.server = net.createServer((socket) => this.accept(socket));
    this.server.maxConnections = maxConnections;
  }

  async listen(host: string, port: number): Promise<string> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, host, () => resolve());
    });
    const address = this.server.address() as net.AddressInfo;
    return `${address.address}:${address.port}`;
  }

  async close(): Promise<void> {
    this.closing = true;
    for (const c of [...this.waiting, ...(this.owner ? [this.owner] : [])]) c.socket.destroy();
    await new Promise((resolve) => this.server.close(resolve));
  }

  private accept(socket: net.Socket): void {
    socket.setNoDelay(true);
    const connection = new Connection(socket, (c) => {
      if (c !== this.owner && !this.waiting.includes(c)) this.waiting.push(c);
      this.schedule();
    });
    socket.on('close', () => void this.drop(connection));
    socket.on('error', () => socket.destroy());
  }

  /** A closed connection gives the database back, rolling back what it left open. */
  private async drop(connection: Connection): Promise<void> {
    connection.closed = true;
    const index = this.waiting.indexOf(connection);
    if (index >= 0) this.waiting.splice(index, 1);
    if (this.owner === connection) {
      if (!this.closing && this.db.isInTransaction()) await this.db.exec('ROLLBACK').catch(() => undefined);
      this.owner = null;
    }
    this.schedule();
  }

  private schedule(): void {
    if (!this.running && !this.closing) void this.run();
  }

  private async run(): Promise<void> {
    this.running = true;
    try {
      for (;;) {
        const connection = this.owner ?? this.nextWaiting();
        if (!connection) return;
        this.owner = connection;
        const message = connection.messages.shift();
        if (!message) return; // the owner has more to say (mid-exchange or mid-transaction): wait for it
        const name = parsedStatementName(message);
        if (name && this.prepared.has(name)) {
          // Another connection prepared this very text under this name: the session has it already.
          if (!connection.closed) connection.socket.write(PARSE_COMPLETE);
          continue;
        }
        const output: Uint8Array[] = [];
        try {
          await this.db.runExclusive(() =>
            // PGlite reuses the chunk's memory for the next one: keep a copy.
            this.db.execProtocolRawStream(message, { onRawData: (chunk: Uint8Array) => output.push(chunk.slice()) }),
          );
        } catch {
          // PGlite itself failed on this message: end that connection (drop() rolls back and frees the database).
          connection.socket.destroy();
          await this.drop(connection);
          continue;
        }
        const reply = Buffer.concat(output);
        if (name && reply[0] === PARSE_COMPLETE[0]) this.prepared.add(name);
        if (!connection.closed && reply.length) connection.socket.write(reply);
        const status = lastReadyStatus(reply);
        if (status === 'I' || connection.closed) {
          this.owner = null;
          if (connection.messages.length && !connection.closed) this.waiting.push(connection);
        }
      }
    } finally {
      this.running = false;
    }
  }

  private nextWaiting(): Connection | undefined {
    while (this.waiting.length) {
      const next = this.waiting.shift()!;
      if (!next.closed && next.messages.length) return next;
    }
    return undefined;
  }
}

const SSL_REQUEST = 80877103;
const CANCEL_REQUEST = 80877102;
const PROTOCOL_3 = 196608;

/** One client connection: splits its bytes into protocol messages and queues them. */
class Connection {
  readonly messages: Uint8Array[] = [];
  closed = false;
  private buffer: Buffer = Buffer.alloc(0);
  private started = false;

  constructor(
    readonly socket: net.Socket,
    private readonly onMessage: (connection: Connection) => void,
  ) {
    socket.on('data', (data) => this.receive(data));
  }

  private receive(data: Buffer): void {
    this.buffer = this.buffer.length ? Buffer.concat([this.buffer, data]) : data;
    let added = false;
    for (;;) {
      if (!this.started) {
        if (this.buffer.length < 8) break;
        const length = this.buffer.readInt32BE(0);
        const code = this.buffer.readInt32BE(4);
        if (this.buffer.length < length) break;
        if (code === SSL_REQUEST) {
          this.buffer = this.buffer.subarray(length);
          this.socket.write('N');
          continue;
        }
        if (code === CANCEL_REQUEST) {
          this.buffer = this.buffer.subarray(length);
          continue;
        }
        if (code === PROTOCOL_3) this.started = true;
        this.messages.push(new Uint8Array(this.buffer.subarray(0, length)));
        this.buffer = this.buffer.subarray(length);
        added = true;
        continue;
      }
      if (this.buffer.length < 5) break;
      const length = 1 + this.buffer.readInt32BE(1);
      if (this.buffer.length < length) break;
      this.messages.push(new Uint8Array(this.buffer.subarray(0, length)));
      this.buffer = this.buffer.subarray(length);
      added = true;
    }
    if (added) this.onMessage(this);
  }
}

const PARSE_COMPLETE = Buffer.from([0x31, 0, 0, 0, 4]);

/** The statement name of a Parse message ('P', length, name, text, ...), if it is one and names one. */
function parsedStatementName(message: Uint8Array): string | undefined {
  if (message[0] !== 0x50 || message.length < 6 || message[5] === 0) return undefined;
  const end = message.indexOf(0, 5);
  return end > 5 ? Buffer.from(message.buffer, message.byteOffset + 5, end - 5).toString('utf8') : undefined;
}

/** The transaction status of the last ReadyForQuery ('Z') message in a reply, if it has one. */
function lastReadyStatus(reply: Buffer): string | undefined {
  let status: string | undefined;
  let offset = 0;
  while (offset + 5 <= reply.length) {
    const type = reply[offset];
    const length = reply.readInt32BE(offset + 1);
    if (type === 0x5a && length === 5 && offset + 6 <= reply.length) status = String.fromCharCode(reply[offset + 5]);
    offset += 1 + length;
  }
  return status;
}

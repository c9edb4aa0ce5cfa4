import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { logger } from '../../common/logger';

/** The advisory lock key of a chain's follower: one per chain across every process on the database. */
const LOCK_SQL = `SELECT pg_try_advisory_lock(hashtext('nftgw:chain-follower'), hashtext($1)) AS locked`;

/**
 * The advisory lock that makes one process the follower of a chain (docs/chain.md): held on a connection of
 * its own, so that it is freed when that connection ends, whether the process stops or dies. The embedded
 * database is one process's alone: there the lock is always this process's.
 */
export class ChainLock {
  private client: Client | undefined;

  /** `onLost`: the lock's connection ended while held (the lock is gone with it). */
  constructor(
    private readonly ds: DataSource,
    private readonly chainId: string,
    private readonly onLost: () => void,
  ) {}

  /** Takes the lock on a connection of its own; false when another process holds it. */
  async take(): Promise<boolean> {
    const url = (this.ds.options as { url?: string }).url;
    if (!url) return true;
    const client = new Client({ connectionString: url, application_name: `nftgw-chain-${this.chainId}` });
    client.on('error', () => this.lost(client));
    try {
      await client.connect();
      const [{ version }] = (await client.query('SELECT version()')).rows as { version: string }[];
      if (version.includes('PGlite')) {
        await client.end();
        return true;
      }
      const [{ locked }] = (await client.query(LOCK_SQL, [this.chainId])).rows as { locked: boolean }[];
      if (!locked) {
        await client.end();
        return false;
      }
    } catch (err) {
      await client.end().catch(() => undefined);
      throw err;
    }
    client.on('end', () => this.lost(client));
    this.client = client;
    logger.info('following the chain', { chainId: this.chainId });
    return true;
  }

  /** Frees the lock (ends its connection), if held. */
  async release(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    if (client) {
      client.removeAllListeners('end');
      await client.end().catch(() => undefined);
    }
  }

  private lost(client: Client): void {
    if (this.client !== client) return;
    this.client = undefined;
    this.onLost();
  }
}

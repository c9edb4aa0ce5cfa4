import Redis from 'ioredis';
import { logger } from '../../common/logger';

/**
 * Closes a Redis client and resolves once its socket is gone, so that nothing of Redis outlives the app
 * (while ioredis waits between reconnects there is no socket to wait for).
 */
export async function closeRedis(client: Redis): Promise<void> {
  if (client.status === 'end') return;
  const ended = client.status === 'reconnecting' ? Promise.resolve() : new Promise((resolve) => client.once('end', resolve));
  client.disconnect();
  await ended;
}

/** A warning logged at most every `everyMs` (30 s): an outage of Redis must not flood the log. */
export function throttledWarning(message: string, everyMs = 30_000): (reason: string) => void {
  let last = 0;
  return (reason) => {
    const now = Date.now();
    if (now - last < everyMs) return;
    last = now;
    logger.warn(message, { reason });
  };
}

import WebSocket from 'ws';
import { createClient } from 'graphql-ws';

export interface ReceivedEvent {
  /** Its Node id: what a client resumes `after`. */
  id: string;
  /** Its position in the log (REST's id of the event). */
  position: string;
  type: string;
  assetId: string | null;
  collectionId: string | null;
  occurredAt: string;
  data: Record<string, unknown>;
}

/** One graphql-ws subscription of a test, over a real WebSocket (the `ws` package), collecting what it receives. */
export interface Subscriber {
  events: ReceivedEvent[];
  /** Errors the server sent (formatted GraphQL errors), or the close event that ended the subscription. */
  errors: unknown[];
  completed: boolean;
  /** The server has acknowledged the connection. */
  connected: boolean;
  /** The close code of the socket, once closed. */
  closeCode?: number;
  /** Waits until `condition` holds (polling every 20 ms), failing after `ms`. */
  until(condition: () => boolean, ms?: number, what?: string): Promise<void>;
  /** Completes the subscription and closes the socket. */
  stop(): Promise<void>;
}

export const EVENTS_SUBSCRIPTION = /* GraphQL */ `
  subscription ($after: ID, $types: [String!], $collectionId: String, $assetId: ID) {
    events(after: $after, types: $types, collectionId: $collectionId, assetId: $assetId) {
      id position type assetId collectionId occurredAt data
    }
  }`;

export function subscribe(url: string, variables: Record<string, unknown> = {}, query = EVENTS_SUBSCRIPTION): Subscriber {
  const subscriber: Subscriber = {
    events: [],
    errors: [],
    completed: false,
    connected: false,
    async until(condition, ms = 15_000, what = 'the condition') {
      const deadline = Date.now() + ms;
      while (!condition()) {
        if (Date.now() > deadline) {
          throw new Error(`timed out waiting for ${what}; received ${subscriber.events.length} events, errors ${JSON.stringify(subscriber.errors)}`);
        }
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
    async stop() {
      unsubscribe();
      await client.dispose();
    },
  };
  const client = createClient({
    url: `${url.replace(/^http/, 'ws')}/graphql`,
    webSocketImpl: WebSocket,
    retryAttempts: 0,
    lazy: true,
    on: { connected: () => (subscriber.connected = true), closed: (event) => (subscriber.closeCode = (event as { code: number }).code) },
  });
  const unsubscribe = client.subscribe<{ events: ReceivedEvent }>(
    { query, variables },
    {
      next: (result) => {
        if (result.errors) subscriber.errors.push(...result.errors);
        if (result.data?.events) subscriber.events.push(result.data.events);
      },
      error: (error) => {
        if (Array.isArray(error)) subscriber.errors.push(...error);
        else subscriber.errors.push({ code: (error as { code?: number }).code, reason: (error as { reason?: string }).reason });
      },
      complete: () => (subscriber.completed = true),
    },
  );
  return subscriber;
}

import type { AppOptions } from '../../src/app';
import { ChainNode, startChainNode } from './chain-node';
import { startServer, TestServer } from './server';

/** The world of the approval tests: a local node, a server answering the API, a follower of the chain with the marketplace's operator set. */
export interface OperatorChain {
  node: ChainNode;
  api: TestServer;
  follower: TestServer;
  /** The operator (the node's fifth account). */
  operator: string;
  close(): Promise<void>;
}

/** Starts an OperatorChain on `chainId` (the file's own); `options` go to both servers. */
export async function startOperatorChain(chainId: string, options: AppOptions = {}): Promise<OperatorChain> {
  const node = await startChainNode(Number(chainId));
  const operator = node.accounts[4];
  const api = await startServer(options);
  const follower = await startServer({ ...options, chains: { follow: [{ chainId, rpcUrl: node.url, confirmations: 0, operator }], pollMs: 50, blockRange: 2000 } });
  return {
    node,
    api,
    follower,
    operator,
    async close() {
      await follower.close();
      await api.close();
      await node.close();
    },
  };
}

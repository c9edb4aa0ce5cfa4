import { IncomingHttpHeaders } from 'node:http';
import { randomBytes } from 'node:crypto';
import { ChainNode, startChainNode } from './setup/chain-node';
import { GatewayProcess, startGatewayProcess } from './setup/gateway-process';
import { startCollector, until } from './setup/otlp-collector';
import { startServer, TestServer } from './setup/server';
import { startRpcProxy } from './setup/rpc-proxy';

/**
 * Issue #39 item 3, the chain's node: a request that reads the chain (registering a collection on a
 * followed chain reads the contract's ERC-173 `owner()`) has a client span per JSON-RPC call in its own
 * trace, under its operation, named after the method, and the call carries a traceparent naming that span
 * to the node. The real service (src/main.ts in a child process) follows a local EVM node through a proxy
 * on loopback that keeps the headers of each call, and exports to an OTLP/HTTP receiver in this process.
 */
const CHAIN_ID = '31353';
const CLIENT = 3;

/** A JSON-RPC proxy in front of the node: each call's methods and headers, then the node's answer. */
async function startRecordingProxy(target: string) {
  const received: { methods: string[]; headers: IncomingHttpHeaders }[] = [];
  const proxy = await startRpcProxy(target, ({ call, headers }, answer) => {
    received.push({ methods: (Array.isArray(call) ? call : [call]).map((c) => c.method!), headers });
    return answer;
  });
  return { ...proxy, received };
}

let node: ChainNode;
let proxy: Awaited<ReturnType<typeof startRecordingProxy>>;
let collector: Awaited<ReturnType<typeof startCollector>>;
let local: TestServer;
let gateway: GatewayProcess;

beforeAll(async () => {
  node = await startChainNode(Number(CHAIN_ID));
  [proxy, collector, local] = await Promise.all([startRecordingProxy(node.url), startCollector(), startServer()]);
  gateway = await startGatewayProcess({
    OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_SERVICE_NAME: 'gateway-traced-chain',
    OTEL_BSP_SCHEDULE_DELAY: '50',
    [`CHAIN_RPC_${CHAIN_ID}`]: proxy.url,
    [`CHAIN_CONFIRMATIONS_${CHAIN_ID}`]: '0',
    CHAIN_POLL_MS: '50',
  });
}, 720_000);

afterAll(async () => {
  await gateway?.stop();
  await Promise.all([local?.close(), collector?.close(), proxy?.close()]);
  await node?.close();
});

const hex = (bytes: number) => randomBytes(bytes).toString('hex');

test("when a request reads the chain, then each JSON-RPC call is a client span of the request's trace under its operation, and the call carries its traceparent to the node", async () => {
  const contract = await node.deploy('TestERC721Owned');
  const { key } = await local.key({ address: node.accounts[0] });
  const traceId = hex(16);
  // The follower may not have reached the contract's block yet (a 409 or 422 says so): the request is sent again until it has.
  let created: { owner_verification: string } | undefined;
  for (const deadline = Date.now() + 30_000; !created; await new Promise((resolve) => setTimeout(resolve, 100))) {
    const res = await fetch(`${gateway.url}/v1/collections`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'access-token': key, traceparent: `00-${traceId}-${hex(8)}-01` },
      body: JSON.stringify({ contract_address: contract, chain_id: CHAIN_ID, name: `Traced chain ${contract.slice(2, 10)}` }),
    });
    if (res.status === 200) created = (await res.json()) as { owner_verification: string };
    else if (Date.now() > deadline) throw new Error(`the collection was not registered: ${res.status} ${await res.text()}`);
    else await res.text();
  }
  expect(created.owner_verification).toBe('verified');

  // owner() is an eth_call (after the head it is read at, eth_blockNumber): each call its own span.
  const call = await until(
    () => collector.spans.find((s) => s.traceId === traceId && s.kind === CLIENT && s.name === 'eth_call'),
    'the eth_call span in the request trace',
  );
  const calls = collector.spans.filter((s) => s.traceId === traceId && s.attributes['rpc.system'] === 'jsonrpc');
  for (const c of calls) {
    expect(c).toMatchObject({ kind: CLIENT, parentSpanId: call.parentSpanId });
    expect(c.attributes).toMatchObject({ 'rpc.method': c.name, 'server.address': '127.0.0.1', 'gateway.chain_id': CHAIN_ID, 'http.response.status_code': 200 });
  }
  // Under the request's operation (the mutation's span), itself under the HTTP span.
  const operation = await until(() => collector.spans.find((s) => s.traceId === traceId && s.spanId === call.parentSpanId), 'the span above the call');
  expect(operation.attributes['graphql.operation.type']).toBe('mutation');
  // The node was told which span called it.
  const seen = proxy.received.find((r) => r.headers.traceparent === `00-${traceId}-${call.spanId}-01`);
  expect(seen?.methods).toEqual(['eth_call']);
});

test('when the follower applies new blocks, then their reading is a trace of its own (`chain range`) with its eth_getLogs under it, and a poll that finds nothing sends no traceparent', async () => {
  const contract = await node.deploy('TestERC721');
  await node.mint(contract, node.accounts[1], 1n);

  const getLogs = await until(
    () =>
      collector.spans.find((s) => s.name === 'eth_getLogs' && s.kind === CLIENT && collector.spans.some((r) => r.spanId === s.parentSpanId && r.name === 'chain range' && r.parentSpanId === undefined)),
    'an eth_getLogs span under a chain range trace',
    30_000,
  );
  expect(getLogs.attributes).toMatchObject({ 'rpc.system': 'jsonrpc', 'gateway.chain_id': CHAIN_ID });
  expect(proxy.received.some((r) => r.methods.includes('eth_getLogs') && r.headers.traceparent === `00-${getLogs.traceId}-${getLogs.spanId}-01`)).toBe(true);
  // The polls between blocks ask for the head and make no trace: nothing to follow on the node's side either.
  expect(proxy.received.some((r) => r.methods.length === 1 && r.methods[0] === 'eth_blockNumber' && r.headers.traceparent === undefined)).toBe(true);
});

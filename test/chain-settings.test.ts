import { chainSettingsFromEnv } from '../src/config';

/** Issue #30: the settings that start chain followers (docs/chain.md "Settings"). */
describe('chain settings', () => {
  test('when no CHAIN_RPC_<chain_id> is set, then no chain is followed', () => {
    expect(chainSettingsFromEnv({}).follow).toEqual([]);
  });

  test('when several chains are set, then each is followed with its own default confirmations unless told otherwise', () => {
    const settings = chainSettingsFromEnv({
      CHAIN_RPC_137: 'https://polygon.example/rpc',
      CHAIN_RPC_1: 'http://127.0.0.1:8545',
      CHAIN_RPC_31337: 'http://127.0.0.1:8546',
      CHAIN_CONFIRMATIONS_31337: '2',
      CHAIN_POLL_MS: '100',
    });
    expect(settings.follow).toEqual([
      { chainId: '1', rpcUrl: 'http://127.0.0.1:8545', confirmations: 12 },
      { chainId: '137', rpcUrl: 'https://polygon.example/rpc', confirmations: 64 },
      { chainId: '31337', rpcUrl: 'http://127.0.0.1:8546', confirmations: 2 },
    ]);
    expect(settings.pollMs).toBe(100);
    expect(settings.stepTransfers).toBe(5000);
    expect(chainSettingsFromEnv({ CHAIN_STEP_TRANSFERS: '200' }).stepTransfers).toBe(200);
    expect(chainSettingsFromEnv({ CHAIN_RPC_1: 'http://node', CHAIN_CONFIRMATIONS: '0' }).follow[0].confirmations).toBe(0);
  });

  test("when CHAIN_OPERATOR_<chain_id> is set, then that chain's approvals of the operator are followed; malformed or for an unfollowed chain, the start is refused", () => {
    const operator = '0x00000000000000ADc04C56Bf30aC9d3c0aAF14dC';
    expect(chainSettingsFromEnv({ CHAIN_RPC_1: 'http://node', CHAIN_OPERATOR_1: operator }).follow[0].operator).toBe(operator.toLowerCase());
    expect(chainSettingsFromEnv({ CHAIN_RPC_1: 'http://node' }).follow[0].operator).toBeUndefined();
    expect(() => chainSettingsFromEnv({ CHAIN_RPC_1: 'http://node', CHAIN_OPERATOR_1: 'seaport' })).toThrow(/CHAIN_OPERATOR_1 must be an address/);
    expect(() => chainSettingsFromEnv({ CHAIN_RPC_1: 'http://node', CHAIN_OPERATOR_5: operator })).toThrow(/CHAIN_OPERATOR_5 is set but CHAIN_RPC_5 is not/);
  });

  test('when a chain setting is malformed, then the start is refused naming the variable', () => {
    expect(() => chainSettingsFromEnv({ CHAIN_RPC_mainnet: 'http://node' })).toThrow(/CHAIN_RPC_mainnet: the suffix must be an EIP-155 chain id/);
    expect(() => chainSettingsFromEnv({ CHAIN_RPC_1: 'ws://node' })).toThrow(/CHAIN_RPC_1 must be an http\(s\):\/\/ URL/);
    expect(() => chainSettingsFromEnv({ CHAIN_RPC_1: 'http://node', CHAIN_CONFIRMATIONS: '-1' })).toThrow(/CHAIN_CONFIRMATIONS must be a non-negative integer/);
  });
});

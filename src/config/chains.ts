import { intFromEnv } from './env-readers';

/**
 * Confirmations a block needs before the chain follower applies it, by chain id, when CHAIN_CONFIRMATIONS
 * does not say (docs/chain.md): about the depth of the reorgs each chain has seen; 0 for local nodes.
 */
export const DEFAULT_CHAIN_CONFIRMATIONS: Record<string, number> = {
  '1': 12,
  '11155111': 6,
  '137': 64,
  '56': 15,
  '43114': 1,
  '31337': 0,
  '1337': 0,
};
const FALLBACK_CHAIN_CONFIRMATIONS = 12;

/** One chain the gateway follows (CHAIN_RPC_<chain_id>). */
export interface ChainFollowSettings {
  chainId: string;
  rpcUrl: string;
  /** Blocks on top of a block before it is applied (CHAIN_CONFIRMATIONS_<chain_id>, else CHAIN_CONFIRMATIONS, else the chain's default). */
  confirmations: number;
  /**
   * CHAIN_OPERATOR_<chain_id>: the marketplace's operator on this chain (lower case), the address sellers approve
   * (setApprovalForAll, approve) so that their listings can be filled; unset: approvals are not followed.
   */
  operator?: string;
}

export interface ChainSettings {
  /** Every CHAIN_RPC_<chain_id> set; none: no follower runs. */
  follow: ChainFollowSettings[];
  /** CHAIN_POLL_MS: the follower asks its node for the head this often when it has caught up. */
  pollMs: number;
  /** CHAIN_BLOCK_RANGE: blocks asked for in one eth_getLogs call while catching up. */
  blockRange: number;
  /** CHAIN_STEP_TRANSFERS: transfers applied in one transaction at most (whole blocks); CHAIN_STEP_TRANSFERS_DEFAULT when not given. */
  stepTransfers?: number;
}

export const CHAIN_STEP_TRANSFERS_DEFAULT = 5000;

/** CHAIN_OPERATOR_<chain_id>: an address ("0x" + 40 hex digits), in lower case; undefined when unset. */
function operatorFromEnv(chainId: string, env: NodeJS.ProcessEnv): string | undefined {
  const name = `CHAIN_OPERATOR_${chainId}`;
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  if (!/^0x[0-9a-fA-F]{40}$/.test(raw)) throw new Error(`${name} must be an address ("0x" + 40 hex digits), got "${raw}"`);
  return raw.toLowerCase();
}

/** The chains to follow, from CHAIN_RPC_<chain_id>=http(s)://... and the confirmation settings. */
export function chainSettingsFromEnv(env: NodeJS.ProcessEnv): ChainSettings {
  const follow: ChainFollowSettings[] = [];
  for (const [name, raw] of Object.entries(env)) {
    const match = /^CHAIN_RPC_(.*)$/.exec(name);
    if (!match || raw === undefined || raw === '') continue;
    const chainId = match[1];
    if (!/^[1-9]\d{0,19}$/.test(chainId)) throw new Error(`${name}: the suffix must be an EIP-155 chain id (a positive integer), got "${chainId}"`);
    if (!/^https?:\/\/\S+$/.test(raw)) throw new Error(`${name} must be an http(s):// URL of a JSON-RPC node, got "${raw}"`);
    const fallback = intFromEnv('CHAIN_CONFIRMATIONS', DEFAULT_CHAIN_CONFIRMATIONS[chainId] ?? FALLBACK_CHAIN_CONFIRMATIONS, env);
    const operator = operatorFromEnv(chainId, env);
    follow.push({ chainId, rpcUrl: raw, confirmations: intFromEnv(`CHAIN_CONFIRMATIONS_${chainId}`, fallback, env), ...(operator ? { operator } : {}) });
  }
  for (const name of Object.keys(env)) {
    const match = /^CHAIN_OPERATOR_(.*)$/.exec(name);
    if (match && env[name] && !follow.some((c) => c.chainId === match[1])) throw new Error(`${name} is set but CHAIN_RPC_${match[1]} is not: an operator is only followed on a followed chain`);
  }
  follow.sort((a, b) => Number(a.chainId) - Number(b.chainId));
  return {
    follow,
    pollMs: Math.max(10, intFromEnv('CHAIN_POLL_MS', 2000, env)),
    blockRange: Math.max(1, intFromEnv('CHAIN_BLOCK_RANGE', 2000, env)),
    stepTransfers: Math.max(1, intFromEnv('CHAIN_STEP_TRANSFERS', CHAIN_STEP_TRANSFERS_DEFAULT, env)),
  };
}

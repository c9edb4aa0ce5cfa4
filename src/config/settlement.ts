import { intFromEnv, oneOf } from './env-readers';

/** SETTLEMENT: how a sale settles (docs/chain.md "Settlement on chain"). */
export const SETTLEMENT_MODES = ['offchain', 'chain'] as const;
export type SettlementMode = (typeof SETTLEMENT_MODES)[number];

export interface SettlementSettings {
  /** offchain (default): a sale completes at once; chain: its order is pending until the follower sees the transfer. */
  mode: SettlementMode;
  /** SETTLEMENT_DEADLINE: seconds a pending order waits for its transfer before it fails. Default 3600. */
  deadlineSeconds: number;
}

export const DEFAULT_SETTLEMENT_DEADLINE_S = 3600;

/** SETTLEMENT=offchain|chain and SETTLEMENT_DEADLINE (seconds). */
export function settlementSettingsFromEnv(env: NodeJS.ProcessEnv): SettlementSettings {
  return {
    mode: oneOf('SETTLEMENT', env.SETTLEMENT, SETTLEMENT_MODES, 'offchain'),
    deadlineSeconds: Math.max(1, intFromEnv('SETTLEMENT_DEADLINE', DEFAULT_SETTLEMENT_DEADLINE_S, env)),
  };
}

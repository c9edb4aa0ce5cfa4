import { DEFAULT_SETTLEMENT_DEADLINE_S, SettlementSettings } from '../../config';

/**
 * The process's settlement (SETTLEMENT, SETTLEMENT_DEADLINE; docs/chain.md "Settlement on chain"), one for
 * every sale it writes, whichever path writes it (an API call, an english auction's close by the sweeper or
 * by the follower's asset lock). createApp sets it from its options; every process on a database should be
 * set alike.
 */
export const settlement = {
  onChain: false,
  deadlineSeconds: DEFAULT_SETTLEMENT_DEADLINE_S,
  use(settings: SettlementSettings): void {
    this.onChain = settings.mode === 'chain';
    this.deadlineSeconds = settings.deadlineSeconds;
  },
};

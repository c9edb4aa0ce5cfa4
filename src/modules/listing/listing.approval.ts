/**
 * Fillability on a followed chain (docs/chain.md "Approvals"): whether a seller has revoked the marketplace
 * operator's right to move a token, judged by the approval logs the follower applied (`chain_approvals`).
 * Revoked when the newest `ApprovalForAll(seller, operator)` said false and the token's newest approval (after
 * its last transfer, which clears it) is not to the operator by the seller. Without any log the gateway
 * cannot know better and takes the listing as fillable: only a revocation seen on chain makes it inactive.
 */

/** Why a listing became inactive when its seller revoked the operator (listings.inactive_reason). */
export const APPROVAL_REVOKED = 'approval_revoked';

/** The reason `listing.inactivated` gives for it. */
export const APPROVAL_REVOKED_WHY = 'the seller no longer approves the marketplace operator';

/**
 * SQL: true when `seller` has revoked `operator` for the token (`chainId`, `tokenAddress`, `tokenId`), each a
 * column or parameter expression; never null: false without a revocation seen (no log, or no operator).
 */
export function approvalRevokedSql(e: { chainId: string; tokenAddress: string; tokenId: string; seller: string; operator: string }): string {
  const newest = 'ORDER BY x.block_number DESC, x.log_index DESC LIMIT 1';
  const forAll = `(SELECT x.approved FROM chain_approvals x WHERE x.chain_id = ${e.chainId} AND x.token_address = ${e.tokenAddress}
      AND x.owner = ${e.seller} AND x.token_id IS NULL AND x.operator = ${e.operator} ${newest})`;
  const token = `(SELECT x.approved AND x.operator = ${e.operator} AND x.owner = ${e.seller} FROM chain_approvals x
      WHERE x.chain_id = ${e.chainId} AND x.token_address = ${e.tokenAddress} AND x.token_id = ${e.tokenId} ${newest})`;
  return `(COALESCE(${forAll} = false, false) AND NOT COALESCE(${token}, false))`;
}

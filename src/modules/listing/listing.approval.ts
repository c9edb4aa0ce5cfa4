import type { EntityManager } from 'typeorm';
import { ConflictError } from '../../common/errors';

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

/** SQL: the seller (an expression) has revoked the chain's operator (chain_sync `s`) for asset `a`. */
export const sellerRevokedSql = (seller: string) =>
  approvalRevokedSql({ chainId: 'a.chain_id', tokenAddress: 'a.token_address', tokenId: 'a.token_id', seller, operator: 's.operator' });

/** Of these assets, those `seller` has revoked the chain's operator for (a listing or a sale by them could not be filled), with the operator. */
export async function revokedAssets(m: EntityManager, seller: string, assetIds: readonly string[]): Promise<Map<string, string>> {
  const rows: { id: string; operator: string }[] = await m.query(
    `SELECT a.id, s.operator FROM assets a JOIN chain_sync s ON s.chain_id = a.chain_id WHERE a.id = ANY($1::uuid[]) AND ${sellerRevokedSql('$2')}`,
    [assetIds, seller],
  );
  return new Map(rows.map((r) => [r.id, r.operator]));
}

/** 409: `seller` revoked the operator, so what they would sell (`what`) could not be filled; says how to approve again. */
export function approvalRevokedError(seller: string, operator: string, asset: { chainId: string; tokenAddress: string; tokenId: string }, what: string): ConflictError {
  return new ConflictError(
    `${seller} no longer approves the marketplace operator ${operator} on chain ${asset.chainId} (${APPROVAL_REVOKED}): ${what} of ${asset.tokenAddress}/${asset.tokenId} could not be filled; ` +
      `call setApprovalForAll(${operator}, true) or approve(${operator}, ${asset.tokenId}) on the contract first`,
  );
}

import { Caller, Context, ContractOwnerRead, assertOwnerOrAdmin, isAdmin } from '../../common/request/context';
import { ConflictError, ForbiddenError, Problems, isUniqueViolation } from '../../common/errors';
import { personalSigner } from '../../common/eip712';
import type { EntityManager } from 'typeorm';
import { withEvents } from '../event/event.log';
import { Collection, OwnerVerification } from './collection.entity';
import type { ClaimCollectionInput } from './collection.inputs';

/**
 * Who may speak for a collection (docs/chain.md "Who may speak for a collection", issue #41 item 6). On a chain
 * this process follows, a contract that answers ERC-173 owner() decides: only a key acting for that address
 * registers the collection, changes it, or takes the claim over when owner() changed; a key of another address
 * speaks for it after a claim signed by owner(). Elsewhere (a chain not followed, a contract without owner())
 * the first key to register it owns it, as before, and the collection says so.
 */

/** The claim columns of a collection, as a write sets them. */
export type ClaimFields = Pick<Collection, 'owner' | 'ownerVerification' | 'contractOwner' | 'ownerCheckedAt' | 'ownerCheckedBlock'>;

/** How far ahead a signed claim may expire: a signature is short-lived. */
export const CLAIM_MAX_LIFETIME_MS = 60 * 60 * 1000;
const NONCE = /^[A-Za-z0-9_-]{8,100}$/;

/** The contract's owner() on a chain this process follows (CHAIN_RPC_<id>); `followed: false` elsewhere. A node that does not answer is a 503. */
export function readContractOwner(ctx: Context, chainId: string, contractAddress: string): Promise<ContractOwnerRead> {
  return ctx.policy.contractOwner ? ctx.policy.contractOwner(chainId, contractAddress, ctx.scope.span) : Promise.resolve({ followed: false });
}

const named = (chainId: string, contractAddress: string) => `collection ${contractAddress.toLowerCase()} on chain ${chainId}`;

/** The claim a registration makes; a 403 when the chain is followed and the caller is not the contract's owner() (an admin registers it for its owner). */
export async function claimOfRegistration(ctx: Context, caller: Caller, chainId: string, contractAddress: string): Promise<ClaimFields> {
  const read = await readContractOwner(ctx, chainId, contractAddress);
  if (!read.followed) return { owner: caller.address, ownerVerification: OwnerVerification.UNVERIFIED, contractOwner: null, ownerCheckedAt: null, ownerCheckedBlock: null };
  if (read.owner === null) return { owner: caller.address, ...noContractOwner(read.block) };
  if (caller.address !== read.owner && !isAdmin(caller)) {
    throw new ForbiddenError(
      `${named(chainId, contractAddress)}: its contract's owner() (ERC-173) is ${read.owner}; only a key acting for ${read.owner} may register it, ` +
        `not the key of ${caller.address}`,
    );
  }
  return verifiedFor(read.owner, read.owner, read.block);
}

function verifiedFor(owner: string, contractOwner: string, block: string): ClaimFields {
  return { owner, ownerVerification: OwnerVerification.VERIFIED, contractOwner, ownerCheckedAt: new Date(), ownerCheckedBlock: block };
}

function noContractOwner(block: string): Omit<ClaimFields, 'owner'> {
  return { ownerVerification: OwnerVerification.NO_CONTRACT_OWNER, contractOwner: null, ownerCheckedAt: new Date(), ownerCheckedBlock: block };
}

/**
 * Whether the caller may change the collection, and the claim the change leaves: on a followed chain whose
 * contract answers owner(), a key acting for owner() (the claim passes to it when it was another's), or the
 * collection's owner when its claim was proven for that same owner(); elsewhere its owner. An admin may change
 * any collection (its status, its texts) and leaves the claim as it is. Returns the claim columns to write
 * ({} when nothing was read).
 */
export async function claimOfChange(ctx: Context, caller: Caller, collection: Collection): Promise<Partial<ClaimFields>> {
  const what = named(collection.chainId, collection.contractAddress);
  if (isAdmin(caller)) return {};
  const read = await readContractOwner(ctx, collection.chainId, collection.contractAddress);
  if (!read.followed || read.owner === null) {
    assertOwnerOrAdmin(caller, collection.owner, what);
    return read.followed ? noContractOwner(read.block) : {};
  }
  if (caller.address === read.owner) return verifiedFor(read.owner, read.owner, read.block);
  const proven = collection.ownerVerification === OwnerVerification.VERIFIED && collection.contractOwner === read.owner;
  if (caller.address === collection.owner && proven) return verifiedFor(collection.owner, read.owner, read.block);
  const stale =
    caller.address === collection.owner
      ? ` (the claim of ${caller.address} ${collection.contractOwner ? `was proven for ${collection.contractOwner}; owner() has changed since` : 'was never proven by owner()'})`
      : '';
  throw new ForbiddenError(
    `${what}: its contract's owner() (ERC-173) is ${read.owner}; only a key acting for ${read.owner}, or one it signed a claim for, may change it, ` +
      `not the key of ${caller.address}${stale}`,
  );
}

/**
 * Whether the caller may write the collection's assets (create, import, refresh the collection's metadata): an
 * admin; the owner of a claim checked on chain (`verified`, `no_contract_owner`), which the follower keeps
 * current (chain.ownership.ts), without reading owner(); for a claim never checked (`unverified`) the
 * contract's owner() is read as a change of the collection reads it (claimOfChange: a 403 for a key that does
 * not act for it on a followed chain) and the claim it leaves is recorded.
 */
export async function assertSpeaksFor(ctx: Context, caller: Caller, collection: Collection): Promise<void> {
  if (isAdmin(caller)) return;
  if (collection.ownerVerification !== OwnerVerification.UNVERIFIED) {
    assertOwnerOrAdmin(caller, collection.owner, named(collection.chainId, collection.contractAddress));
    return;
  }
  const claim = await claimOfChange(ctx, caller, collection);
  if (!claimChanged(collection, claim)) return;
  await withEvents(ctx.ds, async (m, events) => {
    const current = await lockedClaim(m, collection.id);
    if (!claimChanged(current, claim)) return;
    await m.getRepository(Collection).update({ id: collection.id }, claim);
    if (claim.owner !== undefined && claim.owner !== current.owner) events.add('collection.claimed', 'collection', collection.id, { previous_owner: current.owner });
    else events.add('collection.updated', 'collection', collection.id);
  });
  ctx.loaders.collectionById.clear(collection.id);
}

/** Who speaks for a collection and how it was checked, as a write compares a claim with it. */
type CurrentClaim = Pick<Collection, 'owner' | 'ownerVerification' | 'contractOwner'>;

/** Whether writing these claim columns changes who speaks for the collection or how it was checked. */
export function claimChanged(collection: CurrentClaim, claim: Partial<ClaimFields>): boolean {
  return (['owner', 'ownerVerification', 'contractOwner'] as const).some((k) => claim[k] !== undefined && claim[k] !== collection[k]);
}

/**
 * The collection's claim as it stands now, its row locked for the rest of the transaction: a write's events
 * compare with it, not with the row read before owner() was (the follower may have moved the claim meanwhile).
 */
export async function lockedClaim(m: EntityManager, collectionId: string): Promise<CurrentClaim> {
  const [row]: CurrentClaim[] = await m.query(
    `SELECT owner, owner_verification AS "ownerVerification", contract_owner AS "contractOwner" FROM collections WHERE id = $1 FOR UPDATE`,
    [collectionId],
  );
  return row;
}

/** The text owner() signs (EIP-191 personal_sign) to let the key of `claimant` speak for the collection (docs/chain.md). */
export function claimMessage(chainId: string, contractAddress: string, claimant: string, nonce: string, expiresAt: Date): string {
  return [
    'Claim an NFT collection on the gateway',
    `Collection: ${contractAddress.toLowerCase()}`,
    `Chain: ${chainId}`,
    `Claimant: ${claimant.toLowerCase()}`,
    `Nonce: ${nonce}`,
    `Expires at: ${expiresAt.toISOString()}`,
  ].join('\n');
}

/** The signature's parts, all or none; a 422 naming the field otherwise. */
function signedParts(input: ClaimCollectionInput | null | undefined): { signature: string; nonce: string; expiresAt: Date } | null {
  const given = ['signature', 'nonce', 'expiresAt'] as const;
  const present = given.filter((k) => input?.[k] != null);
  if (!present.length) return null;
  const problems = new Problems();
  for (const k of given) if (input?.[k] == null) problems.add(k, `is required with ${present.join(' and ')}: a signed claim gives signature, nonce and expiresAt`);
  if (input?.nonce != null && !NONCE.test(input.nonce)) problems.add('nonce', `must be 8 to 100 letters, digits, _ or -, got ${JSON.stringify(input.nonce.slice(0, 40))}`);
  const expiresAt = input?.expiresAt;
  if (expiresAt != null && expiresAt.getTime() > Date.now() + CLAIM_MAX_LIFETIME_MS) {
    problems.add('expiresAt', `must be at most an hour ahead, got ${expiresAt.toISOString()}`);
  }
  problems.throwIfAny();
  return { signature: input!.signature!, nonce: input!.nonce!, expiresAt: expiresAt! };
}

/**
 * Takes the claim of a collection on a followed chain whose contract answers owner() (claimCollection, POST
 * /v1/collections/{address}/claim): for the caller when it acts for owner(), or for any key with a signature
 * by owner() of claimMessage naming it, unexpired, whose nonce was not used for the collection before.
 */
export async function claimCollection(ctx: Context, collection: Collection, input: ClaimCollectionInput | null | undefined): Promise<void> {
  const caller = await ctx.requireCaller();
  const signed = signedParts(input);
  const what = named(collection.chainId, collection.contractAddress);
  const read = await readContractOwner(ctx, collection.chainId, collection.contractAddress);
  if (!read.followed) {
    throw new ConflictError(
      `${what} cannot be claimed: this gateway does not follow chain ${collection.chainId} (no CHAIN_RPC_${collection.chainId}), so its contract's owner() ` +
        'cannot be read to check a claim; the collection stays unverified, with the owner who registered it',
    );
  }
  if (read.owner === null) {
    throw new ConflictError(`${what} cannot be claimed: its contract answers no ERC-173 owner() (or the zero address), so nobody can prove to own it`);
  }
  if (!signed && caller.address !== read.owner) {
    throw new ForbiddenError(
      `${what}: its contract's owner() (ERC-173) is ${read.owner}; the key of ${caller.address} may claim it with a signature by ${read.owner} ` +
        '(signature, nonce, expiresAt; docs/chain.md)',
    );
  }
  if (signed) {
    if (signed.expiresAt.getTime() <= Date.now()) throw new ForbiddenError(`the signed claim expired at ${signed.expiresAt.toISOString()}; sign a new one`);
    const problems = new Problems();
    const message = claimMessage(collection.chainId, collection.contractAddress, caller.address, signed.nonce, signed.expiresAt);
    const signer = await personalSigner(problems, 'signature', message, signed.signature);
    problems.throwIfAny();
    if (signer !== read.owner) {
      throw new ForbiddenError(
        `the signature recovers to ${signer}, not to the contract's owner() ${read.owner}: it was made by another account, or over another message ` +
          `(collection, chain, claimant ${caller.address}, nonce, expiry)`,
      );
    }
  }
  const claim = verifiedFor(caller.address, read.owner, read.block);
  try {
    await withEvents(ctx.ds, async (m, events) => {
      if (signed) {
        await m.query(`DELETE FROM collection_claim_nonces WHERE chain_id = $1 AND contract_address = $2 AND expires_at < now()`, [
          collection.chainId,
          collection.contractAddress,
        ]);
        await m.query(`INSERT INTO collection_claim_nonces (chain_id, contract_address, nonce, expires_at) VALUES ($1, $2, $3, $4)`, [
          collection.chainId,
          collection.contractAddress,
          signed.nonce,
          signed.expiresAt,
        ]);
      }
      const current = await lockedClaim(m, collection.id);
      await m.getRepository(Collection).update({ id: collection.id }, claim);
      if (claimChanged(current, claim)) events.add('collection.claimed', 'collection', collection.id, { previous_owner: current.owner });
    });
  } catch (err) {
    if (!isUniqueViolation(err)) throw err;
    throw new ConflictError(`the nonce ${signed!.nonce} was used already for ${what}: a signed claim is good once; sign a new nonce`, [
      { field: 'nonce', message: 'already used' },
    ]);
  }
}

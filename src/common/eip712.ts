import { Problems } from './errors';
import { toUnits } from './decimal';

/**
 * Signed listings and offers (EIP-712 typed data). The maker signs the fields that fix the price and the
 * time; the gateway recovers the signer with viem and requires it to be the maker: the asset's owner for
 * a listing, the offer's taker for an offer. docs/signatures.md shows how a client signs.
 */

/** SIGNATURES: `off` stores a signature as given; `optional` verifies one when given; `required` also refuses a missing one. */
export type SignatureMode = 'off' | 'optional' | 'required';
export const SIGNATURE_MODES: readonly SignatureMode[] = ['off', 'optional', 'required'];

export const EIP712_DOMAIN = { name: 'NFT Marketplace Gateway', version: '1' } as const;

export const EIP712_TYPES = {
  Listing: [
    { name: 'maker', type: 'address' },
    { name: 'tokenAddress', type: 'address' },
    { name: 'tokenId', type: 'uint256' },
    { name: 'orderType', type: 'string' },
    { name: 'startPrice', type: 'uint256' },
    { name: 'acceptPrice', type: 'uint256' },
    { name: 'listingTime', type: 'uint256' },
    { name: 'expirationTime', type: 'uint256' },
  ],
  Offer: [
    { name: 'taker', type: 'address' },
    { name: 'tokenAddress', type: 'address' },
    { name: 'tokenId', type: 'uint256' },
    { name: 'price', type: 'uint256' },
    { name: 'startTime', type: 'uint256' },
    { name: 'endTime', type: 'uint256' },
  ],
  CollectionOffer: [
    { name: 'taker', type: 'address' },
    { name: 'tokenAddress', type: 'address' },
    { name: 'quantity', type: 'uint256' },
    { name: 'price', type: 'uint256' },
    { name: 'startTime', type: 'uint256' },
    { name: 'endTime', type: 'uint256' },
    { name: 'traits', type: 'Trait[]' },
  ],
  Trait: [
    { name: 'traitType', type: 'string' },
    { name: 'value', type: 'string' },
  ],
} as const;

/** What a listing's maker signs: prices in the currency's smallest unit (18 decimals), times in Unix seconds, 0 for none. */
export interface ListingTerms {
  maker: string;
  tokenAddress: string;
  tokenId: string;
  orderType: string;
  startPrice: string;
  acceptPrice: string | null;
  listingTime: Date;
  closingDate: Date | null;
}

export interface OfferTerms {
  taker: string;
  tokenAddress: string;
  tokenId: string;
  price: string;
  startTime: Date;
  endTime: Date;
}

/** A collection offer (no traits) or a trait offer: the collection's contract, how many assets, which traits. */
export interface CollectionOfferTerms {
  taker: string;
  tokenAddress: string;
  quantity: number;
  price: string;
  startTime: Date;
  endTime: Date;
  /** In the order the offer gives them (and shows them). */
  traits: Array<{ traitType: string; value: string }>;
}

export type SignedTerms =
  | { kind: 'Listing'; chainId: string; terms: ListingTerms }
  | { kind: 'Offer'; chainId: string; terms: OfferTerms }
  | { kind: 'CollectionOffer'; chainId: string; terms: CollectionOfferTerms };

const seconds = (d: Date | null): bigint => (d ? BigInt(Math.floor(d.getTime() / 1000)) : 0n);

/** The typed-data message of a listing or an offer, exactly as the maker signs it. */
export function typedDataOf(signed: SignedTerms) {
  const domain = { ...EIP712_DOMAIN, chainId: BigInt(signed.chainId) };
  if (signed.kind === 'Listing') {
    const t = signed.terms;
    return {
      domain,
      types: EIP712_TYPES,
      primaryType: 'Listing' as const,
      message: {
        maker: t.maker as `0x${string}`,
        tokenAddress: t.tokenAddress as `0x${string}`,
        tokenId: BigInt(t.tokenId),
        orderType: t.orderType,
        startPrice: toUnits(t.startPrice),
        acceptPrice: t.acceptPrice == null ? 0n : toUnits(t.acceptPrice),
        listingTime: seconds(t.listingTime),
        expirationTime: seconds(t.closingDate),
      },
    };
  }
  if (signed.kind === 'CollectionOffer') {
    const t = signed.terms;
    return {
      domain,
      types: EIP712_TYPES,
      primaryType: 'CollectionOffer' as const,
      message: {
        taker: t.taker as `0x${string}`,
        tokenAddress: t.tokenAddress as `0x${string}`,
        quantity: BigInt(t.quantity),
        price: toUnits(t.price),
        startTime: seconds(t.startTime),
        endTime: seconds(t.endTime),
        traits: t.traits.map(({ traitType, value }) => ({ traitType, value })),
      },
    };
  }
  const t = signed.terms;
  return {
    domain,
    types: EIP712_TYPES,
    primaryType: 'Offer' as const,
    message: {
      taker: t.taker as `0x${string}`,
      tokenAddress: t.tokenAddress as `0x${string}`,
      tokenId: BigInt(t.tokenId),
      price: toUnits(t.price),
      startTime: seconds(t.startTime),
      endTime: seconds(t.endTime),
    },
  };
}

type Viem = typeof import('viem');
let loaded: Viem | undefined;
/** viem is large (about 60 MB of heap): it is loaded on the first signature to check, not at start. */
function viem(): Viem {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return (loaded ??= require('viem') as Viem);
}

const SIGNATURE = /^0x([0-9a-fA-F]{128}|[0-9a-fA-F]{130})$/;

/**
 * Checks `signature` against the terms under the mode, adding a `signature` problem (a 422) when it is
 * malformed, signed by someone other than the maker, or missing while required. Returns the signature to
 * store: as given, or null when there is none.
 */
export async function checkSignature(
  problems: Problems,
  mode: SignatureMode,
  signature: string | null | undefined,
  signed: SignedTerms,
): Promise<string | null> {
  const given = signature ?? null;
  if (mode === 'off') return given;
  const maker = signed.kind === 'Listing' ? signed.terms.maker : signed.terms.taker;
  if (given === null) {
    if (mode === 'required') {
      problems.add('signature', `is required: an EIP-712 signature of the ${signed.kind} by its maker ${maker} (see docs/signatures.md)`);
    }
    return null;
  }
  if (!SIGNATURE.test(given)) {
    problems.add('signature', 'must be 0x and 130 hex digits (r, s, v) or 128 (EIP-2098 compact)');
    return given;
  }
  const { recoverTypedDataAddress } = viem();
  let signer: string;
  try {
    const request = { ...typedDataOf(signed), signature: given } as Parameters<typeof recoverTypedDataAddress>[0];
    signer = (await recoverTypedDataAddress(request)).toLowerCase();
  } catch {
    problems.add('signature', `is not a valid signature of this ${signed.kind}`);
    return given;
  }
  if (signer !== maker.toLowerCase()) {
    problems.add(
      'signature',
      `recovers to ${signer}, not to the maker ${maker}: it was made by another account, or over other terms (price, times, token or chain)`,
    );
  }
  return given;
}

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
    { name: 'currency', type: 'address' },
    { name: 'startPrice', type: 'uint256' },
    { name: 'acceptPrice', type: 'uint256' },
    { name: 'listingTime', type: 'uint256' },
    { name: 'expirationTime', type: 'uint256' },
  ],
  Offer: [
    { name: 'taker', type: 'address' },
    { name: 'tokenAddress', type: 'address' },
    { name: 'tokenId', type: 'uint256' },
    { name: 'currency', type: 'address' },
    { name: 'price', type: 'uint256' },
    { name: 'startTime', type: 'uint256' },
    { name: 'endTime', type: 'uint256' },
  ],
  CollectionOffer: [
    { name: 'taker', type: 'address' },
    { name: 'tokenAddress', type: 'address' },
    { name: 'quantity', type: 'uint256' },
    { name: 'currency', type: 'address' },
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

const withoutCurrency = <T extends { name: string }>(fields: readonly T[]): T[] => fields.filter((f) => f.name !== 'currency');

/**
 * The types signed before prices had a currency (every price native): still accepted for native prices
 * only, so signatures made then stay valid; a price in an ERC-20 token must sign its currency.
 */
export const LEGACY_EIP712_TYPES = {
  Listing: withoutCurrency(EIP712_TYPES.Listing),
  Offer: withoutCurrency(EIP712_TYPES.Offer),
  CollectionOffer: withoutCurrency(EIP712_TYPES.CollectionOffer),
  Trait: EIP712_TYPES.Trait,
};

/** The currency of signed prices: its contract (the zero address for the chain's native currency) and its decimals. */
export interface SignedCurrency {
  address: string;
  decimals: number;
}

/** The address that stands for a chain's native currency in signed terms. */
const NATIVE_ADDRESS = '0x0000000000000000000000000000000000000000';

/** What a listing's maker signs: prices in the currency's smallest unit (its decimals), times in Unix seconds, 0 for none. */
export interface ListingTerms {
  maker: string;
  tokenAddress: string;
  tokenId: string;
  orderType: string;
  startPrice: string;
  acceptPrice: string | null;
  listingTime: Date;
  closingDate: Date | null;
  currency: SignedCurrency;
}

export interface OfferTerms {
  taker: string;
  tokenAddress: string;
  tokenId: string;
  price: string;
  startTime: Date;
  endTime: Date;
  currency: SignedCurrency;
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
  currency: SignedCurrency;
}

export type SignedTerms =
  | { kind: 'Listing'; chainId: string; terms: ListingTerms }
  | { kind: 'Offer'; chainId: string; terms: OfferTerms }
  | { kind: 'CollectionOffer'; chainId: string; terms: CollectionOfferTerms };

const seconds = (d: Date | null): bigint => (d ? BigInt(Math.floor(d.getTime() / 1000)) : 0n);

/**
 * The typed-data message of a listing or an offer, exactly as the maker signs it: with its currency, or
 * (`legacy`) in the types signed before currencies, without it.
 */
export function typedDataOf(signed: SignedTerms, legacy = false) {
  const domain = { ...EIP712_DOMAIN, chainId: BigInt(signed.chainId) };
  const types = legacy ? LEGACY_EIP712_TYPES : EIP712_TYPES;
  const { address, decimals } = signed.terms.currency;
  const currency = legacy ? {} : { currency: address as `0x${string}` };
  const units = (price: string) => toUnits(price, decimals);
  if (signed.kind === 'Listing') {
    const t = signed.terms;
    return {
      domain,
      types,
      primaryType: 'Listing' as const,
      message: {
        maker: t.maker as `0x${string}`,
        tokenAddress: t.tokenAddress as `0x${string}`,
        tokenId: BigInt(t.tokenId),
        orderType: t.orderType,
        ...currency,
        startPrice: units(t.startPrice),
        acceptPrice: t.acceptPrice == null ? 0n : units(t.acceptPrice),
        listingTime: seconds(t.listingTime),
        expirationTime: seconds(t.closingDate),
      },
    };
  }
  if (signed.kind === 'CollectionOffer') {
    const t = signed.terms;
    return {
      domain,
      types,
      primaryType: 'CollectionOffer' as const,
      message: {
        taker: t.taker as `0x${string}`,
        tokenAddress: t.tokenAddress as `0x${string}`,
        quantity: BigInt(t.quantity),
        ...currency,
        price: units(t.price),
        startTime: seconds(t.startTime),
        endTime: seconds(t.endTime),
        traits: t.traits.map(({ traitType, value }) => ({ traitType, value })),
      },
    };
  }
  const t = signed.terms;
  return {
    domain,
    types,
    primaryType: 'Offer' as const,
    message: {
      taker: t.taker as `0x${string}`,
      tokenAddress: t.tokenAddress as `0x${string}`,
      tokenId: BigInt(t.tokenId),
      ...currency,
      price: units(t.price),
      startTime: seconds(t.startTime),
      endTime: seconds(t.endTime),
    },
  };
}

type Viem = typeof import('viem');
let loaded: Viem | undefined;
/** viem is large (about 60 MB of heap): it is loaded on the first signature to check (or chain to read), not at start. */
export function viem(): Viem {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return (loaded ??= require('viem') as Viem);
}

const SIGNATURE = /^0x([0-9a-fA-F]{128}|[0-9a-fA-F]{130})$/;

/**
 * The signer of an EIP-191 personal_sign signature of `message` (lower case), or a problem on `field`: a
 * signature of the wrong shape, or one no address recovers from.
 */
export async function personalSigner(problems: Problems, field: string, message: string, signature: string): Promise<string | null> {
  if (!SIGNATURE.test(signature)) {
    problems.add(field, 'must be 0x and 130 hex digits (r, s, v) or 128 (EIP-2098 compact)');
    return null;
  }
  try {
    return (await viem().recoverMessageAddress({ message, signature: signature as `0x${string}` })).toLowerCase();
  } catch {
    problems.add(field, 'is not a valid EIP-191 signature');
    return null;
  }
}

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
  const signerOf = async (legacy: boolean) => {
    const request = { ...typedDataOf(signed, legacy), signature: given } as Parameters<typeof recoverTypedDataAddress>[0];
    return (await recoverTypedDataAddress(request)).toLowerCase();
  };
  let signer: string;
  try {
    signer = await signerOf(false);
    // A native price may come with a signature of the types without a currency (made before currencies).
    if (signer !== maker.toLowerCase() && signed.terms.currency.address === NATIVE_ADDRESS) {
      const legacySigner = await signerOf(true);
      if (legacySigner === maker.toLowerCase()) signer = legacySigner;
    }
  } catch {
    problems.add('signature', `is not a valid signature of this ${signed.kind}`);
    return given;
  }
  if (signer !== maker.toLowerCase()) {
    problems.add(
      'signature',
      `recovers to ${signer}, not to the maker ${maker}: it was made by another account, or over other terms (price, currency, times, token or chain)`,
    );
  }
  return given;
}

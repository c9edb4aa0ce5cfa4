import { GraphQLScalarType, Kind } from 'graphql';
import { exactDecimal } from './decimal';

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
export const MAX_TOKEN_ID = (1n << 256n) - 1n;

export function parseAddress(value: unknown): string {
  if (typeof value !== 'string' || !ADDRESS.test(value)) {
    throw new TypeError(`an address is "0x" followed by 40 hexadecimal digits, got ${JSON.stringify(value)}`);
  }
  return value.toLowerCase();
}

export function parseTokenId(value: unknown): string {
  if (typeof value !== 'string' || !/^[0-9]+$/.test(value) || value.length > 80 || BigInt(value) > MAX_TOKEN_ID) {
    throw new TypeError(
      `a token id is a decimal string of an unsigned 256-bit integer (0 to 2^256-1), got ${JSON.stringify(value)}`,
    );
  }
  return BigInt(value).toString();
}

function stringLiteral(parse: (v: string) => string) {
  return (ast: import('graphql').ValueNode) => {
    if (ast.kind !== Kind.STRING) throw new TypeError(`expected a string, got a ${ast.kind.toLowerCase()} literal`);
    return parse(ast.value);
  };
}

/** An EVM address: accepted in any letter case, always returned lower-case. */
export const AddressScalar = new GraphQLScalarType({
  name: 'Address',
  description: 'An EVM address: "0x" followed by 40 hex digits; accepted in any case, returned lower-case.',
  serialize: (value) => String(value),
  parseValue: parseAddress,
  parseLiteral: stringLiteral(parseAddress),
});

/** An ERC721 token id: unsigned 256-bit integer carried as a decimal string. */
export const TokenIdScalar = new GraphQLScalarType({
  name: 'TokenId',
  description: 'An ERC721 token id: a decimal string of an unsigned 256-bit integer.',
  serialize: (value) => String(value),
  parseValue: parseTokenId,
  parseLiteral: stringLiteral(parseTokenId),
});

/** A decimal's form; a sign is let through so that a price at or below 0 is a rule (422) the service states, as 0 is. */
const PRICE = /^-?(0|[1-9][0-9]{0,19})(\.[0-9]{1,18})?$/;

export function parsePrice(value: unknown): string {
  const text = typeof value === 'number' && Number.isFinite(value) ? String(value) : value;
  if (typeof text !== 'string' || !PRICE.test(text)) {
    throw new TypeError(
      `a price is a decimal amount of the native currency (up to 20 digits and 18 decimals), got ${JSON.stringify(value)}`,
    );
  }
  return text;
}

/**
 * A price: exact decimal in the database, a JSON number on the way out (as near as a double comes), a
 * number or decimal string on the way in. Each Price field has an exact twin of type Decimal.
 */
export const PriceScalar = new GraphQLScalarType({
  name: 'Price',
  description:
    'A decimal amount of a currency: the chain\'s native one unless the object says otherwise (its `currency`); given as a number or a decimal string, returned as a number ' +
    '(a double: beyond 15 significant digits read its exact twin, the field of the same name ending in Decimal).',
  serialize: (value) => Number(value),
  parseValue: parsePrice,
  parseLiteral: (ast) => {
    if (ast.kind === Kind.INT || ast.kind === Kind.FLOAT || ast.kind === Kind.STRING) return parsePrice(ast.value);
    throw new TypeError(`a price is a number, got a ${ast.kind.toLowerCase()} literal`);
  },
});


/** An exact decimal amount (18 decimals at most), carried as a string so that no binary float ever rounds it. */
export const DecimalScalar = new GraphQLScalarType({
  name: 'Decimal',
  description: 'An exact decimal amount as a string, e.g. "12345678901234567890.123456789012345678"; accepted as a string or a number.',
  serialize: (value) => exactDecimal(String(value)),
  parseValue: parsePrice,
  parseLiteral: (ast) => {
    if (ast.kind === Kind.INT || ast.kind === Kind.FLOAT || ast.kind === Kind.STRING) return parsePrice(ast.value);
    throw new TypeError(`a decimal is a string or a number, got a ${ast.kind.toLowerCase()} literal`);
  },
});

import fc from 'fast-check';
import { FieldNode, getOperationAST, GraphQLSchema, OperationDefinitionNode, parse } from 'graphql';
import { getArgumentValues, getVariableValues } from 'graphql/execution/values';
import { buildAppSchema } from '../src/app/graphql/schema';
import { argumentReader, coerceVariables } from '../src/app/graphql/variables';

/**
 * The lean path's variable coercion and the SQL plans' argument reader are made once per operation; they
 * must give exactly what graphql-js's getVariableValues and getArgumentValues give (values, and errors in
 * graphql-js's words), since a query's answer and its errors must not depend on which path ran it.
 */

let schema: GraphQLSchema;
beforeAll(async () => {
  schema = await buildAppSchema();
});

/** Operations over the schema's scalars, enums, lists and input objects, with and without defaults. */
const operations = [
  'query ($a: Address!, $t: TokenId!) { asset(tokenAddress: $a, tokenId: $t) { id } }',
  'query ($a: Address!, $t: TokenId!, $c: String) { asset(tokenAddress: $a, tokenId: $t, chainId: $c) { id } }',
  'query ($c: String!, $o: AssetOrderBy, $d: SortDirection, $l: Int) { assets(collectionId: $c, orderBy: $o, direction: $d, limit: $l) { result { id } } }',
  'query ($l: Int = 5, $o: CollectionOrderBy) { collections(limit: $l, orderBy: $o) { result { name } } }',
  'query ($i: Boolean, $l: Int!) { collections(includeAssets: $i, limit: $l) { result { name assets(limit: 2) { result { id } } } } }',
  'query ($t: [String!]) { assets(trait: $t) { result { id } } }',
  'query ($o: Address, $s: CollectionStatus) { collections(ownerAddress: $o, status: $s, limit: 3, orderBy: NAME) { result { name } } }',
  'mutation ($input: CreateCollectionInput!) { createCollection(input: $input) { id } }',
];

/** JSON values a client may send, good and bad for each type. */
const value = fc.oneof(
  fc.constantFrom(
    null,
    '0x' + 'ab'.repeat(20),
    '0X' + 'AB'.repeat(20),
    '0x12',
    '1',
    '007',
    '-1',
    '1e3',
    '115792089237316195423570985008687907853269984665640564039457584007913129639935',
    '115792089237316195423570985008687907853269984665640564039457584007913129639936',
    'TOKEN_ID',
    'CREATED_AT',
    'NAME',
    'ASC',
    'desc',
    'ACTIVE',
    '',
    '00000000-0000-4000-8000-000000000000',
  ),
  fc.integer({ min: -3, max: 2 ** 31 + 3 }),
  fc.double(),
  fc.boolean(),
  fc.string({ maxLength: 6 }),
  fc.array(fc.oneof(fc.string({ maxLength: 4 }), fc.integer(), fc.constant(null)), { maxLength: 3 }),
  fc.dictionary(fc.constantFrom('name', 'contractAddress', 'chainId', 'x'), fc.oneof(fc.string({ maxLength: 4 }), fc.constant(null))),
);
const names = ['a', 't', 'c', 'o', 'd', 'l', 'i', 's', 'input', 'extra'];
const variablesArb = fc.dictionary(fc.constantFrom(...names), value, { maxKeys: 6 });

const plain = (x: unknown) => x === undefined ? undefined : JSON.parse(JSON.stringify(x, (_k, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v)));
const errorsOf = (result: { errors?: readonly { message: string }[] }) => result.errors?.map((e) => e.message);

test('when variables of any kind come, then the per-operation coercion gives what graphql-js gives, values and errors alike', () => {
  const parsed = operations.map((text) => getOperationAST(parse(text))!);
  fc.assert(
    fc.property(fc.integer({ min: 0, max: parsed.length - 1 }), variablesArb, (i, variables) => {
      const operation = parsed[i];
      const ours = coerceVariables(schema, operation, variables);
      const theirs = getVariableValues(schema, operation.variableDefinitions ?? [], variables);
      expect(errorsOf(ours)).toEqual(errorsOf(theirs));
      expect(plain(ours.coerced)).toEqual(plain(theirs.coerced));
      // Absent variables stay absent (a default or a resolver tells absent from null).
      if (ours.coerced) expect(Object.keys(ours.coerced).sort()).toEqual(Object.keys(theirs.coerced!).sort());
    }),
    { numRuns: 3000 },
  );
});

/** The root field of an operation, as a SQL plan reads its arguments. */
function rootField(operation: OperationDefinitionNode) {
  const node = operation.selectionSet.selections[0] as FieldNode;
  const type = operation.operation === 'mutation' ? schema.getMutationType()! : schema.getQueryType()!;
  return { field: type.getFields()[node.name.value], node };
}

const outcome = (read: () => Record<string, unknown>) => {
  try {
    return { value: plain(read()) as unknown, keys: Object.keys(read()).sort() };
  } catch (err) {
    return { error: (err as Error).message };
  }
};

test('when a planned field reads its arguments, then the reader made once gives what getArgumentValues gives, defaults, literals and refusals alike', () => {
  const fields = [
    ...operations,
    '{ collections(limit: 7, orderBy: CREATED_AT, direction: ASC) { result { name } } }',
    '{ assets(collectionId: "00000000-0000-4000-8000-000000000000", trait: ["a:b"]) { result { id } } }',
    'query ($l: Int) { collections(limit: $l, includeAssets: false, status: null) { result { name } } }',
    '{ collections { result { name } } }',
  ].map((text) => rootField(getOperationAST(parse(text))!));
  fc.assert(
    fc.property(fc.integer({ min: 0, max: fields.length - 1 }), variablesArb, (i, raw) => {
      const { field, node } = fields[i];
      // The plans read coerced variables; any values at all is the stricter test.
      const read = argumentReader(field, node);
      expect(outcome(() => read(raw))).toEqual(outcome(() => getArgumentValues(field, node, raw)));
    }),
    { numRuns: 3000 },
  );
});

import { defaultFieldResolver, GraphQLError, GraphQLFieldResolver, GraphQLResolveInfo, GraphQLSchema, isObjectType, Kind } from 'graphql';
import { BadRequestError, FieldProblem } from '../errors';

/**
 * Relay's `first` and `after` on every list, as its `limit` and `page`. Each field of the schema that takes
 * `first` (PageArgs, the event feed) is given its arguments with `first` as `limit`, and `after` as `page`
 * where the field takes `page` (the event feed's `after` is a position of its own, read as it is). A list
 * reads `limit` and `page` only, so a new list gets Relay's arguments by taking PageArgs, and a nested
 * list's loader key (made of `limit` and `page`) batches the same whichever names the client used.
 * Both names of one argument is a BAD_REQUEST naming them; the list's own errors about `limit` or `page`
 * name the argument the client wrote.
 */
export function withConnectionArguments(schema: GraphQLSchema): GraphQLSchema {
  for (const type of Object.values(schema.getTypeMap())) {
    if (!isObjectType(type) || type.name.startsWith('__')) continue;
    for (const field of Object.values(type.getFields())) {
      if (!field.args.some((arg) => arg.name === 'first')) continue;
      const paged = field.args.some((arg) => arg.name === 'page');
      field.resolve = connectionArguments(field.resolve ?? defaultFieldResolver, paged);
    }
  }
  return schema;
}

type Args = Record<string, unknown>;

/** A page number (`page: "2"`) is not a cursor: `after` takes only an edge's or a page's cursor. */
const PAGE_NUMBER = /^[0-9]+$/;

function connectionArguments(resolve: GraphQLFieldResolver<unknown, unknown>, paged: boolean): GraphQLFieldResolver<unknown, unknown> {
  return (source, args: Args, context, info) => {
    const first = args.first;
    const after = paged ? args.after : undefined;
    if (first == null && after == null) return resolve(source, args, context, info);
    const given: Args = { ...args };
    const renames: Rename[] = [];
    if (first != null) {
      if (argumentGiven(info, 'limit')) throw both('limit', 'first');
      given.limit = first;
      renames.push({ from: 'limit', to: 'first' });
    }
    if (after != null) {
      if (args.page != null) throw both('page', 'after');
      if (PAGE_NUMBER.test(String(after))) throw notACursor(String(after));
      given.page = after;
      renames.push({ from: 'page', to: 'after', value: String(after) });
    }
    try {
      const value = resolve(source, given, context, info);
      return isPromiseLike(value) ? Promise.resolve(value).catch((error: unknown) => Promise.reject(renamed(error, renames))) : value;
    } catch (error) {
      throw renamed(error, renames);
    }
  };
}

/**
 * Whether the document gives this argument (a literal, or a variable the request gives a value): a
 * `limit` left to its default may go with `first`.
 */
function argumentGiven(info: GraphQLResolveInfo, name: string): boolean {
  const node = info.fieldNodes[0].arguments?.find((arg) => arg.name.value === name);
  if (!node) return false;
  return node.value.kind !== Kind.VARIABLE || info.variableValues[node.value.name.value] !== undefined;
}

function both(ours: string, relays: string): BadRequestError {
  return new BadRequestError(`give ${ours} or ${relays}, not both (${relays} is Relay's name of ${ours})`, [
    { field: ours, message: `not with ${relays}` },
    { field: relays, message: `not with ${ours}` },
  ]);
}

function notACursor(after: string): BadRequestError {
  return new BadRequestError(`after must be a cursor (an edge's \`cursor\` or a page's), got ${JSON.stringify(after.slice(0, 60))}; a page number goes in page`, [
    { field: 'after', message: 'not a cursor' },
  ]);
}

interface Rename {
  from: string;
  to: string;
  /** The value the client gave, for the message about it. */
  value?: string;
}

/** A list's error about `limit` or `page`, as about `first` or `after` when the client wrote those. */
function renamed(error: unknown, renames: Rename[]): unknown {
  if (!(error instanceof GraphQLError) || error.extensions.code !== 'BAD_REQUEST') return error;
  const details = error.extensions.details as FieldProblem[] | undefined;
  if (!details?.some((d) => renames.some((r) => r.from === d.field))) return error;
  let message = error.message;
  for (const { from, to, value } of renames) {
    if (!details.some((d) => d.field === from)) continue;
    message =
      to === 'after' && details.some((d) => d.field === from && d.message === 'unknown cursor')
        ? `after must be the cursor of an edge or of a page of a previous response; ${JSON.stringify(value!.slice(0, 60))} is not one`
        : message.replace(new RegExp(`(^|; )${from}\\b`, 'g'), `$1${to}`);
  }
  return new BadRequestError(
    message,
    details.map((d) => ({ ...d, field: renames.find((r) => r.from === d.field)?.to ?? d.field })),
  );
}

function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as PromiseLike<unknown> | null)?.then === 'function';
}

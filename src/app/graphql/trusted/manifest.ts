import { DocumentNode, GraphQLError, GraphQLSchema, Kind, OperationDefinitionNode, parse, validate } from 'graphql';
import { DOCUMENT_TYPES, DocumentType, TrustedDocument } from '../../../modules/trusted-document/trusted-document.service';
import { queryHashOf } from '../http-request';
import { documentRules, MAX_TOKENS } from '../protections';

/** What `@apollo/generate-persisted-query-manifest` writes at the top of its file. */
export const MANIFEST_FORMAT = 'apollo-persisted-query-manifest';

/** An id as the manifest (and Apollo Client's persisted query link) writes it: SHA-256, 64 lowercase hex digits. */
export const DOCUMENT_ID = /^[0-9a-f]{64}$/;

/** Something wrong with one operation of a manifest, named by the operation's name and id as the file gives them. */
export interface OperationProblem {
  /** The operation's position in the manifest's `operations`, from 0. */
  index: number;
  name?: string;
  id?: string;
  message: string;
}

export type ManifestReading = { documents: TrustedDocument[]; problems: OperationProblem[] } | { error: string };

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The single operation of a registered document's body, parsed as Apollo parses a request's (its token limit). */
export function operationOf(document: DocumentNode): OperationDefinitionNode | undefined {
  const operations = document.definitions.filter((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
  return operations.length === 1 ? operations[0] : undefined;
}

/**
 * Validates one document as /graphql would validate it when a client sent it (the schema, our cost, depth,
 * alias and directive limits), and as a manifest entry: one named operation of the declared name and type.
 * Returns the problems, none when the document may be registered.
 */
export function checkDocument(schema: GraphQLSchema, document: TrustedDocument, maxAliases?: number): string[] {
  let parsed: DocumentNode;
  try {
    parsed = parse(document.body, { maxTokens: MAX_TOKENS });
  } catch (err) {
    return [`body does not parse: ${(err as GraphQLError).message}`];
  }
  const problems: string[] = [];
  const count = parsed.definitions.filter((d) => d.kind === Kind.OPERATION_DEFINITION).length;
  const operation = operationOf(parsed);
  if (!operation) problems.push(`body must hold exactly one operation (with the fragments it uses), found ${count}`);
  else {
    if (operation.name?.value !== document.name) problems.push(`name is "${document.name}" but the body's operation is ${operation.name ? `named "${operation.name.value}"` : 'anonymous'}`);
    if (operation.operation !== document.type) problems.push(`type is "${document.type}" but the body's operation is a ${operation.operation}`);
  }
  for (const error of validate(schema, parsed, documentRules(maxAliases))) problems.push(error.message);
  return problems;
}

/** One entry of `operations`: its fields when they have the manifest's types, else what is wrong with them. */
function readEntry(entry: unknown): TrustedDocument | string[] {
  if (!isPlainObject(entry)) return ['must be an object with id, name, type and body'];
  const { id, name, type, body } = entry;
  const problems: string[] = [];
  if (typeof body !== 'string' || body === '') problems.push('body must be the operation\'s text');
  if (typeof name !== 'string' || name === '') problems.push('name must be the operation\'s name');
  if (typeof type !== 'string' || !(DOCUMENT_TYPES as readonly string[]).includes(type)) problems.push(`type must be one of ${DOCUMENT_TYPES.join(', ')}`);
  if (typeof id !== 'string' || !DOCUMENT_ID.test(id)) problems.push('id must be the SHA-256 of body in 64 lowercase hex digits');
  else if (typeof body === 'string' && queryHashOf(body) !== id) problems.push(`id is not the SHA-256 of body (that is ${queryHashOf(body)})`);
  return problems.length ? problems : { id: id as string, name: name as string, type: type as DocumentType, body: body as string };
}

/**
 * A manifest's text (the JSON `@apollo/generate-persisted-query-manifest` writes): its documents, and the
 * problems of every operation that cannot be registered (its fields, its id, its validation against the
 * schema). An id listed twice with the same body counts once. `error`: the file is not such a manifest.
 */
export function readManifest(text: string, schema: GraphQLSchema, maxAliases?: number): ManifestReading {
  let manifest: unknown;
  try {
    manifest = JSON.parse(text);
  } catch (err) {
    return { error: `the manifest is not JSON: ${(err as Error).message}` };
  }
  if (!isPlainObject(manifest) || manifest.format !== MANIFEST_FORMAT) return { error: `the manifest must be an object with "format": "${MANIFEST_FORMAT}"` };
  if (manifest.version !== 1) return { error: `the manifest's version must be 1, got ${JSON.stringify(manifest.version)}` };
  if (!Array.isArray(manifest.operations)) return { error: 'the manifest must list its operations in "operations"' };
  const documents = new Map<string, TrustedDocument>();
  const problems: OperationProblem[] = [];
  manifest.operations.forEach((entry: unknown, index) => {
    const read = readEntry(entry);
    const named = (message: string): OperationProblem => {
      const given = isPlainObject(entry) ? entry : {};
      return { index, name: typeof given.name === 'string' ? given.name : undefined, id: typeof given.id === 'string' ? given.id : undefined, message };
    };
    if (Array.isArray(read)) return void problems.push(...read.map(named));
    if (documents.has(read.id)) return;
    problems.push(...checkDocument(schema, read, maxAliases).map(named));
    documents.set(read.id, read);
  });
  return { documents: [...documents.values()], problems };
}

/** How a problem is shown: the operation's name and id as the manifest gives them, or its position. */
export function describeProblem(problem: OperationProblem): string {
  const who = problem.name !== undefined ? `operation "${problem.name}"` : `operation #${problem.index + 1}`;
  return `${who}${problem.id !== undefined ? ` (${problem.id})` : ''}: ${problem.message}`;
}
